package elfread

import (
	"testing"

	"github.com/nrtabi/nrtabi/typemodel"
)

// TestMemberFunctionSpelling: a pointer to member function is spelled as
// C++ declares it, without the artificial this g++ lists as the first
// parameter; a plain function pointer taking the same class pointer keeps
// it (the two are not one node).
func TestMemberFunctionSpelling(t *testing.T) {
	src := "namespace app {\nstruct point { int x; void move(int); };\nvoid point::move(int d) { x += d; }\n" +
		"struct holder { void (point::*mfp)(int); void (*fp)(point *, int); };\nholder h;\n}\n"
	d := openDebugT(t, cxxObjectOf(t, "m", src))
	found, err := d.FindStructs([][]string{{"app::holder"}})
	if err != nil || found[0] == nil {
		t.Fatalf("%v %v", found, err)
	}
	s, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fields) != 2 {
		t.Fatalf("fields %+v", s.Fields)
	}
	for i, want := range []string{"void (app::point::*mfp)(int)", "void (*fp)(struct app::point *, int)"} {
		if got := typemodel.Decl(s.Fields[i].Type, s.Fields[i].Name); got != want {
			t.Errorf("%s: %q, want %q", s.Fields[i].Name, got, want)
		}
	}
}
