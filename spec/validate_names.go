package spec

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// names holds every name to the grammar of each place the generator emits
// it (docs/spec-format.md#where-spec-text-is-emitted): C identifiers, GNU ld
// version nodes, file names, and the Go names derived from them.
func (c *checker) names() {
	s := c.s
	ident := func(f *Fact, key, what, name string) bool {
		if p := CNameProblem(name); p != "" {
			c.at(f, key, "name", "%s %s cannot be emitted as C: %s; rename it to a plain C identifier", what, quoteName(name), p)
			return false
		}
		return true
	}
	// A named type's C tag is checked where it is written (tag, or the
	// name it is derived from), once the name itself is an identifier.
	typeName := func(f *Fact, what, name, tag, ctag string) {
		if ident(f, "name", what, name) || tag != "" {
			key := "name"
			if tag != "" {
				key = "tag"
			}
			ident(f, key, what+" tag", ctag)
		}
	}
	if !s.IsFragment() {
		r := &s.Release
		if r.Pos.File != "" && r.Name != "" {
			if p := fileNameProblem(r.Name, false); p != "" {
				c.at(&r.Fact, "name", "name", "release name %s: %s (it names the Go build tag and the generated files)", quoteName(r.Name), p)
			}
		}
		for _, l := range r.libraries() {
			if l.lib.SONAME != "" {
				if p := fileNameProblem(l.lib.SONAME, true); p != "" {
					c.at(&l.lib.Fact, "soname", "name", "[release.%s] soname %s: %s", l.key, quoteName(l.lib.SONAME), p)
				}
			}
			if p := CommentTextProblem(l.lib.Git); p != "" {
				c.at(&l.lib.Fact, "git", "text", "[release.%s] git: %s (it is emitted into C comments and strings)", l.key, p)
			}
		}
		if p := CommentTextProblem(s.SlotTable.Sentinel); p != "" && s.SlotTable.Pos.File != "" {
			c.at(&s.SlotTable.Fact, "sentinel", "text", "[slot_table] sentinel: %s (it is emitted into a C comment)", p)
		}
		for i := range s.VersionNodes {
			n := &s.VersionNodes[i]
			if n.Name != "" && !n.Base {
				if p := VersionNodeProblem(n.Name); p != "" {
					c.at(&n.Fact, "name", "name", "version node %s cannot be written into a linker version script: %s", quoteName(n.Name), p)
				}
			}
		}
		for i := range s.Forward {
			f := &s.Forward[i]
			ident(&f.Fact, "name", "forward symbol", f.Name)
			ident(&f.Fact, "trampoline", "trampoline", f.Trampoline)
			c.params(&f.Fact, f.Name, f.Params)
		}
		for i := range s.Reverse {
			r := &s.Reverse[i]
			ident(&r.Fact, "name", "reverse symbol", r.Name)
			c.params(&r.Fact, r.Name, r.Params)
		}
		for i := range s.Constants {
			k := &s.Constants[i]
			ident(&k.Fact, "name", "constant", k.Name)
		}
		for i := range s.Messages {
			m := &s.Messages[i]
			if p := CommentTextProblem(m.Where); p != "" {
				c.at(&m.Fact, "where", "text", "message %s: where: %s (it is emitted into a Go comment)", m.ID, p)
			}
		}
	}
	for i := range s.Enums {
		e := &s.Enums[i]
		ident(&e.Fact, "name", "enum", e.Name)
		if e.Tag != "" {
			ident(&e.Fact, "tag", "enum tag", e.Tag)
		}
		for j, v := range e.Values {
			ident(&e.Fact, fmt.Sprintf("values[%d]", j), "enumerator", v.Name)
		}
		c.commentText(&e.Fact, "enum "+e.Name)
	}
	for i := range s.OpaqueTypes {
		o := &s.OpaqueTypes[i]
		typeName(&o.Fact, "opaque type", o.Name, o.Tag, o.CTag())
	}
	for _, st := range s.Structs {
		typeName(&st.Fact, "struct", st.Name, st.Tag, st.CTag())
		for j, a := range st.Aliases {
			ident(&st.Fact, fmt.Sprintf("aliases[%d]", j), "struct alias", a)
		}
		c.commentText(&st.Fact, "struct "+st.Name)
		goFields := map[string]string{}
		for j := range st.Fields {
			f := &st.Fields[j]
			if p := CMemberProblem(f.Name); p != "" {
				c.at(&f.Fact, "name", "name", "field of %s %s cannot be emitted as C: %s; rename it to a plain C identifier", st.Name, quoteName(f.Name), p)
				continue
			}
			if p := CMemberProblem(f.StableName()); p != "" {
				c.at(&f.Fact, "was", "name", "field %s.%s keeps the stable name %s, which cannot be emitted as C: %s", st.Name, f.Name, quoteName(f.StableName()), p)
				continue
			}
			// The Go field has the stable spelling in every release
			// (docs/generator.md#stable-fields).
			g := GoName(f.StableName())
			if goMethods()[g] {
				c.at(&f.Fact, "name", "name", "field %s.%s becomes the Go field %s, which is a method of the generated mirror; rename it", st.Name, f.Name, g)
			} else if other, ok := goFields[g]; ok {
				c.at(&f.Fact, "name", "name", "fields %s and %s of %s both become the Go field %s; rename one", other, f.Name, st.Name, g)
			}
			goFields[g] = f.Name
		}
		// Each integer-like field also gets Get<Field> and Set<Field>
		// accessors (gen/gostructs.go), which no field may shadow.
		for j := range st.Fields {
			f := &st.Fields[j]
			g := GoName(f.StableName())
			for _, acc := range []string{"Get" + g, "Set" + g} {
				if other, ok := goFields[acc]; ok && other != f.Name {
					c.at(&f.Fact, "name", "name", "field %s.%s's accessor %s is the Go field of %s.%s; rename one", st.Name, f.Name, acc, st.Name, other)
				}
			}
		}
	}
	c.namespaces()
}

