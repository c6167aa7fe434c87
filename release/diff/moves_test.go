package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/spec"
)

// runs are the moved runs of a report, wherever they are folded.
func runs(r Report) []Change {
	var out []Change
	for _, c := range r.Changes {
		c.Walk(func(x Change, _ int) {
			if x.Kind == FieldMoved {
				out = append(out, x)
			}
		})
	}
	return out
}

// TestMovesGrouped: the fields after the synthetic release's insertion are
// one run per struct, folded under the insertion that moved them (issue
// 25: one fact, one line), every field listed with --verbose and in JSON.
func TestMovesGrouped(t *testing.T) {
	r := Diff(load(t, spec.Default), load(t, "2.32.0-synthetic"))
	var got []string
	for _, m := range runs(r) {
		got = append(got, fmt.Sprintf("%s: %s (%d fields, after %s)", m.Subject, m.Detail, len(m.Fields), m.Fields[0]))
	}
	want := "enc_glb_comm.local_rings .. device_barrier_table: 11 fields after `nccl_comm_node` moved +8 (11 fields, after local_rings)\n" +
		"enc_nccl_comm_node.num_local_participants .. intra_pod_interface: 7 fields after `comm_gen` moved +8 (7 fields, after num_local_participants)"
	sort.Strings(got)
	if strings.Join(got, "\n") != want {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	var text, verbose, js bytes.Buffer
	r.WriteText(&text)
	for _, w := range []string{
		"enc_glb_comm.local_rings .. device_barrier_table",
		"(11 fields after `nccl_comm_node` moved +8; --verbose lists each)",
		"(7 fields after `comm_gen` moved +8; --verbose lists each)",
	} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
	if n := strings.Count(text.String(), "field-moved"); n != 2 {
		t.Errorf("%d field-moved rows in text, want 2:\n%s", n, text.String())
	}
	r.Verbose = true
	r.WriteText(&verbose)
	if n := strings.Count(verbose.String(), "field-moved"); n != 2+18 {
		t.Errorf("--verbose: %d field-moved rows, want the 2 runs and their 18 fields:\n%s", n, verbose.String())
	}
	r.WriteJSON(&js)
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	rs := runs(back)
	if back.Schema != Schema || len(rs) != 2 || len(rs[0].Fields) != 11 || rs[0].Delta != 8 || rs[0].NewOffset == nil || *rs[0].NewOffset-*rs[0].OldOffset != 8 {
		t.Errorf("JSON: schema %q, runs %+v", back.Schema, rs)
	}
}

// TestMovesNotGrouped: moves by different deltas, or a single move, stay
// rows of their own.
func TestMovesNotGrouped(t *testing.T) {
	r := mutate(t, func(s *spec.Spec) {
		st := s.StructByName("nrt_version_t")
		st.Fields[0].Offset, st.Fields[1].Offset = 8, 0 // swapped: -8 and +8
		s.StructByName("nec_version_info_t").Fields[5].Offset = 40
	})
	for _, m := range runs(r) {
		if len(m.Fields) != 1 {
			t.Errorf("run %+v, want none", m)
		}
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if n := strings.Count(text.String(), "field-moved"); n != 3 {
		t.Errorf("%d field-moved rows, want 3:\n%s", n, text.String())
	}
}

// TestSidesNamed: a struct fragment, which has no release name, is named
// by its directory in the header line.
func TestSidesNamed(t *testing.T) {
	old, new := load(t, spec.Default), load(t, spec.Default)
	new.Release.Name, new.Dir = "", "/tmp/frag-b"
	var text bytes.Buffer
	Diff(old, new).WriteText(&text)
	if !strings.HasPrefix(text.String(), "diff 2.31.24 -> /tmp/frag-b\n") || !strings.Contains(text.String(), "  new: /tmp/frag-b (libnrt build-id") {
		t.Errorf("header:\n%s", text.String())
	}
}

// TestGradedRetypes: the layout rules both ways.
func TestGradedRetypes(t *testing.T) {
	renamedHist := func(t *testing.T, s *spec.Spec, change func(*spec.Struct)) {
		f := field(s.StructByName("enc_neuron_device_info_t"), "histogram_config")
		ty, st := *f.T, *f.T.Struct
		st.Name, st.Tag = "nec_histogram_cfg_t", "nec_histogram_cfg"
		st.Fields = append([]spec.Field(nil), st.Fields...)
		change(&st)
		ty.Struct, ty.Name = &st, st.Name
		f.T, f.Type = &ty, st.Name
	}
	tiny := func(t *testing.T, s *spec.Spec, tail string) {
		st := &spec.Struct{Name: "tiny_t", Size: 8}
		for _, f := range []struct {
			name, typ string
			off       int
		}{{"tag", "u8[8]", 0}, {"tail", tail, 8}} {
			fl := spec.Field{Name: f.name, Offset: f.off}
			retype(t, &fl, f.typ)
			st.Fields = append(st.Fields, fl)
		}
		s.Structs = append(s.Structs, st)
	}
	for _, tc := range []struct {
		name     string
		old, new func(t *testing.T, s *spec.Spec)
		want     string
	}{
		{"type renamed, same layout", nil, func(t *testing.T, s *spec.Spec) { renamedHist(t, s, func(*spec.Struct) {}) },
			"compatible field-type-renamed enc_neuron_device_info_t.histogram_config"},
		{"type renamed, the new one describes the opaque bytes", nil, func(t *testing.T, s *spec.Spec) {
			renamedHist(t, s, func(st *spec.Struct) {
				f := spec.Field{Name: "bucket_size", Offset: 8}
				retype(t, &f, "u64")
				st.Fields = append(st.Fields, f)
				st.Opaque = []spec.Opaque{{Offset: 1, Size: 7}, {Offset: 16, Size: 152}}
			})
		}, "compatible field-type-renamed enc_neuron_device_info_t.histogram_config"},
		{"type renamed, layout changed", nil, func(t *testing.T, s *spec.Spec) {
			renamedHist(t, s, func(st *spec.Struct) { retype(t, &st.Fields[0], "u8") })
		}, "incompatible field-retyped enc_neuron_device_info_t.histogram_config"},
		{"type renamed, a field outside the opaque bytes", nil, func(t *testing.T, s *spec.Spec) {
			renamedHist(t, s, func(st *spec.Struct) { st.Fields[0].Offset = 4 })
		}, "incompatible field-retyped enc_neuron_device_info_t.histogram_config"},
		{"flexible array element, same alignment", nil, func(t *testing.T, s *spec.Spec) {
			retype(t, field(s.StructByName("nec_version_info_t"), "future_fields"), "u32[]")
		}, "compatible field-flexible-array-element nec_version_info_t.future_fields"},
		{"flexible array element, alignment changed",
			func(t *testing.T, s *spec.Spec) { tiny(t, s, "u8[]") }, func(t *testing.T, s *spec.Spec) { tiny(t, s, "u64[]") },
			"incompatible field-retyped tiny_t.tail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new := load(t, spec.Default), load(t, spec.Default)
			if tc.old != nil {
				tc.old(t, old)
			}
			tc.new(t, new)
			got := keys(Diff(old, new))
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %v, want [%s]", got, tc.want)
			}
		})
	}
}
