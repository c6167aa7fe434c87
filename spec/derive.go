package spec

import (
	"fmt"
	"regexp"
	"strings"
)

// releaseNameRE is what a derived_from value may hold: no path separators.
var releaseNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Removal lists parent rows a derived release drops, by key.
type Removal struct {
	Forward   []string `toml:"forward"`
	Reverse   []string `toml:"reverse"`
	Constants []string `toml:"constant"`
	Enums     []string `toml:"enum"`
	Opaques   []string `toml:"opaque_type"`
	Messages  []string `toml:"message"`
	Structs   []string `toml:"struct"`
	Nodes     []string `toml:"version_node"`
	Links     []string `toml:"link_behaviour"`
	Notes     []string `toml:"contradiction"`
	Pos       Pos      `toml:"-"`
	Path      string   `toml:"-"`
}

type removalKind struct {
	kind  string // the [remove] key, as the errors name it
	names []string
}

// kinds lists the removals by row kind, in a fixed order so that errors
// come out in the same order on every load.
func (r Removal) kinds() []removalKind {
	return []removalKind{
		{"forward", r.Forward}, {"reverse", r.Reverse}, {"constant", r.Constants}, {"enum", r.Enums},
		{"opaque_type", r.Opaques}, {"message", r.Messages}, {"struct", r.Structs}, {"version_node", r.Nodes},
		{"link_behaviour", r.Links}, {"contradiction", r.Notes},
	}
}

// derive resolves a derived_from chain: each release starts from its
// parent's rows, replaces the rows it restates (same key), appends new ones
// and drops the ones it lists under [remove]. Inherited rows keep their
// parent's file positions, so an error in them points where the fact is written.
func derive(child *Spec, locate func(string) (source, error), chain []string) (*Spec, Errors, error) {
	parentName := child.Release.DerivedFrom
	if parentName == "" {
		if len(child.removals) > 0 {
			r := child.removals[0]
			return child, Errors{{Pos: r.Pos, Rule: "derive", Msg: "[remove] only makes sense in a release with derived_from"}}, nil
		}
		return child, nil, nil
	}
	// A parent is a release directory next to the spec or an embedded
	// release: a bare name, never a path out of the spec root.
	if !releaseNameRE.MatchString(parentName) || parentName == "." || parentName == ".." {
		return nil, Errors{{Pos: child.PosOf(&child.Release.Fact, "derived_from"), Rule: "derive",
			Msg: fmt.Sprintf("derived_from = %q is not a release name; name a release directory next to this one or an embedded release (letters, digits, '.', '-', '_')", parentName)}}, nil
	}
	for _, c := range chain {
		if c == parentName {
			return nil, Errors{{Pos: child.PosOf(&child.Release.Fact, "derived_from"), Rule: "derive",
				Msg: fmt.Sprintf("derivation loops: %s -> %s", strings.Join(chain, " -> "), parentName)}}, nil
		}
	}
	src, err := locate(parentName)
	if err != nil {
		return nil, Errors{{Pos: child.PosOf(&child.Release.Fact, "derived_from"), Rule: "derive",
			Msg: fmt.Sprintf("derived_from = %q: %v", parentName, err)}}, nil
	}
	parent, errs, err := readLayer(src)
	if err != nil {
		return nil, nil, err
	}
	if fatal(errs) {
		return nil, errs, nil
	}
	parent, perrs, err := derive(parent, locate, append(chain, parentName))
	if err != nil || parent == nil {
		return nil, append(errs, perrs...), err
	}
	errs = append(errs, perrs...)
	m, merrs := merge(parent, child)
	return m, append(errs, merrs...), nil
}

