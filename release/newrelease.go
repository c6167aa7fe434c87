package release

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/spec"
)

// Release is a new release made in memory from what binaries show: the
// rows of each file of its directory, and the spec they give once derived
// from the base, resolved and validated. Nothing is written until Write.
type Release struct {
	Spec  *spec.Spec
	files map[string]*spec.File
	heads map[string]string // file -> the comment it starts with
}

// New makes release name, derived from base, from what the binaries show.
// Facts the binaries confirm are restated with provenance naming them and
// their build-ids; a restated row lists under `carried` the keys it kept
// from base unconfirmed; rows the binaries cannot speak to are inherited and
// listed in [release] carried_over. The release is validated as it would
// load from root/name, its parents looked up in root (when not "") and among
// the embedded releases.
func New(base *spec.Spec, name string, obs *Observed, root string) (*Release, error) {
	return NewWith(base, name, obs, root, Identity{})
}

// Identity is what the user states of a new release that no input shows:
// the versions its libraries report (spec format, release identity). Empty
// fields stay unknown; they are never taken from the name or the parent.
type Identity struct {
	RuntimeVersion, CollectivesVersion string
	// Headers is how a header tree read as an input was compiled, recorded
	// as [release.headers] (docs/spec-format.md#header-provenance).
	Headers spec.Headers
	// Uses, when set, says which fields (struct, stable name) hand-written
	// code uses: a field the inputs lack becomes an absent row only then
	// (docs/spec-format.md#absent-fields). Nil: every field they lack.
	Uses func(structName, field string) bool
}

