package layoutcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/esc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
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
	Notes  []string // what was worked around: headers that conflict, duplicate typedefs, an order
	// Prelude, IncludeDirs and CFlags are how the headers were compiled,
	// for the provenance of what is read from them.
	Prelude     []string
	IncludeDirs []string // absolute
	CFlags      []string
	// Order is the order the headers were compiled in when it is not the
	// tree's (a header compiled after one defining a type it uses), or nil.
	Order []string
	// Warnings name each header left out because it does not compile on
	// its own and no spec struct needs it, with the compiler's first error
	// for it.
	Warnings []string
	declares map[string][]string // header (relative) -> the spec structs it defines, from the pre-scan
	texts    map[string][]byte   // header (relative) -> its text, for the types a header uses and another defines
	tmp      string
	opts     HeaderOptions
	limit    context.Context // ends when opts.Timeout has passed, with errTimeLimit
	abs      string          // Dir, absolute
}

// errTimeLimit is the cause of the compile's deadline, which tells it from
// the caller's.
var errTimeLimit = errors.New("the headers' time limit")

// Bounds on a header tree: a vendor's include directory has tens of
// headers; these stop a mistaken --headers / from reading a disk.
const (
	maxHeaderFiles = 4096
	maxHeaderBytes = 64 << 20
	maxTreeEntries = 1 << 16 // every file and directory under DIR
)

// HeaderOptions say which headers to compile and bound the compiler. The
// headers are input nrtabi does not trust (a vendor drop, a pull
// request): the compiler then is an untrusted program, which a header can
// make read /dev/zero, block on a FIFO, expand a macro exponentially or
// print without end (docs/layoutcheck.md#headers-as-input).
type HeaderOptions struct {
	// Include names the headers to compile, relative to the directory;
	// none: every *.h under it.
	Include []string
	// Timeout is the wall-clock limit on compiling the whole tree (every
	// compiler run together); 0: DefaultHeaderTimeout.
	Timeout time.Duration
	// Memory is each compiler process's address space in bytes; 0:
	// DefaultHeaderMemory.
	Memory int64
	// Output is how many bytes of the compiler's messages are kept; more is
	// an error. 0: DefaultHeaderOutput.
	Output int
	// IncludeDepth is how deep #include may nest; 0: DefaultIncludeDepth.
	IncludeDepth int
	// IncludeDirs are more directories to look for included headers in
	// (-I), after the tree: what a vendor header includes and the tree
	// does not ship (a driver's header).
	IncludeDirs []string
	// CFlags are more compiler flags, as the code that includes the
	// headers is compiled with (-DNAME, -include FILE, -std=...); only the
	// preprocessor and layout flags of CheckCFlags are taken.
	CFlags []string
	// NoPrelude compiles the headers without Prelude.
	NoPrelude bool
	// Spec, if set, says which structs matter: a header that does not
	// compile on its own and defines none of its structs is left out with
	// a warning, not an error. Nil: every header must compile.
	Spec *spec.Spec
}

// The defaults of HeaderOptions. The SDK's headers compile in a tenth of
// a second and well under 100 MiB, nested about 15 deep (glibc included).
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultHeaderMemory  = 1 << 30
	DefaultHeaderOutput  = 64 << 10
	DefaultIncludeDepth  = 200
)

// maxCompilerErrors is how many errors gcc reports before it stops: a
// macro that expands to millions of bad declarations stops at the tenth.
// The first is the one reported; conflicts need its note.
const maxCompilerErrors = 10

func (o HeaderOptions) withDefaults() HeaderOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultHeaderTimeout
	}
	if o.Memory <= 0 {
		o.Memory = DefaultHeaderMemory
	}
	if o.Output <= 0 {
		o.Output = DefaultHeaderOutput
	}
	if o.IncludeDepth <= 0 {
		o.IncludeDepth = DefaultIncludeDepth
	}
	return o
}

// headerFlags make every declared type reachable in the DWARF (gcc emits
// only the used ones otherwise) and ask for the feature macros system
// headers gate declarations on. gnu11 accepts a typedef repeated with the
// same type, which headers that each guard a shared typedef rely on.
var headerFlags = []string{"-std=gnu11", "-D_GNU_SOURCE", "-fno-eliminate-unused-debug-types", "-w"}

