package diff

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

func netObject(t *testing.T, s *spec.Spec, name string) *spec.DataObject {
	t.Helper()
	o := object(s.Release.LibNCCOMNet, name)
	if o == nil {
		t.Fatalf("%s has no table %s", s.Release.Name, name)
	}
	return o
}

func dropObject(s *spec.Spec, name string) {
	l := &s.Release.LibNCCOMNet
	l.Objects = slices.DeleteFunc(slices.Clone(l.Objects), func(o spec.DataObject) bool { return o.Name == name })
}

// TestNetKinds: each planted change to the plugin boundary is one change
// of the net group, graded.
func TestNetKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s *spec.Spec)
		want []string // "severity kind subject", sorted
		exit int
	}{
		{"bound table lost", func(t *testing.T, s *spec.Spec) { dropObject(s, "ncclNetPlugin_v6") },
			[]string{"incompatible net-table-removed ncclNetPlugin_v6"}, 8},
		{"older table lost", func(t *testing.T, s *spec.Spec) { dropObject(s, "ncclNetPlugin_v4") },
			[]string{"compatible net-table-removed ncclNetPlugin_v4"}, 4},
		{"table gained", func(t *testing.T, s *spec.Spec) {
			l := &s.Release.LibNCCOMNet
			l.Objects = append(slices.Clone(l.Objects), spec.DataObject{Name: "ncclNetPlugin_v7", Addr: 0x43960, Slots: 23})
		}, []string{"compatible net-table-added ncclNetPlugin_v7"}, 4},
		{"table size against its type", func(t *testing.T, s *spec.Spec) { netObject(t, s, "ncclNetPlugin_v4").Slots = 17 },
			[]string{"incompatible net-table-size ncclNetPlugin_v4"}, 8},
		{"bound moved", func(t *testing.T, s *spec.Spec) {
			netObject(t, s, "ncclNetPlugin_v6").Bound = false
			netObject(t, s, "ncclNetPlugin_v5").Bound = true
		}, []string{"compatible net-table-bound ncclNetPlugin_v5", "compatible net-table-bound ncclNetPlugin_v6"}, 4},
		{"member retyped", func(t *testing.T, s *spec.Spec) {
			retype(t, field(s.StructByName("ncclNet_v6_t"), "isend"), "u32")
		}, []string{"incompatible field-resized ncclNet_v6_t.isend"}, 8},
		{"member renamed", func(t *testing.T, s *spec.Spec) { field(s.StructByName("ncclNet_v5_t"), "iflush").Name = "flush" },
			[]string{"compatible field-renamed ncclNet_v5_t.iflush"}, 4},
		{"properties field retyped", func(t *testing.T, s *spec.Spec) {
			retype(t, field(s.StructByName("ncclNetProperties_v6_t"), "maxComms"), "u64")
		}, []string{"incompatible field-resized ncclNetProperties_v6_t.maxComms"}, 8},
		{"handle size", func(t *testing.T, s *spec.Spec) { s.ConstantByName("NCCL_NET_HANDLE_MAXSIZE").Value = int64(256) },
			[]string{"incompatible constant-changed NCCL_NET_HANDLE_MAXSIZE"}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mutate(t, func(s *spec.Spec) { tc.fn(t, s) })
			got := keys(r)
			if !slices.Equal(got, tc.want) || r.Summary.Exit != tc.exit {
				t.Errorf("got %v (exit %d), want %v (exit %d)", got, r.Summary.Exit, tc.want, tc.exit)
			}
			for _, c := range r.Changes {
				if c.Group != netGroup {
					t.Errorf("%s %s is in group %s, not %s", c.Kind, c.Subject, c.Group, netGroup)
				}
			}
		})
	}
}

// TestNetV5SeedAgainstHeader: the seed's ncclNetPlugin_v5 of 24 slots
// against a plugin whose v5 object is its type's 168 bytes (21 members,
// the public header's): one compatible change that says what differs.
func TestNetV5SeedAgainstHeader(t *testing.T) {
	r := mutate(t, func(s *spec.Spec) { netObject(t, s, "ncclNetPlugin_v5").Slots = 21 })
	if got := keys(r); !slices.Equal(got, []string{"compatible net-table-size ncclNetPlugin_v5"}) {
		t.Fatalf("got %v", got)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"net\n", "24 slots (192 bytes) -> 21 slots (168 bytes)", "ncclNet_v5_t is 168 bytes (21 members) on both sides",
		"24 bytes past them: the distance to the next object"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "ncclNetPlugin_v5"); n != 1 {
		t.Errorf("ncclNetPlugin_v5 printed %d times, want once:\n%s", n, out)
	}
}

// TestNetTableGrewWithItsType: a member appended to ncclNet_v6_t and the
// table object grown to match are one fact (the type's size, graded by
// package grade) with the object's size under it, printed once.
func TestNetTableGrewWithItsType(t *testing.T) {
	r := mutate(t, func(s *spec.Spec) {
		st := s.StructByName("ncclNet_v6_t")
		f := spec.Field{Name: "iwriteV2", Offset: st.Size}
		retype(t, &f, "void*")
		st.Fields = append(slices.Clone(st.Fields), f)
		st.Size += 8
		netObject(t, s, "ncclNetPlugin_v6").Slots = 23
	})
	var tables int
	for _, c := range r.Changes {
		c.Walk(func(x Change, depth int) {
			if x.Kind == NetTableSize {
				tables++
				if depth == 0 {
					t.Errorf("the table's size is a fact of its own, not under its type's: %+v", x)
				}
			}
		})
		if c.Group != netGroup {
			t.Errorf("%s %s in group %s", c.Kind, c.Subject, c.Group)
		}
	}
	if tables != 1 || r.Summary.Exit != ExitIncompatible {
		t.Errorf("net-table-size %d times (want 1), exit %d: %v", tables, r.Summary.Exit, keys(r))
	}
}

// TestNetSideWithoutTables: a side that names no plugin tables (a struct
// fragment) is not a plugin that lost them all.
func TestNetSideWithoutTables(t *testing.T) {
	r := mutate(t, func(s *spec.Spec) { s.Release.LibNCCOMNet = spec.Library{} })
	if got := keys(r); len(got) != 0 {
		t.Errorf("got %v, want no change", got)
	}
}
