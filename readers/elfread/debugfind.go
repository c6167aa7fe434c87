package elfread

import (
	"context"
	"debug/elf"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDebugDirs is where distributions install separate debug files.
var DefaultDebugDirs = []string{"/usr/lib/debug"}

// How the DWARF of an input was found.
const (
	ViaEmbedded  = "embedded"
	ViaBuildID   = "build-id"
	ViaDebugLink = "gnu_debuglink"
)

func hasDWARF(o *File) bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := o.File.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			return true
		}
	}
	return false
}

// FindDebug locates the DWARF of obj: in the file itself, else through the
// build-id tree of each debug directory of lk (DIR/.build-id/xx/rest.debug),
// else through .gnu_debuglink (next to the file, in its .debug/
// subdirectory, and under each debug directory), checking the link's CRC,
// else through lk.Fetch by build-id (debuginfod, when the command wired it;
// ctx bounds that wait and nothing else). Then the parts that DWARF refers
// to are attached: a dwz supplementary file and split units (.dwo, .dwp).
// The debug files found are opened and owned by the returned Debug.
func FindDebug(ctx context.Context, obj *File, lk Lookup) (*Debug, error) {
	dbg, err := findMain(ctx, obj, lk)
	if err != nil {
		return nil, err
	}
	if err := attachParts(ctx, dbg, lk); err != nil {
		dbg.Close()
		return nil, err
	}
	return dbg, nil
}

func findMain(ctx context.Context, obj *File, lk Lookup) (*Debug, error) {
	if err := obj.checkDataModel(); err != nil {
		return nil, err
	}
	if hasDWARF(obj) {
		return loadDebug(obj, obj, ViaEmbedded)
	}
	var tried []string
	broken := false // a candidate exists but was refused
	if len(obj.BuildID) > 2 {
		for _, d := range lk.Dirs {
			p := filepath.Join(d, ".build-id", obj.BuildID[:2], obj.BuildID[2:]+".debug")
			dbg, why := tryDebugFile(obj, p, func(c *File) bool { return c.BuildID == "" || c.BuildID == obj.BuildID }, ViaBuildID, "has another build-id")
			if dbg != nil {
				return dbg, nil
			}
			tried, broken = append(tried, candidate(p, why)), broken || why != ""
		}
	}
	if lk.Mem != nil && obj.BuildID != "" {
		cands, err := lk.Mem.oneDWARF(obj)
		if err != nil {
			return nil, err
		}
		for _, e := range cands {
			dbg, why := tryMem(obj, e, func(c *File) bool { return c.BuildID == obj.BuildID }, ViaBuildID, "has another build-id")
			if dbg != nil {
				return dbg, nil
			}
			tried, broken = append(tried, candidate(e.name, why)), broken || why != ""
		}
	}
	refused := ""
	linkCRC := func(c *File) bool { return crc32.ChecksumIEEE(c.data) == obj.debugLinkCRC }
	switch {
	case obj.debugLink == "":
	case !debugLinkName(obj.debugLink):
		refused = fmt.Sprintf("; .gnu_debuglink %q is not a plain file name, so it is not followed", obj.debugLink)
	default:
		// A package's debug files first: given beside the package, they
		// are what the user means (docs/packages.md#debug-packages).
		for _, e := range lk.Mem.named(obj.debugLink) {
			if e.name == obj.Path {
				continue
			}
			dbg, why := tryMem(obj, e, linkCRC, ViaDebugLink, "fails the .gnu_debuglink CRC")
			if dbg != nil {
				return dbg, nil
			}
			tried, broken = append(tried, candidate(e.name, why)), broken || why != ""
		}
		if obj.Path == "" && lk.Mem.Len() == 0 {
			refused = "; .gnu_debuglink is not followed for data that is not a named file"
			break
		}
		if obj.Path == "" || obj.inMemory {
			break // next to nothing on disk: only the debug directories' build-id trees apply
		}
		dir := filepath.Dir(obj.Path)
		abs, _ := filepath.Abs(dir)
		cands := []string{filepath.Join(dir, obj.debugLink), filepath.Join(dir, ".debug", obj.debugLink)}
		for _, d := range lk.Dirs {
			cands = append(cands, filepath.Join(d, abs, obj.debugLink))
		}
		for _, p := range cands {
			if p == obj.Path || sameFile(p, obj.Path) {
				continue
			}
			dbg, why := tryDebugFile(obj, p, linkCRC, ViaDebugLink, "fails the .gnu_debuglink CRC")
			if dbg != nil {
				return dbg, nil
			}
			tried, broken = append(tried, candidate(p, why)), broken || why != ""
		}
	}
	if lk.Mem.Len() > 0 && !broken {
		tried = append(tried, fmt.Sprintf("the %d ELF members of the packages given (none with build-id %q or named %q)", lk.Mem.Len(), obj.BuildID, obj.debugLink))
	}
	if lk.Fetch != nil && obj.BuildID != "" {
		p, err := lk.Fetch(ctx, obj.BuildID)
		if err := interrupted(ctx, err, obj.Path, "its debug file", obj.BuildID); err != nil {
			return nil, err
		}
		if err == nil {
			dbg, why := tryDebugFile(obj, p, func(c *File) bool { return c.BuildID == obj.BuildID }, ViaDebuginfod, "has another build-id")
			if dbg != nil {
				return dbg, nil
			}
			err = fmt.Errorf("%s: %s", p, why)
		}
		tried = append(tried, "debuginfod ("+err.Error()+")")
	}
	why := "the file has no .debug_info"
	switch {
	case obj.BuildID == "" && obj.debugLink == "":
		why += ", no build-id and no .gnu_debuglink"
	case len(tried) > 0:
		why += "; no matching separate debug file at " + strings.Join(tried, ", ")
	}
	why += refused
	err := InputErrorf(obj.Path, "no DWARF anywhere (%s); rebuild with -g, install the debug package, give it beside the package, or pass --debug-dir", why)
	if !broken {
		err.(*InputError).Err = ErrNoDWARF
	}
	return nil, err
}

