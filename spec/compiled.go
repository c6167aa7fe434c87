package spec

import (
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

// The embedded releases are also compiled into Go (zcompiled.go, written by
// `make generate` from a validated TOML load) as package-level data that the
// Go compiler lays out in the binary, type expressions already bound: a
// command that needs a release pays for neither parsing 100 KB of TOML nor
// building the release, only for a check that the files it was compiled
// from are unchanged and a copy of the top Spec. The compiled form is used
// only while the checksums it records equal the embedded files', so an
// edited spec is never shadowed by a stale compilation; the generator builds
// with the nrtabi_nocompiled tag, so a stale zcompiled.go can always be
// redone.
//
// The static rows are shared by every Load in the process: nothing may
// write into a loaded release's rows (the loader copies the rows it is
// handed before it places and binds them; see kinds' own). Load returns a
// fresh top-level Spec, so its own fields (Dir, the slices' headers) are the
// caller's.

// compiledRelease is one release of zcompiled.go.
type compiledRelease struct {
	name string
	spec *Spec
	// link gives the static rows what cannot be static data (maps, the
	// Enums slice header, pointers that close a cycle of structs); it runs
	// once, and only when the release is current.
	link func()
	// sums are the embedded files of the release's directory and of the
	// releases it derives from, as the generator read them.
	sums []FileSum

	once    sync.Once
	current bool
}

// FileSum is one embedded spec file a compiled release was built from.
type FileSum struct {
	Name string // path in Embedded: release/file.toml
	Size int
	// CRC is the CRC-32 (IEEE) of the file: carry-less-multiply accelerated,
	// with only a small table to build (Castagnoli's tables cost more to
	// build at start than the whole hash).
	CRC uint32
}

// EmbeddedSums lists the embedded files of every directory s was read from
// (its release's and its parents'), with their checksums: what a compiled
// release records, and what must still hold for it to be used.
func EmbeddedSums(s *Spec) ([]FileSum, error) {
	var dirs []string
	for _, f := range s.Files {
		d, ok := strings.CutPrefix(path.Dir(f), "spec/")
		if !ok {
			return nil, errNoRelease(s.Release.Name)
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirSums(Embedded, dirs)
}

// dirSums checksums every file of dirs, in directory order then name order.
func dirSums(fsys fs.FS, dirs []string) ([]FileSum, error) {
	var out []FileSum
	var buf []byte
	for _, d := range dirs {
		entries, err := fs.ReadDir(fsys, d)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			name := d + "/" + e.Name()
			f, err := fsys.Open(name)
			if err != nil {
				return nil, err
			}
			if buf == nil {
				buf = make([]byte, 16<<10)
			}
			var sum uint32
			n := 0
			for {
				k, err := f.Read(buf)
				sum = crc32.Update(sum, crc32.IEEETable, buf[:k])
				n += k
				if err == io.EOF {
					break
				}
				if err != nil {
					f.Close()
					return nil, err
				}
			}
			f.Close()
			out = append(out, FileSum{Name: name, Size: n, CRC: sum})
		}
	}
	return out, nil
}

// currentIn reports whether the files c was compiled from are unchanged in
// fsys: the same files in the same directories, of the same size and CRC.
// Only this release's directories are read.
func (c *compiledRelease) currentIn(fsys fs.FS) bool {
	var dirs []string
	for _, s := range c.sums {
		if d := path.Dir(s.Name); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	got, err := dirSums(fsys, dirs)
	return err == nil && slices.Equal(got, c.sums)
}

// load returns the compiled release, or nil when it is stale in fsys.
func (c *compiledRelease) load(fsys fs.FS) *Spec {
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

// loadCompiled returns the compiled release, or nil when there is none or
// it is stale (then the caller reads the TOML).
func loadCompiled(release string) *Spec {
	for i := range compiledReleases {
		if c := &compiledReleases[i]; c.name == release {
			return c.load(Embedded)
		}
	}
	return nil
}

// LoadTOML reads an embedded release from its TOML files, ignoring the
// compiled form (the generator and the equality test use it).
func LoadTOML(release string) (*Spec, error) {
	if _, err := fs.Stat(Embedded, release); err != nil {
		return nil, errNoRelease(release)
	}
	return LoadFS(Embedded, release, "spec/"+release)
}
