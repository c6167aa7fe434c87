//go:build nrtabi_nocompiled

package spec

// compiledReleases is empty when zcompiled.go is left out (the generator's
// build): every release is read from its TOML.
var compiledReleases []compiledRelease
