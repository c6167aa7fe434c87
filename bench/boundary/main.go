// Command boundary measures the cost of one forward call across the runtime
// boundary and compares each way of calling with a raw indirect call through
// the slot, in the same run:
//
//	(a) raw indirect call through a slot
//	(b) the guarded trampoline             goal b/a <= 1.15
//	(c) the exempt hot path                goal c/a <= 1.02
//	(d) a Go caller through cgo into (b)
//
// (a)-(c) are a C program over the generated slot table and trampolines,
// calling into the real forward-only libnccom double; (d) is go test -bench
// in runtime/nrt against the same double. Run it with bench/boundary.sh.
//
// Its results, dated, are in docs/benchmarks.md#the-forward-call.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/nrtabi/nrtabi/internal/cc"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

func main() {
	iters := flag.Int("iterations", 10000000, "calls per round of the C measurements")
	rounds := flag.Int("rounds", 5, "rounds of the C measurements per process (the fastest is kept)")
	procs := flag.Int("processes", 9, "processes of the C measurements (the fastest is kept)")
	goRuns := flag.Int("go-count", 5, "go test -count for (d) (the fastest is kept)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *iters, *rounds, *procs, *goRuns); err != nil {
		fmt.Fprintln(os.Stderr, "bench/boundary:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, iters, rounds, procs, goRuns int) error {
	t, err := builder.Open("")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "nrtabi-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	st, err := t.StubByName(builder.StubForwardOnly)
	if err != nil {
		return err
	}
	stub, err := t.BuildStub(ctx, "", work, st)
	if err != nil {
		return err
	}
	prog, err := buildBench(t, work)
	if err != nil {
		return err
	}
	// Several processes, so a burst of load from elsewhere on a shared
	// machine does not decide a figure; each variant keeps its fastest round
	// in any process.
	c := map[string]float64{}
	per := map[string][]float64{} // each process's fastest round, for the median
	for p := 0; p < procs; p++ {
		out, err := exec.CommandContext(ctx, prog, stub, strconv.Itoa(iters), strconv.Itoa(rounds)).Output()
		if err != nil {
			return fmt.Errorf("%s: %w", prog, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var name string
			var ns float64
			if _, err := fmt.Sscan(sc.Text(), &name, &ns); err == nil {
				per[name] = append(per[name], ns)
				if b, ok := c[name]; !ok || ns < b {
					c[name] = ns
				}
			}
		}
	}
	d, err := goBench(t.Root, goRuns)
	if err != nil {
		return err
	}

	fmt.Printf("forward call cost, release %s (ns/call; C: fastest of %d rounds of %d calls in %d processes; Go: fastest of %d runs)\n\n",
		t.Spec.Release.Name, rounds, iters, procs, goRuns)
	median := func(name string) string {
		xs := append([]float64(nil), per[name]...)
		if len(xs) == 0 {
			return "       -"
		}
		sort.Float64s(xs)
		return fmt.Sprintf("%8.3f", xs[len(xs)/2])
	}
	fmt.Printf("  %-58s %8s %8s\n", "", "fastest", "median")
	crow := func(label, name string, ratio string) {
		fmt.Printf("  %-58s %8.3f %s  %s\n", label, c[name], median(name), ratio)
	}
	row := func(label string, ns float64, ratio string) {
		fmt.Printf("  %-58s %8.3f %8s  %s\n", label, ns, "", ratio)
	}
	ratio := func(name string, x, y float64, goal float64) string {
		s := fmt.Sprintf("%s = %.3f", name, x/y)
		if goal > 0 {
			verdict := "met"
			if x/y > goal {
				verdict = "MISSED"
			}
			s += fmt.Sprintf("  (goal <= %.2f: %s)", goal, verdict)
		}
		return s
	}
	crow("(a)  raw indirect call through the slot (StopNetworkProxy)", "a", "")
	crow("(b)  guarded trampoline ncclStopNetworkProxy, inlined", "b", ratio("b/a", c["b"], c["a"], 1.15))
	crow("     the same trampoline called out of line", "b_ool", ratio("b_ool/a", c["b_ool"], c["a"], 0))
	crow("(a') raw indirect call through the hot slot", "a_hot", "")
	crow("(c)  exempt hot path ncclNetworkProxyProgress, inlined", "c", ratio("c/a", c["c"], c["a"], 1.02)+"   "+ratio("c/a'", c["c"], c["a_hot"], 0))
	crow("     the hot path called out of line", "c_ool", ratio("c_ool/a'", c["c_ool"], c["a_hot"], 0))
	row("(d)  Go -> cgo -> guarded trampoline (nrt.StopNetworkProxy)", d["BenchmarkGuardedCgo"], ratio("d/b", d["BenchmarkGuardedCgo"], c["b"], 0))
	row("     Go -> cgo -> hot path (nrt.NetworkProxyProgress)", d["BenchmarkHotCgo"], ratio("/c", d["BenchmarkHotCgo"], c["c"], 0))
	fmt.Println("\nRatios use the fastest figures; the median is over each process's fastest round.")
	fmt.Println("(d) is dominated by the cgo transition, which a C caller inside libnrt does not pay.")
	return nil
}

// buildBench compiles the C measurements against the generated slot table,
// with the optimisation the runtime's cgo build uses (-O2).
func buildBench(t *builder.Tree, dir string) (string, error) {
	if err := cc.Available(); err != nil {
		return "", err
	}
	src := filepath.Join(t.Root, "bench", "boundary", "csrc")
	flags := []string{"-O2", "-D_GNU_SOURCE", "-I" + t.CDir()}
	for _, s := range []struct {
		src, obj string
		extra    []string
	}{
		{filepath.Join(t.CDir(), "nrt_slots.c"), "slots.o", nil},
		{filepath.Join(src, "bench_ool.c"), "ool.o", []string{"-fno-inline"}},
	} {
		if err := cc.Run(dir, append(append(append([]string{"-c"}, flags...), s.extra...), "-o", s.obj, s.src)...); err != nil {
			return "", err
		}
	}
	prog := filepath.Join(dir, "bench")
	args := append(append([]string{}, flags...), "-o", prog, filepath.Join(src, "bench.c"), "ool.o", "slots.o", "-ldl")
	return prog, cc.Run(dir, args...)
}

var benchLine = regexp.MustCompile(`^(Benchmark\w+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op`)

// goBench runs (d) and keeps the fastest run of each benchmark.
func goBench(root string, count int) (map[string]float64, error) {
	cmd := exec.Command("go", "test", "-tags", builder.DefaultBuildTag, "-run", "^$", "-bench", "Cgo$", "-count", strconv.Itoa(count), "./runtime/nrt")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test -bench: %w\n%s", err, out)
	}
	best := map[string]float64{}
	for _, l := range strings.Split(string(out), "\n") {
		m := benchLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		if b, ok := best[m[1]]; !ok || ns < b {
			best[m[1]] = ns
		}
	}
	if len(best) == 0 {
		return nil, fmt.Errorf("go test -bench printed no results:\n%s", out)
	}
	return best, nil
}
