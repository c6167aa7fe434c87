package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/sariftest"
)

// compatPair builds a C libnrt naming release 2.31.24 (the reverse node,
// no callbacks) and a libnccom exporting no neuron* entry point: a pairing
// that fails the dlsym at the version probe. Cost: two cc runs.
func compatPair(t *testing.T) (libnrt, libnccom string) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	d := t.TempDir()
	files := map[string]string{
		"nrt.c":   "const char nrtabi_release_name[] = \"2.31.24\";\n",
		"nrt.map": "NRT_2.0.0 {\n  global:\n    nrtabi_release_name;\n  local:\n    *;\n};\n",
		"nccom.c": "int nccom_nothing;\n",
	}
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	libnrt, libnccom = filepath.Join(d, "libnrt.so.1"), filepath.Join(d, "libnccom.so")
	if err := cc.Shared(d, libnrt, "libnrt.so.1", filepath.Join(d, "nrt.map"), []string{"nrt.c"}, cc.Strict...); err != nil {
		t.Fatal(err)
	}
	if err := cc.Shared(d, libnccom, "libnccom.so.2", "", []string{"nccom.c"}, cc.Strict...); err != nil {
		t.Fatal(err)
	}
	return libnrt, libnccom
}

func TestCompatFormats(t *testing.T) {
	libnrt, libnccom := compatPair(t)
	rc, out, errw := runCLI("compat", libnrt, libnccom)
	if rc != 8 || !strings.Contains(out, "FAIL [dlsym] neuronGetVersionInfo") || !strings.Contains(out, "fix: use a libnccom of release 2.31.24 (nearest in the spec set whose pairing loads)") || !strings.Contains(out, "verdict: FAILS THE ALL-OR-NOTHING DLSYM (exit 8)") {
		t.Errorf("text: exit %d\n%s%s", rc, out, errw)
	}
	rc, out, errw = runCLI("compat", "--format", "json", libnrt, libnccom)
	var doc struct {
		Verdict, Release string
		Exit             int
	}
	if err := json.Unmarshal([]byte(out), &doc); rc != 8 || err != nil || doc.Verdict != "dlsym" || doc.Release != "2.31.24" || doc.Exit != 8 {
		t.Errorf("json: exit %d, %v, %+v\n%s%s", rc, err, doc, out, errw)
	}
	rc, out, errw = runCLI("compat", "--format", "junit", libnrt, libnccom)
	var suites struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); rc != 8 || err != nil || suites.Failures != 1 {
		t.Errorf("junit: exit %d, %v, %d failures\n%s%s", rc, err, suites.Failures, out, errw)
	}
}

func TestCompatRefuses(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "libnccom.so")
	if err := os.WriteFile(notELF, []byte("not an ELF file at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"compat", "a.so"}, 2, "want LIBNRT LIBNCCOM [PLUGIN]"},
		{[]string{"compat", "--format", "html", "a.so", "b.so"}, 2, "--format html draws the release matrix: give --matrix"},
		{[]string{"compat", "--format", "html", "--matrix"}, 2, "give -o DIR"},
		{[]string{"compat", "--format", "xml", "a.so", "b.so"}, 2, `--format "xml"`},
		{[]string{"compat", "--matrix", "-o", "d"}, 2, "-o is for --format html"},
		{[]string{"compat", notELF, notELF}, 1, notELF},
		{[]string{"compat", "--spec", "no-such-release", notELF, notELF}, 1, "no-such-release"},
	} {
		rc, out, errw := runCLI(c.args...)
		if rc != c.rc || out != "" || !strings.Contains(errw, c.want) {
			t.Errorf("nrtabi %s: exit %d, stdout %q, stderr %q; want exit %d naming %q", strings.Join(c.args, " "), rc, out, errw, c.rc, c.want)
		}
		if c.rc == 1 {
			oneLine(t, strings.Join(c.args, " "), errw)
		}
	}
}

// TestCompatMatrixCommand: every release pairs with itself, and the
// synthetic 2.32.0 is refused at the gate by the others (its id is 90).
func TestCompatMatrixCommand(t *testing.T) {
	rc, out, errw := runCLI("compat", "--matrix")
	if rc != 0 || !strings.Contains(out, "2.31.24            layout[") || !strings.Contains(out, "expects compatibility id 89, libnccom 2.32.0-synthetic reports 90") {
		t.Errorf("exit %d\n%s%s", rc, out, errw)
	}
	rc, out, _ = runCLI("compat", "--matrix", "--format", "json")
	var m struct {
		Cells []struct{ Libnrt, Libnccom, Verdict string }
	}
	if err := json.Unmarshal([]byte(out), &m); rc != 0 || err != nil || len(m.Cells) == 0 {
		t.Fatalf("json: exit %d, %v", rc, err)
	}
	for _, c := range m.Cells {
		if c.Libnrt == c.Libnccom && c.Verdict != "loads" {
			t.Errorf("%s with itself: %s", c.Libnrt, c.Verdict)
		}
	}
	if rc, _, errw := runCLI("compat", "--matrix", "a.so"); rc != 2 || !strings.Contains(errw, "give two or more directories or packages") {
		t.Errorf("--matrix with a file: exit %d %s", rc, errw)
	}
}

// TestCompatSARIF: the log is valid SARIF 2.1.0 as code scanning takes it,
// with the failing stage as an error result.
func TestCompatSARIF(t *testing.T) {
	libnrt, libnccom := compatPair(t)
	rc, out, errw := runCLI("compat", "--format", "sarif", "--source-root", filepath.Dir(libnrt), libnrt, libnccom)
	if rc != 8 || !strings.Contains(out, `"ruleId": "dlsym"`) {
		t.Fatalf("exit %d\n%s%s", rc, out, errw)
	}
	sariftest.Check(t, []byte(out))
}

// TestCompatDirectory: a directory argument is searched for its
// position's file name, as check walks one; two candidates are refused by
// name.
func TestCompatDirectory(t *testing.T) {
	libnrt, _ := compatPair(t)
	dir := filepath.Dir(libnrt)
	rc, out, errw := runCLI("compat", dir, dir)
	if rc != 8 || !strings.Contains(out, "libnrt    "+libnrt) || !strings.Contains(out, "libnccom  "+filepath.Join(dir, "libnccom.so")) {
		t.Errorf("exit %d\n%s%s", rc, out, errw)
	}
	b, err := os.ReadFile(filepath.Join(dir, "libnccom.so"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "libnccom.so.2"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	rc, _, errw = runCLI("compat", dir, dir)
	if rc != 1 || !strings.Contains(errw, "holds 2 libnccom.so* files") {
		t.Errorf("two candidates: exit %d %s", rc, errw)
	}
	oneLine(t, "two candidates", errw)
}
