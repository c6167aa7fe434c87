package elfread

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/typemodel"
)

// The type unit fixtures (docs/nrtabi-extract.md#type-units): the same C
// and C++ sources built with and without -fdebug-types-section, at DWARF 4
// (.debug_types) and DWARF 5 (DW_UT_type units in .debug_info), linked
// into one shared object each. The build without type units is the
// oracle: the one with them must read the same. Cost: 16 compiles and 4
// links, once per test binary (about 3 s on 2 cores).
const tuHeaderC = `
struct tu_pair { int lo, hi; };
typedef struct tu_named { long a; struct tu_pair p; unsigned f : 3, g : 5; } tu_named_t;
typedef struct { short x; char tag[6]; } tu_anon_t;
enum tu_color { TU_RED, TU_GREEN = 7 };
struct tu_holder { struct tu_pair *pp; tu_named_t n; tu_anon_t an; enum tu_color c; union { int i; float f; } u; };
`

const tuHeaderCxx = `
namespace tuns {
struct Inner { int a; char b; };
struct Base { virtual ~Base(); long id; };
struct Outer : Base {
	struct Nested { long x; } n;
	Inner in;
	Inner *p;
	const Inner &r;
	int Inner::*pm;
	Outer();
};
namespace deep { template <typename T> struct Box { T v; Box<T> *next; }; struct UseBox { Box<int> bi; Box<Inner> bn; }; }
}
struct CxxTop { tuns::Outer::Nested nn; tuns::deep::UseBox ub; };
`

const (
	tuSourceCA   = "#include \"tu.h\"\nstruct tu_holder tu_h1; struct tu_pair tu_p1;\n"
	tuSourceCB   = "#include \"tu.h\"\nstruct tu_holder tu_h2; tu_named_t tu_n2; tu_anon_t tu_a2;\n"
	tuSourceCxxA = "#include \"tu.hh\"\ntuns::Base::~Base() {}\nCxxTop cxx_top1;\n"
	tuSourceCxxB = "#include \"tu.hh\"\nstatic tuns::Inner in_b;\ntuns::Outer::Outer() : r(in_b) {}\ntuns::Outer cxx_outer;\nCxxTop cxx_top2;\n"
)

type tuFixtures struct {
	// lib["5"+"types"] and so on: the linked objects.
	lib map[string]string
	dir string
	err error
}

var (
	tuOnce sync.Once
	tuFix  tuFixtures
)

// tuLib is the fixture of one DWARF version, with type units or without.
func tuLib(t testing.TB, version string, types bool) string {
	t.Helper()
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	tuOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nrtabi-typeunits-")
		if err != nil {
			tuFix.err = err
			return
		}
		tuFix.lib, tuFix.dir = map[string]string{}, dir
		tuFix.err = buildTUFixtures(dir)
	})
	if tuFix.err != nil {
		t.Fatalf("building the type unit fixtures: %v", tuFix.err)
	}
	return tuFix.lib[tuKey(version, types)]
}

func tuKey(version string, types bool) string { return fmt.Sprintf("%s-%v", version, types) }

