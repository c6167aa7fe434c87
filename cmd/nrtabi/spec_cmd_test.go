package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/internal/spectest"
	"github.com/nrtabi/nrtabi/spec"
)

func runCLI(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	rc := run(args, &out, &errw)
	return rc, out.String(), errw.String()
}

func TestSpecValidate(t *testing.T) {
	rc, out, errw := runCLI("spec", "validate", "--spec", "2.31.24")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errw)
	}
	for _, want := range []string{"valid", "37 forward", "16+4 reverse", "0xc967b8..0xc968d8", "NRT_2.0.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// brokenSpec copies the embedded release to disk with one line changed.
func brokenSpec(t *testing.T, file, old, repl string) string {
	dir := spectest.CopyRelease(t, spec.Embedded, spec.Default)
	spectest.Replace(t, dir, file, old, repl)
	return dir
}

func TestSpecValidateReportsEveryError(t *testing.T) {
	dir := brokenSpec(t, "release.toml", "forward = 37", "forward = 36\nrevrse_nec = 1")
	rc, _, errw := runCLI("spec", "validate", "--spec", dir)
	if rc != 1 {
		t.Fatalf("exit %d, want 1", rc)
	}
	for _, want := range []string{"release.toml:", "[count]", "[unknown-key] unknown key \"revrse_nec\"", "(did you mean \"reverse_nec\"?)", "2 error(s)"} {
		if !strings.Contains(errw, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errw)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"spec", "validate", "--bogus"},
		{"spec", "show", "--format", "yaml"},
		{"gen", "--spec", "2.31.24"},
		{"gen", "--all", "--spec", "2.31.24"},
		{"spec"},
		{"spec", "frobnicate"},
		{"release"},
	} {
		if rc, _, _ := runCLI(args...); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
	}
	// A spec that names nothing is a usage error listing what exists.
	if rc, _, errw := runCLI("spec", "validate", "--spec", "9.9.9"); rc != 2 || !strings.Contains(errw, `spec "9.9.9": neither a directory nor an embedded release; the embedded releases are: 2.20.0-synthetic, 2.31.24, 2.32.0-synthetic`) {
		t.Errorf("unknown release: exit %d: %s", rc, errw)
	}
	if rc, _, errw := runCLI("spec", "validate", "--spec", "/nonexistent/spec"); rc != 2 || !strings.Contains(errw, "/nonexistent/spec: no such directory") {
		t.Errorf("missing dir: exit %d: %s", rc, errw)
	}
}

func TestSpecShowJSON(t *testing.T) {
	rc, out, errw := runCLI("spec", "show", "--spec", "2.31.24", "--format", "json")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errw)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"release", "version_nodes", "forward", "reverse", "constants", "structs"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	var v struct {
		Forward []struct {
			Name, Slot, Trampoline string
			Index                  int
			Guarded                bool
			Signature              struct {
				Returns string
				Params  []struct{ Name, Type string }
			}
		}
		Reverse []struct{ Name, Version, Shape string }
		Structs []struct {
			Name   string
			Size   int
			Fields []struct {
				Name, Type   string
				Offset, Size int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Forward) != 37 || v.Forward[0].Slot != "0xc968d8" || v.Forward[36].Slot != "0xc967b8" {
		t.Errorf("forward: %d rows, first slot %s, last %s", len(v.Forward), v.Forward[0].Slot, v.Forward[len(v.Forward)-1].Slot)
	}
	guarded := 0
	for _, f := range v.Forward {
		if f.Guarded {
			guarded++
		}
	}
	if guarded != 35 || v.Forward[1].Signature.Params[0].Type != "char[128]" {
		t.Errorf("guarded %d, GetUniqueId params %+v", guarded, v.Forward[1].Signature)
	}
	if len(v.Reverse) != 20 || v.Reverse[0].Version != "NRT_2.0.0" || v.Reverse[0].Shape != "inline" {
		t.Errorf("reverse: %+v", v.Reverse[:1])
	}
	sizes := map[string]int{}
	for _, s := range v.Structs {
		sizes[s.Name] = s.Size
		if s.Name == "nec_version_info_t" {
			last := s.Fields[5]
			if last.Name != "compatibility_version" || last.Offset != 48 || last.Size != 8 || last.Type != "u64" {
				t.Errorf("nec_version_info_t field 5: %+v", last)
			}
		}
	}
	for name, size := range map[string]int{"enc_glb_comm": 564408, "enc_nccl_comm_node": 88, "nec_version_info_t": 56, "nrt_version_t": 224} {
		if sizes[name] != size {
			t.Errorf("%s: %d bytes, want %d", name, sizes[name], size)
		}
	}
}

// TestGenWritesNothingOnError: a broken spec leaves the output directory alone.
func TestGenWritesNothingOnError(t *testing.T) {
	dir := brokenSpec(t, "structs_nrt.toml", "size = 564408", "size = 564400")
	out := t.TempDir()
	sentinel := filepath.Join(out, "c", "nrtabi.h")
	os.MkdirAll(filepath.Dir(sentinel), 0o755)
	os.WriteFile(sentinel, []byte("good\n"), 0o644)
	rc, _, errw := runCLI("gen", "--spec", dir, "--out", out)
	if rc != 1 || !strings.Contains(errw, "structs_nrt.toml:") {
		t.Fatalf("exit %d, stderr %s", rc, errw)
	}
	if b, _ := os.ReadFile(sentinel); string(b) != "good\n" {
		t.Errorf("the existing file was replaced: %q", b)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("output directory gained files: %v", entries)
	}
}

// TestSpecValidateRefusesInjection: spec text that gen once emitted as code
// (a "*/" in a source, an enum tag "x; int y", a version node
// "A { global: z; }", a struct name with a space, NUL or ESC) makes
// `spec validate` exit 1 with the error at hostile.toml:line:col, escaped.
func TestSpecValidateRefusesInjection(t *testing.T) {
	for _, c := range hostile.InjectionCases() {
		t.Run(c.Name, func(t *testing.T) {
			dir := spectest.CopyRelease(t, spec.Embedded, spec.Default)
			if err := c.Apply(dir); err != nil {
				t.Fatal(err)
			}
			rc, _, errw := runCLI("spec", "validate", "--spec", dir)
			if rc != 1 {
				t.Fatalf("exit %d, want 1: %s", rc, errw)
			}
			first := strings.SplitN(errw, "\n", 2)[0]
			if !strings.HasPrefix(first, filepath.Join(dir, "hostile.toml")+":") || !strings.Contains(first, c.Want) {
				t.Errorf("want hostile.toml:line:col: ... %s, got %q", c.Want, first)
			}
			if strings.ContainsAny(errw, "\x00\x1b") {
				t.Errorf("stderr carries control bytes: %q", errw)
			}
		})
	}
}
