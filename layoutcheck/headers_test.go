package layoutcheck

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// neuronInclude is a header tree written for these tests, modelled on the
// public layout of the Neuron include directory, with four planted
// differences from spec 2.31.24 (its README lists them).
const neuronInclude = "testdata/neuron-include"

func compileHeaders(t *testing.T, dir string, include ...string) *Headers {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	h, err := CompileHeaders(dir, include)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, "\n")
}

// TestHeadersReportPlanted: checking the header tree against the release
// reports exactly the planted differences, and nothing is written next to
// the headers.
func TestHeadersReportPlanted(t *testing.T) {
	before := treeListing(t, neuronInclude)
	h := compileHeaders(t, neuronInclude)
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{h.Object}, Options{Spec: sp, StructsSrc: "spec/" + sp.Release.Name, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		f.Walk(func(f Finding, _ int) { got = append(got, f.Severity.String()+" "+f.Kind+" "+f.Struct+"."+f.Field) })
	}
	sort.Strings(got)
	want := []string{
		"compatible added-in-opaque enc_neuron_device_info_t.histogram_config.bucket_count",
		"compatible added-in-opaque enc_neuron_device_info_t.histogram_config.bucket_size",
		"compatible added-in-opaque enc_neuron_device_info_t.histogram_config.output_path",
		"compatible added-in-opaque enc_neuron_device_info_t.histogram_config.reserved",
		"compatible added-in-opaque enc_neuron_device_info_t.histogram_config.warmup_iterations",
		"compatible added-in-opaque enc_neuron_device_info_t.histogram_config.warmup_size",
		"compatible added-in-opaque enc_neuron_device_info_t.nc_count",
		"compatible renamed nrt_instance_info_t.device_revision",
		"compatible type-renamed enc_neuron_device_info_t.histogram_config",
		"incompatible type nrt_instance_info_t.family",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	expect(t, r, KindTypeRenamed, Compatible, "histogram_config: type renamed enc_histogram_config_t -> nec_histogram_cfg_t")
	if r.Exit != int(Compatible|Incompatible) {
		t.Errorf("exit %d, want 12", r.Exit)
	}
	var found []string
	for _, s := range r.Files[0].Structs {
		found = append(found, s.Name)
	}
	if strings.Join(found, " ") != "enc_neuron_device_info_t nec_version_info_t nrt_instance_info_t nrt_version_t" {
		t.Errorf("structs found: %v", found)
	}
	fr := r.Files[0]
	if !strings.HasPrefix(fr.Path, "headers "+neuronInclude+" (sha256 ") || len(h.Hash) != 64 || !strings.Contains(fr.Path, h.Hash) {
		t.Errorf("provenance %q (hash %q)", fr.Path, h.Hash)
	}
	if after := treeListing(t, neuronInclude); after != before {
		t.Errorf("compiling wrote next to the headers:\n%s\nbefore:\n%s", after, before)
	}
}

// TestHeadersExtractThenCheck: the fragment extracted from the headers
// checks clean against them, with the headers as its provenance.
func TestHeadersExtractThenCheck(t *testing.T) {
	h := compileHeaders(t, neuronInclude)
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range sp.Structs {
		names = append(names, st.Name)
	}
	var b bytes.Buffer
	if err := release.Extract(h.Object, &b, release.ExtractOptions{Names: names, SkipAbsent: true, Spec: sp}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), h.Object) || !strings.Contains(b.String(), `source = "nrtabi extract from headers `+neuronInclude+" (sha256 "+h.Hash) {
		t.Errorf("provenance does not name the headers:\n%s", b.String()[:min(b.Len(), 1200)])
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{h.Object}, Options{Spec: sp, Structs: frag, StructsSrc: dir, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Exit != 0 || len(r.Files[0].Structs) != 5 { // the four spec structs and nec_histogram_cfg_t
		t.Errorf("exit %d, %d structs: %+v", r.Exit, len(r.Files[0].Structs), r.Findings)
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHeadersConflict: two headers declaring one typedef differently are
// compiled each in its own unit; the duplicate is reported as a note and
// the structs of both are read.
func TestHeadersConflict(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a.h": "#include <stdint.h>\ntypedef uint32_t handle_t;\ntypedef struct nrt_version { uint64_t rt_major, rt_minor, rt_patch, rt_maintenance; char rt_detail[128]; char git_hash[64]; } nrt_version_t;\n",
		"b.h": "#include <stdint.h>\ntypedef uint64_t handle_t;\ntypedef struct nrt_instance_info { uint32_t family, size; char arch_name[16]; char device_revision[8]; } nrt_instance_info_t;\n",
		// The same typedef twice with the same type is no conflict.
		"c.h": "#include <stdint.h>\ntypedef uint32_t shared_t;\n",
		"d.h": "#include <stdint.h>\ntypedef uint32_t shared_t;\n",
	})
	h := compileHeaders(t, dir)
	if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "duplicate declaration of handle_t") || !strings.Contains(h.Notes[0], "b.h:2") || !strings.Contains(h.Notes[0], "previously declared at "+dir+"/a.h:2") {
		t.Fatalf("notes: %q", h.Notes)
	}
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{h.Object}, Options{Spec: sp, StructsSrc: "spec", DebugDirs: []string{t.TempDir()}, Require: []string{"nrt_version_t", "nrt_instance_info_t"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Exit != 0 || len(r.Files[0].Structs) != 2 {
		t.Errorf("exit %d, structs %d: %+v", r.Exit, len(r.Files[0].Structs), r.Findings)
	}
	// Together they compile: one unit, no note.
	if h := compileHeaders(t, dir, "a.h", "c.h", "d.h"); len(h.Notes) != 0 || len(h.Roots) != 3 {
		t.Errorf("compatible headers: notes %q roots %v", h.Notes, h.Roots)
	}
}

// TestHeadersBadInput: each mistake is an *InputError naming the file and
// the fix; a header that does not compile gets the compiler's first error.
func TestHeadersBadInput(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	broken := writeTree(t, map[string]string{
		"ok.h":      "typedef struct fine { int a; } fine_t;\n",
		"sub/bad.h": "typedef struct broken { int a; undeclared_t b; } broken_t;\nstruct also { int; };\n",
	})
	empty := t.TempDir()
	file := filepath.Join(broken, "ok.h")
	for _, c := range []struct {
		name, dir string
		include   []string
		want      []string
	}{
		{"does not compile", broken, nil, []string{"sub/bad.h: does not compile: ", "sub/bad.h:1:", "error: unknown type name", "undeclared_t", "fix: make the header compile on its own"}},
		{"missing dir", filepath.Join(empty, "nope"), nil, []string{"nope: no such file or directory; name the directory holding the headers"}},
		{"a file", file, nil, []string{"ok.h: not a directory; --headers takes the directory"}},
		{"no headers", empty, nil, []string{"no .h files under this directory"}},
		{"unknown include", broken, []string{"nrt/nec.h"}, []string{"--include nrt/nec.h: no such header under the directory"}},
		{"include outside", broken, []string{"/etc/hostname"}, []string{"--include /etc/hostname: not under the headers directory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := CompileHeaders(c.dir, c.include)
			if err == nil {
				h.Close()
				t.Fatal("no error")
			}
			var ie *elfread.InputError
			if !errors.As(err, &ie) {
				t.Errorf("%T, want *InputError: %v", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	// Only the header that compiles: fine.
	h := compileHeaders(t, broken, "ok.h")
	if len(h.Roots) != 1 {
		t.Errorf("roots %v", h.Roots)
	}
}

// TestHeadersHash: the hash follows the headers' content and paths, and
// removing the set removes its object.
func TestHeadersHash(t *testing.T) {
	a := writeTree(t, map[string]string{"x.h": "struct s { int a; };\n"})
	b := writeTree(t, map[string]string{"x.h": "struct s { long a; };\n"})
	c := writeTree(t, map[string]string{"y.h": "struct s { int a; };\n"})
	d := writeTree(t, map[string]string{"x.h": "struct s { int a; };\n"})
	ha, hb, hc, hd := compileHeaders(t, a), compileHeaders(t, b), compileHeaders(t, c), compileHeaders(t, d)
	if ha.Hash == hb.Hash || ha.Hash == hc.Hash || ha.Hash != hd.Hash {
		t.Errorf("hashes: %s %s %s %s", ha.Hash, hb.Hash, hc.Hash, hd.Hash)
	}
	obj := ha.Object
	ha.Close()
	if _, err := os.Stat(obj); !os.IsNotExist(err) {
		t.Errorf("after Close the object is still there: %v", err)
	}
	if l, ok := specmatch.Label(obj); ok {
		t.Errorf("after Close the label remains: %s", l)
	}
}

// FuzzCompilerMessages: what is read from the compiler's output (the first
// error, the previous declaration, the conflict note) never panics and is
// one line.
func FuzzCompilerMessages(f *testing.F) {
	f.Add("In file included from all.c:3:\n/h/b.h:2:18: error: conflicting types for ‘handle_t’; have ‘uint64_t’\n/h/a.h:2:18: note: previous declaration of ‘handle_t’ with type ‘uint32_t’\n")
	f.Add("x.h:1:12: error: unknown type name 'undeclared_t'\n")
	f.Add("cc1: fatal error: all.c: No such file or directory\ncompilation terminated.\n")
	f.Add(": note: previous\n:::: note: previous declaration\nerror:")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		err := &cc.Error{Args: []string{"-c"}, Output: out, Err: errors.New("exit status 1")}
		first, prev := firstError(err), previousDecl(err)
		note := conflictNote(first, "/h", "h")
		for _, s := range []string{first, prev, note} {
			if strings.Contains(s, "\n") {
				t.Fatalf("not one line: %q (from %q)", s, out)
			}
		}
		h := &Headers{Dir: "h", abs: "/h"}
		if m := h.message(err); strings.ContainsAny(m, "\n\r\x1b\x07") || len(m) > maxMessage*4+8 || strings.ContainsAny(note, "\x1b\x07") {
			t.Fatalf("message %q, note %q: control bytes or over the bound (from %q)", m, note, out)
		}
		tr := includeTrack{entered: map[string]bool{}}
		for _, line := range strings.Split(out, "\n") {
			tr.keep(line)
		}
		if len(tr.stack) > maxTrackDepth || len(tr.entered) > maxEntered {
			t.Fatalf("-H stack of %d, %d headers entered", len(tr.stack), len(tr.entered))
		}
	})
}
