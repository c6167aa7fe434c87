package spec

import (
	"fmt"
	"sort"
	"strings"
)

type checker struct {
	s    *Spec
	errs Errors
	done map[Pos]bool // positions already reported, for texts
	// rowKeys are the keys of the kind whose facts are being checked (what
	// a carried list may name), nil outside that walk.
	rowKeys map[string]bool
}

func (c *checker) at(f *Fact, key, rule, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pos: c.s.PosOf(f, key), Rule: rule, Msg: fmt.Sprintf(format, args...), key: f.Path + "." + key})
}

// validate holds the merged, resolved spec to every rule in Rules.
func (s *Spec) validate(dirName string) Errors {
	c := &checker{s: s}
	if s.IsFragment() {
		c.facts()
		c.unique()
		c.enums()
		c.structs()
		// A fragment is checked against binaries, never generated from
		// (gen requires a release): it keeps the names DWARF gives, C++
		// and Rust ones (outer::Widget, std::box<char>) and glibc's own
		// (pthread_mutex_t) included. Its text is still held to rule text.
		c.texts()
		return c.errs
	}
	c.release(dirName)
	c.facts()
	c.unique()
	c.counts()
	c.nodes()
	c.forward()
	c.reverse()
	c.enums()
	c.constants()
	c.messages()
	c.notes()
	c.structs()
	c.names()
	c.texts()
	return c.errs
}

func (c *checker) release(dirName string) {
	r := &c.s.Release
	if r.Pos.File == "" {
		c.errs = append(c.errs, &Error{Pos: Pos{File: c.s.Dir}, Rule: "required", Msg: "no [release] table in any file; add one with name = \"" + dirName + "\""})
		return
	}
	if r.Name == "" {
		c.at(&r.Fact, "name", "required", "[release] needs name")
	} else if dirName != "." && dirName != r.Name {
		c.at(&r.Fact, "name", "release-name", "release name %q does not match its directory %q; rename one of them", r.Name, dirName)
	}
	c.releaseVersions()
	c.headers()
	for _, k := range kinds {
		if k.single() && !k.present(c.s) {
			c.errs = append(c.errs, &Error{Pos: r.Pos, Rule: "required", Msg: "no [" + k.key() + "] table in any file"})
		}
	}
	for i, need := range r.LibNCCOM.VersionNeeds {
		if need.File == r.LibNRT.SONAME && c.s.VersionNodeByName(need.Version) == nil {
			c.at(&r.LibNCCOM.Fact, fmt.Sprintf("version_need[%d].version", i), "version-need", "libnccom needs %s from %s, which declares no such [[version_node]]", need.Version, need.File)
		}
	}
}

// facts checks provenance on every row.
func (c *checker) facts() {
	check := func(f *Fact, what string) {
		if f.Pos.File == "" {
			return
		}
		if !f.Conf.Valid() {
			c.at(f, "conf", "conf", "%s: conf = %q; use %s", what, f.Conf, ConfChoices)
		}
		if strings.TrimSpace(f.Source) == "" {
			c.at(f, "source", "conf", "%s: source is empty; say where the fact comes from", what)
		}
		c.carried(f, what)
		keys := make([]string, 0, len(f.ConfFields))
		for k := range f.ConfFields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !Conf(f.ConfFields[k]).Valid() {
				c.at(f, "conf_fields", "conf", "%s: conf_fields.%s = %q; use %s", what, k, f.ConfFields[k], ConfChoices)
			}
		}
	}
	for _, k := range kinds {
		c.rowKeys = rowKeys(k)
		k.facts(c.s, check)
	}
	c.rowKeys = nil
}

// unique reports a row key written twice, kind by kind.
func (c *checker) unique() {
	for _, k := range kinds {
		k.unique(c)
	}
}

