package layoutcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/testbin"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The round trip is the promise of nrtabi extract (docs/nrtabi-extract.md):
// checking a file against the fragment extracted from it is CLEAN, and
// extracting twice writes the same bytes. It holds only when extract and
// check spell and compare a type the same way; TestRoundTrip runs it over
// every kind of input the tests know and every class of spelling: pointers
// to structs and to typedefs (FILE *), void *, pointers to what the spec
// grammar cannot spell (double *, float **), function pointers and arrays
// of them, arrays of pointers, const and volatile, bitfields, enums,
// anonymous members, C++ classes with bases, templates, namespaces,
// references and pointers to members.

// spellC is a C unit with one member per spelling class.
const spellC = `#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
typedef struct node node_t;
struct node { node_t *next; struct node *prev; int v; };
struct hidden;
typedef int (*cb_t)(void *, size_t);
typedef void nothing_t;
enum color { RED, GREEN = 4, BLUE };
typedef enum { SMALL, LARGE } size_class_t;
typedef const struct node cnode_t;
struct spell {
	struct node *np; node_t *ntp; node_t **npp; cnode_t *cnp; struct hidden *hp; struct hidden **hpp;
	FILE *fp; FILE **fpp;
	void *v; const void *cv; void **vv; void *const vc; nothing_t *tv; volatile void *vv2;
	int (*fn)(int, char *); cb_t cb; cb_t *cbp; int (**fnp)(void); void (*fa[3])(void); int (*vfn)(const char *, ...);
	char *names[4]; const char *const cnames[2]; int (*pa)[4]; int *(*pap)[4]; struct node *nodes[2];
	volatile int vi; const volatile unsigned cvu; const char *cs; char *const cp; volatile uint32_t *vp;
	double *d; float **f; long double *ld; double dd; float ff;
	unsigned flags : 3; unsigned mode : 5; int sb : 7; uint64_t wide : 40;
	enum color c; enum color *colp; size_class_t sc; enum color cols[2];
	union { int i; float x; } u; struct { int ax, ay; } anon_s;
	struct { short p, q; };
	union { long l; void *lp; };
	uint8_t u8s[16]; int64_t mat[2][3]; size_t sz; bool b; uintptr_t up; unsigned char uc; signed char scc; long long ll; unsigned short us;
	char tail[];
};
/* A complex type is aligned as its part (the x86-64 psABI): _Complex
   double is 16 bytes aligned to 8, so numbers is 24 bytes, not packed, and
   its flexible array is in its tail padding; cfloat is 12 bytes. */
struct numbers { _Complex double cd; int i; char tail[]; };
struct cfloat { _Complex float cf; char c; };
struct spell *use_spell(struct spell *s, struct numbers *n, struct cfloat *c) { return n && c ? s : 0; }
`

// spellCXX is a C++ unit: namespaces, classes with bases (virtual ones
// too), templates, references, pointers to members, the standard library.
const spellCXX = `#include <string>
#include <vector>
namespace outer { namespace inner {
struct Base { virtual ~Base() {} int b; };
struct Mixin { long m; };
struct Empty {};
template <typename T, int N> struct Arr { T v[N]; T *p; const T *cp; };
class Derived : public Base, public Mixin, public Empty {
public:
	Derived(int &x) : r(x), cr(x), rr(static_cast<int &&>(x)) {}
	int &r; const int &cr; int &&rr;
	Arr<int, 3> ai; Arr<char *, 2> ac; Arr<Mixin, 1> am;
	void *vp; const void *cvp; Derived *self; Base *bp; Mixin **mpp;
	int Mixin::*pm; void (Base::*pmf)(); std::nullptr_t np;
	std::vector<int> vi; std::vector<Mixin *> vm; std::string s;
	double *dp; float **fpp;
	enum class mode : unsigned short { off, on } md; mode *mdp;
	unsigned bits : 4;
};
struct VBase { int vb; };
struct Diamond : virtual VBase { int d; };
} }
outer::inner::Diamond the_diamond; // g++ describes a class with a virtual base where its constructor is emitted
int use_cxx(outer::inner::Derived &d, outer::inner::Diamond &x) { return d.b + x.d; }
`

