package release

import (
	"context"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/riprel"
	"github.com/nrtabi/nrtabi/spec"
)

// Observed is what a set of binaries shows about the boundary: the facts
// `nrtabi release new` confirms, and nothing it would have to guess.
type Observed struct {
	Inputs   []ObservedInput
	Libnrt   *ObservedInput // the input playing libnrt, if any
	Libnccom *ObservedInput // the input playing libnccom, if any
	Libnet   *ObservedInput // the input playing the net plugin, if any
	Net      *ObservedNet   // what Libnet shows (observenet.go)

	// From libnccom.
	Exports    map[string]uint64         // neuron* definers -> address
	Signatures map[string]spec.Signature // neuron* prototypes from libnccom's DWARF
	CompatID   uint64                    // what neuronGetVersionInfo stores at compatibility_version
	HaveCompat bool
	Imports    map[string]string // reverse callbacks libnccom imports -> version

	// From libnrt.
	Callbacks   map[string]ObservedSymbol // nec_*/nrt_* definers: version, address
	Nodes       []spec.VersionNode        // .gnu.version_d
	Trampolines map[string]uint64         // nccl* -> address (.symtab)
	Slots       map[string]uint64         // neuron* -> slot address (.symtab + DWARF of the slot table)
	Sentinel    uint64

	// From the DWARF of every input.
	Structs     *StructSet // the structs found (nrtabi extract), with the enums and opaque types they use
	StructNames []string   // spec names of the structs found
}

// ObservedInput is one file and its identity.
type ObservedInput struct {
	Path, Role, SONAME, BuildID string
	Needed                      []string
	VersionNeeds                []spec.VersionNeed
}

// ObservedSymbol is a versioned definer.
type ObservedSymbol struct {
	Version string
	Addr    uint64
}

// Source names the input for provenance notes.
func (in *ObservedInput) Source() string {
	if label, ok := specmatch.Label(in.Path); ok {
		return label
	}
	s := filepath.Base(in.Path)
	if in.BuildID != "" {
		s += " (build-id " + in.BuildID + ")"
	}
	return s
}

// ObserveOptions says where Observe looks for the DWARF of a file that holds
// none of its own.
type ObserveOptions struct {
	// DebugDirs are searched for separate debug files (elfread.FindDebug).
	DebugDirs []string
	// Fetch downloads a debug file by build-id when no directory has it
	// (the commands wire debuginfod to it); nil: none is downloaded.
	Fetch elfread.Fetcher
	// Open, when set, opens each file by the name given: a package member
	// read in memory (docs/packages.md); nil: elfread.Open.
	Open func(name string) (*elfread.File, error)
	// Mem holds debug files read in memory from packages; nil: none.
	Mem *elfread.MemDebug
}

// Observe reads the files against base: roles from their SONAMEs, symbols
// and versions from their dynamic tables, trampolines and slots from their
// symbol tables, the compatibility id from the probe's code, and every base
// struct present in their DWARF.
func Observe(ctx context.Context, files []string, base *spec.Spec, opt ObserveOptions) (*Observed, error) {
	obs := &Observed{Exports: map[string]uint64{}, Signatures: map[string]spec.Signature{}, Imports: map[string]string{},
		Callbacks: map[string]ObservedSymbol{}, Trampolines: map[string]uint64{}, Slots: map[string]uint64{}}
	var fragments []*fragment
	var fragPaths []string
	seen := map[string]bool{}
	for _, path := range files {
		open := elfread.Open
		if opt.Open != nil {
			open = opt.Open
		}
		o, err := open(path)
		if err != nil {
			return nil, err
		}
		lk := elfread.Lookup{Dirs: opt.DebugDirs, Fetch: opt.Fetch}
		lk.Mem = opt.Mem
		frag, names, ferr := obs.observe(ctx, o, path, base, lk)
		o.Close()
		if ferr != nil {
			return nil, ferr
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				obs.StructNames = append(obs.StructNames, n)
			}
		}
		if frag != nil {
			fragments, fragPaths = append(fragments, frag), append(fragPaths, path)
		}
	}
	if len(fragments) > 0 {
		merged, err := mergeFragments(fragments, fragPaths)
		if err != nil {
			return nil, err
		}
		obs.Structs = merged
	}
	sort.Strings(obs.StructNames)
	return obs, nil
}

