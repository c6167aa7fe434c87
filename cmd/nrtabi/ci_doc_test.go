package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ciPage is the CI page whose shell step this test runs.
const ciPage = "../../docs/ci.md"

// fencedBlocks returns the bodies of the page's fenced blocks of one
// language.
func fencedBlocks(t *testing.T, page, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && line == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && line == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

// compatibleOnlyTree is a copy of the vendor-style header tree with its one
// incompatible difference (nrt_instance_info_t.family int32_t, spec u32)
// fixed: what is left is compatible drift only.
func compatibleOnlyTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "include")
	if err := os.CopyFS(dir, os.DirFS(neuronInclude)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "nrt", "nrt.h")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(data), "int32_t family;", "uint32_t family;", 1)
	if fixed == string(data) {
		t.Fatalf("%s: no int32_t family to fix; the fixture changed", p)
	}
	if err := os.WriteFile(p, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCIDoc runs the shell step of docs/ci.md as a CI would: the script
// from the page, the built nrtabi on PATH, a checkout holding the script.
// Compatible drift passes, an incompatible field fails the step, a missing
// header directory fails it too, and every run leaves JUnit a reporter can
// read. It also holds the GitHub and GitLab jobs to the script.
func TestCIDoc(t *testing.T) {
	needCC(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("skipping: the CI step is a bash script and there is no bash: %v", err)
	}
	var script string
	for _, b := range fencedBlocks(t, ciPage, "sh") {
		if strings.HasPrefix(b, "# ci/nrtabi-check.sh") {
			script = b
		}
	}
	if script == "" {
		t.Fatalf("%s: no ```sh block starting with # ci/nrtabi-check.sh", ciPage)
	}
	yamls := fencedBlocks(t, ciPage, "yaml")
	if len(yamls) != 2 {
		t.Fatalf("%s: %d yaml blocks, want the GitHub and the GitLab job", ciPage, len(yamls))
	}
	install := regexp.MustCompile(`go install github\.com/nrtabi/nrtabi/cmd/nrtabi@\S+`)
	for i, y := range yamls {
		for _, want := range []string{"bash ci/nrtabi-check.sh", "reports/nrtabi-check.xml"} {
			if !strings.Contains(y, want) {
				t.Errorf("yaml block %d does not name %q:\n%s", i, want, y)
			}
		}
		if loc := install.FindStringIndex(y); loc == nil || loc[0] > strings.Index(y, "bash ci/nrtabi-check.sh") {
			t.Errorf("yaml block %d does not install nrtabi before the step", i)
		}
		if !strings.Contains(y, "if: always()") && !strings.Contains(y, "when: always") {
			t.Errorf("yaml block %d does not keep the reports when the step fails", i)
		}
	}
	bin := filepath.Dir(nrtabiBinary(t))
	if filepath.Base(nrtabiBinary(t)) != "nrtabi" {
		t.Fatalf("the built binary is %s, not named nrtabi: the script could not find it on PATH", nrtabiBinary(t))
	}
	good := compatibleOnlyTree(t)
	for _, c := range []struct {
		name, include string
		exit          int
		failures      bool
		described     string // a change the diff artefact must hold
	}{
		{"compatible drift", good, 0, false, ""},
		{"incompatible field", neuronInclude, 12, true, ""},
		{"missing directory", filepath.Join(t.TempDir(), "no-such-include"), 1, true, ""},
		// An older drop defines a parent opaque type: the artefact says
		// "now described", never an error document.
		{"older drop", "../../release/testdata/olddrop/include", 12, true, `"struct-described"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkout := t.TempDir()
			if err := os.MkdirAll(filepath.Join(checkout, "ci"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(checkout, "ci", "nrtabi-check.sh"), []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			inc, _ := filepath.Abs(c.include)
			cmd := exec.Command(bash, "ci/nrtabi-check.sh")
			cmd.Dir = checkout
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"NRTABI_SPEC=2.31.24", "NEURON_INCLUDE="+inc)
			out, err := cmd.CombinedOutput()
			rc := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if rc != c.exit {
				t.Errorf("the step exited %d, want %d\n%s", rc, c.exit, out)
			}
			data, err := os.ReadFile(filepath.Join(checkout, "reports", "nrtabi-check.xml"))
			if err != nil {
				t.Fatalf("no JUnit for the reporter: %v\n%s", err, out)
			}
			var suites junitDoc
			if err := xml.Unmarshal(data, &suites); err != nil || len(suites.Suites) == 0 {
				t.Fatalf("JUnit does not parse (%v):\n%s", err, data)
			}
			if (suites.Failures > 0) != c.failures {
				t.Errorf("JUnit failures=%d, want failures: %v\n%s", suites.Failures, c.failures, data)
			}
			if c.exit == 1 && (suites.Suites[0].Cases[0].Name != inc || suites.Suites[0].Cases[0].Failure == nil) {
				t.Errorf("the input error is not a failed case named after %s:\n%s", inc, data)
			}
			js, err := os.ReadFile(filepath.Join(checkout, "reports", "nrtabi-diff.json"))
			var doc map[string]any
			if err != nil || json.Unmarshal(js, &doc) != nil {
				t.Fatalf("diff JSON missing or not JSON (%v):\n%s", err, js)
			}
			if _, isErr := doc["error"]; isErr != (c.exit == 1) {
				t.Errorf("diff JSON error member present: %v, want %v:\n%s", isErr, c.exit == 1, js)
			}
			if c.described != "" && !strings.Contains(string(js), c.described) {
				t.Errorf("diff JSON lacks %s:\n%s", c.described, js)
			}
		})
	}
}
