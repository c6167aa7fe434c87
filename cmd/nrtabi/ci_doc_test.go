package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/sariftest"
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

// The action's files, from this package's directory.
const (
	actionYML    = "../../action.yml"
	actionScript = "../../.ci/action.sh"
)

// checkActionYML holds action.yml to its three steps: nrtabi built from
// the action's own directory with the runner's Go, the script, and the
// SARIF upload that runs also when the step failed; and nothing fetched
// but by Go.
func checkActionYML(t *testing.T) {
	data, err := os.ReadFile(actionYML)
	if err != nil {
		t.Fatal(err)
	}
	y := string(data)
	install := strings.Index(y, "run: CGO_ENABLED=0 go install ./cmd/nrtabi")
	script := strings.Index(y, `bash "$GITHUB_ACTION_PATH/.ci/action.sh"`)
	upload := strings.Index(y, "uses: github/codeql-action/upload-sarif@")
	for what, at := range map[string]int{"the install from the action path": install, "the script": script, "the SARIF upload": upload} {
		if at < 0 {
			t.Errorf("%s: no step for %s", actionYML, what)
		}
	}
	if !(install < script && script < upload) {
		t.Errorf("%s: the steps are not install, script, upload in that order", actionYML)
	}
	if !strings.Contains(y, "using: composite") || !strings.Contains(y, "working-directory: ${{ github.action_path }}") {
		t.Errorf("%s: not a composite action installing from its own path", actionYML)
	}
	if !strings.Contains(y[upload-200:upload], "if: always()") {
		t.Errorf("%s: the upload does not run when the step fails", actionYML)
	}
	for _, net := range []string{"curl ", "wget ", "http://", "https://", "git clone"} {
		if strings.Contains(y, net) {
			t.Errorf("%s: fetches with %q; the runner's Go is the one download", actionYML, net)
		}
	}
}