// observe reads one file: its role's symbols, and the base structs, slot
// table and signatures its DWARF holds. A file without DWARF anywhere gives
// symbols only; a debug file that exists but cannot be used is an error.
func (obs *Observed) observe(ctx context.Context, o *elfread.File, path string, base *spec.Spec, lk elfread.Lookup) (*fragment, []string, error) {
	dbg, err := elfread.FindDebug(ctx, o, lk)
	switch {
	case errors.Is(err, elfread.ErrNoDWARF):
		dbg = nil
	case err != nil:
		return nil, nil, err
	default:
		defer dbg.Close()
	}
	role, _ := specmatch.DetectRole(o, base)
	if net, err := isNetPlugin(o, path, role, base); err != nil {
		return nil, nil, err
	} else if net {
		role = specmatch.RoleLibnccomNet
	}
	in := &ObservedInput{Path: path, Role: role, SONAME: o.SONAME, BuildID: o.BuildID, Needed: o.Needed}
	switch role {
	case specmatch.RoleLibnccomNet:
		if obs.Libnet != nil {
			return nil, nil, elfread.InputErrorf(path, "a second net plugin (the first is %s); give one of each library", obs.Libnet.Path)
		}
		obs.Libnet = in
		if err := obs.netPlugin(o, path); err != nil {
			return nil, nil, err
		}
	case specmatch.RoleLibnccom:
		if obs.Libnccom != nil {
			return nil, nil, elfread.InputErrorf(path, "a second libnccom (the first is %s); give one of each library", obs.Libnccom.Path)
		}
		obs.Libnccom = in
		if err := obs.libnccom(o, dbg, in, base); err != nil {
			return nil, nil, err
		}
	case specmatch.RoleLibnrt:
		if obs.Libnrt != nil {
			return nil, nil, elfread.InputErrorf(path, "a second libnrt (the first is %s); give one of each library", obs.Libnrt.Path)
		}
		obs.Libnrt = in
		if err := obs.libnrt(o, dbg, base); err != nil {
			return nil, nil, err
		}
	}
	obs.Inputs = append(obs.Inputs, *in)
	if dbg == nil {
		return nil, nil, nil
	}
	return structsOf(o, dbg, base)
}

// structsOf extracts every base struct dbg, the DWARF of o, holds.
func structsOf(o *elfread.File, dbg *elfread.Debug, base *spec.Spec) (*fragment, []string, error) {
	wants := make([][]string, len(base.Structs))
	for i, st := range base.Structs {
		wants[i] = specmatch.StructNames(st)
	}
	found, err := dbg.FindStructs(wants)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for i, f := range found {
		if f != nil {
			names = append(names, base.Structs[i].Name)
		}
	}
	var frag *fragment
	if len(names) > 0 {
		if frag, err = extractFrom(o, dbg, ExtractOptions{Names: names, SkipAbsent: true, Spec: base}); err != nil {
			return nil, nil, err
		}
	}
	// The structs the signatures pass by pointer, and the enums of the
	// spec the input declares, restated from it (pointees.go).
	pf, err := pointees(o, dbg, base)
	if err != nil {
		return nil, nil, err
	}
	src, conf := inputSource(o.Path)
	enums, err := refreshEnums(dbg, base, src, conf)
	if err != nil {
		return nil, nil, err
	}
	if pf == nil && len(enums) == 0 && frag == nil {
		return nil, nil, nil
	}
	if frag == nil {
		frag = &fragment{}
	}
	if pf != nil {
		frag.Structs = append(frag.Structs, pf.Structs...)
		frag.Enums = append(frag.Enums, pf.Enums...)
		frag.Opaques = append(frag.Opaques, pf.Opaques...)
		for _, st := range pf.Structs {
			names = append(names, st.Name)
		}
	}
	frag.Enums = mergeEnums(frag.Enums, enums)
	frag.Opaques = withoutStructs(frag.Opaques, frag.Structs)
	return frag, names, nil
}

// mergeEnums is have with each enum of fresh in place of the one of that
// name, and the others of fresh after; each name once.
func mergeEnums(have, fresh []spec.Enum) []spec.Enum {
	byName := map[string]int{}
	var out []spec.Enum
	for _, e := range have {
		if _, ok := byName[e.Name]; !ok {
			byName[e.Name] = len(out)
			out = append(out, e)
		}
	}
	for _, e := range fresh {
		if i, ok := byName[e.Name]; ok {
			out[i] = e
			continue
		}
		byName[e.Name] = len(out)
		out = append(out, e)
	}
	return out
}

// withoutStructs drops the opaque rows a struct row now describes.
func withoutStructs(ops []spec.OpaqueType, structs []*spec.Struct) []spec.OpaqueType {
	described := map[string]bool{}
	for _, st := range structs {
		described[st.Name] = true
	}
	seen := map[string]bool{}
	var out []spec.OpaqueType
	for _, o := range ops {
		if !described[o.Name] && !seen[o.Name] {
			seen[o.Name] = true
			out = append(out, o)
		}
	}
	return out
}