// boundFlags bound what a header can make the compiler do, next to the
// limits of cc.Limits: errors stop at maxCompilerErrors (an
// error-amplifying macro printed a gigabyte), macro expansions are not
// tracked (their notes multiply the output and the memory of an
// exponential macro), diagnostics are plain (no source lines, colours or
// URLs), includes nest at most depth deep (mutually including headers
// without guards), and -H names each header as it is entered, so a limit
// hit in a unit of many headers is blamed on one.
func boundFlags(depth int) []string {
	return []string{"-fmax-errors=" + fmt.Sprint(maxCompilerErrors), "-ftrack-macro-expansion=0",
		"-fdiagnostics-plain-output", "-fmax-include-depth=" + fmt.Sprint(depth), "-H"}
}

// Prelude is what the unit includes before the tree's headers: the C
// standard headers a vendor header may use without including them, as
// the code that includes it always has (uint64_t without <stdint.h>,
// static_assert without <assert.h>; docs/layoutcheck.md#headers-as-input).
// They declare no struct of the boundary.
var Prelude = []string{"stddef.h", "stdint.h", "stdbool.h", "assert.h", "limits.h"}

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

// CompileHeaders is CompileHeadersContext with the default bounds.
func CompileHeaders(dir string, include []string) (*Headers, error) {
	return CompileHeadersContext(context.Background(), dir, HeaderOptions{Include: include})
}

// CompileHeadersContext compiles the headers under dir (every *.h, or only
// those named in opts.Include, relative to dir) in a temporary directory;
// nothing is written next to the headers. All headers go into one
// translation unit; if that does not compile but each header does on its
// own, they conflict (a typedef declared twice with different types, say):
// each is then compiled in its own unit, and the conflict is kept as a
// note. A header that does not compile on its own is an *InputError with
// the compiler's first error and the fix.
//
// The tree is read first, and refused by name when it holds what would
// make the compiler block or read without end: a FIFO, a device or a
// socket, a symbolic link out of the tree, an #include naming such a file,
// a header name that cannot be spliced into an #include line. What that
// reading cannot see (a computed #include, a macro) meets opts' limits,
// and the *InputError names the header and the limit.
func CompileHeadersContext(ctx context.Context, dir string, opts HeaderOptions) (*Headers, error) {
	opts = opts.withDefaults()
	if err := cc.Available(); err != nil {
		return nil, elfread.InputErrorf(esc.String(dir), "%w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, elfread.InputErrorf(esc.String(dir), "%w; name the directory holding the headers (for example /opt/aws/neuron/include)", errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, elfread.InputErrorf(esc.String(dir), "not a directory; --headers takes the directory holding the headers (name single headers with --include)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, elfread.InputErrorf(esc.String(dir), "%w", err)
	}
	extra, err := includeDirs(opts.IncludeDirs)
	if err != nil {
		return nil, err
	}
	opts.IncludeDirs = extra
	if err := CheckCFlags(opts.CFlags); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	declares := map[string][]string{}
	texts := map[string][]byte{}
	var names map[string]string
	if opts.Spec != nil {
		names = specStructNames(opts.Spec)
	}
	visit := func(rel string, text []byte) {
		texts[filepath.ToSlash(rel)] = text
		if names == nil {
			return
		}
		if d := declaredStructs(text, names); len(d) > 0 {
			declares[filepath.ToSlash(rel)] = d
		}
	}
	all, hash, err := scanHeaders(abs, dir, extra, visit)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, elfread.InputErrorf(esc.String(dir), "no .h files under this directory; name the directory holding the headers (for example /opt/aws/neuron/include)")
	}
	roots, err := headerRoots(abs, all, opts.Include)
	if err != nil {
		return nil, elfread.InputErrorf(esc.String(dir), "%w", err)
	}
	for _, r := range roots {
		if err := includable(r); err != nil {
			return nil, elfread.InputErrorf(esc.String(filepath.Join(dir, r)), "%w", err)
		}
	}
	tmp, err := os.MkdirTemp("", "nrtabi-headers-")
	if err != nil {
		return nil, err
	}
	limit, cancel := context.WithTimeoutCause(ctx, opts.Timeout, errTimeLimit)
	defer cancel()
	h := &Headers{Dir: dir, Hash: hash, Roots: roots, tmp: tmp, Object: filepath.Join(tmp, "headers.o"), opts: opts, limit: limit, abs: abs, declares: declares, texts: texts,
		IncludeDirs: extra, CFlags: opts.CFlags}
	if !opts.NoPrelude {
		h.Prelude = Prelude
	}
	if err := h.writePrelude(); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := h.compile(); err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compiling the headers %s: %w", esc.String(dir), context.Cause(ctx))
		}
		return nil, err
	}
	h.limit = nil
	specmatch.SetLabel(h.Object, h.Source())
	return h, nil
}

