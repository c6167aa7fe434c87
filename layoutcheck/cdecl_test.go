package layoutcheck

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/typemodel"
)

// Every declarator kind, written as gdb's ptype spells it; the renderer
// must give back each line exactly.
var declLines = []string{
	"int *(*d[10])[4]",
	"int (*G)[7]",
	"int (*F[7])(void)",
	"int (*C)(int, char *)",
	"volatile int a[7]",
	"const char *p",
	"char *const q",
	"const volatile unsigned int *const *cv",
	"char (*(*x)(void))[3]",
	"int m[2][3][4]",
	"struct decls *next",
	"int (*vf)(const char *, ...)",
	"char c",
}

func declsSource(lines []string) string {
	var b strings.Builder
	b.WriteString("struct decls {\n")
	for _, l := range lines {
		b.WriteString("\t" + l + ";\n")
	}
	b.WriteString("};\nstruct decls gdecls;\n")
	return b.String()
}

// TestCDecl: show, check's messages and extract's comments spell DWARF
// types through typemodel's one spelling; each declarator comes back as
// written.
func TestCDecl(t *testing.T) {
	obj := compileTypes(t, declsSource(declLines))
	d, err := debugOf(t, obj)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	found, err := d.FindStructs([][]string{{"decls"}})
	if err != nil || found[0] == nil {
		t.Fatalf("decls not found: %v", err)
	}
	l, err := d.Types().Struct(found[0].Offset)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range l.Fields {
		if got := typemodel.Decl(m.Type, m.Name); got != declLines[i] {
			t.Errorf("member %d: got %q, want %q", i, got, declLines[i])
		}
	}
	abstract := map[string]string{"d": "int *(*[10])[4]", "G": "int (*)[7]", "F": "int (*[7])(void)", "q": "char *const", "a": "volatile int [7]"}
	for _, m := range l.Fields {
		if want, ok := abstract[m.Name]; ok {
			if got := typemodel.Spell(m.Type); got != want {
				t.Errorf("%s: abstract %q, want %q", m.Name, got, want)
			}
		}
	}
	var b bytes.Buffer
	if _, err := Show(context.Background(), obj, "decls", ShowOptions{DebugDirs: []string{t.TempDir()}}, &b); err != nil {
		t.Fatal(err)
	}
	for _, l := range declLines {
		if !strings.Contains(b.String(), "\t"+l+";") {
			t.Errorf("show does not print %q:\n%s", l, b.String())
		}
	}
}

func debugOf(t *testing.T, path string) (*elfread.Debug, error) {
	t.Helper()
	obj, err := elfread.Open(path)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { obj.Close() })
	return elfread.FindDebug(context.Background(), obj, elfread.Lookup{Dirs: []string{t.TempDir()}})
}

// TestExtractSpellsDeclarators: nested pointer/array declarators extract in
// order with their sizes and qualifiers, check is clean against the
// fragment, and a changed declarator is caught.
func TestExtractSpellsDeclarators(t *testing.T) {
	src := declsSource(declLines)
	obj := compileTypes(t, src)
	frag := fragmentOf(t, obj, "decls")
	st := frag.StructByName("decls")
	want := map[string]string{
		"d": "int*[4]*[10]", "G": "int[7]*", "a": "volatile int[7]", "p": "const char*", "q": "char* const",
		"cv": "const volatile unsigned* const*", "m": "int[2][3][4]", "next": "decls*", "c": "char",
	}
	got := map[string]string{}
	for _, f := range st.Fields {
		got[f.Name] = f.Type
		if f.Name == "d" && f.T.Size() != 80 {
			t.Errorf("d: spec size %d, want 80", f.T.Size())
		}
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: extracted %q, want %q", n, got[n], w)
		}
	}
	if r := gradingCheck(t, frag, obj); len(r.Findings) != 0 {
		t.Fatalf("extract -> check not clean: %+v", r.Findings)
	}
	changed := compileTypes(t, strings.Replace(src, "int *(*d[10])[4];", "int *(*d[10])[5];", 1))
	r := gradingCheck(t, frag, changed)
	expect(t, r, KindType, Incompatible, "decls.d: type int *(*[10])[5], spec int*[4]*[10] (field retyped)")
}

// TestPlainCharEitherSign: plain char is unsigned on aarch64 (built here
// with -funsigned-char); extract -> check stays clean, and the char spec
// field still refuses an unsigned char.
func TestPlainCharEitherSign(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	src := "struct cs { char c; const char *p; char s[4]; };\nstruct cs gcs;\n"
	dir := t.TempDir()
	if err := writeFile(dir, "cs.c", src); err != nil {
		t.Fatal(err)
	}
	if err := cc.Object(dir, "cs.c", "cs.o", "-funsigned-char"); err != nil {
		t.Fatal(err)
	}
	obj := dir + "/cs.o"
	frag := fragmentOf(t, obj, "cs")
	if r := gradingCheck(t, frag, obj); len(r.Findings) != 0 {
		t.Fatalf("unsigned plain char: extract -> check not clean: %+v", r.Findings)
	}
	uc := compileTypes(t, strings.Replace(src, "char c;", "unsigned char c;", 1))
	expect(t, gradingCheck(t, frag, uc), KindType, Incompatible, "cs.c: type unsigned char, spec char (field retyped)")
}

// TestCDeclCycles: type chains that loop (only corrupted DWARF makes them:
// a pointer to itself, a function taking a pointer to itself) end.
func TestCDeclCycles(t *testing.T) {
	p := &typemodel.Type{Kind: typemodel.Pointer}
	p.Elem = p
	f := &typemodel.Type{Kind: typemodel.Func}
	fp := &typemodel.Type{Kind: typemodel.Pointer, Elem: f}
	f.Elem, f.Params = fp, []*typemodel.Type{fp}
	for _, ty := range []*typemodel.Type{p, fp} {
		if got := typemodel.Decl(ty, "x"); !strings.Contains(got, "...") || len(got) > 1<<16 {
			t.Errorf("a looping type must end in ...: %.200q (%d bytes)", got, len(got))
		}
	}
}