// roundTripCase is one input and the extractions run on it: every named
// type (--all) and the named structs, each set extracted in one call.
type roundTripCase struct {
	name      string
	path      string
	debugDirs []string
	sp        *spec.Spec // the release whose names extract uses (the CLI's --spec)
	all       bool
	singles   [][]string
}

func TestRoundTrip(t *testing.T) {
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	var cases []roundTripCase
	f := loadFixtures(t)
	cases = append(cases,
		roundTripCase{name: "libnrt-fixture", path: f.libnrt, sp: f.sp, all: true, singles: [][]string{{"enc_glb_comm"}, {"nrt_instance_info_t", "nec_version_info_t"}}},
		roundTripCase{name: "libnccom-fixture", path: f.libnccom, sp: f.sp, all: true},
		roundTripCase{name: "types-object", path: f.typesObj, sp: f.sp, all: true, singles: [][]string{{"ncclNet_v6_t"}, {"enc_context", "ncclComm"}}},
	)
	cases = append(cases, spellObjects(t, base)...)
	libc := "/lib/x86_64-linux-gnu/libc.so.6"
	if why := distDebug(libc); why != "" {
		t.Logf("not run on libc: %s", why)
	} else {
		cases = append(cases, roundTripCase{name: "libc", path: libc, debugDirs: elfread.DefaultDebugDirs, sp: base, all: true, singles: [][]string{
			{"argp_fmtstream"},         // FILE * members
			{"_IO_jump_t"},             // function pointers taking FILE *
			{"_IO_FILE"},               // pointers to itself and to declared structs, char[1], char[20]
			{"_IO_FILE_plus"},          // struct _IO_FILE of another unit, where _IO_lock_t is void
			{"link_map"},               // bitfields, arrays of pointers to typedefs (Elf64_Dyn *l_info[...])
			{"obstack"},                // function pointers, a union member, bitfields
			{"sigaction"},              // an anonymous union of function pointers
			{"tm"},                     // const char *
			{"r_debug"},                // an enum member
			{"__pthread_mutex_s"},      // a typedef'd list of pointers to itself
			{"argp_state", "_IO_FILE"}, // two names whose extractions meet at FILE
		}})
	}
	cxxDebug := "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	if _, err := os.Stat(cxxDebug); err != nil {
		t.Logf("not run on libstdc++: its unstripped copy %s is absent (%v); install libstdc++6-12-dbg", cxxDebug, err)
	} else {
		cases = append(cases, roundTripCase{name: "libstdc++", path: cxxDebug, debugDirs: []string{t.TempDir()}, sp: base, all: true, singles: [][]string{
			{"__cxxabiv1::__cxa_exception"},       // function pointers, std::type_info *, an embedded C struct
			{"__cxxabiv1::__vmi_class_type_info"}, // bases, a trailing array of structs
			{"std::type_info"},                    // a vtable pointer, const char *
			{"demangle_component"},                // an enum, an anonymous union of structs
			{"d_info"},                            // const char *, pointers to structs
			{"std::error_code"},                   // a pointer to a class, an int
			{"lconv"},                             // char * members
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.all {
				t.Run("all", func(t *testing.T) { roundTrip(t, c, release.ExtractOptions{All: true}) })
			}
			for _, names := range c.singles {
				t.Run(strings.Join(names, "+"), func(t *testing.T) { roundTrip(t, c, release.ExtractOptions{Names: names}) })
			}
		})
	}
}

// distDebug says why a distribution library's separate debug file cannot
// be read ("" when it can).
func distDebug(lib string) string {
	obj, err := elfread.Open(lib)
	if err != nil {
		return fmt.Sprintf("%s cannot be read (%v); this needs an x86-64 Debian system", lib, err)
	}
	id := obj.BuildID
	obj.Close()
	if len(id) < 3 {
		return lib + " has no build-id"
	}
	dbg := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	if _, err := os.Stat(dbg); err != nil {
		return fmt.Sprintf("its debug file %s is absent (%v); apt-get install libc6-dbg", dbg, err)
	}
	return ""
}

