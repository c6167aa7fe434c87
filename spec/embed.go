// Package spec holds the per-release TOML specs of the libnrt ↔ libnccom
// boundary, the loader that merges a release's files, and the validator that
// reports every violation at file:line:col.
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

// Load reads an embedded release by name: its compiled form when that is
// current (see compiled.go), else its TOML files.
func Load(release string) (*Spec, error) {
	if s := loadCompiled(release); s != nil {
		return s, nil
	}
	return LoadTOML(release)
}

func errNoRelease(release string) error {
	return fmt.Errorf("no embedded release %q (have: %s); use --spec DIR to read a spec from disk", release, strings.Join(Releases(), ", "))
}
