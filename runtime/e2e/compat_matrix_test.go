package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/compat"
	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec"
)

// The compat matrix: every pairing of libnrt variants and libnccom
// doubles is predicted by compat from the files alone, then loaded for
// real (linkhost: dlopen through ld.so, then the Go libnrt's handoff), and
// the prediction must be what happened, class and subject
// (docs/nrtabi-compat.md#prediction-against-reality). Cost: the builds the
// package already makes, the reference libnccom, two more doubles and the
// plugins (~15 s of cc on 2 cores), and one linkhost child per cell (64
// cells, ~2 s).

// The doubles only this test builds, from the generated stub source.
const (
	stubUnversionedNeed = "compat-unversioned-need" // reverse imports without version: not linked against libnrt
	stubRenamedNeed     = "compat-renamed-need"     // nec_get_peer_mla_idx imported as another name
	referenceLibnccom   = "reference"               // runtime/libnccom, the reference library itself
	renamedCallback     = "nec_get_peer_mla_idx_renamed"
)

var (
	compatOnce  sync.Once
	compatErr   error
	compatDir   string
	compatSpecs *compat.Set
)

func requireCompatBuild(t *testing.T) {
	t.Helper()
	requireBuild(t)
	compatOnce.Do(func() { compatErr = buildCompat() })
	if compatErr != nil {
		t.Fatalf("building the compat doubles: %v", compatErr)
	}
}

func buildCompat() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	compatDir = filepath.Join(buildRoot, "compat")
	extra := []builder.Stub{
		{Name: stubUnversionedNeed, ForwardOnly: true},
		{Name: stubRenamedNeed, Defines: []string{"nec_get_peer_mla_idx=" + renamedCallback}},
	}
	for _, st := range extra {
		if _, err := tree.BuildStub(ctx, libnrtDir(), compatDir, st); err != nil {
			return err
		}
	}
	if _, err := tree.BuildLibnccom(ctx, libnrtDir(), filepath.Join(compatDir, referenceLibnccom), builder.Libnccom{}); err != nil {
		return err
	}
	if err := buildSwappedVersion(ctx); err != nil {
		return err
	}
	if err := buildProbeDump(ctx); err != nil {
		return err
	}
	for _, d := range []string{builder.NetDoubleGood, builder.NetDoubleV4Only, builder.NetDoubleNoTables} {
		nd, err := builder.NetDoubleByName(d)
		if err != nil {
			return err
		}
		if _, err := tree.BuildNetDouble(ctx, filepath.Join(compatDir, "net"), nd, false); err != nil {
			return err
		}
	}
	// A plugin with only a table older than any the libraries take.
	old := filepath.Join(compatDir, "net", "v3-only")
	if err := os.MkdirAll(old, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(old, "v3.c"), []byte("void *ncclNetPlugin_v3[16];\n"), 0o644); err != nil {
		return err
	}
	if err := cc.SharedContext(ctx, old, filepath.Join(old, "libnccom-net.so"), "libnccom-net.so", "", []string{filepath.Join(old, "v3.c")}, cc.Strict...); err != nil {
		return err
	}
	var specs []*spec.Spec
	for _, r := range spec.Releases() {
		sp, err := spec.Load(r)
		if err != nil {
			return err
		}
		specs = append(specs, sp)
	}
	compatSpecs = compat.NewSet(specs)
	return nil
}

func compatStub(name string) string {
	if name == stubUnversionedNeed || name == stubRenamedNeed || name == stubSwappedVersion {
		return filepath.Join(compatDir, name, builder.StubFile)
	}
	if name == referenceLibnccom {
		return filepath.Join(compatDir, name, builder.LibnccomFile)
	}
	return stubPath(name)
}

func compatPlugin(name string) string {
	return filepath.Join(compatDir, "net", name, "libnccom-net.so")
}

// observed is what a real load did: the class of where it stopped and the
// name it stopped on.
type observed struct {
	class   compat.Class
	subject string
}

var (
	undefinedSym = regexp.MustCompile(`undefined symbol: ([A-Za-z0-9_]+)`)
	missingNode  = regexp.MustCompile("version `([^']+)' not found")
	missingSym   = regexp.MustCompile(`cannot find symbol "([^"]+)"`)
	compatSeen   = regexp.MustCompile(`Compatibility id: ([0-9]+)`)
)

