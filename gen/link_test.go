package gen

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// buildMinimalLibnrt links a libnrt.so.1 from a C file that defines every
// reverse callback (and one helper that must stay local) with the generated
// version script.
func buildMinimalLibnrt(t *testing.T, s *spec.Spec, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range s.Reverse {
		fmt.Fprintf(&b, "void %s(void) {}\n", r.Name)
	}
	b.WriteString("void nrtabi_internal_helper(void) {}\n")
	if err := os.WriteFile(filepath.Join(dir, "libnrt_min.c"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "c", LibnrtMap)
	if err := cc.Shared(dir, "libnrt.so.1", s.Release.LibNRT.SONAME, script, []string{"libnrt_min.c"}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "libnrt.so.1")
}

func definedDynamic(t *testing.T, path string) (map[string]elf.Symbol, *elf.File) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]elf.Symbol{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			out[s.Name] = s
		}
	}
	return out, f
}

// TestLibnrtVersionScript: the 20 reverse callbacks come out @@NRT_2.0.0 and
// nothing else is exported; the version graph is the spec's.
func TestLibnrtVersionScript(t *testing.T) {
	needCC(t)
	s := mustLoad(t, spec.Default)
	dir := writeRelease(t, s)
	syms, f := definedDynamic(t, buildMinimalLibnrt(t, s, dir))

	nodes := map[string]bool{}
	for _, n := range s.VersionNodes {
		nodes[n.Name] = true
	}
	var exported []string
	for name, sym := range syms {
		if nodes[name] && sym.Section == elf.SHN_ABS {
			continue // the ABS symbol the linker makes for each version definition
		}
		exported = append(exported, name)
		r := s.ReverseByName(name)
		switch {
		case r == nil:
			t.Errorf("%s is exported but is no reverse callback (everything else must be local)", name)
		case !sym.HasVersion || sym.Version != r.Version || sym.VersionIndex.IsHidden():
			t.Errorf("%s is exported as @%s (hidden=%v), want @@%s", name, sym.Version, sym.VersionIndex.IsHidden(), r.Version)
		case elf.ST_TYPE(sym.Info) != elf.STT_FUNC:
			t.Errorf("%s is %v, want a function", name, elf.ST_TYPE(sym.Info))
		}
	}
	if len(exported) != len(s.Reverse) {
		sort.Strings(exported)
		t.Errorf("%d symbols exported, want the %d reverse callbacks: %v", len(exported), len(s.Reverse), exported)
	}
	if soname, _ := f.DynString(elf.DT_SONAME); len(soname) != 1 || soname[0] != "libnrt.so.1" {
		t.Errorf("SONAME %v", soname)
	}
	defs, err := f.DynamicVersions()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range defs {
		parent := ""
		if len(d.Deps) > 0 {
			parent = d.Deps[0]
		}
		got[d.Name] = fmt.Sprintf("%d %s", d.Index, parent)
	}
	for _, n := range s.VersionNodes {
		if want := fmt.Sprintf("%d %s", n.Index, n.Parent); got[n.Name] != want {
			t.Errorf("version definition %s: got %q, want %q (index parent)", n.Name, got[n.Name], want)
		}
	}
}

// TestStubLinksBack: the generated libnccom double exports the forward
// entry points unversioned, needs libnrt.so.1 and binds every callback
// @NRT_2.0.0 and nothing from NRT_3.0.0; omitting a symbol by macro works.
func TestStubLinksBack(t *testing.T) {
	needCC(t)
	s := mustLoad(t, spec.Default)
	dir := writeRelease(t, s)
	buildMinimalLibnrt(t, s, dir)
	c := filepath.Join(dir, "c")
	build := func(out string, defines ...string) string {
		args := append(defines, "-I"+c)
		err := cc.Shared(dir, out, s.Release.LibNCCOM.SONAME, filepath.Join(c, LibnccomMap),
			[]string{filepath.Join(c, StubSource)}, append(args, "-L"+dir, "-l:libnrt.so.1")...)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, out)
	}
	syms, f := definedDynamic(t, build("libnccom.so"))
	for _, fw := range s.Forward {
		sym, ok := syms[fw.Name]
		if !ok {
			t.Errorf("%s is not exported", fw.Name)
			continue
		}
		if sym.Version != "" || elf.ST_BIND(sym.Info) != elf.STB_GLOBAL || elf.ST_TYPE(sym.Info) != elf.STT_FUNC {
			t.Errorf("%s: version %q bind %v type %v; want an unversioned global function", fw.Name, sym.Version, elf.ST_BIND(sym.Info), elf.ST_TYPE(sym.Info))
		}
	}
	if len(syms) != len(s.Forward) {
		t.Errorf("%d symbols defined in the dynamic table, want %d", len(syms), len(s.Forward))
	}
	needed, _ := f.ImportedLibraries()
	if !contains(needed, "libnrt.so.1") {
		t.Errorf("DT_NEEDED %v lacks libnrt.so.1", needed)
	}
	vn, err := f.DynamicVersionNeeds()
	if err != nil {
		t.Fatal(err)
	}
	var fromNRT []string
	for _, n := range vn {
		if n.Name == "libnrt.so.1" {
			for _, v := range n.Needs {
				fromNRT = append(fromNRT, v.Dep)
			}
		}
	}
	if len(fromNRT) != 1 || fromNRT[0] != "NRT_2.0.0" {
		t.Errorf("version needs from libnrt.so.1: %v, want exactly [NRT_2.0.0]", fromNRT)
	}
	imports, _ := f.ImportedSymbols()
	bound := 0
	for _, im := range imports {
		if r := s.ReverseByName(im.Name); r != nil {
			bound++
			if im.Version != "NRT_2.0.0" || im.Library != "libnrt.so.1" {
				t.Errorf("import %s@%s from %s, want @NRT_2.0.0 from libnrt.so.1", im.Name, im.Version, im.Library)
			}
		}
	}
	if bound != len(s.Reverse) {
		t.Errorf("%d reverse callbacks imported, want %d", bound, len(s.Reverse))
	}

	omitted, _ := definedDynamic(t, build("libnccom_omit.so", "-DNCCOM_STUB_OMIT_neuronGetUniqueId"))
	if _, ok := omitted["neuronGetUniqueId"]; ok || len(omitted) != len(s.Forward)-1 {
		t.Errorf("-DNCCOM_STUB_OMIT_neuronGetUniqueId: %d exports, neuronGetUniqueId present=%v", len(omitted), ok)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
