package elfread

import (
	"debug/dwarf"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// maxTypeNesting bounds how deep godwarf's reader may recurse for one type:
// the longest chain of types it has not read yet, each reached through
// DW_AT_type from the last or from one of its children (members,
// parameters, subranges). Real C and C++ types nest some hundreds deep;
// each level costs godwarf a few hundred bytes of stack.
const maxTypeNesting = 20000

// typeNesting follows the references godwarf would follow from off, in the
// order it would, with an explicit stack instead of recursion, and refuses
// a graph whose depth-first walk goes deeper than maxTypeNesting. Types
// already in cache end the walk, as they end godwarf's; each DIE is read at
// most once per call.
func typeNesting(d *dwarf.Data, off dwarf.Offset, cache map[dwarf.Offset]godwarf.Type) error {
	if _, ok := cache[off]; ok {
		return nil
	}
	type frame struct {
		refs []dwarf.Offset
		next int
	}
	r := d.Reader()
	seen := map[dwarf.Offset]bool{off: true}
	refsOf := func(at dwarf.Offset) []dwarf.Offset {
		r.Seek(at)
		e, err := r.Next()
		if err != nil || e == nil {
			return nil // godwarf reports the unreadable DIE itself
		}
		refs := typeRef(e, nil)
		if !e.Children {
			return refs
		}
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				return refs
			}
			refs = typeRef(c, refs)
			if c.Children {
				r.SkipChildren()
			}
		}
	}
	stack := []frame{{refs: refsOf(off)}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.refs) {
			stack = stack[:len(stack)-1]
			continue
		}
		to := top.refs[top.next]
		top.next++
		if _, ok := cache[to]; ok || seen[to] {
			continue
		}
		seen[to] = true
		if len(stack) >= maxTypeNesting {
			return fmt.Errorf("the type at DIE 0x%x nests more than %d types deep (through DIE 0x%x): refused, reading it would exhaust the reader's stack", off, maxTypeNesting, to)
		}
		stack = append(stack, frame{refs: refsOf(to)})
	}
	return nil
}

// typeRef appends e's DW_AT_type reference, if it has one within this DWARF.
func typeRef(e *dwarf.Entry, refs []dwarf.Offset) []dwarf.Offset {
	if o, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
		refs = append(refs, o)
	}
	return refs
}