// includeDirs are the -I directories, absolute; each must be a directory.
func includeDirs(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err == nil && !st.IsDir() {
			err = errors.New("not a directory")
		}
		if err != nil {
			return nil, elfread.InputErrorf(esc.String(d), "-I %v; fix: name a directory of headers the tree includes", unwrapPath(err))
		}
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, elfread.InputErrorf(esc.String(d), "%w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

func unwrapPath(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
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
			return nil, fmt.Errorf("--include %s: no such header under the directory; %s", inc, includeHint(inc, all))
		}
		roots = append(roots, rel)
	}
	return roots, nil
}

// unitSource is a translation unit that includes the headers, each by a
// name includable let through: no byte of it can end the quoted name or
// the line, so a name is only ever a header name, never source.
func unitSource(roots []string) string {
	var b strings.Builder
	b.WriteString("/* generated by nrtabi: the headers' types, kept in the DWARF */\n")
	for _, r := range roots {
		fmt.Fprintf(&b, "#include \"%s\"\n", r)
	}
	return b.String()
}

// preludeName is the file in the temporary directory that includes
// Prelude; the compiler is given it with -include, before any flag of the
// user's and the headers.
const preludeName = "nrtabi-prelude.h"

// writePrelude writes the prelude file (empty without a prelude).
func (h *Headers) writePrelude() error {
	var b strings.Builder
	for _, p := range h.Prelude {
		fmt.Fprintf(&b, "#include <%s>\n", p)
	}
	return os.WriteFile(filepath.Join(h.tmp, preludeName), []byte(b.String()), 0o644)
}

// compileUnit compiles a unit including roots under the bounds. A run that
// hit a bound is an *InputError naming the header and the bound; one that
// failed otherwise is the *cc.Error.
func (h *Headers) compileUnit(name string, roots []string) (string, error) {
	var track includeTrack
	return h.compileUnitTrack(name, roots, &track)
}

// compileUnitTrack is compileUnit following the headers entered in track.
func (h *Headers) compileUnitTrack(name string, roots []string, track *includeTrack) (string, error) {
	if err := os.WriteFile(filepath.Join(h.tmp, name+".c"), []byte(unitSource(roots)), 0o644); err != nil {
		return "", err
	}
	// The parent is searched last, for headers that include each other as
	// <nrt/nrt.h> when DIR is the nrt directory itself.
	flags := append(append(append([]string{}, headerFlags...), boundFlags(h.opts.IncludeDepth)...), "-I"+h.abs)
	for _, d := range h.opts.IncludeDirs {
		flags = append(flags, "-I"+d)
	}
	flags = append(flags, "-idirafter", filepath.Dir(h.abs))
	flags = append(flags, "-include", filepath.Join(h.tmp, preludeName))
	flags = append(flags, h.opts.CFlags...)
	err := cc.ObjectLimited(h.limit, h.tmp, name+".c", name+".o", h.limits(track), flags...)
	if lerr := h.bounded(err, track, roots); lerr != nil {
		return "", lerr
	}
	return name + ".o", err
}

// limits are the cc.Limits of every compiler run on the headers; the CPU
// limit is a backstop under the wall-clock one.
func (h *Headers) limits(track *includeTrack) cc.Limits {
	return cc.Limits{Memory: h.opts.Memory, CPU: h.opts.Timeout, Output: h.opts.Output, Keep: track.keep}
}