func (c *checker) counts() {
	s := c.s
	if s.Counts.Pos.File == "" {
		return
	}
	if len(s.Forward) != s.Counts.Forward {
		c.at(&s.Counts.Fact, "forward", "count", "[counts] forward = %d but %d [[forward]] rows are written", s.Counts.Forward, len(s.Forward))
	}
	nec, nrt := 0, 0
	for _, r := range s.Reverse {
		switch {
		case strings.HasPrefix(r.Name, "nec_"):
			nec++
		case strings.HasPrefix(r.Name, "nrt_"):
			nrt++
		}
	}
	if nec != s.Counts.ReverseNEC {
		c.at(&s.Counts.Fact, "reverse_nec", "count", "[counts] reverse_nec = %d but %d nec_* [[reverse]] rows are written", s.Counts.ReverseNEC, nec)
	}
	if nrt != s.Counts.ReverseNRT {
		c.at(&s.Counts.Fact, "reverse_nrt", "count", "[counts] reverse_nrt = %d but %d nrt_* [[reverse]] rows are written", s.Counts.ReverseNRT, nrt)
	}
}

// uniq reports the second and later occurrence of each name.
func (c *checker) uniq(what string, n int, name func(int) (string, *Fact, string)) {
	seen := map[string]*Fact{}
	for i := 0; i < n; i++ {
		nm, f, key := name(i)
		if nm == "" {
			continue
		}
		if first, ok := seen[nm]; ok {
			c.at(f, key, "unique", "%s %q is declared twice (first at %s)", what, nm, first.Pos)
			continue
		}
		seen[nm] = f
	}
}

func (c *checker) nodes() {
	s := c.s
	bases := 0
	idx := map[int]bool{}
	for i := range s.VersionNodes {
		n := &s.VersionNodes[i]
		if n.Name == "" {
			c.at(&n.Fact, "name", "required", "[[version_node]] needs a name")
		}
		if n.Base {
			bases++
			if n.Parent != "" {
				c.at(&n.Fact, "parent", "version-node", "the BASE node %s cannot have a parent", n.Name)
			}
			if n.Name != s.Release.LibNRT.SONAME {
				c.at(&n.Fact, "name", "version-node", "the BASE node is named after the SONAME %q, not %q", s.Release.LibNRT.SONAME, n.Name)
			}
		}
		if n.Index < 1 || n.Index > len(s.VersionNodes) || idx[n.Index] {
			c.at(&n.Fact, "index", "version-node", "version node %s has index %d; indices are 1..%d, each used once", n.Name, n.Index, len(s.VersionNodes))
		}
		idx[n.Index] = true
		if n.Parent != "" && s.VersionNodeByName(n.Parent) == nil {
			c.at(&n.Fact, "parent", "version-node", "version node %s names parent %q, which is not declared", n.Name, n.Parent)
		}
		// Follow parents; a cycle never reaches a node without one.
		seen := map[string]bool{n.Name: true}
		for p := s.VersionNodeByName(n.Parent); p != nil; p = s.VersionNodeByName(p.Parent) {
			if seen[p.Name] {
				c.at(&n.Fact, "parent", "version-node", "version node %s is its own ancestor", n.Name)
				break
			}
			seen[p.Name] = true
		}
	}
	if bases != 1 && len(s.VersionNodes) > 0 {
		c.errs = append(c.errs, &Error{Pos: s.VersionNodes[0].Pos, Rule: "version-node", Msg: fmt.Sprintf("%d BASE version nodes; exactly one (the SONAME) is required", bases)})
	}
}

