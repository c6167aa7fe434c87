package release

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
)

// fromOldDrop is release new --headers on testdata/olddrop, in memory.
func fromOldDrop(t *testing.T, id Identity) (*spec.Spec, *Release, *layoutcheck.Headers) {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	base := mustSpec(t, spec.Default)
	h, err := layoutcheck.CompileHeadersContext(t.Context(), "testdata/olddrop/include", layoutcheck.HeaderOptions{Spec: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	obs, err := Observe(context.Background(), []string{h.Object}, base, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := NewWith(base, "2.29.0-olddrop", obs, "", id)
	if err != nil {
		t.Fatal(err)
	}
	return base, rel, h
}

// TestOldDropClasses: each class the older-drop tree plants is in the
// release release new makes of it, and in its diff: a parent opaque type
// the headers define is a struct (its opaque row removed, diff
// "struct-described", compatible); fields the drop lacks are absent rows,
// not fields; a renamed enumerator is the tree's; the structs
// neuronStartNetworkProxy passes by pointer are described, transitively,
// and no system type is; the release's check against the same headers is
// CLEAN. Against the code before, each of these failed: the opaque type
// stayed, the enum was the parent's and the pointees opaque.
func TestOldDropClasses(t *testing.T) {
	base, rel, h := fromOldDrop(t, Identity{})
	s := rel.Spec
	for _, n := range []string{"enc_host_mem_t", "net_ops_info_t", "net_src_addr_t", "enc_alg_hier"} {
		if s.StructByName(n) == nil {
			t.Errorf("no struct %s", n)
		}
	}
	if st := s.StructByName("net_ops_info_t"); st != nil && st.CTag() != "net_ops_info" {
		t.Errorf("net_ops_info_t's tag %q, want the opaque type's net_ops_info", st.CTag())
	}
	for _, o := range s.OpaqueTypes {
		if o.Name == "enc_host_mem_t" || o.Name == "net_ops_info_t" {
			t.Errorf("opaque type %s kept beside its struct", o.Name)
		}
	}
	if s.StructByName("cpu_set_t") != nil {
		t.Error("a system type (cpu_set_t, a forward parameter) became a struct")
	}
	absent := map[string][]string{}
	for _, st := range s.Structs {
		for _, a := range st.Absent {
			absent[st.Name] = append(absent[st.Name], a.Name+" "+a.Type)
		}
	}
	if got := absent["nrt_instance_info_t"]; !slices.Equal(got, []string{"arch_name char[16]", "device_revision char[8]"}) {
		t.Errorf("nrt_instance_info_t absent rows %q", got)
	}
	if got := absent["enc_nccl_comm_node"]; !slices.Equal(got, []string{"context_id u32"}) {
		t.Errorf("enc_nccl_comm_node absent rows %q", got)
	}
	if st := s.StructByName("nrt_instance_info_t"); st == nil || st.Size != 8 || len(st.Fields) != 2 {
		t.Errorf("nrt_instance_info_t is not the drop's 8 bytes: %+v", st)
	}
	var status *spec.Enum
	for i := range s.Enums {
		if s.Enums[i].Name == "NRT_STATUS" {
			status = &s.Enums[i]
		}
	}
	if status == nil || !slices.ContainsFunc(status.Values, func(v spec.EnumValue) bool { return v.Name == "NRT_EXEC_OUT_OF_BOUNDS" && v.Value == 1006 }) || !status.Status {
		t.Errorf("NRT_STATUS not refreshed from the headers: %+v", status)
	}

	r := diff.Diff(base, s)
	kinds := map[string]string{}
	for _, c := range r.Changes {
		kinds[c.Subject] = c.Kind + " " + string(c.Severity)
	}
	for subject, want := range map[string]string{
		"enc_host_mem_t":                     "struct-described compatible",
		"net_ops_info_t.hier":                "field-added incompatible",
		"net_ops_info_t.add_to_histogram":    "field-removed incompatible",
		"net_src_addr_t.proxy_histogram_tag": "field-removed incompatible",
		"NRT_STATUS.NRT_EXEC_OOB":            "enumerator-renamed compatible",
	} {
		if kinds[subject] != want {
			t.Errorf("diff: %s is %q, want %q", subject, kinds[subject], want)
		}
	}

	rep, err := layoutcheck.Check(context.Background(), []string{h.Object}, layoutcheck.Options{Spec: s})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Verdict, "CLEAN") || rep.StructsChecked < 10 {
		t.Errorf("check of the same headers against the release: %s (%d structs)", rep.Verdict, rep.StructsChecked)
	}
}

// TestOldDropUsesAndProvenance: with a Uses predicate, only the fields
// hand-written code uses become absent rows; Identity.Headers becomes
// [release.headers] with its provenance.
func TestOldDropUsesAndProvenance(t *testing.T) {
	uses := func(st, f string) bool { return st == "nrt_instance_info_t" && f == "arch_name" }
	_, rel, h := fromOldDrop(t, Identity{Uses: uses, Headers: spec.Headers{Tree: "testdata/olddrop/include", Prelude: layoutcheck.Prelude, Order: []string{"nrt/nrt_types.h"}}})
	var got []string
	for _, st := range rel.Spec.Structs {
		for _, a := range st.Absent {
			got = append(got, st.Name+"."+a.Name)
		}
	}
	if !slices.Equal(got, []string{"nrt_instance_info_t.arch_name"}) {
		t.Errorf("absent rows %q, want only the used one", got)
	}
	hd := rel.Spec.Release.Headers
	if hd.Tree != "testdata/olddrop/include" || !slices.Equal(hd.Prelude, layoutcheck.Prelude) || hd.Conf != spec.High || !strings.Contains(hd.Source, "release new --headers") {
		t.Errorf("[release.headers] %+v", hd)
	}
	if len(h.Order) == 0 || h.Order[0] != "nrt/nrt_types.h" {
		t.Errorf("the tree's compile order %q: nrt_types.h must come before nccom_net.h", h.Order)
	}
}