func buildTUFixtures(dir string) error {
	for name, body := range map[string]string{"tu.h": tuHeaderC, "tu.hh": tuHeaderCxx, "a.c": tuSourceCA, "b.c": tuSourceCB,
		"a.cc": tuSourceCxxA, "b.cc": tuSourceCxxB} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	i := 0
	for _, v := range []string{"4", "5"} {
		for _, types := range []bool{false, true} {
			flags := []string{"-gdwarf-" + v, "-O0"}
			if types {
				flags = append(flags, "-fdebug-types-section")
			}
			k := tuKey(v, types)
			out := filepath.Join(dir, "lib"+k+".so")
			tuFix.lib[k] = out
			wg.Add(1)
			go func(slot int) {
				defer wg.Done()
				var objs []string
				for _, src := range []string{"a.c", "b.c", "a.cc", "b.cc"} {
					obj := k + "-" + src + ".o"
					if err := cc.Object(dir, src, obj, flags...); err != nil {
						errs[slot] = err
						return
					}
					objs = append(objs, obj)
				}
				errs[slot] = cc.Shared(dir, out, "", "", objs, flags...)
			}(i)
			i++
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// tuLayouts is every struct ScanAll lists with its layout as the graph
// has it (filled by AllTypes on two workers, or lazily by At), one text
// per struct, sorted.
func tuLayouts(t *testing.T, path string, all bool) []string {
	t.Helper()
	d := openDebugT(t, path)
	if all {
		if _, err := d.AllTypes(context.Background(), 2); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := d.ScanAll(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range idx.Types {
		s, err := d.Types().At(n.Offset)
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		out = append(out, layoutText(n.Kind+" "+n.Name, s))
	}
	slices.Sort(out)
	return out
}

func layoutText(head string, s *typemodel.Type) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s size %d align %d {", head, s.Kind, typemodel.SizeOf(s), typemodel.AlignOf(s))
	for _, f := range s.Fields {
		fmt.Fprintf(&b, " %s @%d", typemodel.Decl(f.Type, f.Name), f.Offset)
		if f.BitSize > 0 {
			fmt.Fprintf(&b, ":%d+%d", f.BitSize, f.BitOffset)
		}
		if f.Base {
			b.WriteString(" base")
		}
		b.WriteString(";")
	}
	for _, e := range s.Enumerators {
		fmt.Fprintf(&b, " %s=%d,", e.Name, e.Value)
	}
	b.WriteString(" }")
	return b.String()
}

// TestTypeUnitsOracle: with type units, every struct, union and enum is
// listed and laid out as the same sources built without them; whole graph
// and lazy lookups alike, at DWARF 4 and 5.
func TestTypeUnitsOracle(t *testing.T) {
	for _, v := range []string{"4", "5"} {
		t.Run("dwarf"+v, func(t *testing.T) {
			plain, typed := tuLib(t, v, false), tuLib(t, v, true)
			if n := tuCount(t, typed); n == 0 {
				t.Fatalf("%s has no type units: the fixture does not test them", typed)
			}
			want := tuLayouts(t, plain, true)
			if len(want) < 8 {
				t.Fatalf("the oracle lists %d types: %q", len(want), want)
			}
			for _, all := range []bool{true, false} {
				got := tuLayouts(t, typed, all)
				if !slices.Equal(got, want) {
					t.Errorf("AllTypes=%v: with type units\n%s\nwithout\n%s", all, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			// A relocatable object holds a section per type unit
			// (COMDAT groups): read as the linker joins them.
			for _, src := range []string{"a.c", "b.c", "a.cc", "b.cc"} {
				po := filepath.Join(tuFix.dir, tuKey(v, false)+"-"+src+".o")
				to := filepath.Join(tuFix.dir, tuKey(v, true)+"-"+src+".o")
				if got, want := tuLayouts(t, to, true), tuLayouts(t, po, true); !slices.Equal(got, want) || len(want) == 0 {
					t.Errorf("%s: with type units\n%s\nwithout\n%s", src, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			// FindStructs: through a typedef, in a namespace.
			for _, names := range [][]string{{"tu_named_t"}, {"tu_anon_t"}, {"tuns::Outer"}, {"tuns::deep::UseBox"}, {"CxxTop"}} {
				var texts []string
				for _, p := range []string{plain, typed} {
					d := openDebugT(t, p)
					found, err := d.FindStructs([][]string{names})
					if err != nil || found[0] == nil {
						t.Fatalf("%s in %s: %v %v", names[0], p, found, err)
					}
					s, err := d.Types().Struct(found[0].Offset)
					if err != nil {
						t.Fatal(err)
					}
					texts = append(texts, layoutText(names[0], s))
				}
				if texts[0] != texts[1] {
					t.Errorf("FindStructs %s:\nwithout type units %s\nwith %s", names[0], texts[0], texts[1])
				}
			}
		})
	}
}

// tuCount is how many type units the fixture's DWARF has.
func tuCount(t *testing.T, path string) int {
	d := openDebugT(t, path)
	idx, err := d.ScanAll(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return idx.TypeUnits
}

// TestTypeUnitsDecodeOnce: a type unit's type is one node, its DIEs
// decoded once, however many units use it.
func TestTypeUnitsDecodeOnce(t *testing.T) {
	for _, v := range []string{"4", "5"} {
		t.Run("dwarf"+v, func(t *testing.T) {
			withDecodeCount(t)
			d := openDebugT(t, tuLib(t, v, true))
			g, err := d.AllTypes(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := d.ScanAll(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, n := range idx.Types {
				if _, err := g.At(n.Offset); err != nil {
					t.Fatal(err)
				}
				seen[n.Name] = true
			}
			// Each type of the header is written once, in its type unit:
			// no unit defines it again.
			for _, n := range idx.Later {
				if !n.Alias { // each unit's typedef of it is another name, not a definition
					t.Errorf("%s defined again at DIE %#x", n.Name, n.DIE)
				}
			}
			for _, name := range []string{"tu_pair", "tuns::Outer", "tuns::Inner"} {
				if !seen[name] {
					t.Errorf("%s not listed", name)
				}
			}
			assertDecodedOnce(t, g)
		})
	}
}

// tuUnitHeaders lists the DWARF 5 fixture's type unit headers: where each
// starts in the file and its fields' places.
type tuHeader struct {
	file         int // the unit's offset in the file
	sig          uint64
	typeOff      uint32
	sigAt, toAt  int // offsets in the file of the signature and the type offset
	unitOff, end int // in .debug_info
}

func tuHeaders(t *testing.T, data []byte) (info int, out []tuHeader) {
	f, err := elf.NewFile(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".debug_info")
	if s == nil || s.Flags&elf.SHF_COMPRESSED != 0 {
		t.Fatal("the fixture has no plain .debug_info")
	}
	b := data[s.Offset : s.Offset+s.Size]
	for off := 0; off+24 <= len(b); {
		length := int(binary.LittleEndian.Uint32(b[off:]))
		if length == 0xffffffff || binary.LittleEndian.Uint16(b[off+4:]) != 5 {
			t.Fatal("the fixture is not 32-bit DWARF 5")
		}
		if b[off+6] == unitTypeType {
			out = append(out, tuHeader{file: int(s.Offset) + off, sig: binary.LittleEndian.Uint64(b[off+12:]),
				typeOff: binary.LittleEndian.Uint32(b[off+20:]), sigAt: int(s.Offset) + off + 12, toAt: int(s.Offset) + off + 20,
				unitOff: off, end: off + 4 + length})
		}
		off += 4 + length
	}
	return int(s.Offset), out
}

// TestTypeUnitsHostile: a signature that matches no unit, two units with
// one signature, a type offset outside its unit and a signature chain
// (a type unit whose type is a stub: a cycle when it names itself) are
// each refused in one line that names the file, the unit and the
// signature, by the whole-graph and the lazy paths alike; each fault is
// planted in the fixture that reads clean.
func TestTypeUnitsHostile(t *testing.T) {
	path := tuLib(t, "5", true)
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := tuHeaders(t, clean)
	if len(hs) < 2 {
		t.Fatalf("%d type units", len(hs))
	}
	// A stub DIE inside a type unit, for the cycle.
	d := openDebugT(t, path)
	var stubUnit *tuHeader
	var stubAt int
	for i := range hs {
		u, err := d.unitContaining(hs[i].unitOff + 30)
		if err != nil {
			t.Fatal(err)
		}
		sc := &scanner{d: d}
		if err := sc.enterUnit(u); err != nil {
			t.Fatal(err)
		}
		for sc.c.Left() > 0 && sc.c.Off() < u.end && sc.failed() == nil && stubUnit == nil {
			at := sc.c.Off()
			code := sc.c.Uleb()
			if code == 0 {
				continue
			}
			a := sc.abbrevAt(code)
			if a == nil {
				break
			}
			if a.sig {
				stubUnit, stubAt = &hs[i], at
			}
			sc.skipAttrs(a)
		}
		if stubUnit != nil {
			break
		}
	}
	if stubUnit == nil {
		t.Fatal("no stub DIE in the fixture's type units")
	}
	// The type unit of struct tu_pair, which other types refer to (a
	// signature only a variable names is never read).
	found, err := d.FindStructs([][]string{{"tu_pair"}})
	if err != nil || found[0] == nil {
		t.Fatalf("tu_pair: %v %v", found, err)
	}
	pair := -1
	for i := range hs {
		if int(found[0].DIE) >= hs[i].unitOff && int(found[0].DIE) < hs[i].end {
			pair = i
		}
	}
	if pair < 0 {
		t.Fatal("tu_pair is in no type unit")
	}
	other := (pair + 1) % len(hs)
	put64 := func(b []byte, at int, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }
	put32 := func(b []byte, at int, v uint32) { binary.LittleEndian.PutUint32(b[at:], v) }
	cases := []struct {
		name  string
		plant func(b []byte)
		want  []string
	}{
		{"unknown signature", func(b []byte) { put64(b, hs[pair].sigAt, hs[pair].sig^0x5a5a) },
			[]string{fmt.Sprintf("signature %#x names no type unit", hs[pair].sig)}},
		{"one signature twice", func(b []byte) { put64(b, hs[other].sigAt, hs[pair].sig) },
			[]string{fmt.Sprintf("and .debug_info+%#x have one signature, %#x", max(hs[pair].unitOff, hs[other].unitOff), hs[pair].sig)}},
		{"type offset outside its unit", func(b []byte) { put32(b, hs[0].toAt, uint32(hs[0].end-hs[0].unitOff+4)) },
			[]string{fmt.Sprintf("type unit at %#x (signature %#x) puts its type at %#x, outside the unit's DIEs", hs[0].unitOff, hs[0].sig, hs[0].end-hs[0].unitOff+4)}},
		{"signature cycle", func(b []byte) { put32(b, stubUnit.toAt, uint32(stubAt-stubUnit.unitOff)) },
			[]string{fmt.Sprintf("type unit at %#x (signature %#x)", stubUnit.unitOff, stubUnit.sig), "itself a stub naming a signature"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			b := slices.Clone(clean)
			c.plant(b)
			p := filepath.Join(t.TempDir(), "planted.so")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s: the planted fault was not refused", what)
				}
				msg := err.Error()
				if strings.Contains(msg, "\n") || !strings.Contains(msg, p) {
					t.Errorf("%s: want one line naming %s, got %q", what, p, msg)
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: %q does not say %q", what, msg, w)
					}
				}
			}
			d, err := OpenDebug(context.Background(), p, Lookup{Dirs: []string{t.TempDir()}})
			if err != nil {
				check("open", err) // a header fault is refused as the units are read
				return
			}
			defer d.Close()
			_, err = d.AllTypes(context.Background(), 2)
			check("all types", err)
			lazy := openDebugT(t, p)
			found, err := lazy.FindStructs([][]string{{"CxxTop"}, {"tu_holder"}})
			if err != nil {
				check("find structs", err)
				return
			}
			var lerr error
			for _, fd := range found {
				if fd == nil {
					continue
				}
				if _, err := lazy.Types().At(fd.Offset); err != nil && lerr == nil {
					lerr = err
				}
			}
			check("at", lerr)
		})
	}
}

// FuzzTypeUnits mutates the type unit section of the DWARF 4 fixture
// (.debug_types, written back in place over the section's bytes, cut or
// padded with zeros to its size) and runs the type front end over the
// object as FuzzTypes does: every step ends with a graph or a one-line
// *InputError, within seconds.
func FuzzTypeUnits(f *testing.F) {
	path := tuLib(f, "4", true)
	clean, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	ef, err := elf.NewFile(strings.NewReader(string(clean)))
	if err != nil {
		f.Fatal(err)
	}
	s := ef.Section(".debug_types")
	if s == nil || s.Flags&elf.SHF_COMPRESSED != 0 || s.Offset+s.Size > uint64(len(clean)) {
		f.Fatal("the fixture has no plain .debug_types")
	}
	at, size := int(s.Offset), int(s.Size)
	f.Add(slices.Clone(clean[at : at+size]))
	noDebug := []string{filepath.Join(f.TempDir(), "no-debug-dir")}
	f.Fuzz(func(t *testing.T, section []byte) {
		data := slices.Clone(clean)
		n := copy(data[at:at+size], section)
		clear(data[at+n : at+size])
		done := make(chan struct{})
		go func() {
			defer close(done)
			fuzzTypesOnce(t, data, noDebug)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the type front end did not finish in 20 s")
		}
	})
}
