package collectives

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/runtime/transport/inproc"
)

// benchLatency is the modelled per-message link latency of the "link" runs
// (NRTABI_BENCH_LATENCY overrides, e.g. 5ms; Go timers are about 1 ms coarse, so less is not modelled faithfully): with it, a bootstrap costs its
// rounds, as it does between machines; without it ("mem"), every rank's CPU
// work shares the test machine's cores.
func benchLatency() time.Duration {
	if v := os.Getenv("NRTABI_BENCH_LATENCY"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return 2 * time.Millisecond
}

// BenchmarkBootstrap is one replica group's per-NC bootstrap (unique id, tree
// AND-reduce, hypercube broadcast, comm init, local barrier) across N ranks
// on the in-process transport. bench/bootstrap_scaling.sh turns the output
// into the time(256)/time(16) ratio.
func BenchmarkBootstrap(b *testing.B) {
	for _, mode := range []struct {
		name    string
		latency time.Duration
	}{{"mem", 0}, {"link", benchLatency()}} {
		for _, n := range []int{2, 4, 8, 16, 32, 64, 128, 256} {
			b.Run(fmt.Sprintf("%s/N=%d", mode.name, n), func(b *testing.B) {
				wd := newWorld(b, n, inproc.Options{Latency: mode.latency})
				rgs := groups(identity(n), 1)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					// each rank drops its node again so the next op is a miss
					errs := each(n, func(r int) error {
						node, err := wd.rt.GetNcclComm(rgs[r], r, 0, 1, false)
						if err != nil {
							return err
						}
						return wd.rt.Release(node)
					})
					for r, err := range errs {
						if err != nil {
							b.Fatalf("rank %d: %v", r, err)
						}
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(TreeRounds(n)+CubeRounds(n)), "rounds")
				b.ReportMetric(float64(wd.w.Stats().Messages)/float64(b.N), "msgs/op")
			})
		}
	}
}
