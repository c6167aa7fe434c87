// Package spec holds the per-release TOML specs of the libnrt ↔ libnccom
// boundary, the loader that merges a release's files, and the validator that
// reports every violation at file:line:col.
//
// The format is described in docs/spec-format.md.
package spec

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Embedded holds every release directory under spec/.
//
//go:embed */*.toml
var Embedded embed.FS

// Default is the canonical, fully written release.
const Default = "2.31.24"

// Releases lists the embedded releases, sorted.
func Releases() []string {
	entries, _ := fs.ReadDir(Embedded, ".")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Load reads an embedded release by name from its TOML files. A command
// that loads a release on every run uses spec/compiled's Load, which gives
// the same release from static data while that is current.
func Load(release string) (*Spec, error) {
	if _, err := fs.Stat(Embedded, release); err != nil {
		return nil, errNoRelease(release)
	}
	return LoadFS(Embedded, release, "spec/"+release)
}

func errNoRelease(release string) error {
	return fmt.Errorf("no embedded release %q (have: %s); use --spec DIR to read a spec from disk", release, strings.Join(Releases(), ", "))
}
