package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

// The runtime built for another release: the synthetic next release, whose
// spec demands compatibility id 90 and has 38 forward entry points. Its
// artefacts are built on first use.
const nextRelease = "2.32.0-synthetic"

var (
	nextOnce sync.Once
	next     *builder.Tree
	nextErr  error
)

func nextDir(parts ...string) string {
	return filepath.Join(append([]string{buildRoot, "release", nextRelease}, parts...)...)
}

func buildNext(t *testing.T) *builder.Tree {
	t.Helper()
	requireBuild(t)
	nextOnce.Do(func() {
		if next, nextErr = builder.Open(nextRelease); nextErr != nil {
			return
		}
		if _, nextErr = next.BuildLibnrt(t.Context(), nextDir("lib"), builder.Versioned); nextErr != nil {
			return
		}
		for _, name := range []string{builder.StubGood, next.StubIncompatible()} {
			st, err := next.StubByName(name)
			if err == nil {
				_, err = next.BuildStub(t.Context(), nextDir("lib"), nextDir("stubs"), st)
			}
			if err != nil {
				nextErr = fmt.Errorf("stub %s: %w", name, err)
				return
			}
		}
		if nextErr = os.MkdirAll(nextDir("bin"), 0o755); nextErr == nil {
			nextErr = next.BuildHost(t.Context(), nextDir("bin", "host"), nextDir("lib"))
		}
	})
	if nextErr != nil {
		t.Fatalf("building the %s runtime: %v", nextRelease, nextErr)
	}
	return next
}

// runWith runs a host against a libnrt directory and one libnccom.
func runWith(t *testing.T, host, libnrtDir, libnccom string) string {
	t.Helper()
	cmd := exec.Command(host, "run", "-", libnccom)
	cmd.Env = append(append(os.Environ(), env...), "LD_LIBRARY_PATH="+libnrtDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s run %s: %v\n%s", host, libnccom, err, out)
	}
	return string(out)
}

// TestRuntimeForAnotherRelease: the runtime regenerated for the synthetic
// release takes its gate from that release's spec. It refuses a compat-89
// double with the release's exact message and accepts a compat-90 one with
// all 38 slots; the 2.31.24 runtime, for its part, refuses the compat-90 one.
func TestRuntimeForAnotherRelease(t *testing.T) {
	n := buildNext(t)
	host, lib := nextDir("bin", "host"), nextDir("lib")
	old := n.StubIncompatible() // one below the release's id: 89
	slots := len(n.Spec.Forward)
	want := cfmt.Sprintf(n.Spec.MessageByID("nccl_incompatible").Text, n.WrongCompat())
	if !strings.HasSuffix(want, "Compatibility id: 89, expected: 90") {
		t.Fatalf("fixture: the synthetic release's message is %q", want)
	}

	out := runWith(t, host, lib, filepath.Join(nextDir("stubs"), old, builder.StubFile))
	if !strings.Contains(out, fmt.Sprintf("after init: 0/%d slots valid, sentinel armed: %s\n", slots, want)) {
		t.Errorf("the %s runtime did not refuse a compat-89 double with %q:\n%s", nextRelease, want, firstLines(out, 6))
	}

	out = runWith(t, host, lib, filepath.Join(nextDir("stubs"), builder.StubGood, builder.StubFile))
	if !strings.Contains(out, fmt.Sprintf("after init: %d/%d slots valid, sentinel clear\n", slots, slots)) ||
		!strings.Contains(out, "neuronNetGetProperties") || strings.Contains(out, "Incompatible") {
		t.Errorf("the %s runtime did not accept a compat-90 double:\n%s", nextRelease, firstLines(out, 6))
	}

	// The 2.31.24 runtime demands 89 and refuses the next release's double.
	out = runWith(t, hostPath(), libnrtDir(), filepath.Join(nextDir("stubs"), builder.StubGood, builder.StubFile))
	want = cfmt.Sprintf(tree.Spec.MessageByID("nccl_incompatible").Text, 90)
	if !strings.Contains(out, "sentinel armed: "+want+"\n") {
		t.Errorf("the %s runtime did not refuse a compat-90 double with %q:\n%s", tree.Spec.Release.Name, want, firstLines(out, 6))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
