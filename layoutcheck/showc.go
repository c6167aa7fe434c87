package layoutcheck

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
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
	l, err := dbg.Types().Struct(found[0].Offset)
	if err != nil {
		return elfread.InputErrorf(dbg.Path(), "%s: %w", name, err)
	}
	if l.Incomplete() {
		return elfread.InputErrorf(dbg.Path(), "%s: %s %s has no size in this DWARF (a declaration); show --c needs its definition", name, l.Kind, l.Name)
	}
	c := &cEmitter{state: map[*typemodel.Type]int{}, tags: map[string]string{}, tagOf: map[*typemodel.Type]string{},
		typedefs: map[string]bool{}, declared: map[string]bool{}, inlining: map[*typemodel.Type]bool{}, enumerators: map[string]bool{}}
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
		if l.Kind == typemodel.Union {
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
	for i := range l.Fields {
		m := &l.Fields[i]
		if m.Base || m.BitSize > 0 || m.Virtual || m.Name == "" {
			continue
		}
		mn := cIdent(m.Name)
		fmt.Fprintf(w, "_Static_assert(__builtin_offsetof(%s, %s) == %d, \"%s.%s: offset\");\n", top, mn, m.Offset, cString(name), cString(m.Name))
		if s := typemodel.Strip(m.Type); s != nil && s.Kind == typemodel.Array && m.Size() == 0 {
			continue
		}
		fmt.Fprintf(w, "_Static_assert(sizeof(((%s *)0)->%s) == %d, \"%s.%s: size\");\n", top, mn, m.Size(), cString(name), cString(m.Name))
	}
	return nil
}

// cEmitter collects the declarations a struct needs, definitions first.
type cEmitter struct {
	forward     []string        // "struct tag" declared ahead
	declared    map[string]bool // the tags in forward
	inlining    map[*typemodel.Type]bool
	defs        []string                // typedefs and definitions, in dependency order
	state       map[*typemodel.Type]int // 1 while being defined, 2 once defined
	tags        map[string]string       // DWARF name -> C tag
	tagOf       map[*typemodel.Type]string
	typedefs    map[string]bool
	enumerators map[string]bool
	depth       int
	err         error
}

// maxCDepth bounds the types show --c follows by value (real structs nest a
// few levels; corrupted DWARF could loop).
const maxCDepth = 256

func cKind(k typemodel.Kind) string {
	if k == typemodel.Union {
		return "union"
	}
	return "struct"
}