// spellObjects compiles the C unit, and the C++ unit when g++ is there,
// into shared objects with -g.
func spellObjects(t *testing.T, base *spec.Spec) []roundTripCase {
	t.Helper()
	dir := t.TempDir()
	if err := writeFile(dir, "spell.c", spellC); err != nil {
		t.Fatal(err)
	}
	cso := filepath.Join(dir, "libspell.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-fno-eliminate-unused-debug-types", "-o", cso, "spell.c"); err != nil {
		t.Fatal(err)
	}
	out := []roundTripCase{{name: "c-spellings", path: cso, sp: base, all: true, singles: [][]string{{"spell"}, {"node"}, {"numbers"}, {"cfloat"}}}}
	out = append(out, aliasObjects(t, dir, base)...)
	out = append(out, arrayPointerObjects(t, dir, base)...)
	if p, err := cc.Output("-print-prog-name=cc1plus"); err != nil || !filepath.IsAbs(p) {
		t.Logf("not run on a C++ object: %s cannot compile C++ (install g++)", strings.Join(cc.Driver(), " "))
		return out
	}
	if err := writeFile(dir, "spell.cc", spellCXX); err != nil {
		t.Fatal(err)
	}
	xso := filepath.Join(dir, "libspellxx.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", xso, "spell.cc"); err != nil {
		t.Fatal(err)
	}
	out = append(out, roundTripCase{name: "cxx-spellings", path: xso, sp: base, all: true, singles: [][]string{
		{"outer::inner::Derived"}, {"outer::inner::Arr<int, 3>"}, {"outer::inner::Diamond"},
	}})
	if err := writeFile(dir, "tuple_long.cc", tupleLongCXX); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, "tuple_short.cc", tupleShortCXX); err != nil {
		t.Fatal(err)
	}
	tso := filepath.Join(dir, "libtuple.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", tso, "tuple_long.cc", "tuple_short.cc"); err != nil {
		t.Fatal(err)
	}
	out = append(out, roundTripCase{name: "cxx-template-prefix", path: tso, sp: base, all: true, singles: [][]string{
		{"fmt::Tuple<char const*, int>"}, {"fmt::Tuple<char const*, int, int>"}, {"fmt::Tuple<char [4]>"},
	}})
	if err := writeFile(dir, "anon.cc", anonNamespaceCXX); err != nil {
		t.Fatal(err)
	}
	aso := filepath.Join(dir, "libanon.so")
	// DWARF 4 has no DW_AT_export_symbols (gcc's DWARF 5 marks an anonymous
	// namespace with it): the namespace is only nameless, as in cupt.
	if err := cc.Run(dir, "-gdwarf-4", "-O0", "-fPIC", "-shared", "-o", aso, "anon.cc"); err != nil {
		t.Fatal(err)
	}
	return append(out, roundTripCase{name: "cxx-anonymous-namespace", path: aso, sp: base, all: true, singles: [][]string{{"Anon"}, {"outer::Inner"}, {"outer::Holder"}}})
}

// anonNamespaceCXX has types in anonymous namespaces, at the top and in a
// named one (cupt's SpcvGreater): they go by the enclosing scope's names.
const anonNamespaceCXX = `namespace { struct Anon { int a; long b; }; }
namespace outer { namespace { struct Inner { long c; Anon *ap; }; } struct Holder { Inner in; Anon an; }; }
int use_anon(Anon &a, outer::Inner &i, outer::Holder &h) { return a.a + (int)i.c + h.an.a; }
`

// A variadic template's instances whose arguments begin alike, the longer
// in the first unit (cupt's format2impl::Tuple): a row of the shorter
// instance is that instance, not the first whose arguments begin with its.
const (
	tupleHead     = "namespace fmt { template <typename... T> struct Tuple; template <typename H, typename... T> struct Tuple<H, T...> { H head; Tuple<T...> tail; }; template <> struct Tuple<> {}; }\n"
	tupleLongCXX  = tupleHead + "int use_long(fmt::Tuple<const char *, int, int> &t, fmt::Tuple<char[4], int> &u) { return t.tail.head + u.tail.head; }\n"
	tupleShortCXX = tupleHead + "int use_short(fmt::Tuple<const char *, int> &t, fmt::Tuple<char[4]> &u) { return t.tail.head + u.head[0]; }\n"
)

