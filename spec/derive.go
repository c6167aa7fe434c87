package spec

import (
	"fmt"
	"strings"
)

// releaseNameRE is what a derived_from value may hold: no path separators.
var releaseNameRE = lazyRE(`^[A-Za-z0-9._-]+$`)

// derive resolves a derived_from chain: each release starts from its
// parent's rows, replaces the rows it restates (same key), appends new ones
// and drops the ones it lists under [remove]. Inherited rows keep their
// parent's file positions, so an error in them points where the fact is written.
func derive(child *Spec, locate func(string) (source, error), chain []string) (*Spec, Errors, error) {
	parentName := child.Release.DerivedFrom
	if parentName == "" {
		if len(child.removals) > 0 {
			r := child.removals[0]
			return child, append(Errors{{Pos: r.pos, Rule: "derive", Msg: "[remove] only makes sense in a release with derived_from"}}, rootStable(child)...), nil
		}
		return child, rootStable(child), nil
	}
	// A parent is a release directory next to the spec or an embedded
	// release: a bare name, never a path out of the spec root.
	if !releaseNameRE().MatchString(parentName) || parentName == "." || parentName == ".." {
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
	// A row key the child writes twice would be decided by the merge (the
	// later row replaces the earlier silently): report it on the layer.
	errs = append(errs, layerDuplicates(child)...)
	m, merrs := merge(parent, child)
	errs = append(errs, merrs...)
	return m, append(errs, deriveStable(parent, child)...), nil
}

// merge lays child over parent.
func merge(parent, child *Spec) (*Spec, Errors) {
	out := &Spec{Dir: child.Dir, index: map[string]*filePositions{}}
	out.ancestors = append([]string{child.Release.DerivedFrom}, parent.ancestors...) // what carried_from may name
	out.Files = append(append(out.Files, parent.Files...), child.Files...)
	for k, v := range parent.index {
		out.index[k] = v
	}
	for k, v := range child.index {
		out.index[k] = v
	}

	var errs Errors
	drop := map[string]map[string]bool{}
	for _, r := range child.removals {
		for k, names := range r.lists {
			if drop[k] == nil {
				drop[k] = map[string]bool{}
			}
			for _, n := range names {
				drop[k][n] = true
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
	for _, k := range kinds {
		k.merge(out, parent, child, keep)
	}
	// Kinds in their fixed order, so that errors come out in the same order on every load.
	for _, r := range child.removals {
		for _, k := range kinds {
			for _, n := range r.lists[k.key()] {
				if !used[k.key()+"/"+n] {
					errs = append(errs, &Error{Pos: r.pos, Rule: "derive", Msg: fmt.Sprintf("[remove] %s = %q: release %s has no such row", k.key(), n, parent.Release.Name)})
				}
			}
		}
	}
	return out, errs
}

// overlay replaces parent rows by child rows of the same key, in place, and
// appends the child's new rows.
func overlay[T any](parent, child []T, key func(*T) string, keep func(string) bool) []T {
	byKey := map[string]int{}
	for i := range child {
		byKey[key(&child[i])] = i
	}
	var out []T
	taken := map[string]bool{}
	for i := range parent {
		p := parent[i]
		k := key(&p)
		if i, ok := byKey[k]; ok {
			out = append(out, child[i])
			taken[k] = true
			continue
		}
		if keep(k) {
			out = append(out, p)
		}
	}
	for i := range child {
		if c := child[i]; !taken[key(&c)] {
			out = append(out, c)
		}
	}
	return out
}

// layerDuplicates reports each row key one release layer writes twice, at
// the second row, as the validator does for a release without a parent.
func layerDuplicates(layer *Spec) Errors {
	c := &checker{s: layer}
	c.unique()
	seen := map[string]*Fact{}
	for _, st := range layer.Structs {
		if first, ok := seen[st.Name]; ok {
			c.at(&st.Fact, "name", "unique", "struct name %q is already used (first at %s)", st.Name, first.Pos)
			continue
		}
		seen[st.Name] = &st.Fact
	}
	return c.errs
}
