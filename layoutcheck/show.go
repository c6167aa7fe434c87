package layoutcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/readers/inputs"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/typemodel"
)

const cacheline = 64

// ShowResult is a struct found for `nrtabi show`.
type ShowResult struct {
	Layout   *typemodel.Type // the struct, class or union
	Found    *elfread.Found
	Spec     *spec.Struct // nil when the spec has no such struct
	Findings []Finding
	Debug    *elfread.Debug
	// Unresolved are the declarations the struct holds by value that no
	// definition could replace (unresolved.go): show names each.
	Unresolved []UnresolvedDecl
}

// ShowOptions says what Show compares with and where it looks.
type ShowOptions struct {
	Spec      *spec.Spec // nil: the layout only
	DebugDirs []string   // separate debug file directories
	// Fetch downloads a debug file by build-id when no directory has it
	// (the commands wire debuginfod to it); nil: none is downloaded.
	Fetch elfread.Fetcher
	// C writes the struct and every type it needs as C that compiles
	// (see showC) instead of the layout table; Show's result is then nil.
	C bool
}

// Show finds a struct by name (a spec name, tag, typedef or C++ qualified
// name) and writes its layout to w, compared with the spec struct of that
// name, if any; with opt.C it writes C instead.
func Show(ctx context.Context, path, name string, opt ShowOptions, w io.Writer) (*ShowResult, error) {
	return ShowInput(ctx, inputs.Input{Name: path, Path: path}, name, opt, w)
}

// ErrStructNotFound is the cause of Show's error when the input's DWARF
// has no struct of that name (errors.Is): show over many inputs lists
// those inputs and fails only when every one lacks it.
var ErrStructNotFound = errors.New("struct not found")

// ShowInput is Show of an input as package inputs expands it: a file, or
// a member read in memory with its own debug lookup.
func ShowInput(ctx context.Context, in inputs.Input, name string, opt ShowOptions, w io.Writer) (*ShowResult, error) {
	path := in.Name // what the output and errors call it; a headers object's label is looked up by it
	obj, err := in.Open()
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	dbg, err := elfread.FindDebug(ctx, obj, in.Lookup(elfread.Lookup{Dirs: opt.DebugDirs, Fetch: opt.Fetch}))
	if err != nil {
		return nil, err
	}
	defer dbg.Close()
	if opt.C {
		return nil, showC(dbg, path, name, w)
	}
	sp := opt.Spec
	var st *spec.Struct
	names := []string{name}
	if sp != nil {
		if st = sp.StructByName(name); st != nil {
			names = specmatch.StructNames(st)
		}
	}
	found, err := dbg.FindStructs([][]string{names})
	if err != nil {
		return nil, err
	}
	if found[0] == nil {
		// A compiled header set is named by its headers, never by the
		// temporary object (show --headers, docs/nrtabi-show.md).
		if label, ok := specmatch.Label(path); ok {
			return nil, &elfread.InputError{Path: label, Msg: fmt.Sprintf("no struct %s in these headers (looked for %s)", name, strings.Join(names, ", ")), Err: ErrStructNotFound}
		}
		where := dbg.Path()
		if where == "" { // DWARF read in memory
			where = path
		}
		return nil, &elfread.InputError{Path: path, Msg: fmt.Sprintf("no struct %s in the DWARF of %s (looked for %s)", name, where, strings.Join(names, ", ")), Err: ErrStructNotFound}
	}
	l, err := dbg.Types().Struct(found[0].Offset)
	if err != nil {
		return nil, elfread.InputErrorf(dbg.Path(), "%s: %w", name, err)
	}
	res := &ShowResult{Layout: l, Found: found[0], Spec: st, Debug: dbg, Unresolved: unresolvedDecls(dbg.Types(), l)}
	if st != nil {
		res.Findings = CheckStruct(st, l)
	}
	res.write(w, name, sp)
	return res, nil
}

// ShowOutcome is Show of one input of many: what it printed, its result,
// or NotFound when its DWARF has no such struct.
type ShowOutcome struct {
	Input    inputs.Input
	Output   []byte
	Result   *ShowResult // nil when NotFound or skipped
	NotFound error       // the ErrStructNotFound error naming the input
}

