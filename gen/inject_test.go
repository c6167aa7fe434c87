package gen

import (
	"bytes"
	"debug/elf"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/spec"
)

// hostileTexts try to leave the comment or string literal they are emitted
// into: comment delimiters, line breaks (a // comment, a linker script), a
// trailing backslash and the trigraph ??/ (line splices under -std=c11),
// quotes, NUL, ESC, bytes that are not UTF-8, a BOM and a bidi override.
var hostileTexts = []string{
	"*/ int injected; /*",
	"x */\nint injected;\n/* y",
	"\nint injected;\n",
	"ends in a splice \\",
	"trigraph ??/",
	"??/\nint injected;",
	"\" ; int injected; \"",
	"\x00*/ int injected; /*",
	"\x1b[2J*/ int injected; /*",
	"\xff\xfe*/ int injected; /*",
	"\ufeff*/int injected;/*\u202e",
	"*/\n#define injected 1\n/*",
	"} injected; }; { global: injected; };",
	"*//*",
	"/**/",
	"*",
	"/",
}

// trickyTexts are free texts the validator accepts that still need care
// where they are emitted: a trailing backslash, a trigraph, quotes, a
// preprocessor line, a // comment, linker-script punctuation, tabs and
// newlines, non-ASCII.
var trickyTexts = []string{
	"ends in a splice \\", "trigraph ??/ and ??=", "quote \" and ' and \\\"", "#define injected 1",
	"// injected", "} injected; { global: injected; local: *; };", "tab\there\nnewline\nint injected;",
	"caf\u00e9 \u2603 \U0001F600", "%s %d %n", "`injected`", "$(injected)",
}

// plantText writes text into every free text the generator emits (bypassing
// the validator, which refuses most of these: the emitter must hold alone).
func plantText(s *spec.Spec, text string) {
	for _, st := range s.Structs {
		st.Source, st.Note = text, text
		for j := range st.Fields {
			st.Fields[j].Source, st.Fields[j].Note = text, text
		}
	}
	for i := range s.Enums {
		s.Enums[i].Source, s.Enums[i].Note = text, text
	}
	for i := range s.Messages {
		s.Messages[i].Where = text
	}
	for i := range s.Constants {
		s.Constants[i].Source, s.Constants[i].Note = text, text
		if _, ok := s.Constants[i].Str(); ok && !formulaRow(s.Constants[i].Name) && s.Constants[i].Name != "NCCOM_VERSION_STRING" {
			s.Constants[i].Value = text
		}
	}
	s.SlotTable.Sentinel = text
	s.Release.LibNCCOM.Git = text
}

// formulaRow reports whether the constant is an expression the Promela
// header parses (its value is not free text).
func formulaRow(name string) bool {
	for _, m := range append(append([]pmlMacro{}, pmlFormulas...), pmlHierFormulas...) {
		if m.row == name {
			return true
		}
	}
	return name == pmlTreeChildrenRow
}

// cOutside is the C (or linker script, or Promela) text of src outside
// comments, string and character literals: what the compiler reads as code.
func cOutside(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return b.String() + " <unterminated comment>"
			}
			i += end + 3
			b.WriteByte(' ')
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					i++
				}
				i++
			}
			b.WriteByte('\n')
		case src[i] == '"' || src[i] == '\'':
			q := src[i]
			for i++; i < len(src) && src[i] != q; i++ {
				if src[i] == '\\' {
					i++
				}
				if i < len(src) && src[i] == '\n' {
					return b.String() + " <newline in literal>"
				}
			}
			b.WriteByte(' ')
		default:
			b.WriteByte(src[i])
		}
	}
	return b.String()
}

// cIdents are the identifiers of C code (comments and literals stripped).
func cIdents(code string) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < len(code); {
		c := code[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			j := i
			for j < len(code) && (code[j] == '_' || 'a' <= code[j] && code[j] <= 'z' || 'A' <= code[j] && code[j] <= 'Z' || '0' <= code[j] && code[j] <= '9') {
				j++
			}
			out[code[i:j]] = true
			i = j
			continue
		}
		if '0' <= c && c <= '9' { // a number, with its suffix (0x1f, 8U)
			for i < len(code) && (code[i] == '_' || code[i] == '.' || 'a' <= code[i] && code[i] <= 'z' || 'A' <= code[i] && code[i] <= 'Z' || '0' <= code[i] && code[i] <= '9') {
				i++
			}
			continue
		}
		i++
	}
	return out
}

