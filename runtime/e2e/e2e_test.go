package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

var update = flag.Bool("update", false, "rewrite each scenario's expected.txt with what it printed")

// The artefacts every scenario runs, built once, by the first test that
// needs them (a fuzz worker of FuzzCEscape needs none of them).
var (
	tree      *builder.Tree
	buildRoot string
	buildOnce sync.Once
	buildErr  error
	env       []string
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "nrtabi-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Where buildAll puts things.
func libnrtDir() string                       { return filepath.Join(buildRoot, "lib") }
func stubsDir() string                        { return filepath.Join(buildRoot, "stubs") }
func variantDir(v builder.LinkVariant) string { return filepath.Join(buildRoot, "variants", string(v)) }
func minimalDir() string                      { return filepath.Join(buildRoot, "variants", "minimal") }
func stubPath(name string) string             { return filepath.Join(stubsDir(), name, builder.StubFile) }
func hostPath() string                        { return filepath.Join(buildRoot, "bin", "host") }
func linkhostPath() string                    { return filepath.Join(buildRoot, "bin", "linkhost") }

// variantLib is a link variant's libnrt.so.1; Versioned is the runtime itself.
func variantLib(v builder.LinkVariant) string {
	if v == builder.Versioned {
		return filepath.Join(libnrtDir(), builder.LibnrtFile)
	}
	return filepath.Join(variantDir(v), builder.LibnrtFile)
}

// roundTripIndex is the forward entry point whose double calls back into
// libnrt (nec_get_peer_mla_idx).
func roundTripIndex() int { return tree.Spec.ForwardByName("neuronGetPeerDeviceId").Index }

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}

func requireBuild(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() { buildErr = buildAll(buildRoot) })
	if buildErr != nil {
		t.Fatalf("building the artefacts: %v", buildErr)
	}
}

func buildAll(dir string) error {
	// Built once for the whole package, outside any one test.
	ctx := context.Background()
	var err error
	// The release this test binary was built for (its -tags): the C side
	// and the Go side of every scenario run on one layout.
	if tree, err = builder.Open(abi.Release); err != nil {
		return err
	}
	lib, err := tree.BuildLibnrt(ctx, libnrtDir(), builder.Versioned)
	if err != nil {
		return err
	}
	if err := builder.CheckLibnrtRelease(lib, abi.Release); err != nil {
		return err
	}
	for _, v := range builder.LinkVariants[1:] {
		if _, err := tree.BuildLibnrt(ctx, variantDir(v), v); err != nil {
			return fmt.Errorf("libnrt variant %s: %w", v, err)
		}
	}
	if _, err := tree.BuildMinimalLibnrt(ctx, minimalDir()); err != nil {
		return err
	}
	if _, err := tree.BuildStubs(ctx, libnrtDir(), stubsDir()); err != nil {
		return err
	}
	if _, err := tree.BuildNetPlugin(ctx, stubsDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	if err := tree.BuildHost(ctx, hostPath(), libnrtDir()); err != nil {
		return err
	}
	if err := tree.BuildLinkHost(ctx, linkhostPath()); err != nil {
		return err
	}
	env = []string{
		"BUILD=" + libnrtDir(), "STUBS=" + stubsDir(), "VARIANTS=" + filepath.Join(buildRoot, "variants"),
		"HOST=" + hostPath(), "LINKHOST=" + linkhostPath(),
		"ROUNDTRIP=" + strconv.Itoa(roundTripIndex()),
		"INCOMPATIBLE=" + tree.StubIncompatible(),
		"LD_LIBRARY_PATH=", "NRTABI_LOG_LEVEL=",
	}
	return nil
}

var timeAttr = regexp.MustCompile(`time=\S+ `)

// normalize makes output comparable across runs: no timestamps, no
// temporary paths.
func normalize(out, scenario string) string {
	out = timeAttr.ReplaceAllString(out, "")
	out = strings.ReplaceAll(out, buildRoot, "<build>")
	out = strings.ReplaceAll(out, mustAbs(scenario), "<scenario>")
	return out
}

// runScenario runs one scenario's run.sh and returns its normalized output.
func runScenario(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("sh", "run.sh")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "SCENARIO="+mustAbs(dir))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s/run.sh: %v\n%s", dir, err, out.String())
	}
	return normalize(out.String(), dir)
}

// TestScenarios runs every scenario and compares its output with the
// expected output next to it.
func TestScenarios(t *testing.T) {
	requireBuild(t)
	scripts, err := filepath.Glob(filepath.Join("testdata", "*", "run.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scenarios under testdata: %v", err)
	}
	for _, script := range scripts {
		dir := filepath.Dir(script)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := runScenario(t, dir)
			want := filepath.Join(dir, "expected.txt")
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(exp) {
				t.Errorf("%s differs from what the scenario printed:\n%s", want, lineDiff(string(exp), got))
			}
		})
	}
}

// lineDiff shows the first differing lines.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n  want: %s\n  got:  %s\n", i+1, wl, gl)
			if shown++; shown == 8 {
				b.WriteString("  ...\n")
				break
			}
		}
	}
	return b.String()
}