func (obs *Observed) libnccom(o *elfread.File, dbg *elfread.Debug, in *ObservedInput, base *spec.Spec) error {
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return err
	}
	for _, s := range t.Syms {
		switch {
		case s.Section != elf.SHN_UNDEF && strings.HasPrefix(s.Name, "neuron") && elf.ST_TYPE(s.Info) == elf.STT_FUNC:
			obs.Exports[s.Name] = s.Value
		case s.Section == elf.SHN_UNDEF && s.Version != "" && (strings.HasPrefix(s.Name, "nec_") || strings.HasPrefix(s.Name, "nrt_")):
			obs.Imports[s.Name] = s.Version
		}
	}
	for _, n := range t.Needs {
		for _, d := range n.Needs {
			in.VersionNeeds = append(in.VersionNeeds, spec.VersionNeed{File: n.Name, Version: d.Dep, Index: int(d.Index)})
		}
	}
	if probe := probeOf(base); probe != nil {
		if s := t.Defined(probe.Name); s != nil {
			obs.CompatID, obs.HaveCompat = compatStore(o, s, compatOffset(base))
		}
	}
	if dbg == nil {
		return nil // stripped without debug files: no prototypes to read
	}
	return obs.signatures(dbg, base)
}

func probeOf(s *spec.Spec) *spec.Forward {
	for i := range s.Forward {
		if s.Forward[i].Guard == spec.Probe {
			return &s.Forward[i]
		}
	}
	return nil
}

// compatOffset is where the probe writes the compatibility id (48 in 2.31.24).
func compatOffset(s *spec.Spec) int64 {
	if st := s.StructByName("nec_version_info_t"); st != nil {
		for _, f := range st.Fields {
			if f.Name == "compatibility_version" {
				return int64(f.Offset)
			}
		}
	}
	return 48
}

// compatStore finds the immediate the probe stores at the compatibility
// field: the shipped libnccom's `movq $0x59,0x30(%rax)`, or any register base.
func compatStore(o *elfread.File, sym *elf.Symbol, off int64) (uint64, bool) {
	stores, err := riprel.StoredImmediates(elfread.FunctionBytes(o, sym.Value, sym.Size), off)
	if err != nil || len(stores) == 0 {
		return 0, false
	}
	return stores[0], true
}

// signatures reads the prototypes of libnccom's neuron* definers from its
// DWARF, so a new forward symbol arrives with its C signature. A definer
// whose types the spec grammar cannot spell gets none; DWARF that cannot be
// read is an error.
func (obs *Observed) signatures(dbg *elfread.Debug, base *spec.Spec) error {
	data, err := dbg.DWARFData()
	if err != nil {
		return wrapInput(dbg.Path(), err, "reading the prototypes of libnccom's definers")
	}
	x := &extractor{g: dbg.Types(), byOff: map[dwarf.Offset]*xStruct{}, byName: map[string]*xStruct{},
		enums: map[string]*xEnum{}, enumerators: map[string]bool{}, opaques: map[string]bool{}, sp: base, names: specmatch.NewNames(base), mainDebug: dbg.Path()}
	// Spec structs are named by their spec names, never extracted again here.
	for _, st := range base.Structs {
		x.byName[st.Name] = &xStruct{name: st.Name, done: true}
	}
	// The prototypes' DIEs are walked with debug/dwarf; their types are
	// read from the type graph (the main file's offsets are the graph's).
	spell := func(off dwarf.Offset) (string, bool) {
		t, err := x.g.At(off)
		if err != nil {
			return "", false
		}
		s, _, ok := x.specType(t, false)
		return s, ok
	}
	r := data.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return wrapInput(dbg.Path(), err, "reading the prototypes of libnccom's definers")
		}
		if e == nil {
			return nil
		}
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if _, ok := obs.Exports[name]; !ok || !e.Children {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		sg := spec.Signature{Returns: "void"}
		if off, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
			ret, ok := spell(off)
			if !ok {
				r.SkipChildren()
				continue
			}
			sg.Returns = ret
		}
		good := true
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			if c.Tag == dwarf.TagFormalParameter {
				pn, _ := c.Val(dwarf.AttrName).(string)
				off, _ := c.Val(dwarf.AttrType).(dwarf.Offset)
				pt, ok := spell(off)
				good = good && ok && pn != ""
				sg.Params = append(sg.Params, spec.Param{Name: pn, Type: pt})
			}
			if c.Children {
				r.SkipChildren()
			}
		}
		if good {
			obs.Signatures[name] = sg
		}
	}
}

