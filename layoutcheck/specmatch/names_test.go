package specmatch

import (
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

// The names a DWARF struct carries against a spec struct's: its own names
// rank before the TAG_t alias, and the alias makes a member's struct the
// spec's only when the struct's own tag says nothing else.
func TestNameRank(t *testing.T) {
	list := &spec.Struct{Name: "list"}
	head := &spec.Struct{Name: "list_head"}
	info := &spec.Struct{Name: "nrt_info_t"}
	tagged := &spec.Struct{Name: "ctx", Tag: "ctx_impl", Aliases: []string{"ctx_handle"}}
	for _, c := range []struct {
		st       *spec.Struct
		tag      string
		tds      []string
		rank     int
		isStruct bool
	}{
		{list, "list", nil, 0, true},
		{list, "list_head", []string{"list_t"}, 1, false}, // ld.so: list_t is struct list_head
		{list, "", []string{"list_t"}, 1, true},           // typedef struct {...} list_t
		{list, "list_t", nil, 1, true},
		{list, "other", nil, -1, false},
		{head, "list_head", []string{"list_t"}, 0, true},
		{info, "nrt_info", []string{"nrt_info_t"}, 0, true},
		{info, "nrt_info", nil, 0, true},
		{info, "", []string{"nrt_info_t"}, 0, true},
		{tagged, "ctx_impl", nil, 0, true},
		{tagged, "", []string{"ctx_handle"}, 0, true},
		{tagged, "", []string{"ctx_impl_t"}, 1, true},
		{tagged, "ctx", nil, 0, true},
	} {
		if got := NameRank(c.st, c.tag, c.tds); got != c.rank {
			t.Errorf("NameRank(%s, %q, %q) = %d, want %d", c.st.Name, c.tag, c.tds, got, c.rank)
		}
		if got := IsStruct(c.st, c.tag, c.tds); got != c.isStruct {
			t.Errorf("IsStruct(%s, %q, %q) = %v, want %v", c.st.Name, c.tag, c.tds, got, c.isStruct)
		}
	}
}

// StructNamed takes a struct's own name over an alias whatever the spec's
// order: struct list_head through list_t is list_head, not list.
func TestStructNamed(t *testing.T) {
	list := &spec.Struct{Name: "list"}
	head := &spec.Struct{Name: "list_head"}
	for _, order := range [][]*spec.Struct{{list, head}, {head, list}} {
		if got := StructNamed(order, "list_head", []string{"list_t"}); got != head {
			t.Errorf("StructNamed(%s, %s) = %v, want list_head", order[0].Name, order[1].Name, got)
		}
		if got := StructNamed(order, "", []string{"list_t"}); got != list {
			t.Errorf("an anonymous list_t: StructNamed = %v, want list (by its alias)", got)
		}
		if got := StructNamed(order, "node", nil); got != nil {
			t.Errorf("struct node: StructNamed = %s, want none", got.Name)
		}
	}
}
