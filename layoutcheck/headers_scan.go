package layoutcheck

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/internal/regfile"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// The pre-scan of a --headers tree, before any compiler runs on it
// (docs/layoutcheck.md#headers-as-input): what it refuses by name, the
// compiler would otherwise read without bound; what it cannot see (a name
// a macro computes) is left to the limits of headers.go.

// includable refuses a header name that cannot stand between the quotes
// of the generated #include line (unitSource): C has no escapes there, so
// a double quote or a line break would end the line and splice the rest
// of the name in as code (a struct declared only in a file name was read
// and judged), and a backslash is undefined. Anything else is a byte of a
// path as C's #include "..." takes it: an apostrophe (it's.h), a comment
// opener or ?? (trigraphs are off in gnu11) included.
func includable(rel string) error {
	for i := 0; i < len(rel); i++ {
		if c := rel[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\\' {
			return fmt.Errorf("the file name cannot be #included by name (it holds %s); fix: rename the header, or leave it out with --include", describeByte(c))
		}
	}
	return nil
}

func describeByte(c byte) string {
	switch c {
	case '"':
		return "a double quote"
	case '\\':
		return "a backslash"
	}
	return fmt.Sprintf("the control byte 0x%02x", c)
}

// scanHeaders reads the tree under abs (dir as the user gave it, for
// messages): the regular *.h files (sorted, relative) and a sha256 over
// their paths and contents. It refuses, by name, what would make the
// compiler block or read without end if a header included it: anything
// in the tree that is not a regular file, a directory or a symbolic link
// resolving to one of those inside the tree, and an #include whose file
// it can find (in the tree, in extra, the -I directories, or the system's)
// and that is not a regular file. Symbolic links are checked, not
// followed. visit, if not nil, sees each header's text.
func scanHeaders(abs, dir string, extra []string, visit func(rel string, text []byte)) ([]string, string, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, "", elfread.InputErrorf(esc.String(dir), "%w", err)
	}
	var files []string
	entries := 0
	// The walk is of the resolved tree: WalkDir does not enter a root that
	// is itself a link (an /opt/.../include pointing at a versioned
	// directory).
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(real, p)
		if err != nil {
			return err
		}
		show := esc.String(filepath.Join(dir, rel))
		if entries++; entries > maxTreeEntries {
			return elfread.InputErrorf(esc.String(dir), "more than %d files and directories; name the vendor's include directory, not a parent of it", maxTreeEntries)
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			return checkLink(p, real, show)
		case !t.IsRegular():
			return elfread.InputErrorf(show, "%s; fix: remove it from the headers directory (the compiler would block or read without end if a header included it)", notRegular(t))
		}
		if !strings.HasSuffix(p, ".h") {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) > maxHeaderFiles {
			return elfread.InputErrorf(esc.String(dir), "more than %d headers; name the vendor's include directory, not a parent of it", maxHeaderFiles)
		}
		return nil
	})
	if err != nil {
		var ie *elfread.InputError
		if errors.As(err, &ie) {
			return nil, "", err
		}
		return nil, "", elfread.InputErrorf(esc.String(dir), "%w", err)
	}
	sort.Strings(files) // WalkDir's lexical order, made explicit
	sum := sha256.New()
	var total int64
	var n [8]byte
	for _, rel := range files {
		p := filepath.Join(abs, rel)
		show := esc.String(filepath.Join(dir, rel))
		text, err := readHeader(p, maxHeaderBytes-total)
		if err != nil {
			return nil, "", elfread.InputErrorf(show, "%w", err)
		}
		total += int64(len(text))
		binary.LittleEndian.PutUint64(n[:], uint64(len(rel)))
		sum.Write(n[:])
		sum.Write([]byte(rel))
		binary.LittleEndian.PutUint64(n[:], uint64(len(text)))
		sum.Write(n[:])
		sum.Write(text)
		if visit != nil {
			visit(rel, text)
		}
		for _, inc := range includeNames(text) {
			if err := checkInclude(inc, filepath.Dir(p), abs, extra); err != nil {
				return nil, "", elfread.InputErrorf(fmt.Sprintf("%s:%d", show, inc.Line), "%w", err)
			}
		}
	}
	return files, hex.EncodeToString(sum.Sum(nil)), nil
}