// The TAG_t alias against a struct of that tag, in two units (ld.so's
// struct list beside typedef struct list_head list_t): a name of the
// struct's own wins over the alias whichever unit comes first, both when a
// spec struct is found and when a DWARF struct is named.
const (
	aliasHeadC = `struct list_head { struct list_head *next, *prev; };
typedef struct list_head list_t;
struct list;
struct holder { list_t *lp; struct list_head *hp; struct list *l; };
struct holder *use_head(struct holder *h) { return h; }
`
	aliasListC = `struct link_map;
struct list { int done; struct link_map *map; struct list *next; };
struct list *use_list(struct list *l) { return l; }
`
)

// aliasObjects builds the alias pair both ways round: the unit with the
// typedef first (the found struct), then the one with struct list first
// (the named struct: row list comes before row list_head).
func aliasObjects(t *testing.T, dir string, base *spec.Spec) []roundTripCase {
	t.Helper()
	if err := writeFile(dir, "alias_head.c", aliasHeadC); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, "alias_list.c", aliasListC); err != nil {
		t.Fatal(err)
	}
	var out []roundTripCase
	for _, o := range []struct{ name, first, second string }{
		{"c-alias-typedef-first", "alias_head.c", "alias_list.c"},
		{"c-alias-struct-first", "alias_list.c", "alias_head.c"},
	} {
		so := filepath.Join(dir, "lib"+o.name+".so")
		if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", so, o.first, o.second); err != nil {
			t.Fatal(err)
		}
		out = append(out, roundTripCase{name: o.name, path: so, sp: base, all: true, singles: [][]string{{"list"}, {"list_head"}, {"holder"}, {"list", "holder"}}})
	}
	// A typedef of a typedef in a later unit (gsl's rb_table, a typedef of
	// gsl_bst_rb_table): the later unit's copy of the struct gets the row
	// of the name only it has, and a member there that reaches that copy
	// through the first name is that row.
	if err := writeFile(dir, "pair.h", pairH); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"pair_first.c": pairFirstC, "pair_walk.c": pairWalkC} {
		if err := writeFile(dir, name, text); err != nil {
			t.Fatal(err)
		}
	}
	so := filepath.Join(dir, "libpair.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", so, "pair_first.c", "pair_walk.c"); err != nil {
		t.Fatal(err)
	}
	return append(out, roundTripCase{name: "c-typedef-of-typedef", path: so, sp: base, all: true, singles: [][]string{{"walker_t"}, {"pr"}, {"pair_t", "walker_t"}}})
}

// arrayPointerC has pointers to arrays the grammar can spell and one it
// cannot (larger than a spec object: extract writes void*, and check must
// spell it so too), and a flexible array of arrays.
const arrayPointerC = `struct el { int a; };
struct pa { int (*pa)[4]; struct el (*ps)[4]; unsigned short (*huge)[562949953421311]; struct el (*big)[1048576]; };
struct flexarr { int n; const struct el *const (*defs)[]; unsigned char mac[][6]; }; /* the kernel's virtio_net and ib_core: a flexible array of arrays, a pointer to a flexible array */
struct pa *use_pa(struct pa *p, struct flexarr *f) { return f ? p : 0; }
`

// arrayPointerGo is a Go program whose DWARF holds what no C compiler
// writes: blank fields (each named _), int of 8 bytes, pointers to arrays
// of a struct the grammar cannot name (main.el) and to an array larger
// than a spec object. Its whole runtime's types come with it.
const arrayPointerGo = `package main

type el struct{ a int32 }

type rec struct {
	n    int
	_    [4]byte
	u    uint
	_    int32
	ps   *[4]el
	huge *[1 << 40]uint16
	b    bool
}

var R rec

func main() { println(R.n, R.ps == nil, R.huge == nil) }
`