// observe classifies linkhost's output; ok false when it matches no class.
func observe(text string, code int, plugin bool) (observed, bool) {
	switch {
	case code == 127 && strings.Contains(text, "Inconsistency detected by ld.so"):
		return observed{compat.Reverse, ""}, true
	case strings.Contains(text, "libnccom (dlopen by the host): loaded"):
		return observed{compat.Loads, ""}, true
	case strings.Contains(text, "Get Version Info API is not implemented"):
		return observed{compat.Dlsym, tree.Spec.ByIndex()[0].Name}, true
	case compatSeen.MatchString(text):
		return observed{compat.CompatGate, "compatibility_version " + compatSeen.FindStringSubmatch(text)[1]}, true
	case missingSym.MatchString(text): // dlsym's reason also says "undefined symbol"
		return observed{compat.Dlsym, missingSym.FindStringSubmatch(text)[1]}, true
	case missingNode.MatchString(text):
		return observed{compat.Reverse, missingNode.FindStringSubmatch(text)[1]}, true
	case undefinedSym.MatchString(text):
		return observed{compat.Reverse, undefinedSym.FindStringSubmatch(text)[1]}, true
	case plugin && strings.Contains(text, "is not a net plugin"):
		return observed{compat.NetPlugin, ""}, true
	case code == 0 && strings.Contains(text, "nrtabi_init: status 0, "+strconv.Itoa(len(tree.Spec.Forward))+" slots valid"):
		return observed{compat.Loads, ""}, true
	}
	return observed{}, false
}

// predictedSubject is the subject of the finding that decided, "" for loads.
func predictedSubject(r *compat.Report) string {
	for _, f := range r.Findings {
		if f.Class == r.Verdict && f.Fatal {
			return f.Subject
		}
	}
	return ""
}

// predictedFix is the fix of the finding that decided.
func predictedFix(r *compat.Report) string {
	for _, f := range r.Findings {
		if f.Class == r.Verdict && f.Fatal {
			return f.Fix
		}
	}
	return ""
}

// compatAgree: same class, and the subject reality names is the one predicted
// (a reverse subject "sym@NODE" covers ld.so's "sym").
func compatAgree(pred *compat.Report, obs observed) bool {
	if pred.Verdict != obs.class {
		return false
	}
	ps := predictedSubject(pred)
	switch obs.class {
	case compat.Reverse:
		// ld.so names the first unmet need in its relocation order, which
		// the files do not fix: any fatal reverse finding may be it.
		if obs.subject == "" {
			return true
		}
		for _, f := range pred.Findings {
			if f.Class == compat.Reverse && f.Fatal && (f.Subject == obs.subject || strings.HasPrefix(f.Subject, obs.subject+"@")) {
				return true
			}
		}
		return false
	case compat.Dlsym, compat.CompatGate, compat.Layout:
		return ps == obs.subject
	}
	return true
}

// runLinkhost loads libnrt, then libnccom, in a child process bounded in
// time; env, when given, is added to the test's environment (the compat
// matrix names its plugin there and clears LD_LIBRARY_PATH).
func runLinkhost(t *testing.T, libnrt, libnccom string, env ...string) (string, int) {
	t.Helper()
	return runLinkhostIndex(t, libnrt, libnccom, roundTripIndex(), env...)
}

// runLinkhostIndex is runLinkhost calling forward entry point index after
// the handoff.
func runLinkhostIndex(t *testing.T, libnrt, libnccom string, index int, env ...string) (string, int) {
	t.Helper()
	return runCommand(t, env, linkhostPath(), libnrt, libnccom, strconv.Itoa(index))
}

// runCommand runs a test program bounded in time, with env (when given)
// added to the test's environment; its output and exit status.
func runCommand(t *testing.T, env []string, prog string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), 0
}

