package typemodel

import "strconv"

// Kind is what a Type is.
type Kind uint8

// The kinds of types, one per DWARF type tag the checkers read.
const (
	Invalid         Kind = iota
	Void                 // void: a pointer or typedef without DW_AT_type, a function returning nothing
	Base                 // a base type: Encoding and Size say which
	Enum                 // Enumerators, Elem the underlying type (nil when the DWARF names none)
	Struct               // Fields
	Class                // Fields
	Union                // Fields
	Pointer              // Elem the pointee (a Void node for void *)
	Reference            // C++ T&
	RvalueReference      // C++ T&&
	PtrToMember          // Elem the member's type, Class the class
	Array                // Elem the element, Count the length (-1: flexible or unknown)
	Func                 // Elem the return type, Params, Variadic
	Typedef              // Name, Elem the type it names
	Const                // Elem the qualified type
	Volatile
	Restrict
	Atomic
	Unspecified // DW_TAG_unspecified_type (decltype(nullptr)): Name only
)

var kindWords = [...]string{
	Invalid: "invalid", Void: "void", Base: "base", Enum: "enum", Struct: "struct", Class: "class", Union: "union",
	Pointer: "pointer", Reference: "reference", RvalueReference: "rvalue reference", PtrToMember: "pointer to member",
	Array: "array", Func: "function", Typedef: "typedef", Const: "const", Volatile: "volatile", Restrict: "restrict",
	Atomic: "_Atomic", Unspecified: "unspecified",
}

// String is the kind's word: "struct", "pointer", "const".
func (k Kind) String() string {
	if int(k) < len(kindWords) {
		return kindWords[k]
	}
	return "invalid"
}

// Aggregate: a struct, class or union.
func (k Kind) Aggregate() bool { return k == Struct || k == Class || k == Union }

// Qualifier: const, volatile, restrict or _Atomic.
func (k Kind) Qualifier() bool { return k == Const || k == Volatile || k == Restrict || k == Atomic }

// Encoding is a base type's DW_AT_encoding (DWARF 5, §7.8).
type Encoding uint8

// The base type encodings.
const (
	EncAddress      Encoding = 0x01
	EncBoolean      Encoding = 0x02
	EncComplexFloat Encoding = 0x03
	EncFloat        Encoding = 0x04
	EncSigned       Encoding = 0x05
	EncSignedChar   Encoding = 0x06
	EncUnsigned     Encoding = 0x07
	EncUnsignedChar Encoding = 0x08
	EncImaginary    Encoding = 0x09
	EncPackedDec    Encoding = 0x0a
	EncNumericStr   Encoding = 0x0b
	EncEdited       Encoding = 0x0c
	EncSignedFixed  Encoding = 0x0d
	EncUnsignedFix  Encoding = 0x0e
	EncDecimalFloat Encoding = 0x0f
	EncUTF          Encoding = 0x10
)

// Signed: an integer encoding with a sign (signed, signed char).
func (e Encoding) Signed() bool { return e == EncSigned || e == EncSignedChar || e == EncSignedFixed }

// Integer: an integer or character encoding (booleans and addresses not
// included).
func (e Encoding) Integer() bool {
	switch e {
	case EncSigned, EncSignedChar, EncUnsigned, EncUnsignedChar, EncUTF:
		return true
	}
	return false
}

