package layoutcheck

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
)

// Headers is a tree of C headers (the vendor's public headers, say)
// compiled by the system C compiler with -g into one relocatable object, so
// the DWARF readers (check, extract, release new) read the types they
// declare as they read any binary's.
type Headers struct {
	Dir    string   // the header directory as given
	Hash   string   // sha256 over every header's path and content, hex
	Roots  []string // the headers compiled, relative to Dir
	Object string   // the compiled object, in a temporary directory
	Notes  []string // what was worked around: headers that conflict, duplicate typedefs
	tmp    string
}

// Bounds on a header tree: a vendor's include directory has tens of
// headers; these stop a mistaken --headers / from reading a disk.
const (
	maxHeaderFiles = 4096
	maxHeaderBytes = 64 << 20
)

// headerFlags make every declared type reachable in the DWARF (gcc emits
// only the used ones otherwise) and ask for the feature macros system
// headers gate declarations on. gnu11 accepts a typedef repeated with the
// same type, which headers that each guard a shared typedef rely on.
var headerFlags = []string{"-std=gnu11", "-D_GNU_SOURCE", "-fno-eliminate-unused-debug-types", "-w"}

// Source names the header set for reports and provenance notes.
func (h *Headers) Source() string {
	return fmt.Sprintf("headers %s (sha256 %s)", h.Dir, h.Hash)
}

// Close removes the compiled object.
func (h *Headers) Close() {
	if h == nil || h.tmp == "" {
		return
	}
	specmatch.SetLabel(h.Object, "")
	os.RemoveAll(h.tmp)
	h.tmp = ""
}

// CompileHeaders compiles the headers under dir (every *.h, or only those
// named in include, relative to dir) in a temporary directory; nothing is
// written next to the headers. All headers go into one translation unit;
// if that does not compile but each header does on its own, they conflict
// (a typedef declared twice with different types, say): each is then
// compiled in its own unit, and the conflict is kept as a note. A header
// that does not compile on its own is an *InputError with the compiler's
// first error and the fix.
func CompileHeaders(dir string, include []string) (*Headers, error) {
	if err := cc.Available(); err != nil {
		return nil, elfread.InputErrorf(dir, "%w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, elfread.InputErrorf(dir, "%w; name the directory holding the headers (for example /opt/aws/neuron/include)", errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, elfread.InputErrorf(dir, "not a directory; --headers takes the directory holding the headers (name single headers with --include)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, elfread.InputErrorf(dir, "%w", err)
	}
	all, hash, err := hashHeaders(abs)
	if err != nil {
		return nil, elfread.InputErrorf(dir, "%w", err)
	}
	if len(all) == 0 {
		return nil, elfread.InputErrorf(dir, "no .h files under this directory; name the directory holding the headers (for example /opt/aws/neuron/include)")
	}
	roots, err := headerRoots(abs, all, include)
	if err != nil {
		return nil, elfread.InputErrorf(dir, "%w", err)
	}
	tmp, err := os.MkdirTemp("", "nrtabi-headers-")
	if err != nil {
		return nil, err
	}
	h := &Headers{Dir: dir, Hash: hash, Roots: roots, tmp: tmp, Object: filepath.Join(tmp, "headers.o")}
	if err := h.compile(abs); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	specmatch.SetLabel(h.Object, h.Source())
	return h, nil
}

// hashHeaders lists the regular *.h files under dir (sorted, relative) and
// hashes their paths and contents. Symbolic links are not followed.
func hashHeaders(dir string) ([]string, string, error) {
	var files []string
	var total int64
	sum := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".h") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) > maxHeaderFiles {
			return fmt.Errorf("more than %d headers; name the vendor's include directory, not a parent of it", maxHeaderFiles)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	sort.Strings(files) // WalkDir's lexical order, made explicit
	var n [8]byte
	for _, rel := range files {
		f, err := os.Open(filepath.Join(dir, rel))
		if err != nil {
			return nil, "", err
		}
		st, err := f.Stat()
		if err == nil && !st.Mode().IsRegular() {
			err = fmt.Errorf("%s: not a regular file", rel)
		}
		if err == nil {
			total += st.Size()
			if total > maxHeaderBytes {
				err = fmt.Errorf("the headers hold more than %d MiB; name the vendor's include directory, not a parent of it", maxHeaderBytes>>20)
			}
		}
		if err == nil {
			binary.LittleEndian.PutUint64(n[:], uint64(len(rel)))
			sum.Write(n[:])
			sum.Write([]byte(rel))
			binary.LittleEndian.PutUint64(n[:], uint64(st.Size()))
			sum.Write(n[:])
			_, err = io.CopyN(sum, f, st.Size())
		}
		f.Close()
		if err != nil {
			return nil, "", err
		}
	}
	return files, hex.EncodeToString(sum.Sum(nil)), nil
}