// ShowMany is Show over many inputs, jobs at a time, each input's output
// kept apart and returned in input order whatever jobs is. An input whose
// DWARF lacks the struct is an outcome, not an error; any other error is
// the first input's (in input order) that failed. The Debug of each result
// is closed (a result's layout and findings stay).
func ShowMany(ctx context.Context, ins []inputs.Input, name string, opt ShowOptions, jobs int) ([]ShowOutcome, error) {
	outs := make([]ShowOutcome, len(ins))
	err := forEach(len(ins), jobs, func(i int) error {
		outs[i].Input = ins[i]
		if ins[i].Skip != "" {
			return nil
		}
		var buf bytes.Buffer
		res, err := ShowInput(ctx, ins[i], name, opt, &buf)
		if errors.Is(err, ErrStructNotFound) {
			outs[i].NotFound = err
			return nil
		}
		if err != nil {
			return err
		}
		outs[i].Output, outs[i].Result = buf.Bytes(), res
		return nil
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

func (res *ShowResult) write(w io.Writer, asked string, sp *spec.Spec) {
	l, st := res.Layout, res.Spec
	title := l.Kind.String() + " " + l.Name
	if l.Name == "" {
		title = l.Kind.String()
	}
	file, _ := specmatch.Label(res.Found.File)
	printf(w, "/* %s: %s in %s (%s DWARF, DIE %#x) */\n", asked, res.Found.Via, file, res.Found.From, res.Found.DIE)
	if st == nil {
		printf(w, "/* the spec has no struct %s: layout only */\n", asked)
	}
	printf(w, "%s {\n", title)
	byField := map[string][]Finding{}
	for _, f := range res.Findings {
		top := strings.SplitN(f.Field, ".", 2)[0]
		byField[top] = append(byField[top], f)
	}
	specByName := map[string]*spec.Field{}
	if st != nil {
		for i := range st.Fields {
			specByName[st.Fields[i].Name] = &st.Fields[i]
		}
	}
	renamedFrom := map[string]string{}
	for _, f := range res.Findings {
		if f.Kind == KindRenamed {
			renamedFrom[f.Actual] = f.Expected
		}
	}
	var end, holes, sumHoles, sumMembers int64
	nextLine := int64(cacheline)
	for i := range l.Fields {
		m := &l.Fields[i]
		start := m.Start()
		if i > 0 && start > end && l.Kind != typemodel.Union && !m.Virtual {
			printf(w, "\n\t/* XXX %d bytes hole, try to pack */\n\n", start-end)
			holes++
			sumHoles = typemodel.SatAdd(sumHoles, start-end)
		}
		// As pahole: one comment for the last boundary crossed before this
		// member starts, however many a large member before it spanned.
		if !m.Virtual && start >= nextLine {
			line := start / cacheline
			if at := line * cacheline; at == start {
				printf(w, "\t/* --- cacheline %d boundary (%d bytes) --- */\n", line, at)
			} else {
				printf(w, "\t/* --- cacheline %d boundary (%d bytes) was %d bytes ago --- */\n", line, at, start-at)
			}
			nextLine = (line + 1) * cacheline
		}
		decl := memberDecl(m)
		pos := fmt.Sprintf("/* %5d %5d */", m.Offset, m.Size())
		if m.BitSize > 0 {
			pos = fmt.Sprintf("/* %5d:%2d %4d */", m.Offset, m.BitOffset-m.Offset*8, m.Size())
		}
		if m.Virtual {
			pos = "/* virtual base */"
		}
		if m.Size() > spec.MaxObjectSize {
			pos += fmt.Sprintf(" /* larger than a spec struct can be (%d bytes) */", spec.MaxObjectSize)
		}
		printf(w, "\t%-44s %s%s\n", decl, pos, res.specNote(m, specByName, renamedFrom, byField))
		if !m.Virtual {
			if m.End() > end {
				end = m.End()
			}
			if m.BitSize > 0 {
				sumMembers += 0
			} else {
				sumMembers = typemodel.SatAdd(sumMembers, m.Size())
			}
		}
	}
	if st != nil {
		for _, f := range res.Findings {
			if f.Kind == KindMissingField && !strings.Contains(f.Field, ".") {
				printf(w, "\t/* !! spec field missing: %s */\n", f.Message)
			}
		}
	}
	for _, u := range res.Unresolved {
		if u.Type == "" { // the walk's bounds stopped it (unresolved.go)
			printf(w, "\t/* !! unresolved declarations: %s */\n", u.Why)
			continue
		}
		printf(w, "\t/* !! %s: %s stays a declaration, its size unknown: %s */\n", u.Member, u.Type, u.Why)
	}
	printf(w, "\n\t/* size: %d, cachelines: %d, members: %d */\n", l.Size, (l.Size+cacheline-1)/cacheline, len(l.Fields))
	if holes > 0 {
		printf(w, "\t/* sum members: %d, holes: %d, sum holes: %d */\n", sumMembers, holes, sumHoles)
	}
	if pad := l.Size - end; pad > 0 && l.Kind != typemodel.Union {
		printf(w, "\t/* padding: %d */\n", pad)
	}
	if last := l.Size % cacheline; last != 0 {
		printf(w, "\t/* last cacheline: %d bytes */\n", last)
	}
	if st != nil {
		verdict := "matches the spec"
		switch worst(res.Findings) {
		case Incompatible:
			verdict = "INCOMPATIBLE with the spec"
		case Compatible:
			verdict = "compatible changes from the spec"
		}
		printf(w, "\t/* spec %s %s: size %d; %s */\n", sp.Release.Name, st.Name, st.Size, verdict)
		for _, f := range res.Findings {
			if f.Kind == KindSize {
				printf(w, "\t/* !! %s */\n", f.Message)
			}
		}
	}
	fmt.Fprintln(w, "};")
}

func memberDecl(m *typemodel.Field) string {
	if m.Base {
		return fmt.Sprintf("%s;", typemodel.Spell(m.Type)) + " /* base */"
	}
	if m.BitSize > 0 {
		return fmt.Sprintf("%s:%d;", typemodel.Decl(m.Type, m.Name), m.BitSize)
	}
	return typemodel.Decl(m.Type, m.Name) + ";"
}

func (res *ShowResult) specNote(m *typemodel.Field, byName map[string]*spec.Field, renamed map[string]string, findings map[string][]Finding) string {
	st := res.Spec
	if st == nil {
		return ""
	}
	name := m.Name
	if from, ok := renamed[m.Name]; ok {
		name = from
	}
	if f, ok := byName[name]; ok {
		note := fmt.Sprintf("  spec: %s @%d", f.T, f.Offset)
		if name != m.Name {
			note += " as " + name
		}
		var bad []string
		for _, fd := range findings[name] {
			if fd.Severity == Incompatible {
				bad = append(bad, fd.Kind)
			} else if fd.Kind == KindRenamed {
				bad = append(bad, "renamed")
			}
		}
		if len(bad) > 0 {
			return note + "  <-- MISMATCH: " + strings.Join(bad, ", ")
		}
		return note
	}
	if fieldIsFiller(st, m) {
		o := fieldOpaque(st, m)
		return fmt.Sprintf("  spec: opaque %d..%d", o.Offset, o.End())
	}
	if o := fieldOpaque(st, m); o != nil {
		if fieldCovered(o, m) {
			return fmt.Sprintf("  spec: inside opaque %d..%d", o.Offset, o.End())
		}
		return fmt.Sprintf("  spec: inside opaque %d..%d  <-- new member", o.Offset, o.End())
	}
	if st.Prefix && m.Offset >= int64(st.Size) {
		return "  spec: beyond the modelled prefix"
	}
	return "  spec: -  <-- not in the spec"
}

// fieldIsFiller: m is a filler member the generated header writes for a
// spec opaque range, inside that range.
func fieldIsFiller(st *spec.Struct, m *typemodel.Field) bool {
	return st != nil && strings.HasPrefix(m.Name, spec.OpaqueMemberPrefix) && st.OpaqueHolding(m.Offset, m.End()) != nil
}

// fieldOpaque is the spec opaque range holding m, or nil.
func fieldOpaque(st *spec.Struct, m *typemodel.Field) *spec.Opaque {
	return st.OpaqueHolding(m.Start(), m.End())
}

// fieldCovered: the opaque range names m among what it covers.
func fieldCovered(o *spec.Opaque, m *typemodel.Field) bool {
	for _, n := range o.Covers {
		if n == m.Name || n == m.Label() {
			return true
		}
	}
	return false
}

// labelOf is path, or the header set it was compiled from.
func labelOf(path string) string {
	l, _ := specmatch.Label(path)
	return l
}
