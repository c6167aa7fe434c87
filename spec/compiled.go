package spec

import (
	"hash/crc32"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The embedded releases are also compiled into Go (zcompiled.go, written by
// `make generate` from a validated TOML load): a command that needs a
// release pays for building it from literals and binding its type
// expressions, not for parsing and validating 100 KB of TOML. The compiled
// form is used only while its hash equals the embedded TOML's, so an edited
// spec is never shadowed by a stale compilation; the generator builds with
// the nrtabi_nocompiled tag, so a stale zcompiled.go can always be redone.

// compiledRelease builds one release from the generated literals.
type compiledRelease func() *Spec

var (
	// compiledReleases and compiledHash are set by zcompiled.go.
	compiledReleases map[string]compiledRelease
	compiledHash     string

	embeddedHashOnce sync.Once
	embeddedHash     string
)

// EmbeddedHash is a checksum of every embedded spec file (name and bytes),
// which the compiled releases record.
func EmbeddedHash() string {
	embeddedHashOnce.Do(func() {
		var names []string
		_ = fs.WalkDir(Embedded, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				names = append(names, p)
			}
			return nil
		})
		sort.Strings(names)
		h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
		// One buffer for every file: fs.ReadFile would copy each embedded
		// file onto the heap, which at startup costs more than the hash.
		buf := make([]byte, 32<<10)
		for _, n := range names {
			f, err := Embedded.Open(n)
			if err != nil {
				continue
			}
			st, err := f.Stat()
			if err != nil {
				f.Close()
				continue
			}
			h.Write([]byte(n + "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00"))
			_, _ = io.CopyBuffer(h, f.(io.Reader), buf)
			f.Close()
		}
		embeddedHash = strconv.FormatUint(uint64(h.Sum32()), 16) + "-" + strconv.Itoa(len(names))
	})
	return embeddedHash
}

// loadCompiled returns the compiled release, or nil when there is none or
// it is stale (then the caller reads the TOML).
func loadCompiled(release string) *Spec {
	build, ok := compiledReleases[release]
	if !ok || compiledHash != EmbeddedHash() {
		return nil
	}
	s := build()
	if errs := s.resolve(); len(errs) > 0 {
		return nil // cannot happen for a validated compilation; the TOML says why
	}
	s.lazy = &lazyIndex{}
	return s
}

// LoadTOML reads an embedded release from its TOML files, ignoring the
// compiled form (the generator and the equality test use it).
func LoadTOML(release string) (*Spec, error) {
	if _, err := fs.Stat(Embedded, release); err != nil {
		return nil, errNoRelease(release)
	}
	return LoadFS(Embedded, release, "spec/"+release)
}

// lazyIndex builds a compiled spec's key positions on first use, from the
// embedded file a row came from: only an error message needs them.
type lazyIndex struct {
	mu    sync.Mutex
	files map[string]*posIndex
}

func (s *Spec) fileIndex(file string) *posIndex {
	if idx := s.index[file]; idx != nil || s.lazy == nil {
		return idx
	}
	s.lazy.mu.Lock()
	defer s.lazy.mu.Unlock()
	if idx, ok := s.lazy.files[file]; ok {
		return idx
	}
	var idx *posIndex
	if name, ok := strings.CutPrefix(file, "spec/"); ok {
		if data, err := fs.ReadFile(Embedded, name); err == nil {
			idx = newPosIndex()
			indexPositions(idx, file, string(data))
		}
	}
	if s.lazy.files == nil {
		s.lazy.files = map[string]*posIndex{}
	}
	s.lazy.files[file] = idx
	return idx
}
