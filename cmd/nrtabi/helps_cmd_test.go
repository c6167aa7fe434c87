package main

import (
	"bytes"
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

	"github.com/nrtabi/nrtabi/internal/cli"
	"github.com/nrtabi/nrtabi/layoutcheck"
)

// oneLine fails unless s is exactly one line.
func oneLine(t *testing.T, what, s string) {
	t.Helper()
	if strings.Count(strings.TrimSuffix(s, "\n"), "\n") != 0 || !strings.HasSuffix(s, "\n") {
		t.Errorf("%s: not one line:\n%s", what, s)
	}
}

// TestUnknownNamesOneLine: a typo is answered by one line naming the
// nearest valid name and -h, exit 2, never the package's "flag provided but
// not defined" and the whole usage (17 and 29 lines before).
func TestUnknownNamesOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chekc"}, `nrtabi: unknown command "chekc"; did you mean "check"? (nrtabi -h for more)`},
		{[]string{"dif", "a", "b"}, `nrtabi: unknown command "dif"; did you mean "diff"?`},
		{[]string{"xyzzy"}, `nrtabi: unknown command "xyzzy"; the commands are: check, compat, diff, extract, gen, help, release, show, spec, version (nrtabi -h for more)`},
		{[]string{"spec", "valdate"}, `nrtabi spec: unknown command "valdate"; did you mean "validate"? (nrtabi spec -h for more)`},
		{[]string{"release", "nwe"}, `nrtabi release: unknown command "nwe"; did you mean "new"?`},
		{[]string{"spec", "--halp"}, `nrtabi spec: unknown flag "--halp"; did you mean "--help"?`},
		{[]string{"relese", "new"}, `nrtabi: unknown command "relese"; did you mean "release"?`},
		{[]string{"help", "chek"}, `nrtabi help: unknown command "chek"; did you mean "check"?`},
		{[]string{"--verison"}, `nrtabi: unknown flag "--verison"; did you mean "--version"?`},
		{[]string{"check", "--formt", "json", "a.so"}, `nrtabi check: unknown flag "--formt"; did you mean "--format"? (nrtabi check -h for more)`},
		{[]string{"check", "-formt", "json", "a.so"}, `nrtabi check: unknown flag "-formt"; did you mean "--format"?`},
		{[]string{"diff", "--fail-no", "none", "a", "b"}, `nrtabi diff: unknown flag "--fail-no"; did you mean "--fail-on"?`},
		{[]string{"show", "--header", "d", "s"}, `nrtabi show: unknown flag "--header"; did you mean "--headers"?`},
		{[]string{"extract", "--qqqqqqqq", "a.so"}, `nrtabi extract: unknown flag "--qqqqqqqq"; the flags are: --all, --debug-dir, --headers, --include, --spec, --struct, -j, -o`},
		{[]string{"check", "--spec"}, `nrtabi check: flag needs an argument: -spec (nrtabi check -h for more)`},
	} {
		rc, out, errw := runCLI(c.args...)
		if rc != cli.ExitUsage || out != "" || !strings.Contains(errw, c.want) {
			t.Errorf("nrtabi %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), rc, out, errw, c.want)
		}
		oneLine(t, strings.Join(c.args, " "), errw)
	}
	// -h still prints the whole help, to stdout, and exits 0.
	if rc, out, errw := runCLI("check", "-h"); rc != 0 || !strings.Contains(out, "flags:") || errw != "" {
		t.Errorf("check -h: exit %d\n%s%s", rc, out, errw)
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"check", "diff", "extract", "show", "spec", "version"}
	for typed, want := range map[string]string{"chekc": "check", "chec": "check", "CHECK": "check", "shwo": "show", "x": "", "": "", "versoin": "version", "dfif": "diff", "zzzzzz": ""} {
		if got := cli.Suggest(typed, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", typed, got, want)
		}
	}
	// A long word is no typo: bounded, no suggestion, one line.
	long := strings.Repeat("c", 100000)
	if rc, _, errw := runCLI(long); rc != 2 || strings.Contains(errw, "did you mean") || len(errw) > 300+len(long)*2 {
		t.Errorf("long word: exit %d, %d bytes", rc, len(errw))
	}
}