// merge lays child over parent.
func merge(parent, child *Spec) (*Spec, Errors) {
	out := &Spec{Dir: child.Dir, index: map[string]*posIndex{}}
	out.Files = append(append(out.Files, parent.Files...), child.Files...)
	for k, v := range parent.index {
		out.index[k] = v
	}
	for k, v := range child.index {
		out.index[k] = v
	}
	out.Release = child.Release
	for _, pair := range []struct{ c, p *Library }{
		{&out.Release.LibNRT, &parent.Release.LibNRT},
		{&out.Release.LibNCCOM, &parent.Release.LibNCCOM},
		{&out.Release.LibNCCOMNet, &parent.Release.LibNCCOMNet},
	} {
		if pair.c.Pos.File == "" {
			*pair.c = *pair.p
		}
	}
	out.Counts, out.SlotTable = parent.Counts, parent.SlotTable
	if child.Counts.Pos.File != "" {
		out.Counts = child.Counts
	}
	if child.SlotTable.Pos.File != "" {
		out.SlotTable = child.SlotTable
	}

	var errs Errors
	drop := map[string]map[string]bool{}
	for _, r := range child.removals {
		for _, k := range r.kinds() {
			for _, n := range k.names {
				if drop[k.kind] == nil {
					drop[k.kind] = map[string]bool{}
				}
				drop[k.kind][n] = true
			}
		}
	}
	// used records which removals matched a parent row.
	used := map[string]bool{}
	keep := func(kind, key string) bool {
		if drop[kind][key] {
			used[kind+"/"+key] = true
			return false
		}
		return true
	}
	out.Forward = overlay(parent.Forward, child.Forward, func(f Forward) string { return f.Name }, func(k string) bool { return keep("forward", k) })
	out.Reverse = overlay(parent.Reverse, child.Reverse, func(r Reverse) string { return r.Name }, func(k string) bool { return keep("reverse", k) })
	out.Constants = overlay(parent.Constants, child.Constants, func(c Constant) string { return c.Name }, func(k string) bool { return keep("constant", k) })
	out.Enums = overlay(parent.Enums, child.Enums, func(e Enum) string { return e.Name }, func(k string) bool { return keep("enum", k) })
	out.OpaqueTypes = overlay(parent.OpaqueTypes, child.OpaqueTypes, func(o OpaqueType) string { return o.Name }, func(k string) bool { return keep("opaque_type", k) })
	out.Messages = overlay(parent.Messages, child.Messages, func(m Message) string { return m.ID }, func(k string) bool { return keep("message", k) })
	out.Structs = overlay(parent.Structs, child.Structs, func(s *Struct) string { return s.Name }, func(k string) bool { return keep("struct", k) })
	out.VersionNodes = overlay(parent.VersionNodes, child.VersionNodes, func(n VersionNode) string { return n.Name }, func(k string) bool { return keep("version_node", k) })
	out.LinkBehaviours = overlay(parent.LinkBehaviours, child.LinkBehaviours, func(l LinkBehaviour) string { return l.Variant }, func(k string) bool { return keep("link_behaviour", k) })
	out.Contradictions = overlay(parent.Contradictions, child.Contradictions, func(c Contradiction) string { return c.ID }, func(k string) bool { return keep("contradiction", k) })
	for _, r := range child.removals {
		for _, k := range r.kinds() {
			for _, n := range k.names {
				if !used[k.kind+"/"+n] {
					errs = append(errs, &Error{Pos: r.Pos, Rule: "derive", Msg: fmt.Sprintf("[remove] %s = %q: release %s has no such row", k.kind, n, parent.Release.Name)})
				}
			}
		}
	}
	return out, errs
}

// overlay replaces parent rows by child rows of the same key, in place, and
// appends the child's new rows.
func overlay[T any](parent, child []T, key func(T) string, keep func(string) bool) []T {
	byKey := map[string]int{}
	for i, c := range child {
		byKey[key(c)] = i
	}
	var out []T
	taken := map[string]bool{}
	for _, p := range parent {
		k := key(p)
		if i, ok := byKey[k]; ok {
			out = append(out, child[i])
			taken[k] = true
			continue
		}
		if keep(k) {
			out = append(out, p)
		}
	}
	for _, c := range child {
		if !taken[key(c)] {
			out = append(out, c)
		}
	}
	return out
}