func (c *checker) forward() {
	s := c.s
	t := &s.SlotTable
	c.uniq("trampoline", len(s.Forward), func(i int) (string, *Fact, string) {
		return s.Forward[i].Trampoline, &s.Forward[i].Fact, "trampoline"
	})
	c.uniq("dlsym index", len(s.Forward), func(i int) (string, *Fact, string) {
		return itoa(s.Forward[i].Index), &s.Forward[i].Fact, "index"
	})
	c.uniq("slot address", len(s.Forward), func(i int) (string, *Fact, string) {
		return fmt.Sprintf("%#x", s.Forward[i].Slot), &s.Forward[i].Fact, "slot"
	})
	probes, hots := 0, 0
	for i := range s.Forward {
		f := &s.Forward[i]
		if !strings.HasPrefix(f.Name, "neuron") || !IsIdent(f.Name) {
			c.at(&f.Fact, "name", "forward-name", "forward symbol %q must be a C identifier starting with neuron", f.Name)
		}
		if !strings.HasPrefix(f.Trampoline, "nccl") || !IsIdent(f.Trampoline) {
			c.at(&f.Fact, "trampoline", "forward-name", "trampoline %q of %s must be a C identifier starting with nccl", f.Trampoline, f.Name)
		} else if strings.TrimPrefix(f.Trampoline, "nccl") != strings.TrimPrefix(f.Name, "neuron") {
			c.at(&f.Fact, "trampoline", "forward-name", "trampoline %s does not front %s; the nccl* and neuron* suffixes must match", f.Trampoline, f.Name)
		}
		if f.Index < 0 || f.Index >= len(s.Forward) {
			c.at(&f.Fact, "index", "dlsym-index", "%s: dlsym index %d is outside 0..%d", f.Name, f.Index, len(s.Forward)-1)
		}
		switch f.Guard {
		case Guarded:
		case Probe:
			probes++
			if f.Index != 0 {
				c.at(&f.Fact, "guard", "guard", "%s is the version probe but has dlsym index %d; the probe is resolved first (index 0)", f.Name, f.Index)
			}
		case Hot:
			hots++
		default:
			c.at(&f.Fact, "guard", "guard", "%s: guard = %q; use guarded, probe or hot", f.Name, f.Guard)
		}
		if f.Index == 0 && f.Guard != Probe {
			c.at(&f.Fact, "guard", "guard", "%s has dlsym index 0 but is not the probe; index 0 is the unguarded version probe", f.Name)
		}
		if f.Group == "" {
			c.at(&f.Fact, "group", "required", "%s needs a group", f.Name)
		}
		if f.Returns == "" {
			c.at(&f.Fact, "returns", "required", "%s needs returns (the C return type)", f.Name)
		}
	}
	if probes != 1 || hots != 1 {
		p := t.Pos
		if len(s.Forward) > 0 {
			p = s.Forward[0].Pos
		}
		c.errs = append(c.errs, &Error{Pos: p, Rule: "guard", Msg: fmt.Sprintf("%d probe and %d hot trampolines; exactly one of each (ncclGetVersionInfo, ncclNetworkProxyProgress) is unguarded", probes, hots)})
	}
	if t.Pos.File == "" {
		return
	}
	if t.Stride == 0 {
		c.at(&t.Fact, "stride", "slot-range", "[slot_table] stride must be non-zero (8 on LP64)")
		return
	}
	if t.Top < t.Base || (t.Top-t.Base)%t.Stride != 0 || (t.Top-t.Base)/t.Stride+1 != uint64(len(s.Forward)) {
		c.at(&t.Fact, "top", "slot-range", "[slot_table] %#x..%#x with stride %d holds %d slots, but there are %d forward rows", t.Base, t.Top, t.Stride, (t.Top-t.Base)/t.Stride+1, len(s.Forward))
	}
	for _, f := range s.BySlot() {
		if f.Slot < t.Base || f.Slot > t.Top || (f.Slot-t.Base)%t.Stride != 0 {
			c.at(&f.Fact, "slot", "slot-range", "%s: slot %#x is not one of the %d-byte slots of %#x..%#x", f.Name, f.Slot, t.Stride, t.Base, t.Top)
		}
	}
	// Contiguity: every slot of the range is taken (uniqueness is checked above).
	have := map[uint64]bool{}
	for _, f := range s.Forward {
		have[f.Slot] = true
	}
	for a := t.Base; a <= t.Top && t.Top-t.Base < 1<<20; a += t.Stride {
		if !have[a] {
			c.at(&t.Fact, "base", "slot-range", "slot %#x of %#x..%#x is not used by any forward row; the table is contiguous", a, t.Base, t.Top)
		}
	}
	for _, f := range s.Forward {
		if f.Guard == Probe && f.Slot != t.Top {
			c.at(&f.Fact, "slot", "dlsym-index", "the probe %s sits at %#x; it is the top slot %#x", f.Name, f.Slot, t.Top)
		}
		switch t.Order {
		case "descending":
			if want := t.Top - uint64(f.Index)*t.Stride; f.Slot != want && f.Index >= 0 {
				c.at(&f.Fact, "index", "dlsym-index", "%s: dlsym index %d lives at %#x in a descending table, not %#x", f.Name, f.Index, want, f.Slot)
			}
		case "ascending":
			if want := t.Base + uint64(f.Index)*t.Stride; f.Slot != want && f.Index >= 0 {
				c.at(&f.Fact, "index", "dlsym-index", "%s: dlsym index %d lives at %#x in an ascending table, not %#x", f.Name, f.Index, want, f.Slot)
			}
		case "":
		default:
			c.at(&t.Fact, "order", "dlsym-index", "[slot_table] order = %q; use descending, ascending or leave it out", t.Order)
		}
	}
}

