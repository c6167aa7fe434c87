package gen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nrtabi/nrtabi/spec"
)

// handDirs are the directories, relative to the module root, whose
// hand-written Go names generated struct fields (docs/generator.md#stable-fields).
var handDirs = []string{"runtime", "cmd", "internal", "bench"}

// maxHandFile bounds one hand-written Go file the scan reads; the largest in
// the tree is under 100 KiB.
const maxHandFile = 4 << 20

// handUses is what hand-written Go names: every selector (x.Name) and
// composite-literal key (T{Name: v}), by identifier, with the first place
// each is named, and every identifier it mentions. The scan reads syntax
// only, never types, so it needs no generated code to exist and cannot go
// stale. It over-approximates: a field counts as used when its name is named
// anywhere and its struct is reachable (reachable), which can only make
// generation refuse more, never less.
type handUses struct {
	named     map[string]string   // selector or key name -> first file:line
	sites     map[string][]string // selector or key name -> every file:line, in scan order
	mentioned map[string]bool     // every identifier, for the types hand-written code names
}

// sitesOf is every place hand-written code names n (the first one, when
// only that is known).
func (u handUses) sitesOf(n string) []string {
	if len(u.sites[n]) > 0 {
		return u.sites[n]
	}
	if at, ok := u.named[n]; ok {
		return []string{at}
	}
	return nil
}

// scanHandUses parses every non-generated .go file under root's handDirs.
func scanHandUses(root string) (handUses, error) {
	uses := handUses{named: map[string]string{}, sites: map[string][]string{}, mentioned: map[string]bool{}}
	fset := token.NewFileSet()
	for _, d := range handDirs {
		dir := filepath.Join(root, d)
		if _, err := os.Lstat(dir); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if n := e.Name(); path != dir && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !e.Type().IsRegular() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			if info.Size() > maxHandFile {
				return fmt.Errorf("%s: %d bytes, more than the %d a hand-written Go file may have for the field scan", path, info.Size(), maxHandFile)
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if isGenerated(src) {
				return nil
			}
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				return fmt.Errorf("scan hand-written uses of generated fields: %w", err)
			}
			rel, _ := filepath.Rel(root, path)
			note := func(id *ast.Ident) {
				at := fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(id.Pos()).Line)
				if _, ok := uses.named[id.Name]; !ok {
					uses.named[id.Name] = at
				}
				if ss := uses.sites[id.Name]; len(ss) == 0 || ss[len(ss)-1] != at {
					uses.sites[id.Name] = append(ss, at)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.Ident:
					uses.mentioned[x.Name] = true
				case *ast.SelectorExpr:
					note(x.Sel)
				case *ast.CompositeLit:
					for _, el := range x.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if id, ok := kv.Key.(*ast.Ident); ok {
								note(id)
							}
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			return handUses{}, err
		}
	}
	return uses, nil
}

// isGenerated reports a Go file with the standard generated-code line
// before its package clause.
func isGenerated(src []byte) bool {
	head := src
	if i := bytes.Index(src, []byte("\npackage ")); i >= 0 {
		head = src[:i]
	}
	for _, l := range bytes.Split(head, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("// Code generated ")) && bytes.HasSuffix(bytes.TrimSpace(l), []byte("DO NOT EDIT.")) {
			return true
		}
	}
	return false
}

// checkHandUses refuses, in one line per use site, a tree in which
// hand-written code would not compile against some release because a field
// it names changed in a way the stable API cannot absorb: a field that is
// gone (renamed without a was row, or removed without an absent row), a
// re-type that loses values, a re-typed field named directly instead of
// through its accessors, or a field some release lacks named directly
// instead of through its presence accessors (docs/generator.md#absent-fields).
// The error is a *Refusal.
func checkHandUses(specs []*spec.Spec, uses handUses) error {
	p, err := presenceOf(specs)
	if err != nil {
		return err
	}
	byName := map[string]*spec.Spec{}
	for _, s := range specs {
		byName[s.Release.Name] = s
	}
	var msgs []string
	reached := map[string]bool{} // struct names some release lets hand-written code reach
	for _, s := range specs {
		parent := byName[s.Release.DerivedFrom]
		reach := reachable(s, uses)
		var preach map[*spec.Struct]bool
		if parent != nil {
			preach = reachable(parent, uses)
		}
		for _, st := range s.Structs {
			if reach[st] {
				reached[st.Name] = true
				for i := range st.Fields {
					if m := checkField(s, st, &st.Fields[i], uses); m != "" {
						msgs = append(msgs, m)
					}
				}
			}
			if pst := parentStruct(parent, st); pst != nil && preach[pst] {
				msgs = append(msgs, goneFields(parent, s, pst, st, uses)...)
			}
		}
	}
	msgs = append(msgs, absentUses(specs, p, reached, uses)...)
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return &Refusal{Lines: msgs}
}

// absentUses refuses each place hand-written code names a field some
// release lacks as a Go field (x.ArchName, T{ArchName: v}): it compiles for
// the releases that have the field and for no other.
func absentUses(specs []*spec.Spec, p presence, reached map[string]bool, uses handUses) []string {
	var out []string
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, sn := range names {
		if !reached[sn] {
			continue
		}
		for field, pf := range p[sn] {
			g := GoName(field)
			for _, at := range uses.sitesOf(g) {
				out = append(out, fmt.Sprintf("%s: names %s directly, but %s.%s is absent in %s (%s); use Has%s/Get%s/Set%s here, which every release has (docs/generator.md#absent-fields)",
					at, g, sn, field, strings.Join(pf.absent, ", "), pf.firstAt, g, g, g))
			}
		}
	}
	return out
}

