package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// waiverFile writes a waiver file of these [[waiver]] bodies.
func waiverFile(t *testing.T, bodies ...string) string {
	t.Helper()
	var b strings.Builder
	for _, body := range bodies {
		b.WriteString("[[waiver]]\n" + body + "why = \"accepted in review\"\nwho = \"abi-team\"\nuntil = 2030-01-31\n\n")
	}
	p := filepath.Join(t.TempDir(), "waivers.toml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The diff of the synthetic release has three incompatible facts; waived,
// they are reported as waived and set no bit; an unused waiver is a note,
// or exit 1 under --fail-on-unused-waivers; an expired one fails the run.
// Cost: four in-process diffs of embedded specs, well under a second.
func TestDiffWaivers(t *testing.T) {
	all := waiverFile(t,
		"symbol = \"NCCOM_COMPAT_ID\"\nrule = \"compat-id\"\nreleases = \"2.32.0-synthetic\"\n",
		"symbol = \"neuronNetGetProperties\"\nrule = \"forward-added\"\n",
		"struct = \"enc_nccl_comm_node\"\nfield = \"comm_gen\"\nrule = \"added\"\n") // the grading's rule name
	rc, out, errs := runLayoutCLI("diff", "--waivers", all, "--format", "json", "2.31.24", "2.32.0-synthetic")
	if rc != 0 {
		t.Fatalf("every incompatible change waived: exit %d\n%s%s", rc, out, errs)
	}
	var rep struct {
		Changes []struct {
			Kind   string
			Waived *struct{ At, Who, Until string }
		}
		Summary struct{ Incompatible, Waived, Exit int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Waived != 3 || rep.Summary.Incompatible != 0 || rep.Summary.Exit != 0 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	if w := rep.Changes[0].Waived; w == nil || w.At != all+":1:1" || w.Who != "abi-team" || w.Until != "2030-01-31" {
		t.Fatalf("first change %+v", rep.Changes[0])
	}
	// SARIF (docs/sarif.md#waivers): each waived fact a result with an
	// external suppression carrying the why and the who.
	rc, out, errs = runLayoutCLI("diff", "--waivers", all, "--format", "sarif", "2.31.24", "2.32.0-synthetic")
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID       string
				Suppressions []struct {
					Kind, Justification string
					Properties          map[string]string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || rc != 0 || len(log.Runs) != 1 {
		t.Fatalf("SARIF: exit %d, %v\n%s%s", rc, err, out, errs)
	}
	suppressed := 0
	for _, r := range log.Runs[0].Results {
		if len(r.Suppressions) == 1 && r.Suppressions[0].Kind == "external" && r.Suppressions[0].Justification == "accepted in review" && r.Suppressions[0].Properties["who"] == "abi-team" {
			suppressed++
		}
	}
	if suppressed != 3 {
		t.Errorf("SARIF: %d suppressed results, want 3:\n%s", suppressed, out)
	}
	// Outside its release range a waiver holds for nothing.
	other := waiverFile(t, "symbol = \"NCCOM_COMPAT_ID\"\nrule = \"compat-id\"\nreleases = \"2.33.0..\"\n")
	rc, _, errs = runLayoutCLI("diff", "--waivers", other, "2.31.24", "2.32.0-synthetic")
	if rc != 8 || !strings.Contains(errs, "waiver "+other+":1:1 (compat-id NCCOM_COMPAT_ID in 2.33.0..) matched no finding") {
		t.Fatalf("unused: exit %d\n%s", rc, errs)
	}
	rc, _, errs = runLayoutCLI("diff", "--waivers", other, "--fail-on-unused-waivers", "2.31.24", "2.32.0-synthetic")
	if rc != 1 || !strings.Contains(errs, "1 waiver(s) matched no finding (--fail-on-unused-waivers)") {
		t.Fatalf("--fail-on-unused-waivers: exit %d\n%s", rc, errs)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1896134400") // 2030-02-01, the day after until
	rc, out, errs = runLayoutCLI("diff", "--waivers", all, "2.31.24", "2.32.0-synthetic")
	if rc != 1 || out != "" || !strings.Contains(errs, all+":1:1: waiver of compat-id NCCOM_COMPAT_ID in 2.32.0-synthetic (abi-team) expired on 2030-01-31") {
		t.Fatalf("expired: exit %d\n%s%s", rc, out, errs)
	}
}

// check: a planted shrunk struct exits 8; waived, the text, JSON and JUnit
// say so and the run exits 0; an invalid file is refused at its line.
// Cost: one gcc compile of the generated header.
func TestCheckWaivers(t *testing.T) {
	shrunk := typesObject(t, "\tchar device_revision[8]; /* +24 HIGH */\n", "\tchar device_revision[4];\n")
	w := waiverFile(t, "struct = \"nrt_instance_info_t\"\nfield = \"device_revision\"\nrule = \"field-size\"\nreleases = \"2.31.24\"\n")
	rc, out, errs := runLayoutCLI("check", "--waivers", w, shrunk)
	if rc != 0 || !strings.Contains(out, "waived by "+w+":1:1 (abi-team, until 2030-01-31): accepted in review") || !strings.Contains(out, "CLEAN") || !strings.Contains(out, "1 waived") {
		t.Fatalf("waived check: exit %d\n%s%s", rc, out, errs)
	}
	rc, out, _ = runLayoutCLI("check", "--waivers", w, "--format", "json", shrunk)
	var rep struct {
		Waived, Incompatible, Exit int
		Findings                   []struct{ Waived *struct{ At string } }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rc != 0 || rep.Waived != 1 || rep.Incompatible != 0 || len(rep.Findings) != 1 || rep.Findings[0].Waived == nil {
		t.Fatalf("JSON: exit %d, %v, %+v", rc, err, rep)
	}
	rc, out, _ = runLayoutCLI("check", "--waivers", w, "--format", "junit", shrunk)
	if rc != 0 || strings.Contains(out, "<failure") || !strings.Contains(out, "waived by "+w) {
		t.Fatalf("JUnit: exit %d\n%s", rc, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[[waiver]]\nstruct = \"nrt_instance_info_t\"\nrule = \"size\"\nwho = \"me\"\nuntil = 2030-01-01\nsevere = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs = runLayoutCLI("check", "--waivers", bad, shrunk)
	if rc != 1 || out != "" || !strings.Contains(errs, bad+":6:1: unknown key \"waiver.severe\"") {
		t.Fatalf("invalid: exit %d\n%s%s", rc, out, errs)
	}
}
