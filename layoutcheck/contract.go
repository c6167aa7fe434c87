package layoutcheck

import (
	"debug/elf"
	"fmt"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

type contract struct {
	checks []ContractCheck
}

func (c *contract) rule(name string, fs []Finding) {
	if fs == nil {
		fs = []Finding{}
	}
	c.checks = append(c.checks, ContractCheck{Name: name, OK: worst(fs) < Incompatible, Findings: fs})
}

func finding(sev Severity, kind, sym, exp, act, format string, args ...any) Finding {
	return Finding{Severity: sev, Kind: kind, Symbol: sym, Expected: exp, Actual: act, Message: fmt.Sprintf(format, args...)}
}

// CheckLibnrt checks libnrt's side of the link contract.
func CheckLibnrt(o *elfread.File, sp *spec.Spec) ([]ContractCheck, error) {
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return nil, err
	}
	c := &contract{}
	soname := sp.Release.LibNRT.SONAME
	var fs []Finding
	if o.SONAME != soname {
		fs = append(fs, finding(Incompatible, KindSONAME, "", soname, o.SONAME, "SONAME is %q; libnccom's DT_NEEDED names %q", o.SONAME, soname))
	}
	c.rule("SONAME "+soname, fs)
	c.rule("version definitions equal the spec's", verdefFindings(t, sp))

	fs = nil
	for _, r := range sp.Reverse {
		s := t.Defined(r.Name)
		want := r.Name + "@@" + r.Version
		switch {
		case s == nil:
			fs = append(fs, finding(Incompatible, KindExport, r.Name, want, "", "%s is not exported; libnccom imports it %s and fails to load", r.Name, "@"+r.Version))
			continue
		case elf.ST_TYPE(s.Info) != elf.STT_FUNC:
			fs = append(fs, finding(Incompatible, KindExport, r.Name, "FUNC", elf.ST_TYPE(s.Info).String(), "%s is exported as %v, not as a function", r.Name, elf.ST_TYPE(s.Info)))
		case elf.ST_BIND(s.Info) != elf.STB_GLOBAL:
			fs = append(fs, finding(Incompatible, KindExport, r.Name, "GLOBAL", elf.ST_BIND(s.Info).String(), "%s is exported %v, not GLOBAL", r.Name, elf.ST_BIND(s.Info)))
		}
		v := t.VersionName(s)
		switch {
		case v == "":
			fs = append(fs, finding(Incompatible, KindUnversioned, r.Name, want, r.Name, "%s is exported unversioned (base version); libnccom's import is %s@%s", r.Name, r.Name, r.Version))
		case v != r.Version:
			fs = append(fs, finding(Incompatible, KindVersion, r.Name, want, r.Name+"@@"+v, "%s is bound to %s, spec %s", r.Name, v, r.Version))
		case s.VersionIndex.IsHidden():
			fs = append(fs, finding(Incompatible, KindVersion, r.Name, want, r.Name+"@"+v, "%s@%s is hidden (not the default @@ definition)", r.Name, v))
		}
	}
	c.rule(fmt.Sprintf("all %d reverse symbols defined @@ their node as functions", len(sp.Reverse)), fs)

	fs = nil
	for _, s := range t.Syms {
		if strings.HasPrefix(s.Name, "neuron") {
			how := "defines"
			if s.Section == elf.SHN_UNDEF {
				how = "imports"
			}
			fs = append(fs, finding(Incompatible, KindForbidden, s.Name, "", s.Name, "libnrt's dynamic table %s %s; the forward leg is dlsym only", how, s.Name))
		}
	}
	c.rule("no neuron* symbol in the dynamic table", fs)

	fs = nil
	for _, n := range o.Needed {
		if strings.HasPrefix(n, "libnccom") {
			fs = append(fs, finding(Incompatible, KindNeeded, n, "", n, "DT_NEEDED %s: libnrt must not link libnccom (it dlopens %q at run time)", n, sp.SlotTable.Library))
		}
	}
	c.rule("no DT_NEEDED on any libnccom", fs)
	return c.checks, nil
}