// NewWith is New with the versions the user states.
func NewWith(base *spec.Spec, name string, obs *Observed, root string, id Identity) (*Release, error) {
	for _, v := range []struct{ flag, v string }{{"runtime version", id.RuntimeVersion}, {"collectives version", id.CollectivesVersion}} {
		if p := spec.VersionProblem(v.v); v.v != "" && p != "" {
			return nil, fmt.Errorf("%s %q: %s", v.flag, v.v, p)
		}
	}
	if obs.Libnrt == nil && obs.Libnccom == nil && obs.Libnet == nil && len(obs.StructNames) == 0 {
		return nil, fmt.Errorf("the binaries show nothing about the boundary: no libnrt or libnccom by SONAME (%s, %s), no net plugin (%s, or %s* tables) and no spec struct in their DWARF",
			base.Release.LibNRT.SONAME, base.Release.LibNCCOM.SONAME, orNone(base.Release.LibNCCOMNet.File), spec.NetTablePrefix)
	}
	nr := &newRelease{base: base, obs: obs, removed: map[string][]string{}, uses: id.Uses}
	var srcs []string
	for _, in := range obs.Inputs {
		srcs = append(srcs, inputText(in.Source()))
	}
	nr.source = "nrtabi release new from " + strings.Join(srcs, ", ")

	fwd, err := nr.forward()
	if err != nil {
		return nil, err
	}
	rev := nr.reverse()
	nodes := nr.nodes()
	consts, msgs := nr.compat()

	// The release's name is the user's; its versions are not observed and
	// never carried: a release that does not know them says so (spec
	// format, release identity).
	rel := spec.Release{Name: name, DerivedFrom: base.Release.Name, RuntimeVersion: id.RuntimeVersion, CollectivesVersion: id.CollectivesVersion,
		Fact: spec.Fact{Conf: spec.High, Source: "nrtabi release new --name " + name}}
	if id.RuntimeVersion != "" || id.CollectivesVersion != "" {
		// Stated by the user, not read from a binary: MED, and said so.
		rel.Source += " (versions as stated on the command line)"
		rel.ConfFields = map[string]string{}
		if id.RuntimeVersion != "" {
			rel.ConfFields["runtime_version"] = string(spec.Med)
		}
		if id.CollectivesVersion != "" {
			rel.ConfFields["collectives_version"] = string(spec.Med)
		}
	}
	if id.Headers.Tree != "" {
		rel.Headers = id.Headers
		// Paths as given, escaped as every input name in the spec is.
		rel.Headers.Tree = inputText(id.Headers.Tree)
		rel.Headers.IncludeDirs = nil
		for _, d := range id.Headers.IncludeDirs {
			rel.Headers.IncludeDirs = append(rel.Headers.IncludeDirs, inputText(d))
		}
		rel.Headers.Fact = spec.Fact{Conf: spec.High, Source: "nrtabi release new --headers " + inputText(id.Headers.Tree)}
	}
	if in := obs.Libnrt; in != nil {
		rel.LibNRT = library(in, nr.source)
	} else {
		rel.LibNRT = nr.carriedWhole(base.Release.LibNRT)
	}
	if in := obs.Libnccom; in != nil {
		rel.LibNCCOM = library(in, nr.source)
		if g := base.Release.LibNCCOM.Git; g != "" {
			rel.LibNCCOM.Git = g
			nr.carry(&rel.LibNCCOM.Fact, base.Release.LibNCCOM.Fact, "git")
		}
	} else {
		rel.LibNCCOM = nr.carriedWhole(base.Release.LibNCCOM)
	}
	if in := obs.Libnet; in != nil {
		rel.LibNCCOMNet = nr.netLibrary(in, obs.Net)
	} else {
		rel.LibNCCOMNet = nr.carriedWhole(base.Release.LibNCCOMNet)
	}
	rel.CarriedOver = nr.carriedOver(fwd, rev, nodes, consts, msgs)
	counts, table := nr.counts(fwd, rev), nr.table(fwd)
	out := &Release{files: map[string]*spec.File{}, heads: map[string]string{}}
	out.files["release.toml"] = &spec.File{Rows: &spec.Spec{Release: rel, Counts: counts, SlotTable: table}}
	if len(nr.removed) > 0 {
		out.files["release.toml"].Remove = nr.removed
	}
	out.heads["release.toml"] = comment(fmt.Sprintf("Release %s, made by `nrtabi release new --spec %s --name %s` from:\n  %s\nRows restated here are sourced to what the inputs show. A row with\ncarried_from = %q and a `carried` list keeps those keys from %s, at\n%s's confidence and source; with carried_from and no list the whole row is\n%s's. Rows not restated are inherited from %s, unconfirmed, and named in\ncarried_over. runtime_version and collectives_version are not observed:\nthey are what --runtime-version and --collectives-version stated, if anything.", name, base.Release.Name, name, strings.Join(srcs, "\n  "), base.Release.Name, base.Release.Name, base.Release.Name, base.Release.Name, base.Release.Name)) + "\n"
	if len(fwd) > 0 {
		out.files["forward.toml"] = &spec.File{Rows: &spec.Spec{Forward: fwd}}
	}
	if len(rev) > 0 {
		out.files["reverse.toml"] = &spec.File{Rows: &spec.Spec{Reverse: rev}}
	}
	if len(nodes) > 0 {
		out.files["versions.toml"] = &spec.File{Rows: &spec.Spec{VersionNodes: nodes}}
	}
	if len(consts)+len(msgs) > 0 {
		out.files["constants.toml"] = &spec.File{Rows: &spec.Spec{Constants: consts, Messages: msgs}}
	}
	if obs.Structs != nil {
		// A parent opaque type the inputs define is now a struct: its
		// opaque row goes (docs/nrtabi-release-new.md#what-the-inputs-declare-wins).
		for _, st := range obs.Structs.Structs {
			for _, o := range base.OpaqueTypes {
				if o.Name == st.Name && base.StructByName(st.Name) == nil {
					nr.removed["opaque_type"] = append(nr.removed["opaque_type"], o.Name)
				}
			}
		}
		if len(nr.removed) > 0 {
			out.files["release.toml"].Remove = nr.removed
		}
		f := &spec.File{Rows: &spec.Spec{OpaqueTypes: obs.Structs.Opaques, Enums: obs.Structs.Enums}}
		for _, st := range obs.Structs.Structs {
			f.Rows.Structs = append(f.Rows.Structs, nr.withSpecMetadata(st))
		}
		out.files["structs.toml"] = f
		out.heads["structs.toml"] = comment(fmt.Sprintf("Structs read from the DWARF of %s.\nside, aliases and prefix are the spec's own and kept from %s.", inputList(specmatch.Labelled(obs.Structs.From)), base.Release.Name))
	}
	if out.Spec, err = spec.Assemble(filepath.Join(root, name), root, out.files); err != nil {
		return nil, err
	}
	return out, nil
}