// readHeader reads a header of at most room bytes through regfile: the open
// does not block and the type is checked on the open file, so a FIFO
// swapped in after the walk is refused, not waited on.
func readHeader(p string, room int64) ([]byte, error) {
	text, err := regfile.ReadFile(p, room)
	var nr *regfile.NotRegularError
	var tl *regfile.TooLargeError
	switch {
	case errors.As(err, &nr):
		return nil, errors.New(nr.What())
	case errors.As(err, &tl):
		return nil, fmt.Errorf("the headers hold more than %d MiB; name the vendor's include directory, not a parent of it", maxHeaderBytes>>20)
	case err != nil:
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, pe.Err // the caller names the header
		}
		return nil, err
	}
	return text, nil
}

// notRegular says what m is instead of a regular file, in regfile's words.
func notRegular(m fs.FileMode) string { return (&regfile.NotRegularError{Mode: m}).What() }

// checkLink refuses a symbolic link in the tree that resolves outside it
// (real, the tree with its own links resolved) or to anything but a
// regular file or a directory.
func checkLink(p, real, show string) error {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return elfread.InputErrorf(show, "a symbolic link that does not resolve (%v); fix: remove it or make it point into the headers directory", errors.Unwrap(err))
	}
	if r, err := filepath.Rel(real, target); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return elfread.InputErrorf(show, "a symbolic link to %s, outside the headers directory; fix: copy what it points to into the directory, or give --headers the directory it points into", esc.String(target))
	}
	st, err := os.Stat(target)
	if err != nil {
		return elfread.InputErrorf(show, "%w", err)
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return elfread.InputErrorf(show, "a symbolic link to %s, %s; fix: remove it from the headers directory", esc.String(target), notRegular(st.Mode()))
	}
	return nil
}

// systemIncludeDirs are where an #include <...> that names no header of
// the tree is looked for, for the check of what it names; gcc's own
// directories hold only its headers, which a ../ climbs out of into these.
var systemIncludeDirs = []string{"/usr/local/include", "/usr/include"}

// checkInclude refuses an #include whose file, looked for where the
// compiler would look (the including header's directory for "...", the
// tree and its parent, the system directories), exists and is not a
// regular file: the compiler would block on a FIFO or read /dev/zero until
// its memory limit. A name it cannot find is the compiler's to report.
func checkInclude(inc includeRef, from, abs string, extra []string) error {
	var dirs []string
	switch {
	case filepath.IsAbs(inc.Name):
		dirs = []string{""}
	case inc.Angled:
		dirs = append(append(append([]string{abs}, extra...), filepath.Dir(abs)), systemIncludeDirs...)
	default:
		dirs = append(append(append([]string{from, abs}, extra...), filepath.Dir(abs)), systemIncludeDirs...)
	}
	for _, d := range dirs {
		p := filepath.Join(d, inc.Name)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s %s, which is %s; fix: remove the #include, or name the headers to read with --include", inc.Directive, esc.String(inc.quoted()), notRegular(st.Mode()))
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && pseudo(real) {
			return fmt.Errorf("%s %s, which is %s, a kernel file that is not a regular file (its size says nothing of what it reads); fix: remove the #include, or name the headers to read with --include", inc.Directive, esc.String(inc.quoted()), esc.String(real))
		}
	}
	return nil
}

// pseudo is a path under /proc, /sys or /dev: "regular" files there
// (/proc/kcore, /proc/self/pagemap) read without end or claim terabytes.
func pseudo(p string) bool {
	for _, root := range []string{"/proc/", "/sys/", "/dev/"} {
		if strings.HasPrefix(p, root) {
			return true
		}
	}
	return false
}

// includeRef is a file name a header's directive names.
type includeRef struct {
	Directive string // "#include", "#embed", "__has_include", ...
	Name      string
	Angled    bool // <name>, not "name"
	Line      int  // 1-based, of the directive's first line
}

func (r includeRef) quoted() string {
	if r.Angled {
		return "<" + r.Name + ">"
	}
	return `"` + r.Name + `"`
}

// includeDirective reports whether a directive opens a file by name (a
// switch, not a map built at init: docs/benchmarks.md#start-up-2026-12-04).
func includeDirective(word string) bool {
	switch word {
	case "include", "include_next", "import", "embed":
		return true
	}
	return false
}

