package release

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/nrtabi/nrtabi/layoutcheck/elfread"
)

// extractAll is extractFrom for every named definition of the DWARF
// (ExtractOptions.All): the index of elfread.ScanAll, in unit order, then
// the rows in that order, so the fragment does not depend on opt.Jobs
// (docs/nrtabi-extract.md#every-type---all).
func extractAll(ctx context.Context, obj *elfread.File, dbg *elfread.Debug, opt ExtractOptions) (*fragment, error) {
	jobs := opt.Jobs
	if jobs == 0 {
		jobs = elfread.DefaultJobs()
	}
	idx, err := dbg.ScanAll(ctx, jobs)
	if err != nil {
		return nil, err
	}
	st := opt.Stats
	if st == nil {
		st = &ExtractStats{}
	}
	st.Units, st.InfoBytes, st.Types = idx.Units, idx.InfoBytes, len(idx.Types)
	x := newExtractor(obj, dbg, opt.Spec)
	x.qualified = idx.Qualified
	var skip skips
	skip.add(idx.Duplicates, "later definitions of a name an earlier unit already defines (the first, in unit order, is extracted; a C++ header's types are defined once per unit that includes it)")
	skip.add(idx.Anonymous, "anonymous structs, unions and enums no typedef names (their members are covered where they are used)")
	skip.add(idx.Nested, "structs, unions and enums defined inside a struct or class (check looks a struct up at namespace scope only)")
	skip.add(idx.TypeUnits, "type units (-fdebug-types-section), not scanned: their types are not extracted")
	// Names first, so that a member of a struct found later in the index
	// is spelled by the row that struct gets, and no row takes a name (or
	// the tag a _t name implies) an earlier row has: the loader would refuse
	// the fragment.
	taken := map[string]bool{}
	type want struct {
		t    *elfread.Named
		name string
	}
	var structs []want
	var enums []*elfread.Named
	clashes := 0
	for _, t := range idx.Types {
		if t.Kind == "enum" {
			enums = append(enums, t)
			continue
		}
		name := t.Name
		if opt.Spec != nil {
			if s := opt.Spec.StructByName(name); s != nil {
				name = s.Name
			}
		}
		keys := []string{name, strings.TrimSuffix(name, "_t")}
		if !strings.HasPrefix(t.Via, "typedef ") && t.Name != name {
			keys = append(keys, t.Name)
		}
		if taken[keys[0]] || taken[keys[1]] || len(keys) > 2 && taken[keys[2]] {
			clashes++
			continue
		}
		for _, k := range keys {
			taken[k] = true
		}
		x.reserve(t.Offset, name)
		structs = append(structs, want{t, name})
	}
	skip.add(clashes, "structs whose name or tag another struct's row already has (struct foo beside typedef struct {...} foo_t): a spec names a struct once")
	x.closed = true
	// Every enum gets a row when the spec can state it, used or not.
	unstated := 0
	for _, t := range enums {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ty, err := x.rd.Type(t.Offset)
		if err != nil {
			return nil, wrapInput(dbg.Path(), err, "enum %s", t.Name)
		}
		et, ok := ty.(*godwarf.EnumType)
		if !ok {
			return nil, elfread.InputErrorf(dbg.Path(), "enum %s at DIE %#x reads as %T", t.Name, t.DIE, ty)
		}
		if name, _, _ := x.enumType(et, []string{t.Name}); x.enums[name] == nil {
			unstated++
		}
	}
	skip.add(unstated, "enums the spec cannot state (a name that is no C identifier, as a C++ scoped name; an enumerator another enum declares; a size other than 1, 2, 4 or 8), spelled as the integer of their size where a member uses them")
	var refused, unread []string
	for _, w := range structs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := x.structAt(w.t.Offset, w.name)
		switch {
		case err != nil:
			unread = append(unread, fmt.Sprintf("%s (%v)", w.t.Name, err))
			x.drop(w.name)
		case s.refused != "":
			refused = append(refused, w.t.Name+" ("+s.refused+")")
		}
	}
	skip.add(len(refused), "structs without a layout a spec struct can hold (a declaration without a size, a GNU C empty struct), each named in a not-extracted comment")
	if len(unread) > 0 {
		skip.add(len(unread), "structs whose layout cannot be read into a spec struct, the first: "+unread[0])
	}
	frag := x.rows(obj.Path, obj.BuildID, dbg)
	if len(frag.Structs) == 0 && len(frag.Enums) == 0 {
		return nil, elfread.InputErrorf(dbg.Path(), "nothing to extract: the DWARF defines no named struct, union or enum a spec can hold (%s)", strings.Join(skip.lines, "; "))
	}
	frag.Refused = refused
	frag.Skipped = skip.lines
	st.Structs, st.Enums, st.Skipped = len(frag.Structs), len(frag.Enums), skip.lines
	return frag, nil
}

// skips counts what extractAll passes over, one line per kind.
type skips struct{ lines []string }

func (s *skips) add(n int, what string) {
	if n > 0 {
		s.lines = append(s.lines, fmt.Sprintf("%d %s", n, what))
	}
}

// drop forgets a struct reserved by extractAll that could not be read, so
// no row and no member names it.
func (x *extractor) drop(name string) {
	if s := x.byName[name]; s != nil && s.refused == "" {
		s.refused = "its layout cannot be read"
	}
}
