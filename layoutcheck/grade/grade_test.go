package grade

import (
	"fmt"
	"strings"
	"testing"
)

func scalar(name string, size int64) *Type {
	return &Type{Kind: TScalar, Canon: name, Size: size, Align: size, Len: -1}
}

func lay(name string, size int64, ms ...Member) *Layout {
	return &Layout{Name: name, Key: fmt.Sprintf("%s/%d/%d", name, size, len(ms)), Size: size, Align: 8, Members: ms}
}

func mem(name string, off int64, t *Type) Member {
	return Member{Name: name, Offset: off, Size: t.Size, Type: t}
}

func tree(fs []*Finding) string {
	var b strings.Builder
	for _, f := range fs {
		f.Walk(func(x *Finding, d int) {
			fmt.Fprintf(&b, "%s%s %s %s %v\n", strings.Repeat("  ", d), x.Severity, x.Kind, x.Path(), x.Fields)
		})
	}
	return b.String()
}

// TestFold: an inserted member is the one fact; the struct's growth and
// the run of members it moved are under it, and so is an embedding
// struct's, whose own facts are not repeated.
func TestFold(t *testing.T) {
	u32, u64 := scalar("u32", 4), scalar("u64", 8)
	oldIn := lay("in", 24, mem("a", 0, u32), mem("b", 8, u64), mem("c", 16, u64))
	newIn := lay("in", 32, mem("a", 0, u32), mem("x", 8, u64), mem("b", 16, u64), mem("c", 24, u64))
	st := func(l *Layout) *Type {
		return &Type{Kind: TStruct, Canon: "in", Size: l.Size, Align: 8, Struct: func() (*Layout, error) { return l, nil }}
	}
	oldOut := lay("out", 40, mem("h", 0, u64), mem("i", 8, st(oldIn)), mem("j", 32, u64))
	newOut := lay("out", 48, mem("h", 0, u64), mem("i", 8, st(newIn)), mem("j", 40, u64))
	g := New()
	g.Grade(oldOut, newOut)
	g.Grade(oldIn, newIn) // a root too: graded once
	want := `incompatible added in.x []
  incompatible size in []
    incompatible resized out.i []
      incompatible size out []
      incompatible moved out.j [j]
  incompatible moved in.b .. c [b c]
`
	if got := tree(g.Facts()); got != want {
		t.Errorf("facts:\n%s\nwant:\n%s", got, want)
	}
	if f := g.Facts()[0]; len(f.EmbeddedIn) != 1 || f.EmbeddedIn[0] != "out.i" {
		t.Errorf("embedded in %v", f.EmbeddedIn)
	}
}

// TestRunsBreak: a member that did not move ends a run; another delta
// starts another.
func TestRunsBreak(t *testing.T) {
	u32 := scalar("u32", 4)
	old := lay("s", 16, mem("a", 0, u32), mem("b", 4, u32), mem("c", 8, u32), mem("d", 12, u32))
	new := lay("s", 16, mem("b", 0, u32), mem("a", 4, u32), mem("c", 8, u32), mem("d", 12, u32))
	g := New()
	g.Grade(old, new)
	want := "incompatible moved s.b [b]\nincompatible moved s.a [a]\n"
	if got := tree(g.Facts()); got != want {
		t.Errorf("facts:\n%s\nwant:\n%s", got, want)
	}
}

// FuzzGrade: layouts from arbitrary bytes (as hostile DWARF makes them)
// are graded without a panic, and a layout refers to itself by value
// without looping.
func FuzzGrade(f *testing.F) {
	f.Add([]byte{0, 4, 1, 8, 2, 16}, []byte{0, 4, 3, 8, 1, 20})
	f.Add([]byte{255, 255, 0, 0}, []byte{1})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		build := func(bs []byte, side string) *Layout {
			l := &Layout{Name: "s", Key: side, Size: 64, Align: 8}
			self := &Type{Kind: TStruct, Canon: "s", Size: 64, Align: 8}
			self.Struct = func() (*Layout, error) { return l, nil }
			for i := 0; i+1 < len(bs) && i < 64; i += 2 {
				var t *Type
				switch bs[i] % 5 {
				case 0:
					t = scalar("u32", 4)
				case 1:
					t = scalar("u64", 8)
				case 2:
					t = &Type{Kind: TPointer, Canon: "void*", Size: 8, Align: 8, Elem: &Type{Kind: TVoid, Canon: "void"}}
				case 3:
					t = &Type{Kind: TArray, Canon: "u8[]", Align: 1, Len: -1, Elem: scalar("u8", 1)}
				default:
					t = self
				}
				m := mem(fmt.Sprintf("m%d", bs[i]%7), int64(bs[i+1]%72), t)
				if bs[i]&0x80 != 0 {
					m.BitOffset, m.BitSize = m.Offset*8+int64(bs[i]%3), int64(bs[i+1]%9)
				}
				l.Members = append(l.Members, m)
			}
			if len(bs) > 0 && bs[0]&1 != 0 {
				l.Opaque = append(l.Opaque, Range{Off: int64(bs[0] % 64), End: 64, Covers: []string{"m1", "<anonymous@8>"}})
			}
			return l
		}
		g := New()
		g.Grade(build(a, "old"), build(b, "new"))
		for _, x := range g.Facts() {
			x.Walk(func(*Finding, int) {})
		}
	})
}

// TestRenameChainBounded: types renamed inside renamed types, deeper than
// maxDepth (hostile DWARF can nest them), end: the grading stops at the
// bound and calls what it could not follow a retype.
func TestRenameChainBounded(t *testing.T) {
	chain := func(side string, n int) *Type {
		t := scalar("u64", 8)
		for i := range n {
			inner := t
			l := &Layout{Name: fmt.Sprintf("%s%d", side, i), Key: fmt.Sprintf("%s%d", side, i), Size: 8, Align: 8, Members: []Member{mem("m", 0, inner)}}
			t = &Type{Kind: TStruct, Canon: l.Name, Size: 8, Align: 8, Struct: func() (*Layout, error) { return l, nil }}
		}
		return t
	}
	for _, n := range []int{3, 4 * maxDepth} {
		g := New()
		g.Grade(lay("s", 8, mem("f", 0, chain("a", n))), lay("s", 8, mem("f", 0, chain("b", n))))
		want := "compatible type-renamed s.f []\n"
		if n > maxDepth {
			want = "incompatible retyped s.f []\n"
		}
		if got := tree(g.Facts()); !strings.HasPrefix(got, want) {
			t.Errorf("chain of %d: %s", n, got)
		}
	}
}

// TestFoldNeedsTheSamePush: a run that moved against the growth of the
// change before it (a field grew by 4, what follows moved -8) is not that
// change's consequence: both are facts, and so is the size.
func TestFoldNeedsTheSamePush(t *testing.T) {
	u32, u64 := scalar("u32", 4), scalar("u64", 8)
	old := &Layout{Name: "s", Key: "o", Size: 32, Align: 8, Members: []Member{mem("a", 0, u32), mem("b", 16, u64), mem("c", 24, u64)},
		Opaque: []Range{{Off: 4, End: 16}}}
	new := lay("s", 24, mem("a", 0, u64), mem("b", 8, u64), mem("c", 16, u64))
	g := New()
	g.Grade(old, new)
	want := "incompatible size s []\nincompatible resized s.a []\nincompatible moved s.b .. c [b c]\n"
	if got := tree(g.Facts()); got != want {
		t.Errorf("facts:\n%s\nwant:\n%s", got, want)
	}
}