// TestVersionFlags: --version and -V are the version command, with the Go
// toolchain and the embedded releases.
func TestVersionFlags(t *testing.T) {
	want := regexp.MustCompile(`^nrtabi github\.com/nrtabi/nrtabi \S+\nbuilt with go1\.\S+ \S+/\S+\nembedded spec releases: 2\.20\.0-synthetic, 2\.31\.24, `)
	for _, flag := range []string{"--version", "-V", "-version", "version"} {
		rc, out, errw := runCLI(flag)
		if rc != 0 || errw != "" || !want.MatchString(out) {
			t.Errorf("%s: exit %d\n%s%s", flag, rc, out, errw)
		}
	}
}

// TestHelpListsExits: every command's -h ends with its exit statuses; the
// grading commands list 4, 8 and 12 (diff -h lacked 12).
func TestHelpListsExits(t *testing.T) {
	for _, n := range newApp().Names() {
		rc, out, _ := runCLI(append(strings.Fields(n), "-h")...)
		if rc != 0 || !strings.Contains(out, "\nexit status: 0 ") || !strings.Contains(out, "2 usage error") {
			t.Errorf("%s -h: exit %d, lacks the exit statuses:\n%s", n, rc, out)
		}
	}
	for _, n := range []string{"check", "diff", "show"} {
		_, out, _ := runCLI(n, "-h")
		for _, w := range []string{"4 compatible", "8 incompatible", "12 both"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s -h lacks %q", n, w)
			}
		}
	}
	for _, n := range []string{"check", "diff"} {
		if _, out, _ := runCLI(n, "-h"); !strings.Contains(out, "-fail-on") {
			t.Errorf("%s -h lacks --fail-on", n)
		}
	}
}

