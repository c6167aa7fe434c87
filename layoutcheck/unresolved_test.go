package layoutcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// TestShowNamesUnresolvedDeclaration: a C++ class held by value in a unit
// that only declares it (g++ writes a class with a key function only where
// that function is defined) and defined twice with differing sizes (the
// planted One Definition Rule clash, c.cc) stays a declaration; show says
// so on a line naming the member and the class, and check lists it under
// the struct (text and JSON). Without the clash the declaration resolves
// and neither says so. Cost: two small C++ compiles.
func TestShowNamesUnresolvedDeclaration(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v (install gcc and g++)", err)
	}
	k := "struct K { virtual int f(); int a; long b[2]; };\n"
	units := map[string]string{
		"a.cc": k + "int K::f() { return a; }\n",
		"b.cc": k + "struct holder { int n; K k[2]; };\nholder h;\n",
	}
	for _, clash := range []bool{false, true} {
		dir := t.TempDir()
		if clash {
			units["c.cc"] = "struct K { char c; };\nK kc;\n"
		}
		var names []string
		for n, body := range units {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		if err := cc.Shared(dir, "libk.so", "", "", names, "-g", "-O0"); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := Show(context.Background(), filepath.Join(dir, "libk.so"), "holder", ShowOptions{}, &out)
		if err != nil {
			t.Fatal(err)
		}
		line := "/* !! k[]: struct K stays a declaration, its size unknown: "
		switch {
		case clash && (len(res.Unresolved) != 1 || !strings.Contains(out.String(), line) || !strings.Contains(out.String(), "differing sizes")):
			t.Errorf("with the clash: Unresolved %+v, output:\n%s", res.Unresolved, out.String())
		case !clash && (len(res.Unresolved) != 0 || strings.Contains(out.String(), "stays a declaration")):
			t.Errorf("without the clash: Unresolved %+v, output:\n%s", res.Unresolved, out.String())
		}
		i32, err := spec.ParseType("i32")
		if err != nil {
			t.Fatal(err)
		}
		holder := &spec.Struct{Name: "holder", Size: 72, Prefix: true, Fields: []spec.Field{{Name: "n", Type: "i32", T: i32, Offset: 0}}}
		sp := &spec.Spec{Release: spec.Release{Name: "t"}, Structs: []*spec.Struct{holder}}
		r, err := Check(context.Background(), []string{filepath.Join(dir, "libk.so")}, Options{Spec: sp, Role: specmatch.RoleNone})
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		r.WriteText(&text)
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(text.String(), "unresolved k[]: struct K stays a declaration: ") && strings.Contains(string(js), `"unresolved":[{"member":"k[]","type":"struct K","why":"K is only declared here`)
		if has != clash {
			t.Errorf("clash %v: check says unresolved %v; text:\n%s\njson: %s", clash, has, text.String(), js)
		}
	}
}

// TestUnresolvedWalkBounded: one struct shared by value under 64 members
// at each of MaxDepth-1 levels (64^63 paths) is walked once per level, not
// once per path; one level more is past the depth bound, which the list
// says instead of passing a short walk off as the whole.
func TestUnresolvedWalkBounded(t *testing.T) {
	leaf := &typemodel.Type{Kind: typemodel.Struct, Name: "leaf", Fields: []typemodel.Field{{Name: "x", Type: &typemodel.Type{Kind: typemodel.Base, Name: "int"}}}}
	top := leaf
	for level := range typemodel.MaxDepth - 1 {
		s := &typemodel.Type{Kind: typemodel.Struct, Name: fmt.Sprintf("s%d", level)}
		for i := range 64 {
			s.Fields = append(s.Fields, typemodel.Field{Name: fmt.Sprintf("m%d", i), Type: top})
		}
		top = s
	}
	w := declWalk{clean: map[*typemodel.Type]bool{}}
	w.walk(top, "", 0)
	if len(w.out) != 0 || w.cut || w.visits > typemodel.MaxDepth {
		t.Errorf("%d aggregates entered, want at most %d; cut %v, listed %v", w.visits, typemodel.MaxDepth, w.cut, w.out)
	}
	deeper := &typemodel.Type{Kind: typemodel.Struct, Name: "deeper", Fields: []typemodel.Field{{Name: "d", Type: top}}}
	if got := unresolvedDecls(nil, deeper); len(got) != 1 || !strings.Contains(got[0].Why, "the list stops here") {
		t.Errorf("past the depth bound: %+v", got)
	}
}
