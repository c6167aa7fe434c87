package layoutcheck

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
)

// Every declarator kind of TestCDecl, plus what a struct needs around it:
// typedefs, an enum, a union and an anonymous struct by value, a bitfield
// after ": 0", an over-aligned member, a pointer to an undefined struct, a
// flexible array; and a packed struct with misaligned members.
const showCSource = `typedef unsigned int u32_t;
struct inner { int a; char b; };
typedef struct inner inner_t;
enum color { RED = 1, GREEN = 2 };
struct decls {
` + "\t" + `%DECLS%
	unsigned f1 : 3;
	unsigned : 0;
	unsigned f2 : 5;
	inner_t in;
	struct inner ins[2];
	enum color col;
	union { int i; float fl; } u;
	struct { short s1; long s2; } anon;
	u32_t t;
	struct opaque *op;
	double dd __attribute__((aligned(32)));
	char tail[];
};
struct decls gd;
struct __attribute__((packed)) pk { char a; int b; short c; struct inner in; };
struct pk gpk;
`

func showCSrc() string {
	return strings.Replace(showCSource, "%DECLS%", strings.Join(declLines, ";\n\t")+";", 1)
}

// showCCompile compiles show --c output with the project's C warnings.
func showCCompile(t *testing.T, text string) error {
	t.Helper()
	dir := t.TempDir()
	if err := writeFile(dir, "show.c", text); err != nil {
		t.Fatal(err)
	}
	return cc.Object(dir, "show.c", "show.o", "-Wall", "-Wextra", "-Werror")
}

// TestShowC: the C that show --c prints compiles, and its _Static_asserts
// (the struct's size, every member's offset and size, from the DWARF) hold;
// a changed declarator in that C fails its assertion.
func TestShowC(t *testing.T) {
	obj := compileTypes(t, showCSrc())
	for _, name := range []string{"decls", "pk"} {
		var b bytes.Buffer
		if _, err := Show(context.Background(), obj, name, ShowOptions{DebugDirs: []string{t.TempDir()}, C: true}, &b); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		if err := showCCompile(t, text); err != nil {
			t.Fatalf("show --c %s does not compile or its assertions fail: %v\n%s", name, err, text)
		}
		if name == "pk" {
			if !strings.Contains(text, "__attribute__((packed))") || !strings.Contains(text, "__builtin_offsetof(struct pk, b) == 1") {
				t.Fatalf("pk is packed with b at 1:\n%s", text)
			}
			continue
		}
		for _, l := range declLines {
			if !strings.Contains(text, "\t"+l+";\n") {
				t.Errorf("show --c does not declare %q", l)
			}
		}
		for _, m := range []string{"d", "G", "F", "m", "in", "ins", "col", "u", "anon", "t", "op", "dd", "tail"} {
			if !strings.Contains(text, "__builtin_offsetof(struct decls, "+m+") == ") {
				t.Errorf("no offset assertion for %s", m)
			}
		}
		// The assertions catch a C spelling that is not the binary's layout.
		bad := strings.Replace(text, "\tint (*G)[7];\n", "\tint *G[7];\n", 1)
		if bad == text {
			t.Fatal("the planted change did not apply")
		}
		if err := showCCompile(t, bad); err == nil || !strings.Contains(err.Error(), "decls.G: size") {
			t.Fatalf("a pointer to an array spelled as an array of pointers must fail decls.G's assertion, got %v", err)
		}
	}
}

const showCxx = `namespace outer { namespace inner { struct Widget { int a; long b; }; } }
typedef struct { int x; unsigned y; } anon_t;
namespace std { inline namespace __cxx11 { template <class T, class U = int> struct box { T v; U w; }; } }
class Base { public: virtual ~Base() {} int k; };
class Derived : public Base { public: int d; };
struct E {};
struct WithE : E { bool b; enum class K : unsigned char { A, B } k; };
struct User { outer::inner::Widget w; std::box<char> bx; anon_t an; WithE we; E e; Base base; };
User user; Derived derived;
`

// TestShowCxx: C++ names become C identifiers, an empty class keeps its
// byte, an empty base takes none, a vtable pointer is a pointer; a member in
// a base's tail padding, which C cannot lay out, is one clear error.
func TestShowCxx(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if out, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(out) {
		t.Skipf("skipping: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
	}
	dir := t.TempDir()
	if err := writeFile(dir, "u.cc", showCxx); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "u.cc", "u.o"); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "u.o")
	var b bytes.Buffer
	if _, err := Show(context.Background(), obj, "User", ShowOptions{DebugDirs: []string{t.TempDir()}, C: true}, &b); err != nil {
		t.Fatal(err)
	}
	if err := showCCompile(t, b.String()); err != nil {
		t.Fatalf("show --c User: %v\n%s", err, b.String())
	}
	_, err := Show(context.Background(), obj, "Derived", ShowOptions{DebugDirs: []string{t.TempDir()}, C: true}, &b)
	if err == nil || !strings.Contains(err.Error(), "member d at byte 12 lies inside the member before it") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line on the tail-padding reuse, got %v", err)
	}
}
