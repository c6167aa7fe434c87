package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/specsame"
	"github.com/nrtabi/nrtabi/spec"
)

func TestMain(m *testing.M) { os.Exit(specsame.AfterTests(sarifLogs.After(m.Run()))) }

// load reads release r from its TOML (spec.Load): the tests change what
// they load, and a compiled release (spec/compiled) is static data every
// load shares.
func load(t *testing.T, r string) *spec.Spec {
	t.Helper()
	s, err := spec.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(r Report) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, fmt.Sprintf("%s %s %s", c.Severity, c.Kind, c.Subject))
	}
	sort.Strings(out)
	return out
}

func TestIdentical(t *testing.T) {
	r := Diff(load(t, spec.Default), load(t, spec.Default))
	if len(r.Changes) != 0 || r.Summary.Exit != 0 {
		t.Errorf("a release differs from itself: %v", keys(r))
	}
}

// TestPlanted: the synthetic release plants three changes; the diff lists
// them, each fact once: the inserted comm_gen, under which the layout
// consequences are folded (its struct grew, the fields after it moved,
// the struct embedding it grew and its fields moved), and nothing else.
func TestPlanted(t *testing.T) {
	old, new := load(t, spec.Default), load(t, "2.32.0-synthetic")
	want := []string{
		"incompatible compat-id NCCOM_COMPAT_ID",
		"incompatible field-added enc_nccl_comm_node.comm_gen",
		"incompatible forward-added neuronNetGetProperties",
		"informational message-changed nccl_incompatible",
	}
	r := Diff(old, new)
	got := keys(r)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The consequences, in order under the insertion.
	var under []string
	for _, c := range r.Changes {
		if c.Kind == FieldAdded {
			c.Walk(func(x Change, depth int) {
				under = append(under, fmt.Sprintf("%d %s %s %d", depth, x.Kind, x.Subject, len(x.Fields)))
			})
			if len(c.EmbeddedIn) != 1 || c.EmbeddedIn[0] != "enc_glb_comm.nccl_comm_node" {
				t.Errorf("embedded in %v", c.EmbeddedIn)
			}
		}
	}
	wantUnder := []string{
		"0 field-added enc_nccl_comm_node.comm_gen 0",
		"1 struct-size enc_nccl_comm_node 0",
		"2 field-resized enc_glb_comm.nccl_comm_node 0",
		"3 struct-size enc_glb_comm 0",
		"3 field-moved enc_glb_comm.local_rings .. device_barrier_table 11",
		"1 field-moved enc_nccl_comm_node.num_local_participants .. intra_pod_interface 7",
	}
	if strings.Join(under, "\n") != strings.Join(wantUnder, "\n") {
		t.Errorf("consequences:\n%s\nwant:\n%s", strings.Join(under, "\n"), strings.Join(wantUnder, "\n"))
	}
	// Every field after the insertion point moves by 8, in both structs,
	// and is in a run.
	inRun := map[string]bool{}
	for _, m := range runs(r) {
		for _, f := range m.Fields {
			inRun[m.Subject[:strings.IndexByte(m.Subject, '.')]+"."+f] = true
		}
	}
	for _, name := range []string{"enc_nccl_comm_node", "enc_glb_comm"} {
		o, n := old.StructByName(name), new.StructByName(name)
		pivot := 40
		if name == "enc_glb_comm" {
			pivot = 176
		}
		for _, f := range o.Fields {
			if f.Offset >= pivot {
				if nf := field(n, f.Name); nf == nil || nf.Offset != f.Offset+8 {
					t.Fatalf("fixture: %s.%s did not move by 8", name, f.Name)
				}
				if !inRun[name+"."+f.Name] {
					t.Errorf("%s.%s moved and is in no run", name, f.Name)
				}
			}
		}
	}
	if r.Summary.Exit != ExitIncompatible {
		t.Errorf("exit %d", r.Summary.Exit)
	}
}

// mutate loads the canonical release twice and lets fn change the second.
func mutate(t *testing.T, fn func(s *spec.Spec)) Report {
	t.Helper()
	old, new := load(t, spec.Default), load(t, spec.Default)
	fn(new)
	return Diff(old, new)
}

