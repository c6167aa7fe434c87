package sariftest

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"testing"

	"github.com/nrtabi/nrtabi/internal/render"
)

func sample(t *testing.T) []byte {
	t.Helper()
	b, err := render.SARIFBytes(render.SARIFRun{Tool: "nrtabi", Version: "test", SourceRoot: "/src",
		Rules: []render.SARIFRule{{ID: "offset", Short: "a field moved", Level: render.LevelError}},
		Findings: []render.SARIFResult{{RuleID: "offset", Level: render.LevelError, Message: "s.f moved", Key: "s.f",
			Place: render.Place{File: "/src/include/s.h", Line: 7, Logical: []render.Logical{{Name: "f", FullyQualifiedName: "s.f", Kind: "member"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCatchesPlanted: the validator passes a log render writes and
// catches each planted fault, the schema's and code scanning's.
func TestCatchesPlanted(t *testing.T) {
	good := sample(t)
	Check(t, good)
	for _, p := range []struct{ name, from, to, want string }{
		{"level not in the schema's enum", `"level": "error"`, `"level": "fatal"`, "not valid SARIF"},
		{"version", `"version": "2.1.0"`, `"version": "2.0"`, "not valid SARIF"},
		{"startLine below 1", `"startLine": 7`, `"startLine": 0`, "not valid SARIF"},
		{"ruleIndex of no rule", `"ruleIndex": 0`, `"ruleIndex": 3`, "ruleIndex 3"},
		{"absolute uri", `"uri": "include/s.h"`, `"uri": "file:///src/include/s.h"`, "not relative"},
		{"undefined uriBaseId", `"uriBaseId": "SRCROOT"`, `"uriBaseId": "ROOT"`, "does not define"},
		{"no fingerprints", `"partialFingerprints": {`, `"properties": {`, "partialFingerprints"},
	} {
		bad := strings.Replace(string(good), p.from, p.to, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q not in the log:\n%s", p.name, p.from, good)
		}
		err := Validate([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), p.want) {
			t.Errorf("%s: got %v, want an error with %q", p.name, err, p.want)
		}
	}
	noFile := strings.Replace(string(good), `"physicalLocation": {`, `"properties": {`, 1)
	if err := Validate([]byte(noFile)); err == nil || !strings.Contains(err.Error(), "no physical location") {
		t.Errorf("a result with no physical location: %v", err)
	}
	two := strings.Replace(string(good), `"runs": [`, `"runs": [{"tool": {"driver": {"name": "x"}}, "results": []},`, 1)
	if err := Validate([]byte(two)); err == nil || !strings.Contains(err.Error(), "2 runs") {
		t.Errorf("two runs: %v", err)
	}
}

// TestRootThatChecksNothing: a schema whose root takes any document (the
// shared copy's top level) is not used as it is; one with no Root that
// refuses an empty log is refused.
func TestRootThatChecksNothing(t *testing.T) {
	for _, c := range []struct {
		doc  map[string]any
		fail bool
	}{
		{map[string]any{"definitions": map[string]any{}}, true},
		{map[string]any{"definitions": map[string]any{"Root": map[string]any{"type": "object", "required": []any{"runs"}}}}, false},
	} {
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource("file:///s.json", c.doc); err != nil {
			t.Fatal(err)
		}
		sch, err := compileRoot(comp, "file:///s.json", c.doc)
		if (err != nil) != c.fail {
			t.Errorf("%v: err %v", c.doc, err)
		}
		if err == nil && sch.Validate(map[string]any{}) == nil {
			t.Errorf("%v: the schema used takes an empty log", c.doc)
		}
	}
}
