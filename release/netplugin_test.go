package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/vendorbuild"
	"github.com/nrtabi/nrtabi/readers/elfread"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// buildTestPlugin compiles testdata/netplugin/plugin.c with -g and the
// given PLANT_* defines into a shared object named soname.
func buildTestPlugin(t testing.TB, soname string, defines ...string) string {
	t.Helper()
	return buildTestPluginAs(t, soname, soname, defines...)
}

// buildTestPluginAs is buildTestPlugin into file, its SONAME soname (""
// for none).
func buildTestPluginAs(t testing.TB, file, soname string, defines ...string) string {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "netplugin", "plugin.c"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, file)
	flags := append([]string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden"}, defines...)
	if err := cc.SharedContext(t.Context(), dir, out, soname, "", []string{src}, flags...); err != nil {
		t.Fatal(err)
	}
	return out
}

// boundary are a diff's changes that are not informational, as
// "severity kind subject", sorted, consequences under their fact with "> ".
func boundary(r diff.Report) []string {
	var out []string
	for _, c := range r.Changes {
		c.Walk(func(x diff.Change, depth int) {
			if x.Severity != diff.Informational {
				out = append(out, strings.Repeat("> ", depth)+string(x.Severity)+" "+x.Kind+" "+x.Subject)
			}
		})
	}
	sort.Strings(out)
	return out
}

func tables(l spec.Library) []string {
	var out []string
	for _, o := range l.Objects {
		s := o.Name + " " + strconv.Itoa(o.Slots)
		if o.Bound {
			s += " bound"
		}
		out = append(out, s)
	}
	return out
}

// TestNewFromNetPlugin: `release new --binary PLUGIN` recognises the net
// plugin (by the spec's SONAME, or by its ncclNetPlugin_v* tables under
// another), records its file, build-id, tables by st_size, what it says
// of its name and version, the tables' layouts from DWARF, and carries
// bound from the parent; each planted change shows in the diff, graded.
func TestNewFromNetPlugin(t *testing.T) {
	base := mustSpec(t, spec.Default)
	public := []string{"ncclNetPlugin_v4 16", "ncclNetPlugin_v5 21", "ncclNetPlugin_v6 22 bound"}
	for _, tc := range []struct {
		name, soname string
		defines      []string
		tables       []string
		note         []string
		boundary     []string
	}{
		{"public shapes, found by its tables", "libnccl-net.so", []string{"-DPLANT_VERSION"}, public,
			[]string{`its tables name it "nrtabi-test-plugin"`, `version aws-ofi-nccl 1.21.1-test, from the .rodata string "NET/OFI Initializing aws-ofi-nccl 1.21.1-test"`,
				"ncclNetPlugin_v5 168 bytes"},
			// The seed's 24 slots against the header's 21 members.
			[]string{"compatible net-table-size ncclNetPlugin_v5"}},
		{"no version string", "libnccom-net.so", nil, public,
			[]string{"the binary shows no version string (none recorded, none guessed)"},
			[]string{"compatible net-table-size ncclNetPlugin_v5"}},
		{"v5 of the seed's 24 slots", "libnccom-net.so", []string{"-DPLANT_V5_SEED"},
			[]string{"ncclNetPlugin_v4 16", "ncclNetPlugin_v5 24", "ncclNetPlugin_v6 22 bound"}, nil,
			// The table is the seed's size; its type grew by three members.
			[]string{"> incompatible struct-size ncclNet_v5_t", "incompatible field-added ncclNet_v5_t.spare0",
				"incompatible field-added ncclNet_v5_t.spare1", "incompatible field-added ncclNet_v5_t.spare2"}},
		{"bound table lost", "libnccom-net.so", []string{"-DPLANT_NO_V6"},
			[]string{"ncclNetPlugin_v4 16", "ncclNetPlugin_v5 21"}, nil,
			[]string{"compatible net-table-size ncclNetPlugin_v5", "incompatible net-table-removed ncclNetPlugin_v6"}},
		{"member renamed", "libnccom-net.so", []string{"-DPLANT_RENAME"}, public, nil,
			[]string{"compatible field-renamed ncclNet_v6_t.isend", "compatible net-table-size ncclNetPlugin_v5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			so := buildTestPlugin(t, tc.soname, tc.defines...)
			got, obs := newReleaseFrom(t, base, "plugin", so)
			if obs.Libnet == nil || obs.Libnet.Path != so || obs.Libnccom != nil || obs.Libnrt != nil {
				t.Fatalf("roles: net %+v, libnccom %v, libnrt %v", obs.Libnet, obs.Libnccom, obs.Libnrt)
			}
			l := got.Release.LibNCCOMNet
			o, err := elfread.Open(so)
			if err != nil {
				t.Fatal(err)
			}
			id := o.BuildID
			o.Close()
			wantFrom := "" // nothing carried without the bound table
			if slices.Contains(tc.tables, "ncclNetPlugin_v6 22 bound") {
				wantFrom = spec.Default
			}
			if l.File != filepath.Base(so) || l.SONAME != tc.soname || l.BuildID != id || l.CarriedFrom != wantFrom {
				t.Errorf("library row: file %q soname %q build-id %q (want %s), carried from %q", l.File, l.SONAME, l.BuildID, id, l.CarriedFrom)
			}
			if g := tables(l); !slices.Equal(g, tc.tables) {
				t.Errorf("tables %v, want %v", g, tc.tables)
			}
			if bound := slices.Contains(l.Carried, "bound"); bound != slices.ContainsFunc(tc.tables, func(s string) bool { return strings.HasSuffix(s, " bound") }) {
				t.Errorf("bound carried %v: carried %v", bound, l.Carried)
			}
			for _, w := range tc.note {
				if !strings.Contains(l.Note, w) {
					t.Errorf("the note lacks %q: %s", w, l.Note)
				}
			}
			for _, st := range []string{"ncclNet_v4_t", "ncclNet_v5_t"} {
				if s := got.StructByName(st); s == nil || !strings.Contains(s.Source, "nrtabi extract from") {
					t.Errorf("%s not restated from the plugin's DWARF: %+v", st, s)
				}
			}
			if g := boundary(diff.Diff(base, got)); !slices.Equal(g, tc.boundary) {
				t.Errorf("diff %v, want %v", g, tc.boundary)
			}
		})
	}
}

