package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"
)

// TestPrintfEscapes: a name from an input cannot break the report's lines
// or reach the terminal's control sequences; numbers print as fmt prints
// them.
func TestPrintfEscapes(t *testing.T) {
	var b bytes.Buffer
	Printf(&b, "%s %v %d %v\n", "a\nb\x1b[2J", errors.New("e\rf"), 7, []string{"x\ty"})
	if got, want := b.String(), "a\\nb\\x1b[2J e\\rf 7 [x\\ty]\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("not one line: %q", b.String())
	}
}

func TestConsequence(t *testing.T) {
	for depth, want := range []string{"|", "    |-> ", "        |-> "} {
		in, ar := Consequence(depth)
		if in+"|"+ar != want {
			t.Errorf("depth %d: %q", depth, in+"|"+ar)
		}
	}
}

// TestJUnitTotals: the totals are the suites' sums whatever the caller set,
// and the document parses back with its failure.
func TestJUnitTotals(t *testing.T) {
	s := Suite{Name: "lib.so"}
	s.Add(Case{Name: "ok", Classname: "struct"})
	s.Add(Case{Name: "bad", Classname: "struct", Failure: &Failure{Message: "moved", Type: "incompatible", Text: "moved <&>"}})
	s.Add(Case{Name: "gone", Classname: "struct", Skipped: &Skipped{Message: "absent"}})
	var b bytes.Buffer
	if err := JUnit(&b, Suites{Name: "run", Tests: 99, Suites: []Suite{s}}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), xml.Header) || !strings.HasSuffix(b.String(), "</testsuites>\n") {
		t.Errorf("header or trailing newline missing:\n%s", b.String())
	}
	var back Suites
	if err := xml.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Tests != 3 || back.Failures != 1 || back.Skipped != 1 || back.Suites[0].Cases[1].Failure.Text != "moved <&>" {
		t.Errorf("totals %d/%d/%d, failure %+v", back.Tests, back.Failures, back.Skipped, back.Suites[0].Cases[1].Failure)
	}
}

func TestJSONIndent(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("%q", b.String())
	}
}
