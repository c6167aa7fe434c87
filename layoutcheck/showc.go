package layoutcheck

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
)

// showC writes the struct named name, and every type it needs, as C that
// compiles (gcc, C11 with GNU attributes), followed by _Static_asserts of
// the struct's size and of each member's offset and size as the DWARF has
// them: compiling the output proves the C lays out as the binary does.
// Types reached through pointers are declared, not defined; C++ and Rust
// names become C identifiers; bitfield gaps, explicit padding and packing
// are written out.
func showC(dbg *elfread.Debug, path, name string, w io.Writer) error {
	found, err := dbg.FindStructs([][]string{{name}})
	if err != nil {
		return err
	}
	if found[0] == nil {
		return elfread.InputErrorf(labelOf(path), "no struct %s in the DWARF of %s", name, labelOf(dbg.Path()))
	}
	rd := dbg.NewReader()
	l, err := rd.Layout(found[0].Offset)
	if err != nil {
		return elfread.InputErrorf(dbg.Path(), "%s: %w", name, err)
	}
	if l.Declared {
		return elfread.InputErrorf(dbg.Path(), "%s: %s %s has no size in this DWARF (a declaration); show --c needs its definition", name, l.Kind, l.Name)
	}
	c := &cEmitter{rd: rd, state: map[godwarf.Type]int{}, tags: map[string]string{}, tagOf: map[godwarf.Type]string{},
		typedefs: map[string]bool{}, declared: map[string]bool{}, inlining: map[*godwarf.StructType]bool{}, enumerators: map[string]bool{}, layouts: map[godwarf.Type]*elfread.Layout{}}
	var top string
	var text string
	if l.Name == "" {
		top = cIdent(name)
		body, err := c.body(l, 1)
		if err != nil {
			return elfread.InputErrorf(dbg.Path(), "%s: %w", name, err)
		}
		text = fmt.Sprintf("typedef %s {\n%s} %s%s;\n", cKind(l.Kind), body, c.structAttrs(l), top)
	} else {
		top = "struct " + c.tagName(nil, l.Name)
		body, err := c.body(l, 1)
		if err != nil {
			return elfread.InputErrorf(dbg.Path(), "%s: %w", name, err)
		}
		text = fmt.Sprintf("%s {\n%s}%s;\n", cKind(l.Kind)+" "+c.tagName(nil, l.Name), body, c.structAttrs(l))
		if l.Kind == "union" {
			top = "union " + c.tagName(nil, l.Name)
		}
	}
	if c.err != nil {
		return elfread.InputErrorf(dbg.Path(), "%s: %w", name, c.err)
	}
	// Names and paths from outside reach the C only as comment text
	// (cComment), string-literal bodies (cString) or identifiers (cIdent).
	fmt.Fprintf(w, "/* %s: %s in %s (%s DWARF, DIE %#x), as C: nrtabi show --c */\n", cComment(name), cComment(found[0].Via), cComment(labelOf(found[0].File)), cComment(found[0].From), found[0].DIE)
	if len(c.forward) > 0 {
		sort.Strings(c.forward)
		for _, f := range c.forward {
			fmt.Fprintf(w, "%s;\n", f)
		}
		fmt.Fprintln(w)
	}
	for _, d := range c.defs {
		fmt.Fprintf(w, "%s\n", d)
	}
	fmt.Fprint(w, text)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "_Static_assert(sizeof(%s) == %d, \"%s: size\");\n", top, l.Size, cString(name))
	for _, m := range l.Members {
		if m.Base || m.BitSize > 0 || m.Virtual || m.Name == "" {
			continue
		}
		mn := cIdent(m.Name)
		fmt.Fprintf(w, "_Static_assert(__builtin_offsetof(%s, %s) == %d, \"%s.%s: offset\");\n", top, mn, m.Offset, cString(name), cString(m.Name))
		if _, flex := elfread.Strip(m.Type).(*godwarf.ArrayType); flex && m.Size == 0 {
			continue
		}
		fmt.Fprintf(w, "_Static_assert(sizeof(((%s *)0)->%s) == %d, \"%s.%s: size\");\n", top, mn, m.Size, cString(name), cString(m.Name))
	}
	return nil
}