// commentText refuses comment delimiters in a row's source and note, which
// the generator writes into C comments (the header's enum and struct
// comments).
func (c *checker) commentText(f *Fact, what string) {
	if p := CommentTextProblem(f.Source); p != "" {
		c.at(f, "source", "text", "%s: source: %s; reword it", what, p)
	}
	if p := CommentTextProblem(f.Note); p != "" {
		c.at(f, "note", "text", "%s: note: %s; reword it", what, p)
	}
}

// params checks a signature's parameter names: C identifiers, distinct,
// and not a type or other name of the spec (a parameter named like a
// typedef or a constant's macro does not compile).
func (c *checker) params(f *Fact, fn string, ps []Param) {
	seen := map[string]bool{}
	for i, p := range ps {
		key := fmt.Sprintf("params[%d]", i)
		if pr := CNameProblem(p.Name); pr != "" {
			c.at(f, key, "name", "parameter %d of %s, %s, cannot be emitted as C: %s; rename it", i+1, fn, quoteName(p.Name), pr)
			continue
		}
		if seen[p.Name] {
			c.at(f, key, "name", "%s has two parameters named %s; rename one", fn, p.Name)
		}
		seen[p.Name] = true
		if _, _, ok := Builtin(p.Name); ok {
			c.at(f, key, "name", "parameter %s of %s is a type name; rename it", p.Name, fn)
		}
		if pr := CommentTextProblem(p.Note); pr != "" {
			c.at(f, key, "text", "parameter %s of %s: note: %s", p.Name, fn, pr)
		}
	}
}

// namespaces refuses one name declared twice in a namespace the generated
// code shares: C's ordinary identifiers (typedefs, enumerators, functions,
// the constants' macros, which rewrite every use of their name), C's tags,
// the Go package scope, and parameters against all of those.
func (c *checker) namespaces() {
	s := c.s
	type decl struct {
		what string
		f    *Fact
		key  string
	}
	ordinary := map[string]decl{}
	tags := map[string]decl{}
	goScope := map[string]decl{}
	for _, n := range GoFixedNames() {
		goScope[n] = decl{what: "a name the generated Go declares itself"}
	}
	add := func(ns map[string]decl, space, name, what string, f *Fact, key string) {
		if name == "" || CNameProblem(name) != "" && space != "Go" {
			return // reported by names
		}
		if first, ok := ns[name]; ok {
			if first.f == f || space != "Go" && firstWord(first.what) == firstWord(what) {
				return // the same row, or two rows of one kind: rule unique reports those
			}
			where := ""
			if first.f != nil {
				where = " at " + c.s.PosOf(first.f, first.key).String()
			}
			c.at(f, key, "name", "%s %s clashes with %s%s in the generated %s; rename one", what, name, first.what, where, space)
			return
		}
		ns[name] = decl{what: what + " " + name, f: f, key: key}
	}
	for _, st := range s.Structs {
		add(tags, "C tags", st.CTag(), "struct tag", &st.Fact, "name")
		for _, td := range st.Typedefs() {
			add(ordinary, "C", td, "struct typedef", &st.Fact, "name")
		}
		add(goScope, "Go", GoName(st.Name), "struct "+st.Name+" as Go", &st.Fact, "name")
		add(goScope, "Go", "Sizeof"+GoName(st.Name), "struct "+st.Name+" as Go", &st.Fact, "name")
		if st.Side == "wire" {
			add(goScope, "Go", "TestWire"+GoName(st.Name), "struct "+st.Name+" as Go", &st.Fact, "name") // its wire-image test
		}
	}
	for i := range s.Enums {
		e := &s.Enums[i]
		if e.Tag != "" {
			add(tags, "C tags", e.Tag, "enum tag", &e.Fact, "tag")
		}
		add(ordinary, "C", e.Name, "enum", &e.Fact, "name")
		add(goScope, "Go", GoName(e.Name), "enum "+e.Name+" as Go", &e.Fact, "name")
		for j, v := range e.Values {
			key := fmt.Sprintf("values[%d]", j)
			add(ordinary, "C", v.Name, "enumerator", &e.Fact, key)
			add(goScope, "Go", GoName(v.Name), "enumerator "+v.Name+" as Go", &e.Fact, key)
		}
	}
	for i := range s.OpaqueTypes {
		o := &s.OpaqueTypes[i]
		add(tags, "C tags", o.CTag(), "opaque type tag", &o.Fact, "name")
		add(ordinary, "C", o.Name, "opaque type", &o.Fact, "name")
	}
	if s.IsFragment() {
		return
	}
	for i := range s.Constants {
		k := &s.Constants[i]
		add(ordinary, "C", k.Name, "constant", &k.Fact, "name")
		add(goScope, "Go", GoName(k.Name), "constant "+k.Name+" as Go", &k.Fact, "name")
	}
	for i := range s.Messages {
		m := &s.Messages[i]
		add(goScope, "Go", "Msg"+GoName(m.ID), "message "+m.ID+" as Go", &m.Fact, "id")
	}
	for i := range s.Forward {
		f := &s.Forward[i]
		add(ordinary, "C", f.Name, "forward symbol", &f.Fact, "name")
		add(ordinary, "C", f.Name+"_fn", "the function type of forward symbol", &f.Fact, "name")
		add(ordinary, "C", f.Trampoline, "trampoline", &f.Fact, "trampoline")
	}
	for i := range s.Reverse {
		r := &s.Reverse[i]
		add(ordinary, "C", r.Name, "reverse symbol", &r.Fact, "name")
	}
	sig := func(f *Fact, fn string, ps []Param) {
		for i, p := range ps {
			if d, ok := ordinary[p.Name]; ok {
				c.at(f, fmt.Sprintf("params[%d]", i), "name", "parameter %s of %s clashes with %s in the generated C; rename it", p.Name, fn, d.what)
			}
		}
	}
	for i := range s.Forward {
		sig(&s.Forward[i].Fact, s.Forward[i].Name, s.Forward[i].Params)
	}
	for i := range s.Reverse {
		sig(&s.Reverse[i].Fact, s.Reverse[i].Name, s.Reverse[i].Params)
	}
}

