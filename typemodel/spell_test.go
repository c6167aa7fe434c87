package typemodel

import (
	"strings"
	"testing"
)

var (
	tInt   = &Type{Kind: Base, Name: "int", Size: 4, HasSize: true, Encoding: EncSigned}
	tChar  = &Type{Kind: Base, Name: "char", Size: 1, HasSize: true, Encoding: EncSignedChar}
	tVoid  = &Type{Kind: Void, Name: "void"}
	tFile  = &Type{Kind: Struct, Name: "_IO_FILE", Size: 216, HasSize: true}
	tFILE  = &Type{Kind: Typedef, Name: "FILE", Elem: tFile}
	tCChar = &Type{Kind: Const, Elem: tChar}
)

func ptr(t *Type) *Type { return &Type{Kind: Pointer, Size: 8, HasSize: true, Elem: t} }
func arr(n int64, t *Type) *Type {
	return &Type{Kind: Array, Count: n, Elem: t}
}

// TestSpell: the one spelling, as C and gdb write each declarator.
func TestSpell(t *testing.T) {
	fn := &Type{Kind: Func, Elem: tVoid, Params: []*Type{tInt}, Variadic: true, Prototyped: true}
	cases := []struct {
		t    *Type
		name string
		want string
	}{
		{ptr(tCChar), "", "const char *"},
		{ptr(tFILE), "", "FILE *"},
		{ptr(tVoid), "", "void *"},
		{ptr(nil), "", "void *"},
		{ptr(arr(7, tInt)), "", "int (*)[7]"},
		{ptr(fn), "", "void (*)(int, ...)"},
		{arr(16, tChar), "", "char [16]"},
		{arr(2, arr(3, tChar)), "m", "char m[2][3]"},
		{arr(-1, tChar), "t", "char t[]"},
		{&Type{Kind: Const, Elem: ptr(tChar)}, "q", "char *const q"},
		{arr(10, ptr(arr(4, ptr(tInt)))), "d", "int *(*d[10])[4]"},
		{&Type{Kind: Volatile, Elem: arr(7, tInt)}, "a", "volatile int a[7]"},
		{ptr(&Type{Kind: Func, Elem: tInt}), "F", "int (*F)(void)"},
		{&Type{Kind: Reference, Elem: tInt}, "r", "int &r"},
		{&Type{Kind: PtrToMember, Elem: tInt, Class: &Type{Kind: Struct, Name: "app::point"}}, "pm", "int app::point::*pm"},
		{&Type{Kind: Struct}, "s", "struct {...} s"},
		// A member function's this is not spelled; a plain function's
		// first parameter of the same type is.
		{&Type{Kind: PtrToMember, Elem: &Type{Kind: Func, Elem: tVoid, Params: []*Type{ptr(&Type{Kind: Struct, Name: "app::point"}), tInt}, ObjectParam: true},
			Class: &Type{Kind: Struct, Name: "app::point"}}, "mfp", "void (app::point::*mfp)(int)"},
		{ptr(&Type{Kind: Func, Elem: tVoid, Params: []*Type{ptr(&Type{Kind: Struct, Name: "app::point"}), tInt}}), "f", "void (*f)(struct app::point *, int)"},
		{&Type{Kind: Atomic, Elem: tInt}, "", "_Atomic int"},
	}
	for _, c := range cases {
		if got := Decl(c.t, c.name); got != c.want {
			t.Errorf("Decl(%q) = %q, want %q", c.want, got, c.name)
		}
	}
	strict := DeclWith(ptr(&Type{Kind: Func, Elem: tInt, Variadic: true}), "f", SpellOptions{StrictC: true})
	if strict != "int (*f)()" {
		t.Errorf("strict C vtable slot: %q", strict)
	}
	base := DeclWith(ptr(tFILE), "p", SpellOptions{Base: func(t *Type) string {
		if t.Kind == Typedef {
			return "my_" + t.Name
		}
		return ""
	}})
	if base != "my_FILE *p" {
		t.Errorf("base hook: %q", base)
	}
}

