package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/gen"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/internal/fixture"
	"github.com/nrtabi/nrtabi/internal/specsame"
	"github.com/nrtabi/nrtabi/release/diff"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// Fixture pairs, built once per release and stub flags, removed by TestMain.
var (
	relBins  sync.Map // release + defines -> *fixture.Binaries
	relBinMu sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	relBins.Range(func(_, v any) bool {
		os.RemoveAll(v.(*fixture.Binaries).Dir)
		return true
	})
	os.Exit(specsame.AfterTests(code))
}

func buildReleaseBinaries(t *testing.T, release string, stubDefines ...string) *fixture.Binaries {
	t.Helper()
	if err := cc.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	key := release + " " + strings.Join(stubDefines, " ")
	relBinMu.Lock()
	defer relBinMu.Unlock()
	if b, ok := relBins.Load(key); ok {
		return b.(*fixture.Binaries)
	}
	b, err := fixture.Build(filepath.Join("..", "generated"), release, stubDefines...)
	if err != nil {
		t.Fatal(err)
	}
	relBins.Store(key, b)
	return b
}

func newReleaseFrom(t *testing.T, base *spec.Spec, name string, files ...string) (*spec.Spec, *Observed) {
	t.Helper()
	obs, err := Observe(context.Background(), files, base, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := New(base, name, obs, "")
	if err != nil {
		t.Fatal(err)
	}
	// What is written loads as the release validated in memory.
	dir := filepath.Join(t.TempDir(), name)
	if err := rel.Write(dir, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	loaded, err := spec.LoadDir(dir)
	if err != nil {
		t.Fatalf("the written release does not load: %v", err)
	}
	if d := diff.Diff(loaded, rel.Spec); len(d.Changes) != 0 {
		t.Fatalf("the written release differs from the one validated in memory: %+v", d.Changes)
	}
	return rel.Spec, obs
}

// TestNewReleaseInMemory: observing binaries and making a release from them
// writes nothing anywhere (no fragment or staging directory under TMPDIR),
// and only Write puts files on disk, in the target's parent.
func TestNewReleaseInMemory(t *testing.T) {
	bins := buildReleaseBinaries(t, "2.32.0-synthetic")
	base := mustSpec(t, spec.Default)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	obs, err := Observe(context.Background(), []string{bins.Libnrt, bins.Libnccom}, base, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := New(base, "inmemory", obs, "")
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("release new wrote under TMPDIR: %v", entries)
	}
	if len(rel.Spec.Structs) != len(base.Structs) || rel.Spec.Release.Name != "inmemory" {
		t.Fatalf("in-memory release: %q with %d structs", rel.Spec.Release.Name, len(rel.Spec.Structs))
	}
	root := t.TempDir()
	if err := rel.Write(filepath.Join(root, "inmemory"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("writing the release used TMPDIR: %v", entries)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 || entries[0].Name() != "inmemory" {
		t.Fatalf("the target's parent holds %v; want only the release directory", entries)
	}
}

// TestNewReleaseReproducesPlanted: binaries built from the synthetic
// release's generated C, read on top of 2.31.24, give back the synthetic
// spec: the only differences are the addresses of the fixture build.
func TestNewReleaseReproducesPlanted(t *testing.T) {
	bins := buildReleaseBinaries(t, "2.32.0-synthetic")
	base, planted := mustSpec(t, spec.Default), mustSpec(t, "2.32.0-synthetic")
	got, obs := newReleaseFrom(t, base, "reproduced", bins.Libnrt, bins.Libnccom)

	if !obs.HaveCompat || obs.CompatID != 90 {
		t.Errorf("compat id read from the probe: %d (found %v), want 90", obs.CompatID, obs.HaveCompat)
	}
	r := diff.Diff(planted, got)
	for _, c := range r.Changes {
		if c.Severity != diff.Informational {
			t.Errorf("not reproduced: %s %s %s: %s -> %s", c.Severity, c.Kind, c.Subject, c.Old, c.New)
		}
		switch c.Kind {
		case diff.ForwardAddress, diff.ReverseAddress, diff.ForwardMoved:
		default:
			t.Errorf("unexpected informational change: %s %s %s -> %s", c.Kind, c.Subject, c.Old, c.New)
		}
	}
	// Provenance: confirmed rows name the binaries and their build-ids;
	// what the binaries cannot show is carried over and says so.
	f := got.ForwardByName("neuronNetGetProperties")
	if f == nil || !strings.Contains(f.Source, "libnccom.so.2 (build-id ") || f.Signature.C(f.Name) != "NRT_STATUS neuronNetGetProperties(int dev, void* props)" {
		t.Errorf("new forward row: %+v", f)
	}
	if got.Release.LibNCCOM.BuildID == "" || got.Release.LibNCCOM.BuildID == base.Release.LibNCCOM.BuildID {
		t.Errorf("libnccom build-id %q not taken from the binary", got.Release.LibNCCOM.BuildID)
	}
	carried := strings.Join(got.Release.CarriedOver, "\n")
	for _, want := range []string{"constant ENC_SIG_MSG_SIZE", "message uid_failed"} {
		if !strings.Contains(carried, want) {
			t.Errorf("carried_over lacks %q", want)
		}
	}
	if strings.Contains(carried, "struct enc_glb_comm") || strings.Contains(carried, "constant NCCOM_COMPAT_ID") {
		t.Errorf("carried_over lists facts the binaries confirmed:\n%s", carried)
	}
	// Its bindings generate, and the C compiles.
	files, err := gen.Generate(got)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := gen.Write(out, files); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(out, "c")
	os.WriteFile(filepath.Join(c, "check.c"), []byte("#define _GNU_SOURCE\n#include \""+gen.HeaderName+"\"\n#include \""+gen.SlotsHeader+"\"\n"), 0o644)
	for _, src := range []string{"check.c", gen.SlotsSource, gen.StubSource} {
		if err := cc.Object(c, src, src+".o", cc.Strict...); err != nil {
			t.Errorf("generated C of the new release: %v", err)
		}
	}
	// Its Go bindings offer what the planted release's do (the runtime builds
	// against either through the release selector).
	plantedFiles, err := gen.Generate(planted)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := gen.ExportedNames(plantedFiles)
	b, _ := gen.ExportedNames(files)
	if strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("the new release's Go API differs from the planted one's:\nplanted: %v\nnew:     %v", a, b)
	}
	// And the new release's diff against the old one is the planted one.
	want, have := kindSet(diff.Diff(base, planted)), kindSet(diff.Diff(base, got))
	if want != have {
		t.Errorf("diff 2.31.24 -> reproduced:\n%s\nwant (2.31.24 -> planted):\n%s", have, want)
	}
}

// kindSet lists the boundary changes of a report, one per line.
func kindSet(r diff.Report) string {
	var out []string
	for _, c := range r.Changes {
		if c.Severity != diff.Informational || c.Kind == diff.MessageChanged {
			out = append(out, string(c.Severity)+" "+c.Kind+" "+c.Subject)
		}
	}
	return strings.Join(out, "\n")
}

func mustObserve(t *testing.T, base *spec.Spec, files ...string) *Observed {
	t.Helper()
	obs, err := Observe(context.Background(), files, base, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

func mustSpec(t *testing.T, r string) *spec.Spec {
	t.Helper()
	s, err := compiled.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNewReleaseFaults: the observation reports what it cannot accept.
func TestNewReleaseFaults(t *testing.T) {
	bins := buildReleaseBinaries(t, spec.Default)
	base := mustSpec(t, spec.Default)

	// The same release again: nothing but the binaries' own addresses moves.
	same, _ := newReleaseFrom(t, base, "same", bins.Libnrt, bins.Libnccom)
	for _, c := range diff.Diff(base, same).Changes {
		if c.Severity != diff.Informational {
			t.Errorf("same release: %s %s %s", c.Severity, c.Kind, c.Subject)
		}
	}
	// A libnccom missing a symbol: alone, the row is removed and the table
	// closes up; next to a libnrt that still has the slot, the pair is refused.
	omit := buildReleaseBinaries(t, spec.Default, "-DNCCOM_STUB_OMIT_neuronNetTest")
	got, _ := newReleaseFrom(t, base, "omit", omit.Libnccom)
	r := diff.Diff(base, got)
	if ks := kindSet(r); !strings.Contains(ks, "incompatible forward-removed neuronNetTest") {
		t.Errorf("omitted symbol not reported:\n%s", ks)
	}
	if len(got.Forward) != 36 {
		t.Errorf("%d forward rows after the removal", len(got.Forward))
	}
	if _, err := New(base, "pair", mustObserve(t, base, bins.Libnrt, omit.Libnccom), ""); err == nil || !strings.Contains(err.Error(), "not a release pair") {
		t.Errorf("mismatched pair: %v", err)
	}
	// Two libnccoms, a file that is no ELF, a target that exists.
	if _, err := Observe(context.Background(), []string{bins.Libnccom, omit.Libnccom}, base, ObserveOptions{}); err == nil || !strings.Contains(err.Error(), "a second libnccom") {
		t.Errorf("two libnccoms: %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.so")
	os.WriteFile(junk, []byte("not an ELF"), 0o644)
	if _, err := Observe(context.Background(), []string{junk}, base, ObserveOptions{}); err == nil || !strings.Contains(err.Error(), "junk.so") {
		t.Errorf("junk input: %v", err)
	}
	obs, _ := Observe(context.Background(), []string{bins.Libnrt}, base, ObserveOptions{})
	rel, err := New(base, "x", obs, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "x")
	os.MkdirAll(dir, 0o755)
	if err := rel.Write(dir, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing target: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the existing directory was written to: %v", entries)
	}
}

// TestSignaturesDebugDir: libnccom's prototypes come from its DWARF wherever
// --debug-dir puts it, and a broken debug file there is reported, not
// taken for a binary without DWARF.
func TestSignaturesDebugDir(t *testing.T) {
	bins := buildReleaseBinaries(t, "2.32.0-synthetic")
	base := mustSpec(t, spec.Default)
	dir := t.TempDir()
	stripped, debugDir, debug, err := fixture.SplitDebug(bins.Libnccom, dir)
	if errors.Is(err, fixture.ErrNoObjcopy) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	full := mustObserve(t, base, bins.Libnccom)
	if len(full.Signatures) == 0 {
		t.Fatal("no prototypes read from the unstripped libnccom")
	}
	none, err := Observe(context.Background(), []string{stripped}, base, ObserveOptions{DebugDirs: []string{filepath.Join(dir, "empty")}})
	if err != nil {
		t.Fatalf("a stripped libnccom without debug files gives symbols only: %v", err)
	}
	if len(none.Signatures) != 0 {
		t.Fatalf("prototypes without any DWARF: %v", none.Signatures)
	}
	viaDir, err := Observe(context.Background(), []string{stripped}, base, ObserveOptions{DebugDirs: []string{debugDir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(viaDir.Signatures) != len(full.Signatures) {
		t.Fatalf("through --debug-dir: %d prototypes, unstripped: %d", len(viaDir.Signatures), len(full.Signatures))
	}
	for name, sg := range full.Signatures {
		if got := viaDir.Signatures[name]; got.Prototype() != sg.Prototype() {
			t.Errorf("%s through --debug-dir: %+v, unstripped: %+v", name, got, sg)
		}
	}
	b, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(debug, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Observe(context.Background(), []string{stripped}, base, ObserveOptions{DebugDirs: []string{debugDir}})
	if err == nil || !strings.Contains(err.Error(), debug) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a truncated debug file: want one line naming %s, got %v", debug, err)
	}
}
