package elfread

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/typemodel"
)

// TestTypesAgreeWithGodwarf: every struct of libc and of a dwz'd pair
// reads the same through the type graph as through the godwarf reader
// (members, positions, sizes, spellings), while both exist.
func TestTypesAgreeWithGodwarf(t *testing.T) {
	paths := []string{libcDebug}
	dir := buildDwzPair(t, "struct shared { int x; long y; char tag[12]; unsigned b:3, c:9; };\nstruct only_a { char c; struct shared s; int z; } oa;\nstruct shared sa;\n",
		"struct shared { int x; long y; char tag[12]; unsigned b:3, c:9; };\nstruct shared sb;\n")
	paths = append(paths, filepath.Join(dir, "liba.so"), libstdcxxDebug, cxxObject(t))
	for _, path := range paths {
		// C++ names are qualified in the graph ("std::vector<...>") and
		// bare in godwarf: only the positions are compared.
		cxx := path == libstdcxxDebug || strings.HasSuffix(path, ".o")
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := openDebugT(t, path)
			idx, err := d.ScanAll(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			rd := d.NewReader()
			g := d.Types()
			bad := 0
			for _, n := range append(idx.Types, idx.Later...) {
				if n.Kind == "enum" {
					continue
				}
				l, err := rd.Layout(n.Offset)
				if err != nil && cxx {
					continue // godwarf knows no char32_t (DW_ATE_UTF); the graph does
				}
				if err != nil {
					t.Fatalf("%s: godwarf: %v", n.Name, err)
				}
				s, err := g.Struct(n.Offset)
				if err != nil {
					t.Fatalf("%s: model: %v", n.Name, err)
				}
				if diff := layoutDiff(l, s, cxx); diff != "" {
					if bad++; bad < 10 {
						t.Errorf("%s at %#x: %s", n.Name, n.Offset, diff)
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d structs differ", bad)
			}
		})
	}
}

func layoutDiff(l *Layout, s *typemodel.Type, cxx bool) string {
	if l.Size != s.Size || l.Declared != s.Incomplete() || l.Kind != s.Kind.String() {
		return fmt.Sprintf("size %d/%d declared %v/%v kind %s/%s", l.Size, s.Size, l.Declared, s.Incomplete(), l.Kind, s.Kind)
	}
	// godwarf leaves base classes out of a struct type's fields, so a
	// class whose data is all in its bases aligns to 1 there; and it sizes
	// a pointer to member 0. The C structs must agree exactly.
	if l.Align != typemodel.StructAlign(s) && !cxx {
		return fmt.Sprintf("align %d/%d", l.Align, typemodel.StructAlign(s))
	}
	if len(l.Members) != len(s.Fields) {
		return fmt.Sprintf("%d/%d members", len(l.Members), len(s.Fields))
	}
	var out []string
	for i, m := range l.Members {
		f := &s.Fields[i]
		a := fmt.Sprintf("%d %d %d %d %v %v %v", m.Offset, m.Size, m.BitOffset, m.BitSize, m.Base, m.Virtual, m.Artificial)
		b := fmt.Sprintf("%d %d %d %d %v %v %v", f.Offset, f.Size(), f.BitOffset, f.BitSize, f.Base, f.Virtual, f.Artificial)
		if cxx && typemodel.Strip(f.Type).Kind == typemodel.PtrToMember {
			continue
		}
		if !cxx {
			// godwarf spells a flexible array member "[0]" and a GNU
			// zero-length one "[]"; the graph keeps C's "[]" and "[0]".
			a += " " + strings.ReplaceAll(CDecl(m.Type, m.Name), "[0]", "[]")
			b += " " + strings.ReplaceAll(typemodel.Decl(f.Type, f.Name), "[0]", "[]")
		} else if !m.Base {
			a, b = m.Name+" "+a, f.Name+" "+b
		}
		if a != b {
			out = append(out, a+" | "+b)
		}
	}
	return strings.Join(out, "; ")
}