func retype(t *testing.T, f *spec.Field, typ string) {
	t.Helper()
	ty, err := spec.ParseType(typ)
	if err != nil {
		t.Fatal(err)
	}
	f.Type, f.T = typ, ty
}

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s *spec.Spec)
		want string // "severity kind subject"
		exit int
	}{
		{"forward removed", func(t *testing.T, s *spec.Spec) { s.Forward = s.Forward[:36] }, "incompatible forward-removed neuronNetCloseListen", 8},
		{"forward renamed", func(t *testing.T, s *spec.Spec) { s.ForwardByName("neuronNetTest").Name = "neuronNetTestV2" }, "incompatible forward-renamed neuronNetTest", 8},
		{"forward moved", func(t *testing.T, s *spec.Spec) {
			s.ForwardByName("neuronNetIsend").Slot = 0xc96000
		}, "informational forward-moved neuronNetIsend", 0},
		{"forward signature", func(t *testing.T, s *spec.Spec) { s.ForwardByName("neuronFreeComm").Params[0].Type = "void**" }, "incompatible forward-signature neuronFreeComm", 8},
		{"reverse removed", func(t *testing.T, s *spec.Spec) { s.Reverse = s.Reverse[1:] }, "incompatible reverse-removed nec_inc_semaphore", 8},
		{"reverse added", func(t *testing.T, s *spec.Spec) {
			s.Reverse = append(s.Reverse, spec.Reverse{Name: "nec_new", Version: "NRT_2.0.0"})
		}, "incompatible reverse-added nec_new", 8},
		{"reverse re-versioned", func(t *testing.T, s *spec.Spec) { s.ReverseByName("nrt_get_version").Version = "NRT_3.0.0" }, "incompatible reverse-reversioned nrt_get_version", 8},
		{"node added", func(t *testing.T, s *spec.Spec) {
			s.VersionNodes = append(s.VersionNodes, spec.VersionNode{Name: "NRT_4.0.0", Index: 4, Parent: "NRT_3.0.0"})
		}, "compatible version-node-added NRT_4.0.0", 4},
		{"node removed", func(t *testing.T, s *spec.Spec) { s.VersionNodes = s.VersionNodes[:2] }, "incompatible version-node-removed NRT_3.0.0", 8},
		{"field retyped", func(t *testing.T, s *spec.Spec) {
			retype(t, field(s.StructByName("enc_glb_comm"), "vtpb_idx"), "i32")
		}, "incompatible field-retyped enc_glb_comm.vtpb_idx", 8},
		{"field resized", func(t *testing.T, s *spec.Spec) {
			retype(t, field(s.StructByName("enc_glb_comm"), "reservation_id"), "u32")
		}, "incompatible field-resized enc_glb_comm.reservation_id", 8},
		{"field renamed", func(t *testing.T, s *spec.Spec) { field(s.StructByName("enc_glb_comm"), "pod_sz").Name = "pod_size" }, "compatible field-renamed enc_glb_comm.pod_sz", 4},
		{"field added in opaque", func(t *testing.T, s *spec.Spec) {
			st := s.StructByName("nccl_comm_info_t")
			st.Opaque[0] = spec.Opaque{Offset: 24, Size: 1352}
			f := spec.Field{Name: "rank", Offset: 16}
			retype(t, &f, "u64")
			st.Fields = append(st.Fields, f)
		}, "compatible field-added-in-opaque nccl_comm_info_t.rank", 4},
		{"field undescribed", func(t *testing.T, s *spec.Spec) {
			st := s.StructByName("nccl_comm_info_t")
			st.Fields = st.Fields[:1]
			st.Opaque[0] = spec.Opaque{Offset: 8, Size: 1368}
		}, "informational field-undescribed nccl_comm_info_t.epoch", 0},
		{"field removed", func(t *testing.T, s *spec.Spec) {
			st := s.StructByName("nrt_version_t")
			st.Fields = st.Fields[:5]
		}, "incompatible field-removed nrt_version_t.git_hash", 8},
		{"struct size", func(t *testing.T, s *spec.Spec) { s.StructByName("extState").Size = 72 }, "incompatible struct-size extState", 8},
		{"struct removed", func(t *testing.T, s *spec.Spec) {
			for i, st := range s.Structs {
				if st.Name == "nec_version_info_t" {
					s.Structs = append(s.Structs[:i], s.Structs[i+1:]...)
					return
				}
			}
		}, "informational struct-removed nec_version_info_t", 0},
		{"enum value changed", func(t *testing.T, s *spec.Spec) { s.EnumByName("nec_pod_type_t").Values[2].Value = 7 }, "incompatible enumerator-shifted nec_pod_type_t.NEC_POD_TYPE_SWITCH", 8},
		{"enumerator added", func(t *testing.T, s *spec.Spec) {
			e := s.EnumByName("nec_pod_type_t")
			e.Values = append(e.Values, spec.EnumValue{Name: "NEC_POD_TYPE_MESH", Value: 4})
		}, "compatible enumerator-added nec_pod_type_t.NEC_POD_TYPE_MESH", 4},
		{"enumerator renamed", func(t *testing.T, s *spec.Spec) { s.EnumByName("nec_pod_type_t").Values[1].Name = "NEC_POD_TYPE_PEER" }, "compatible enumerator-renamed nec_pod_type_t.NEC_POD_TYPE_P2P", 4},
		{"enum size", func(t *testing.T, s *spec.Spec) { s.EnumByName("NRT_STATUS").Size = 8 }, "incompatible enum-size NRT_STATUS", 8},
		{"enum removed", func(t *testing.T, s *spec.Spec) {
			for i, e := range s.Enums {
				if e.Name == "nec_pod_type_t" {
					// A new array: the fields' types keep pointing at the old rows.
					s.Enums = append(slices.Clone(s.Enums[:i]), s.Enums[i+1:]...)
					return
				}
			}
		}, "incompatible enum-removed nec_pod_type_t", 8},
		{"constant changed", func(t *testing.T, s *spec.Spec) { s.ConstantByName("ENC_SIG_MSG_SIZE").Value = int64(18) }, "incompatible constant-changed ENC_SIG_MSG_SIZE", 8},
		{"identity constant", func(t *testing.T, s *spec.Spec) { s.ConstantByName("NCCOM_VERSION_STRING").Value = "2.31.25.0" }, "informational constant-changed NCCOM_VERSION_STRING", 0},
		{"message changed", func(t *testing.T, s *spec.Spec) { s.MessageByID("uid_failed").Text = "failed to get the unique ID" }, "informational message-changed uid_failed", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mutate(t, func(s *spec.Spec) { tc.fn(t, s) })
			got := keys(r)
			if len(got) != 1 || got[0] != tc.want || r.Summary.Exit != tc.exit {
				t.Errorf("got %v (exit %d), want [%s] (exit %d)", got, r.Summary.Exit, tc.want, tc.exit)
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	r := Diff(load(t, spec.Default), load(t, "2.32.0-synthetic"))
	var text, js bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"diff 2.31.24 -> 2.32.0-synthetic", "compatibility\n", "forward-added", "verdict: INCOMPATIBLE: 4 changes (3 incompatible, 0 compatible, 1 informational; each fact once, its consequences under it) (exit 8)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	r.WriteJSON(&js)
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Changes) != len(r.Changes) || back.Summary != r.Summary {
		t.Errorf("JSON round trip: %v %+v", err, back.Summary)
	}
}

// TestEnumsSwappedAndRun: NRT_STATUS enumerators swapped (as abidiff
// reports them) are two incompatible shifts; a value inserted in front of
// a run is one addition and one line for the run it shifts.
func TestEnumsSwappedAndRun(t *testing.T) {
	r := mutate(t, func(s *spec.Spec) {
		e := s.EnumByName("NRT_STATUS")
		e.Values[1].Value, e.Values[2].Value = e.Values[2].Value, e.Values[1].Value
	})
	if got := strings.Join(keys(r), "\n"); got != "incompatible enumerator-shifted NRT_STATUS.NRT_FAILURE\nincompatible enumerator-shifted NRT_STATUS.NRT_INVALID" || r.Summary.Exit != 8 {
		t.Errorf("swapped: got\n%s\n(exit %d)", got, r.Summary.Exit)
	}
	r = mutate(t, func(s *spec.Spec) {
		e := s.EnumByName("nec_pod_type_t")
		for i := 1; i < len(e.Values); i++ {
			e.Values[i].Value++
		}
		e.Values = append(e.Values, spec.EnumValue{Name: "NEC_POD_TYPE_LOCAL", Value: 1})
	})
	want := "compatible enumerator-added nec_pod_type_t.NEC_POD_TYPE_LOCAL\nincompatible enumerator-shifted nec_pod_type_t.NEC_POD_TYPE_P2P..NEC_POD_TYPE_INVALID"
	if got := strings.Join(keys(r), "\n"); got != want {
		t.Errorf("run: got\n%s\nwant\n%s", got, want)
	}
	if c := r.Changes[0]; c.Old != "1" || c.New != "2" || !strings.Contains(c.Detail, "3 enumerators shifted by +1") {
		t.Errorf("run change %+v", c)
	}
}
