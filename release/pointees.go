package release

import (
	"debug/dwarf"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

// What the boundary passes by pointer is part of it: a struct a forward
// or reverse signature takes as X* (net_ops_info_t*, enc_host_mem_t*),
// and every struct such a struct points to in turn, is described from the
// inputs' DWARF when they define it, so a change to it is a change the
// diff and check see (docs/nrtabi-release-new.md#what-the-inputs-declare-wins). The
// parent's opaque type of that name is then a struct: "now described".

// maxPointeeRounds bounds the walk from the signatures through pointers;
// maxPointees the structs it may add.
const (
	maxPointeeRounds = 8
	maxPointees      = 256
)

// signaturePointees are the type names the base's signatures take by
// pointer and that are no spec struct: its opaque types and any other
// name (builtins are never a struct of the DWARF, so asking is harmless).
func signaturePointees(base *spec.Spec) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		t = strings.TrimSpace(t)
		if !strings.HasSuffix(t, "*") {
			return
		}
		n := strings.TrimSpace(strings.TrimRight(t, "* "))
		n = strings.TrimSpace(strings.TrimPrefix(n, "const "))
		n = strings.TrimSpace(strings.TrimPrefix(n, "struct "))
		if !candidate(base, n) || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
	}
	for _, f := range base.Forward {
		add(f.Signature.Returns)
		for _, p := range f.Signature.Params {
			add(p.Type)
		}
	}
	for _, r := range base.Reverse {
		add(r.Signature.Returns)
		for _, p := range r.Signature.Params {
			add(p.Type)
		}
	}
	sort.Strings(out)
	return out
}

// candidate is whether a pointee named n may become a struct row: not a
// spec struct already, not a builtin (cpu_set_t) and not a name the
// system headers declare, which the generated C cannot redefine.
func candidate(base *spec.Spec, n string) bool {
	if _, _, ok := spec.Builtin(n); ok || base.StructByName(n) != nil {
		return false
	}
	return spec.CNameProblem(n) == ""
}

// pointeeNames are the names under which a pointee may be in the DWARF:
// itself, and, for an opaque type of base, its tag and TAG_t.
func pointeeNames(base *spec.Spec, name string) []string {
	names := []string{name}
	for _, o := range base.OpaqueTypes {
		if o.Name == name {
			if t := o.CTag(); t != name {
				names = append(names, t)
			}
		}
	}
	return names
}

// pointees extracts the structs the signatures reach by pointer that dbg
// defines, transitively through their pointer members, as rows named as
// the signatures name them (the opaque type's name, its tag kept). It
// returns nil when dbg defines none.
func pointees(o *elfread.File, dbg *elfread.Debug, base *spec.Spec) (*fragment, error) {
	names := signaturePointees(base)
	var defined []string
	tried := map[string]bool{}
	for round := 0; round < maxPointeeRounds && len(names) > 0 && len(defined) < maxPointees; round++ {
		wants := make([][]string, len(names))
		for i, n := range names {
			wants[i] = pointeeNames(base, n)
			tried[n] = true
		}
		found, err := dbg.FindStructs(wants)
		if err != nil {
			return nil, err
		}
		grew := false
		for i, f := range found {
			if f != nil && hasLayout(dbg, f.Offset) {
				defined = append(defined, names[i])
				grew = true
			}
		}
		if !grew {
			break
		}
		frag, err := extractFrom(o, dbg, ExtractOptions{Names: defined, SkipAbsent: true, Spec: base})
		if err != nil {
			return nil, err
		}
		// The structs those point to, not yet asked about, are the next round.
		names = names[:0]
		for _, op := range frag.Opaques {
			if !tried[op.Name] && candidate(base, op.Name) {
				names = append(names, op.Name)
			}
		}
	}
	if len(defined) == 0 {
		return nil, nil
	}
	frag, err := extractFrom(o, dbg, ExtractOptions{Names: defined, SkipAbsent: true, Spec: base})
	if err != nil {
		return nil, err
	}
	for _, st := range frag.Structs {
		for _, op := range base.OpaqueTypes {
			if op.Name == st.Name && st.Tag == "" && op.CTag() != st.Name {
				st.Tag = op.CTag()
			}
		}
	}
	return frag, nil
}

// hasLayout is whether the struct at off is defined (has members or a
// size), not only declared.
func hasLayout(dbg *elfread.Debug, off dwarf.Offset) bool {
	t, err := dbg.Types().At(off)
	if err != nil {
		return false
	}
	st := typemodel.Strip(t)
	return st != nil && st.Kind.Aggregate() && !st.Incomplete()
}

// refreshEnums restates every base enum dbg declares, from dbg: its
// enumerators as the input has them (a renamed value, a new one), each
// value's note and alias kept where the parent has the same name and
// value; the status flag and partial are the parent's.
func refreshEnums(dbg *elfread.Debug, base *spec.Spec, source string, conf spec.Conf) ([]spec.Enum, error) {
	if len(base.Enums) == 0 {
		return nil, nil
	}
	wants := make([][]string, len(base.Enums))
	for i, e := range base.Enums {
		wants[i] = []string{e.Name}
		if e.Tag != "" && e.Tag != e.Name {
			wants[i] = append(wants[i], e.Tag)
		}
	}
	found, err := dbg.FindEnums(wants)
	if err != nil {
		return nil, err
	}
	types := dbg.Types()
	var out []spec.Enum
	for i, f := range found {
		if f == nil {
			continue
		}
		t, err := types.At(f.Offset)
		if err != nil {
			return nil, elfread.InputErrorf(dbg.Path(), "enum %s: %w", base.Enums[i].Name, err)
		}
		et := typemodel.Strip(t)
		if et == nil || et.Kind != typemodel.Enum || len(et.Enumerators) == 0 {
			continue
		}
		old := base.Enums[i]
		e := spec.Enum{Name: old.Name, Tag: old.Tag, Size: int(typemodel.SizeOf(et)), Status: old.Status, Partial: old.Partial,
			Fact: spec.Fact{Conf: conf, Source: source, Note: old.Note}}
		prev := map[string]spec.EnumValue{}
		for _, v := range old.Values {
			prev[v.Name] = v
		}
		byValue := map[int64]string{}
		for _, v := range et.Enumerators {
			ev := spec.EnumValue{Name: v.Name, Value: v.Value}
			if p, ok := prev[v.Name]; ok && p.Value == v.Value {
				ev.Note, ev.AliasOf = p.Note, p.AliasOf
			}
			if first, dup := byValue[v.Value]; dup && ev.AliasOf == "" {
				ev.AliasOf = first // the input gives two names one value
			} else if !dup {
				byValue[v.Value] = v.Name
			}
			e.Values = append(e.Values, ev)
		}
		out = append(out, e)
	}
	return out, nil
}

// inputSource names an input in the rows read from it, escaped as every
// input name in the spec is (a header directory may hold "*/"), and the
// confidence of what it declares: a header's declaration is MED, as
// extract grades it.
func inputSource(path string) (string, spec.Conf) {
	if label, ok := specmatch.Label(path); ok {
		return "nrtabi release new from " + inputText(label), spec.Med
	}
	return "nrtabi release new from " + inputText(path), spec.High
}
