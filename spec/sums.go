package spec

import (
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// FileSum is one embedded spec file a compiled release (spec/compiled) was
// built from.
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
	return DirSums(Embedded, dirs)
}

// DirSums checksums every file of dirs in fsys, in directory order then
// name order: what EmbeddedSums records, and what spec/compiled compares
// with it before it uses a compiled release.
func DirSums(fsys fs.FS, dirs []string) ([]FileSum, error) {
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