func (h *Headers) compile() error {
	obj, err := h.compileUnit("all", h.Roots)
	if err == nil {
		return os.Rename(filepath.Join(h.tmp, obj), h.Object)
	}
	var ie *elfread.InputError
	if errors.As(err, &ie) {
		return err // a bound was hit: compiling each header again would only hit it again
	}
	if len(h.Roots) == 1 {
		return h.compileError(h.Roots[0], err)
	}
	combined := firstError(err)
	if prev := previousDecl(err); prev != "" {
		combined += "; previously declared at " + prev
	}
	// One unit per header, so that each failure is the header's own: the
	// combined unit's first error can name an innocent header
	// (docs/layoutcheck.md#headers-as-input).
	units, err := h.compileEach()
	if err != nil {
		return err
	}
	var good []unit
	var failed []unit
	entered := map[string]bool{}
	for i, u := range units {
		if u.err != nil {
			// A type another header defines: compiled after it
			// (headers_order.go).
			pre, obj, track, err := h.withPrerequisites(u, fmt.Sprintf("unit%d-after", i))
			var ie *elfread.InputError
			if errors.As(err, &ie) {
				return err
			}
			if err == nil {
				u.obj, u.err, u.pre = obj, nil, pre
				for p := range track.entered {
					if rel, ok := h.rel(p); ok {
						u.entered[filepath.ToSlash(rel)] = true
					}
				}
			}
		}
		if u.err != nil {
			failed = append(failed, u)
			continue
		}
		good = append(good, u)
		for p := range u.entered {
			entered[p] = true
		}
	}
	reordered := false
	for _, u := range good {
		reordered = reordered || len(u.pre) > 0
	}
	if len(failed) > 0 || reordered {
		if len(failed) > 0 {
			if err := h.judgeFailures(failed, entered, len(good)); err != nil {
				return err
			}
		}
		h.Roots = nil
		for _, u := range good {
			h.Roots = append(h.Roots, u.root)
		}
		if len(good) == 1 {
			return os.Rename(filepath.Join(h.tmp, good[0].obj), h.Object)
		}
		// Without the broken headers the rest may compile together, each
		// after the headers it needs first.
		roots := orderedRoots(good)
		if reordered {
			h.Order = roots
		}
		obj, err := h.compileUnit("good", roots)
		if err == nil {
			return os.Rename(filepath.Join(h.tmp, obj), h.Object)
		}
		if errors.As(err, &ie) {
			return err
		}
		combined = firstError(err)
		if prev := previousDecl(err); prev != "" {
			combined += "; previously declared at " + prev
		}
	}
	h.Notes = append(h.Notes, conflictNote(combined, h.abs, h.Dir))
	args := append([]string{"-r", "-nostdlib", "-o", filepath.Base(h.Object)}, objectsOf(good)...)
	var track includeTrack
	err = cc.RunLimited(h.limit, h.tmp, h.limits(&track), args...)
	if lerr := h.bounded(err, &track, nil); lerr != nil {
		return lerr
	}
	if err != nil {
		return elfread.InputErrorf(esc.String(h.Dir), "cannot combine the compiled headers: %s", firstError(err))
	}
	return nil
}

// orderedRoots are the roots of the units, each after the headers it is
// compiled after, each once.
func orderedRoots(us []unit) []string {
	var roots []string
	seen := map[string]bool{}
	for _, u := range us {
		for _, r := range append(append([]string{}, u.pre...), u.root) {
			if !seen[r] {
				seen[r] = true
				roots = append(roots, r)
			}
		}
	}
	return roots
}

// unit is one header compiled on its own.
type unit struct {
	pre     []string // the headers it was compiled after (headers_order.go)
	root    string
	obj     string          // the object, when it compiled
	err     error           // the compiler's failure (*cc.Error), when it did not
	entered map[string]bool // the tree's headers the compiler entered (from -H), relative
}

func objectsOf(us []unit) []string {
	var objs []string
	for _, u := range us {
		objs = append(objs, u.obj)
	}
	return objs
}

// maxParallelUnits is how many compilers run at once on one tree: the
// machines nrtabi runs on are shared, and the wall-clock limit is one
// total for the tree however the units are spread.
const maxParallelUnits = 2