// arrayPointerObjects builds the C object and, when the go command is
// there, the Go program.
func arrayPointerObjects(t *testing.T, dir string, base *spec.Spec) []roundTripCase {
	t.Helper()
	if err := writeFile(dir, "pa.c", arrayPointerC); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libpa.so")
	if err := cc.Run(dir, "-g", "-O0", "-fPIC", "-shared", "-o", so, "pa.c"); err != nil {
		t.Fatal(err)
	}
	out := []roundTripCase{{name: "c-array-pointers", path: so, sp: base, all: true, singles: [][]string{{"pa"}, {"flexarr"}}}}
	gdir := filepath.Join(dir, "goprog")
	if err := os.MkdirAll(gdir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := testbin.Program(gdir, "rec", arrayPointerGo)
	if errors.Is(err, testbin.ErrNoGo) {
		t.Logf("not run on a Go binary: %v", err)
		return out
	} else if err != nil {
		t.Fatal(err)
	}
	return append(out, roundTripCase{name: "go-binary", path: bin, sp: base, all: true, singles: [][]string{{"main.rec"}}})
}

const (
	pairH      = "typedef struct { int a; long b; } pair_t;\ntypedef struct { const pair_t *p; int n; } walker_t;\n"
	pairFirstC = "#include \"pair.h\"\npair_t *use_pair(pair_t *p) { return p; }\n"
	pairWalkC  = "#include \"pair.h\"\ntypedef pair_t pr;\nwalker_t *use_walker(walker_t *w, pr *x) { return x ? w : 0; }\n"
)

// roundTrip extracts from c.path twice (with 1 and 2 workers for --all),
// requires the same bytes, loads the fragment, and checks c.path against
// it: CLEAN, every struct of the fragment found and checked.
func roundTrip(t *testing.T, c roundTripCase, opt release.ExtractOptions) {
	t.Helper()
	opt.Spec, opt.DebugDirs = c.sp, c.debugDirs
	if opt.DebugDirs == nil {
		opt.DebugDirs = []string{t.TempDir()}
	}
	var runs [2][]byte
	for i := range runs {
		var b bytes.Buffer
		o := opt
		o.Jobs = i + 1
		err := release.Extract(c.path, &b, o)
		var refused *release.RefusedError
		if err != nil && !(opt.All && errors.As(err, &refused)) {
			t.Fatalf("extract %s: %v", c.path, err)
		}
		runs[i] = b.Bytes()
	}
	if !bytes.Equal(runs[0], runs[1]) {
		t.Errorf("two extractions of %s differ (%d and %d bytes): %s", c.path, len(runs[0]), len(runs[1]), firstDiff(runs[0], runs[1]))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "structs.toml"), runs[0], 0o644); err != nil {
		t.Fatal(err)
	}
	frag, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("the fragment extracted from %s does not load: %v", c.path, err)
	}
	if len(frag.Structs) == 0 {
		t.Fatalf("the fragment extracted from %s holds no struct", c.path)
	}
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), []string{c.path}, Options{Spec: base, Structs: frag, StructsSrc: dir, DebugDirs: opt.DebugDirs})
	if err != nil {
		t.Fatalf("check %s against its own fragment: %v", c.path, err)
	}
	if r.Exit != 0 || !strings.HasPrefix(r.Verdict, "CLEAN") || r.StructsChecked != len(frag.Structs) || len(r.Absent) > 0 {
		t.Errorf("checking %s against the fragment extracted from it: exit %d, %d of %d structs checked, absent %v, verdict %s\n%s",
			c.path, r.Exit, r.StructsChecked, len(frag.Structs), r.Absent, r.Verdict, notOK(r))
	}
}

// notOK lists the findings of a report, at most 40 lines.
func notOK(r *Report) string {
	var lines []string
	for _, f := range r.Findings {
		f.Walk(func(x Finding, depth int) {
			lines = append(lines, fmt.Sprintf("%s%s [%s, %s]", strings.Repeat("  ", depth+1), x.Message, x.Kind, x.Severity))
		})
	}
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("  ... and %d more", len(lines)-40))
	}
	return strings.Join(lines, "\n")
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d: %q against %q", i, a[from:min(len(a), i+80)], b[from:min(len(b), i+80)])
}

