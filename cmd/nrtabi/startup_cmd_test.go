package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
)

// The start-up guard: what every command pays before it runs, measured by
// the runtime itself (GODEBUG=inittrace=1 prints one line per package whose
// init ran). docs/benchmarks.md#start-up-2026-12-03 and
// docs/benchmarks.md#start-up-2026-12-04 have the measurements behind the
// bounds: the packages' inits and the pages they touch are most of what
// separates nrtabi --help from an empty Go program.
const (
	// maxInitPackages bounds the packages that run an init: a new
	// dependency with package-level work raises it for every command.
	// 120 since release/diff's and main's maps became switches and
	// debuginfod's Replacer a function.
	maxInitPackages = 120
	// maxOwnInitBytes bounds what this module's packages allocate at init
	// in all, and maxPkgInitBytes what one of them does: a table the
	// package needs only for some commands is made on first use
	// (sync.OnceValue), not at start-up.
	// 5,936 bytes in all at 120 packages.
	maxOwnInitBytes = 8 << 10
	maxPkgInitBytes = 4 << 10
)

// maxScannedData bounds the binary's .data and .bss, the sections that
// hold pointers: the runtime builds their pointer masks at every start, in
// time that grows with their size (runtime.runGCProg, 376,561 of --help's
// 3.1 million instructions at 1,091,000 bytes, 134,202 without the
// compiled releases: docs/benchmarks.md#start-up-2026-12-04). Static data
// without pointers (.noptrdata, .rodata) costs nothing at start.
const maxScannedData = 5 << 18 // 1.25 MiB

// scannedData is the size of path's .data and .bss. A binary without
// them is an error: a check that found no section has checked nothing.
func scannedData(path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n uint64
	found := 0
	for _, name := range []string{".data", ".bss"} {
		if s := f.Section(name); s != nil {
			n += s.Size
			found++
		}
	}
	if found != 2 {
		return 0, fmt.Errorf("%s: %d of .data and .bss found (is it a Go binary?)", path, found)
	}
	return n, nil
}

// scannedDataViolation says how n breaks limit, or "".
func scannedDataViolation(n, limit uint64) string {
	if n <= limit {
		return ""
	}
	return fmt.Sprintf(".data and .bss hold %d bytes, more than %d: the runtime builds their pointer masks at every start; keep large static tables free of pointers (strings, slices, maps) or build them on first use, or raise the bound with the measurement", n, limit)
}

// TestStartupScannedData holds the binary's pointer-holding data to
// maxScannedData, and shows the check failing on a bound just under what
// the binary holds and on a file with no such sections. Cost: reading the
// section headers of the binary the package's tests build anyway.
func TestStartupScannedData(t *testing.T) {
	bin := nrtabiBinary(t)
	n, err := scannedData(bin)
	if err != nil {
		t.Fatal(err)
	}
	if v := scannedDataViolation(n, maxScannedData); v != "" {
		t.Error(v)
	}
	if scannedDataViolation(n, n-1) == "" {
		t.Errorf("the check passed %d bytes against a bound of %d", n, n-1)
	}
	notGo := filepath.Join(t.TempDir(), "empty.o")
	if err := os.WriteFile(notGo, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scannedData(notGo); err == nil {
		t.Error("scannedData of an empty file passed")
	}
	t.Logf(".data and .bss: %d bytes (bound %d)", n, maxScannedData)
}

// initRecord is one line of the runtime's inittrace.
type initRecord struct {
	pkg    string
	bytes  int
	allocs int
}

// parseInitTrace reads the inittrace lines of a run's stderr:
// "init PKG @T ms, C ms clock, B bytes, A allocs". A line that starts with
// "init " and does not read so is an error, as is no line at all: a guard
// that saw nothing has checked nothing.
func parseInitTrace(stderr []byte) ([]initRecord, error) {
	var recs []initRecord
	for line := range strings.Lines(string(stderr)) {
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 11 || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
			return nil, fmt.Errorf("inittrace line not understood: %q", line)
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil || b < 0 || a < 0 {
			return nil, fmt.Errorf("inittrace line not understood: %q", line)
		}
		recs = append(recs, initRecord{pkg: f[1], bytes: b, allocs: a})
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no inittrace line in %d bytes of stderr (is GODEBUG=inittrace=1 still honoured?)", len(stderr))
	}
	return recs, nil
}

// startupLimits are the bounds one program is held to.
type startupLimits struct{ packages, ownBytes, pkgBytes int }

// startupViolations says how recs break the limits, one line each. own
// says whether a package is this module's (main is).
func startupViolations(recs []initRecord, lim startupLimits, own func(string) bool) []string {
	var out []string
	if len(recs) > lim.packages {
		out = append(out, fmt.Sprintf("%d packages run an init at start-up, more than %d: a new dependency (or one made heavier) costs every command; keep it behind the command that needs it or raise the bound with the measurement", len(recs), lim.packages))
	}
	total := 0
	for _, r := range recs {
		if !own(r.pkg) {
			continue
		}
		total += r.bytes
		if r.bytes > lim.pkgBytes {
			out = append(out, fmt.Sprintf("package %s allocates %d bytes in %d allocations at init, more than %d: make its tables on first use (sync.OnceValue)", r.pkg, r.bytes, r.allocs, lim.pkgBytes))
		}
	}
	if total > lim.ownBytes {
		out = append(out, fmt.Sprintf("this module's packages allocate %d bytes at init, more than %d", total, lim.ownBytes))
	}
	return out
}

func ownPackage(pkg string) bool { return pkg == "main" || strings.HasPrefix(pkg, gen.Module+"/") }

// initTrace runs bin with args under GODEBUG=inittrace=1 and parses what
// the runtime printed.
func initTrace(t *testing.T, bin string, args ...string) []initRecord {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.Bytes())
	}
	recs, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestStartupGuard holds nrtabi --help to the bounds. Cost: one run of the