// inputText is an input's name (a path given on the command line, a
// --headers directory) as it may appear in the spec's comments and sources,
// which gen emits into C and Go comments: a name of printable ASCII without
// a comment delimiter is kept; any other is Go-quoted (control bytes,
// newlines, non-ASCII escaped; '*' too when it would form a comment
// delimiter), so no path is
// pasted raw (docs/nrtabi-release-new.md).
func inputText(p string) string {
	q := strconv.QuoteToASCII(p)
	if strings.Contains(q, "*/") || strings.Contains(q, "/*") {
		q = strings.ReplaceAll(q, "*", `\x2a`) // still a Go escape of the same path
	}
	if q[1:len(q)-1] == p {
		return p
	}
	return q
}

func inputList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = inputText(n)
	}
	return strings.Join(out, ", ")
}

func comment(text string) string {
	var b strings.Builder
	w := &spec.Writer{W: &b}
	w.Comment(text)
	return b.String()
}

// render writes one file: its comment, then its tables.
func render(head string, f *spec.File) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(head)
	w := &spec.Writer{W: &b}
	w.File(f)
	return b.Bytes(), w.Err()
}

// withSpecMetadata gives a struct read from DWARF what only the spec knows:
// which side it belongs to (a wire image gets encoders), its aliases, and
// whether only a prefix is modelled (then the DWARF shows the whole object,
// which is kept as the new, complete description).
// Those keys are the parent's, and marked carried.
func (nr *newRelease) withSpecMetadata(st *spec.Struct) *spec.Struct {
	old := nr.base.StructByName(st.Name)
	if old == nil {
		return st
	}
	out := *st
	var carried []string
	if out.Side = old.Side; old.Side != "" {
		carried = append(carried, "side")
	}
	added := false
	for _, a := range old.Aliases {
		if !slices.Contains(out.Aliases, a) && a != out.Name {
			out.Aliases = append(out.Aliases, a)
			added = true
		}
	}
	if added {
		carried = append(carried, "aliases")
	}
	if out.Prefix = old.Prefix && st.Size <= old.Size; out.Prefix {
		carried = append(carried, "prefix")
	}
	out.ConfFields = maps.Clone(out.ConfFields)
	out.Carried = slices.Clone(out.Carried)
	nr.carry(&out.Fact, old.Fact, carried...)
	// A field the binaries show under a new name at an old field's offset
	// keeps that field's stable name (docs/spec-format.md#stable-field-names);
	// a range the parent declares is a fact about the program no input
	// shows, so it is carried, from the parent, with the parent's grade.
	out.Fields = slices.Clone(st.Fields)
	spec.InferWas(old, &out)
	ranged := spec.CarryRanges(old, &out)
	for j := range out.Fields {
		f := &out.Fields[j]
		if pf := spec.ContinuedField(old, f); pf != nil && slices.Contains(ranged, f.Name) {
			nr.carry(&f.Fact, pf.Fact, "range")
		}
	}
	out.Absent = nr.absent(old, &out)
	return &out
}