func firstWord(what string) string {
	w, _, _ := strings.Cut(what, " ")
	return w
}

// texts holds every string of every row to TextProblem: free text reaches
// generated comments and string literals, terminals and logs.
func (c *checker) texts() {
	// A key another rule has already reported (a name that is no
	// identifier, a source with a comment delimiter) is not reported twice.
	c.done = map[Pos]bool{}
	for _, e := range c.errs {
		c.done[e.Pos] = true
	}
	v := reflect.ValueOf(c.s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() || t.Field(i).Name == "Dir" || t.Field(i).Name == "Files" {
			continue
		}
		c.walkText(v.Field(i), nil, "", 0)
	}
}

// walkText visits the strings under v; f is the nearest row's Fact, key the
// key path from it. Rows nest a few levels, so the depth bound is generous.
func (c *checker) walkText(v reflect.Value, f *Fact, key string, depth int) {
	if depth > 16 {
		return
	}
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			c.walkText(v.Elem(), f, key, depth+1)
		}
	case reflect.String:
		if f == nil || f.Pos.File == "" {
			return
		}
		if p := TextProblem(v.String()); p != "" && !c.done[c.s.PosOf(f, key)] {
			c.at(f, key, "text", "%s: %s; write it as plain text", key, p)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			c.walkText(v.Index(i), f, fmt.Sprintf("%s[%d]", key, i), depth+1)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			if k.Kind() == reflect.String {
				c.walkText(k, f, key, depth+1)
			}
			c.walkText(v.MapIndex(k), f, join(k.String()), depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		if fi, ok := t.FieldByName("Fact"); ok && fi.Anonymous && fi.Type == reflect.TypeOf(Fact{}) {
			f = v.FieldByIndex(fi.Index).Addr().Interface().(*Fact)
			key = ""
		}
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() || sf.Name == "Pos" || sf.Name == "Path" || sf.Type == reflect.TypeOf((*Type)(nil)) {
				continue
			}
			if sf.Anonymous {
				c.walkText(v.Field(i), f, key, depth+1)
				continue
			}
			tag := strings.Split(sf.Tag.Get("toml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			c.walkText(v.Field(i), f, join(tag), depth+1)
		}
	}
}

// quoteName shows a name in an error: quoted with Go escapes, so a NUL,
// ESC or newline in it reaches the terminal as text.
func quoteName(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%+q...", s[:77])
	}
	return fmt.Sprintf("%+q", s)
}

// fileNameProblem is FileNameProblem, with '+' allowed only where asked
// (a SONAME may hold one; a release name becomes a Go identifier).
func fileNameProblem(s string, plus bool) string {
	if !plus && strings.Contains(s, "+") {
		return "it holds \"+\"; use letters, digits, ., _ and -"
	}
	return FileNameProblem(s)
}
