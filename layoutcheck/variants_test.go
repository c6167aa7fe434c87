package layoutcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

// TestDWARFVariants: DWARF 4 and 5, SHF_COMPRESSED and .zdebug sections all
// read the same layouts; a bitfield fault is caught under DWARF 4 (old-style
// DW_AT_bit_offset) as under DWARF 5 (DW_AT_data_bit_offset).
func TestDWARFVariants(t *testing.T) {
	f := loadFixtures(t)
	for _, v := range []struct {
		name  string
		flags []string
		sect  string
	}{
		{"dwarf4", []string{"-gdwarf-4"}, ".debug_info"},
		{"dwarf5", []string{"-gdwarf-5"}, ".debug_info"},
		{"zlib", []string{"-gz=zlib"}, ".debug_info"},
		{"zlib-gnu", []string{"-gz=zlib-gnu"}, ".zdebug_info"},
	} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range map[string]string{
				gen.HeaderName: f.headerText,
				"types.c":      "#define _GNU_SOURCE\n#include \"" + gen.HeaderName + "\"\n",
			} {
				if err := writeFile(dir, name, text); err != nil {
					t.Fatal(err)
				}
			}
			flags := append([]string{"-fno-eliminate-unused-debug-types"}, v.flags...)
			if err := cc.Shared(dir, "libv.so", "libv.so", "", []string{"types.c"}, flags...); err != nil {
				t.Fatal(err)
			}
			lib := filepath.Join(dir, "libv.so")
			obj, err := elfread.Open(lib)
			if err != nil {
				t.Fatal(err)
			}
			s := obj.File.Section(v.sect)
			obj.Close()
			if s == nil {
				t.Fatalf("gcc %v wrote no %s section", v.flags, v.sect)
			}
			r := runCheck(t, f, Options{}, lib)
			if r.Exit != 0 || len(r.Files[0].Structs) != len(f.sp.Structs) {
				t.Fatalf("%s: exit %d, %d structs: %+v", v.name, r.Exit, len(r.Files[0].Structs), r.Findings)
			}
		})
	}
	h := staticAssert.ReplaceAllString(f.headerText, "")
	h = strings.Replace(h, "\tuint32_t pod_sz; /* +40 HIGH */\n", "\tuint32_t pod_sz : 31;\n", 1)
	dir := t.TempDir()
	if err := writeFile(dir, gen.HeaderName, h); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, "types.c", "#define _GNU_SOURCE\n#include \""+gen.HeaderName+"\"\n"); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "types.c", "types.o", "-gdwarf-4", "-gstrict-dwarf", "-fno-eliminate-unused-debug-types"); err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{}, filepath.Join(dir, "types.o"))
	expect(t, r, KindBitfield, Incompatible, "enc_glb_comm.pod_sz: now a 31-bit bitfield at bit 320")
}

const cxxSource = `
namespace outer { namespace inner { struct Widget { int a; long b; }; } }
typedef struct { int x; unsigned y; } anon_t;
typedef struct { short s; } plain_t;
plain_t plain;
namespace std { inline namespace __cxx11 {
template <class T, class U = int> struct box { T v; U w; };
} }
class Base { public: virtual ~Base() {} int k; };
class Derived : public Base { public: int d; unsigned flags : 3; unsigned mode : 5; };
outer::inner::Widget widget;
anon_t anon;
std::box<char> boxed;
Derived derived;
`

const cxxSpec = `
[[struct]]
name = "outer::inner::Widget"
size = 16
conf = "HIGH"
source = "test"
  [[struct.field]]
  name = "a"
  offset = 0
  type = "int"
  conf = "HIGH"
  source = "test"
  [[struct.field]]
  name = "b"
  offset = 8
  type = "i64"
  conf = "HIGH"
  source = "test"

[[struct]]
name = "anon_t"
size = 8
conf = "HIGH"
source = "test"
  [[struct.field]]
  name = "x"
  offset = 0
  type = "int"
  conf = "HIGH"
  source = "test"
  [[struct.field]]
  name = "y"
  offset = 4
  type = "u32"
  conf = "HIGH"
  source = "test"

[[struct]]
name = "plain"
size = 2
conf = "HIGH"
source = "test: found through its plain_t typedef"
  [[struct.field]]
  name = "s"
  offset = 0
  type = "i16"
  conf = "HIGH"
  source = "test"

[[struct]]
name = "std::box<char>"
size = 8
conf = "HIGH"
source = "test"
  [[struct.field]]
  name = "v"
  offset = 0
  type = "char"
  conf = "HIGH"
  source = "test"
  [[struct.field]]
  name = "w"
  offset = 4
  type = "int"
  conf = "HIGH"
  source = "test"
`

// TestCxx: namespaces, inline namespaces, template instances named without
// their default arguments, typedef'd anonymous structs, and classes with a
// vtable, a base and bitfields (through extract and back).
func TestCxx(t *testing.T) {
	f := loadFixtures(t)
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	if err := writeFile(dir, "types.cc", cxxSource); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "types.cc", "types.o"); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "types.o")
	specDir := t.TempDir()
	if err := writeFile(specDir, "cxx.toml", cxxSpec); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(specDir)
	if err != nil {
		t.Fatal(err)
	}
	r := runCheck(t, f, Options{Structs: frag, StructsSrc: specDir, Require: []string{"outer::inner::Widget", "anon_t", "plain", "std::box<char>"}}, obj)
	if r.Exit != 0 {
		t.Fatalf("C++ types: exit %d %+v", r.Exit, r.Findings)
	}
	for _, s := range r.Files[0].Structs {
		t.Logf("%s found as %s", s.Name, s.Via)
	}
	var buf strings.Builder
	if err := release.Extract(obj, &buf, release.ExtractOptions{Names: []string{"Derived", "std::box<char>"}}); err != nil {
		t.Fatal(err)
	}
	// Derived.d lives in Base's tail padding (Itanium ABI), so the base
	// and d share one range.
	if !strings.Contains(buf.String(), `covers = ["flags", "mode"]`) || !strings.Contains(buf.String(), `covers = ["<base Base>", "d"]`) {
		t.Fatalf("bitfields and the base class must become covered opaque ranges:\n%s", buf.String())
	}
	xdir := t.TempDir()
	if err := os.WriteFile(filepath.Join(xdir, "x.toml"), []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	xfrag, err := spec.LoadDir(xdir)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if r := runCheck(t, f, Options{Structs: xfrag, StructsSrc: xdir}, obj); r.Exit != 0 {
		t.Fatalf("C++ round trip: exit %d %+v", r.Exit, r.Findings)
	}
}
