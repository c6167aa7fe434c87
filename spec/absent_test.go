package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// olderDrop is the test release whose nrt_instance_info_t lacks two fields
// the runtime knows, and which records header compile provenance.
const olderDrop = "testdata/absent/2.20.0-older"

func TestAbsentRowsLoad(t *testing.T) {
	s, err := LoadDir(olderDrop)
	if err != nil {
		t.Fatal(err)
	}
	st := s.StructByName("nrt_instance_info_t")
	if st == nil || st.Size != 8 || len(st.Fields) != 2 || len(st.Absent) != 2 {
		t.Fatalf("nrt_instance_info_t: %+v", st)
	}
	a := st.AbsentByName("arch_name")
	if a == nil || a.T == nil || a.T.Size() != 16 || a.Conf != High || !strings.Contains(a.Source, "no arch_name") {
		t.Fatalf("arch_name absent row: %+v", a)
	}
	if p := s.PosOf(&a.Fact, "name"); filepath.Base(p.File) != "structs.toml" || p.Line != 23 || p.Col != 3 {
		t.Errorf("arch_name absent row's name at %s, want structs.toml:23:3", p)
	}
	if st.AbsentByName("family") != nil {
		t.Error("family is a field, not absent")
	}
	// The parent release's rows are untouched: 2.31.24 has the fields.
	if p := s.StructByName("nrt_version_t"); p == nil || len(p.Absent) != 0 {
		t.Errorf("an inherited struct gained absent rows: %+v", p)
	}
	h := s.Release.Headers
	if !h.Written() || h.Tree != "include" || strings.Join(h.Prelude, ",") != "stddef.h,stdint.h,stdbool.h,assert.h" ||
		len(h.Include) != 1 || len(h.IncludeDirs) != 2 || len(h.CFlags) != 1 || len(h.Order) != 2 || h.Conf != High {
		t.Errorf("[release.headers]: %+v", h)
	}
	b, err := json.Marshal(s.View())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"absent":[{"name":"arch_name","type":"char[16]","conf":"HIGH"}`, `"headers":{"tree":"include","prelude":["stddef.h",`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JSON view lacks %s", want)
		}
	}
	if p := s.PosOf(&h.Fact, "tree"); filepath.Base(p.File) != "release.toml" || p.Line != 13 {
		t.Errorf("[release.headers] tree at %s, want release.toml:13", p)
	}
}

// TestHeadersNotInherited: a release derived from one made from headers
// does not claim the parent's compile options.
func TestHeadersNotInherited(t *testing.T) {
	root := t.TempDir()
	parent := filepath.Join(root, "2.20.0-older")
	copyDir(t, olderDrop, parent)
	child := filepath.Join(root, "2.20.1")
	writeFile(t, child, "release.toml", "[release]\nname = \"2.20.1\"\nderived_from = \"2.20.0-older\"\nconf = \"INFERRED\"\nsource = \"test\"\n")
	s, err := LoadDir(child)
	if err != nil {
		t.Fatal(err)
	}
	if s.Release.Headers.Written() {
		t.Errorf("the child inherited [release.headers]: %+v", s.Release.Headers)
	}
	if st := s.StructByName("nrt_instance_info_t"); st == nil || len(st.Absent) != 2 {
		t.Errorf("the child lost the parent's absent rows: %+v", st)
	}
}

// TestAbsentRoundTrip: the writer writes absent rows and header provenance
// so that what it writes loads to the same release and writes again byte
// for byte.
func TestAbsentRoundTrip(t *testing.T) {
	s, err := LoadDir(olderDrop)
	if err != nil {
		t.Fatal(err)
	}
	first := writeSpec(t, s)
	for _, want := range []string{"\n  [[struct.absent]]\n  name = \"arch_name\"\n  type = \"char[16]\"\n  conf = \"HIGH\"\n",
		"\n[release.headers]\ntree = \"include\"\nprelude = [\"stddef.h\", \"stdint.h\", \"stdbool.h\", \"assert.h\"]\n"} {
		if !strings.Contains(first, want) {
			t.Errorf("written spec lacks %q", want)
		}
	}
	dir := filepath.Join(t.TempDir(), "2.20.0-older")
	writeFile(t, dir, "spec.toml", first)
	again, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("the written spec does not load: %v", err)
	}
	if second := writeSpec(t, again); second != first {
		t.Errorf("write -> load -> write is not byte-identical")
	}

	// The same rows built in memory (as release new builds them) write the
	// same text and assemble to the same rows.
	st := s.StructByName("nrt_instance_info_t")
	files := map[string]*File{
		"release.toml": {Rows: &Spec{Release: Release{Name: "2.20.0-older", DerivedFrom: Default, Headers: s.Release.Headers, Fact: Fact{Conf: Inferred, Source: "test"}}}},
		"structs.toml": {Rows: &Spec{Structs: []*Struct{st}}},
	}
	mem, err := Assemble(filepath.Join(t.TempDir(), "2.20.0-older"), "", files)
	if err != nil {
		t.Fatal(err)
	}
	if got := mem.StructByName("nrt_instance_info_t"); len(got.Absent) != 2 || got.Absent[0].T == nil {
		t.Errorf("assembled absent rows: %+v", got.Absent)
	}
	if !mem.Release.Headers.Written() || mem.Release.Headers.Tree != "include" {
		t.Errorf("assembled headers: %+v", mem.Release.Headers)
	}
	var b bytes.Buffer
	w := &Writer{W: &b}
	w.File(files["structs.toml"])
	if !strings.Contains(b.String(), "[[struct.absent]]\n  name = \"device_revision\"\n  type = \"char[8]\"") {
		t.Errorf("Writer.File left out the absent rows:\n%s", b.String())
	}
}

// TestAbsentErrors: each bad absent row or headers table is one error at
// the key's file:line:col.
func TestAbsentErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, repl, at, want string
	}{
		{"field and absent", "structs.toml", `name = "arch_name"`, `name = "size"`, `name = "size"` + "\n  type = \"char[16]\"",
			"[absent] nrt_instance_info_t.size is marked absent, but the struct lists it as a field at "},
		{"Go name of a field", "structs.toml", `name = "arch_name"`, `name = "Size"`, `name = "Size"`,
			"[absent] nrt_instance_info_t.Size is marked absent, but the field size at "},
		{"twice", "structs.toml", `name = "device_revision"`, `name = "arch_name"`, `name = "arch_name"` + "\n  type = \"char[8]\"",
			"[unique] nrt_instance_info_t.arch_name is marked absent twice (first at "},
		{"no identifier", "structs.toml", `name = "arch_name"`, `name = "arch name"`, `name = "arch name"`,
			`[absent] nrt_instance_info_t: absent field "arch name" cannot be emitted as C`},
		{"unknown type", "structs.toml", `type = "char[16]"`, `type = "arch_t[16]"`, `type = "arch_t[16]"`,
			"[type] nrt_instance_info_t.arch_name (absent): arch_t is no builtin"},
		{"no type", "structs.toml", `type = "char[16]"`, `type = ""`, `type = ""`,
			"[required] nrt_instance_info_t.arch_name (absent): type is required"},
		{"no source", "structs.toml", `source = "test: the older drop's nrt_instance_info_t has no arch_name"`, `source = ""`, `source = ""`,
			"[conf] nrt_instance_info_t.arch_name (absent): source is empty"},
		{"no tree", "release.toml", `tree = "include"`, `tree = ""`, `tree = ""`, "[headers] [release.headers] needs tree"},
		{"prelude", "release.toml", `"stdbool.h"`, `"stdbool"`, `prelude = [`, `[headers] [release.headers] prelude[2] = "stdbool": not a header name`},
		{"unknown key", "release.toml", `order = [`, `odrer = [`, `odrer = [`, `[unknown-key] unknown key "odrer"; [release.headers] accepts: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "2.20.0-older")
			copyDir(t, olderDrop, dir)
			p := filepath.Join(dir, tc.file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			src := strings.Replace(string(data), tc.old, tc.repl, 1)
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			i := strings.Index(src, tc.at)
			if i < 0 {
				t.Fatalf("%q not in the edited file", tc.at)
			}
			line := strings.Count(src[:i], "\n") + 1
			_, err = LoadDir(dir)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want errors, got %v", err)
			}
			if len(errs) != 1 {
				t.Fatalf("want one error, got %d:\n%v", len(errs), errs)
			}
			e := errs[0]
			if !strings.Contains(e.Error(), tc.want) || filepath.Base(e.Pos.File) != tc.file || e.Pos.Line != line || e.Pos.Col < 1 {
				t.Errorf("got %v\nwant %q at %s:%d", e, tc.want, tc.file, line)
			}
		})
	}
}

func writeSpec(t *testing.T, s *Spec) string {
	t.Helper()
	var b bytes.Buffer
	w := &Writer{W: &b}
	w.Spec(s)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, to, e.Name(), string(data))
	}
}

// TestOneLinePerFault: one bad key is one error, however many rules it
// breaks: a field name written twice (a duplicate, and a clash of Go
// fields), a field name that is no identifier (neither a C member nor
// valid), a struct written twice (its name, its tag, its Go names), and a
// struct written twice in a derived release, which the merge would
// otherwise decide silently.
func TestOneLinePerFault(t *testing.T) {
	dup := func(src string) string {
		i := strings.Index(src, "[[struct]]\nname = \"nrt_instance_info_t\"")
		j := strings.Index(src[i+1:], "\n[[struct]]\n") + i + 1
		return src + "\n" + src[i:j] + "\n"
	}
	for _, tc := range []struct {
		name, release, file string
		edit                func(string) string
		want                string
	}{
		{"field twice", Default, "structs_nrt.toml", func(s string) string {
			return strings.Replace(s, `name = "device_revision"`, `name = "arch_name"`, 1)
		}, "[unique] nrt_instance_info_t.arch_name is declared twice"},
		{"field name no identifier", Default, "structs_nrt.toml", func(s string) string {
			return strings.Replace(s, `name = "device_revision"`, `name = "device revision"`, 1)
		}, `nrt_instance_info_t: field name "device revision" is not a C identifier`},
		{"struct twice", Default, "structs_nrt.toml", dup, `[unique] struct name "nrt_instance_info_t" is already used (first at `},
		{"struct twice in a derived release", "2.20.0-older", "structs.toml", dup, `[unique] struct name "nrt_instance_info_t" is already used (first at `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dir string
			if tc.release == Default {
				dir = copyRelease(t, Default)
			} else {
				dir = filepath.Join(t.TempDir(), tc.release)
				copyDir(t, olderDrop, dir)
			}
			p := filepath.Join(dir, tc.file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.edit(string(data))), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = LoadDir(dir)
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) || strings.Count(err.Error(), "\n") != 0 {
				t.Fatalf("got %v\nwant one error line containing %q", err, tc.want)
			}
		})
	}
}
