package release

import (
	"bytes"
	"fmt"
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
	if obs.Libnrt == nil && obs.Libnccom == nil && len(obs.StructNames) == 0 {
		return nil, fmt.Errorf("the binaries show nothing about the boundary: no libnrt or libnccom by SONAME (%s, %s) and no spec struct in their DWARF",
			base.Release.LibNRT.SONAME, base.Release.LibNCCOM.SONAME)
	}
	nr := &newRelease{base: base, obs: obs, removed: map[string][]string{}}
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

	rel := spec.Release{Name: name, DerivedFrom: base.Release.Name, Fact: spec.Fact{Conf: spec.High, Source: nr.source}}
	if in := obs.Libnrt; in != nil {
		rel.LibNRT = library(in, nr.source)
	}
	if in := obs.Libnccom; in != nil {
		rel.LibNCCOM = library(in, nr.source)
		rel.LibNCCOM.Git = base.Release.LibNCCOM.Git
		rel.LibNCCOM.Carried = []string{"git"}
	}
	rel.CarriedOver = nr.carriedOver(fwd, rev, nodes, consts, msgs)
	counts, table := nr.counts(fwd, rev), nr.table(fwd)
	out := &Release{files: map[string]*spec.File{}, heads: map[string]string{}}
	out.files["release.toml"] = &spec.File{Rows: &spec.Spec{Release: rel, Counts: counts, SlotTable: table}}
	if len(nr.removed) > 0 {
		out.files["release.toml"].Remove = nr.removed
	}
	out.heads["release.toml"] = comment(fmt.Sprintf("Release %s, made by `nrtabi release new --from %s` from:\n  %s\nRows restated here are what the binaries show; `carried` lists the keys\nof a row they could not confirm. Everything else is inherited from %s,\nunconfirmed, and named in carried_over.", name, base.Release.Name, strings.Join(srcs, "\n  "), base.Release.Name)) + "\n"
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
		f := &spec.File{Rows: &spec.Spec{OpaqueTypes: obs.Structs.Opaques, Enums: obs.Structs.Enums}}
		for _, st := range obs.Structs.Structs {
			f.Rows.Structs = append(f.Rows.Structs, withSpecMetadata(st, base))
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
func withSpecMetadata(st *spec.Struct, base *spec.Spec) *spec.Struct {
	old := base.StructByName(st.Name)
	if old == nil {
		return st
	}
	out := *st
	out.Side = old.Side
	for _, a := range old.Aliases {
		if !slices.Contains(out.Aliases, a) && a != out.Name {
			out.Aliases = append(out.Aliases, a)
		}
	}
	out.Prefix = old.Prefix && st.Size <= old.Size
	// A field the binaries show under a new name at an old field's offset
	// keeps that field's stable name (docs/spec-format.md#stable-field-names).
	out.Fields = slices.Clone(st.Fields)
	spec.InferWas(old, &out)
	spec.CarryRanges(old, &out)
	return &out
}

type newRelease struct {
	base    *spec.Spec
	obs     *Observed
	source  string
	removed map[string][]string // [remove] lists
}

func library(in *ObservedInput, source string) spec.Library {
	return spec.Library{File: filepath.Base(in.Path), SONAME: in.SONAME, BuildID: in.BuildID, Needed: in.Needed,
		VersionNeeds: in.VersionNeeds, Fact: spec.Fact{Conf: spec.High, Source: source}}
}

func (nr *newRelease) factFrom(old spec.Fact, carried []string) spec.Fact {
	f := spec.Fact{Conf: old.Conf, Source: nr.source, Note: old.Note, ConfFields: old.ConfFields, Carried: carried}
	if len(carried) == 0 {
		f.Conf = spec.High
	}
	return f
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
			carried = append(carried, "trampoline_addr")
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
		var carried []string
		conf := spec.High
		if slot, ok := obs.Slots[name]; ok {
			f.Slot = slot
		} else {
			low -= base.SlotTable.Stride
			f.Slot, conf = low, spec.Inferred
			carried = append(carried, "slot")
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
		f.Fact = spec.Fact{Conf: conf, Source: nr.source, Carried: carried,
			ConfFields: map[string]string{"index": string(spec.Inferred), "group": string(spec.Inferred), "guard": string(spec.Inferred)},
			Note:       "new in this release; dlsym index, group and guard are inferred"}
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
			if !slices.Contains(out[i].Carried, "slot") {
				out[i].Carried = append(out[i].Carried, "slot")
			}
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
		carried = append(carried, "shape", "signature")
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
			Fact: spec.Fact{Conf: spec.Inferred, Source: nr.source, Carried: []string{"shape", "signature"},
				Note: "new in this release: imported by libnccom; its C signature is not in the binaries"}}
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
		if old := nr.base.VersionNodeByName(n.Name); old != nil {
			n.Binds = old.Binds
		}
		n.Fact = spec.Fact{Conf: spec.High, Source: nr.source + " (.gnu.version_d)"}
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

func (nr *newRelease) counts(fwd []spec.Forward, rev []spec.Reverse) spec.Counts {
	c := nr.base.Counts
	if fwd != nil {
		c.Forward = len(fwd)
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
	}
	c.Fact = spec.Fact{Conf: spec.High, Source: nr.source + " (the rows restated here)"}
	return c
}

func (nr *newRelease) table(fwd []spec.Forward) spec.SlotTable {
	t := nr.base.SlotTable
	if len(fwd) > 0 {
		t.Base, t.Top = fwd[0].Slot, fwd[0].Slot
		for _, f := range fwd {
			t.Base, t.Top = min(t.Base, f.Slot), max(t.Top, f.Slot)
		}
	}
	if nr.obs.Sentinel != 0 {
		t.SentinelAddr = nr.obs.Sentinel
	}
	carried := []string{"stride", "order", "net_handle_addr"}
	if len(nr.obs.Slots) == 0 {
		carried = append(carried, "base", "top")
	}
	t.Fact = spec.Fact{Conf: spec.High, Source: nr.source, Carried: carried, ConfFields: nr.base.SlotTable.ConfFields, Note: nr.base.SlotTable.Note}
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
	if _, err := os.Stat(dir); err == nil && !opt.Force {
		return fmt.Errorf("%s already exists; remove it or pass --force", dir)
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