// TestNetPluginRefused: a file playing the plugin by its SONAME, or by
// its file name when it has no SONAME, with no table is one error naming
// it; so is a second plugin.
func TestNetPluginRefused(t *testing.T) {
	base := mustSpec(t, spec.Default)
	for _, soname := range []string{"libnccom-net.so", ""} {
		none := buildTestPluginAs(t, "libnccom-net.so", soname, "-DPLANT_NO_TABLES")
		_, err := Observe(context.Background(), []string{none}, base, ObserveOptions{})
		if err == nil || !strings.Contains(err.Error(), none) || !strings.Contains(err.Error(), "exports no ncclNetPlugin_v* data object") || strings.Contains(err.Error(), "\n") {
			t.Errorf("a plugin (SONAME %q) without tables: %v", soname, err)
		}
	}
	a, b := buildTestPlugin(t, "libnccom-net.so"), buildTestPlugin(t, "libnccl-net.so")
	if _, err := Observe(context.Background(), []string{a, b}, base, ObserveOptions{}); err == nil || !strings.Contains(err.Error(), "a second net plugin") {
		t.Errorf("two plugins: %v", err)
	}
}

// TestNewFromRealNetPlugin: release new from aws-ofi-nccl's
// libnccom-net.so built from the vendor tarballs (internal/vendorbuild, -g):
// it records the three tables by st_size, the name "AWS Libfabric", the
// version its init log string shows, and the tables' and properties'
// layouts from its DWARF. Against 2.31.24 the diff says what today's
// public plugin's v5 is against the seed's 24 slots.
func TestNewFromRealNetPlugin(t *testing.T) {
	b, err := vendorbuild.Get(t.Context(), vendorbuild.Options{})
	var absent *vendorbuild.Absent
	if errors.As(err, &absent) {
		t.Skipf("skipped: %v; TestNewFromNetPlugin covers release new on a plugin of the tests' own making", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	base := mustSpec(t, spec.Default)
	got, obs := newReleaseFrom(t, base, "aws-ofi-nccl", b.Plugin)
	l := got.Release.LibNCCOMNet
	if obs.Libnet == nil || l.SONAME != "libnccom-net.so" || l.BuildID == "" {
		t.Fatalf("the real plugin not read as the plugin: %+v", l)
	}
	if g := tables(l); !slices.Equal(g, []string{"ncclNetPlugin_v4 16", "ncclNetPlugin_v5 21", "ncclNetPlugin_v6 22 bound"}) {
		t.Errorf("tables %v", g)
	}
	if obs.Net.Name != "AWS Libfabric" || obs.Net.Version != "aws-ofi-nccl 1.21.1" {
		t.Errorf("name %q version %q, want AWS Libfabric, aws-ofi-nccl 1.21.1", obs.Net.Name, obs.Net.Version)
	}
	for _, st := range []string{"ncclNet_v6_t", "ncclNet_v5_t", "ncclNet_v4_t", "ncclNetProperties_v6_t", "ncclNetProperties_v4_t"} {
		if !slices.Contains(obs.StructNames, st) {
			t.Errorf("%s not found in the plugin's DWARF (found %v)", st, obs.StructNames)
		}
	}
	r := diff.Diff(base, got)
	var v5 *diff.Change
	for i, c := range r.Changes {
		if c.Kind == diff.NetTableSize && c.Subject == "ncclNetPlugin_v5" {
			v5 = &r.Changes[i]
		}
	}
	if v5 == nil || v5.Severity != diff.Compatible || v5.Old != "24 slots (192 bytes)" || v5.New != "21 slots (168 bytes)" ||
		!strings.Contains(v5.Detail, "ncclNet_v5_t is 168 bytes (21 members) on both sides") {
		t.Errorf("the v5 table against the seed's: %+v", v5)
	}
	for _, c := range r.Changes {
		if c.Severity == diff.Incompatible {
			t.Errorf("the real plugin breaks the spec's boundary: %s %s %s (%s)", c.Kind, c.Subject, c.New, c.Detail)
		}
	}
}

// FuzzObserveNetPlugin feeds mutated plugins (the test plugin of each
// planted shape) to Observe: the plugin's tables, the relocation its name
// is read through and the .rodata scanned for a version come from the
// file. Each input ends in a result or a one-line error; a panic fails.
func FuzzObserveNetPlugin(f *testing.F) {
	base, err := compiled.Load(spec.Default)
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range [][]string{nil, {"-DPLANT_VERSION"}, {"-DPLANT_NO_V6", "-DPLANT_V5_SEED"}} {
		data, err := os.ReadFile(buildTestPlugin(f, "libnccom-net.so", d...))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "libnccom-net.so")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		obs, err := Observe(context.Background(), []string{p}, base, ObserveOptions{DebugDirs: []string{filepath.Join(dir, "no-debug")}})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a refusal over several lines: %q", err)
			}
			return
		}
		if obs.Net != nil && len(obs.Net.Name) > maxName {
			t.Fatalf("a name of %d bytes, past the bound %d", len(obs.Net.Name), maxName)
		}
	})
}