func (obs *Observed) libnrt(o *elfread.File, dbg *elfread.Debug, base *spec.Spec) error {
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return err
	}
	for _, s := range t.Syms {
		if s.Section != elf.SHN_UNDEF && (strings.HasPrefix(s.Name, "nec_") || strings.HasPrefix(s.Name, "nrt_")) && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			obs.Callbacks[s.Name] = ObservedSymbol{Version: s.Version, Addr: s.Value}
		}
	}
	for _, d := range t.Defs {
		n := spec.VersionNode{Name: d.Name, Index: int(d.Index), Base: d.Flags&elf.VER_FLG_BASE != 0}
		if len(d.Deps) > 0 {
			n.Parent = d.Deps[0]
		}
		obs.Nodes = append(obs.Nodes, n)
	}
	syms, err := o.File.Symbols()
	if err != nil || len(syms) == 0 {
		return nil // stripped: trampolines and slots stay carried over
	}
	byName := map[string]elf.Symbol{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			if _, ok := byName[elfread.BaseIdent(s.Name)]; !ok {
				byName[elfread.BaseIdent(s.Name)] = s
			}
		}
	}
	if s, ok := byName[base.SlotTable.Sentinel]; ok {
		obs.Sentinel = s.Value
	}
	for _, s := range syms {
		if n := elfread.BaseIdent(s.Name); strings.HasPrefix(n, "nccl") && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			obs.Trampolines[n] = s.Value
		}
	}
	if dbg == nil {
		return nil // no DWARF of the slot table: slots stay carried over
	}
	return obs.slots(dbg, byName)
}

// slots reads the slot addresses from the slot-table object: its symbol
// gives the address, its DWARF type the offset of each named slot. A libnrt
// built from the generated nrt_slots.c has both; others keep their slots.
func (obs *Observed) slots(dbg *elfread.Debug, byName map[string]elf.Symbol) error {
	const table = "nrt_nccl_slots"
	sym, ok := byName[table]
	if !ok {
		return nil
	}
	found, err := dbg.FindStructs([][]string{{table}})
	if err != nil {
		return err
	}
	if found[0] == nil {
		return nil
	}
	l, err := dbg.Types().Struct(found[0].Offset)
	if err != nil {
		return wrapInput(dbg.Path(), err, "%s", table)
	}
	for _, m := range l.Fields {
		if strings.HasPrefix(m.Name, "neuron") && !m.Base {
			obs.Slots[m.Name] = sym.Value + uint64(m.Offset)
		}
	}
	return nil
}

// StructSet is what the DWARF of the inputs describes.
type StructSet struct {
	Structs []*spec.Struct
	Enums   []spec.Enum
	Opaques []spec.OpaqueType
	From    []string // the inputs it was read from
}

// mergeFragments joins the struct fragments of several inputs into one. A
// struct (or enum) both libraries describe must have the same layout in
// both: the two sides of the boundary disagreeing is an error, not a choice.
func mergeFragments(frags []*fragment, paths []string) (*StructSet, error) {
	var structs []*spec.Struct
	var enums []spec.Enum
	var opaques []spec.OpaqueType
	from := map[string]string{}
	for i, frag := range frags {
		for _, st := range frag.Structs {
			prev, ok := from["struct "+st.Name]
			if !ok {
				from["struct "+st.Name] = paths[i]
				structs = append(structs, st)
				continue
			}
			for _, o := range structs {
				if o.Name == st.Name && layoutKey(o) != layoutKey(st) {
					return nil, fmt.Errorf("%s and %s disagree on the layout of %s: %s vs %s", prev, paths[i], st.Name, layoutKey(o), layoutKey(st))
				}
			}
		}
		for _, e := range frag.Enums {
			if _, ok := from["enum "+e.Name]; !ok {
				from["enum "+e.Name] = paths[i]
				enums = append(enums, e)
			}
		}
		for _, o := range frag.Opaques {
			if _, ok := from["opaque "+o.Name]; !ok {
				from["opaque "+o.Name] = paths[i]
				opaques = append(opaques, o)
			}
		}
	}
	return &StructSet{Structs: structs, Enums: enums, Opaques: opaques, From: paths}, nil
}

// layoutKey summarises a struct's layout for comparison.
func layoutKey(st *spec.Struct) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d B", st.Size)
	for _, f := range st.Fields {
		fmt.Fprintf(&b, ", %s %s@%d", f.Type, f.Name, f.Offset)
	}
	return b.String()
}
