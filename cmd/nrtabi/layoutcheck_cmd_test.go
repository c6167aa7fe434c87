package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/spec"
)

// typesObject compiles every struct of the generated header (optionally with
// one line replaced and the header's _Static_asserts dropped) into a shared
// object with DWARF.
func typesObject(t *testing.T, old, repl string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	h, err := os.ReadFile(filepath.Join("../../generated", spec.Default, "c", gen.HeaderName))
	if err != nil {
		t.Fatal(err)
	}
	text := string(h)
	if old != "" {
		var kept []string
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(l, "_Static_assert(") {
				kept = append(kept, l)
			}
		}
		text = strings.Replace(strings.Join(kept, "\n"), old, repl, 1)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{gen.HeaderName: text, "types.c": "#define _GNU_SOURCE\n#include \"" + gen.HeaderName + "\"\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.Shared(dir, "libtypes.so", "libtypes.so", "", []string{"types.c"}, "-fno-eliminate-unused-debug-types"); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "libtypes.so")
}

func runLayoutCLI(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	rc := run(args, &out, &errw)
	return rc, out.String(), errw.String()
}

func TestShowVersionInfo(t *testing.T) {
	obj := typesObject(t, "", "")
	rc, out, errs := runLayoutCLI("show", "nec_version_info_t", obj)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs)
	}
	for _, want := range []string{
		"struct nec_version_info {",
		"uint64_t compatibility_version;              /*    48     8 */  spec: u64 @48",
		"/* size: 56, cachelines: 1, members: 7 */",
		"matches the spec",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("show output lacks %q:\n%s", want, out)
		}
	}
	// A moved field is marked beside the member and sets exit bit 8.
	moved := typesObject(t, "\tuint64_t compatibility_version; /* +48 HIGH */\n", "\tuint64_t pad;\n\tuint64_t compatibility_version;\n")
	rc, out, _ = runLayoutCLI("show", "nec_version_info_t", moved, "--spec", spec.Default)
	if rc&8 == 0 || !strings.Contains(out, "compatibility_version;              /*    56     8 */  spec: u64 @48  <-- MISMATCH: offset") {
		t.Fatalf("exit %d:\n%s", rc, out)
	}
}