// generatedIdents are the identifiers outside comments and literals of
// every C, linker-script and Promela file generated for s, and every Go
// identifier of the generated Go (which must parse).
func generatedIdents(t testing.TB, s *spec.Spec, withModel bool) (map[string]bool, error) {
	files, err := Generate(s)
	if err != nil {
		return nil, err
	}
	if withModel {
		pml, err := PromelaHeader(s)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: "model.pml", Data: pml})
	}
	all := map[string]bool{}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Path, ".go"):
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f.Path, f.Data, parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("generated %s does not parse: %w", f.Path, err)
			}
			for _, id := range goIdents(af) {
				all[id] = true
			}
		default:
			if bytes.Contains(f.Data, []byte{0}) {
				return nil, fmt.Errorf("generated %s holds a NUL", f.Path)
			}
			for id := range cIdents(cOutside(string(f.Data))) {
				all[id] = true
			}
		}
	}
	return all, nil
}

// TestFreeTextStaysText: hostile free text planted in every source, note,
// message location, string constant, sentinel and git hash of 2.31.24
// (without validation) yields C that compiles with -Wall -Wextra -Werror,
// whose objects define no symbol named injected, and C, linker scripts,
// Promela and Go whose code (outside comments and literals) holds no
// identifier the clean spec's output does not.
func TestFreeTextStaysText(t *testing.T) {
	base, err := generatedIdents(t, mustLoad(t, spec.Default), true)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range append(hostileTexts, trickyTexts...) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := mustLoad(t, spec.Default)
			plantText(s, text)
			ids, err := generatedIdents(t, s, true)
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			for id := range ids {
				if !base[id] {
					t.Errorf("%q: the generated code holds the identifier %s", text, id)
				}
			}
			if cc.Available() != nil || i >= len(hostileTexts) || !strings.Contains(text, "injected") {
				return
			}
			dir := writeRelease(t, s)
			if err := compileC(dir); err != nil {
				t.Fatalf("%q: the generated C does not compile: %v", text, err)
			}
			for _, o := range []string{"check.o", "nrt_slots.o", "nccom_stub.o"} {
				for _, sym := range objectSymbols(t, filepath.Join(dir, "c", o)) {
					if strings.Contains(sym, "injected") {
						t.Errorf("%q: %s defines %s", text, o, sym)
					}
				}
			}
		})
	}
}

func goIdents(f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			out = append(out, id.Name)
		}
		return true
	})
	return out
}

func objectSymbols(t testing.TB, path string) []string {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range syms {
		out = append(out, s.Name)
	}
	return out
}

// reload writes s as TOML and loads it back through the validator, as
// `nrtabi spec validate` would read the mutated files.
func reload(s *spec.Spec) (*spec.Spec, error) {
	var b bytes.Buffer
	w := &spec.Writer{W: &b}
	w.Spec(s)
	if err := w.Err(); err != nil {
		return nil, err
	}
	name := s.Release.Name
	return spec.LoadFS(fstest.MapFS{name + "/spec.toml": {Data: b.Bytes()}}, name, "mutated/"+name)
}

// keepsParams: the libnccom double's bodies name these functions'
// parameters (stubParams), so the generator requires them as they are and
// the property test leaves them (TestStubRequirements holds the refusal).
func keepsParams(f *spec.Forward) bool {
	_, ok := stubParams()[f.Name]
	return ok
}

// stubWrites: the double writes members of st (stubOutFields).
func stubWrites(s *spec.Spec, st *spec.Struct) bool {
	for fn := range stubOutFields() {
		if f := s.ForwardByName(fn); f != nil {
			for _, p := range f.Params {
				if p.Name == "out" && p.T != nil && p.T.Kind == spec.KindPointer && p.T.Elem.Struct == st {
					return true
				}
			}
		}
	}
	return false
}

// TestStubRequirements: a spec that renames a parameter or a member the
// libnccom double's hand-written bodies use is refused by the generator in
// one line naming it, not turned into C that does not compile.
func TestStubRequirements(t *testing.T) {
	s := mustLoad(t, spec.Default)
	f := s.ForwardByName("neuronBootstrapSend")
	f.Params = append([]spec.Param(nil), f.Params...)
	f.Params[1].Name = "other"
	_, err := Generate(s)
	if err == nil || !strings.Contains(err.Error(), "neuronBootstrapSend with the parameters (state, peer, data, size, hint)") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a renamed parameter: %v", err)
	}
	s = mustLoad(t, spec.Default)
	st := s.StructByName("nccl_comm_info_t")
	for i := range st.Fields {
		if st.Fields[i].Name == "cluster_id" {
			// Renamed with its stable name kept, as a was row does: the
			// header declares both spellings, so the double still compiles.
			st.Fields[i].Name = "cluster"
		}
	}
	if _, err := Generate(s); err != nil {
		t.Fatalf("a member renamed with its stable name kept: %v", err)
	}
	for i := range st.Fields {
		if st.Fields[i].Name == "cluster" {
			st.Fields[i].Stable = "" // renamed without a was row
		}
	}
	if _, err := Generate(s); err == nil || !strings.Contains(err.Error(), "nccl_comm_info_t.cluster_id, which the libnccom double's neuronGetCommInfo writes") {
		t.Fatalf("a renamed member: %v", err)
	}
}

