package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The CPU profile of extract --all: nrtabi has no profile flag, so a small
// program outside the module, built against this checkout (a replace
// directive), runs release.ExtractContext under runtime/pprof. It profiles
// the checkout's code, not a -nrtabi binary.

const profileHarness = `package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/nrtabi/nrtabi/release"
	"github.com/nrtabi/nrtabi/spec"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

func main() {
	out := flag.String("o", "cpu.pprof", "the CPU profile")
	jobs := flag.Int("j", 2, "extract --all -j")
	least := flag.Duration("for", 3*time.Second, "repeat the extraction until this much wall time has passed (at least 3 runs)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: profile [-o FILE] [-j N] [-for D] FILE")
		os.Exit(2)
	}
	sp, err := compiled.Load(spec.Default)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	n := 0
	for n < 3 || time.Since(start) < *least {
		err := release.ExtractContext(context.Background(), flag.Arg(0), io.Discard, release.ExtractOptions{Spec: sp, All: true, Jobs: *jobs})
		var refused *release.RefusedError
		if err != nil && !errors.As(err, &refused) {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n++
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d runs of extract --all -j %d in %.2f s\n", n, *jobs, time.Since(start).Seconds())
}
`

// profileExtract builds the harness, profiles extract --all -j 2 of file
// into dir/extract-all.pprof and prints `go tool pprof -top`'s first five
// functions.
func profileExtract(ctx context.Context, w io.Writer, dir, cache, file string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	src := filepath.Join(cache, "profile-harness")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	ver, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return fmt.Errorf("go env GOVERSION: %w", err)
	}
	gomod := fmt.Sprintf("module nrtabiprofile\n\ngo %s\n\nrequire github.com/nrtabi/nrtabi v0.0.0\n\nreplace github.com/nrtabi/nrtabi => %s\n",
		strings.TrimPrefix(strings.TrimSpace(string(ver)), "go"), root)
	for name, text := range map[string][]byte{"main.go": []byte(profileHarness), "go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(src, name), text, 0o644); err != nil {
			return err
		}
	}
	bin := filepath.Join(src, "profile")
	build := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the profile harness against %s: %w\n%s", root, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prof := filepath.Join(dir, "extract-all.pprof")
	run := exec.CommandContext(ctx, bin, "-o", prof, "-j", "2", file)
	out, err := run.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the profile harness on %s: %w\n%s", file, err, out)
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=5", bin, prof).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof -top %s: %w\n%s", prof, err, top)
	}
	cum, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=12", bin, prof).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof -top -cum %s: %w\n%s", prof, err, cum)
	}
	fmt.Fprintf(w, "CPU profile of release.ExtractContext (All, Jobs 2) as built from %s, on %s: %s", root, file, out)
	fmt.Fprintf(w, "profile: %s\n\ngo tool pprof -top (flat), the first five:\n\n```\n%s```\n", prof, topFive(string(top), nil))
	fmt.Fprintf(w, "\ngo tool pprof -top -cum, the first five outside the Go runtime:\n\n```\n%s```\n", topFive(string(cum), func(name string) bool {
		return !strings.HasPrefix(name, "runtime.") && !strings.HasPrefix(name, "runtime/") && name != "main.main"
	}))
	return nil
}

// topFive keeps pprof -top's summary lines and its first five rows that
// keep (nil: every row) accepts by function name.
func topFive(top string, keep func(name string) bool) string {
	var b strings.Builder
	rows := 0
	for _, l := range strings.Split(top, "\n") {
		f := strings.Fields(l)
		isRow := len(f) >= 6 && strings.HasSuffix(f[1], "%")
		if isRow {
			if rows == 5 {
				break
			}
			if keep != nil && !keep(f[5]) {
				continue
			}
			rows++
		}
		if l != "" && !strings.HasPrefix(l, "Build ID:") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