func (c *checker) reverse() {
	s := c.s
	for i := range s.Reverse {
		r := &s.Reverse[i]
		if !(strings.HasPrefix(r.Name, "nec_") || strings.HasPrefix(r.Name, "nrt_")) || !IsIdent(r.Name) {
			c.at(&r.Fact, "name", "reverse-name", "reverse symbol %q must be a C identifier starting with nec_ or nrt_", r.Name)
		}
		switch n := s.VersionNodeByName(r.Version); {
		case r.Version == "":
			c.at(&r.Fact, "version", "reverse-version", "%s has no version; reverse callbacks are bound to a version node such as NRT_2.0.0", r.Name)
		case n == nil:
			c.at(&r.Fact, "version", "reverse-version", "%s is bound to %q, which is not a declared [[version_node]]", r.Name, r.Version)
		case n.Base:
			c.at(&r.Fact, "version", "reverse-version", "%s is bound to the BASE node %s; an unversioned callback does not satisfy libnccom's versioned import", r.Name, r.Version)
		}
		params := map[string]bool{}
		for _, p := range r.Params {
			params[p.Name] = true
		}
		switch r.Shape {
		case ShapeAdapter:
			if len(r.TargetArgs) == 0 || r.Target == "" {
				c.at(&r.Fact, "target_args", "adapter-mapping", "adapter %s needs target and target_args (the callee's arguments as callback parameter names)", r.Name)
			}
			for j, a := range r.TargetArgs {
				if !params[a] {
					c.at(&r.Fact, fmt.Sprintf("target_args[%d]", j), "adapter-mapping", "adapter %s passes %q to %s, but %s has no such parameter", r.Name, a, r.Target, r.Name)
				}
			}
		case ShapeReentrant:
			if len(r.Reenters) == 0 {
				c.at(&r.Fact, "reenters", "reentrant", "re-entrant %s must name the runtime queries it calls in reenters", r.Name)
			}
			for j, q := range r.Reenters {
				key := fmt.Sprintf("reenters[%d]", j)
				if s.ForwardByName(q) != nil || strings.HasPrefix(q, "neuron") || strings.HasPrefix(q, "nccl") {
					c.at(&r.Fact, key, "reentrant", "%s re-enters %s across the seam; a nec_* callback must never call into libnccom", r.Name, q)
				} else if rq := s.ReverseByName(q); rq == nil || rq.Shape != ShapeQuery {
					c.at(&r.Fact, key, "reentrant", "%s re-enters %q, which is not a reverse query row", r.Name, q)
				}
			}
		case ShapeInline, ShapeThunk, ShapeQuery:
		default:
			c.at(&r.Fact, "shape", "required", "%s: shape = %q; use inline, thunk, adapter, re-entrant or query", r.Name, r.Shape)
		}
		if r.Shape != ShapeAdapter && len(r.TargetArgs) > 0 {
			c.at(&r.Fact, "target_args", "adapter-mapping", "%s has target_args but is a %s, not an adapter", r.Name, r.Shape)
		}
		if r.Shape != ShapeReentrant && len(r.Reenters) > 0 {
			c.at(&r.Fact, "reenters", "reentrant", "%s has reenters but is a %s, not re-entrant", r.Name, r.Shape)
		}
		if r.Returns == "" {
			c.at(&r.Fact, "returns", "required", "%s needs returns (the C return type)", r.Name)
		}
	}
}