// interrupted is the error of a debuginfod fetch the context ended: an
// interrupt, not a missing file. Were it ErrNoDWARF or a missing part,
// --allow-missing-debug and release's symbols-only read
// (docs/nrtabi-check.md) would pass a file whose debug file or supplement
// was never looked for to the end. nil when the fetch did not fail so.
func interrupted(ctx context.Context, fetchErr error, path, what, buildID string) error {
	if fetchErr == nil || ctx.Err() == nil {
		return nil
	}
	return InputErrorf(path, "stopped while fetching %s (build-id %s) from debuginfod: %w", what, buildID, ctx.Err())
}

// candidate names a debug file tried, with why it was refused when it exists.
func candidate(path, why string) string {
	if why == "" {
		return path
	}
	return path + " (" + why + ")"
}

// debugLinkName reports whether a .gnu_debuglink value is a plain file
// name: the link is resolved only inside the documented directories, so a
// name with a separator (../../etc/x) is never followed.
func debugLinkName(n string) bool {
	return n != "." && n != ".." && !strings.ContainsAny(n, "/\\\x00")
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// tryDebugFile opens a candidate debug file; it is used when it has DWARF and
// passes match. A candidate that exists but is refused says why (unreadable,
// no DWARF, not the input's, corrupted sections), so the final error names a
// broken debug file instead of only the path tried.
func tryDebugFile(obj *File, path string, match func(*File) bool, via, mismatch string) (*Debug, string) {
	if _, err := os.Stat(path); err != nil {
		return nil, ""
	}
	c, err := Open(path)
	if err != nil {
		return nil, errMsg(err)
	}
	return acceptDebug(obj, c, match, via, mismatch)
}

// acceptDebug takes an open candidate c as obj's DWARF when it has DWARF
// and passes match; else it is closed and the reason returned, for the
// error that names the candidates tried. The Debug owns c.
func acceptDebug(obj, c *File, match func(*File) bool, via, mismatch string) (*Debug, string) {
	why := ""
	switch {
	case !hasDWARF(c):
		why = "has no .debug_info"
	case !match(c):
		why = mismatch
	}
	if why != "" {
		c.Close()
		return nil, why
	}
	dbg, err := loadDebug(obj, c, via)
	if err != nil {
		c.Close()
		return nil, errMsg(err)
	}
	dbg.owned = c
	return dbg, ""
}

// OpenDebug opens the file at path and finds its DWARF, for the commands
// that read one file's types. The Debug owns the file (its Input): Close
// releases both.
func OpenDebug(ctx context.Context, path string, lk Lookup) (*Debug, error) {
	obj, err := Open(path)
	if err != nil {
		return nil, err
	}
	dbg, err := FindDebug(ctx, obj, lk)
	if err != nil {
		obj.Close()
		return nil, err
	}
	dbg.ownsInput = true
	return dbg, nil
}

// OpenDebugFile is OpenDebug of a File already open (a package member read
// in memory, NewMemFile): the Debug owns it, and Close releases both; on
// error obj is closed.
func OpenDebugFile(ctx context.Context, obj *File, lk Lookup) (*Debug, error) {
	dbg, err := FindDebug(ctx, obj, lk)
	if err != nil {
		obj.Close()
		return nil, err
	}
	dbg.ownsInput = true
	return dbg, nil
}
