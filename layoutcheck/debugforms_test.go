package layoutcheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/debuginfod"
	"github.com/nrtabi/nrtabi/readers/elfread"
)

// The debug info forms distributions ship: dwz supplementary files
// (dwz -m) and split DWARF (-gsplit-dwarf, .dwo and .dwp). Every fixture is
// built here by gcc, dwz and dwp from the generated header, so the spec's
// structs are planted in it; each must be found and checked, and a missing
// file must fail the run naming it.

func needTool(t *testing.T, tool, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("skipping: %s not found (install the Debian package %s): %v", tool, pkg, err)
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// typesLib links dir/name from a source that includes the header in incDir
// (every struct kept) and defines fn, compiled with the extra flags.
func typesLib(t *testing.T, incDir, dir, name, fn string, flags ...string) string {
	t.Helper()
	return typesLibOf(t, gen.HeaderName, incDir, dir, name, fn, flags...)
}

// typesLibOf is typesLib including another header of incDir.
func typesLibOf(t *testing.T, header, incDir, dir, name, fn string, flags ...string) string {
	t.Helper()
	src := strings.TrimSuffix(name, ".so") + ".c"
	if err := writeFile(dir, src, "#define _GNU_SOURCE\n#include \""+header+"\"\nint "+fn+"(void) { return 1; }\n"); err != nil {
		t.Fatal(err)
	}
	obj := strings.TrimSuffix(name, ".so") + ".o"
	args := append([]string{"-c", "-fPIC", "-g", "-fno-eliminate-unused-debug-types", "-I" + incDir}, flags...)
	if err := cc.Run(dir, append(args, "-o", obj, src)...); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-shared", "-Wl,--build-id", "-o", name, obj); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// dwzPair builds liba.so and libb.so sharing the header's types and moves
// the shared types into dir/common.debug (dwz needs two files for -m).
func dwzPair(t *testing.T, incDir string, dwzFlags ...string) (dir, liba, common string) {
	t.Helper()
	needTool(t, "dwz", "dwz")
	dir = t.TempDir()
	liba = typesLib(t, incDir, dir, "liba.so", "a_fn")
	typesLib(t, incDir, dir, "libb.so", "b_fn")
	common = filepath.Join(dir, "common.debug")
	run(t, dir, "dwz", append(dwzFlags, "-m", "common.debug", "-M", common, "liba.so", "libb.so")...)
	return dir, liba, common
}

// TestDWZSupplementDWARF5: dwz --dwarf-5 links with .debug_sup (the
// supplement's checksum, no build-id note in it) and refers with
// DW_FORM_ref_sup4 and DW_FORM_strp_sup.
func TestDWZSupplementDWARF5(t *testing.T) {
	f := loadFixtures(t)
	_, liba, common := dwzPair(t, f.dir, "--dwarf-5")
	o, err := elfread.Open(liba)
	if err != nil {
		t.Fatal(err)
	}
	hasSup := o.File.Section(".debug_sup") != nil
	o.Close()
	if !hasSup {
		t.Fatalf("dwz --dwarf-5 left no .debug_sup in %s", liba)
	}
	r := runCheck(t, f, Options{}, liba)
	assertAllChecked(t, f, r, common, elfread.ViaSupplement)
	if err := os.Remove(common); err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), []string{liba}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "named by .debug_sup") || !strings.Contains(err.Error(), common) {
		t.Fatalf("missing DWARF 5 supplement: %v", err)
	}
}

// assertAllChecked: every spec struct found, checked and clean, from the
// expected kind of part.
func assertAllChecked(t *testing.T, f *fixtures, r *Report, file, via string) {
	t.Helper()
	fr := r.Files[0]
	if r.Exit != 0 || len(r.Absent) != 0 || len(fr.Structs) != len(f.sp.Structs) || r.StructsChecked != len(f.sp.Structs) {
		t.Fatalf("exit %d, %d of %d structs checked, absent %v; verdict %s", r.Exit, r.StructsChecked, len(f.sp.Structs), r.Absent, r.Verdict)
	}
	for _, s := range fr.Structs {
		if s.DWARFVia != via || s.DWARFFile != file {
			t.Fatalf("%s read from %s via %s; want %s via %s", s.Name, s.DWARFFile, s.DWARFVia, file, via)
		}
	}
	if !strings.HasPrefix(r.Verdict, "CLEAN: all ") {
		t.Fatalf("verdict %q", r.Verdict)
	}
}