// cEmitter collects the declarations a struct needs, definitions first.
type cEmitter struct {
	rd          *elfread.Reader
	forward     []string        // "struct tag" declared ahead
	declared    map[string]bool // the tags in forward
	inlining    map[*godwarf.StructType]bool
	defs        []string             // typedefs and definitions, in dependency order
	state       map[godwarf.Type]int // 1 while being defined, 2 once defined
	tags        map[string]string    // DWARF name -> C tag
	tagOf       map[godwarf.Type]string
	typedefs    map[string]bool
	enumerators map[string]bool
	layouts     map[godwarf.Type]*elfread.Layout
	depth       int
	err         error
}

// maxCDepth bounds the types show --c follows by value (real structs nest a
// few levels; corrupted DWARF could loop).
const maxCDepth = 256

func cKind(k string) string {
	if k == "union" {
		return "union"
	}
	return "struct"
}

func (c *cEmitter) tagName(t godwarf.Type, name string) string {
	if t != nil {
		if s, ok := c.tagOf[t]; ok {
			return s
		}
	}
	s, ok := c.tags[name]
	if !ok {
		s = cIdent(name)
		c.tags[name] = s
	}
	if t != nil {
		c.tagOf[t] = s
	}
	return s
}

// spell renders a declarator whose named parts are C: tags and typedefs
// made identifiers, anonymous bodies inline, enums of other sizes as the
// integer of that size.
func (c *cEmitter) spell(t godwarf.Type, name string) string {
	return elfread.CDeclC(t, name, c.baseHook)
}

func (c *cEmitter) baseHook(t godwarf.Type) string {
	switch x := t.(type) {
	case nil, *godwarf.VoidType:
		return "void"
	case *godwarf.TypedefType:
		return cIdent(x.Name)
	case *godwarf.StructType:
		if x.StructName == "" {
			return c.inlineBody(x)
		}
		return cKind(x.Kind) + " " + c.tagName(x, x.StructName)
	case *godwarf.EnumType:
		if s, ok := c.tagOf[x]; ok {
			return s
		}
		return intOfSize(x.Size(), false)
	case *godwarf.UnspecifiedType, *godwarf.DotDotDotType:
		return "void"
	case *godwarf.BoolType, *godwarf.FloatType, *godwarf.ComplexType, *godwarf.IntType, *godwarf.UintType,
		*godwarf.CharType, *godwarf.UcharType, *godwarf.AddrType:
		if s := cBaseName(t); s != "" {
			return s
		}
	}
	if c.err == nil {
		c.err = fmt.Errorf("show --c cannot spell %s in C", elfread.TypeName(t))
	}
	return "void"
}

func (c *cEmitter) layoutOf(st *godwarf.StructType) (*elfread.Layout, error) {
	if l, ok := c.layouts[st]; ok {
		return l, nil
	}
	l, err := c.rd.Layout(c.rd.GlobalOffset(st))
	if err != nil {
		return nil, err
	}
	c.layouts[st] = l
	return l, nil
}

func (c *cEmitter) inlineBody(st *godwarf.StructType) string {
	// An anonymous body is spelled where it is used; one that contains
	// itself (only corrupted DWARF can say so) has no C spelling.
	if c.inlining[st] || len(c.inlining) > maxCDepth {
		if c.err == nil {
			c.err = fmt.Errorf("an anonymous %s contains itself", st.Kind)
		}
		return cKind(st.Kind) + " {}"
	}
	c.inlining[st] = true
	defer delete(c.inlining, st)
	l, err := c.layoutOf(st)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return cKind(st.Kind) + " {}"
	}
	body, err := c.body(l, -1)
	if err != nil && c.err == nil {
		c.err = err
	}
	return cKind(st.Kind) + " { " + body + "}" + c.structAttrs(l)
}