// reachable are the structs of s whose values hand-written code can hold:
// those whose Go type it names (abi.EncGlbComm), and those held by value in
// a field it names of a struct it can reach (g.m.NcclCommNode). A field of a
// struct it cannot reach is no use, whatever its name: a hand-written type's
// Size is no generated Size.
func reachable(s *spec.Spec, uses handUses) map[*spec.Struct]bool {
	reach := map[*spec.Struct]bool{}
	var work []*spec.Struct
	for _, st := range s.Structs {
		if uses.mentioned[GoName(st.Name)] {
			reach[st] = true
			work = append(work, st)
		}
	}
	for len(work) > 0 {
		st := work[len(work)-1]
		work = work[:len(work)-1]
		for _, fd := range st.Fields {
			if fd.T == nil {
				continue
			}
			inner := byValueStruct(fd.T)
			if inner == nil || reach[inner] {
				continue
			}
			if _, ok := uses.named[GoName(fd.StableName())]; ok {
				reach[inner] = true
				work = append(work, inner)
			}
		}
	}
	return reach
}

// byValueStruct is the struct a field holds by value, directly or as array
// elements.
func byValueStruct(t *spec.Type) *spec.Struct {
	for t.Kind == spec.KindArray {
		t = t.Elem
	}
	if t.Kind == spec.KindStruct {
		return t.Struct
	}
	return nil
}

func parentStruct(parent *spec.Spec, st *spec.Struct) *spec.Struct {
	if parent == nil {
		return nil
	}
	return parent.StructByName(st.Name)
}

// usedAs is where hand-written code names field g directly or through an
// accessor ("" when nowhere), and how.
func usedAs(uses handUses, g string) (at, how string) {
	for _, n := range []string{g, "Get" + g, "Set" + g, "Has" + g} {
		if p, ok := uses.named[n]; ok {
			return p, n
		}
	}
	return "", ""
}

// useSites is every place hand-written code names field g, directly or
// through an accessor, each with the name it uses.
func useSites(uses handUses, g string) (sites [][2]string) {
	for _, n := range []string{g, "Get" + g, "Set" + g, "Has" + g} {
		for _, at := range uses.sitesOf(n) {
			sites = append(sites, [2]string{at, n})
		}
	}
	return sites
}

func checkField(s *spec.Spec, st *spec.Struct, fd *spec.Field, uses handUses) string {
	if fd.T == nil || fd.StableTypeName() == fd.Type {
		return ""
	}
	g := GoName(fd.StableName())
	at, how := usedAs(uses, g)
	if at == "" {
		return ""
	}
	where := fmt.Sprintf("%s.%s: %s in %s, %s in %s", st.Name, fd.StableName(), fd.StableTypeName(), fd.StableFrom, fd.Type, s.Release.Name)
	stable, err := stableType(s, fd)
	if err != nil {
		return fmt.Sprintf("%s: %v, and %s names %s; keep the type, or give the field a new name (no was row) and change that use", where, err, at, how)
	}
	// Array, pointer and struct types keep one Go type only when their
	// spellings name the same declaration (typedef or tag): compare what Go
	// sees.
	same, ok := conversion(stable, fd.T, fd.Range)
	switch {
	case same:
		return ""
	case !ok && integerLike(stable) && integerLike(fd.T):
		return fmt.Sprintf("%s cannot hold every value; add range = %s to the field row in %s", where, rangeHint(stable, fd.T), fieldRow(fd))
	case !ok:
		return fmt.Sprintf("%s: no lossless conversion, and %s names %s; keep the type in %s, or give the field a new name (no was row) and change that use", where, at, how, fieldRow(fd))
	case how == g:
		return fmt.Sprintf("%s, and %s names %s directly; use Get%s/Set%s there, which keep the %s type in every release", where, at, g, g, g, fd.StableTypeName())
	}
	return ""
}

// goneFields reports, once per use site, the fields of parent's struct pst
// that no field of child's same struct st continues and that st does not
// mark absent, while hand-written code still names them.
func goneFields(parent, child *spec.Spec, pst, st *spec.Struct, uses handUses) []string {
	kept := map[string]bool{}
	for _, f := range st.Fields {
		kept[f.StableName()] = true
	}
	var out []string
	for _, pf := range pst.Fields {
		if kept[pf.StableName()] || st.AbsentByName(pf.StableName()) != nil {
			continue
		}
		g := GoName(pf.StableName())
		for _, site := range useSites(uses, g) {
			out = append(out, fmt.Sprintf("%s: names %s, but %s.%s (in %s) is gone from %s; either mark it absent there (a [[struct.absent]] row name = %q, type = %q in the struct at %s) and use Has%s/Get%s/Set%s here, or, if a field of %s replaces it, add was = %q to that field's row",
				site[0], site[1], st.Name, pf.StableName(), parent.Release.Name, child.Release.Name, pf.StableName(), pf.StableTypeName(), structRow(st), g, g, g, child.Release.Name, pf.Name))
		}
	}
	return out
}

// fieldRow is where a field row is written, as file:line.
func fieldRow(fd *spec.Field) string {
	if fd.Pos.Line == 0 {
		return fd.Pos.File
	}
	return fmt.Sprintf("%s:%d", fd.Pos.File, fd.Pos.Line)
}

func structRow(st *spec.Struct) string {
	if st.Pos.Line == 0 {
		return st.Pos.File
	}
	return fmt.Sprintf("%s:%d", st.Pos.File, st.Pos.Line)
}
