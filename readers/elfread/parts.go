package elfread

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// How a part of the DWARF was found, besides ViaEmbedded, ViaBuildID and
// ViaDebugLink.
const (
	ViaSupplement = "supplementary" // a dwz -m file named by .gnu_debugaltlink or .debug_sup
	ViaDWO        = "dwo"           // a split unit's .dwo file
	ViaDWP        = "dwp"           // a split unit in a .dwp package
	ViaDebuginfod = "debuginfod"    // downloaded from a debuginfod server
)

// Lookup says where debug info is looked for.
type Lookup struct {
	Dirs []string // separate debug file directories (build-id tree, debuglink, .dwz/)
	// AllowMissing: a supplementary file or .dwo that cannot be found is
	// recorded in Debug.Missing instead of failing; the structs it holds
	// are then absent.
	AllowMissing bool
	// Fetch, when set, is the last place a debug file is looked for: by
	// build-id, from a server (the commands wire debuginfod to it,
	// internal/cli's Debuginfod). nil: nothing is downloaded, and the
	// reader links no network code.
	Fetch Fetcher
	// Mem holds debug files read in memory from packages
	// (docs/packages.md#debug-packages); nil: none.
	Mem *MemDebug
}

// Fetcher gets the debug file with this build-id and returns the local
// path it is at; ctx bounds the wait (an interrupt ends it). What it
// returns is opened and checked against the build-id like any candidate.
type Fetcher func(ctx context.Context, buildID string) (path string, err error)

// VerifyBuildID is debuginfod's check of a downloaded file: an ELF file
// that carries want as its build-id.
func VerifyBuildID(path, want string) error {
	o, err := Open(path)
	if err != nil {
		return fmt.Errorf("%s", errMsg(err))
	}
	defer o.Close()
	if o.BuildID != want {
		return fmt.Errorf("what arrived has build-id %q, not %s", o.BuildID, want)
	}
	return nil
}

// Part is one file the DWARF of an input was read from.
type Part struct {
	Path string
	Via  string
}

// Parts lists every file the DWARF was read from, the main one first, each
// once (a .dwp holding many units is one part).
func (d *Debug) Parts() []Part {
	out := []Part{{d.Path(), d.Via}}
	seen := map[Part]bool{out[0]: true}
	for _, p := range d.parts {
		if pt := (Part{p.Path(), p.Via}); !seen[pt] {
			seen[pt] = true
			out = append(out, pt)
		}
	}
	return out
}

// maxCombined bounds the sum of the .debug_info sizes of every part: struct
// offsets are dwarf.Offset (32 bits) in one space spanning the parts.
const maxCombined = 1<<32 - 1

// addPart appends a part in the combined offset space.
func (d *Debug) addPart(p *Debug) error {
	next := len(d.info)
	if n := len(d.parts); n > 0 {
		last := d.parts[n-1]
		next = last.base + len(last.info)
	}
	if uint64(next)+uint64(len(p.info)) > maxCombined {
		return InputErrorf(p.Path(), "the DWARF of %s and its parts exceed %d bytes of .debug_info together", d.Path(), uint64(maxCombined))
	}
	p.base = next
	d.parts = append(d.parts, p)
	return nil
}

// all is the main Debug and its parts, in lookup order.
func (d *Debug) all() []*Debug {
	return append([]*Debug{d}, d.parts...)
}

// attachParts resolves what the DWARF of d refers to outside itself: its
// supplementary file, and the .dwo units of its skeletons.
func attachParts(ctx context.Context, d *Debug, lk Lookup) error {
	link, err := d.File.supLink()
	if err != nil {
		return err
	}
	if link != nil {
		sup, err := findSupplement(ctx, d, *link, lk)
		if err != nil {
			return err
		}
		if sup != nil {
			d.alt = sup
			if err := d.addPart(sup); err != nil {
				return err
			}
		}
	}
	if err := attachTypes(d); err != nil {
		return err
	}
	return attachSplitUnits(d, lk)
}