// randIdent is a random C identifier; now and then one the validator must
// refuse (a keyword, a reserved name, one of the generated code's own).
func randIdent(r *rand.Rand) string {
	bad := []string{"int", "_Bool", "typeof", "asm", "restrict", "__x", "_Y", "memset", "NULL", "rc", "nrtabi_x", "class", "a b", "x;y", "z{",
		"exit", "EINVAL", "UINT32_MAX", "FILE", "stdout", "timespec"}
	if r.Intn(16) == 0 {
		return bad[r.Intn(len(bad))]
	}
	const first = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
	const rest = first + "0123456789"
	n := 1 + r.Intn(12)
	b := []byte{first[r.Intn(len(first))]}
	for len(b) < n {
		b = append(b, rest[r.Intn(len(rest))])
	}
	return string(b)
}

// mutate renames a few fields, enumerators and parameters to random
// identifiers and plants hostile text, deterministically from r.
func mutate(s *spec.Spec, r *rand.Rand) {
	for k := 0; k < 4; k++ {
		switch r.Intn(3) {
		case 0:
			st := s.Structs[r.Intn(len(s.Structs))]
			if len(st.Fields) > 0 && !stubWrites(s, st) {
				st.Fields[r.Intn(len(st.Fields))].Name = randIdent(r)
			}
		case 1:
			e := &s.Enums[r.Intn(len(s.Enums))]
			if len(e.Values) > 0 && !e.Status {
				e.Values = append([]spec.EnumValue(nil), e.Values...)
				e.Values[r.Intn(len(e.Values))].Name = randIdent(r)
			}
		case 2:
			f := &s.Forward[r.Intn(len(s.Forward))]
			if len(f.Params) > 0 && !keepsParams(f) {
				f.Params = append([]spec.Param(nil), f.Params...)
				f.Params[r.Intn(len(f.Params))].Name = randIdent(r)
			}
		}
	}
	text := trickyTexts[r.Intn(len(trickyTexts))]
	if r.Intn(4) == 0 {
		text = hostileTexts[r.Intn(len(hostileTexts))]
	}
	switch r.Intn(3) {
	case 0:
		s.Structs[r.Intn(len(s.Structs))].Note = text
	case 1:
		s.Messages[r.Intn(len(s.Messages))].Where = text
	case 2:
		s.Release.LibNCCOM.Git = text
	}
}

// TestPropertyMutatedSpecs: mutations of 2.31.24 (random identifiers for
// fields, enumerators and parameters, hostile text) are written out and
// validated; for every one the validator accepts, the generated C compiles
// with -Wall -Wextra -Werror, libnrt.so.1 and the libnccom double link with
// the generated version scripts and export exactly the spec's reverse and
// forward symbols, and (every fourth) the generated Go builds and vets.
// NRTABI_PROPERTY_GEN=N runs N mutations (default 8).
func TestPropertyMutatedSpecs(t *testing.T) {
	needCC(t)
	n := 8
	if v := os.Getenv("NRTABI_PROPERTY_GEN"); v != "" {
		fmt.Sscan(v, &n)
	}
	r := rand.New(rand.NewSource(22))
	accepted, refused := 0, 0
	for i := 0; i < n; i++ {
		s := mustLoad(t, spec.Default)
		mutate(s, r)
		v, err := reload(s)
		if err != nil {
			refused++
			if strings.Contains(err.Error(), "\n") && !strings.Contains(err.Error(), "mutated/") {
				t.Fatalf("mutation %d: an error without a position: %v", i, err)
			}
			continue
		}
		accepted++
		dir := writeRelease(t, v)
		if err := compileC(dir); err != nil {
			t.Fatalf("mutation %d validates but its C does not compile: %v", i, err)
		}
		nrt := buildMinimalLibnrt(t, v, dir)
		syms, _ := definedDynamic(t, nrt)
		want := map[string]bool{}
		for _, rv := range v.Reverse {
			want[rv.Name] = true
		}
		for _, node := range v.VersionNodes {
			if !node.Base {
				want[node.Name] = true // ld defines each version node as an absolute symbol
			}
		}
		if got := keys(syms); !equalSet(got, want) {
			t.Fatalf("mutation %d: libnrt.so.1 exports %v, the spec names %v", i, got, keys2(want))
		}
		c := filepath.Join(dir, "c")
		if err := cc.Shared(dir, "libnccom.so", v.Release.LibNCCOM.SONAME, filepath.Join(c, LibnccomMap),
			[]string{filepath.Join(c, StubSource)}, "-I"+c, "-L"+dir, "-l:libnrt.so.1"); err != nil {
			t.Fatalf("mutation %d: the libnccom double does not link: %v", i, err)
		}
		syms, _ = definedDynamic(t, filepath.Join(dir, "libnccom.so"))
		want = map[string]bool{}
		for _, fw := range v.Forward {
			want[fw.Name] = true
		}
		if got := keys(syms); !equalSet(got, want) {
			t.Fatalf("mutation %d: libnccom.so exports %v, the spec names %v", i, got, keys2(want))
		}
		if i%4 == 0 && !testing.Short() {
			if out, err := buildGo(dir); err != nil {
				t.Fatalf("mutation %d: the generated Go does not build: %v\n%s", i, err, out)
			}
			vet := exec.Command("go", "vet", ".")
			vet.Dir = filepath.Join(dir, GoPackage)
			vet.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
			if out, err := vet.CombinedOutput(); err != nil {
				t.Fatalf("mutation %d: go vet of the generated Go: %v\n%s", i, err, out)
			}
		}
	}
	t.Logf("%d mutations: %d validated and held, %d refused by the validator", n, accepted, refused)
	if accepted == 0 {
		t.Fatal("no mutation validated: the property was never checked")
	}
}

