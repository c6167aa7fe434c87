package diff

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/layoutcheck/grade"
)

// hier is enc_alg_hier as extract writes it: a named field, an anonymous
// union at off and a member of an unnamed struct type after it, both
// opaque ranges with covers.
func hier(side string, off int64) *grade.Layout {
	u32 := &grade.Type{Kind: grade.TScalar, Canon: "u32", Size: 4, Align: 4, Len: -1}
	u64 := &grade.Type{Kind: grade.TScalar, Canon: "u64", Size: 8, Align: 8, Len: -1}
	l := &grade.Layout{Name: "enc_alg_hier", Key: side + ":enc_alg_hier", Size: off + 16, Align: 8,
		Members: []grade.Member{{Name: "kind", Offset: 0, Size: 4, Type: u32}},
		Opaque: []grade.Range{
			{Off: off, End: off + 8, Covers: []string{"<anonymous@" + itoa(off) + ">"}},
			{Off: off + 8, End: off + 16, Covers: []string{"pipeline"}},
		}}
	if off > 8 {
		l.Members = append(l.Members, grade.Member{Name: "seq", Offset: 8, Size: 8, Type: u64})
	}
	return l
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAnonymousMembersByPosition: both releases have enc_alg_hier's
// anonymous union and pipeline; a field inserted before them moves both,
// which is graded as a move, never as the union or pipeline added (the
// misgrading before pairCovered). Unchanged, nothing is reported.
func TestAnonymousMembersByPosition(t *testing.T) {
	g := grade.New()
	o, n := hier("old", 8), hier("new", 8)
	pairCovered(o, n)
	g.Grade(o, n)
	if fs := g.Facts(); len(fs) != 0 {
		t.Errorf("unchanged: %d facts, first %+v", len(fs), fs[0])
	}
	g = grade.New()
	o, n = hier("old", 8), hier("new", 16)
	pairCovered(o, n)
	g.Grade(o, n)
	var kinds []string
	var walk func(f *grade.Finding)
	walk = func(f *grade.Finding) {
		kinds = append(kinds, string(f.Kind)+" "+f.Path())
		for _, c := range f.Consequences {
			walk(c)
		}
	}
	for _, f := range g.Facts() {
		walk(f)
	}
	got := strings.Join(kinds, "; ")
	if strings.Contains(got, "pipeline") && !strings.Contains(got, "moved") || strings.Contains(got, "added enc_alg_hier.pipeline") || strings.Contains(got, "<anonymous@16>") {
		t.Errorf("a moved anonymous member misgraded: %s", got)
	}
	if !strings.Contains(got, "moved enc_alg_hier.<anonymous#1>") {
		t.Errorf("want the anonymous union moved: %s", got)
	}
}