// headerRoots are the headers to compile: those named (each a header under
// dir), else all.
func headerRoots(dir string, all, include []string) ([]string, error) {
	if len(include) == 0 {
		return all, nil
	}
	have := map[string]bool{}
	for _, f := range all {
		have[f] = true
	}
	var roots []string
	for _, inc := range include {
		rel := inc
		if filepath.IsAbs(inc) {
			r, err := filepath.Rel(dir, inc)
			if err != nil || strings.HasPrefix(r, "..") {
				return nil, fmt.Errorf("--include %s: not under the headers directory", inc)
			}
			rel = r
		}
		rel = filepath.ToSlash(filepath.Clean(rel))
		if !have[rel] {
			return nil, fmt.Errorf("--include %s: no such header under the directory (give a path relative to it, e.g. %s)", inc, all[0])
		}
		roots = append(roots, rel)
	}
	return roots, nil
}

// unitSource is a translation unit that includes the headers.
func unitSource(roots []string) string {
	var b strings.Builder
	b.WriteString("/* generated by nrtabi: the headers' types, kept in the DWARF */\n")
	for _, r := range roots {
		fmt.Fprintf(&b, "#include \"%s\"\n", r)
	}
	return b.String()
}

func (h *Headers) compileUnit(abs, name string, roots []string) (string, error) {
	if err := os.WriteFile(filepath.Join(h.tmp, name+".c"), []byte(unitSource(roots)), 0o644); err != nil {
		return "", err
	}
	// The parent is searched last, for headers that include each other as
	// <nrt/nrt.h> when DIR is the nrt directory itself.
	flags := append(append([]string{}, headerFlags...), "-I"+abs, "-idirafter", filepath.Dir(abs))
	return name + ".o", cc.Object(h.tmp, name+".c", name+".o", flags...)
}

func (h *Headers) compile(abs string) error {
	obj, err := h.compileUnit(abs, "all", h.Roots)
	if err == nil {
		return os.Rename(filepath.Join(h.tmp, obj), h.Object)
	}
	combined := firstError(err)
	if prev := previousDecl(err); prev != "" {
		combined += "; previously declared at " + prev
	}
	if len(h.Roots) == 1 {
		return h.compileError(h.Roots[0], err)
	}
	// One unit per header: each must compile alone.
	var objs []string
	for i, r := range h.Roots {
		obj, err := h.compileUnit(abs, fmt.Sprintf("unit%d", i), []string{r})
		if err != nil {
			return h.compileError(r, err)
		}
		objs = append(objs, obj)
	}
	h.Notes = append(h.Notes, conflictNote(combined, abs, h.Dir))
	args := append([]string{"-r", "-nostdlib", "-o", filepath.Base(h.Object)}, objs...)
	if err := cc.Run(h.tmp, args...); err != nil {
		return elfread.InputErrorf(h.Dir, "cannot combine the compiled headers: %s", firstError(err))
	}
	return nil
}

func (h *Headers) compileError(header string, err error) error {
	abs, _ := filepath.Abs(h.Dir)
	return elfread.InputErrorf(filepath.Join(h.Dir, header), "does not compile: %s; fix: make the header compile on its own (gcc -fsyntax-only -I %s %s), or name the headers to read with --include",
		strings.ReplaceAll(firstError(err), abs+"/", ""), h.Dir, filepath.Join(h.Dir, header))
}

var conflicting = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(conflicting types for|redefinition of|redeclaration of|conflicting type qualifiers for) ['‘"]([^'’"]+)['’"]`)
})

// conflictNote says which declaration the combined unit rejected.
func conflictNote(first, abs, dir string) string {
	first = strings.ReplaceAll(first, abs, dir)
	if m := conflicting().FindStringSubmatch(first); m != nil {
		return fmt.Sprintf("duplicate declaration of %s: the headers declare it differently (%s); each header was compiled in its own unit, and a struct found in several is read from the first", m[2], first)
	}
	return fmt.Sprintf("the headers do not compile together (%s); each header was compiled in its own unit", first)
}

// previousDecl is where gcc says the rejected declaration was first made
// (file:line), or "".
func previousDecl(err error) string {
	var ce *cc.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, line := range strings.Split(ce.Output, "\n") {
		if i := strings.Index(line, ": note: previous"); i > 0 {
			loc := line[:i]
			if j := strings.LastIndexByte(loc, ':'); j > 0 && strings.Count(loc, ":") >= 2 {
				loc = loc[:j] // drop the column
			}
			return loc
		}
	}
	return ""
}

// firstError is the compiler's first error line, or its whole message. The
// errors built from it keep that line only, on purpose: an input error is
// one line, and no caller looks inside it for the *cc.Error.
func firstError(err error) string {
	var ce *cc.Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	for _, line := range strings.Split(ce.Output, "\n") {
		if strings.Contains(line, "error:") {
			return strings.TrimSpace(line)
		}
	}
	out := strings.TrimSpace(ce.Output)
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i]
	}
	if out == "" {
		return ce.Err.Error()
	}
	return out
}