// TestArgumentsInTheWrongPlace: a struct or release name where a file goes
// is named, with the command line that works, never "cannot open".
func TestArgumentsInTheWrongPlace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(file, []byte("not opened"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", file, "enc_glb_comm"}, `arguments in the wrong order: "` + file + `" is a file and "enc_glb_comm" is not; the struct comes first: nrtabi show enc_glb_comm ` + file},
		{[]string{"check", "2.31.24", file}, `"2.31.24" is a release, not a file; name the spec with --spec: nrtabi check --spec 2.31.24 ` + file},
		{[]string{"check", file, "enc_glb_comm_t"}, `"enc_glb_comm_t" is a struct of the spec, not a file; to require it: nrtabi check --require enc_glb_comm_t ` + file},
		{[]string{"extract", "enc_glb_comm", file}, `"enc_glb_comm" is not a file; a struct is named with --struct: nrtabi extract --struct enc_glb_comm ` + file},
		{[]string{"extract", file, "enc_glb_comm"}, `nrtabi extract --struct enc_glb_comm ` + file},
		{[]string{"extract", "enc_glb_comm"}, `"enc_glb_comm" is a struct of the spec, not a file; a struct is named with --struct: nrtabi extract --struct enc_glb_comm FILE`},
	} {
		rc, _, errw := runCLI(c.args...)
		if rc != cli.ExitUsage || !strings.Contains(errw, c.want) || strings.Contains(errw, "cannot open") {
			t.Errorf("nrtabi %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), rc, errw, c.want)
		}
	}
	// A missing file that names nothing else is still the reader's error.
	if rc, _, errw := runCLI("check", filepath.Join(t.TempDir(), "gone.so")); rc != 1 || !strings.Contains(errw, "gone.so: cannot open") {
		t.Errorf("missing file: exit %d %s", rc, errw)
	}
}

// TestExtractIntoMissingDirectory: -o into a directory that does not exist
// makes it; a path through a file is refused in one line naming the user's
// path, never the temporary file's, and leaves nothing behind.
func TestExtractIntoMissingDirectory(t *testing.T) {
	obj := typesObject(t, "", "")
	root := t.TempDir()
	dest := filepath.Join(root, "frag", "deeper", "structs.toml")
	if rc, _, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", dest, obj); rc != 0 {
		t.Fatalf("extract -o into a missing directory: exit %d %s", rc, errw)
	}
	if rc, out, errw := runCLI("check", "--spec", filepath.Dir(dest), "--role", "none", obj); rc != 0 {
		t.Errorf("the fragment written does not check clean: exit %d\n%s%s", rc, out, errw)
	}
	blocker := filepath.Join(root, "afile")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(blocker, "sub", "x.toml")
	rc, _, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", bad, obj)
	want := "nrtabi extract: -o " + bad + ": " + blocker + " is not a directory\n"
	if rc != 1 || errw != want {
		t.Errorf("-o through a file: exit %d, stderr %q, want %q", rc, errw, want)
	}
	if rc, _, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", root, obj); rc != 1 || !strings.Contains(errw, "-o "+root+": is a directory") {
		t.Errorf("-o DIR: exit %d %s", rc, errw)
	}
	// A directory that cannot be written: the error names the user's
	// path and no temporary name; what was made for it is removed.
	ro := filepath.Join(root, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Create(filepath.Join(ro, "probe")); err == nil {
		f.Close()
		os.Remove(filepath.Join(ro, "probe"))
		t.Log("running as root: the read-only directory case cannot fail here; the through-a-file case above covers the naming")
	} else {
		bad := filepath.Join(ro, "new", "x.toml")
		rc, _, errw := runCLI("extract", "--struct", "nec_version_info_t", "-o", bad, obj)
		if rc != 1 || !strings.Contains(errw, bad) || strings.Contains(errw, ".x.toml.") {
			t.Errorf("read-only: exit %d %q", rc, errw)
		}
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestErrorDocuments: an input error in --format json is a JSON document
// with the schema and an error member; in junit a failed test case named
// after the input; stderr keeps the one line; the status is non-zero.
func TestErrorDocuments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone.so")
	notELF := filepath.Join(t.TempDir(), "text.so")
	if err := os.WriteFile(notELF, []byte("hello, not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args         []string
		schema       string
		input, words string
		rc           int
	}{
		{[]string{"check", "--format", "json", missing}, layoutcheck.Schema, missing, "cannot open", 1},
		{[]string{"check", "--format", "json", notELF}, layoutcheck.Schema, notELF, "not an ELF file", 1},
		{[]string{"check", "--format", "json", "--spec", "9.9.9", notELF}, layoutcheck.Schema, "9.9.9", "neither a directory nor an embedded release", 2},
		{[]string{"check", "--format", "json", "--fail-on", "sometimes", notELF}, layoutcheck.Schema, "the command line", `--fail-on "sometimes"`, 2},
		{[]string{"diff", "--format", "json", "2.31.24", "9.9.9"}, diffSchema, "9.9.9", "neither a directory nor an embedded release", 2},
		{[]string{"diff", "--format", "json", "2.31.24", notELF}, diffSchema, notELF, "not an ELF file", 1},
		{[]string{"diff", "--format", "json", "--fail-no", "none", "2.31.24", "2.31.24"}, diffSchema, "the command line", `unknown flag "--fail-no"; did you mean "--fail-on"?`, 2},
	} {
		rc, out, errw := runCLI(c.args...)
		var doc struct {
			Schema string
			Error  struct{ Message, Input string }
			Exit   int
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%v: stdout is not JSON (%v): %q", c.args, err, out)
			continue
		}
		if rc != c.rc || doc.Exit != rc || doc.Schema != c.schema || doc.Error.Input != c.input || !strings.Contains(doc.Error.Message, c.words) {
			t.Errorf("%v: exit %d, doc %+v; want exit %d, schema %s, input %s, message with %q", c.args, rc, doc, c.rc, c.schema, c.input, c.words)
		}
		if !strings.HasPrefix(errw, "nrtabi "+c.args[0]+": ") || !strings.Contains(errw, c.words) {
			t.Errorf("%v: stderr lost its line: %q", c.args, errw)
		}
		if strings.HasPrefix(doc.Error.Message, "nrtabi ") || strings.Contains(doc.Error.Message, "usage: ") {
			t.Errorf("%v: message carries the command name or the usage line: %q", c.args, doc.Error.Message)
		}
	}
	rc, out, errw := runCLI("check", "--format", "junit", missing)
	var suites junitDoc
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatalf("junit: stdout does not parse (%v): %q", err, out)
	}
	if rc != 1 || suites.Failures != 1 || len(suites.Suites) != 1 || len(suites.Suites[0].Cases) != 1 ||
		suites.Suites[0].Cases[0].Name != missing || suites.Suites[0].Cases[0].Failure == nil ||
		!strings.Contains(suites.Suites[0].Cases[0].Failure.Message, "cannot open") {
		t.Errorf("junit: exit %d %+v\n%s", rc, suites, out)
	}
	oneLine(t, "junit stderr", errw)
	// Text mode is unchanged: nothing on stdout.
	if rc, out, _ := runCLI("check", missing); rc != 1 || out != "" {
		t.Errorf("text: exit %d stdout %q", rc, out)
	}
	// A report that was written is not followed by an error document; the
	// error document's schema is the report's, once the report states one.
	rc, out, _ = runCLI("diff", "--format", "json", "2.31.24", "2.31.24")
	var rep struct{ Schema string }
	if rc != 0 || strings.Contains(out, `"error"`) || json.Unmarshal([]byte(out), &rep) != nil {
		t.Errorf("clean json diff: exit %d %s", rc, out)
	}
	if rep.Schema != "" && rep.Schema != diffSchema {
		t.Errorf("diff's report says schema %q, its error document %q", rep.Schema, diffSchema)
	}
}

// TestErrorDocumentPython: the acceptance line, with the built binary and
// Python's json.load, when python3 is installed.
func TestErrorDocumentPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("skipping: no python3 to json.load with (%v); TestErrorDocuments parses the same document with encoding/json", err)
	}
	missing := filepath.Join(t.TempDir(), "gone.so")
	cmd := exec.Command(nrtabiBinary(t), "check", "--format", "json", missing)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("nrtabi check --format json %s: %v, want exit 1", missing, err)
	}
	load := exec.Command(py, "-c", `import json,sys; e = json.load(sys.stdin)["error"]; print(e["input"])`)
	load.Stdin = &out
	got, err := load.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != missing {
		t.Errorf("python3 json.load: %v %s", err, got)
	}
}

