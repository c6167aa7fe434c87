package spec

import (
	"fmt"
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"
)

// TestCompiledEqualsTOML holds zcompiled.go to the TOML it was generated
// from: every embedded release loads from the compiled form (so it is
// current) and equals, field by field and with its type expressions bound,
// the validated TOML load.
func TestCompiledEqualsTOML(t *testing.T) {
	for _, r := range Releases() {
		t.Run(r, func(t *testing.T) {
			c := loadCompiled(r)
			if c == nil {
				t.Fatalf("release %s has no current compiled form: run 'make generate'", r)
			}
			want, err := LoadTOML(r)
			if err != nil {
				t.Fatal(err)
			}
			got := *c
			want.index, want.removals = nil, nil
			if path, a, b := firstDifference(reflect.ValueOf(got), reflect.ValueOf(*want), "Spec"); path != "" {
				t.Fatalf("compiled %s differs from its TOML at %s: %s vs %s", r, path, a, b)
			}
			if !reflect.DeepEqual(got, *want) {
				t.Fatal("compiled form differs from the TOML load")
			}
		})
	}
}

// TestCompiledPositions: an error on a compiled release still names the
// key's own line, read on demand from the embedded file.
func TestCompiledPositions(t *testing.T) {
	c, err := Load(Default)
	if err != nil {
		t.Fatal(err)
	}
	if c.index != nil {
		t.Fatal("Load did not use the compiled form")
	}
	want, err := LoadTOML(Default)
	if err != nil {
		t.Fatal(err)
	}
	st, wst := c.Structs[0], want.Structs[0]
	for _, key := range []string{"size", "name", ""} {
		if got, w := c.PosOf(&st.Fact, key), want.PosOf(&wst.Fact, key); got != w {
			t.Errorf("PosOf(%s, %q) = %v, TOML load says %v", st.Name, key, got, w)
		}
	}
	f, wf := &st.Fields[len(st.Fields)-1], &wst.Fields[len(wst.Fields)-1]
	if got, w := c.PosOf(&f.Fact, "type"), want.PosOf(&wf.Fact, "type"); got != w || got.Line == 0 {
		t.Errorf("PosOf(field type) = %v, TOML load says %v", got, w)
	}
}

// TestStaleCompiledIgnored: a compiled release is used only while every
// embedded file it was read from is unchanged — its own and its parent's —
// and no file was added to or removed from those directories.
func TestStaleCompiledIgnored(t *testing.T) {
	c := compiledOf(t, "2.32.0-synthetic")
	fresh := func() fstest.MapFS {
		m := fstest.MapFS{}
		_ = fs.WalkDir(Embedded, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := fs.ReadFile(Embedded, p)
				m[p] = &fstest.MapFile{Data: data}
			}
			return nil
		})
		return m
	}
	if !c.currentIn(fresh()) {
		t.Fatal("an unchanged copy of the embedded files is taken for stale")
	}
	edits := map[string]func(fstest.MapFS){
		"own file edited": func(m fstest.MapFS) {
			f := m["2.32.0-synthetic/structs.toml"]
			f.Data = append([]byte(nil), f.Data...)
			f.Data[len(f.Data)/2] ^= 1
		},
		"parent file edited": func(m fstest.MapFS) {
			f := m["2.31.24/forward.toml"]
			f.Data = append(append([]byte(nil), f.Data...), '\n')
		},
		"file added":   func(m fstest.MapFS) { m["2.31.24/zz.toml"] = &fstest.MapFile{Data: []byte("# new\n")} },
		"file removed": func(m fstest.MapFS) { delete(m, "2.32.0-synthetic/constants.toml") },
	}
	for name, edit := range edits {
		m := fresh()
		edit(m)
		if c.currentIn(m) {
			t.Errorf("%s: the compiled release is still taken for current", name)
		}
		// A release compiled from these sums but not yet loaded: the load
		// must refuse it (the caller then reads the TOML).
		stale := &compiledRelease{name: c.name, spec: c.spec, link: func() { t.Error("a stale release was linked") }, sums: c.sums}
		if stale.load(m) != nil {
			t.Errorf("%s: a stale compiled release was used", name)
		}
	}
}

func compiledOf(t *testing.T, release string) *compiledRelease {
	t.Helper()
	for i := range compiledReleases {
		if compiledReleases[i].name == release {
			return &compiledReleases[i]
		}
	}
	t.Fatalf("release %s is not compiled: run 'make generate'", release)
	return nil
}

// TestCompiledLoadAllocs: loading a compiled release builds nothing — one
// copy of the top Spec, whatever the size of the release.
func TestCompiledLoadAllocs(t *testing.T) {
	for _, r := range Releases() {
		if loadCompiled(r) == nil {
			t.Fatalf("release %s has no current compiled form: run 'make generate'", r)
		}
		if n := testing.AllocsPerRun(50, func() { loadCompiled(r) }); n > 1 {
			t.Errorf("loading compiled release %s allocates %v times; at most 1 (the top Spec)", r, n)
		}
	}
}

// firstDifference names the first path where a and b differ (for a
// readable failure; DeepEqual has the last word).
func firstDifference(a, b reflect.Value, path string) (string, string, string) {
	if a.Kind() != b.Kind() {
		return path, a.Kind().String(), b.Kind().String()
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path, fmt.Sprint(a.IsNil()), fmt.Sprint(b.IsNil())
			}
			return "", "", ""
		}
		if a.Kind() == reflect.Pointer && a.Type().Elem() == reflect.TypeOf(Type{}) {
			return "", "", "" // parse trees may share cycles; DeepEqual compares them
		}
		return firstDifference(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if p, x, y := firstDifference(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p, x, y
			}
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path, fmt.Sprintf("len %d nil %v", a.Len(), a.IsNil()), fmt.Sprintf("len %d nil %v", b.Len(), b.IsNil())
		}
		for i := 0; i < a.Len(); i++ {
			if p, x, y := firstDifference(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, x, y
			}
		}
	case reflect.Map:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path, fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface())
		}
	default:
		if a.CanInterface() && !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path, fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface())
		}
	}
	return "", "", ""
}

func BenchmarkLoadCompiled(b *testing.B) {
	for b.Loop() {
		if loadCompiled(Default) == nil {
			b.Fatal("no compiled form")
		}
	}
}

func BenchmarkLoadTOML(b *testing.B) {
	for b.Loop() {
		if _, err := LoadTOML(Default); err != nil {
			b.Fatal(err)
		}
	}
}