// need makes the declarations t depends on come first: complete when used
// by value (a struct member, an array element), declared when behind a
// pointer.
func (c *cEmitter) need(t godwarf.Type, complete bool) {
	if c.depth > maxCDepth {
		if c.err == nil {
			c.err = fmt.Errorf("types nest more than %d deep", maxCDepth)
		}
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	switch x := t.(type) {
	case *godwarf.QualType:
		c.need(x.Type, complete)
	case *godwarf.PtrType:
		c.need(x.Type, false)
	case *godwarf.ArrayType:
		c.need(x.Type, true)
	case *godwarf.FuncType:
		c.need(x.ReturnType, false)
		for _, p := range x.ParamType {
			c.need(p, false)
		}
	case *godwarf.TypedefType:
		c.need(x.Type, complete)
		n := cIdent(x.Name)
		if !c.typedefs[n] {
			c.typedefs[n] = true
			c.defs = append(c.defs, "typedef "+c.spell(x.Type, n)+";")
		}
	case *godwarf.EnumType:
		c.enum(x)
	case *godwarf.StructType:
		if x.StructName == "" {
			// Spelled inline wherever used: its members come first.
			if c.state[x] == 0 {
				c.state[x] = 1
				if l, err := c.layoutOf(x); err == nil {
					for _, m := range l.Members {
						c.need(m.Type, true)
					}
				}
				c.state[x] = 2
			}
			return
		}
		tag := cKind(x.Kind) + " " + c.tagName(x, x.StructName)
		if !complete {
			if c.state[x] == 0 && !c.declared[tag] {
				c.declared[tag] = true
				c.forward = append(c.forward, tag)
			}
			return
		}
		if c.state[x] != 0 {
			return
		}
		c.state[x] = 1
		l, err := c.layoutOf(x)
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return
		}
		if l.Declared {
			if c.err == nil {
				c.err = fmt.Errorf("%s is used by value but only declared in this DWARF", tag)
			}
			return
		}
		body, err := c.body(l, 1)
		if err != nil && c.err == nil {
			c.err = err
		}
		c.defs = append(c.defs, fmt.Sprintf("%s {\n%s}%s;\n", tag, body, c.structAttrs(l)))
		c.state[x] = 2
	}
}

// enum defines a 4-byte enum whose enumerators are new C identifiers;
// any other is spelled as the integer of its size.
func (c *cEmitter) enum(e *godwarf.EnumType) {
	if _, ok := c.tagOf[e]; ok || e.Size() != 4 || len(e.Val) == 0 {
		return
	}
	for _, v := range e.Val {
		if c.enumerators[v.Name] || !spec.IsIdent(v.Name) || cReserved[v.Name] || v.Val < -1<<31 || v.Val > 1<<32-1 {
			return
		}
	}
	var vals []string
	for _, v := range e.Val {
		c.enumerators[v.Name] = true
		vals = append(vals, fmt.Sprintf("%s = %d", v.Name, v.Val))
	}
	if e.EnumName == "" {
		c.tagOf[e] = "enum { " + strings.Join(vals, ", ") + " }"
		return
	}
	tag := "enum " + cIdent(e.EnumName)
	c.tagOf[e] = tag
	c.defs = append(c.defs, fmt.Sprintf("%s { %s };\n", tag, strings.Join(vals, ", ")))
}

// packedLayout: a member off its natural alignment, or a size that is no
// multiple of the alignment, means the struct was packed.
func packedLayout(l *elfread.Layout) bool {
	for _, m := range l.Members {
		if !m.Virtual && m.BitSize == 0 && m.Size > 0 && m.Offset%elfread.TypeAlign(m.Type) != 0 {
			return true
		}
	}
	return l.Align > 1 && l.Size%l.Align != 0
}

