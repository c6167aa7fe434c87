// Command bootcomm measures global comm init through the boundary against
// the Go-only bootstrap, in the same run: for each N, the wall time for N C
// host processes (each libnrt.so.1 -> dlopen of the reference libnccom,
// neuronInitGlobalComm over TCP, then the per-NC bootstrap over the
// ncclBootstrap trampolines) to all finish, against `nrtabi-runtime bootstrap
// --local N` (N Go processes doing the same work over runtime/transport/tcp),
// and the time to the last rank's global comm (boot). Medians over -reps
// interleaved runs; the ratio is boundary / Go-only.
//
// Its results, dated, are in
// docs/benchmarks.md#bootstrap-through-the-boundary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

func main() {
	reps := flag.Int("reps", 5, "runs per size")
	sizes := flag.String("sizes", "2 4 8 16 32", "world sizes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *reps, strings.Fields(*sizes)); err != nil {
		fmt.Fprintln(os.Stderr, "bench/bootcomm:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, reps int, sizes []string) error {
	// The release this program was built for (its -tags), so the libraries,
	// the hosts and the Go-only ranks all run on one layout.
	t, err := builder.Open(abi.Release)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "nrtabi-bootcomm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lib, ref := filepath.Join(dir, "lib"), filepath.Join(dir, "ref")
	if _, err := t.BuildLibnrt(ctx, lib, builder.Versioned); err != nil {
		return err
	}
	if _, err := t.BuildLibnccom(ctx, lib, ref, builder.Libnccom{}); err != nil {
		return err
	}
	host, nrtabi := filepath.Join(dir, "worldhost"), filepath.Join(dir, "nrtabi-runtime")
	if err := t.BuildWorldHost(ctx, host, lib); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "go", "build", "-tags", t.BuildTag(), "-o", nrtabi, builder.Module+"/cmd/nrtabi-runtime").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	timeout := "NEURON_CCOM_SOCK_TIMEOUT=30"
	env := []string{"LD_LIBRARY_PATH=" + lib + ":" + ref, timeout, "NRTABI_LOG_LEVEL=error"}
	fmt.Printf("nproc %s, %d runs per size (medians), %s\n", benchenv.NProc(), reps, timeout)
	fmt.Printf("%5s %16s %16s %14s %14s %12s\n", "N", "boundary wall ms", "go-only wall ms", "boundary boot", "go-only boot", "wall ratio")
	for _, s := range sizes {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("size %q", s)
		}
		var bw, gw, bb, gb []float64
		for i := 0; i < reps; i++ { // interleaved: both see the same machine
			ms := make([]worldprog.Member, n)
			for r := range ms {
				ms[r] = worldprog.WorldHost(host, false)
			}
			root, err := worldprog.FreeLoopbackRoot()
			if err != nil {
				return err
			}
			runs, took, err := worldprog.Launch(ctx, ms, root, env)
			if err != nil {
				return err
			}
			if ok, bad := worldprog.Agreed(runs); !ok {
				return fmt.Errorf("boundary world of %d: rank %d: %s\n%s", n, bad, runs[bad].Fields["line"], runs[bad].Stderr)
			}
			bw = append(bw, ms64(took))
			bb = append(bb, bootMs(runs))

			cmd := exec.CommandContext(ctx, nrtabi, "bootstrap", "--local", strconv.Itoa(n), "--timing")
			cmd.Env = append(os.Environ(), timeout)
			start := time.Now()
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("nrtabi-runtime bootstrap --local %d: %w\n%s", n, err, out)
			}
			gw = append(gw, ms64(time.Since(start)))
			gb = append(gb, field(string(out), "boot_ms"))
		}
		fmt.Printf("%5d %16.1f %16.1f %14.1f %14.1f %12.2f\n", n, benchenv.Median(bw), benchenv.Median(gw), benchenv.Median(bb), benchenv.Median(gb), benchenv.Median(bw)/benchenv.Median(gw))
	}
	return nil
}

func ms64(d time.Duration) float64 { return float64(d) / 1e6 }

// bootMs is (last rank with its global comm) - (first rank starting), ms.
func bootMs(runs []worldprog.Run) float64 {
	var first, last int64
	for _, r := range runs {
		s, _ := strconv.ParseInt(r.Fields["t_start"], 10, 64)
		b, _ := strconv.ParseInt(r.Fields["t_boot"], 10, 64)
		if first == 0 || s < first {
			first = s
		}
		if b > last {
			last = b
		}
	}
	return float64(last-first) / 1e6
}

// field reads key=value from the launcher's "timing:" line.
func field(out, key string) float64 {
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "timing:") {
			continue
		}
		for _, kv := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(kv, key+"="); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
	}
	return 0
}
