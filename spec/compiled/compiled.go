// Package compiled holds the embedded releases of package spec compiled into
// Go (zcompiled.go, written by `nrtabi gen --all` from a validated TOML load)
// as package-level data that the Go compiler lays out in the binary, type
// expressions already bound. A command that needs a release pays for neither
// parsing 100 KB of TOML nor building the release (about 15 ms on the first
// load of a process, against about 0.15 ms here), only for a check that the
// files it was compiled from are unchanged and a copy of the top Spec.
//
// A compiled release is used only while the checksums it records equal the
// embedded files', so an edited spec is never shadowed by a stale
// compilation: Load then reads the TOML (spec.Load). The generator (package
// gen and `nrtabi gen`) reads the TOML and never this package's data. A
// zcompiled.go that no longer compiles (spec's types changed) is deleted
// and regenerated: without it the package builds and Load reads the TOML.
//
// The static rows are shared by every Load in the process: nothing may
// write into a loaded release's rows (the loader copies the rows it is
// handed before it places and binds them). Load returns a fresh top-level
// Spec, so its own fields (Dir, the slices' headers) are the caller's.
// internal/specsame checks this after a package's tests.
//
// Why the compiled copy stays, in numbers:
// docs/benchmarks.md#loading-the-embedded-releases.
package compiled

import (
	"io/fs"
	"path"
	"slices"
	"sync"

	"github.com/nrtabi/nrtabi/spec"
)

// release is one release of zcompiled.go.
type release struct {
	name string
	spec *spec.Spec
	// link gives the static rows what cannot be static data (maps, the
	// Enums slice header, pointers that close a cycle of structs); it runs
	// once, and only when the release is current.
	link func()
	// sums are the embedded files of the release's directory and of the
	// releases it derives from, as the generator read them.
	sums []spec.FileSum

	once    sync.Once
	current bool
}

// releases are set by zcompiled.go; none without it.
var releases []*release

// Load returns the embedded release from its compiled form when that is
// current, else from its TOML (spec.Load).
func Load(name string) (*spec.Spec, error) {
	if s := load(name); s != nil {
		return s, nil
	}
	return spec.Load(name)
}

// load returns the compiled release, or nil when there is none or it is
// stale.
func load(name string) *spec.Spec {
	for _, c := range releases {
		if c.name == name {
			return c.load(spec.Embedded)
		}
	}
	return nil
}

// currentIn reports whether the files c was compiled from are unchanged in
// fsys: the same files in the same directories, of the same size and CRC.
// Only this release's directories are read.
func (c *release) currentIn(fsys fs.FS) bool {
	var dirs []string
	for _, s := range c.sums {
		if d := path.Dir(s.Name); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	got, err := spec.DirSums(fsys, dirs)
	return err == nil && slices.Equal(got, c.sums)
}

// load returns the compiled release, or nil when it is stale in fsys.
func (c *release) load(fsys fs.FS) *spec.Spec {
	c.once.Do(func() {
		if c.current = c.currentIn(fsys); c.current {
			c.link()
		}
	})
	if !c.current {
		return nil
	}
	s := *c.spec
	return &s
}