// absent are the absent rows of st, restated from old: every field of old
// (by its stable name) the inputs show no member for — neither a field
// continuing it nor a member an opaque range covers — and every absent row
// of old still absent. The runtime's code names those fields; the spec
// says the release lacks them rather than inventing them
// (docs/spec-format.md#absent-fields). Fields no hand-written code uses
// are left out when nr.uses says which are used.
func (nr *newRelease) absent(old, st *spec.Struct) []spec.AbsentField {
	has := map[string]bool{}
	for i := range st.Fields {
		has[st.Fields[i].Name] = true
		if w := st.Fields[i].Was; w != "" {
			has[w] = true
		}
		if pf := spec.ContinuedField(old, &st.Fields[i]); pf != nil {
			has[pf.Name], has[pf.StableName()] = true, true
		}
	}
	for _, o := range st.Opaque {
		for _, c := range o.Covers {
			has[c] = true
		}
	}
	var out []spec.AbsentField
	seen := map[string]bool{}
	add := func(name, typ string, f spec.Fact) {
		if has[name] || seen[name] || nr.uses != nil && !nr.uses(old.Name, name) {
			return
		}
		seen[name] = true
		out = append(out, spec.AbsentField{Name: name, Type: typ, Fact: f})
	}
	for i := range old.Fields {
		f := &old.Fields[i]
		if has[f.Name] {
			continue
		}
		typ := f.StableType
		if typ == "" {
			typ = f.Type
		}
		add(f.StableName(), typ, spec.Fact{Conf: spec.High,
			Source: fmt.Sprintf("%s: %s has no member %s (%s @%d in %s)", nr.source, st.Name, f.Name, f.Type, f.Offset, nr.base.Release.Name)})
	}
	for _, a := range old.Absent {
		add(a.Name, a.Type, spec.Fact{Conf: spec.High, Source: fmt.Sprintf("%s: %s has no member %s (absent in %s too)", nr.source, st.Name, a.Name, nr.base.Release.Name)})
	}
	return out
}

type newRelease struct {
	base    *spec.Spec
	obs     *Observed
	source  string
	removed map[string][]string // [remove] lists
	// uses, when set, says whether hand-written code uses a field of a
	// struct (by stable name): only those become absent rows.
	uses func(structName, field string) bool
}

func library(in *ObservedInput, source string) spec.Library {
	return spec.Library{File: filepath.Base(in.Path), SONAME: in.SONAME, BuildID: in.BuildID, Needed: in.Needed,
		VersionNeeds: in.VersionNeeds, Fact: spec.Fact{Conf: spec.High, Source: source}}
}

// netLibrary is the net plugin's library row from its binary: its file,
// SONAME, build-id and needs, the tables it exports with their sizes from
// the symbol table (slots = st_size / 8), and what it says of its name and
// version in the note. Which table libnccom binds is libnccom's fact, not
// the plugin's: bound is carried from the parent and marked so.
func (nr *newRelease) netLibrary(in *ObservedInput, net *ObservedNet) spec.Library {
	l := library(in, nr.source)
	old := nr.base.Release.LibNCCOMNet
	bound := map[string]bool{}
	for _, o := range old.Objects {
		bound[o.Name] = o.Bound
	}
	carried := false
	for _, t := range net.Tables {
		if bound[t.Name] {
			t.Bound, carried = true, true
		}
		l.Objects = append(l.Objects, t)
	}
	l.Note = net.Summary()
	if carried {
		nr.carry(&l.Fact, old.Fact, "bound")
	}
	return l
}

func orNone(s string) string {
	if s == "" {
		return "none named"
	}
	return s
}

// factFrom is the provenance of a parent row restated from what the inputs
// show: HIGH and sourced to them, except the carried keys, which keep the
// parent's confidence and name its source (carry).
func (nr *newRelease) factFrom(old spec.Fact, carried []string) spec.Fact {
	f := spec.Fact{Conf: spec.High, Source: nr.source, Note: old.Note}
	nr.carry(&f, old, carried...)
	return f
}

// carry marks keys of a restated row as the parent's (docs/spec-format.md#provenance-and-confidence):
// listed in carried, carried_from the parent, each at the confidence the
// parent gave it, and the parent's source for them quoted in the row's.
func (nr *newRelease) carry(f *spec.Fact, old spec.Fact, keys ...string) {
	if len(keys) == 0 {
		return
	}
	if f.ConfFields == nil {
		f.ConfFields = map[string]string{}
	}
	for _, k := range keys {
		if !slices.Contains(f.Carried, k) {
			f.Carried = append(f.Carried, k)
		}
		if c := old.ConfOf(k); c != f.Conf {
			f.ConfFields[k] = string(c)
		} else {
			delete(f.ConfFields, k)
		}
	}
	if len(f.ConfFields) == 0 {
		f.ConfFields = nil
	}
	if f.CarriedFrom == "" {
		f.Source += fmt.Sprintf("; %s carried from %s (%s)", strings.Join(f.Carried, ", "), nr.base.Release.Name, old.Source)
	}
	f.CarriedFrom = nr.base.Release.Name
}