func (c *cEmitter) structAttrs(l *elfread.Layout) string {
	if packedLayout(l) {
		return " __attribute__((packed))"
	}
	natural := int64(1)
	for _, m := range l.Members {
		if !m.Virtual {
			natural = max(natural, elfread.TypeAlign(m.Type))
		}
	}
	if l.Align > natural {
		return fmt.Sprintf(" __attribute__((aligned(%d)))", l.Align)
	}
	return ""
}

// body writes the members of l, one per line at indent tabs (indent < 0:
// on one line), with the padding the DWARF shows and C would not add by
// itself: gaps before a bitfield (unnamed bitfields), gaps before a member
// beyond its alignment, and tail bytes.
func (c *cEmitter) body(l *elfread.Layout, indent int) (string, error) {
	var b strings.Builder
	line := func(s string) {
		if indent < 0 {
			b.WriteString(s + " ")
			return
		}
		b.WriteString(strings.Repeat("\t", indent) + s + "\n")
	}
	for _, m := range l.Members {
		c.need(m.Type, true)
	}
	packed := packedLayout(l)
	var endBits int64
	pad, written := 0, 0
	for _, m := range l.Members {
		if m.Virtual || m.Base && specmatch.EmptyClass(m.Type) {
			continue
		}
		name := cIdent(m.Name)
		if m.Name == "" && !m.Base {
			name = ""
		}
		if m.Base {
			name = fmt.Sprintf("nrtabi_base_%s", cIdent(m.Name))
		}
		if l.Kind != "union" {
			start := m.Offset * 8
			if m.BitSize > 0 {
				start = m.BitOffset
			}
			if start < endBits {
				// C++ puts a derived class's members in its base's tail
				// padding; C has no way to say that.
				if c.err == nil {
					c.err = fmt.Errorf("%s %s: member %s at byte %d lies inside the member before it (C++ tail-padding reuse); C cannot lay it out", l.Kind, l.Name, specmatch.MemberLabel(m), m.Offset)
				}
				return b.String(), c.err
			}
			if m.BitSize > 0 {
				// Unnamed bitfields, none crossing a 32-bit unit, put the
				// bitfield where the DWARF has it (they add no alignment).
				for pos := endBits; pos < m.BitOffset; {
					next := min(m.BitOffset, (pos/32+1)*32)
					line(fmt.Sprintf("unsigned int : %d;", next-pos))
					pos = next
				}
			} else {
				at := (endBits + 7) / 8
				natural := at
				if a := elfread.TypeAlign(m.Type); !packed && a > 1 {
					natural = (at + a - 1) / a * a
				}
				if natural != m.Offset {
					line(fmt.Sprintf("unsigned char nrtabi_pad%d[%d];", pad, m.Offset-at))
					pad++
				}
			}
		}
		decl := c.spell(m.Type, name)
		if m.BitSize > 0 {
			decl += fmt.Sprintf(" : %d", m.BitSize)
		}
		line(decl + ";")
		written++
		if l.Kind != "union" {
			if m.BitSize > 0 {
				endBits = m.BitOffset + m.BitSize
			} else {
				endBits = (m.Offset + m.Size) * 8
			}
		}
	}
	// Tail bytes C would not add (a size beyond the aligned end).
	end := (endBits + 7) / 8
	if l.Kind == "union" {
		end = 0
		for _, m := range l.Members {
			end = max(end, m.End())
		}
	}
	natural := end
	if !packed {
		a := max(l.Align, 1)
		natural = (end + a - 1) / a * a
	}
	switch {
	case written == 0 && l.Size > 0:
		// A C++ class without data members still takes its byte(s).
		line(fmt.Sprintf("unsigned char nrtabi_empty[%d];", l.Size))
	case l.Kind == "union" && l.Size > natural:
		line(fmt.Sprintf("unsigned char nrtabi_tail[%d];", l.Size))
	case l.Size > natural:
		line(fmt.Sprintf("unsigned char nrtabi_tail[%d];", l.Size-end))
	}
	return b.String(), c.err
}
