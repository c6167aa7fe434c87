package release

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
)

// TestHeaderOnlyClaimsNoBinaryFact holds the provenance rules of
// docs/spec-format.md#provenance-and-confidence: a release
// made from headers alone must not restate the slot table, the counts, the
// library identities (build-ids, git) or any symbol row as facts "from
// headers". Every one of them is the parent's, with the parent's conf and
// source, marked carried_from; only the structs the headers declare are
// sourced to them. Against the code before this test (counts and slot table
// HIGH "from headers", libraries inherited unmarked) it fails at [counts].
func TestHeaderOnlyClaimsNoBinaryFact(t *testing.T) {
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	base, err := spec.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	// The generated header of 2.31.24 stands in for a vendor tree: it
	// declares every spec struct, and nothing a binary would show.
	h, err := layoutcheck.CompileHeaders(filepath.Join("..", "generated", spec.Default, "c"), []string{"nrtabi.h"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	obs, err := Observe(context.Background(), []string{h.Object}, base, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obs.Libnrt != nil || obs.Libnccom != nil || len(obs.StructNames) == 0 {
		t.Fatalf("headers observed as libnrt %v, libnccom %v, %d structs", obs.Libnrt, obs.Libnccom, len(obs.StructNames))
	}
	rel, err := New(base, "hdr", obs, "")
	if err != nil {
		t.Fatal(err)
	}
	s := rel.Spec
	from := spec.Default

	// Whole rows carried: the parent's provenance, verbatim, marked.
	whole := []struct {
		what      string
		got, want spec.Fact
	}{
		{"[counts]", s.Counts.Fact, base.Counts.Fact},
		{"[slot_table]", s.SlotTable.Fact, base.SlotTable.Fact},
		{"[release.libnrt]", s.Release.LibNRT.Fact, base.Release.LibNRT.Fact},
		{"[release.libnccom]", s.Release.LibNCCOM.Fact, base.Release.LibNCCOM.Fact},
		{"[release.libnccom_net]", s.Release.LibNCCOMNet.Fact, base.Release.LibNCCOMNet.Fact},
	}
	for _, w := range whole {
		if w.got.CarriedFrom != from || len(w.got.Carried) != 0 || w.got.Conf != w.want.Conf || w.got.Source != w.want.Source || w.got.Note != w.want.Note {
			t.Errorf("%s: conf %s, source %q, carried_from %q, carried %v; want the parent's conf %s and source %q, carried_from %q, the whole row",
				w.what, w.got.Conf, w.got.Source, w.got.CarriedFrom, w.got.Carried, w.want.Conf, w.want.Source, from)
		}
		if strings.Contains(w.got.Source, "nrtabi release new") {
			t.Errorf("%s claims to come from the headers: %q", w.what, w.got.Source)
		}
	}
	if s.Counts.Forward != base.Counts.Forward || s.Counts.ReverseNEC != base.Counts.ReverseNEC || s.Counts.ReverseNRT != base.Counts.ReverseNRT {
		t.Errorf("counts changed: %+v", s.Counts)
	}
	for _, l := range []*spec.Library{&s.Release.LibNRT, &s.Release.LibNCCOM} {
		if l.OwnGit() != "" || !l.IsCarried("build_id") {
			t.Errorf("library %s: git %q reported as the release's own, build-id carried %v", l.SONAME, l.OwnGit(), l.IsCarried("build_id"))
		}
	}
	if s.Release.RuntimeVersion != "" || s.Release.CollectivesVersion != "" {
		t.Errorf("a header-only release claims versions %q, %q", s.Release.RuntimeVersion, s.Release.CollectivesVersion)
	}
	// No symbol row is restated: forward, reverse, version nodes and
	// constants stay the parent's rows, inherited and named in carried_over.
	var files []string
	for n := range rel.files {
		files = append(files, n)
	}
	slices.Sort(files)
	if !slices.Equal(files, []string{"release.toml", "structs.toml"}) {
		t.Errorf("a header-only release writes %v, want only release.toml and structs.toml", files)
	}
	for _, want := range []string{"forward *", "reverse *", "version_node *", "constant NCCOM_COMPAT_ID"} {
		if !slices.Contains(s.Release.CarriedOver, want) {
			t.Errorf("carried_over lacks %q: %v", want, s.Release.CarriedOver)
		}
	}
	// What the headers do show is sourced to them; the spec's own metadata
	// on those structs (side, aliases) is marked as the parent's.
	st := rel.files["structs.toml"].Rows.StructByName("nrt_version_t")
	if st == nil || !strings.Contains(st.Source, h.Source()) || st.CarriedFrom != from || !slices.Contains(st.Carried, "side") || st.IsCarried("size") {
		t.Errorf("nrt_version_t from the headers: %+v", st.Fact)
	}
	// nrtabi diff does not present the parent's build-ids as the new side's.
	if d := diff.Diff(base, s); d.New.Libnrt != "" || d.New.Libnccom != "" {
		t.Errorf("diff's new side shows build-ids %q, %q carried from %s", d.New.Libnrt, d.New.Libnccom, from)
	}
	// And the written files say the same once loaded back.
	dir := filepath.Join(t.TempDir(), "hdr")
	if err := rel.Write(dir, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	loaded, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.SlotTable.CarriedFrom != from || loaded.Release.LibNRT.OwnGit() != "" {
		t.Errorf("loaded back: slot_table carried_from %q, libnrt git %q", loaded.SlotTable.CarriedFrom, loaded.Release.LibNRT.OwnGit())
	}
}

// TestBinaryReleaseCarriesOnlyWhatItCannotSee: with both binaries, the rows
// they show are HIGH and sourced to them; the keys no binary holds are the
// parent's at the parent's confidence, each listed.
func TestBinaryReleaseCarriesOnlyWhatItCannotSee(t *testing.T) {
	bins := buildReleaseBinaries(t, "2.32.0-synthetic")
	base, err := spec.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newReleaseFrom(t, base, "2.32.0", bins.Libnrt, bins.Libnccom)
	if s.Counts.Conf != spec.High || s.Counts.CarriedFrom != "" || !strings.Contains(s.Counts.Source, "libnccom.so.2") {
		t.Errorf("[counts] from both binaries: %+v", s.Counts.Fact)
	}
	t2 := s.SlotTable
	for _, k := range []string{"stride", "order", "net_handle_addr", "library"} {
		if !t2.IsCarried(k) {
			t.Errorf("[slot_table] %s is not marked carried: %v", k, t2.Carried)
		}
	}
	if t2.IsCarried("base") || t2.IsCarried("top") || t2.CarriedFrom != spec.Default {
		t.Errorf("[slot_table] base/top read from libnrt are marked carried: %+v", t2.Fact)
	}
	// order is INFERRED in 2.31.24: carried at that confidence, not HIGH.
	if t2.ConfOf("order") != spec.Inferred || t2.ConfOf("base") != spec.High {
		t.Errorf("[slot_table] order %s, base %s", t2.ConfOf("order"), t2.ConfOf("base"))
	}
	f := s.ForwardByName("neuronGetUniqueId")
	if f == nil || f.ConfOf("index") != spec.Inferred || f.ConfOf("nccom_addr") != spec.High || f.CarriedFrom != spec.Default || !strings.Contains(f.Source, "carried from 2.31.24 (facts FORWARD row 1)") {
		t.Errorf("neuronGetUniqueId: %+v", f)
	}
	// A row new in this release has no parent: nothing of it is carried.
	if n := s.ForwardByName("neuronNetGetProperties"); n == nil || n.CarriedFrom != "" || len(n.Carried) != 0 {
		t.Errorf("new forward row marked carried: %+v", n)
	}
	// The net plugin is never an input: its table is the parent's, marked.
	if net := s.Release.LibNCCOMNet; net.CarriedFrom != spec.Default || net.Source != base.Release.LibNCCOMNet.Source {
		t.Errorf("libnccom_net: %+v", net.Fact)
	}
	if s.Release.LibNRT.IsCarried("build_id") || s.Release.LibNRT.BuildID == base.Release.LibNRT.BuildID {
		t.Errorf("libnrt build-id %q carried %v", s.Release.LibNRT.BuildID, s.Release.LibNRT.IsCarried("build_id"))
	}
}
