package layoutcheck

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/render"
	"github.com/nrtabi/nrtabi/internal/sariftest"
)

// sarifLogs holds the SARIF form of every report the package's tests
// produce to the schema and to code scanning's rules, with every path
// under the source root "/" (so every location is a relative uri); the
// run fails after the tests if one is not valid (TestMain).
var sarifLogs sariftest.Collector

func init() {
	checkedHook = func(r *Report) {
		b, err := render.SARIFBytes(r.SARIF("test", "/"))
		sarifLogs.Hold("check against "+r.StructSpec, b, err)
	}
}

// TestSARIFLocations: a check of a binary with a moved field and a
// resized struct has one result per fact, each at the header line the
// DWARF declares the field or struct at, relative to --source-root, the
// consequences as related locations; the fingerprints are the same in a
// second run. Cost: the fixture (shared) and one check.
func TestSARIFLocations(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "sarif-shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	r, err := Check(context.Background(), []string{obj}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var located, facts int
	for _, fr := range r.Files {
		for _, st := range fr.Structs {
			for _, fd := range st.Findings {
				facts++
				if fd.Location != nil && fd.Location.Line > 0 && strings.HasSuffix(fd.Location.File, ".h") {
					located++
				}
			}
		}
	}
	if facts == 0 || located != facts {
		t.Fatalf("%d struct facts, %d located in a header: %+v", facts, located, r.Findings)
	}
	root := filepath.Dir(f.dir)
	b, err := render.SARIFBytes(r.SARIF("test", root))
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Check(t, b)
	s := string(b)
	if !strings.Contains(s, `"uriBaseId": "SRCROOT"`) || !strings.Contains(s, `"startLine": `) || strings.Contains(s, `"uri": "file:`) && !strings.Contains(s, `"SRCROOT": {`) {
		t.Errorf("no relative location with a line:\n%s", clipLog(s))
	}
	again, err := Check(context.Background(), []string{obj}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := render.SARIFBytes(again.SARIF("test", root))
	f1, _ := sariftest.Fingerprints(b)
	f2, _ := sariftest.Fingerprints(b2)
	if strings.Join(f1, " ") != strings.Join(f2, " ") || len(f1) != facts+countOther(r) {
		t.Errorf("fingerprints differ between two runs or miscount: %d and %d, %d facts", len(f1), len(f2), facts)
	}
}

func countOther(r *Report) int {
	n := 0
	for _, fr := range r.Files {
		for _, e := range fr.Enums {
			n += len(e.Findings)
		}
		for _, c := range fr.Contract {
			n += len(c.Findings)
		}
	}
	for _, f := range r.Findings {
		if f.Kind == KindMissingStruct {
			n++
		}
	}
	return n
}

func clipLog(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}

// TestSARIFUnresolvedDeclFile: a line table the reader refuses (its
// version planted as 9) leaves the facts their line and logical names,
// and says why the file is not named, in the report and in the log.
// Cost: one fault object (shared fixture) and one check.
func TestSARIFUnresolvedDeclFile(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "sarif-shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".debug_line")
	if sec == nil || sec.Size < 6 {
		t.Fatalf("%s has no .debug_line", obj)
	}
	b[sec.Offset+4], b[sec.Offset+5] = 9, 0 // the first table's version
	bad := filepath.Join(t.TempDir(), "types.o")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{bad}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, fd := range r.Findings {
		if l := fd.Location; l == nil || l.File != "" || l.Line == 0 || !strings.Contains(l.Unresolved, "version 9") {
			t.Errorf("%s: location %+v, want a line and the reason", fd.Message, l)
		}
	}
	log, err := render.SARIFBytes(r.SARIF("test", "/"))
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Check(t, log)
	if !strings.Contains(string(log), `"unresolved": "the line table at 0x0 has version 9`) {
		t.Errorf("the log does not say why:\n%s", clipLog(string(log)))
	}
}

// TestSARIFWaived: a waived fact keeps its result, with an external
// suppression carrying why and who (the hook the waivers fill).
func TestSARIFWaived(t *testing.T) {
	f := loadFixtures(t)
	obj := f.faultObject(t, "sarif-shrunk", "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	r, err := Check(context.Background(), []string{obj}, Options{Spec: f.sp, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var waived bool
	for _, fr := range r.Files {
		for _, st := range fr.Structs {
			if len(st.Findings) > 0 && !waived {
				st.Findings[0].Waived, waived = &Waiver{Who: "ana", Why: "accepted for 2.31.25"}, true
			}
		}
	}
	if !waived {
		t.Fatal("no struct fact to waive")
	}
	b, err := render.SARIFBytes(r.SARIF("test", "/"))
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Check(t, b)
	s := string(b)
	if strings.Count(s, `"suppressions"`) != 1 || !strings.Contains(s, `"kind": "external"`) || !strings.Contains(s, `"justification": "accepted for 2.31.25"`) || !strings.Contains(s, `"who": "ana"`) {
		t.Errorf("no suppression for the waived fact:\n%s", clipLog(s))
	}
}
