package elfread

import (
	"context"
	"debug/dwarf"
	"fmt"
	"iter"
	"strings"

	"github.com/nrtabi/nrtabi/typemodel"
)

// A unit may only declare a class another unit defines: g++ writes a
// class with a key function (its first non-inline virtual function) only
// in the unit defining that function, and a DW_AT_declaration elsewhere.
// A reference to the declaration stands for that definition, as gdb and
// libabigail resolve an opaque type: same qualified name, same kind
// (struct and class are one; C++ lets either keyword declare the other),
// the first definition in unit order, found through ScanAll's index so
// that At and AllTypes (for any -j) give the same answer. At resolves
// only the declarations a layout needs (typelink.go, valueRefs): behind a
// pointer the name is the spelling, and the index costs a whole-input
// scan a one-struct lookup must not pay. Definitions of
// differing sizes are a One Definition Rule clash nothing here may
// settle: the declaration stays, and Unresolved says why.

// declKey names a declared aggregate's definitions.
type declKey struct {
	union bool
	name  string
}

func declKeyOf(t *typemodel.Type) (declKey, bool) {
	if t == nil || !t.Kind.Aggregate() || !t.Declaration || t.Name == "" {
		return declKey{}, false
	}
	return declKey{t.Kind == typemodel.Union, t.Name}, true
}

// declDefs is what a declaration resolves to: the definition's offset, or
// why there is none to take.
type declDefs struct {
	off   uint64
	ok    bool
	clash string
}

// defsIndex is every named struct, class and union definition by name,
// made once from ScanAll (ctx bounds it).
func (g *Types) defsIndex(ctx context.Context) (map[declKey]declDefs, error) {
	if g.defs != nil {
		return g.defs, nil
	}
	idx := g.scanned.Load()
	if idx == nil {
		var err error
		if idx, err = g.d.ScanAll(ctx, DefaultJobs()); err != nil {
			return nil, err
		}
	}
	g.defs = defsOf(idx)
	return g.defs, nil
}

// defsOf is defsIndex's table made from the index idx; it reads nothing
// else, so AllTypes makes it beside its workers.
func defsOf(idx *Index) map[declKey]declDefs {
	return defsIn(func(yield func(*Named) bool) {
		for _, n := range idx.Types {
			if !yield(n) {
				return
			}
		}
		for _, n := range idx.Later {
			if !yield(n) {
				return
			}
		}
	})
}

// defsOfUnits is defsOf of the index the units' scans merge into, made
// from the scans in unit order (ScanAllTypes, beside the merge): per
// name, the index's first definition and its later ones are the units'
// definitions in unit order. It holds only where no unit names a type
// unit's type (namesTypeUnits), which the merge resolves, and which may
// name an anonymous definition.
func defsOfUnits(scans []*unitTypes) map[declKey]declDefs {
	return defsIn(func(yield func(*Named) bool) {
		for _, r := range scans {
			for _, n := range r.types {
				if !yield(n) {
					return
				}
			}
		}
	})
}

// namesTypeUnits: a unit's scan has a typedef of a type unit's type, or
// is a type unit with anonymous definitions such a typedef may name.
func namesTypeUnits(scans []*unitTypes) bool {
	for _, r := range scans {
		if len(r.foreign) > 0 || len(r.anonTU) > 0 {
			return true
		}
	}
	return false
}

// defsIn is defsOf of the definitions named gives, in index order.
func defsIn(named iter.Seq[*Named]) map[declKey]declDefs {
	type seen struct {
		offs  []dwarf.Offset
		sizes []int64
	}
	all := map[declKey]*seen{}
	var keys []declKey
	for n := range named {
		if n.Alias || n.Kind == "enum" || !n.Sized {
			continue
		}
		k := declKey{n.Kind == "union", n.Name}
		s := all[k]
		if s == nil {
			s = &seen{}
			all[k] = s
			keys = append(keys, k)
		}
		s.offs = append(s.offs, n.Offset)
		s.sizes = append(s.sizes, n.Size)
	}
	defs := make(map[declKey]declDefs, len(keys))
	for _, k := range keys {
		s := all[k]
		dd := declDefs{off: uint64(s.offs[0]), ok: true}
		for i := range s.sizes {
			if s.sizes[i] != s.sizes[0] {
				dd = declDefs{clash: clashNote(k.name, s.offs, s.sizes)}
				break
			}
		}
		defs[k] = dd
	}
	return defs
}

// clashNote says which definitions differ (the first eight).
func clashNote(name string, offs []dwarf.Offset, sizes []int64) string {
	var parts []string
	for i := range offs {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(offs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%d bytes at DIE %#x", sizes[i], uint64(offs[i])))
	}
	return fmt.Sprintf("%s is only declared here and defined %d times with differing sizes (%s): a One Definition Rule clash, left unresolved", name, len(offs), strings.Join(parts, ", "))
}

// resolveDecl records what the declared aggregate t stands for; the
// definition's offset when it is one to decode or look up.
func (g *Types) resolveDecl(ctx context.Context, t *typemodel.Type) (uint64, bool, error) {
	return g.resolveDeclFrom(ctx, t, nil)
}

// resolveDeclFrom is resolveDecl with dd, what t's name has in the index
// when the caller looked it up already (AllTypes' workers), nil to look
// it up here.
func (g *Types) resolveDeclFrom(ctx context.Context, t *typemodel.Type, dd *declDefs) (uint64, bool, error) {
	k, ok := declKeyOf(t)
	if !ok {
		return 0, false, nil
	}
	if def, ok := g.declOff[t.Offset]; ok {
		return def, true, nil
	}
	if _, ok := g.unresolved[t.Offset]; ok {
		return 0, false, nil
	}
	if dd == nil {
		defs, err := g.defsIndex(ctx)
		if err != nil {
			return 0, false, err
		}
		e := defs[k]
		dd = &e
	}
	if !dd.ok {
		if dd.clash != "" {
			g.unresolved[t.Offset] = dd.clash
		}
		return 0, false, nil
	}
	g.declOff[t.Offset] = dd.off
	return dd.off, true, nil
}

// Unresolved says why the declared struct, class or union t was not
// resolved to a definition, "" when there was nothing to resolve or no
// definition at all.
func (g *Types) Unresolved(t *typemodel.Type) string {
	if t == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.unresolved[t.Offset]
}