// carriedFact is a parent row's provenance restated whole: its confidence,
// source, note and per-key confidence, marked carried from the parent.
func (nr *newRelease) carriedFact(old spec.Fact) spec.Fact {
	return spec.Fact{Conf: old.Conf, Source: old.Source, Note: old.Note, ConfFields: old.ConfFields, CarriedFrom: nr.base.Release.Name}
}

// carriedWhole is a library table the inputs do not show: the parent's,
// marked, so its build-id and git are never taken for this release's
// (spec.Library.OwnGit). A parent without the table gives none.
func (nr *newRelease) carriedWhole(old spec.Library) spec.Library {
	if old.SONAME == "" && old.File == "" {
		return spec.Library{}
	}
	l := old
	l.Fact = nr.carriedFact(old.Fact)
	return l
}

// forward restates the forward rows libnccom exports, adds its new
// neuron* exports and removes the rows it no longer exports. Without a
// libnccom the rows are inherited.
func (nr *newRelease) forward() ([]spec.Forward, error) {
	obs, base := nr.obs, nr.base
	if obs.Libnccom == nil {
		return nil, nil
	}
	var out []spec.Forward
	for _, f := range base.ByIndex() {
		addr, ok := obs.Exports[f.Name]
		if !ok {
			if slot, has := obs.Slots[f.Name]; has {
				return nil, fmt.Errorf("%s does not export %s, but %s still has its slot (%#x) and dlsyms it: the two binaries are not a release pair",
					obs.Libnccom.Path, f.Name, obs.Libnrt.Path, slot)
			}
			nr.removed["forward"] = append(nr.removed["forward"], f.Name)
			continue
		}
		g := *f
		g.NCCOMAddr = addr
		var carried []string
		if slot, ok := obs.Slots[f.Name]; ok {
			g.Slot = slot
		} else {
			carried = append(carried, "slot")
		}
		if ta, ok := obs.Trampolines[f.Trampoline]; ok {
			g.TrampolineAddr = ta
		} else {
			carried = append(carried, "trampoline", "trampoline_addr")
		}
		if sg, ok := obs.Signatures[f.Name]; !ok || sg.Prototype() != f.Signature.Prototype() {
			carried = append(carried, "signature")
		}
		carried = append(carried, "index", "group", "guard")
		g.Fact = nr.factFrom(f.Fact, carried)
		out = append(out, g)
	}
	// New exports, in address order, take the next dlsym indices and, when
	// the slot table cannot be read, the next slots below the old base.
	var fresh []string
	for name := range obs.Exports {
		if base.ForwardByName(name) == nil {
			fresh = append(fresh, name)
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return obs.Exports[fresh[i]] < obs.Exports[fresh[j]] })
	next, low := len(base.Forward), base.SlotTable.Base
	for _, name := range fresh {
		f := spec.Forward{Name: name, NCCOMAddr: obs.Exports[name], Trampoline: "nccl" + strings.TrimPrefix(name, "neuron"),
			Group: groupOf(name), Guard: spec.Guarded}
		conf := spec.High
		inferred := map[string]string{"index": string(spec.Inferred), "group": string(spec.Inferred), "guard": string(spec.Inferred)}
		if slot, ok := obs.Slots[name]; ok {
			f.Slot = slot
		} else {
			// Not the parent's: a new row has none. The next slot down is a guess.
			low -= base.SlotTable.Stride
			f.Slot = low
			inferred["slot"] = string(spec.Inferred)
		}
		f.TrampolineAddr = obs.Trampolines[f.Trampoline]
		if sg, ok := obs.Signatures[name]; ok {
			f.Signature = sg
		} else {
			f.Signature = spec.Signature{Returns: "NRT_STATUS"}
			conf = spec.Inferred
		}
		f.Index = next
		next++
		f.Fact = spec.Fact{Conf: conf, Source: nr.source, ConfFields: inferred,
			Note: "new in this release; dlsym index, group and guard are inferred"}
		out = append(out, f)
	}
	switch {
	case base.SlotTable.Order == "descending" && len(obs.Slots) > 0:
		// With the slots read, the dlsym order follows the table's order.
		top := uint64(0)
		for _, f := range out {
			if f.Guard == spec.Probe {
				top = f.Slot
			}
		}
		for i := range out {
			if top >= out[i].Slot {
				out[i].Index = int((top - out[i].Slot) / base.SlotTable.Stride)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	case len(nr.removed["forward"]) > 0:
		// Without libnrt's table, a removal closes the gap: the remaining
		// rows keep their order, and their slots follow it (INFERRED).
		sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
		for i := range out {
			out[i].Index = i
			if base.SlotTable.Order == "descending" {
				out[i].Slot = base.SlotTable.Top - uint64(i)*base.SlotTable.Stride
			} else {
				out[i].Slot = base.SlotTable.Base + uint64(i)*base.SlotTable.Stride
			}
			// Recomputed from the order, not the parent's slot: inferred.
			out[i].Carried = slices.DeleteFunc(out[i].Carried, func(k string) bool { return k == "slot" })
			if len(out[i].Carried) == 0 {
				out[i].CarriedFrom = ""
			}
			if out[i].ConfFields == nil {
				out[i].ConfFields = map[string]string{}
			}
			out[i].ConfFields["slot"] = string(spec.Inferred)
		}
	default:
		sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	}
	return out, nil
}

// groupOf guesses a new symbol's group from its name (INFERRED).
func groupOf(name string) string {
	switch s := strings.TrimPrefix(name, "neuron"); {
	case strings.HasPrefix(s, "Net"):
		return "net"
	case strings.HasPrefix(s, "Bootstrap"):
		return "bootstrap"
	case strings.Contains(s, "Proxy"):
		return "proxy"
	}
	return "init"
}

// reverse restates the callbacks libnccom imports (version from the import,
// address from libnrt's definer) and removes those it no longer imports.
func (nr *newRelease) reverse() []spec.Reverse {
	obs, base := nr.obs, nr.base
	if obs.Libnccom == nil && obs.Libnrt == nil {
		return nil
	}
	var out []spec.Reverse
	for _, r := range base.Reverse {
		g := r
		var carried []string
		seen := false
		if v, ok := obs.Imports[r.Name]; ok {
			g.Version, seen = v, true
		} else if obs.Libnccom != nil {
			nr.removed["reverse"] = append(nr.removed["reverse"], r.Name)
			continue
		}
		if d, ok := obs.Callbacks[r.Name]; ok {
			g.Addr, seen = d.Addr, true
			if obs.Libnccom == nil {
				g.Version = d.Version
			}
		} else {
			carried = append(carried, "addr")
		}
		if !seen {
			continue
		}
		carried = append(carried, "group", "shape", "signature")
		if r.Target != "" {
			carried = append(carried, "target")
		}
		if len(r.TargetArgs) > 0 {
			carried = append(carried, "target_args")
		}
		if len(r.Reenters) > 0 {
			carried = append(carried, "reenters")
		}
		g.Fact = nr.factFrom(r.Fact, carried)
		out = append(out, g)
	}
	var fresh []string
	for name := range obs.Imports {
		if base.ReverseByName(name) == nil {
			fresh = append(fresh, name)
		}
	}
	sort.Strings(fresh)
	for _, name := range fresh {
		r := spec.Reverse{Name: name, Version: obs.Imports[name], Addr: obs.Callbacks[name].Addr, Group: "unknown", Shape: spec.ShapeThunk,
			Signature: spec.Signature{Returns: "void"},
			Fact: spec.Fact{Conf: spec.Inferred, Source: nr.source,
				Note: "new in this release: imported by libnccom; its C signature is not in the binaries (shape and signature are placeholders)"}}
		out = append(out, r)
	}
	return out
}

// nodes restates libnrt's version definitions.
func (nr *newRelease) nodes() []spec.VersionNode {
	if nr.obs.Libnrt == nil || len(nr.obs.Nodes) == 0 {
		return nil
	}
	have := map[string]bool{}
	var out []spec.VersionNode
	for _, n := range nr.obs.Nodes {
		have[n.Name] = true
		n.Fact = spec.Fact{Conf: spec.High, Source: nr.source + " (.gnu.version_d)"}
		if old := nr.base.VersionNodeByName(n.Name); old != nil && old.Binds != "" {
			n.Binds = old.Binds // words, not in the ELF
			nr.carry(&n.Fact, old.Fact, "binds")
		}
		out = append(out, n)
	}
	for _, n := range nr.base.VersionNodes {
		if !have[n.Name] {
			nr.removed["version_node"] = append(nr.removed["version_node"], n.Name)
		}
	}
	return out
}

// compat restates the compatibility id read from the probe's code, and the
// incompatibility message that quotes it.
func (nr *newRelease) compat() ([]spec.Constant, []spec.Message) {
	old := nr.base.ConstantByName("NCCOM_COMPAT_ID")
	if !nr.obs.HaveCompat || old == nil {
		return nil, nil
	}
	c := *old
	c.Value = int64(nr.obs.CompatID)
	c.Fact = spec.Fact{Conf: spec.High, Source: nr.source + ": the immediate neuronGetVersionInfo stores at compatibility_version"}
	var msgs []spec.Message
	oldID, _ := old.Int()
	if m := nr.base.MessageByID("nccl_incompatible"); m != nil && int64(nr.obs.CompatID) != oldID {
		want := fmt.Sprintf("expected: %d", oldID)
		if strings.Contains(m.Text, want) {
			n := *m
			n.Text = strings.Replace(m.Text, want, fmt.Sprintf("expected: %d", nr.obs.CompatID), 1)
			n.Fact = spec.Fact{Conf: spec.Inferred, Source: nr.source + ": the expected id follows NCCOM_COMPAT_ID"}
			msgs = append(msgs, n)
		}
	}
	return []spec.Constant{c}, msgs
}

// counts restates the counts of the rows the inputs showed; a count they
// could not show is the parent's, carried (a header-only release carries
// all three).
func (nr *newRelease) counts(fwd []spec.Forward, rev []spec.Reverse) spec.Counts {
	c := nr.base.Counts
	if fwd == nil && rev == nil {
		c.Fact = nr.carriedFact(nr.base.Counts.Fact)
		return c
	}
	var carried []string
	if fwd != nil {
		c.Forward = len(fwd)
	} else {
		carried = append(carried, "forward")
	}
	if rev != nil {
		c.ReverseNEC, c.ReverseNRT = 0, 0
		for _, r := range rev {
			if strings.HasPrefix(r.Name, "nec_") {
				c.ReverseNEC++
			} else {
				c.ReverseNRT++
			}
		}
	} else {
		carried = append(carried, "reverse_nec", "reverse_nrt")
	}
	c.Fact = spec.Fact{Conf: spec.High, Source: nr.source + " (the rows restated here)"}
	nr.carry(&c.Fact, nr.base.Counts.Fact, carried...)
	return c
}

// table restates the slot table: base and top from libnrt's slots (or,
// without them, inferred from the restated rows), the sentinel's address
// when libnrt shows it. The rest — stride, order, the sentinel's name, the
// net handle, the dlopen names — no input shows: the parent's, carried. An
// input set that shows nothing of it carries the whole table.
func (nr *newRelease) table(fwd []spec.Forward) spec.SlotTable {
	old := nr.base.SlotTable
	t := old
	observed := map[string]bool{}
	inferred := map[string]bool{}
	if len(fwd) > 0 {
		t.Base, t.Top = fwd[0].Slot, fwd[0].Slot
		for _, f := range fwd {
			t.Base, t.Top = min(t.Base, f.Slot), max(t.Top, f.Slot)
		}
		sloted := len(nr.obs.Slots) > 0
		for _, k := range []struct {
			key     string
			changed bool
		}{{"base", t.Base != old.Base}, {"top", t.Top != old.Top}} {
			switch {
			case sloted:
				observed[k.key] = true
			case k.changed:
				inferred[k.key] = true
			}
		}
	}
	if nr.obs.Sentinel != 0 {
		t.SentinelAddr = nr.obs.Sentinel
		observed["sentinel_addr"] = true
	}
	if len(observed) == 0 && len(inferred) == 0 {
		t.Fact = nr.carriedFact(old.Fact)
		return t
	}
	t.Fact = spec.Fact{Conf: spec.High, Source: nr.source, Note: old.Note}
	if len(observed) == 0 {
		t.Conf = spec.Inferred // only what the restated rows imply
	}
	var carried []string
	for _, k := range []string{"base", "top", "stride", "order", "sentinel", "sentinel_addr", "net_handle_addr", "library", "net_library", "net_probe"} {
		if !observed[k] && !inferred[k] {
			carried = append(carried, k)
		}
	}
	nr.carry(&t.Fact, old.Fact, carried...)
	for k := range inferred {
		if t.Conf != spec.Inferred {
			if t.ConfFields == nil {
				t.ConfFields = map[string]string{}
			}
			t.ConfFields[k] = string(spec.Inferred)
		}
	}
	return t
}

// carriedOver names every base row the new release inherits unconfirmed.
func (nr *newRelease) carriedOver(fwd []spec.Forward, rev []spec.Reverse, nodes []spec.VersionNode, consts []spec.Constant, msgs []spec.Message) []string {
	var out []string
	if fwd == nil {
		out = append(out, "forward *")
	}
	if rev == nil {
		out = append(out, "reverse *")
	}
	if nodes == nil {
		out = append(out, "version_node *")
	}
	found := map[string]bool{}
	for _, n := range nr.obs.StructNames {
		found[n] = true
	}
	for _, st := range nr.base.Structs {
		if !found[st.Name] {
			out = append(out, "struct "+st.Name)
		}
	}
	restated := map[string]bool{}
	for _, c := range consts {
		restated[c.Name] = true
	}
	for _, c := range nr.base.Constants {
		if !restated[c.Name] {
			out = append(out, "constant "+c.Name)
		}
	}
	for _, m := range msgs {
		restated[m.ID] = true
	}
	for _, m := range nr.base.Messages {
		if !restated[m.ID] {
			out = append(out, "message "+m.ID)
		}
	}
	return out
}

// WriteOptions says what Write may do to what is already there.
type WriteOptions struct {
	// Force replaces an existing directory; without it Write refuses.
	Force bool
}

// Write puts the release's files in dir: rendered to TOML, written into a
// scratch directory next to dir and moved into place, so an error leaves
// everything as it was. An existing dir is replaced only with opt.Force.
func (r *Release) Write(dir string, opt WriteOptions) error {
	if err := CheckDest(dir, opt); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(parent, ".nrtabi-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := os.Chmod(stage, 0o755); err != nil {
		return err
	}
	for name, f := range r.files {
		data, err := render(r.heads[name], f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			return err
		}
	}
	if opt.Force {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return os.Rename(stage, dir)
}

// CheckDest is whether Write may write dir: absent, or a release directory
// and opt.Force. A caller checks before the work of making the release.
func CheckDest(dir string, opt WriteOptions) error {
	if _, err := os.Lstat(dir); err != nil {
		return nil
	}
	if p := notARelease(dir); p != "" {
		return fmt.Errorf("%s exists and is not a release directory (%s); a release never replaces it, --force or not: choose another --name", dir, p)
	}
	if !opt.Force {
		return fmt.Errorf("%s already exists; remove it or pass --force", dir)
	}
	return nil
}

// notARelease says why dir, which exists, is not a release directory that
// --force may replace ("" when it is one): a release holds release.toml and
// TOML files only, so a Go package (spec/compiled), a testdata tree or any
// other directory is never removed in its place.
func notARelease(dir string) string {
	st, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err.Error()
	case !st.IsDir():
		return "not a directory"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	if len(entries) == 0 {
		return "" // empty: nothing to lose
	}
	release := false
	for _, e := range entries {
		switch {
		case e.Name() == "release.toml" && e.Type().IsRegular():
			release = true
		case e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".toml"):
		default:
			return fmt.Sprintf("it holds %s, which is not a release's TOML file", strconv.Quote(e.Name()))
		}
	}
	if !release {
		return "it holds no release.toml"
	}
	return ""
}