// compileEach compiles every root in its own unit, at most
// maxParallelUnits at a time, in the order of the roots. A bound hit by any
// unit is the error (the first in root order); a header that merely does
// not compile is its unit's err.
func (h *Headers) compileEach() ([]unit, error) {
	units := make([]unit, len(h.Roots))
	lerrs := make([]error, len(h.Roots))
	sem := make(chan struct{}, maxParallelUnits)
	var wg sync.WaitGroup
	for i, r := range h.Roots {
		units[i].root = r
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, r string) {
			defer func() { <-sem; wg.Done() }()
			track := includeTrack{entered: map[string]bool{}}
			obj, err := h.compileUnitTrack(fmt.Sprintf("unit%d", i), []string{r}, &track)
			var ie *elfread.InputError
			if errors.As(err, &ie) {
				lerrs[i] = err
				return
			}
			units[i].obj, units[i].err = obj, err
			units[i].entered = map[string]bool{}
			for p := range track.entered {
				if rel, ok := h.rel(p); ok {
					units[i].entered[filepath.ToSlash(rel)] = true
				}
			}
		}(i, r)
	}
	wg.Wait()
	for _, err := range lerrs {
		if err != nil {
			return nil, err
		}
	}
	return units, nil
}

// judgeFailures decides what the headers that did not compile on their own
// mean. With no spec to say which structs matter (opts.Spec nil), each is an
// error, as is a tree where nothing compiled. Otherwise a header that
// defines a spec struct and was not compiled inside another header's unit is
// an error naming the struct: the check would otherwise go on without that
// struct, a silent fallback. The rest are warnings, kept in h.Warnings: the
// check goes on without them.
func (h *Headers) judgeFailures(failed []unit, entered map[string]bool, good int) error {
	if h.opts.Spec == nil || good == 0 {
		return h.compileError(failed[0].root, failed[0].err)
	}
	for _, u := range failed {
		if names := h.declares[u.root]; len(names) > 0 && !entered[u.root] {
			return elfread.InputErrorf(esc.String(filepath.Join(h.Dir, u.root)), "declares the spec struct %s but does not compile on its own: %s; fix: %s",
				esc.String(names[0]), h.message(u.err), compileFix)
		}
	}
	for _, u := range failed {
		why := "declares no spec struct"
		if entered[u.root] {
			why = "its structs were read where another header includes it"
		}
		w := fmt.Sprintf("%s: does not compile on its own (%s), left out; %s", esc.String(filepath.Join(h.Dir, u.root)), why, h.message(u.err))
		h.Warnings = append(h.Warnings, w)
	}
	return nil
}

// includeTrack follows gcc's -H lines (one dot per level of nesting, then
// the header's path) to know which header the compiler was in when a bound
// stopped it; they are not kept as output. It also notices the include
// depth error.
type includeTrack struct {
	stack   []string        // the headers the compiler is in, outermost first
	entered map[string]bool // if not nil: every header entered, up to maxEntered
	depth   bool            // gcc reported #include nested too deep
	guards  bool            // past -H's closing list of headers without guards
}

// maxTrackDepth bounds the stack: gcc nests no deeper than
// -fmax-include-depth, and a deeper line is not gcc's.
const maxTrackDepth = 1024

// maxEntered bounds the headers one unit is followed into: the tree holds
// at most maxHeaderFiles, and the system headers a few hundred.
const maxEntered = 2 * maxHeaderFiles

func (t *includeTrack) keep(line string) bool {
	n := 0
	for n < len(line) && line[n] == '.' {
		n++
	}
	if n > 0 && n < len(line) && line[n] == ' ' {
		if n <= len(t.stack)+1 && n <= maxTrackDepth {
			t.stack = append(t.stack[:n-1], line[n+1:])
			if t.entered != nil && len(t.entered) < maxEntered {
				t.entered[line[n+1:]] = true
			}
		}
		return false
	}
	if line == "Multiple include guards may be useful for:" {
		t.guards = true
		return false
	}
	if t.guards && !strings.Contains(line, ": ") {
		return false // a header path of that closing list
	}
	if strings.Contains(line, "#include nested depth") {
		t.depth = true
	}
	return true
}

