package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/internal/sariftest"
	"github.com/nrtabi/nrtabi/spec"
)

// sarifLogs holds the SARIF form of every report the package's tests
// produce to the schema and code scanning's rules (TestMain fails the run
// after the tests on an invalid one), under the source root the checkout.
var sarifLogs sariftest.Collector

func init() {
	diffedHook = func(r Report) {
		b, err := render.SARIFBytes(r.SARIF("test", "../.."))
		sarifLogs.Hold("diff "+r.Old.Name+" -> "+r.New.Name, b, err)
	}
}

// TestSARIFSynthetic: the 2.31.24 -> 2.32.0-synthetic diff as SARIF is
// valid, one result per change at the level of its severity, each at its
// spec row under the source root (the checkout), the fingerprints the
// same in a second run. Cost: two diffs of embedded releases.
func TestSARIFSynthetic(t *testing.T) {
	r := Diff(load(t, spec.Default), load(t, "2.32.0-synthetic"))
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := render.SARIFBytes(r.SARIF("test", root))
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Check(t, b)
	s := string(b)
	if n := strings.Count(s, `"ruleId": `); n != len(r.Changes) {
		t.Errorf("%d results for %d changes", n, len(r.Changes))
	}
	if strings.Count(s, `"level": "error"`) < r.Summary.Incompatible || !strings.Contains(s, `"uri": "spec/2.32.0-synthetic/`) {
		t.Errorf("levels or spec rows missing:\n%s", s)
	}
	b2, err := render.SARIFBytes(Diff(load(t, spec.Default), load(t, "2.32.0-synthetic")).SARIF("test", root))
	if err != nil {
		t.Fatal(err)
	}
	f1, _ := sariftest.Fingerprints(b)
	f2, _ := sariftest.Fingerprints(b2)
	if len(f1) != len(r.Changes) || strings.Join(f1, " ") != strings.Join(f2, " ") {
		t.Errorf("fingerprints: %v then %v", f1, f2)
	}
	if sarifLogs.Held() == 0 {
		t.Errorf("the hook held no report")
	}
}
