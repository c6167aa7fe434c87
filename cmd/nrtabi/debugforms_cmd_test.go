package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/spec"
)

// TestCheckMissingDWO: a -gsplit-dwarf library is checked through its .dwo;
// without the .dwo, check exits 1 naming it, and --allow-missing-debug
// checks without it, the verdict saying what was not read.
func TestCheckMissingDWO(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	h, err := filepath.Abs(filepath.Join("../../generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "liba.c"), []byte("#define _GNU_SOURCE\n#include \""+h+"\"\nint a_fn(void) { return 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-c", "-fPIC", "-g", "-gsplit-dwarf", "-fno-eliminate-unused-debug-types", "-o", "liba.o", "liba.c"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Run(dir, "-shared", "-o", "liba.so", "liba.o"); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "liba.so")
	rc, out, errs := runLayoutCLI("check", "--role", "none", lib)
	if rc != 0 || !strings.Contains(out, "CLEAN: all ") || !strings.Contains(out, "DWARF part: "+filepath.Join(dir, "liba.dwo")+" (dwo)") {
		t.Fatalf("with the .dwo: exit %d\n%s%s", rc, out, errs)
	}
	if err := os.Remove(filepath.Join(dir, "liba.dwo")); err != nil {
		t.Fatal(err)
	}
	rc, out, errs = runLayoutCLI("check", "--role", "none", lib)
	if rc != cli.ExitError || out != "" || !strings.Contains(errs, "needs the split DWARF file liba.dwo") || !strings.Contains(errs, "--allow-missing-debug") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("without the .dwo: exit %d (want %d), stdout %q, stderr %q", rc, cli.ExitError, out, errs)
	}
	// The .dwo held every struct: without it nothing is checked, which
	// passes only when accepted (docs/nrtabi-check.md#nothing-checked).
	rc, out, errs = runLayoutCLI("check", "--role", "none", "--allow-missing-debug", lib)
	if rc != cli.ExitError || !strings.Contains(errs, "nothing checked") {
		t.Fatalf("--allow-missing-debug alone: exit %d, want 1 saying nothing was checked\n%s%s", rc, out, errs)
	}
	rc, out, errs = runLayoutCLI("check", "--role", "none", "--allow-missing-debug", "--allow-empty", lib)
	if rc != 0 || strings.Contains(out, "CLEAN: all ") || !strings.Contains(out, "DWARF NOT READ: needs the split DWARF file liba.dwo") || !strings.Contains(out, "not read (--allow-missing-debug)") {
		t.Fatalf("--allow-missing-debug: exit %d\n%s%s", rc, out, errs)
	}
}

// TestCheckMissingDWZSupplement: a library dwz moved its types out of
// (dwz -m, .gnu_debugaltlink) is checked through the supplement; with the
// supplement removed, check exits 1 naming it and --allow-missing-debug;
// --allow-missing-debug alone still fails, since every struct was in the
// supplement and nothing was checked (docs/nrtabi-check.md#nothing-checked);
// with --allow-empty too it passes, saying what was not read and never that
// every struct was found (docs/layoutcheck.md, the missing parts). Cost:
// two compiles of the generated header, one dwz run, four in-process
// checks.
func TestCheckMissingDWZSupplement(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("dwz"); err != nil {
		t.Skip("skipping: no dwz on PATH (apt-get install dwz)")
	}
	h, err := filepath.Abs(filepath.Join("../../generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		src := "lib" + n + ".c"
		if err := os.WriteFile(filepath.Join(dir, src), []byte("#define _GNU_SOURCE\n#include \""+h+"\"\nint "+n+"_fn(void) { return 1; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := cc.Run(dir, "-shared", "-fPIC", "-g", "-fno-eliminate-unused-debug-types", "-Wl,--build-id", "-o", "lib"+n+".so", src); err != nil {
			t.Fatal(err)
		}
	}
	common := filepath.Join(dir, "common.debug")
	dwz := exec.Command("dwz", "-m", "common.debug", "-M", common, "liba.so", "libb.so")
	dwz.Dir = dir
	if out, err := dwz.CombinedOutput(); err != nil {
		t.Fatalf("dwz: %v\n%s", err, out)
	}
	lib := filepath.Join(dir, "liba.so")
	rc, out, errs := runLayoutCLI("check", "--role", "none", lib)
	if rc != 0 || !strings.Contains(out, "CLEAN: all ") || !strings.Contains(out, common) {
		t.Fatalf("with the supplement: exit %d\n%s%s", rc, out, errs)
	}
	if err := os.Remove(common); err != nil {
		t.Fatal(err)
	}
	rc, out, errs = runLayoutCLI("check", "--role", "none", lib)
	if rc != cli.ExitError || out != "" || !strings.Contains(errs, "supplementary DWARF file "+common) || !strings.Contains(errs, "--allow-missing-debug") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("without the supplement: exit %d (want %d), stdout %q, stderr %q", rc, cli.ExitError, out, errs)
	}
	rc, out, errs = runLayoutCLI("check", "--role", "none", "--allow-missing-debug", lib)
	if rc != cli.ExitError || !strings.Contains(errs, "nothing checked") {
		t.Fatalf("--allow-missing-debug alone: exit %d, want 1 saying nothing was checked\n%s%s", rc, out, errs)
	}
	rc, out, errs = runLayoutCLI("check", "--role", "none", "--allow-missing-debug", "--allow-empty", lib)
	if rc != 0 || strings.Contains(out, "CLEAN: all ") || !strings.Contains(out, "DWARF NOT READ: ") || !strings.Contains(out, common) || !strings.Contains(out, "not read (--allow-missing-debug)") {
		t.Fatalf("--allow-missing-debug --allow-empty: exit %d\n%s%s", rc, out, errs)
	}
}
