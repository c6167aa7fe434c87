package diff

import (
	"testing"

	"github.com/nrtabi/nrtabi/internal/render/html"
)

// TestPage: the page of 2.31.24 -> 2.32.0-synthetic draws the two structs
// the layout fact touches, in the order the facts name them; the added
// field is marked on the new side only, the moved run's fields on both as
// moved, an untouched field not at all; the fact points at its picture
// (docs/nrtabi-diff.md#html-report). Cost: two spec loads.
func TestPage(t *testing.T) {
	old, nw := load(t, "2.31.24"), load(t, "2.32.0-synthetic")
	p := Diff(old, nw).Page(old, nw)
	if len(p.Layouts) != 2 || p.Layouts[0].Name != "enc_nccl_comm_node" || p.Layouts[1].Name != "enc_glb_comm" {
		t.Fatalf("layouts %+v", p.Layouts)
	}
	if p.Verdict.Grade != html.Incompatible {
		t.Errorf("verdict %+v", p.Verdict)
	}
	member := func(s html.Side, name string) *html.Member {
		for i := range s.Members {
			if s.Members[i].Name == name {
				return &s.Members[i]
			}
		}
		return nil
	}
	l := p.Layouts[0]
	if m := member(l.New, "comm_gen"); m == nil || m.Mark != FieldAdded || m.Grade != html.Incompatible || m.Offset != 40 || m.Size != 8 {
		t.Errorf("new comm_gen: %+v", m)
	}
	if member(l.Old, "comm_gen") != nil {
		t.Errorf("comm_gen on the old side")
	}
	for _, s := range []html.Side{l.Old, l.New} {
		if m := member(s, "num_local_participants"); m == nil || !m.Moved {
			t.Errorf("%s num_local_participants: %+v", s.Label, m)
		}
		if m := member(s, "key"); m == nil || m.Mark != "" {
			t.Errorf("%s key: %+v", s.Label, m)
		}
	}
	var structs html.Group
	for _, g := range p.Groups {
		if g.Name == "structs" {
			structs = g
		}
	}
	if len(structs.Facts) != 1 || structs.Facts[0].Layout != "enc_nccl_comm_node" || len(structs.Facts[0].Consequences) != 2 {
		t.Errorf("structs group: %+v", structs)
	}
}