// TestCIDoc runs the action's step (.ci/action.sh) as a runner would: the
// built nrtabi on PATH, a checkout to run in, GITHUB_OUTPUT. Compatible
// drift passes, an incompatible field fails the step, a missing header
// directory fails it too, a diff whose incompatible changes are all waived
// passes with each one suppressed; every run leaves a SARIF log code
// scanning takes, and JUnit or JSON. It also holds action.yml and the
// GitHub and GitLab jobs of docs/ci.md to the script. Cost: four header
// compiles per check case (three runs and the diff's), about ten seconds.
func TestCIDoc(t *testing.T) {
	needCC(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("skipping: the CI step is a bash script and there is no bash (apt-get install bash): %v", err)
	}
	checkActionYML(t)
	yamls := fencedBlocks(t, ciPage, "yaml")
	if len(yamls) != 2 {
		t.Fatalf("%s: %d yaml blocks, want the GitHub and the GitLab job", ciPage, len(yamls))
	}
	if gh := yamls[0]; !regexp.MustCompile(`uses: nrtabi/nrtabi@\S+`).MatchString(gh) || !strings.Contains(gh, "args: ") ||
		!strings.Contains(gh, "security-events: write") || !strings.Contains(gh, "if: always()") {
		t.Errorf("the GitHub job does not use the action with args, the upload's permission and kept reports:\n%s", gh)
	}
	gl := yamls[1]
	install, run := strings.Index(gl, "go install ./cmd/nrtabi"), strings.Index(gl, `bash "$dir/.ci/action.sh"`)
	if install < 0 || run < install || !strings.Contains(gl, "when: always") || !strings.Contains(gl, "junit: reports/nrtabi-check.xml") {
		t.Errorf("the GitLab job does not install nrtabi, then run .ci/action.sh, keeping the JUnit report:\n%s", gl)
	}
	script, err := filepath.Abs(actionScript)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(nrtabiBinary(t))
	if filepath.Base(nrtabiBinary(t)) != "nrtabi" {
		t.Fatalf("the built binary is %s, not named nrtabi: the script could not find it on PATH", nrtabiBinary(t))
	}
	good := compatibleOnlyTree(t)
	waivers := waiverFile(t,
		"symbol = \"NCCOM_COMPAT_ID\"\nrule = \"compat-id\"\n",
		"symbol = \"neuronNetGetProperties\"\nrule = \"forward-added\"\n",
		"struct = \"enc_nccl_comm_node\"\nfield = \"comm_gen\"\nrule = \"added\"\n")
	for _, c := range []struct {
		name, command, args string
		env                 []string
		exit                int
		failures            bool
		described           string // a change the diff JSON must hold
		suppressed          int    // SARIF results with a suppression
	}{
		{name: "compatible drift", command: "check", args: "--headers " + good, exit: 0},
		{name: "incompatible field", command: "check", args: "--headers INC", exit: 12, failures: true},
		{name: "missing directory", command: "check", args: "--headers " + filepath.Join(t.TempDir(), "no-such-include"), exit: 1, failures: true},
		// An older drop defines a parent opaque type: the artefact says
		// "now described", never an error document.
		{name: "older drop", command: "diff", args: "2.31.24 OLDDROP", exit: 12, described: `"struct-described"`},
		{name: "waived diff", command: "diff", args: "2.31.24 2.32.0-synthetic", env: []string{"NRTABI_WAIVERS=" + waivers}, exit: 0, suppressed: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A diff of release names places its results at their spec
			// rows, files of a checkout of the spec (docs/sarif.md#locations):
			// it runs in this module's root, its reports kept apart.
			checkout, reports := t.TempDir(), "reports"
			if c.command == "diff" {
				root, err := filepath.Abs("../..")
				if err != nil {
					t.Fatal(err)
				}
				checkout, reports = root, filepath.Join(t.TempDir(), "reports")
			}
			inc, _ := filepath.Abs(neuronInclude)
			old, _ := filepath.Abs("../../release/testdata/olddrop/include")
			outputs := filepath.Join(t.TempDir(), "github-output")
			cmd := exec.Command(bash, script)
			cmd.Dir = checkout
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"NRTABI_COMMAND="+c.command, "NRTABI_ARGS="+strings.NewReplacer("INC", inc, "OLDDROP", old).Replace(c.args),
				"GITHUB_OUTPUT="+outputs, "NRTABI_REPORTS="+reports)
			if c.command == "check" {
				cmd.Env = append(cmd.Env, "NRTABI_SPEC=2.31.24")
			}
			cmd.Env = append(cmd.Env, c.env...)
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
			if !filepath.IsAbs(reports) {
				reports = filepath.Join(checkout, reports)
			}
			sarifPath := filepath.Join(reports, "nrtabi-"+c.command+".sarif")
			if o, err := os.ReadFile(outputs); err != nil || !strings.Contains(string(o), "/nrtabi-"+c.command+".sarif\n") || !strings.Contains(string(o), "exit="+strconv.Itoa(c.exit)+"\n") {
				t.Errorf("GITHUB_OUTPUT: %v\n%s", err, o)
			}
			log, err := os.ReadFile(sarifPath)
			if err != nil {
				t.Fatalf("no SARIF for the upload: %v\n%s", err, out)
			}
			var ab *sariftest.Absent
			if err := sariftest.Validate(log); errors.As(err, &ab) {
				t.Logf("not validating against the SARIF schema: %v", err)
			} else if err != nil {
				t.Errorf("SARIF: %v", err)
			}
			if err := sariftest.Upload(log); err != nil {
				t.Errorf("SARIF code scanning would refuse: %v", err)
			}
			if n := strings.Count(string(log), `"suppressions"`); n != c.suppressed {
				t.Errorf("SARIF: %d results with suppressions, want %d", n, c.suppressed)
			}
			if c.command == "check" {
				data, err := os.ReadFile(filepath.Join(reports, "nrtabi-check.xml"))
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
				return
			}
			js, err := os.ReadFile(filepath.Join(reports, "nrtabi-diff.json"))
			var doc map[string]any
			if err != nil || json.Unmarshal(js, &doc) != nil {
				t.Fatalf("diff JSON missing or not JSON (%v):\n%s", err, js)
			}
			if c.described != "" && !strings.Contains(string(js), c.described) {
				t.Errorf("diff JSON lacks %s:\n%s", c.described, js)
			}
		})
	}
}