func TestCompatMatrix(t *testing.T) {
	requireCompatBuild(t)
	// The minimal C libnrt has no nrtabi_init: linkhost dlopens libnccom
	// itself, so its cells hold the dlopen stage to reality and the rest
	// to the spec (it names no release: the tree's is given).
	libnrts := []struct{ name, path, release string }{
		{"versioned", variantLib(builder.Versioned), ""},
		{"base-fallback", variantLib(builder.BaseFallback), ""},
		{"no-node", variantLib(builder.NoNode), ""},
		{"not-exported", variantLib(builder.NotExported), ""},
		{"unversioned-go", variantLib(builder.Unversioned), ""},
		{"unversioned-c", filepath.Join(minimalDir(), builder.LibnrtFile), tree.Spec.Release.Name},
	}
	stubs := []string{referenceLibnccom, builder.StubGood, tree.StubIncompatible(), builder.StubNoProbe, builder.StubForwardVersioned, stubUnversionedNeed, stubRenamedNeed, stubSwappedVersion}
	for _, i := range tree.MissingIndices() {
		stubs = append(stubs, builder.StubMissing(i))
	}
	seen := map[compat.Class]int{}
	for _, l := range libnrts {
		for _, s := range stubs {
			t.Run(l.name+"/"+s, func(t *testing.T) {
				seen[compatCell(t, l.path, compatStub(s), "", l.release)]++
			})
		}
	}
	for _, p := range []string{builder.NetDoubleGood, builder.NetDoubleV4Only, builder.NetDoubleNoTables, "v3-only"} {
		t.Run("versioned/good/plugin-"+p, func(t *testing.T) {
			seen[compatCell(t, variantLib(builder.Versioned), stubPath(builder.StubGood), compatPlugin(p), "")]++
		})
	}
	for _, c := range []compat.Class{compat.Loads, compat.Reverse, compat.Dlsym, compat.CompatGate, compat.NetPlugin, compat.Layout} {
		if seen[c] == 0 {
			t.Errorf("no cell of the matrix is of class %s", c)
		}
	}
	t.Logf("%d libnrt × %d libnccom + %d plugin cells: %v", len(libnrts), len(stubs), 4, seen)
}

// TestCompatMatrixCatches: the matrix's judge, compatAgree, fails a
// prediction that is not what happened: a silent disagreement predicted as
// loading, a loading pair predicted as silent, and the wrong field.
func TestCompatMatrixCatches(t *testing.T) {
	requireCompatBuild(t)
	lib := variantLib(builder.Versioned)
	predict := func(stub string) *compat.Report {
		r, err := compat.Predict(t.Context(), compatSpecs, lib, compatStub(stub), "", compat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	good, swapped := predict(builder.StubGood), predict(stubSwappedVersion)
	text, code := runLinkhost(t, lib, compatStub(stubSwappedVersion), "LD_LIBRARY_PATH=")
	obs, ok := observe(text, code, false)
	if !ok {
		t.Fatalf("the swapped double's load matches no class:\n%s", text)
	}
	silent := observeLayout(t, lib, compatStub(stubSwappedVersion), obs)
	if silent.class != compat.Layout {
		t.Fatalf("the swapped double's bytes read back the same: %+v", silent)
	}
	for _, c := range []struct {
		name string
		pred *compat.Report
		obs  observed
	}{
		{"a silent disagreement predicted as loading", good, silent},
		{"a clean load predicted as silent", swapped, observed{compat.Loads, ""}},
		{"the wrong field", swapped, observed{compat.Layout, sharedStruct + ".minor"}},
	} {
		if compatAgree(c.pred, c.obs) {
			t.Errorf("%s: the judge agreed (predicted %s %q, observed %s %q)", c.name, c.pred.Verdict, predictedSubject(c.pred), c.obs.class, c.obs.subject)
		}
	}
}

// compatCell predicts one pairing, loads it, and holds one to the other.
func compatCell(t *testing.T, libnrt, libnccom, plugin, release string) compat.Class {
	t.Helper()
	pred, err := compat.Predict(t.Context(), compatSpecs, libnrt, libnccom, plugin, compat.Options{Release: release})
	if err != nil {
		t.Fatal(err)
	}
	text, code := runLinkhost(t, libnrt, libnccom, "LD_LIBRARY_PATH=", "NRTABI_NET_PLUGIN="+plugin)
	obs, ok := observe(text, code, plugin != "")
	if !ok {
		t.Fatalf("the real load matches no verdict class (exit %d):\n%s", code, text)
	}
	// A pairing whose handoff succeeded is held to the shared struct's
	// bytes (compat_layout_test.go): the silent class. linkhost's own
	// dlopen (a libnrt without the handoff) reads no struct.
	if obs.class == compat.Loads && plugin == "" && !strings.Contains(text, "(dlopen by the host)") {
		obs = observeLayout(t, libnrt, libnccom, obs)
	}
	t.Logf("predicted %s (%s), layout %s, fix %q; the load: %s (%s)", pred.Verdict, predictedSubject(pred), pred.Layout, predictedFix(pred), obs.class, obs.subject)
	if !compatAgree(pred, obs) {
		t.Errorf("compat predicted %s (%s), the real load did %s (%s), exit %d\nprediction: %+v\nload:\n%s",
			pred.Verdict, predictedSubject(pred), obs.class, obs.subject, code, pred.Findings, text)
	}
	return obs.class
}
