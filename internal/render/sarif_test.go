package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func testRun(fs ...SARIFResult) SARIFRun {
	return SARIFRun{Tool: "nrtabi", Version: "t", SourceRoot: "/src", Anchor: "/src/inputs/lib.so",
		Rules:    []SARIFRule{{ID: "size", Short: "size", Level: LevelError}, {ID: "offset", Short: "moved", Level: LevelError}},
		Findings: fs}
}

// TestSARIFShape: rules sorted and named by index, a file under the
// source root relative under SRCROOT, one outside it logical only (its
// path kept in properties), a hostile path escaped, a waiver an external
// suppression, consequences related locations.
func TestSARIFShape(t *testing.T) {
	b, err := SARIFBytes(testRun(
		SARIFResult{RuleID: "size", Level: LevelError, Message: "s: size", Key: "s",
			Place:   Place{File: "/src/inc/a b\n.h", Line: 3, Logical: []Logical{{Name: "s", FullyQualifiedName: "s", Kind: "type"}}},
			Related: []Related{{Message: "forced", Place: Place{File: "/src/inc/a.h", Line: 4}}},
			Waived:  &Waiver{Who: "ana", Why: "known"}},
		SARIFResult{RuleID: "offset", Level: LevelWarning, Message: "t.f moved", Key: "t.f", Place: Place{File: "/usr/include/t.h", Line: 9}},
		SARIFResult{RuleID: "offset", Level: LevelWarning, Message: "u moved", Key: "u", Place: Place{File: "/src/a:b/u.h"}},
		SARIFResult{RuleID: "size", Level: LevelError, Message: "no file", Key: "x", Place: Place{Logical: []Logical{{Name: "x"}}}},
	))
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct{ Rules []struct{ ID string } }
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct{ URI, URIBaseID string }
					}
					Properties map[string]string
				}
				RelatedLocations []struct{ ID int }
				Suppressions     []struct {
					Kind, Justification string
					Properties          map[string]string
				}
			}
		}
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.Tool.Driver.Rules[0].ID != "offset" || run.Results[0].RuleIndex != 1 || run.Results[1].RuleIndex != 0 {
		t.Errorf("rules not sorted or indexed: %s", b)
	}
	r0, r1 := run.Results[0], run.Results[1]
	if l := r0.Locations[0].PhysicalLocation; l == nil || l.ArtifactLocation.URI != "inc/a%20b%0A.h" || l.ArtifactLocation.URIBaseID != SourceRootID {
		t.Errorf("under the root: %+v", r0.Locations[0])
	}
	if l := r1.Locations[0].PhysicalLocation; l == nil || l.ArtifactLocation.URI != "usr/include/t.h" || l.ArtifactLocation.URIBaseID != FileRootID {
		t.Errorf("outside the root: %+v", r1.Locations[0])
	}
	if l := run.Results[2].Locations[0].PhysicalLocation; l == nil || l.ArtifactLocation.URI != "./a:b/u.h" {
		t.Errorf("a colon in the first segment: %+v", run.Results[2].Locations[0])
	}
	if l := run.Results[3].Locations[0].PhysicalLocation; l == nil || l.ArtifactLocation.URI != "inputs/lib.so" || run.Results[3].Locations[0].Properties["anchor"] == "" {
		t.Errorf("a fact with no file not at the anchor: %+v", run.Results[3].Locations[0])
	}
	if len(r0.Suppressions) != 1 || r0.Suppressions[0].Kind != "external" || r0.Suppressions[0].Justification != "known" || r0.Suppressions[0].Properties["who"] != "ana" {
		t.Errorf("waiver: %+v", r0.Suppressions)
	}
	if len(r0.RelatedLocations) != 1 || r0.RelatedLocations[0].ID != 1 {
		t.Errorf("related: %+v", r0.RelatedLocations)
	}
}

// TestSARIFRefuses: a finding of a rule not listed, and a log over the
// upload limit, are errors, and nothing is written.
func TestSARIFRefuses(t *testing.T) {
	var w bytes.Buffer
	if err := SARIF(&w, testRun(SARIFResult{RuleID: "nope", Message: "x"})); err == nil || !strings.Contains(err.Error(), `rule "nope"`) || w.Len() != 0 {
		t.Errorf("unlisted rule: %v, %d bytes", err, w.Len())
	}
	big := SARIFResult{RuleID: "size", Message: strings.Repeat("m", MaxSARIF), Key: "s"}
	if err := SARIF(&w, testRun(big)); err == nil || !strings.Contains(err.Error(), "10485760-byte limit") || w.Len() != 0 {
		t.Errorf("over the limit: %v, %d bytes", err, w.Len())
	}
}

// TestSARIFHomeless: a result with no file and no anchor is written, and
// an invocation notification counts it (code scanning would refuse it).
func TestSARIFHomeless(t *testing.T) {
	run := testRun(SARIFResult{RuleID: "size", Level: LevelError, Message: "no file", Key: "x"})
	run.Anchor = ""
	b, err := SARIFBytes(run)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"toolExecutionNotifications"`) || !strings.Contains(string(b), "1 results have no file") {
		t.Errorf("no notification:\n%s", b)
	}
}