// binary the package's tests build anyway, a few milliseconds.
func TestStartupGuard(t *testing.T) {
	recs := initTrace(t, nrtabiBinary(t), "--help")
	lim := startupLimits{packages: maxInitPackages, ownBytes: maxOwnInitBytes, pkgBytes: maxPkgInitBytes}
	for _, v := range startupViolations(recs, lim, ownPackage) {
		t.Error(v)
	}
	if !t.Failed() {
		t.Logf("%d packages run an init (bound %d)", len(recs), maxInitPackages)
	}
}

// TestStartupGuardCatchesAPlant: the same check on a program that builds a
// table at init and links net/http (testdata/plantinit) fails on both
// counts: its main package over the per-package and the module's bound, and
// its packages over a bound of 40, the stdlib's share without net/http.
// Cost: one small go build (a second or two with the standard library
// cached) and one run.
func TestStartupGuardCatchesAPlant(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "plantinit")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/plantinit")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/plantinit: %v\n%s", err, out)
	}
	recs := initTrace(t, bin)
	got := strings.Join(startupViolations(recs, startupLimits{packages: 40, ownBytes: maxOwnInitBytes, pkgBytes: maxPkgInitBytes}, ownPackage), "\n")
	for _, want := range []string{"packages run an init at start-up, more than 40", "package main allocates", "this module's packages allocate"} {
		if !strings.Contains(got, want) {
			t.Errorf("the guard missed the plant: want %q in\n%s", want, got)
		}
	}
}

// TestParseInitTrace: a line the parser does not understand, and no line at
// all, are errors, never an empty pass.
func TestParseInitTrace(t *testing.T) {
	recs, err := parseInitTrace([]byte("init a/b @0.1 ms, 0.002 ms clock, 320 bytes, 4 allocs\nother\n"))
	if err != nil || len(recs) != 1 || recs[0] != (initRecord{"a/b", 320, 4}) {
		t.Errorf("parse = %v, %v", recs, err)
	}
	for _, bad := range []string{"", "no trace here\n", "init a/b @0.1 ms, 0.002 ms clock, many bytes, 4 allocs\n", "init a/b\n"} {
		if _, err := parseInitTrace([]byte(bad)); err == nil {
			t.Errorf("parseInitTrace(%q) passed", bad)
		}
	}
}

// FuzzParseInitTrace: any stderr either parses into records with a
// package name and counts that are not negative, or is an error; never a
// panic, never an empty pass.
func FuzzParseInitTrace(f *testing.F) {
	f.Add([]byte("init a/b @0.1 ms, 0.002 ms clock, 320 bytes, 4 allocs\n"))
	f.Add([]byte("init a @0 ms, 0 ms clock, -1 bytes, 0 allocs\n"))
	f.Add([]byte("warning\ninit x\n"))
	f.Fuzz(func(t *testing.T, stderr []byte) {
		recs, err := parseInitTrace(stderr)
		if err != nil {
			return
		}
		if len(recs) == 0 {
			t.Fatal("no record and no error")
		}
		for _, r := range recs {
			if r.pkg == "" || r.bytes < 0 || r.allocs < 0 {
				t.Fatalf("record %+v", r)
			}
		}
	})
}
