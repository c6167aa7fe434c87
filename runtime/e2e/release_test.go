package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
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
	if abi.Release == nextRelease {
		t.Skipf("skipping: this test binary is built for %s itself (-tags %s); the other release is the point", nextRelease, abi.BuildTag)
	}
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

// TestLibnrtReleaseIdentity: a libnrt.so.1 names the release it was built
// for (docs/runtime-boundary.md#release-identity), read from the file and
// through the real ld.so, and the check refuses a library built for another
// release: the next release's library is planted where this release's
// belongs, and both the ELF check and a host that asks nrtabi_release() at
// run time name the two releases.
func TestLibnrtReleaseIdentity(t *testing.T) {
	if abi.Release == nextRelease {
		t.Skipf("skipping: this test binary is built for %s itself (-tags %s); the planted library is that release's", nextRelease, abi.BuildTag)
	}
	buildNext(t)
	here, there := filepath.Join(libnrtDir(), builder.LibnrtFile), nextDir("lib", builder.LibnrtFile)
	for lib, want := range map[string]string{here: abi.Release, there: nextRelease} {
		if got, err := builder.LibnrtRelease(lib); err != nil || got != want {
			t.Errorf("LibnrtRelease(%s) = %q, %v; want %s", lib, got, err, want)
		}
		if err := builder.CheckLibnrtRelease(lib, want); err != nil {
			t.Errorf("CheckLibnrtRelease(%s, %s): %v", lib, want, err)
		}
	}
	err := builder.CheckLibnrtRelease(there, abi.Release)
	var wrong *builder.WrongRelease
	if !errors.As(err, &wrong) || wrong.Got != nextRelease || wrong.Want != abi.Release ||
		!strings.Contains(err.Error(), "built for release "+nextRelease+", not "+abi.Release) {
		t.Errorf("the planted %s library passed as %s: %v", nextRelease, abi.Release, err)
	}
	// A library that names no release (the minimal libnrt: not runtime/libnrt) is refused by name.
	if _, err := builder.LibnrtRelease(filepath.Join(minimalDir(), builder.LibnrtFile)); err == nil || !strings.Contains(err.Error(), "exports no nrtabi_release_name") {
		t.Errorf("a libnrt without the symbol: %v", err)
	}

	// Through ld.so: a host linked against this release's libnrt.so.1 asks
	// it at run time; LD_LIBRARY_PATH plants the other one.
	dir := t.TempDir()
	src := filepath.Join(dir, "releasehost.c")
	prog := `#include <stdio.h>
#include <string.h>
#include "nrtabi_runtime.h"
int main(int argc, char **argv) {
	const char *got = nrtabi_release();
	if (argc != 2) { fprintf(stderr, "usage: releasehost RELEASE\n"); return 2; }
	if (strcmp(got, argv[1]) != 0) { printf("libnrt.so.1 was built for release %s, not %s\n", got, argv[1]); return 1; }
	printf("libnrt.so.1 release %s\n", got);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(dir, "releasehost")
	if err := tree.BuildProgram(t.Context(), host, []string{src}, "-L"+libnrtDir(), "-l:"+builder.LibnrtFile); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lib, want string
		rc        int
	}{
		{libnrtDir(), "libnrt.so.1 release " + abi.Release + "\n", 0},
		{nextDir("lib"), "libnrt.so.1 was built for release " + nextRelease + ", not " + abi.Release + "\n", 1},
	} {
		cmd := exec.CommandContext(t.Context(), host, abi.Release)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+c.lib)
		out, err := cmd.Output()
		rc := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			rc = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if rc != c.rc || string(out) != c.want {
			t.Errorf("releasehost against %s: rc %d %q, want rc %d %q", c.lib, rc, out, c.rc, c.want)
		}
	}
}
