package spec

import (
	"fmt"
	"reflect"
	"testing"
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
				t.Fatalf("release %s has no current compiled form (hash %s, compiled %q): run 'make generate'", r, EmbeddedHash(), compiledHash)
			}
			want, err := LoadTOML(r)
			if err != nil {
				t.Fatal(err)
			}
			got := *c
			got.lazy = nil
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
	if c.lazy == nil {
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

// TestStaleCompiledIgnored: a compiled form whose hash is not the embedded
// TOML's is never used.
func TestStaleCompiledIgnored(t *testing.T) {
	saved := compiledHash
	defer func() { compiledHash = saved }()
	compiledHash = "stale"
	if loadCompiled(Default) != nil {
		t.Fatal("a stale compiled release was used")
	}
	s, err := Load(Default)
	if err != nil || s.lazy != nil || s.index == nil {
		t.Fatalf("Load with a stale compiled form: err %v, compiled %v", err, s != nil && s.lazy != nil)
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