func verdefFindings(t *elfread.DynTable, sp *spec.Spec) []Finding {
	var fs []Finding
	have := map[string]elf.DynamicVersion{}
	for _, d := range t.Defs {
		have[d.Name] = d
	}
	if len(t.Defs) == 0 {
		return []Finding{finding(Incompatible, KindVerdef, "", nodeList(sp), "", "no version definitions (.gnu.version_d); libnccom's need of %s cannot be met", firstNonBase(sp))}
	}
	for _, n := range sp.VersionNodes {
		d, ok := have[n.Name]
		if !ok {
			fs = append(fs, finding(Incompatible, KindVerdef, n.Name, n.Name, "", "version node %s is not defined", n.Name))
			continue
		}
		if base := d.Flags&elf.VER_FLG_BASE != 0; base != n.Base {
			fs = append(fs, finding(Incompatible, KindVerdef, n.Name, fmt.Sprintf("base=%v", n.Base), fmt.Sprintf("base=%v", base), "version node %s: BASE flag %v, spec %v", n.Name, base, n.Base))
		}
		parent := ""
		if len(d.Deps) > 0 {
			parent = d.Deps[0]
		}
		if parent != n.Parent {
			fs = append(fs, finding(Incompatible, KindVerdef, n.Name, n.Parent, parent, "version node %s has parent %q, spec %q", n.Name, parent, n.Parent))
		}
		if int(d.Index) != n.Index {
			// Consumers bind by name; the index is local to the file.
			fs = append(fs, finding(Compatible, KindVerdef, n.Name, fmt.Sprint(n.Index), fmt.Sprint(d.Index), "version node %s has index %d, spec %d", n.Name, d.Index, n.Index))
		}
	}
	for _, d := range t.Defs {
		if sp.VersionNodeByName(d.Name) == nil {
			fs = append(fs, finding(Compatible, KindVerdef, d.Name, "", d.Name, "version node %s is not in the spec (an addition)", d.Name))
		}
	}
	return fs
}

func nodeList(sp *spec.Spec) string {
	var out []string
	for _, n := range sp.VersionNodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, ", ")
}

func firstNonBase(sp *spec.Spec) string {
	for _, n := range sp.VersionNodes {
		if !n.Base {
			return n.Name
		}
	}
	return "a version"
}

