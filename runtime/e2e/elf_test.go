package e2e

import (
	"debug/elf"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/runtime/builder"
)

func dynamic(path string) (*elf.File, []elf.Symbol, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, syms, nil
}

// problems collects what a checker finds.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// TestLibnrtELF reads the built libnrt.so.1 back: SONAME, no libnccom
// DT_NEEDED, no neuron* symbol, and exactly the reverse callbacks and the
// runtime's own entry points defined, each @@ the callbacks' node.
func TestLibnrtELF(t *testing.T) {
	requireBuild(t)
	for _, p := range checkLibnrt(variantLib(builder.Versioned)) {
		t.Error(p)
	}
}

// The checker must see each link variant's defect.
func TestLibnrtELFCheckerCatches(t *testing.T) {
	requireBuild(t)
	for v, want := range map[builder.LinkVariant]string{
		builder.BaseFallback: "is exported as version \"\"",
		builder.NoNode:       "want @@NRT_2.0.0",
		builder.NotExported:  "does not export " + tree.HiddenCallback(),
		builder.Unversioned:  "want @@NRT_2.0.0",
	} {
		got := strings.Join(checkLibnrt(variantLib(v)), "\n")
		if !strings.Contains(got, want) {
			t.Errorf("variant %s: the checker reported\n%s\nwant a problem containing %q", v, got, want)
		}
	}
}

func checkLibnrt(path string) (p problems) {
	f, syms, err := dynamic(path)
	if err != nil {
		p.add("%v", err)
		return p
	}
	defer f.Close()
	if so, _ := f.DynString(elf.DT_SONAME); len(so) != 1 || so[0] != tree.Spec.Release.LibNRT.SONAME {
		p.add("SONAME %v, want %s", so, tree.Spec.Release.LibNRT.SONAME)
	}
	needed, _ := f.ImportedLibraries()
	for _, n := range needed {
		if strings.Contains(n, "nccom") {
			p.add("DT_NEEDED %s: libnrt must not link libnccom", n)
		}
	}
	want := map[string]string{}
	for _, r := range tree.Spec.Reverse {
		want[r.Name] = r.Version
	}
	for _, e := range builder.LibnrtExports {
		want[e] = tree.Spec.Reverse[0].Version
	}
	defined := map[string]bool{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "neuron") {
			p.add("%s is in libnrt's dynamic table; the forward leg is dlsym only", s.Name)
		}
		if s.Section == elf.SHN_UNDEF || elf.ST_BIND(s.Info) == elf.STB_LOCAL || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		v, ok := want[s.Name]
		if !ok {
			p.add("libnrt exports %s@%s, which is neither a reverse callback nor a runtime entry point", s.Name, s.Version)
			continue
		}
		defined[s.Name] = true
		if !s.HasVersion || s.Version != v || s.VersionIndex.IsHidden() {
			p.add("%s is exported as version %q (hidden %v), want @@%s", s.Name, s.Version, s.VersionIndex.IsHidden(), v)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(want)) {
		if !defined[n] {
			p.add("libnrt does not export %s", n)
		}
	}
	return p
}

// TestStubsELF reads the doubles back: each links DT_NEEDED libnrt.so.1 and
// imports every reverse callback @ its node from libnrt.so.1 (forward-only
// doubles import none); the neuron* exports are unversioned except in the
// forward-versioned double; an omitted entry point is absent.
func TestStubsELF(t *testing.T) {
	requireBuild(t)
	for _, st := range tree.Stubs() {
		t.Run(st.Name, func(t *testing.T) {
			for _, p := range checkStub(stubPath(st.Name), st) {
				t.Error(p)
			}
		})
	}
}

// The checker must see a double that is not what it claims to be.
func TestStubsELFCheckerCatches(t *testing.T) {
	requireBuild(t)
	good, _ := tree.StubByName(builder.StubGood)
	missing, _ := tree.StubByName(builder.StubMissing(tree.MissingIndices()[0]))
	for path, want := range map[string]string{
		stubPath(builder.StubForwardOnly):      "DT_NEEDED",
		stubPath(builder.StubForwardVersioned): "the forward exports are unversioned",
		stubPath(missing.Name):                 "is not exported",
	} {
		got := strings.Join(checkStub(path, good), "\n")
		if !strings.Contains(got, want) {
			t.Errorf("%s checked as %s: the checker reported\n%s\nwant a problem containing %q", path, good.Name, got, want)
		}
	}
	if got := checkStub(stubPath(builder.StubGood), missing); len(got) == 0 {
		t.Errorf("the good double passed as %s, which omits an entry point", missing.Name)
	}
}

func checkStub(path string, st builder.Stub) (p problems) {
	f, syms, err := dynamic(path)
	if err != nil {
		p.add("%v", err)
		return p
	}
	defer f.Close()
	needed, _ := f.ImportedLibraries()
	hasNRT := slices.Contains(needed, builder.LibnrtFile)
	if hasNRT == st.ForwardOnly {
		p.add("DT_NEEDED %v; forward-only %v", needed, st.ForwardOnly)
	}
	imports, exports := map[string]elf.Symbol{}, map[string]elf.Symbol{}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF {
			imports[s.Name] = s
		} else {
			exports[s.Name] = s
		}
	}
	for _, r := range tree.Spec.Reverse {
		s, ok := imports[r.Name]
		switch {
		case st.ForwardOnly && ok:
			p.add("forward-only double imports %s", r.Name)
		case !st.ForwardOnly && (!ok || s.Version != r.Version || s.Library != builder.LibnrtFile):
			p.add("import %s: version %q from %q, want @%s from %s", r.Name, s.Version, s.Library, r.Version, builder.LibnrtFile)
		}
	}
	omitted := map[string]bool{}
	for _, d := range st.Defines {
		if n, ok := strings.CutPrefix(d, "NCCOM_STUB_OMIT_"); ok {
			omitted[n] = true
		}
	}
	for _, fw := range tree.Spec.ByIndex() {
		s, ok := exports[fw.Name]
		switch {
		case omitted[fw.Name] && ok:
			p.add("%s is exported though the double omits it", fw.Name)
		case omitted[fw.Name]:
		case !ok:
			p.add("%s is not exported", fw.Name)
		case st.VersionNode != "" && s.Version != st.VersionNode:
			p.add("%s has version %q, want %s", fw.Name, s.Version, st.VersionNode)
		case st.VersionNode == "" && s.Version != "":
			p.add("%s has version %q; the forward exports are unversioned", fw.Name, s.Version)
		}
	}
	return p
}
