package main

import (
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/sariftest"
)

// TestDiffSARIF: diff 2.31.24 2.32.0-synthetic --format sarif is a valid
// log code scanning accepts, its changes at their spec rows under
// --source-root, the same fingerprints in a second run. Cost: two diffs
// of embedded releases, in process.
func TestDiffSARIF(t *testing.T) {
	args := []string{"diff", "--format", "sarif", "--source-root", "../..", "2.31.24", "2.32.0-synthetic"}
	rc, out, errw := runCLI(args...)
	if rc != 8 {
		t.Fatalf("exit %d, want 8\n%s", rc, errw)
	}
	sariftest.Check(t, []byte(out))
	if !strings.Contains(out, `"uri": "spec/2.32.0-synthetic/`) || !strings.Contains(out, `"level": "error"`) {
		t.Errorf("no change at a spec row, or no error level:\n%s", out)
	}
	_, again, _ := runCLI(args...)
	f1, _ := sariftest.Fingerprints([]byte(out))
	f2, _ := sariftest.Fingerprints([]byte(again))
	if len(f1) == 0 || strings.Join(f1, " ") != strings.Join(f2, " ") {
		t.Errorf("fingerprints of two runs: %v, %v", f1, f2)
	}
}

// TestCheckSARIFHeaders: check --headers --format sarif locates each fact
// at its header and line, relative to --source-root; the incompatible
// fact is an error and the compatible ones warnings. Cost: the header
// tree compiled once.
func TestCheckSARIFHeaders(t *testing.T) {
	needCC(t)
	rc, out, errw := runLayoutCLI("check", "--format", "sarif", "--source-root", "../..", "--headers", neuronInclude)
	if rc != 12 {
		t.Fatalf("exit %d, want 12\n%s%s", rc, out, errw)
	}
	sariftest.Check(t, []byte(out))
	for _, want := range []string{`"uri": "layoutcheck/testdata/neuron-include/nrt/`, `"uriBaseId": "SRCROOT"`, `"startLine": `, `"fullyQualifiedName": "nrt_instance_info_t.family"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
	if e, w := strings.Count(out, `"level": "error"`), strings.Count(out, `"level": "warning"`); e < 1 || w < 3 {
		t.Errorf("%d errors and %d warnings; want the 1 incompatible and 3 compatible facts", e, w)
	}
}

// TestSARIFRefusals: an error before the report is a log of a failed
// invocation naming the input (valid too); --source-root without --format
// sarif, or not a directory, is a usage error.
func TestSARIFRefusals(t *testing.T) {
	rc, out, _ := runLayoutCLI("check", "--format", "sarif", "no-such-file.so")
	if rc != 1 || !strings.Contains(out, `"executionSuccessful": false`) || !strings.Contains(out, "no-such-file.so") {
		t.Errorf("check of a missing file: exit %d\n%s", rc, out)
	}
	sariftest.Check(t, []byte(out))
	for _, args := range [][]string{
		{"check", "--source-root", ".", "x.so"},
		{"diff", "--source-root", ".", "2.31.24", "2.32.0-synthetic"},
		{"diff", "--format", "sarif", "--source-root", "no-such-dir", "2.31.24", "2.32.0-synthetic"},
	} {
		if rc, _, errw := runCLI(args...); rc != 2 || !strings.Contains(errw, "--source-root") {
			t.Errorf("%v: exit %d, %s", args, rc, errw)
		}
	}
}