func TestCheckCLIExitBitsAndJSON(t *testing.T) {
	clean := typesObject(t, "", "")
	rc, out, errs := runLayoutCLI("check", clean)
	if rc != 0 || !strings.Contains(out, "verdict: CLEAN") {
		t.Fatalf("clean: exit %d\n%s%s", rc, out, errs)
	}
	renamed := typesObject(t, "\tint refcnt; /* +28 HIGH */\n", "\tint refs;\n")
	rc, out, _ = runLayoutCLI("check", "--format", "json", renamed)
	if rc != 4 {
		t.Fatalf("a rename exits 4, got %d", rc)
	}
	var rep struct {
		Schema   string `json:"schema"`
		Exit     int    `json:"exit"`
		Findings []struct {
			Severity, Kind, Struct, Field, Expected, Actual, Message string
			EmbeddedIn                                               []string `json:"embedded_in"`
		} `json:"findings"`
		Files []struct {
			Structs []struct {
				Name, Status string
			} `json:"structs"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	// One fact (docs/layoutcheck.md#one-grading): at enc_nccl_comm_node, which defines the field,
	// embedded in enc_glb_comm.
	if rep.Schema != "nrtabi.layoutcheck/2" || rep.Exit != 4 || len(rep.Findings) != 1 {
		t.Fatalf("JSON report: %+v", rep)
	}
	f := rep.Findings[0]
	if f.Severity != "compatible" || f.Kind != "renamed" || f.Struct != "enc_nccl_comm_node" || f.Field != "refcnt" || f.Expected != "refcnt" || f.Actual != "refs" || len(f.EmbeddedIn) != 1 || f.EmbeddedIn[0] != "enc_glb_comm.nccl_comm_node" {
		t.Fatalf("finding %+v", f)
	}
	shrunk := typesObject(t, "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	rc, out, _ = runLayoutCLI("check", shrunk, "--require", "nrt_instance_info_t")
	if rc != 8 || !strings.Contains(out, "nrt_instance_info_t: size 28 B, spec 32 B (struct shrunk)") || !strings.Contains(out, "verdict: INCOMPATIBLE") {
		t.Fatalf("shrunk: exit %d\n%s", rc, out)
	}
}

func TestLayoutCLIErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notELF, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"check"}, 2, "name at least one FILE"},
		{[]string{"check", "--format", "xml", notELF}, 2, "--format"},
		{[]string{"check", notELF}, 1, notELF + ": not an ELF file"},
		{[]string{"show", "nec_version_info_t"}, 2, "want STRUCT FILE"},
		{[]string{"show", "nec_version_info_t", notELF}, 1, "not an ELF file"},
		{[]string{"extract", notELF, "--struct", "nec_version_info_t"}, 1, "not an ELF file"},
		{[]string{"extract"}, 2, "exactly one FILE"},
	}
	for _, c := range cases {
		rc, _, errs := runLayoutCLI(c.args...)
		if rc != c.rc || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, rc, c.rc, errs, c.want)
		}
		if rc == 1 && strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
			t.Errorf("%v: the input error is not one line: %q", c.args, errs)
		}
	}
	obj := typesObject(t, "", "")
	if rc, _, errs := runLayoutCLI("check", "--require", "no_such_struct", obj); rc != 2 || !strings.Contains(errs, "no such struct") {
		t.Errorf("--require of an unknown struct: exit %d %q", rc, errs)
	}
	if rc, _, errs := runLayoutCLI("check", "--role", "libfoo", obj); rc != 2 || !strings.Contains(errs, "--role") {
		t.Errorf("bad --role: exit %d %q", rc, errs)
	}
}

func TestExtractCLIRoundTrip(t *testing.T) {
	obj := typesObject(t, "", "")
	dir := t.TempDir()
	out := filepath.Join(dir, "frag.toml")
	if rc, _, errs := runLayoutCLI("extract", "-o", out, obj); rc != 0 {
		t.Fatalf("extract: exit %d %s", rc, errs)
	}
	rc, text, errs := runLayoutCLI("check", "--spec", dir, obj)
	if rc != 0 || !strings.Contains(text, "(fragment; link contract from spec/"+spec.Default+" (embedded))") {
		t.Fatalf("round trip: exit %d\n%s%s", rc, text, errs)
	}
	// A failed extract leaves an existing file alone.
	before, _ := os.ReadFile(out)
	if rc, _, _ := runLayoutCLI("extract", "-o", out, "--struct", "no_such_struct", obj); rc != 1 {
		t.Fatalf("extract of an absent struct: exit %d", rc)
	}
	after, _ := os.ReadFile(out)
	if !bytes.Equal(before, after) {
		t.Fatal("a failed extract replaced the good file")
	}
}

// TestShowC: nrtabi show --c prints C that gcc compiles with the
// assertions of the layout; a struct the file lacks is one error line.
func TestShowCCLI(t *testing.T) {
	obj := typesObject(t, "", "")
	rc, out, errs := runLayoutCLI("show", "--c", "nec_version_info_t", obj)
	if rc != 0 || !strings.Contains(out, "_Static_assert(sizeof(struct nec_version_info) == 56") {
		t.Fatalf("exit %d: %s\n%s", rc, errs, out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "show.c"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "show.c", "show.o", "-Wall", "-Wextra", "-Werror"); err != nil {
		t.Fatalf("show --c output does not compile: %v\n%s", err, out)
	}
	rc, _, errs = runLayoutCLI("show", "--c", "no_such_struct", obj)
	if rc == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "no struct no_such_struct") {
		t.Fatalf("exit %d: %q", rc, errs)
	}
}

// TestExtractRefusedCLI: a struct without a spec layout (a GNU C empty
// struct) is refused on stderr in one line and the exit status is 1, while
// the file holds the other structs and loads.
func TestExtractRefusedCLI(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "e.c"), []byte("struct e0 {};\nstruct ok { int a; struct e0 z; };\nstruct e0 ge; struct ok gok;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "e.c", "e.o"); err != nil {
		t.Fatal(err)
	}
	frag := filepath.Join(t.TempDir(), "s.toml")
	rc, _, errs := runLayoutCLI("extract", "--struct", "ok,e0", "-o", frag, filepath.Join(dir, "e.o"))
	if rc != cli.ExitError || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "not extracted") || !strings.Contains(errs, "e0 (struct e0 is empty") {
		t.Fatalf("exit %d: %q", rc, errs)
	}
	s, err := spec.LoadDir(filepath.Dir(frag))
	if err != nil || s.StructByName("ok") == nil || s.StructByName("e0") != nil {
		t.Fatalf("the file must hold ok only and load: %v", err)
	}
}