// CheckLibnccom checks libnccom's side of the link contract.
func CheckLibnccom(o *elfread.File, sp *spec.Spec) ([]ContractCheck, error) {
	t, err := elfread.ReadDynTable(o)
	if err != nil {
		return nil, err
	}
	c := &contract{}
	var fs []Finding
	for _, f := range sp.ByIndex() {
		s := t.Defined(f.Name)
		switch {
		case s == nil:
			fs = append(fs, finding(Incompatible, KindExport, f.Name, f.Name, "", "%s is not exported; libnrt's dlsym #%d fails and collectives are disabled", f.Name, f.Index))
			continue
		case elf.ST_TYPE(s.Info) != elf.STT_FUNC:
			fs = append(fs, finding(Incompatible, KindExport, f.Name, "FUNC", elf.ST_TYPE(s.Info).String(), "%s is exported as %v, not as a function", f.Name, elf.ST_TYPE(s.Info)))
		case elf.ST_BIND(s.Info) != elf.STB_GLOBAL:
			fs = append(fs, finding(Incompatible, KindExport, f.Name, "GLOBAL", elf.ST_BIND(s.Info).String(), "%s is exported %v, not GLOBAL", f.Name, elf.ST_BIND(s.Info)))
		}
		if v := t.VersionName(s); v != "" {
			fs = append(fs, finding(Incompatible, KindVersion, f.Name, f.Name, f.Name+"@@"+v, "%s carries version %s; the forward entry points are unversioned", f.Name, v))
		}
	}
	c.rule(fmt.Sprintf("all %d neuron* defined, unversioned, global functions", len(sp.Forward)), fs)

	nrt := sp.Release.LibNRT.SONAME
	fs = nil
	found := false
	for _, n := range o.Needed {
		found = found || n == nrt
	}
	if !found {
		fs = append(fs, finding(Incompatible, KindNeeded, nrt, nrt, strings.Join(o.Needed, ", "), "no DT_NEEDED %s; the %d reverse imports cannot bind", nrt, len(sp.Reverse)))
	}
	c.rule("DT_NEEDED "+nrt, fs)

	var want []string
	for _, vn := range sp.Release.LibNCCOM.VersionNeeds {
		if vn.File == nrt {
			want = append(want, vn.Version)
		}
	}
	sort.Strings(want)
	var got []string
	for _, n := range t.Needs {
		if n.Name != nrt {
			continue
		}
		for _, d := range n.Needs {
			got = append(got, d.Dep)
		}
	}
	sort.Strings(got)
	fs = nil
	for _, g := range got {
		if !contains(want, g) {
			fs = append(fs, finding(Incompatible, KindVersionNeed, g, strings.Join(want, ", "), strings.Join(got, ", "), "needs %s from %s; the spec allows only %s", g, nrt, strings.Join(want, ", ")))
		}
	}
	for _, w := range want {
		if !contains(got, w) {
			fs = append(fs, finding(Incompatible, KindVersionNeed, w, strings.Join(want, ", "), strings.Join(got, ", "), "no version need (%s, %s) in .gnu.version_r", nrt, w))
		}
	}
	c.rule(fmt.Sprintf("exactly the version needs %s from %s", strings.Join(want, ", "), nrt), fs)

	fs = nil
	for _, r := range sp.Reverse {
		s := t.Undefined(r.Name)
		switch {
		case s == nil:
			fs = append(fs, finding(Incompatible, KindImport, r.Name, r.Name+"@"+r.Version, "", "%s is not imported", r.Name))
		case s.Version == "":
			fs = append(fs, finding(Incompatible, KindUnversioned, r.Name, r.Name+"@"+r.Version, r.Name, "%s is imported unversioned; it must bind %s@%s", r.Name, r.Name, r.Version))
		case s.Version != r.Version || s.Library != nrt:
			fs = append(fs, finding(Incompatible, KindVersion, r.Name, r.Name+"@"+r.Version, fmt.Sprintf("%s@%s (%s)", r.Name, s.Version, s.Library), "%s is imported @%s from %q, spec @%s from %s", r.Name, s.Version, s.Library, r.Version, nrt))
		}
	}
	c.rule(fmt.Sprintf("the %d imports bound @%s", len(sp.Reverse), firstNonBase(sp)), fs)
	return c.checks, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// RoleStructs are the spec structs a library of role must describe in its
// DWARF: those a signature of a function it defines takes or returns,
// directly or by pointer (libnccom: the forward rows' neuron* definers;
// libnrt: the reverse callbacks). A library built with DWARF holds the
// types of its definers' parameters, so one missing is a library that is
// not the release's, or DWARF that does not describe it
// (docs/nrtabi-check.md#library-roles).
func RoleStructs(role string, s *spec.Spec) []string {
	var sigs []spec.Signature
	switch role {
	case specmatch.RoleLibnccom:
		for _, f := range s.Forward {
			sigs = append(sigs, f.Signature)
		}
	case specmatch.RoleLibnrt:
		for _, r := range s.Reverse {
			sigs = append(sigs, r.Signature)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, sg := range sigs {
		for _, t := range append([]string{sg.Returns}, paramTypes(sg)...) {
			n := strings.TrimSpace(strings.TrimRight(t, "* "))
			n = strings.TrimSpace(strings.TrimPrefix(n, "const "))
			if st := s.StructByName(n); st != nil && !seen[st.Name] {
				seen[st.Name] = true
				out = append(out, st.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func paramTypes(sg spec.Signature) []string {
	out := make([]string, len(sg.Params))
	for i, p := range sg.Params {
		out[i] = p.Type
	}
	return out
}

// roleStructsRule is the contract rule that the file's DWARF describes its
// role's structs (RoleStructs), given the ones found in it.
func roleStructsRule(role string, s, structs *spec.Spec, found map[string]bool) (ContractCheck, bool) {
	want := RoleStructs(role, s)
	if len(want) == 0 {
		return ContractCheck{}, false
	}
	var fs []Finding
	for _, n := range want {
		if !found[n] && structs.StructByName(n) != nil {
			fs = append(fs, finding(Incompatible, KindMissingStruct, "", n, "", "%s's DWARF does not describe %s, which its definers' signatures take; a %s of this release holds it (docs/nrtabi-check.md#library-roles)", role, n, role))
			fs[len(fs)-1].Struct = n
		}
	}
	return ContractCheck{Name: role + " DWARF describes " + strings.Join(want, ", "), OK: len(fs) == 0, Findings: orEmpty(fs)}, true
}

func orEmpty(fs []Finding) []Finding {
	if fs == nil {
		return []Finding{}
	}
	return fs
}