// Type is one node of the graph. Which fields mean something depends on
// Kind (see there); the rest are zero. A front end makes one node per DIE
// and one node for every equal non-aggregate type (int, const char *), so
// two *Type of those are equal exactly when the pointers are.
type Type struct {
	// The one-byte fields lie together, in one word of the node (a
	// library's graph has hundreds of thousands of nodes).
	Kind Kind
	// HasSize: the DIE states Size.
	HasSize bool
	// Declaration: the DIE only declares the type (DW_AT_declaration), an
	// incomplete type whose body is elsewhere or nowhere.
	Declaration bool
	Encoding    Encoding
	Variadic    bool // the parameter list ends in "..."
	Prototyped  bool // DW_AT_prototyped: "(void)" and not "()" when Params is empty
	// ObjectParam: Params[0] is the object parameter the compiler adds to
	// a member function (DW_AT_artificial: this), which C++ does not
	// spell in the function's type.
	ObjectParam bool
	// Name is the qualified name of a named type (a struct's tag
	// "std::string", a typedef's "FILE", a base type's "unsigned int"),
	// "" for an anonymous one and for the derived kinds.
	Name string
	// Size is the byte size the DIE states (DW_AT_byte_size), when
	// HasSize; SizeOf computes what it leaves out (arrays, typedefs,
	// qualifiers).
	Size int64
	// Align is DW_AT_alignment (0 when absent); AlignOf computes the
	// natural alignment.
	Align int64
	// Elem is the type this one is made from: the pointee, the element,
	// the return type, the named type of a typedef, the qualified type,
	// an enum's underlying type. nil only where Kind says "none".
	Elem *Type
	// Class is the class of a pointer to member.
	Class *Type
	// Count is an array's length; -1 for a flexible array member or an
	// unknown bound.
	Count       int64
	Fields      []Field
	Enumerators []Enumerator
	Params      []*Type
	// Offset is the DIE's offset in the front end's offset space (for
	// DWARF: the combined .debug_info offsets of a file and its parts); 0
	// for a node no DIE stands for (the inner dimensions of int [2][3]).
	Offset uint64
	// DeclFile and DeclLine are DW_AT_decl_file (an index into the unit's
	// line table file names) and DW_AT_decl_line; 0 when absent.
	DeclFile, DeclLine uint32
	// Kept is a front end's scratch while it builds the graph: the node
	// that stands for this one once equal nodes are merged (readers/elfread
	// sets it while joining its units' graphs, and clears it after); nil
	// in a built graph.
	Kept *Type
}

// Field is a data member or a base class of a struct, class or union.
type Field struct {
	Name string // a base class: the class's name
	Type *Type
	// Offset is the byte offset; for a bitfield, of the storage unit of
	// its type's size holding it.
	Offset int64
	// BitOffset is the bit offset from the start of the struct and BitSize
	// the width, for a bitfield only (BitSize 0 otherwise).
	BitOffset, BitSize int64
	Base               bool // DW_TAG_inheritance
	Virtual            bool // a virtual base: its offset is computed at run time
	Artificial         bool // DW_AT_artificial (a vtable pointer)
	DeclLine           uint32
}

// Size is the byte size of the field's type (SizeOf).
func (f *Field) Size() int64 { return SizeOf(f.Type) }

// End is one past the field's last byte (saturating).
func (f *Field) End() int64 {
	if f.BitSize > 0 {
		return SatAdd(f.BitOffset, f.BitSize+7) / 8
	}
	return SatAdd(f.Offset, f.Size())
}

// Start is the field's first byte (a bitfield's, not its storage unit's).
func (f *Field) Start() int64 {
	if f.BitSize > 0 {
		return f.BitOffset / 8
	}
	return f.Offset
}

// Enumerator is one name of an enum.
type Enumerator struct {
	Name  string
	Value int64 // the value's bits; Unsigned says how to read them
	// Unsigned: the DWARF gave the value in an unsigned form (a value
	// above the int64 range reads back as its uint64).
	Unsigned bool
}

// KindWord is "struct", "class", "union" or "enum" for those kinds.
func (t *Type) KindWord() string { return t.Kind.String() }

// Incomplete: a struct, class, union or enum without a body here (a
// declaration, or no size).
func (t *Type) Incomplete() bool {
	return t.Declaration || !t.HasSize
}

// Label names a field in messages: its name, "<base NAME>" for a base
// class, "<anonymous@OFFSET>" for an unnamed member.
func (f *Field) Label() string {
	switch {
	case f.Base:
		return "<base " + f.Name + ">"
	case f.Name == "":
		return "<anonymous@" + strconv.FormatInt(f.Offset, 10) + ">"
	}
	return f.Name
}
