package cli

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// maxChain bounds the derived_from chain sameAsEmbedded follows; the
// loader refuses a loop, this only keeps the walk finite before it does.
const maxChain = 64

// checkoutReleases lists the release directories under root/spec, sorted
// (a directory holding a release.toml); bounded like a spec directory.
func checkoutReleases(root string) []string {
	f, err := os.Open(filepath.Join(root, "spec"))
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(spec.MaxSpecDirEntries)
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !releaseName(e.Name()) {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, "spec", e.Name(), "release.toml")); err == nil && st.Mode().IsRegular() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// releaseName reports whether v can name a release directory: a bare name
// the validator accepts for a release, never a path.
func releaseName(v string) bool {
	return v != "" && v != "." && v != ".." && spec.FileNameProblem(v) == "" && !strings.Contains(v, "+")
}

// sameAsEmbedded reports whether the checkout's spec/NAME holds exactly the
// embedded release's files, and so does each release it derives from that
// the checkout also holds: then the two are one release and the embedded
// (compiled, faster) form is read. Anything unreadable or over a bound
// counts as different; the loader then reports it by name.
func sameAsEmbedded(root, name string) bool {
	for depth := 0; name != "" && depth < maxChain; depth++ {
		dir := filepath.Join(root, "spec", name)
		st, err := os.Stat(dir)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist) && depth > 0 && embedded(name) // a parent only embedded: both read it
		}
		if !st.IsDir() || !embedded(name) || !sameFiles(dir, name) {
			return false
		}
		s, err := compiled.Load(name)
		if err != nil {
			return false
		}
		name = s.Release.DerivedFrom
	}
	return name == ""
}

func embedded(name string) bool {
	for _, r := range spec.Releases() {
		if r == name {
			return true
		}
	}
	return false
}

// sameFiles compares the *.toml files of dir with the embedded release's.
// Every --spec NAME run inside a checkout does this, so it reads no more
// than it must: a file whose size differs is different unread, and the
// bytes of one the same size are read with one read each into two buffers
// kept for all the files, not grown from 512 bytes and copied per file
// (docs/benchmarks.md#start-up-zstd-2026-12-04).
func sameFiles(dir, name string) bool {
	want, err := fs.Glob(spec.Embedded, name+"/*.toml")
	if err != nil {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	entries, err := f.ReadDir(spec.MaxSpecDirEntries + 1) // bounded like the loader's listing
	f.Close()
	if err != nil || len(entries) > spec.MaxSpecDirEntries {
		return false
	}
	got := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".toml") {
			got++
		}
	}
	if got != len(want) {
		return false
	}
	var total int64
	var disk, emb []byte
	for _, w := range want {
		st, err := fs.Stat(spec.Embedded, w)
		if err != nil {
			return false
		}
		size := st.Size()
		if total += size; size > spec.MaxSpecFileSize || total > spec.MaxSpecDirSize {
			return false
		}
		disk, emb = grown(disk, size+1), grown(emb, size)
		if !sameFile(filepath.Join(dir, filepath.Base(w)), disk[:size+1]) || !readEmbedded(w, emb[:size]) || !bytes.Equal(disk[:size], emb[:size]) {
			return false
		}
	}
	return true
}

// grown is b with room for n bytes.
func grown(b []byte, n int64) []byte {
	if int64(cap(b)) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// sameFile reads path, a regular file of len(buf)-1 bytes, into buf: false
// when it is not a regular file, not of that size, or not readable. The
// byte more is how a file grown since its stat is noticed.
func sameFile(path string, buf []byte) bool {
	f, st, err := regfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	size := int64(len(buf) - 1)
	if st.Size() != size {
		return false
	}
	n, err := io.ReadFull(f, buf)
	return int64(n) == size && (err == io.ErrUnexpectedEOF || err == io.EOF && size == 0)
}

// readEmbedded reads the embedded file name, of len(buf) bytes, into buf.
func readEmbedded(name string, buf []byte) bool {
	f, err := spec.Embedded.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = io.ReadFull(f, buf)
	return err == nil
}