func (c *checker) enums() {
	s := c.s
	seen := map[string]string{}
	for i := range s.Enums {
		e := &s.Enums[i]
		if !EnumSizeValid(e.Size) {
			c.at(&e.Fact, "size", "enum", "enum %s has size %d; use 4 (a plain enum), 1 or 2 (packed, or a narrow underlying type) or 8 (a value beyond 32 bits)", e.Name, e.Size)
		}
		lo, hi := e.Range()
		vals := map[int64]int{}
		index := map[string]int{}
		for j, v := range e.Values {
			key := fmt.Sprintf("values[%d]", j)
			if other, ok := seen[v.Name]; ok {
				c.at(&e.Fact, key, "unique", "enumerator %s of %s is already declared in %s", v.Name, e.Name, other)
			}
			seen[v.Name] = e.Name
			c.enumAlias(e, j, vals, index)
			if _, ok := vals[v.Value]; !ok {
				vals[v.Value] = j
			}
			if _, ok := index[v.Name]; !ok {
				index[v.Name] = j
			}
			if EnumSizeValid(e.Size) && (v.Value < lo || v.Value > hi) {
				c.at(&e.Fact, key, "enum", "%s = %d does not fit a %d-byte enum (%d..%d with these values)", v.Name, v.Value, e.Size, lo, hi)
			}
			if v.Conf != "" && !v.Conf.Valid() {
				c.at(&e.Fact, key, "conf", "%s: conf = %q; use %s", v.Name, v.Conf, ConfChoices)
			}
		}
	}
}

// enumAlias holds enumerator j of e to the alias rule: a value already
// taken is an alias that says so (alias_of naming the first enumerator with
// that value), and alias_of is never stated on a value of its own.
// vals and index hold the enumerators before j.
func (c *checker) enumAlias(e *Enum, j int, vals map[int64]int, index map[string]int) {
	v := e.Values[j]
	key := fmt.Sprintf("values[%d]", j)
	first, taken := vals[v.Value]
	switch {
	case v.AliasOf == "" && taken && !e.Status:
		c.at(&e.Fact, key, "enum", "%s and %s of %s share the value %d; state alias_of = %s on %s if the alias is intended", e.Values[first].Name, v.Name, e.Name, v.Value, Quote(e.Values[first].Name), v.Name)
	case v.AliasOf == "":
	case v.AliasOf == v.Name:
		c.at(&e.Fact, key, "enum", "%s of %s: alias_of names itself; drop alias_of", v.Name, e.Name)
	case !taken:
		if k, ok := index[v.AliasOf]; ok {
			c.at(&e.Fact, key, "enum", "%s of %s: alias_of = %s but %s = %d and %s = %d; an alias has its target's value", v.Name, e.Name, Quote(v.AliasOf), v.AliasOf, e.Values[k].Value, v.Name, v.Value)
		} else {
			c.at(&e.Fact, key, "enum", "%s of %s: alias_of = %s names no earlier enumerator of %s; an alias follows its target", v.Name, e.Name, Quote(v.AliasOf), e.Name)
		}
	case e.Values[first].Name != v.AliasOf:
		c.at(&e.Fact, key, "enum", "%s of %s: alias_of = %s but the first enumerator with the value %d is %s; name it", v.Name, e.Name, Quote(v.AliasOf), v.Value, e.Values[first].Name)
	}
}

func (c *checker) constants() {
	s := c.s
	for i := range s.Constants {
		k := &s.Constants[i]
		if !IsIdent(k.Name) {
			c.at(&k.Fact, "name", "constant", "constant name %q is not a C identifier", k.Name)
		}
		switch k.Type {
		case "string":
			if _, ok := k.Str(); !ok {
				c.at(&k.Fact, "value", "constant", "%s is declared string but its value is %T", k.Name, k.Value)
			}
		case "u32", "u64", "int", "size_t":
			v, ok := k.Int()
			if !ok {
				c.at(&k.Fact, "value", "constant", "%s is declared %s but its value is %T", k.Name, k.Type, k.Value)
			} else if v < 0 && k.Type != "int" || k.Type == "u32" && v > 1<<32-1 || k.Type == "int" && (v > 1<<31-1 || v < -1<<31) {
				c.at(&k.Fact, "value", "constant", "%s = %d does not fit %s", k.Name, v, k.Type)
			}
		default:
			c.at(&k.Fact, "type", "constant", "%s: type = %q; use u32, u64, int, size_t or string", k.Name, k.Type)
		}
	}
}

var verbRE = lazyRE(`%[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t)?[diouxXcspfeEgGa%]`)