// missing fails with what was needed and where it was looked for, or, with
// AllowMissing, records it.
func (d *Debug) missing(lk Lookup, what string, tried []string) error {
	msg := fmt.Sprintf("needs %s, not found at %s", what, strings.Join(tried, ", "))
	if lk.AllowMissing {
		d.Missing = append(d.Missing, oneLine.Replace(msg))
		return nil
	}
	return InputErrorf(d.Path(), "%s; install or copy it there, add --debug-dir, set DEBUGINFOD_URLS, or pass --allow-missing-debug to check without it", msg)
}

// findSupplement opens the supplementary file a dwz'd file names: the path
// as given (relative to the file's directory), next to the file, under each
// debug directory's .dwz/, by build-id under each debug directory, and
// through lk.Fetch (debuginfod), which ctx bounds. The file must carry the
// build-id the link records.
func findSupplement(ctx context.Context, d *Debug, l supRef, lk Lookup) (*Debug, error) {
	dir := filepath.Dir(d.Path())
	var cands candidates
	add := cands.add
	if filepath.IsAbs(l.Path) {
		add(filepath.Clean(l.Path))
		// Debian names the supplement by its installed path
		// (/usr/lib/debug/.dwz/<triplet>/NAME); an extracted package or
		// a --debug-dir holds it at the same place under the directory,
		// as gdb looks for it under its debug-file-directory.
		if rel, ok := underDebugDir(l.Path, lk.Dirs); ok {
			for _, root := range debugRoots(d, lk.Dirs) {
				add(filepath.Join(root, rel))
			}
		}
	} else if d.Path() != "" && !d.File.inMemory { // "": a File from NewFile is next to nothing
		add(filepath.Join(dir, l.Path))
		// A debug file reached through a build-id symlink: the link is
		// relative to where the file really is (../../.dwz/NAME).
		if real, err := filepath.EvalSymlinks(d.Path()); err == nil && filepath.Dir(real) != dir {
			add(filepath.Join(filepath.Dir(real), l.Path))
		}
	}
	base := filepath.Base(l.Path)
	if base != "." && base != ".." && base != "/" {
		if d.Path() != "" && !d.File.inMemory {
			add(filepath.Join(dir, base))
		}
		if in := filepath.Dir(d.Input.Path); d.Input.Path != "" && !d.Input.inMemory && in != dir {
			add(filepath.Join(in, base))
		}
		for _, dd := range lk.Dirs {
			add(filepath.Join(dd, ".dwz", base))
		}
	}
	if len(l.BuildID) > 2 {
		for _, dd := range lk.Dirs {
			add(filepath.Join(dd, ".build-id", l.BuildID[:2], l.BuildID[2:]+".debug"))
		}
	}
	seen := map[string]bool{}
	// .gnu_debugaltlink records the supplement's build-id; .debug_sup the
	// checksum the supplement's own .debug_sup carries (dwz --dwarf-5
	// writes no build-id note there).
	match := func(c *File) bool { return c.BuildID == l.BuildID || c.supChecksum() == l.BuildID }
	what := "build-id"
	if l.Section == ".debug_sup" {
		what = "checksum"
	}
	mismatch := "has another " + what + " than " + l.Section + " records (" + l.BuildID + ")"
	// A package's members first (docs/packages.md#debug-packages): a
	// dwz'd debug package ships its supplement under /usr/lib/debug/.dwz.
	var tried []string
	for _, e := range append(lk.Mem.withID(l.BuildID), lk.Mem.named(base)...) {
		if e.name == d.Path() {
			continue
		}
		data, err := e.bytes()
		if err != nil {
			tried = append(tried, candidate(e.name, errMsg(err)))
			continue
		}
		c, err := NewMemFile(e.name, data)
		if err != nil {
			tried = append(tried, candidate(e.name, errMsg(err)))
			continue
		}
		sup, why := usePart(d.Input, c, match, ViaSupplement, mismatch, "")
		if sup != nil {
			return sup, nil
		}
		tried = append(tried, candidate(e.name, why))
	}
	for _, p := range cands.paths {
		if p == d.Path() || sameFile(p, d.Path()) {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if seen[abs] {
				continue
			}
			seen[abs] = true
		}
		sup, why := tryPart(d.Input, p, match, ViaSupplement, mismatch, "")
		if sup != nil {
			return sup, nil
		}
		tried = append(tried, candidate(p, why))
	}
	if lk.Fetch != nil {
		p, err := lk.Fetch(ctx, l.BuildID)
		if err := interrupted(ctx, err, d.Path(), "the supplementary DWARF file "+l.Path, l.BuildID); err != nil {
			return nil, err
		}
		if err == nil {
			sup, why := tryPart(d.Input, p, match, ViaSupplement, mismatch, "")
			if sup != nil {
				sup.Via = ViaSupplement + " via " + ViaDebuginfod
				return sup, nil
			}
			err = fmt.Errorf("%s: %s", p, why)
		}
		tried = append(tried, "debuginfod ("+err.Error()+")")
	}
	need := fmt.Sprintf("the supplementary DWARF file %s (%s %s, named by %s)", l.Path, what, l.BuildID, l.Section)
	if err := d.missing(lk, need, tried); err != nil {
		return nil, err
	}
	d.altMissing = oneLine.Replace(need)
	return nil, nil
}

