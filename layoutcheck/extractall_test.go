package layoutcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
)

const allHeader = `#include <string>
#include <vector>
namespace lib {
struct point { int x, y; };
enum class mode : unsigned short { off, on };
template <typename T> struct box { T v; box<T>* next; };
struct holder { std::vector<point> pts; std::string name; box<int> bi; mode m; point* p; };
}
`

// allC is a C unit with what extract --all must handle: a typedef'd
// anonymous struct, a union, a GNU C empty struct
// (no row), a struct and a typedef'd anonymous struct whose _t name would
// give the same tag, a pointer to a struct only declared, a bitfield.
const allC = `struct opaque_thing;
typedef struct { long a; char b; } pair_t;
union number { int i; float f; double d; };
enum level { LOW, MID = 5, HIGH };
struct empty {};
struct clash { int a; };
typedef struct { int b; } clash_t;
struct rec { pair_t p; union number n; enum level lv; struct opaque_thing *o; unsigned flags : 3; struct empty e; struct clash c; clash_t ct; };
struct rec use_c(struct rec r) { return r; }
`

// TestExtractAllRoundTrip: extract --all of a multi-unit C and C++ shared
// object (g++ -g) is the same bytes at -j 1, 2 and 8, loads as a spec, and
// checking the object against it is clean; what it leaves out is counted
// in its comments.
func TestExtractAllRoundTrip(t *testing.T) {
	f := loadFixtures(t)
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	if err := writeFile(dir, "lib.h", allHeader); err != nil {
		t.Fatal(err)
	}
	srcs := []string{"c.c"}
	if err := writeFile(dir, "c.c", allC); err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{"int use0(lib::holder& h) { return (int)h.pts.size(); }\n", "int use1(lib::holder& h, lib::box<double>& b) { return (int)h.name.size() + (int)b.v; }\n", "lib::point use2(lib::holder& h) { return *h.p; }\n"} {
		name := "u" + string(rune('0'+i)) + ".cc"
		if err := writeFile(dir, name, "#include \"lib.h\"\n"+body); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, name)
	}
	obj := filepath.Join(dir, "liball.so")
	if err := cc.Run(dir, append([]string{"-g", "-O0", "-fPIC", "-shared", "-o", obj}, srcs...)...); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, j := range []int{1, 2, 8} {
		var buf bytes.Buffer
		var st release.ExtractStats
		if err := release.Extract(obj, &buf, release.ExtractOptions{All: true, Jobs: j, Spec: f.sp, Stats: &st}); err != nil {
			t.Fatalf("-j %d: %v", j, err)
		}
		if want == nil {
			want = buf.Bytes()
			if st.Structs == 0 || st.Enums == 0 || st.Units != 4 || len(st.Skipped) == 0 {
				t.Fatalf("stats %+v", st)
			}
			continue
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("-j %d writes another fragment than -j 1 (%d bytes against %d)", j, buf.Len(), len(want))
		}
	}
	text := string(want)
	for _, s := range []string{
		"name = \"pair_t\"", "name = \"number\"", "note = \"a union in the binary", "name = \"level\"", "{ name = \"MID\", value = 5 }",
		"name = \"lib::point\"", "name = \"lib::holder\"", "name = \"lib::box<int>\"", "name = \"rec\"",
		"# not extracted: empty (struct empty is empty", "# skipped: 1 structs whose name or tag another struct's row already has",
		" later definitions of a name an earlier unit already defines", "[[opaque_type]]\nname = \"opaque_thing\"",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the fragment lacks %q", s)
		}
	}
	if t.Failed() {
		t.Fatalf("fragment:\n%s", text)
	}
	specDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(specDir, "structs.toml"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(specDir)
	if err != nil {
		t.Fatalf("the fragment does not load: %v", err)
	}
	r := runCheck(t, f, Options{Structs: frag, StructsSrc: specDir}, obj)
	if r.Exit != 0 {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Fatalf("checking the object against its own --all fragment is not clean:\n%s", b.String())
	}
}

// An ODR copy of a struct (struct io, in every unit that includes io.h)
// typedef'd in a later unit only: extract --all gives both copies one row,
// io, so a member pointing at the later copy is spelled io* and checking
// the object against its fragment is clean (before, the typedef made a
// second row __io and check graded io* -> __io* a renamed type, as on
// libc's struct _IO_FILE and __FILE).
func TestExtractAllODRTypedef(t *testing.T) {
	f := loadFixtures(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"io.h": "struct io { int a; struct io *next; };\n",
		"a.c":  "#include \"io.h\"\nstruct io use_a(struct io x) { return x; }\n",
		"b.c":  "#include \"io.h\"\ntypedef struct io __io;\nstruct user { __io *f; struct io *g; };\nstruct user use_b(struct user u) { return u; }\n",
	} {
		if err := writeFile(dir, name, body); err != nil {
			t.Fatal(err)
		}
	}
	obj := filepath.Join(dir, "libodr.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", obj, "a.c", "b.c"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := release.Extract(obj, &buf, release.ExtractOptions{All: true, Jobs: 2, Spec: f.sp}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Contains(text, `name = "__io"`) || !strings.Contains(text, `type = "io*"`) {
		t.Errorf("the ODR copy got its own row, or a pointer to it another name:\n%s", text)
	}
	specDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(specDir, "structs.toml"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(specDir)
	if err != nil {
		t.Fatalf("the fragment does not load: %v\n%s", err, text)
	}
	if r := runCheck(t, f, Options{Structs: frag, StructsSrc: specDir}, obj); r.Exit != 0 {
		var b bytes.Buffer
		r.WriteText(&b)
		t.Fatalf("checking the object against its own --all fragment is not clean:\n%s\n%s", b.String(), text)
	}
}
