package elfread

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/fixture"
)

// splitObject builds a small shared object with -g and a build-id and
// splits it as fixture.SplitDebug does: the stripped library, the debug
// directory (its build-id tree) and the debug file in it.
func splitObject(t *testing.T) (stripped, debugDir, debug string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := writeFile(dir, "s.c", "struct s { int a; long b; } s;\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(dir, "libs.so", "libs.so", "", []string{"s.c"}, "-Wl,--build-id"); err != nil {
		t.Fatal(err)
	}
	stripped, debugDir, debug, err := fixture.SplitDebug(filepath.Join(dir, "libs.so"), filepath.Join(dir, "split"))
	if errors.Is(err, fixture.ErrNoObjcopy) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return stripped, debugDir, debug
}

// splitLib builds a small shared object with -g and splits it: the
// stripped library's bytes and its debug file's, as a package would carry
// them; link adds a .gnu_debuglink to the stripped copy.
func splitLib(t *testing.T, link bool) (lib, debug []byte) {
	t.Helper()
	stripped, _, dfile := splitObject(t)
	var err error
	if link {
		named := filepath.Join(t.TempDir(), "libs.so.debug")
		if err := os.Rename(dfile, named); err != nil {
			t.Fatal(err)
		}
		dfile = named
		if out, err := exec.Command("objcopy", "--add-gnu-debuglink="+named, stripped).CombinedOutput(); err != nil {
			t.Fatalf("objcopy: %v\n%s", err, out)
		}
	}
	if lib, err = os.ReadFile(stripped); err != nil {
		t.Fatal(err)
	}
	if debug, err = os.ReadFile(dfile); err != nil {
		t.Fatal(err)
	}
	return lib, debug
}

// TestMemDebugByBuildID: a debug file held in memory (a -dbgsym package's
// member) answers a stripped in-memory library's lookup by build-id, named
// by its member name; without it, or with a debug file of another build,
// the lookup fails naming what it tried.
func TestMemDebugByBuildID(t *testing.T) {
	lib, debug := splitLib(t, false)
	find := func(md *MemDebug) (*Debug, error) {
		o, err := NewMemFile("p.deb!/usr/lib/libs.so", lib)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		return FindDebug(context.Background(), o, Lookup{Mem: md})
	}
	var md MemDebug
	md.Add("p-dbgsym.deb!/usr/lib/debug/.build-id/xx/yy.debug", debug)
	dbg, err := find(&md)
	if err != nil {
		t.Fatal(err)
	}
	if dbg.Via != ViaBuildID || dbg.Path() != "p-dbgsym.deb!/usr/lib/debug/.build-id/xx/yy.debug" {
		t.Errorf("found via %q at %q; want build-id at the dbgsym member", dbg.Via, dbg.Path())
	}
	if f, err := dbg.FindStructs([][]string{{"s"}}); err != nil || f[0] == nil {
		t.Errorf("struct s not found in the paired member: %v", err)
	}
	dbg.Close()

	// The package's own members are indexed too: the stripped library
	// finding itself is no candidate, and no DWARF is still ErrNoDWARF
	// (release new goes on from symbols then).
	var self MemDebug
	self.Add("p.deb!/usr/lib/libs.so", lib)
	if _, err := find(&self); !errors.Is(err, ErrNoDWARF) {
		t.Errorf("only the library itself: want ErrNoDWARF, got %v", err)
	}
	if _, err := find(nil); !errors.Is(err, ErrNoDWARF) || !strings.Contains(err.Error(), "p.deb!/usr/lib/libs.so") {
		t.Errorf("no debug package: want ErrNoDWARF naming the member, got %v", err)
	}
	// A member with the build-id but no DWARF (the stripped library in
	// the wrong package) is named with why it was refused.
	var stripped MemDebug
	stripped.Add("p-dbgsym.deb!/usr/lib/debug/.build-id/xx/yy.debug", lib)
	if _, err := find(&stripped); err == nil || !strings.Contains(err.Error(), "p-dbgsym.deb!/usr/lib/debug/.build-id/xx/yy.debug (has no .debug_info)") {
		t.Errorf("a member without DWARF: want it named with why, got %v", err)
	}
	// A debug package of another build: nothing pairs, the packages tried
	// are said.
	o, err := NewMemFile("p.deb!/usr/lib/libs.so", lib)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.BuildID = "00ff00ff"
	if _, err := FindDebug(context.Background(), o, Lookup{Mem: &md}); !errors.Is(err, ErrNoDWARF) || !strings.Contains(err.Error(), "the 1 ELF members of the packages given") {
		t.Errorf("a debug package of another build: want ErrNoDWARF naming the packages tried, got %v", err)
	}
}

// TestMemDebugByDebugLink: a stripped library without a build-id lookup
// match finds its debug file by .gnu_debuglink name among the members, CRC
// checked; a member of that name with other bytes fails the CRC by name.
func TestMemDebugByDebugLink(t *testing.T) {
	lib, debug := splitLib(t, true)
	o, err := NewMemFile("p.rpm!/usr/lib/libs.so", lib)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.BuildID = "" // the build-id path is tried first; take it away
	var md MemDebug
	md.Add("p-debuginfo.rpm!/usr/lib/debug/usr/lib/libs.so.debug", debug)
	dbg, err := FindDebug(context.Background(), o, Lookup{Mem: &md})
	if err != nil {
		t.Fatal(err)
	}
	if dbg.Via != ViaDebugLink {
		t.Errorf("via %q, want %s", dbg.Via, ViaDebugLink)
	}
	dbg.Close()
	bad := append([]byte(nil), debug...)
	bad[len(bad)-1] ^= 0xff
	var md2 MemDebug
	md2.Add("q.rpm!/usr/lib/debug/libs.so.debug", bad)
	if _, err := FindDebug(context.Background(), o, Lookup{Mem: &md2}); err == nil || !strings.Contains(err.Error(), "q.rpm!/usr/lib/debug/libs.so.debug (fails the .gnu_debuglink CRC)") {
		t.Errorf("a member failing the CRC: want it named, got %v", err)
	}
}

// TestMemFileLooksNowhereOnDisk: an in-memory member's debuglink is never
// resolved against the file system, even where a directory of the
// member's display name exists.
func TestMemFileLooksNowhereOnDisk(t *testing.T) {
	lib, debug := splitLib(t, true)
	dir := t.TempDir()
	disk := filepath.Join(dir, "p.deb!", "usr", "lib")
	if err := os.MkdirAll(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(disk, "libs.so.debug"), debug, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := NewMemFile(filepath.Join(dir, "p.deb!", "usr", "lib", "libs.so"), lib)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if dbg, err := FindDebug(context.Background(), o, Lookup{}); err == nil {
		dbg.Close()
		t.Fatalf("the in-memory member found %s on disk", dbg.Path())
	}
}
