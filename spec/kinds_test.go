package spec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestContradictionIDUnique plants the duplicate this spec once shipped:
// the id of contradictions.toml's row also names a row of
// bootstrap_wire.toml. The error points at the second id (file:line:col)
// and names where the first is written.
func TestContradictionIDUnique(t *testing.T) {
	dir := copyRelease(t, Default)
	line := edit(t, dir, "contradictions.toml", `id = "bootstrap-init-condition"`, `"bootstrap-init-condition"`, `"bootstrap-dispatch"`)
	wire, err := os.ReadFile(filepath.Join(dir, "bootstrap_wire.toml"))
	if err != nil {
		t.Fatal(err)
	}
	firstLine := strings.Count(string(wire)[:strings.Index(string(wire), "[[contradiction]]\nid = \"bootstrap-dispatch\"")], "\n") + 1
	_, err = LoadDir(dir)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want validation errors, got %v", err)
	}
	want := filepath.Join(dir, "contradictions.toml") + ":" + itoa(line) + ":1: [unique] contradiction \"bootstrap-dispatch\" is declared twice (first at " +
		filepath.Join(dir, "bootstrap_wire.toml") + ":" + itoa(firstLine) + ":1)"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("got %v\nwant %s", errs, want)
	}
}

// TestKindsCoverTheFormat holds the kinds table to the format: the loader
// accepts exactly its keys and [remove], every kind is used by the default
// release, and the release written whole by Writer.Spec loads back equal —
// so a kind cannot be half-added (decoded but not written, or written but
// not read back).
func TestKindsCoverTheFormat(t *testing.T) {
	var want []string
	for _, k := range kinds {
		want = append(want, k.key())
	}
	want = append(want, removeKey)
	sort.Strings(want)
	if got := knownKeys(""); !reflect.DeepEqual(got, want) {
		t.Errorf("the loader accepts %v; the kinds are %v", got, want)
	}

	orig, err := Load(Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if !k.present(orig) {
			t.Errorf("release %s has no [%s]: the round trip below would not cover it; add a row to the release", Default, k.key())
		}
	}
	var b bytes.Buffer
	w := &Writer{W: &b}
	w.Spec(orig)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), Default)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "all.toml"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("the written release does not load: %v", err)
	}
	normalize(reflect.ValueOf(orig).Elem(), map[uintptr]bool{})
	normalize(reflect.ValueOf(back).Elem(), map[uintptr]bool{})
	for _, f := range reflect.VisibleFields(reflect.TypeOf(Spec{})) {
		if !f.IsExported() || f.Name == "Dir" || f.Name == "Files" {
			continue
		}
		got, want := reflect.ValueOf(back).Elem().FieldByIndex(f.Index), reflect.ValueOf(orig).Elem().FieldByIndex(f.Index)
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("Spec.%s does not survive write and load:\n got %+v\nwant %+v", f.Name, got.Interface(), want.Interface())
		}
	}
}

var (
	posType  = reflect.TypeOf(Pos{})
	typeTree = reflect.TypeOf((*Type)(nil))
)

// normalize clears in place what depends on where a spec was read
// (positions, key paths) or is derived on load (bound types), and makes
// empty lists nil (a writer may spell an absent list as []).
func normalize(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		normalize(v.Elem(), seen)
	case reflect.Slice:
		if v.Len() == 0 {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			normalize(v.Index(i), seen)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f, sf := v.Field(i), v.Type().Field(i)
			switch {
			case !sf.IsExported():
			case sf.Type == posType || sf.Type == typeTree || sf.Name == "Path" && v.Type() == reflect.TypeOf(Fact{}):
				f.Set(reflect.Zero(sf.Type))
			default:
				normalize(f, seen)
			}
		}
	}
}

// TestSingleTablesRequired cuts [counts] and [slot_table] out of a release:
// each single table of kinds is reported missing, at [release].
func TestSingleTablesRequired(t *testing.T) {
	dir := copyRelease(t, Default)
	p := filepath.Join(dir, "release.toml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	from, to := strings.Index(s, "[counts]"), strings.Index(s, "[[version_node]]")
	if from < 0 || to < from {
		t.Fatalf("release.toml no longer has [counts] before [[version_node]]")
	}
	if err := os.WriteFile(p, []byte(s[:from]+s[to:]), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadDir(dir)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want validation errors, got %v", err)
	}
	relLine := strings.Count(s[:strings.Index(s, "[release]\n")], "\n") + 1
	missing := map[string]bool{}
	for _, e := range errs {
		if e.Rule == "required" && strings.HasPrefix(e.Msg, "no [") {
			if e.Pos.Line != relLine || filepath.Base(e.Pos.File) != "release.toml" {
				t.Errorf("%v: want it at [release] (release.toml:%d)", e, relLine)
			}
			missing[e.Msg] = true
		}
	}
	for _, want := range []string{"no [counts] table in any file", "no [slot_table] table in any file"} {
		if !missing[want] {
			t.Errorf("no error %q; got:\n%v", want, errs)
		}
	}
}

// TestGoNamesFollowTOMLKeys keeps the model's Go names from drifting away
// from the format: every Go field read from a TOML key is the key in Go case
// (a list may be plural), and so is each kind's field of Spec.
func TestGoNamesFollowTOMLKeys(t *testing.T) {
	// align is a floor under the members' alignment; Struct.Align() is the alignment.
	except := map[string]string{"Struct.MinAlign": "align"}
	ok := func(goField, key string) bool {
		return strings.EqualFold(goField, goName(key)) || strings.EqualFold(goField, goName(key)+"s")
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for _, f := range reflect.VisibleFields(typ) {
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			if key == "" || key == "-" || len(f.Index) > 1 {
				continue
			}
			if typ.Name() != "" && !ok(f.Name, key) && except[typ.Name()+"."+f.Name] != key {
				t.Errorf("%s.%s is read from the TOML key %q; name it %s", typ.Name(), f.Name, key, goName(key))
			}
			walk(f.Type)
		}
	}
	for i := 0; i < fileDocType().NumField(); i++ {
		walk(fileDocType().Field(i).Type)
	}
	for _, k := range kinds {
		want := k.field().Type
		if k.single() {
			want = want.Elem()
		}
		var names []string
		for _, f := range reflect.VisibleFields(reflect.TypeOf(Spec{})) {
			if f.Type == want {
				names = append(names, f.Name)
			}
		}
		if len(names) != 1 || !ok(names[0], k.key()) {
			t.Errorf("[%s] is held in Spec fields %v; want one, named %s", k.key(), names, goName(k.key()))
		}
	}
}