func keys(m map[string]elf.Symbol) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func keys2(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func equalSet(got []string, want map[string]bool) bool {
	if len(got) != len(want) {
		return false
	}
	for _, g := range got {
		if !want[g] {
			return false
		}
	}
	return true
}

// FuzzGenerate: the input is planted as free text in the rows of the small
// release (gen/testdata/spec; 2.31.24 is too slow to load per input under
// coverage) and as the name of one struct field; when the validator
// accepts the result, generation succeeds and the code it writes (outside
// comments and literals) names only what the clean spec's output names and
// the input.
func FuzzGenerate(f *testing.F) {
	for _, s := range append(hostileTexts, trickyTexts...) {
		f.Add(s)
	}
	for _, s := range []string{"plain_name", "int", "x y", "NRT_2.0.0", "a\x00b", "_Bool", "sizeof", "MarshalTo", "marshal_to"} {
		f.Add(s)
	}
	clean, err := spec.LoadDir(miniDir)
	if err != nil {
		f.Fatal(err)
	}
	base, err := generatedIdents(f, clean, false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("%q: validating and generating took %v", in, d)
			}
		}()
		s := loadMini(t)
		var st *spec.Struct
		for _, c := range s.Structs {
			if len(c.Fields) > 0 && !stubWrites(s, c) {
				st = c
			}
		}
		st.Note, st.Source = in, in
		st.Fields[len(st.Fields)-1].Name = in
		if len(s.Messages) > 0 {
			s.Messages[0].Where = in
		}
		s.SlotTable.Sentinel = in
		v, err := reload(s)
		if err != nil {
			return
		}
		ids, err := generatedIdents(t, v, false)
		if err != nil {
			t.Fatalf("%q validates but does not generate: %v", in, err)
		}
		for id := range ids {
			// The field's Go name and its accessors (stable.go) are the
			// identifiers a field name may add.
			if g := GoName(in); !base[id] && id != in && id != g && id != "Get"+g && id != "Set"+g {
				t.Errorf("%q: the generated code holds the identifier %s", in, id)
			}
		}
	})
}

// TestGoScopeNamesKnown: every package-level name of the generated Go is
// either one the validator knows the generator declares itself
// (spec.GoFixedNames) or one it derives from a spec name and checks for
// clashes (rule name): a new generated declaration must join the list.
func TestGoScopeNamesKnown(t *testing.T) {
	s := mustLoad(t, spec.Default)
	files, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, n := range spec.GoFixedNames() {
		known[n] = true
	}
	for _, st := range s.Structs {
		known[GoName(st.Name)], known["Sizeof"+GoName(st.Name)] = true, true
		if st.Side == "wire" {
			known["TestWire"+GoName(st.Name)] = true
		}
	}
	for _, e := range s.Enums {
		known[GoName(e.Name)] = true
		for _, v := range e.Values {
			known[GoName(v.Name)] = true
		}
	}
	for _, k := range s.Constants {
		known[GoName(k.Name)] = true
	}
	for _, m := range s.Messages {
		known["Msg"+GoName(m.ID)] = true
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Data, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			var names []string
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						names = append(names, sp.Name.Name)
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							names = append(names, n.Name)
						}
					}
				}
			}
			for _, n := range names {
				if n != "_" && !known[n] {
					t.Errorf("%s declares %s, which spec.GoFixedNames does not list", f.Path, n)
				}
			}
		}
	}
}