func TestDWZSupplement(t *testing.T) {
	f := loadFixtures(t)
	dir, liba, common := dwzPair(t, f.dir)
	o, err := elfread.Open(liba)
	if err != nil {
		t.Fatal(err)
	}
	hasAlt := o.File.Section(".gnu_debugaltlink") != nil || o.File.Section(".debug_sup") != nil
	o.Close()
	if !hasAlt {
		t.Fatalf("dwz left no .gnu_debugaltlink in %s", liba)
	}
	r := runCheck(t, f, Options{}, liba)
	assertAllChecked(t, f, r, common, elfread.ViaSupplement)
	if p := r.Files[0].DWARFParts; len(p) != 1 || p[0].File != common || p[0].Via != elfread.ViaSupplement {
		t.Fatalf("parts %+v", p)
	}

	// The supplement moved under a debug directory's .dwz/, then into its
	// build-id tree: both are found.
	debugDir := t.TempDir()
	sup, err := elfread.Open(common)
	if err != nil {
		t.Fatal(err)
	}
	id := sup.BuildID
	sup.Close()
	if len(id) < 4 {
		t.Fatalf("dwz wrote no build-id into %s", common)
	}
	dwzDir := filepath.Join(debugDir, ".dwz")
	byID := filepath.Join(debugDir, ".build-id", id[:2], id[2:]+".debug")
	for _, d := range []string{dwzDir, filepath.Dir(byID)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	moved := filepath.Join(dwzDir, "common.debug")
	if err := os.Rename(common, moved); err != nil {
		t.Fatal(err)
	}
	r = runCheck(t, f, Options{DebugDirs: []string{debugDir}}, liba)
	assertAllChecked(t, f, r, moved, elfread.ViaSupplement)
	if err := os.Rename(moved, byID); err != nil {
		t.Fatal(err)
	}
	r = runCheck(t, f, Options{DebugDirs: []string{debugDir}}, liba)
	assertAllChecked(t, f, r, byID, elfread.ViaSupplement)

	// Missing: exit 1 (an input error) naming the file and every place.
	if err := os.Remove(byID); err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), []string{liba}, Options{Spec: f.sp, DebugDirs: []string{debugDir}})
	var ie *elfread.InputError
	if !asInput(err, &ie) {
		t.Fatalf("missing supplement: want an input error, got %v", err)
	}
	for _, want := range []string{"supplementary DWARF file " + common, common, filepath.Join(dwzDir, "common.debug"), byID, "--allow-missing-debug"} {
		if !strings.Contains(ie.Error(), want) {
			t.Fatalf("missing supplement: the error does not name %s:\n%v", want, ie)
		}
	}
	if strings.Contains(ie.Error(), "\n") {
		t.Fatalf("error is not one line: %q", ie)
	}
	t.Logf("missing supplement: %v", ie)

	// A file with another build-id where the supplement should be is refused.
	if err := os.WriteFile(common, mustRead(t, filepath.Join(dir, "libb.so")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), []string{liba}, Options{Spec: f.sp, DebugDirs: []string{debugDir}})
	if err == nil || !strings.Contains(err.Error(), common+" (has another build-id") {
		t.Fatalf("a supplement with another build-id must be refused by name; got %v", err)
	}

	// Opting out: the run goes on, and the verdict says what was not read
	// and never that every struct was found. Every struct is in the
	// supplement, so the run reads none: --allow-empty accepts that too.
	r = runCheck(t, f, Options{DebugDirs: []string{debugDir}, AllowMissingDebug: true, AllowEmpty: true}, liba)
	if len(r.Files[0].DWARFMissing) != 1 || !strings.Contains(r.Files[0].DWARFMissing[0], common) {
		t.Fatalf("missing parts %v", r.Files[0].DWARFMissing)
	}
	if r.Exit != 0 || strings.Contains(r.Verdict, "all ") || !strings.Contains(r.Verdict, "not read (--allow-missing-debug)") || !strings.Contains(r.Verdict, "0 of ") {
		t.Fatalf("verdict with the supplement skipped: %q (exit %d)", r.Verdict, r.Exit)
	}
}