func (c *cEmitter) tagName(t *typemodel.Type, name string) string {
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
func (c *cEmitter) spell(t *typemodel.Type, name string) string {
	return typemodel.DeclWith(t, name, typemodel.SpellOptions{Base: c.baseHook, StrictC: true})
}

func (c *cEmitter) baseHook(t *typemodel.Type) string {
	if t == nil {
		return "void"
	}
	switch t.Kind {
	case typemodel.Void, typemodel.Unspecified:
		return "void"
	case typemodel.Typedef:
		return cIdent(t.Name)
	case typemodel.Struct, typemodel.Class, typemodel.Union:
		if t.Name == "" {
			return c.inlineBody(t)
		}
		return cKind(t.Kind) + " " + c.tagName(t, t.Name)
	case typemodel.Enum:
		if s, ok := c.tagOf[t]; ok {
			return s
		}
		return intOfSize(typemodel.SizeOf(t), false)
	case typemodel.Base:
		if s := cBaseName(t); s != "" {
			return s
		}
	}
	if c.err == nil {
		c.err = fmt.Errorf("show --c cannot spell %s in C", typemodel.Spell(t))
	}
	return "void"
}

func (c *cEmitter) inlineBody(st *typemodel.Type) string {
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
	body, err := c.body(st, -1)
	if err != nil && c.err == nil {
		c.err = err
	}
	return cKind(st.Kind) + " { " + body + "}" + c.structAttrs(st)
}

// need makes the declarations t depends on come first: complete when used
// by value (a struct member, an array element), declared when behind a
// pointer.
func (c *cEmitter) need(t *typemodel.Type, complete bool) {
	if c.depth > maxCDepth {
		if c.err == nil {
			c.err = fmt.Errorf("types nest more than %d deep", maxCDepth)
		}
		return
	}
	if t == nil {
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	switch t.Kind {
	case typemodel.Const, typemodel.Volatile, typemodel.Restrict, typemodel.Atomic:
		c.need(t.Elem, complete)
	case typemodel.Pointer, typemodel.Reference, typemodel.RvalueReference:
		c.need(t.Elem, false)
	case typemodel.Array:
		c.need(t.Elem, true)
	case typemodel.Func:
		c.need(t.Elem, false)
		for _, p := range t.Params {
			c.need(p, false)
		}
	case typemodel.Typedef:
		c.need(t.Elem, complete)
		n := cIdent(t.Name)
		if !c.typedefs[n] {
			c.typedefs[n] = true
			c.defs = append(c.defs, "typedef "+c.spell(t.Elem, n)+";")
		}
	case typemodel.Enum:
		c.enum(t)
	case typemodel.Struct, typemodel.Class, typemodel.Union:
		if t.Name == "" {
			// Spelled inline wherever used: its members come first.
			if c.state[t] == 0 {
				c.state[t] = 1
				for i := range t.Fields {
					c.need(t.Fields[i].Type, true)
				}
				c.state[t] = 2
			}
			return
		}
		tag := cKind(t.Kind) + " " + c.tagName(t, t.Name)
		if !complete {
			if c.state[t] == 0 && !c.declared[tag] {
				c.declared[tag] = true
				c.forward = append(c.forward, tag)
			}
			return
		}
		if c.state[t] != 0 {
			return
		}
		c.state[t] = 1
		if t.Incomplete() {
			if c.err == nil {
				c.err = fmt.Errorf("%s is used by value but only declared in this DWARF", tag)
			}
			return
		}
		body, err := c.body(t, 1)
		if err != nil && c.err == nil {
			c.err = err
		}
		c.defs = append(c.defs, fmt.Sprintf("%s {\n%s}%s;\n", tag, body, c.structAttrs(t)))
		c.state[t] = 2
	}
}

// enum defines a 4-byte enum whose enumerators are new C identifiers;
// any other is spelled as the integer of its size.
func (c *cEmitter) enum(e *typemodel.Type) {
	if _, ok := c.tagOf[e]; ok || typemodel.SizeOf(e) != 4 || len(e.Enumerators) == 0 {
		return
	}
	for _, v := range e.Enumerators {
		if c.enumerators[v.Name] || !spec.IsIdent(v.Name) || cReserved()[v.Name] || v.Value < -1<<31 || v.Value > 1<<32-1 {
			return
		}
	}
	var vals []string
	for _, v := range e.Enumerators {
		c.enumerators[v.Name] = true
		vals = append(vals, fmt.Sprintf("%s = %d", v.Name, v.Value))
	}
	if e.Name == "" {
		c.tagOf[e] = "enum { " + strings.Join(vals, ", ") + " }"
		return
	}
	tag := "enum " + cIdent(e.Name)
	c.tagOf[e] = tag
	c.defs = append(c.defs, fmt.Sprintf("%s { %s };\n", tag, strings.Join(vals, ", ")))
}

// packedLayout: a member off its natural alignment, or a size that is no
// multiple of the alignment, means the struct was packed.
func packedLayout(l *typemodel.Type) bool {
	for i := range l.Fields {
		m := &l.Fields[i]
		if !m.Virtual && m.BitSize == 0 && m.Size() > 0 && m.Offset%typemodel.AlignOf(m.Type) != 0 {
			return true
		}
	}
	a := typemodel.StructAlign(l)
	return a > 1 && l.Size%a != 0
}

func (c *cEmitter) structAttrs(l *typemodel.Type) string {
	if packedLayout(l) {
		return " __attribute__((packed))"
	}
	natural := int64(1)
	for i := range l.Fields {
		if !l.Fields[i].Virtual {
			natural = max(natural, typemodel.AlignOf(l.Fields[i].Type))
		}
	}
	if a := typemodel.StructAlign(l); a > natural {
		return fmt.Sprintf(" __attribute__((aligned(%d)))", a)
	}
	return ""
}

// body writes the members of l, one per line at indent tabs (indent < 0:
// on one line), with the padding the DWARF shows and C would not add by
// itself: gaps before a bitfield (unnamed bitfields), gaps before a member
// beyond its alignment, and tail bytes.
func (c *cEmitter) body(l *typemodel.Type, indent int) (string, error) {
	var b strings.Builder
	line := func(s string) {
		if indent < 0 {
			b.WriteString(s + " ")
			return
		}
		b.WriteString(strings.Repeat("\t", indent) + s + "\n")
	}
	for i := range l.Fields {
		c.need(l.Fields[i].Type, true)
	}
	packed := packedLayout(l)
	var endBits int64
	pad, written := 0, 0
	for i := range l.Fields {
		m := &l.Fields[i]
		if m.Virtual || m.Base && typemodel.EmptyClass(m.Type) {
			continue
		}
		name := cIdent(m.Name)
		if m.Name == "" && !m.Base {
			name = ""
		}
		if m.Base {
			name = fmt.Sprintf("nrtabi_base_%s", cIdent(m.Name))
		}
		if l.Kind != typemodel.Union {
			start := m.Offset * 8
			if m.BitSize > 0 {
				start = m.BitOffset
			}
			if start < endBits {
				// C++ puts a derived class's members in its base's tail
				// padding; C has no way to say that.
				if c.err == nil {
					c.err = fmt.Errorf("%s %s: member %s at byte %d lies inside the member before it (C++ tail-padding reuse); C cannot lay it out", l.Kind, l.Name, m.Label(), m.Offset)
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
				if a := typemodel.AlignOf(m.Type); !packed && a > 1 {
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
		if l.Kind != typemodel.Union {
			if m.BitSize > 0 {
				endBits = m.BitOffset + m.BitSize
			} else {
				endBits = (m.Offset + m.Size()) * 8
			}
		}
	}
	// Tail bytes C would not add (a size beyond the aligned end).
	end := (endBits + 7) / 8
	if l.Kind == typemodel.Union {
		end = 0
		for i := range l.Fields {
			end = max(end, l.Fields[i].End())
		}
	}
	natural := end
	if !packed {
		a := typemodel.StructAlign(l)
		natural = (end + a - 1) / a * a
	}
	switch {
	case written == 0 && l.Size > 0:
		// A C++ class without data members still takes its byte(s).
		line(fmt.Sprintf("unsigned char nrtabi_empty[%d];", l.Size))
	case l.Kind == typemodel.Union && l.Size > natural:
		line(fmt.Sprintf("unsigned char nrtabi_tail[%d];", l.Size))
	case l.Size > natural:
		line(fmt.Sprintf("unsigned char nrtabi_tail[%d];", l.Size-end))
	}
	return b.String(), c.err
}
