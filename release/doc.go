// Package release is the release workflow, spec-side work above the checker
// (layoutcheck): it observes binaries against a base spec (Observe: roles,
// symbols, versions, slots, prototypes and the structs their DWARF holds),
// extracts structs as a spec fragment (Extract), and makes a derived release
// in memory (New), validated by spec.Assemble before anything is written.
// TOML is rendered only by Release.Write and Extract, where a file is made.
// Comparing two specs is the subpackage diff, which reads no binary.
//
// The workflow step by step: docs/adding-a-release.md.
package release