// TestSpellCatchesAPlantedFault: a spelling that drops the space before
// '*' (the "FILE*" extract once wrote) is not the one spelling.
func TestSpellCatchesAPlantedFault(t *testing.T) {
	planted := strings.ReplaceAll(Spell(ptr(tFILE)), " *", "*")
	if planted == Spell(ptr(tFILE)) {
		t.Fatal("the planted spelling equals the real one")
	}
}

// TestWalksEnd: a struct holding a pointer to itself, a typedef loop and
// a pointer loop (crafted) end every walk.
func TestWalksEnd(t *testing.T) {
	self := &Type{Kind: Struct, Name: "node", Size: 16, HasSize: true}
	self.Fields = []Field{{Name: "next", Type: ptr(self)}, {Name: "v", Type: tInt, Offset: 8}}
	td := &Type{Kind: Typedef, Name: "a"}
	td.Elem = &Type{Kind: Typedef, Name: "b", Elem: td}
	loop := &Type{Kind: Pointer}
	loop.Elem = loop
	box := &Type{Kind: Struct, Name: "box", Size: 8, HasSize: true}
	box.Fields = []Field{{Name: "b", Type: box}}
	for _, x := range []*Type{self, td, loop, box, arr(3, td)} {
		if s := Decl(x, "x"); len(s) > 4096 {
			t.Errorf("spelled in %d bytes", len(s))
		}
		SizeOf(x)
		AlignOf(x)
		Strip(x)
		Typedefs(x)
		EmptyClass(x)
	}
	if got := AlignOf(self); got != 8 {
		t.Errorf("align of node: %d", got)
	}
	if got := SizeOf(arr(3, td)); got != 0 {
		t.Errorf("a typedef loop has size %d", got)
	}
}

// TestSizes: arrays multiply, saturating; complex types align as their
// part; a flexible array is 0 bytes.
func TestSizes(t *testing.T) {
	if got := SizeOf(arr(2, arr(3, tInt))); got != 24 {
		t.Errorf("int [2][3]: %d", got)
	}
	if got := SizeOf(arr(1<<40, arr(1<<40, tInt))); got != MaxSize {
		t.Errorf("huge array: %d, want %d", got, int64(MaxSize))
	}
	if got := SizeOf(arr(-1, tInt)); got != 0 {
		t.Errorf("flexible: %d", got)
	}
	// A C function type has no size; a Go func value states 8.
	if got := SizeOf(&Type{Kind: Func, Elem: tInt}); got != 0 {
		t.Errorf("C function type: %d", got)
	}
	if got := SizeOf(arr(2, &Type{Kind: Func, Size: 8, HasSize: true})); got != 16 {
		t.Errorf("two Go func values: %d", got)
	}
	cd := &Type{Kind: Base, Name: "complex double", Size: 16, HasSize: true, Encoding: EncComplexFloat}
	if got := AlignOf(cd); got != 8 {
		t.Errorf("_Complex double aligns to %d", got)
	}
	if got := AlignOf(&Type{Kind: Base, Name: "long double", Size: 16, HasSize: true, Encoding: EncFloat}); got != 16 {
		t.Errorf("long double aligns to %d", got)
	}
	if got := SatAdd(MaxSize, MaxSize); got != MaxSize {
		t.Errorf("SatAdd: %d", got)
	}
	bits := Field{Type: tInt, BitOffset: 35, BitSize: 3, Offset: 4}
	if bits.End() != 5 || bits.Start() != 4 {
		t.Errorf("bitfield: start %d end %d", bits.Start(), bits.End())
	}
	if got := (&Field{Base: true, Name: "std::allocator<char>"}).Label(); got != "<base std::allocator<char>>" {
		t.Errorf("label %q", got)
	}
}
