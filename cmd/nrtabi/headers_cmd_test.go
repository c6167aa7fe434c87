package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The header tree layoutcheck's tests use: modelled on the public Neuron
// include directory, with planted differences from the default release.
const neuronInclude = "../../layoutcheck/testdata/neuron-include"

func needCC(t *testing.T) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
}

// TestHeadersCommands: check --headers reports the planted differences
// (exit 12), extract --headers then check --spec is clean, release new
// --headers writes a release whose structs name the headers, and a header
// set that does not compile exits 1 with the compiler's first error.
func TestHeadersCommands(t *testing.T) {
	needCC(t)
	rc, out, errw := runLayoutCLI("check", "--headers", neuronInclude)
	if rc != 12 {
		t.Fatalf("check --headers: exit %d, want 12\n%s%s", rc, out, errw)
	}
	for _, want := range []string{
		"== headers " + neuronInclude + " (sha256 ",
		"! nrt_instance_info_t.family: type int32_t, spec u32 (field retyped) [type, incompatible]",
		"~ enc_neuron_device_info_t.histogram_config: type renamed enc_histogram_config_t -> nec_histogram_cfg_t",
		"OK           nec_version_info_t",
		"verdict: INCOMPATIBLE: 1 incompatible and 3 compatible change(s) (exit 12)", // each fact once (docs/layoutcheck.md#one-grading): the six members found in the renamed type's opaque range are under its rename
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check --headers output lacks %q:\n%s", want, out)
		}
	}
	if rc, _, _ := runLayoutCLI("check", "--headers", neuronInclude, "--include", "nrt/nrt_version.h"); rc != 0 {
		t.Errorf("check --headers --include nrt/nrt_version.h: exit %d, want 0", rc)
	}

	frag := filepath.Join(t.TempDir(), "frag")
	if err := os.MkdirAll(frag, 0o755); err != nil {
		t.Fatal(err)
	}
	if rc, _, errw := runLayoutCLI("extract", "--headers", neuronInclude, "-o", filepath.Join(frag, "structs.toml")); rc != 0 {
		t.Fatalf("extract --headers: exit %d %s", rc, errw)
	}
	if rc, out, errw := runLayoutCLI("check", "--spec", frag, "--headers", neuronInclude); rc != 0 || !strings.Contains(out, "CLEAN") {
		t.Errorf("check --spec (extracted) --headers: exit %d\n%s%s", rc, out, errw)
	}

	root := t.TempDir()
	rc, out, errw = runLayoutCLI("release", "new", "--spec", "2.31.24", "--name", "2.31.99-headers", "--out", filepath.Join(root, "2.31.99-headers"), "--headers", neuronInclude)
	if rc != 0 {
		t.Fatalf("release new --headers: exit %d\n%s%s", rc, out, errw)
	}
	for _, want := range []string{
		"read headers " + neuronInclude + " (sha256 ",
		"new: 2.31.99-headers from " + filepath.Join(root, "2.31.99-headers"),
		"compatible         field-type-renamed     enc_neuron_device_info_t.histogram_config",
		"incompatible       field-retyped          nrt_instance_info_t.family",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("release new --headers output lacks %q:\n%s", want, out)
		}
	}
	structs, err := os.ReadFile(filepath.Join(root, "2.31.99-headers", "structs.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(structs), `source = "nrtabi extract from headers `+neuronInclude+" (sha256 ") || strings.Contains(string(structs), "nrtabi-headers-") {
		t.Errorf("the release's structs do not name the headers:\n%s", structs[:min(len(structs), 800)])
	}

	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "bad.h"), []byte("struct s { undeclared_t a; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"check"}, {"extract"}, {"release", "new", "--name", "x", "--out", filepath.Join(root, "x")}} {
		rc, out, errw := runLayoutCLI(append(cmd, "--headers", bad)...)
		if rc != 1 || out != "" || !strings.Contains(errw, "bad.h: does not compile: bad.h:1:") || !strings.Contains(errw, "fix: ") {
			t.Errorf("%v --headers (broken): exit %d, stdout %q, stderr %q", cmd, rc, out, errw)
		}
	}
	none := t.TempDir()
	if err := os.WriteFile(filepath.Join(none, "other.h"), []byte("struct unrelated { int a; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("declares none of the %d structs", len(def.Structs))
	if rc, out, errw := runLayoutCLI("check", "--headers", none); rc != 1 || out != "" || !strings.Contains(errw, want) {
		t.Errorf("headers without a spec struct: exit %d, stdout %q, stderr %q", rc, out, errw)
	}
	if rc, out, errw := runLayoutCLI("extract", "--headers", none); rc != 1 || out != "" || !strings.Contains(errw, "nrtabi extract: headers "+none+" (sha256 ") {
		t.Errorf("extract from headers without a spec struct: exit %d, stdout %q, stderr %q", rc, out, errw)
	}
	if rc, _, _ := runLayoutCLI("check", "--include", "a.h", "x.so"); rc != 2 {
		t.Errorf("--include without --headers: exit %d, want 2", rc)
	}
	if rc, _, _ := runLayoutCLI("extract", "--headers", neuronInclude, "x.so"); rc != 2 {
		t.Errorf("extract with both --headers and a FILE: exit %d, want 2", rc)
	}
}

// TestCheckJUnit: --format junit is XML a CI parses, one case per struct.
func TestCheckJUnit(t *testing.T) {
	needCC(t)
	rc, out, errw := runLayoutCLI("check", "--format", "junit", "--headers", neuronInclude)
	if rc != 12 {
		t.Fatalf("exit %d: %s", rc, errw)
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Suites) != 2 || len(doc.Suites[0].Cases) != 5 || doc.Failures != 1 { // four structs and the enum nec_pod_type_t
		t.Fatalf("suites %d, failures %d:\n%s", len(doc.Suites), doc.Failures, out)
	}
	for _, c := range doc.Suites[0].Cases {
		if (c.Failure != nil) != (c.Name == "nrt_instance_info_t") {
			t.Errorf("case %s: failure %+v", c.Name, c.Failure)
		}
	}
	if rc, _, _ := runLayoutCLI("check", "--format", "xml", "--headers", neuronInclude); rc != 2 {
		t.Errorf("--format xml: exit %d, want 2", rc)
	}
}

// TestReleaseNewHeadersPathStaysText: an ordinary header directory whose
// path holds "*/ int injected; /*" once became code in the generated
// header (the path was pasted into struct sources). release new now writes
// it escaped, the release validates, and the C generated from it compiles
// without defining injected.
func TestReleaseNewHeadersPathStaysText(t *testing.T) {
	needCC(t)
	hdrs := filepath.Join(t.TempDir(), "x*", " int injected; ", "*y")
	if err := os.CopyFS(hdrs, os.DirFS(neuronInclude)); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "2.31.98-path")
	if rc, o, errw := runLayoutCLI("release", "new", "--spec", "2.31.24", "--name", "2.31.98-path", "--out", out, "--headers", hdrs); rc != 0 {
		t.Fatalf("release new --headers: exit %d\n%s%s", rc, o, errw)
	}
	s, err := spec.LoadDir(out)
	if err != nil {
		t.Fatalf("the new release does not validate: %v", err)
	}
	gen := t.TempDir()
	if rc, o, errw := runCLI("gen", "--spec", out, "--out", gen); rc != 0 {
		t.Fatalf("gen: exit %d\n%s%s", rc, o, errw)
	}
	header, err := os.ReadFile(filepath.Join(gen, "c", "nrtabi.h"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(header), "*/ int injected; /*") {
		t.Fatalf("the header holds the raw path")
	}
	// The planted layout differences fail the header's assertions, so the
	// preprocessor is the judge: comments are gone from its output, and
	// an injected declaration would be left.
	tu := filepath.Join(gen, "c", "check.c")
	if err := os.WriteFile(tu, []byte("#define _GNU_SOURCE\n#include \"nrtabi.h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := cc.Output("-E", "-P", tu)
	if err != nil {
		t.Fatalf("preprocess the header of %s: %v", s.Release.Name, err)
	}
	if strings.Contains(o, "injected") {
		t.Fatalf("the preprocessed header holds injected")
	}
}

// TestCheckHeadersEach: check --headers on a tree where an unrelated
// header does not compile warns on stderr, naming it and its own first
// error, and checks the rest; a header defining a spec struct that does
// not compile is exit 1 naming the struct; -I supplies what it includes.
func TestCheckHeadersEach(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nrt/nrt_version.h", "#include <stdint.h>\ntypedef struct nrt_version { uint64_t rt_major, rt_minor, rt_patch, rt_maintenance; char rt_detail[128]; char git_hash[64]; } nrt_version_t;\n")
	write("nrt/assert.h", "#include <stdint.h>\nstatic_assert(sizeof(uint32_t) == 4, \"u32\");\n")
	// Without the prelude, static_assert without <assert.h> is the fault
	// (with it, the header compiles: layoutcheck TestHeadersPrelude).
	rc, out, errw := runLayoutCLI("check", "--require", "nrt_version_t", "--no-prelude", "--headers", dir)
	wantWarn := "nrtabi check: warning: " + dir + "/nrt/assert.h: does not compile on its own (declares no spec struct), left out; nrt/assert.h:2:15: error: expected declaration specifiers"
	if rc != 0 || !strings.HasPrefix(errw, wantWarn) || strings.Count(errw, "\n") != 1 || !strings.Contains(out, "note: "+dir+"/nrt/assert.h: does not compile on its own (declares no spec struct), left out; ") || !strings.Contains(out, "verdict: CLEAN") {
		t.Errorf("exit %d, want 0\nstdout %s\nstderr %q\nwant stderr %q", rc, out, errw, wantWarn)
	}
	write("nrt/nrt.h", "#include <ndl/neuron_driver_shared.h>\nstruct nrt_instance_info { int family; };\n")
	rc, out, errw = runLayoutCLI("check", "--headers", dir)
	want := "nrtabi check: " + dir + "/nrt/nrt.h: declares the spec struct nrt_instance_info_t but does not compile on its own: nrt/nrt.h:1:10: fatal error: ndl/neuron_driver_shared.h: No such file or directory; fix: if it includes a header the tree does not ship, give that header's directory with -I DIR"
	if rc != 1 || out != "" || !strings.HasPrefix(errw, want) {
		t.Errorf("exit %d, want 1\nstdout %s\nstderr %q\nwant %q", rc, out, errw, want)
	}
	drv := t.TempDir()
	if err := os.MkdirAll(filepath.Join(drv, "ndl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drv, "ndl", "neuron_driver_shared.h"), []byte("#define NDL 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// With -I the struct is read (and differs from the spec: exit 8).
	if rc, out, errw := runLayoutCLI("check", "--headers", dir, "-I", drv); rc != 8 || !strings.Contains(out, "nrt_instance_info_t") {
		t.Errorf("with -I: exit %d, want 8\n%s%s", rc, out, errw)
	}
	if rc, _, _ := runLayoutCLI("check", "-I", drv, "x.so"); rc != 2 {
		t.Errorf("-I without --headers: exit %d, want 2", rc)
	}
}