// TestDWZSupplementFault: a layout fault planted in the types dwz moved is
// caught, so the structs are compared and not only found.
func TestDWZSupplementFault(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "dwz-shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	_, liba, common := dwzPair(t, filepath.Dir(obj))
	r := runCheck(t, f, Options{}, liba)
	expect(t, r, KindSize, Incompatible, "nrt_instance_info_t: size 28 B, spec 32 B (struct shrunk)")
	for _, s := range r.Files[0].Structs {
		if s.Name == "nrt_instance_info_t" && s.DWARFFile != common {
			t.Fatalf("the faulty struct was read from %s, not the supplement", s.DWARFFile)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func asInput(err error, ie **elfread.InputError) bool {
	e, ok := err.(*elfread.InputError)
	if ok {
		*ie = e
	}
	return ok
}

// splitLib builds dir/liba.so with -gsplit-dwarf at a DWARF version: the
// skeleton in the .so, the types in dir/liba.dwo.
func splitLib(t *testing.T, f *fixtures, version string) (dir, lib, dwo string) {
	t.Helper()
	dir = t.TempDir()
	lib = typesLib(t, f.dir, dir, "liba.so", "a_fn", "-gsplit-dwarf", "-gdwarf-"+version)
	dwo = filepath.Join(dir, "liba.dwo")
	if _, err := os.Stat(dwo); err != nil {
		t.Fatalf("gcc -gsplit-dwarf wrote no %s: %v", dwo, err)
	}
	return dir, lib, dwo
}

func TestSplitDWARF(t *testing.T) {
	f := loadFixtures(t)
	for _, version := range []string{"5", "4"} {
		t.Run("dwarf"+version, func(t *testing.T) {
			dir, lib, dwo := splitLib(t, f, version)
			r := runCheck(t, f, Options{}, lib)
			assertAllChecked(t, f, r, dwo, elfread.ViaDWO)

			// Moved away from its comp_dir, next to the binary: still found.
			away := t.TempDir()
			lib2 := filepath.Join(away, "liba.so")
			if err := os.WriteFile(lib2, mustRead(t, lib), 0o755); err != nil {
				t.Fatal(err)
			}
			moved := filepath.Join(away, "liba.dwo")
			if err := os.Rename(dwo, moved); err != nil {
				t.Fatal(err)
			}
			r = runCheck(t, f, Options{}, lib2)
			assertAllChecked(t, f, r, moved, elfread.ViaDWO)

			// A .dwo of another unit (another dwo id) is refused.
			other, _, otherDwo := splitLib(t, f, version)
			_ = other
			if err := os.WriteFile(moved, mustRead(t, otherDwo), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Check(context.Background(), []string{lib2}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
			if err == nil || !strings.Contains(err.Error(), moved+" (has dwo id") {
				t.Fatalf("a .dwo with another id must be refused by name; got %v", err)
			}

			// Missing: exit 1 naming the .dwo and where it looked.
			if err := os.Remove(moved); err != nil {
				t.Fatal(err)
			}
			_, err = Check(context.Background(), []string{lib2}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
			var ie *elfread.InputError
			if !asInput(err, &ie) {
				t.Fatalf("missing .dwo: want an input error, got %v", err)
			}
			for _, want := range []string{"split DWARF file liba.dwo", filepath.Join(dir, "liba.dwo"), moved, lib2 + ".dwp"} {
				if !strings.Contains(ie.Error(), want) {
					t.Fatalf("missing .dwo: the error does not name %s:\n%v", want, ie)
				}
			}
			t.Logf("missing .dwo: %v", ie)
			r = runCheck(t, f, Options{AllowMissingDebug: true, AllowEmpty: true}, lib2)
			if r.StructsChecked != 0 || strings.Contains(r.Verdict, "all ") || !strings.Contains(r.Verdict, "not read") {
				t.Fatalf("with the .dwo skipped: %d structs, verdict %q", r.StructsChecked, r.Verdict)
			}
		})
	}
}

// TestSplitDWARFPackage: the .dwo files packed into <file>.dwp (GNU dwp
// for DWARF 4, llvm-dwp for DWARF 5: binutils 2.40's dwp crashes on DWARF
// 5). llvm-dwp 14 never returns on a unit of the generated header alone,
// and packs the slot header's unit (which includes it); that one is used.
func TestSplitDWARFPackage(t *testing.T) {
	f := loadFixtures(t)
	gdir, err := filepath.Abs(genDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ version, tool, pkg string }{{"4", "dwp", "binutils"}, {"5", "llvm-dwp", "llvm"}} {
		t.Run("dwarf"+c.version, func(t *testing.T) {
			needTool(t, c.tool, c.pkg)
			dir := t.TempDir()
			typesLibOf(t, "nrt_slots.h", gdir, dir, "liba.so", "a_fn", "-gsplit-dwarf", "-gdwarf-"+c.version)
			// A first unit without the structs, so the package holds two
			// units and theirs is found at non-zero offsets of its sections.
			if err := writeFile(dir, "first.c", "struct first_only { int f; } first_var;\nint first_fn(void) { return 2; }\n"); err != nil {
				t.Fatal(err)
			}
			if err := cc.Run(dir, "-c", "-fPIC", "-g", "-gsplit-dwarf", "-gdwarf-"+c.version, "-o", "first.o", "first.c"); err != nil {
				t.Fatal(err)
			}
			if err := cc.Run(dir, "-shared", "-Wl,--build-id", "-o", "liba.so", "first.o", "liba.o"); err != nil {
				t.Fatal(err)
			}
			lib := filepath.Join(dir, "liba.so")
			dwo := filepath.Join(dir, "liba.dwo")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, c.tool, "-e", "liba.so", "-o", "liba.so.dwp")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				if ctx.Err() != nil {
					t.Skipf("skipping: %s did not finish in 2 minutes on this input (a tool bug; nothing to read)", c.tool)
				}
				t.Fatalf("%s: %v\n%s", c.tool, err, out)
			}
			if err := os.Remove(dwo); err != nil {
				t.Fatal(err)
			}
			pkg, err := elfread.Open(lib + ".dwp")
			if err != nil {
				t.Fatal(err)
			}
			raw, err := pkg.File.Section(".debug_cu_index").Data()
			pkg.Close()
			if err != nil {
				t.Fatal(err)
			}
			// The index header's unit count (after the version and the
			// column count, in either index version).
			if len(raw) < 16 || binary.LittleEndian.Uint32(raw[8:]) != 2 {
				t.Fatalf("the package's index (%d bytes) does not list 2 units", len(raw))
			}
			if err := os.Remove(filepath.Join(dir, "first.dwo")); err != nil {
				t.Fatal(err)
			}
			r := runCheck(t, f, Options{}, lib)
			assertAllChecked(t, f, r, lib+".dwp", elfread.ViaDWP)
			if p := r.Files[0].DWARFParts; len(p) != 1 {
				t.Fatalf("parts %+v: want the package once", p)
			}
		})
	}
}

// TestSplitDWARFFault: a fault planted in the .dwo's types is caught.
func TestSplitDWARFFault(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "split-shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	dir := t.TempDir()
	lib := typesLib(t, filepath.Dir(obj), dir, "liba.so", "a_fn", "-gsplit-dwarf", "-gdwarf-5")
	r := runCheck(t, f, Options{}, lib)
	expect(t, r, KindSize, Incompatible, "nrt_instance_info_t: size 28 B, spec 32 B (struct shrunk)")
}

// debuginfodServer starts the real debuginfod on a free loopback port,
// serving the ELF/DWARF files under dir, and waits until it has indexed the
// build-id wanted. It is stopped when the test ends.
func debuginfodServer(t *testing.T, dir, wantID string) string {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		t.Skipf("skipping: debuginfod not found (install the Debian package debuginfod): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	db := filepath.Join(t.TempDir(), "debuginfod.sqlite")
	cmd := exec.Command(bin, "-F", "-p", strconv.Itoa(port), "-d", db, "-t", "0", "-g", "0", "-c", "1", dir)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/buildid/" + wantID + "/debuginfo") // debuginfod answers GET only
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("debuginfod on port %d did not serve %s within 60 s (last: %v)\n%s", port, wantID, err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func buildIDOf(t *testing.T, p string) string {
	t.Helper()
	o, err := elfread.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if len(o.BuildID) < 4 {
		t.Fatalf("%s has no build-id", p)
	}
	return o.BuildID
}

// TestDebuginfod: a stripped library whose debug file only a debuginfod
// server has; then a dwz'd library whose supplement only the server has.
func TestDebuginfod(t *testing.T) {
	f := loadFixtures(t)
	needTool(t, "objcopy", "binutils")
	served := t.TempDir()
	src := t.TempDir()
	lib := typesLib(t, f.dir, src, "liba.so", "a_fn")
	id := buildIDOf(t, lib)
	objcopy(t, "--only-keep-debug", lib, filepath.Join(served, "liba.debug"))
	stripped := filepath.Join(t.TempDir(), "liba.so")
	objcopy(t, "--strip-debug", lib, stripped)
	url := debuginfodServer(t, served, id)

	cache := t.TempDir()
	t.Setenv("DEBUGINFOD_URLS", url)
	t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
	t.Setenv("DEBUGINFOD_TIMEOUT", "30")
	// The cap is named when what the server has is larger.
	t.Setenv("DEBUGINFOD_MAXSIZE", "1000")
	_, err := Check(context.Background(), []string{stripped}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}, Fetch: envFetch()})
	if err == nil || !strings.Contains(err.Error(), "1000-byte cap (DEBUGINFOD_MAXSIZE)") {
		t.Fatalf("a download over DEBUGINFOD_MAXSIZE must fail naming the cap; got %v", err)
	}
	t.Setenv("DEBUGINFOD_MAXSIZE", "")
	r := runCheck(t, f, Options{Fetch: envFetch()}, stripped)
	cached := filepath.Join(cache, id, "debuginfo")
	assertAllChecked(t, f, r, cached, elfread.ViaDebuginfod)
	if got := buildIDOf(t, cached); got != id {
		t.Fatalf("cache file has build-id %s", got)
	}

	// The supplement of a dwz'd library, by its build-id.
	needTool(t, "dwz", "dwz")
	_, liba, common := dwzPair(t, f.dir)
	supID := buildIDOf(t, common)
	served2 := t.TempDir()
	if err := os.Rename(common, filepath.Join(served2, "common.debug")); err != nil {
		t.Fatal(err)
	}
	url2 := debuginfodServer(t, served2, supID)
	t.Setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1/nothing-listens-here "+url2)
	r = runCheck(t, f, Options{Fetch: envFetch()}, liba)
	assertAllChecked(t, f, r, filepath.Join(cache, supID, "debuginfo"), elfread.ViaSupplement+" via "+elfread.ViaDebuginfod)
}

// envFetch is the debuginfod hook the commands give the lookup
// (internal/cli's Debuginfod), from the environment as it is now.
func envFetch() elfread.Fetcher {
	c := debuginfod.FromEnv(elfread.VerifyBuildID)
	return func(ctx context.Context, id string) (string, error) { return c.Fetch(ctx, id, debuginfod.Debuginfo) }
}

// TestDWZSupplementMixed: libb's header renames two structs, so dwz -m
// moves what both share (typedefs, base types, the other structs, member
// names) into the supplement while liba keeps its nrt_version and
// ncclComm, whose members refer into it (DW_FORM_GNU_ref_alt,
// DW_FORM_GNU_strp_alt). Every struct is still checked clean, and a fault
// planted in one of liba's own structs is caught.
func TestDWZSupplementMixed(t *testing.T) {
	f := loadFixtures(t)
	needTool(t, "dwz", "dwz")
	rename := strings.NewReplacer("struct nrt_version {", "struct nrt_version_b {", "struct nrt_version nrt_version_t", "struct nrt_version_b nrt_version_t",
		"struct ncclComm {", "struct ncclComm_b {")
	for _, c := range []struct {
		name, old, new, msg string
		dwz                 []string
	}{
		{"clean", "", "", "", nil},
		{"fault", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n", "nrt_instance_info_t: size 28 B, spec 32 B (struct shrunk)", nil},
		{"dwarf5", "", "", "", []string{"--dwarf-5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			incA := f.dir
			header := f.headerText
			if c.old != "" {
				incA = filepath.Dir(f.faultObject(t, "dwz-mixed-"+c.name, c.old, c.new))
				header = string(mustRead(t, filepath.Join(incA, gen.HeaderName)))
			}
			incB := filepath.Join(dir, "b-include")
			if err := os.MkdirAll(incB, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := writeFile(incB, gen.HeaderName, staticAssert.ReplaceAllString(rename.Replace(header), "")); err != nil {
				t.Fatal(err)
			}
			liba := typesLib(t, incA, dir, "liba.so", "a_fn")
			typesLib(t, incB, dir, "libb.so", "b_fn")
			common := filepath.Join(dir, "common.debug")
			run(t, dir, "dwz", append(c.dwz, "-m", "common.debug", "-M", common, "liba.so", "libb.so")...)
			r := runCheck(t, f, Options{}, liba)
			fr := r.Files[0]
			if len(fr.DWARFParts) != 1 {
				t.Fatalf("dwz moved nothing into the supplement: parts %+v", fr.DWARFParts)
			}
			from := map[string]int{}
			for _, s := range fr.Structs {
				from[s.DWARFVia]++
			}
			// The structs liba keeps use names and types in the supplement.
			dump, err := exec.Command("readelf", "--debug-dump=info", liba).Output()
			if err != nil {
				t.Skipf("skipping: readelf (binutils) cannot dump %s: %v", liba, err)
			}
			alt := strings.Count(string(dump), "<alt 0x") + strings.Count(string(dump), "(alt indirect string")
			if c.dwz != nil {
				// readelf 2.40 prints DWARF 5 sup references without a mark;
				// the abbreviations name the forms.
				ab, err := exec.Command("readelf", "--debug-dump=abbrev", liba).Output()
				if err != nil {
					t.Skipf("skipping: readelf cannot dump %s: %v", liba, err)
				}
				alt = strings.Count(string(ab), "DW_FORM_ref_sup") + strings.Count(string(ab), "DW_FORM_strp_sup")
			}
			if from[elfread.ViaEmbedded] == 0 || alt == 0 {
				t.Fatalf("want structs in liba referring into the supplement: %v, %d alt references", from, alt)
			}
			if c.msg != "" {
				expect(t, r, KindSize, Incompatible, c.msg)
				return
			}
			if r.Exit != 0 || r.StructsChecked != len(f.sp.Structs) {
				var got []string
				for _, fd := range r.Findings {
					got = append(got, fd.Message)
				}
				t.Fatalf("exit %d, %d of %d structs; verdict %s; findings:\n%s", r.Exit, r.StructsChecked, len(f.sp.Structs), r.Verdict, strings.Join(got, "\n"))
			}
			t.Logf("structs by where their DIE is: %v", from)
		})
	}
}

// TestDWZSupplementThroughBuildIDSymlink: distributions install the debug
// file under its package path and point the build-id tree at it with a
// symbolic link; a relative .gnu_debugaltlink is relative to the real file.
func TestDWZSupplementThroughBuildIDSymlink(t *testing.T) {
	f := loadFixtures(t)
	needTool(t, "dwz", "dwz")
	needTool(t, "objcopy", "binutils")
	debugDir := t.TempDir()
	pkgDir := filepath.Join(debugDir, "usr", "lib")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	liba := typesLib(t, f.dir, pkgDir, "liba.so", "a_fn")
	typesLib(t, f.dir, pkgDir, "libb.so", "b_fn")
	if err := os.MkdirAll(filepath.Join(debugDir, "usr", "sup"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, pkgDir, "dwz", "-m", "../sup/common.debug", "-M", "../sup/common.debug", "liba.so", "libb.so")
	id := buildIDOf(t, liba)
	stripped := filepath.Join(t.TempDir(), "liba.so")
	objcopy(t, "--strip-debug", liba, stripped)
	link := filepath.Join(debugDir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../usr/lib/liba.so", link); err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{DebugDirs: []string{debugDir}}, stripped)
	common := filepath.Join(pkgDir, "../sup/common.debug")
	assertAllChecked(t, f, r, common, elfread.ViaSupplement)
	if r.Files[0].DWARFVia != elfread.ViaBuildID {
		t.Fatalf("main DWARF via %s", r.Files[0].DWARFVia)
	}
}