// includeOperators are the operators of #if that open a file by name.
var includeOperators = []string{"__has_include_next", "__has_include", "__has_embed"}

// includeNames lists the file names a header's directives and __has_include
// operators name literally ("..." or <...>), joining continued lines. A
// name made by a macro is not seen: the compiler's limits bound those.
// This is a reading for refusal, not a preprocessor: a name in a comment
// counts too.
func includeNames(src []byte) []includeRef {
	var refs []includeRef
	lines := strings.Split(string(src), "\n")
	for i := 0; i < len(lines); i++ {
		first := i + 1
		line := strings.TrimSuffix(lines[i], "\r")
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimSuffix(lines[i], "\r")
		}
		rest := strings.TrimLeft(line, " \t\f\v")
		if strings.HasPrefix(rest, "#") {
			rest = strings.TrimLeft(rest[1:], " \t\f\v")
			word := rest
			if j := strings.IndexFunc(rest, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }); j >= 0 {
				word = rest[:j]
			}
			if includeDirective(word) {
				if name, angled, ok := headerName(rest[len(word):]); ok {
					refs = append(refs, includeRef{Directive: "#" + word, Name: name, Angled: angled, Line: first})
				}
			}
		}
		for _, op := range includeOperators {
			for s := line; ; {
				j := strings.Index(s, op)
				if j < 0 {
					break
				}
				s = s[j+len(op):]
				if strings.HasPrefix(s, "_next") { // __has_include inside __has_include_next
					continue
				}
				if t := strings.TrimLeft(s, " \t"); strings.HasPrefix(t, "(") {
					if name, angled, ok := headerName(t[1:]); ok {
						refs = append(refs, includeRef{Directive: op, Name: name, Angled: angled, Line: first})
					}
				}
			}
		}
	}
	return refs
}

// headerName reads a "name" or <name> after white space.
func headerName(s string) (name string, angled, ok bool) {
	s = strings.TrimLeft(s, " \t\f\v")
	if s == "" {
		return "", false, false
	}
	end := byte('"')
	if s[0] == '<' {
		end, angled = '>', true
	} else if s[0] != '"' {
		return "", false, false
	}
	j := strings.IndexByte(s[1:], end)
	if j <= 0 {
		return "", false, false
	}
	return s[1 : 1+j], angled, true
}

// The pre-scan for spec structs: which headers define a struct the spec
// describes, so that one that does not compile is refused by the struct's
// name rather than left out (docs/layoutcheck.md#headers-as-input). It is
// a reading of the text, not a parse: a definition in a comment is
// dropped with the comments; one a macro makes is not seen, and such a
// header, if it does not compile, is left out with a warning. The
// patterns are compiled on first use, not at start-up: every nrtabi command
// links this package, few read headers.
var (
	structDef  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(?:struct|union)\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{`) })
	typedefEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\}\s*([A-Za-z_][A-Za-z0-9_]*)\s*[;,\[]`) })
	typedefTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\btypedef\s+(?:const\s+)?(?:struct|union)\s+[A-Za-z_][A-Za-z0-9_]*\s+([A-Za-z_][A-Za-z0-9_]*)\s*;`)
	})
	comments = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`) })
)

// specStructNames maps every name a spec struct may carry in C (its name,
// tag, typedefs and TAG_t) to the struct's spec name.
func specStructNames(sp *spec.Spec) map[string]string {
	names := map[string]string{}
	for _, st := range sp.Structs {
		for _, n := range specmatch.StructNames(st) {
			if _, ok := names[n]; !ok {
				names[n] = st.Name
			}
		}
	}
	return names
}

// declaredStructs are the spec structs (by spec name, sorted, once each)
// text defines: a struct or union body under one of their names, or a
// typedef naming one of them.
func declaredStructs(text []byte, names map[string]string) []string {
	src := comments().ReplaceAll(text, []byte(" "))
	seen := map[string]bool{}
	var out []string
	for _, re := range []*regexp.Regexp{structDef(), typedefEnd(), typedefTag()} {
		for _, m := range re.FindAllSubmatch(src, -1) {
			if n, ok := names[string(m[1])]; ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}