// tryPart opens a candidate file for a part; like tryDebugFile, a file that
// exists and is refused says why.
func tryPart(input *File, path string, match func(*File) bool, via, mismatch, suffix string) (*Debug, string) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		if err == nil {
			return nil, "not a regular file"
		}
		return nil, ""
	}
	c, err := Open(path)
	if err != nil {
		return nil, errMsg(err)
	}
	return usePart(input, c, match, via, mismatch, suffix)
}

// usePart makes an open candidate file a part of input's DWARF, or closes
// it and says why not.
func usePart(input, c *File, match func(*File) bool, via, mismatch, suffix string) (*Debug, string) {
	why := ""
	switch {
	case !c.hasSection(".debug_info" + suffix):
		why = "has no .debug_info" + suffix
	case !match(c):
		why = mismatch
	}
	if why != "" {
		c.Close()
		return nil, why
	}
	p, err := loadDebugSuffix(input, c, via, suffix)
	if err != nil {
		c.Close()
		return nil, errMsg(err)
	}
	p.owned = c
	return p, ""
}

// errMsg is what went wrong with a candidate part, without its path (the
// caller names it). It is text on purpose: the final error is about the
// input, and a refused candidate's own cause (its ErrNoDWARF, say) must not
// read as the input's.
func errMsg(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	return err.Error()
}

// hasSection reports whether the file has a non-empty section of that name
// (or its .zdebug_ form).
func (o *File) hasSection(name string) bool {
	names := []string{name}
	if strings.HasPrefix(name, ".debug_") {
		names = append(names, ".zdebug_"+name[len(".debug_"):])
	}
	for _, n := range names {
		if s := o.File.Section(n); s != nil && s.Size > 0 && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}

// candidates are the paths a debug file may be at, in the order to try
// them, each once.
type candidates struct{ paths []string }

func (c *candidates) add(p string) {
	for _, q := range c.paths {
		if q == p {
			return
		}
	}
	c.paths = append(c.paths, p)
}

// underDebugDir is an absolute path made relative to the debug directory
// (a default one or one of dirs) it lies under: ".dwz/x86_64-linux-gnu/NAME"
// of /usr/lib/debug/.dwz/x86_64-linux-gnu/NAME.
func underDebugDir(path string, dirs []string) (string, bool) {
	path = filepath.Clean(path)
	for _, dd := range append(append([]string(nil), DefaultDebugDirs...), dirs...) {
		if !filepath.IsAbs(dd) {
			continue
		}
		if rel, err := filepath.Rel(filepath.Clean(dd), path); err == nil && rel != "." && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}

// debugRoots are the directories an installed debug path is looked up
// under: every debug directory, and the root of the build-id tree d was
// found in (ROOT of ROOT/.build-id/xx/yyyy.debug, through a symlink too).
func debugRoots(d *Debug, dirs []string) []string {
	roots := append([]string(nil), dirs...)
	if d.Path() == "" || d.File.inMemory {
		return roots
	}
	paths := []string{d.Path()}
	if real, err := filepath.EvalSymlinks(d.Path()); err == nil && real != d.Path() {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if idDir := filepath.Dir(filepath.Dir(p)); filepath.Base(idDir) == ".build-id" {
			roots = append(roots, filepath.Dir(idDir))
		}
	}
	return roots
}