// TestFailOnMatrix: --fail-on none|compatible|incompatible against clean,
// compatible-only and incompatible inputs, for diff (spec sides) and check
// (header trees). The report says the status the process exits with.
func TestFailOnMatrix(t *testing.T) {
	renamed := brokenSpec(t, "structs_nrt.toml", `name = "device_revision"`, `name = "revision"`)
	want := map[string][3]int{ // clean, compatible, incompatible
		"":             {0, 4, 8},
		"none":         {0, 0, 0},
		"compatible":   {0, 4, 8},
		"incompatible": {0, 0, 8},
	}
	for level, exits := range want {
		for i, sides := range [][2]string{{"2.31.24", "2.31.24"}, {"2.31.24", renamed}, {"2.31.24", "2.32.0-synthetic"}} {
			args := []string{"diff", "--format", "json", sides[0], sides[1]}
			if level != "" {
				args = append(args, "--fail-on", level)
			}
			rc, out, errw := runCLI(args...)
			var r struct {
				Summary struct{ Compatible, Incompatible, Exit int }
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %v %s", args, err, errw)
			}
			if rc != exits[i] || r.Summary.Exit != rc {
				t.Errorf("%v: exit %d (report %d), want %d", args, rc, r.Summary.Exit, exits[i])
			}
			if i == 1 && (r.Summary.Compatible == 0 || r.Summary.Incompatible != 0) {
				t.Fatalf("the compatible case is not compatible only: %+v", r.Summary)
			}
		}
	}
	needCC(t)
	good := compatibleOnlyTree(t)
	wantCheck := map[string][3]int{
		"":             {0, 4, 12},
		"none":         {0, 0, 0},
		"compatible":   {0, 4, 12},
		"incompatible": {0, 0, 12},
	}
	for level, exits := range wantCheck {
		for i, args := range [][]string{
			{"check", "--headers", neuronInclude, "--include", "nrt/nrt_version.h"},
			{"check", "--headers", good},
			{"check", "--headers", neuronInclude},
		} {
			if level != "" {
				args = append(args, "--fail-on", level)
			}
			rc, out, errw := runCLI(args...)
			if rc != exits[i] || !strings.Contains(out, "(exit "+itoa(exits[i])+")") {
				t.Errorf("%v: exit %d, want %d\n%s%s", args, rc, exits[i], out, errw)
			}
		}
	}
	// Errors are errors whatever --fail-on says.
	if rc, _, _ := runCLI("check", "--fail-on", "none", filepath.Join(t.TempDir(), "gone.so")); rc != 1 {
		t.Errorf("--fail-on none on a missing file: exit %d, want 1", rc)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestShowHeaders: show --headers DIR STRUCT reads the struct from a header
// tree as check --headers does, and names the tree, never the temporary
// object.
func TestShowHeaders(t *testing.T) {
	needCC(t)
	rc, out, errw := runCLI("show", "--headers", neuronInclude, "nrt_instance_info_t")
	if rc != 12 || !strings.Contains(out, "in headers "+neuronInclude+" (sha256 ") ||
		!strings.Contains(out, "int32_t family;") || !strings.Contains(out, "<-- MISMATCH: type") {
		t.Errorf("show --headers: exit %d\n%s%s", rc, out, errw)
	}
	rc, _, errw = runCLI("show", "--headers", neuronInclude, "no_such_struct")
	if rc != 1 || !strings.Contains(errw, "headers "+neuronInclude) || strings.Contains(errw, ".o") {
		t.Errorf("show --headers, no struct: exit %d %s", rc, errw)
	}
	if rc, _, errw := runCLI("show", "--headers", neuronInclude, "a", "b"); rc != 2 || !strings.Contains(errw, "want one STRUCT") {
		t.Errorf("show --headers with two arguments: exit %d %s", rc, errw)
	}
	if rc, out, _ := runCLI("show", "--c", "--headers", neuronInclude, "nec_version_info_t"); rc != 0 || !strings.Contains(out, "_Static_assert(sizeof(") {
		t.Errorf("show --c --headers: exit %d\n%s", rc, out)
	}
}

// TestDiffHeaderSide: a diff side may be a directory of headers, read like
// release new --headers in memory; an error names the side.
func TestDiffHeaderSide(t *testing.T) {
	needCC(t)
	rc, out, errw := runCLI("diff", "2.31.24", neuronInclude)
	if rc != 12 || !regexp.MustCompile(`incompatible +field-retyped +nrt_instance_info_t\.family`).MatchString(out) ||
		!strings.Contains(out, "field-type-renamed") {
		t.Errorf("diff SPEC HEADERS: exit %d\n%s%s", rc, out, errw)
	}
	if rc, out, errw := runCLI("diff", neuronInclude, neuronInclude); rc != 0 {
		t.Errorf("diff HEADERS HEADERS: exit %d\n%s%s", rc, out, errw)
	}
	if rc, _, _ := runCLI("diff", "--fail-on", "incompatible", "2.31.24", compatibleOnlyTree(t)); rc != 0 {
		t.Errorf("diff --fail-on incompatible on compatible drift: exit %d", rc)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "nec.h"), []byte("struct nec_version_info { int x; } oops oops;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, _, errw = runCLI("diff", "2.31.24", broken)
	if rc != 1 || !strings.Contains(errw, "NEW side "+broken) {
		t.Errorf("broken header side: exit %d %s", rc, errw)
	}
	if rc, _, errw := runCLI("diff", "--include", "x.h", "2.31.24", "2.31.24"); rc != 2 || !strings.Contains(errw, "neither OLD nor NEW is one") {
		t.Errorf("--include without a header side: exit %d %s", rc, errw)
	}
}

// TestGeneratedTextNamesRealFlags: every `nrtabi CMD --flag` a generated
// file names (release new's release.toml header, extract's fragment
// header, the printed next steps) is a flag CMD has; the header once named
// --from, which no longer existed.
func TestGeneratedTextNamesRealFlags(t *testing.T) {
	obj := typesObject(t, "", "")
	root := t.TempDir()
	dest := filepath.Join(root, "2.31.99-flags")
	rc, out, errw := runCLI("release", "new", "--spec", "2.31.24", "--name", "2.31.99-flags", "-o", dest, "--binary", obj)
	if rc != 0 {
		t.Fatalf("release new: exit %d\n%s%s", rc, out, errw)
	}
	texts := map[string]string{"release new's output": out}
	ents, err := os.ReadDir(dest)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dest, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		texts[e.Name()] = string(data)
	}
	var frag bytes.Buffer
	if rc := run([]string{"extract", "--struct", "nec_version_info_t", obj}, &frag, &bytes.Buffer{}); rc != 0 {
		t.Fatalf("extract: exit %d", rc)
	}
	texts["extract's fragment"] = frag.String()
	n := checkNamedFlags(t, texts)
	if n == 0 {
		t.Fatal("no `nrtabi CMD --flag` found in the generated text: the test would pass on anything")
	}
	// The checker catches the flag the header used to name.
	if m := namedFlagErrors(map[string]string{"planted": "made by `nrtabi release new --from 2.31.24`"}); len(m) != 1 || !strings.Contains(m[0], "--from") {
		t.Errorf("a planted --from is not caught: %v", m)
	}
}

// checkNamedFlags fails on each unknown flag and returns how many it checked.
func checkNamedFlags(t *testing.T, texts map[string]string) int {
	t.Helper()
	for _, e := range namedFlagErrors(texts) {
		t.Error(e)
	}
	return namedFlagCount(texts)
}

var namedCommand = regexp.MustCompile(`nrtabi ((?:release |spec )?[a-z]+)((?: +(?:--?[a-zA-Z][-a-zA-Z]*|[^\s` + "`" + `'"-][^\s` + "`" + `'"]*))*)`)

func namedFlags(texts map[string]string, each func(where, cmd, flag string)) {
	for where, text := range texts {
		for _, m := range namedCommand.FindAllStringSubmatch(text, -1) {
			for _, w := range strings.Fields(m[2]) {
				if strings.HasPrefix(w, "-") {
					each(where, m[1], strings.SplitN(strings.TrimLeft(w, "-"), "=", 2)[0])
				}
			}
		}
	}
}

func namedFlagCount(texts map[string]string) int {
	n := 0
	namedFlags(texts, func(string, string, string) { n++ })
	return n
}

func namedFlagErrors(texts map[string]string) []string {
	var errs []string
	namedFlags(texts, func(where, cmd, name string) {
		if !commandHasFlag(cmd, name) {
			errs = append(errs, where+": names `nrtabi "+cmd+" --"+name+"`, and "+cmd+" has no such flag")
		}
	})
	return errs
}

// commandHasFlag asks the command itself: its -h lists every flag.
func commandHasFlag(cmd, name string) bool {
	var out bytes.Buffer
	if run(append(strings.Fields(cmd), "-h"), &out, &bytes.Buffer{}) != 0 {
		return false
	}
	return strings.Contains(out.String(), "\n  -"+name+" ") || strings.Contains(out.String(), "\n  -"+name+"\n")
}

// TestErrorDocumentHeaders: a header that does not compile is the input
// the error document names, never the temporary object.
func TestErrorDocumentHeaders(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "nrt", "nec.h")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("struct nec_version_info { int x; } oops oops;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, _ := runCLI("check", "--format", "json", "--headers", dir)
	var doc struct {
		Error struct{ Message, Input string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || rc != 1 || doc.Error.Input != bad || !strings.Contains(doc.Error.Message, "does not compile") {
		t.Errorf("exit %d, %v, %+v", rc, err, doc)
	}
}