// bounded is the *InputError for a run that hit a bound (time, memory, CPU
// time, output, include depth, a flag the compiler does not know), or nil.
// The header blamed is the root header the compiler was in (from -H), else
// the only root, else the directory; the one it was reading is named too.
func (h *Headers) bounded(err error, track *includeTrack, roots []string) error {
	var ce *cc.Error
	if err == nil || !errors.As(err, &ce) {
		return nil
	}
	blame, in := esc.String(h.Dir), ""
	if len(roots) == 1 {
		blame = esc.String(filepath.Join(h.Dir, roots[0]))
	}
	if len(track.stack) > 0 {
		if r, ok := h.rel(track.stack[0]); ok {
			blame = esc.String(filepath.Join(h.Dir, r))
		}
		last := track.stack[len(track.stack)-1]
		if r, ok := h.rel(last); ok {
			last = filepath.Join(h.Dir, r)
		}
		if last = esc.String(last); last != blame {
			in = " (in " + last + ")"
		}
	}
	fix := "fix: a header that includes a FIFO or a device (/dev/zero), or expands a macro exponentially, cannot be read; remove it, or name the headers to read with --include"
	switch {
	case errors.Is(err, errTimeLimit):
		return elfread.InputErrorf(blame, "the compiler did not finish within the %v time limit for the headers%s; %s", h.opts.Timeout, in, fix)
	case ce.Exceeded == cc.ExceededMemory:
		return elfread.InputErrorf(blame, "the compiler ran out of its %d MiB memory limit%s; %s", h.opts.Memory>>20, in, fix)
	case ce.Exceeded == cc.ExceededCPU:
		return elfread.InputErrorf(blame, "the compiler used up its CPU time limit of %v%s; %s", h.opts.Timeout, in, fix)
	case track.depth:
		return elfread.InputErrorf(blame, "#include nested past the include depth limit of %d (%s); fix: give the headers include guards (#ifndef X_H / #define X_H ... #endif)", h.opts.IncludeDepth, h.message(err))
	case ce.Dropped > 0:
		return elfread.InputErrorf(blame, "the compiler printed %d bytes, past the output limit of %d KiB (first: %s); fix: make the header compile on its own without messages, or name the headers to read with --include", int64(len(ce.Output))+ce.Dropped, h.opts.Output>>10, h.message(err))
	}
	if first := firstError(err); strings.Contains(first, "unrecognized command-line option") || strings.Contains(first, "unknown argument") {
		return elfread.InputErrorf(esc.String(h.Dir), "the C compiler does not accept a flag --headers bounds it with (%s); fix: use gcc 11 or later (set CC)", h.message(err))
	}
	return nil
}

// rel is an absolute path from -H relative to the tree, if it is in it.
func (h *Headers) rel(p string) (string, bool) {
	r, err := filepath.Rel(h.abs, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
		return "", false
	}
	return r, true
}

// maxMessage bounds the compiler's words quoted in an error: one error
// line can quote an identifier megabytes long.
const maxMessage = 300

// message is the compiler's first error, the tree's path dropped, cut at
// maxMessage bytes and escaped.
func (h *Headers) message(err error) string {
	m := strings.ReplaceAll(firstError(err), h.abs+"/", "")
	if len(m) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(m[cut]) {
			cut--
		}
		m = m[:cut] + "..."
	}
	return esc.String(m)
}

func (h *Headers) compileError(header string, err error) error {
	return elfread.InputErrorf(esc.String(filepath.Join(h.Dir, header)), "does not compile: %s; fix: make the header compile on its own: %s; or name the headers to read with --include",
		h.message(err), compileFix)
}

// compileFix is the advice for a header that does not compile, in the
// flags every command reading headers takes (release new, check, show,
// diff).
const compileFix = "if it includes a header the tree does not ship, give that header's directory with -I DIR; if it uses what it does not include, give the header that declares it with --cflags '-include FILE' (FILE under the tree or an -I directory), or a macro with --cflags -DNAME"

var conflicting = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(conflicting types for|redefinition of|redeclaration of|conflicting type qualifiers for) ['‘"]([^'’"]+)['’"]`)
})

// conflictNote says which declaration the combined unit rejected.
func conflictNote(first, abs, dir string) string {
	first = esc.String(strings.ReplaceAll(first, abs, dir))
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