func (c *checker) messages() {
	s := c.s
	for i := range s.Messages {
		m := &s.Messages[i]
		if !IsIdent(m.ID) {
			c.at(&m.Fact, "id", "required", "message id %q is not an identifier", m.ID)
		}
		n := 0
		for _, v := range verbRE().FindAllString(m.Text, -1) {
			if v != "%%" {
				n++
			}
		}
		if n != len(m.Args) {
			c.at(&m.Fact, "args", "message-args", "message %s has %d printf verbs but %d args; list one arg per verb", m.ID, n, len(m.Args))
		}
	}
}

func (c *checker) structs() {
	s := c.s
	names := map[string]*Fact{}
	for _, st := range s.Structs {
		for _, n := range append([]string{st.Name, st.CTag()}, st.Aliases...) {
			if first, ok := names[n]; ok && first != &st.Fact {
				c.at(&st.Fact, "name", "unique", "struct name %q is already used (first at %s)", n, first.Pos)
			}
			names[n] = &st.Fact
		}
	}
	cyclic := c.cycles()
	for _, st := range s.Structs {
		if cyclic[st] {
			continue
		}
		c.structLayout(st)
		c.fieldRanges(st)
		c.absent(st)
	}
}

// cycles reports structs that embed themselves by value, directly or not.
func (c *checker) cycles() map[*Struct]bool {
	bad := map[*Struct]bool{}
	state := map[*Struct]int{} // 1 visiting, 2 done
	var visit func(*Struct) bool
	visit = func(st *Struct) bool {
		switch state[st] {
		case 1:
			return true
		case 2:
			return bad[st]
		}
		state[st] = 1
		for _, f := range st.Fields {
			if f.T == nil {
				continue
			}
			if e := byValueStruct(f.T); e != nil && visit(e) {
				bad[st] = true
			}
		}
		state[st] = 2
		return bad[st]
	}
	for _, st := range c.s.Structs {
		if visit(st) {
			c.at(&st.Fact, "name", "struct-cycle", "struct %s contains itself by value", st.Name)
		}
	}
	return bad
}

func byValueStruct(t *Type) *Struct {
	for t.Kind == KindArray {
		t = t.Elem
	}
	if t.Kind == KindStruct {
		return t.Struct
	}
	return nil
}

