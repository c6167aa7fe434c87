package layoutcheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/layoutcheck/specmatch"
	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// The drift acceptance fixture: one header tree in two states
// (testdata/drift/README lists the drift).
const (
	driftJan = "testdata/drift/jan"
	driftFeb = "testdata/drift/feb"
)

// driftStructs are the structs the tree declares in state jan.
var driftStructs = []string{"nrt_instance_info_t", "enc_mesh_event_t", "enc_ring_t", "hist_cfg_t", "enc_comm_t", "enc_glb_comm_t", "enc_msg_t"}

// driftSpec builds a spec fragment from a state's headers as `release new
// --headers` and `extract --headers` do: compile them with -g, extract.
func driftSpec(t *testing.T, dir string) *spec.Spec {
	t.Helper()
	s, _ := extractFragment(t, compileHeaders(t, dir).Object, release.ExtractOptions{Names: driftStructs, SkipAbsent: true})
	return s
}

// driftLibrary compiles a state into a shared object with gcc -g: a
// library whose exported functions take the tree's structs.
func driftLibrary(t *testing.T, dir string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	src := `#include "nrt/nrt.h"
#include "nrt/nec.h"
int nrt_get_instance_info(nrt_instance_info_t *info, uint64_t len) { return info && len >= sizeof *info ? (int)info->flags : -1; }
int enc_glb_comm_init(enc_glb_comm_t *g, const nrt_instance_info_t *info) { g->g_device_id = info->family; return (int)g->hist.buckets; }
int enc_msg_post(enc_glb_comm_t *g, enc_msg_t *m, enc_mesh_event_t *ev) { ev->seq = m->kind; return (int)g->comm.ring[1].ring_id + (int)g->spare_ring.num_ranks; }
`
	if err := os.WriteFile(filepath.Join(work, "drift.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(work, "libdrift.so")
	if err := cc.Shared(work, so, "libdrift.so", "", []string{"drift.c"}, "-I", abs, "-fno-eliminate-unused-debug-types"); err != nil {
		t.Fatal(err)
	}
	return so
}

// driftReports checks state feb, compiled, against the spec of state jan,
// and diffs the specs of the two states.
func driftReports(t *testing.T) (*Report, diff.Report) {
	t.Helper()
	jan, feb := driftSpec(t, driftJan), driftSpec(t, driftFeb)
	so := driftLibrary(t, driftFeb)
	base, err := compiled.Load(spec.Default)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := Check(context.Background(), []string{so}, Options{Spec: base, Structs: jan, StructsSrc: "jan", Role: specmatch.RoleNone, DebugDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	dr := diff.Diff(jan, feb)
	return cr, dr
}

// fact is one graded fact as both reports name it.
type fact struct{ path, grade, severity string }

func (f fact) String() string { return f.severity + " " + f.grade + " " + f.path }

func checkFacts(r *Report) []fact {
	var out []fact
	for _, f := range r.Findings {
		p := f.Struct
		if f.Field != "" {
			p += "." + f.Field
		}
		out = append(out, fact{p, f.Grade, f.Severity.String()})
	}
	return out
}

func diffFacts(r diff.Report) []fact {
	var out []fact
	for _, c := range r.Changes {
		if c.Group != "structs" && !strings.HasPrefix(c.Kind, "enum") {
			continue
		}
		sev := string(c.Severity)
		if c.Severity == diff.Informational {
			sev = "info"
		}
		g := c.Grade
		if g == "" {
			g = c.Kind
		}
		out = append(out, fact{c.Subject, g, sev})
	}
	return out
}

func isEnumFact(f fact) bool { return strings.HasPrefix(f.path, "enc_mesh_event") }

func factStrings(fs []fact, keep func(fact) bool) []string {
	var out []string
	for _, f := range fs {
		if keep(f) {
			out = append(out, f.String())
		}
	}
	sort.Strings(out)
	return out
}

// TestAcceptanceDrift: the spec of state jan, built from its
// headers, against state feb compiled into a shared object (check) and
// against the spec of state feb (diff). Each distinct fact is reported
// once, both count the same facts, and both grade every fact the same.
func TestAcceptanceDrift(t *testing.T) {
	cr, dr := driftReports(t)
	var text bytes.Buffer
	cr.WriteText(&text)
	dr.WriteText(&text)
	t.Logf("reports:\n%s", text.String())

	cf, df := checkFacts(cr), diffFacts(dr)
	notEnum := func(f fact) bool { return !isEnumFact(f) }
	graded := func(f fact) bool { return notEnum(f) && f.severity != "info" }
	want := []string{
		"compatible flexible-array-element enc_msg_t.payload",
		"compatible pointer-target enc_glb_comm_t.local_rings",
		"compatible renamed nrt_instance_info_t.revision",
		"compatible type-renamed enc_glb_comm_t.hist",
		"incompatible added enc_ring_t.seq",
		"incompatible bitfield enc_glb_comm_t.pod_sz",
		"incompatible laid-over enc_msg_t.len_s",
		"incompatible removed enc_msg_t.len",
		"incompatible resized nrt_instance_info_t.vnc_count",
	}
	for _, side := range []struct {
		name  string
		facts []fact
	}{{"check", cf}, {"diff", df}} {
		if got := factStrings(side.facts, graded); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d facts:\n  %s\nwant %d:\n  %s", side.name, len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
		}
	}
	// The same grade for every fact, by path: what one grades, the other
	// grades alike.
	cg, dg := map[string]string{}, map[string]string{}
	for _, f := range cf {
		if notEnum(f) && f.severity != "info" {
			cg[f.path] = f.severity + " " + f.grade
		}
	}
	for _, f := range df {
		if notEnum(f) && f.severity != "info" {
			dg[f.path] = f.severity + " " + f.grade
		}
	}
	for p, g := range cg {
		if dg[p] != g {
			t.Errorf("%s: check grades %q, diff %q", p, g, dg[p])
		}
	}
	for p, g := range dg {
		if cg[p] != g {
			t.Errorf("%s: diff grades %q, check %q", p, g, cg[p])
		}
	}
	// Informational, not graded: the union wrap keeping its member (check
	// sees the member inside and says nothing; a spec side sees a range
	// over exactly its bytes), and the renamed type's rows.
	if got := factStrings(cf, func(f fact) bool { return notEnum(f) && f.severity == "info" }); len(got) != 0 {
		t.Errorf("check: informational facts %v", got)
	}
	wantInfo := []string{
		"info struct-added histogram_config_t",
		"info struct-removed hist_cfg_t",
		"info union-wrap nrt_instance_info_t.size",
	}
	if got := factStrings(df, func(f fact) bool { return notEnum(f) && f.severity == "info" }); strings.Join(got, "\n") != strings.Join(wantInfo, "\n") {
		t.Errorf("diff: informational facts\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(wantInfo, "\n  "))
	}
	// The nested change: reported once, at enc_ring_t, with where it is
	// embedded, and what it forces folded under it.
	for _, f := range cr.Findings {
		if f.Struct == "enc_ring_t" && f.Field == "seq" {
			got := strings.Join(f.EmbeddedIn, ", ")
			if got != "enc_comm_t.ring[0], enc_glb_comm_t.spare_ring" && got != "enc_glb_comm_t.spare_ring, enc_comm_t.ring[0]" {
				t.Errorf("check: enc_ring_t.seq embedded in %q", got)
			}
			var under []string
			f.Walk(func(x Finding, depth int) {
				under = append(under, fmt.Sprintf("%d %s %s.%s %v", depth, x.Grade, x.Struct, x.Field, x.Fields))
			})
			t.Logf("enc_ring_t.seq and its consequences:\n%s", strings.Join(under, "\n"))
		}
	}
	// Exit status: facts, not lines.
	if cr.Exit != 12 || dr.Summary.Exit != 12 {
		t.Errorf("exit: check %d, diff %d; want 12", cr.Exit, dr.Summary.Exit)
	}
}

// TestAcceptanceDriftEnums is the enum part of the acceptance fixture
// (an enum's drift, graded as docs/layoutcheck.md#enum-checks says): enc_mesh_event_type gains
// EVT_REDUCE_SCATTER, so EVT_REDUCE_WRITE and EVT_DONE shift, and gains an
// alias; check and diff report the same three facts, graded alike.
func TestAcceptanceDriftEnums(t *testing.T) {
	cr, dr := driftReports(t)
	mentions := func(s string) (check, diffs bool) {
		var b bytes.Buffer
		cr.WriteText(&b)
		check = strings.Contains(b.String(), s)
		b.Reset()
		dr.WriteText(&b)
		return check, strings.Contains(b.String(), s)
	}
	c, d := mentions("EVT_REDUCE_WRITE")
	if !c || !d {
		t.Errorf("EVT_REDUCE_WRITE shifted 4 -> 5: check reports it %v, diff %v", c, d)
	}
	var cfs, dfs []string
	for _, f := range checkFacts(cr) {
		if isEnumFact(f) {
			cfs = append(cfs, f.String())
		}
	}
	for _, f := range diffFacts(dr) {
		if isEnumFact(f) {
			dfs = append(dfs, f.String())
		}
	}
	sort.Strings(cfs)
	sort.Strings(dfs)
	if strings.Join(cfs, "\n") != strings.Join(dfs, "\n") {
		t.Errorf("enc_mesh_event facts differ:\ncheck:\n  %s\ndiff:\n  %s", strings.Join(cfs, "\n  "), strings.Join(dfs, "\n  "))
	}
	// Each enum fact once: the added value, the new alias name, and the run
	// of values it shifts as one line (docs/layoutcheck.md#enum-checks).
	want := []string{
		"compatible enumerator-added enc_mesh_event_type_t.EVT_FINISHED",
		"compatible enumerator-added enc_mesh_event_type_t.EVT_REDUCE_SCATTER",
		"incompatible enumerator-shifted enc_mesh_event_type_t.EVT_REDUCE_WRITE..EVT_DONE",
	}
	if strings.Join(cfs, "\n") != strings.Join(want, "\n") {
		t.Errorf("check: enum facts\n  %s\nwant\n  %s", strings.Join(cfs, "\n  "), strings.Join(want, "\n  "))
	}
}