// TestRoundTripCatches: the spellings the round trip equates (FILE and
// struct _IO_FILE through the typedef, void* for a pointee the grammar
// cannot spell) still tell a changed type from the file's own: each
// planted fault in the fragment of struct spell is caught.
func TestRoundTripCatches(t *testing.T) {
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	c := spellObjects(t, base)[0]
	var b bytes.Buffer
	if err := release.Extract(c.path, &b, release.ExtractOptions{Names: []string{"spell"}, Spec: base, DebugDirs: []string{t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	clean := b.String()
	for _, p := range []struct {
		field, from, to, kind string
		sev                   Severity
		want                  string
	}{
		// An opaque pointee named by another type: the typedef FILE does
		// not make struct _IO_FILE the opaque hidden.
		{"fp", "FILE*", "hidden*", KindPointerTarget, Compatible, "spell.fp: pointer FILE *, spec hidden*"},
		// A pointer to a struct that no longer goes through its typedef.
		{"ntp", "node_t*", "cnode_t*", KindPointerTarget, Compatible, "spell.ntp: pointer node_t *, spec cnode_t*"},
		// A pointer to another struct row: its name is not the pointee's.
		{"np", "node*", "spell*", KindType, Incompatible, "spell.np: type struct node *, spec spell*"},
		// double * is void* in the grammar, never char*.
		{"d", "void*", "char*", KindType, Incompatible, "spell.d: type double *, spec char*"},
		// float ** is void**, never void*: one level less.
		{"f", "void**", "void*", KindPointerTarget, Compatible, "spell.f: pointer float **, spec void*"},
	} {
		t.Run(p.field, func(t *testing.T) {
			row := fmt.Sprintf("name = %q\n  offset = ", p.field)
			i := strings.Index(clean, row)
			if i < 0 {
				t.Fatalf("the fragment has no field %s:\n%s", p.field, clean)
			}
			from := fmt.Sprintf("type = %q", p.from)
			j := strings.Index(clean[i:], from)
			if j < 0 || j > len(row)+16 {
				t.Fatalf("field %s is not spelled %s in the fragment", p.field, p.from)
			}
			text := clean[:i+j] + fmt.Sprintf("type = %q", p.to) + clean[i+j+len(from):]
			expect(t, checkFragmentText(t, text, c.path, base), p.kind, p.sev, p.want)
		})
	}
}

// TestAliasRetypeCaught plants the retype IsStruct is for: holder.lp is a
// list_t * (the typedef of struct list_head), and a fragment that says
// list* (the spec struct list, whose alias list_t is) is told it changed
// type; the clean fragment checks clean.
func TestAliasRetypeCaught(t *testing.T) {
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	c := aliasObjects(t, t.TempDir(), base)[0]
	var b bytes.Buffer
	if err := release.Extract(c.path, &b, release.ExtractOptions{All: true, Spec: base, DebugDirs: []string{t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	clean := b.String()
	from := "name = \"lp\"\n  offset = 0\n  type = \"list_head*\""
	if !strings.Contains(clean, from) || !strings.Contains(clean, "[[struct]]\nname = \"list\"\n") {
		t.Fatalf("the fragment does not spell holder.lp as list_head* beside a struct list:\n%s", clean)
	}
	for _, p := range []struct{ name, text string }{
		{"clean", clean},
		{"planted", strings.Replace(clean, from, strings.Replace(from, "list_head*", "list*", 1), 1)},
	} {
		t.Run(p.name, func(t *testing.T) {
			r := checkFragmentText(t, p.text, c.path, base)
			if p.name == "clean" {
				if r.Exit != 0 || !strings.HasPrefix(r.Verdict, "CLEAN") {
					t.Fatalf("the clean fragment: exit %d, %s%s", r.Exit, r.Verdict, notOK(r))
				}
				return
			}
			expect(t, r, KindType, Incompatible, "holder.lp: type list_t *, spec list*")
		})
	}
}

// checkFragmentText checks path against the fragment text (a spec
// directory of one structs.toml) with base's link contract, no debug
// directory searched.
func checkFragmentText(t *testing.T, text, path string, base *spec.Spec) *Report {
	t.Helper()
	frag, dir := loadFragmentDir(t, text)
	r, err := Check(context.Background(), []string{path}, Options{Spec: base, Structs: frag, StructsSrc: dir, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