func (c *checker) structLayout(st *Struct) {
	if st.Size <= 0 {
		c.at(&st.Fact, "size", "required", "struct %s needs its total size (size = N); model unknown parts as opaque ranges", st.Name)
		return
	}
	if st.Size > MaxObjectSize {
		c.at(&st.Fact, "size", "struct-size", "struct %s has size %d; sizes above %d bytes cannot be laid out", st.Name, st.Size, MaxObjectSize)
		return
	}
	// Every size and offset below is at most MaxObjectSize once these checks
	// pass, so the sums cannot overflow.
	outOfRange := func(f *Field) bool {
		return f.T == nil || f.Offset < 0 || f.Offset > MaxObjectSize || f.T.Size() > MaxObjectSize
	}
	seen := map[string]bool{}
	prevEnd, prevName := 0, ""
	for j := range st.Fields {
		f := &st.Fields[j]
		if f.Name == "" || !IsIdent(f.Name) {
			c.at(&f.Fact, "name", "required", "%s: field name %q is not a C identifier", st.Name, f.Name)
		}
		if seen[f.Name] {
			c.at(&f.Fact, "name", "unique", "%s.%s is declared twice", st.Name, f.Name)
		}
		seen[f.Name] = true
		if f.T == nil {
			continue
		}
		if f.T.Size() > MaxObjectSize {
			c.at(&f.Fact, "type", "struct-size", "%s.%s has type %s, larger than %d bytes; no struct can hold it", st.Name, f.Name, f.Type, MaxObjectSize)
			continue
		}
		if f.Offset < 0 || f.Offset > MaxObjectSize {
			c.at(&f.Fact, "offset", "struct-bounds", "%s.%s at offset %d lies outside the struct's %d bytes", st.Name, f.Name, f.Offset, st.Size)
			continue
		}
		sz, al := f.T.Size(), f.T.Align()
		if f.Size != 0 && f.Size != sz {
			c.at(&f.Fact, "size", "struct-size", "%s.%s declares size %d but its type %s has size %d", st.Name, f.Name, f.Size, f.Type, sz)
		}
		if f.Offset < 0 || f.Offset+sz > st.Size {
			c.at(&f.Fact, "offset", "struct-bounds", "%s.%s at %d..%d lies outside the struct's %d bytes", st.Name, f.Name, f.Offset, f.Offset+sz, st.Size)
		}
		if al > 0 && f.Offset%al != 0 && !st.Packed {
			c.at(&f.Fact, "offset", "struct-align", "%s.%s at offset %d is not aligned for %s (alignment %d on x86-64)", st.Name, f.Name, f.Offset, f.Type, al)
		}
		if j > 0 {
			switch {
			case f.Offset < st.Fields[j-1].Offset:
				c.at(&f.Fact, "offset", "struct-order", "%s.%s at %d comes after %s at %d; keep fields sorted by offset", st.Name, f.Name, f.Offset, prevName, st.Fields[j-1].Offset)
			case f.Offset < prevEnd:
				c.at(&f.Fact, "offset", "struct-overlap", "%s.%s at %d overlaps %s, which ends at %d", st.Name, f.Name, f.Offset, prevName, prevEnd)
			}
		}
		// A flexible array member is the last field and starts at the end
		// or inside the tail padding: struct { int64_t a; char b; short
		// t[]; } has t at 10 of 16 bytes.
		if f.T.Kind == KindArray && f.T.Len < 0 {
			switch {
			case j != len(st.Fields)-1:
				c.at(&f.Fact, "offset", "struct-bounds", "%s.%s is a flexible array member and must be the last field (%s follows it)", st.Name, f.Name, st.Fields[j+1].Name)
			case f.Offset != st.Size && (f.Offset > st.Size || st.Size-f.Offset >= st.Align()):
				c.at(&f.Fact, "offset", "struct-bounds", "%s.%s is a flexible array member and sits at the end (%d) or in the tail padding before it, not at %d", st.Name, f.Name, st.Size, f.Offset)
			}
		}
		prevEnd, prevName = max(prevEnd, f.Offset+sz), f.Name
	}
	if al := st.Align(); st.Size%al != 0 && !st.Prefix {
		c.at(&st.Fact, "size", "struct-size", "struct %s has size %d, not a multiple of its alignment %d; no C compiler lays it out that way", st.Name, st.Size, al)
	}
	for j := range st.Opaque {
		o := &st.Opaque[j]
		if o.Size <= 0 {
			c.at(&o.Fact, "size", "opaque-overlap", "%s: opaque range at %d has size %d; it must be non-empty", st.Name, o.Offset, o.Size)
			continue
		}
		if o.Size > MaxObjectSize || o.Offset < 0 || o.Offset > MaxObjectSize {
			c.at(&o.Fact, "offset", "struct-bounds", "%s: opaque range of %d bytes at %d lies outside the struct's %d bytes", st.Name, o.Size, o.Offset, st.Size)
			continue
		}
		if o.Offset < 0 || o.End() > st.Size {
			c.at(&o.Fact, "offset", "struct-bounds", "%s: opaque range %d..%d lies outside the struct's %d bytes", st.Name, o.Offset, o.End(), st.Size)
		}
		if j > 0 {
			p := st.Opaque[j-1]
			if p.Size > MaxObjectSize || p.Offset < 0 || p.Offset > MaxObjectSize {
				p.Size = 0 // reported above; compare nothing with it
			}
			if o.Offset < p.Offset {
				c.at(&o.Fact, "offset", "struct-order", "%s: opaque range at %d comes after the one at %d; keep them sorted", st.Name, o.Offset, p.Offset)
			} else if o.Offset < p.End() {
				c.at(&o.Fact, "offset", "opaque-overlap", "%s: opaque ranges %d..%d and %d..%d overlap", st.Name, p.Offset, p.End(), o.Offset, o.End())
			}
		}
		for _, f := range st.Fields {
			if !outOfRange(&f) && o.Offset < f.Offset+f.T.Size() && f.Offset < o.End() {
				c.at(&o.Fact, "offset", "opaque-overlap", "%s: opaque range %d..%d overlaps field %s at %d..%d", st.Name, o.Offset, o.End(), f.Name, f.Offset, f.Offset+f.T.Size())
			}
		}
	}
	if len(st.Fields) == 0 && len(st.Opaque) == 0 {
		c.at(&st.Fact, "name", "required", "struct %s has neither fields nor opaque ranges; declare at least an opaque range covering its size", st.Name)
	}
}
