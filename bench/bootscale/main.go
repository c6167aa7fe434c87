// Command bootscale is `make bench-bootstrap`: the wall time for N = 8 ..
// 1024 rank processes on this host to agree on a world, for the naive star
// (bench/bootstraptcp), the flat ring, the 2-tier hierarchical bootstrap and
// the multi-root one, each ring unidirectional and bidirectional
// (`nrtabi-runtime bootstrap --local N [--per-instance L] [--roots R]`,
// NRTABI_BOOTSTRAP_RING), and C hosts through libnrt.so.1 and the
// reference libnccom, interleaved in one run, medians of -reps; then the
// simulator (bench/bootsim) fitted to the rows of at most -fit-max ranks,
// validated on every larger row, its costs written to -fitted.
// `make bench-bootstrap-project` (-project) reads that file, once it is
// committed, and prints the 1k .. 100k projection of every design beside
// the published anchors and writes the SVG plot.
//
// Its results, dated, are in docs/benchmarks.md#hierarchical-bootstrap.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
	"github.com/nrtabi/nrtabi/bench/bootsim"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

func main() {
	if v, ok := os.LookupEnv(burnerEnv); ok {
		period, err := time.ParseDuration(v)
		if err != nil || period <= 0 || period > time.Second {
			fmt.Fprintf(os.Stderr, "bench/bootscale: %s=%q: not a burner's period of up to 1s\n", burnerEnv, v)
			os.Exit(2)
		}
		burnerMain(period)
		return
	}
	o := options{}
	flag.IntVar(&o.reps, "reps", 5, "runs per size and variant (the median is reported)")
	flag.StringVar(&o.sizes, "sizes", "8 16 32 64 128 256 512 1024", "world sizes")
	flag.IntVar(&o.fitMax, "fit-max", 64, "fit the simulator to the rows of at most this many ranks; the larger rows validate it")
	flag.StringVar(&o.fitted, "fitted", "bench/bootsim/fitted.json", "where the fitted costs and the measured rows are written (and, with -project, read)")
	flag.BoolVar(&o.refit, "refit", false, "measure nothing: refit the simulator to the rows in the -fitted file and rewrite it")
	flag.StringVar(&o.grade, "grade", "", "measure nothing: grade the rows of this fitted file (another run's) under the committed -fitted costs, nothing refitted or written")
	flag.StringVar(&o.merge, "merge", "", "with -refit: first add the rows of this fitted file (another run's, e.g. the sizes only some variants reach), noted in the file; a row of a variant and size already there is refused")
	flag.BoolVar(&o.project, "project", false, "measure nothing: print the projection and write the plot from the committed -fitted file")
	flag.StringVar(&o.only, "only", "", "measure only these variants (comma-separated names; empty: all)")
	flag.StringVar(&o.fitExclude, "fit-exclude", "", "variants whose rows the fit does not see, as name=reason,... (they are still graded, as validation)")
	flag.StringVar(&o.perInstance, "per-instance", "sqrt", "ranks per instance L: an integer, or sqrt for ceil(sqrt(N))")
	flag.StringVar(&o.svg, "svg", "docs/bootstrap-scaling.svg", "where to write the plot (empty: none)")
	flag.BoolVar(&o.c, "c", true, "also measure C hosts through libnrt and the reference libnccom")
	flag.DurationVar(&o.runTimeout, "run-timeout", 5*time.Minute, "the longest one world may take")
	flag.BoolVar(&o.windowShare, "window-share", true, "measure each row's share of the host over the window it times (boot, agree) as well as over the world's life: needs a cgroup v2 the bench can make (root)")
	flag.IntVar(&o.burn, "burn", 0, "run every world beside this many background processes the bench starts and stops itself (each wakes every 1 ms and touches 256 KB), so the small worlds meet the run queue the large ones do; the rows record it")
	flag.DurationVar(&o.burnPeriod, "burn-period", time.Millisecond, "a burner's sleep between two touches of its 256 KB")
	flag.BoolVar(&o.wakeWait, "wake-wait", true, "measure the wait of a woken task for a CPU over each row's window (a probe thread's /proc/thread-self/schedstat, /proc/stat procs_running, the cgroup's cpu.pressure)")
	flag.BoolVar(&useCrowd, "crowd", false, "rows that carry the host's runnable tasks over their windows are judged with them, the run queue's term (for a host with foreign work in its queue, as beside -burn; off: the held worlds' queue is their own ranks)")
	flag.BoolVar(&useWait, "wait", true, "rows that carry the measured wait of a woken task for a CPU are judged with it on every sleeping hop (false: the model without it)")
	flag.BoolVar(&useWindow, "window", true, "rows that carry the share over their windows are judged on it (false: on the share over each world's life)")
	flag.BoolVar(&useAvail, "avail", true, "the simulator takes each row's measured share of the host (false: every row as if it had the whole host)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	do := run
	if o.project {
		do = project
	}
	if o.refit {
		do = refit
	}
	if o.grade != "" {
		do = grade
	}
	if err := do(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/bootscale:", err)
		os.Exit(1)
	}
}

type options struct {
	reps        int
	sizes       string
	perInstance string
	svg         string
	c           bool
	runTimeout  time.Duration
	fitMax      int
	fitted      string
	project     bool
	refit       bool
	merge       string
	grade       string
	only        string
	fitExclude  string
	windowShare bool
	burn        int
	burnPeriod  time.Duration
	wakeWait    bool
}

// timing is one world's two figures, ms from the last rank starting: the
// agreed world (boot) and the replica group's verdict (agree); start is
// when the last rank started, the windows' first edge.
type timing struct {
	boot, agree float64
	start       time.Time
}

// variant is one column of the table.
type variant struct {
	name    string
	algo    bootsim.Algo
	lang    string // "go" or "c"
	bound   bool   // a floor (bench/bootstraptcp's floor.go): measured and judged, never fitted
	bidi    bool   // NRTABI_BOOTSTRAP_RING=bidirectional
	multi   bool   // several roots: multiRoots(n, l)
	measure func(ctx context.Context, n, l int) (timing, error)
	skipped string // why it is not measured, when it is not
}

// multiRoots is R for a multi-root row: the rule's (tcp.RootsFor), but at
// least 2, so the small worlds the simulator is fitted on have a roots'
// ring too; at most one root per instance.
func multiRoots(n, l int) int {
	return min(max(2, bootsim.RootsFor(bootsim.Hier, n, l)), (n+l-1)/l)
}

const sockTimeout = "NEURON_CCOM_SOCK_TIMEOUT=30"

// perInstanceEnv is the C libnccom's (and the Go launcher's) source of L
// (docs/bootstrap-hierarchy.md).
const perInstanceEnv = "NRTABI_BOOTSTRAP_PER_INSTANCE"

// perInstance is L for a world of n: a fixed integer, or ceil(sqrt(n)),
// which minimises (L-1)+(H-1)+(L-1) up to rounding.
func perInstance(policy string, n int) (int, error) {
	if policy == "sqrt" {
		l := int(math.Ceil(math.Sqrt(float64(n))))
		for (l-1)*(l-1) >= n && l > 1 { // float rounding
			l--
		}
		return max(l, 1), nil
	}
	l, err := strconv.Atoi(policy)
	if err != nil || l < 1 || l > 1<<16 {
		return 0, fmt.Errorf("-per-instance %q: want sqrt or an integer 1..65536", policy)
	}
	return l, nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 4 || n > 4096 {
			return nil, fmt.Errorf("-sizes: %q is not a world size of 4..4096 (a multi-root row needs 2 instances)", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("-sizes: no size")
	}
	return out, nil
}

func run(ctx context.Context, o options, out io.Writer) error {
	sizes, err := parseSizes(o.sizes)
	if err != nil {
		return err
	}
	if _, err := perInstance(o.perInstance, 4); err != nil {
		return err
	}
	if o.reps < 1 || o.reps > 101 {
		return fmt.Errorf("-reps %d: want 1..101", o.reps)
	}
	if o.fitMax < 8 || o.fitMax > 4096 {
		return fmt.Errorf("-fit-max %d: want 8..4096", o.fitMax)
	}
	dir, err := os.MkdirTemp("", "nrtabi-bootscale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	vs, err := variants(ctx, o, dir)
	if err != nil {
		return err
	}
	loadBefore := benchenv.LoadAvg()
	cores, err := strconv.Atoi(benchenv.NProc())
	if err != nil || cores < 1 {
		return fmt.Errorf("nproc %q: not a CPU count", benchenv.NProc())
	}
	var cg *cgroupCPU
	if o.windowShare {
		if cg, err = openCgroupCPU([]string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}); err != nil {
			return err
		}
		defer func() {
			if cerr := cg.close(); cerr != nil {
				fmt.Fprintln(out, "bench/bootscale: the bench's cgroup:", cerr)
			}
		}()
	}
	var pr *probe
	if o.wakeWait {
		if cg == nil {
			return errors.New("-wake-wait needs the window's samples: -window-share=false with it is not a run (add -wake-wait=false)")
		}
		pctx, pstop := context.WithCancel(ctx)
		defer pstop()
		if pr, err = startProbe(pctx); err != nil {
			return err
		}
	}
	readTick := func() (tick, error) {
		b, run, err := readHostStat("/proc/stat")
		if err != nil {
			return tick{}, err
		}
		w, err := cg.usage()
		if err != nil {
			return tick{}, err
		}
		t := tick{at: time.Now(), busy: b, world: w, runnable: run}
		if pr != nil {
			if t.delay, t.slices, err = pr.read(); err != nil {
				return tick{}, err
			}
			if t.psi, err = cg.pressure(); err != nil {
				return tick{}, err
			}
		}
		return t, nil
	}
	burn, err := startBurners(ctx, o.burn, o.burnPeriod, cg)
	if err != nil {
		return err
	}
	defer func() {
		if err := burn.stop(); err != nil {
			fmt.Fprintln(out, "bench/bootscale: stopping the burners:", err)
		}
	}()
	if o.burn > 0 {
		time.Sleep(time.Second) // the burners started and moved out before any world
	}
	date := time.Now().UTC().Format(time.RFC3339)
	fmt.Fprintf(out, "%s, nproc %s, load %s, %d runs per size and variant (medians, interleaved), %s, %d background burners (each every %v)\n",
		date, benchenv.NProc(), loadBefore, o.reps, sockTimeout, o.burn, o.burnPeriod)
	fmt.Fprintf(out, "L (ranks per instance) = %s; multi-root rows: R = max(2, ceil(N / %d)), at most one root per instance\n", policyText(o.perInstance), tcpRanksPerRoot)
	notes := map[string]string{}
	if o.burn > 0 {
		notes["burn"] = fmt.Sprintf("every world ran beside %d burners, each touching %d KB every %v (rows: burn)", o.burn, burnBytes>>10, o.burnPeriod)
	}
	for _, v := range vs {
		if v.skipped != "" {
			fmt.Fprintf(out, "%s: not measured: %s\n", v.name, v.skipped)
			notes[v.name] = v.skipped
		}
	}
	fmt.Fprintln(out, "\nboot: ms from the last rank starting to the last rank holding the agreed world (the bootstrap's address and peer-record all-gathers; the star's one round trip)")
	header(out, vs)
	meds := map[string]map[int]float64{}      // boot
	agreeMeds := map[string]map[int]float64{} // agree
	ls := map[int]int{}
	var rows []bootsim.MeasuredRow
	var done []int
	interrupted := false
sizeLoop:
	for _, n := range sizes {
		l, _ := perInstance(o.perInstance, n)
		ls[n] = l
		boot := make([][]float64, len(vs))
		agree := make([][]float64, len(vs))
		avail := make([][]float64, len(vs))
		cpuMs := make([][]float64, len(vs))
		csw := make([][]float64, len(vs))
		availBoot := make([][]float64, len(vs))
		availAgree := make([][]float64, len(vs))
		waits := make([][]waitOf, len(vs)) // boot's window
		waitsA := make([][]waitOf, len(vs))
		for rep := 0; rep < o.reps; rep++ {
			for k := range vs { // rotate the order: no variant always runs first
				i := (k + rep) % len(vs)
				v := vs[i]
				if v.skipped != "" {
					continue
				}
				rctx, cancel := context.WithTimeout(ctx, o.runTimeout)
				var smp *sampler
				if cg != nil {
					smp = startSampler(rctx, samplePeriod, int(o.runTimeout/samplePeriod)+16, readTick)
				}
				s0, err0 := takeSample()
				tm, err := v.measure(rctx, n, l)
				s1, err1 := takeSample()
				var ticks []tick
				var errT error
				if smp != nil {
					ticks, errT = smp.finish(readTick)
				}
				cancel()
				if err == nil && (err0 != nil || err1 != nil) {
					return fmt.Errorf("%s, %d ranks: the host's CPU share: %w", v.name, n, errors.Join(err0, err1))
				}
				if err != nil && ctx.Err() != nil {
					// interrupted: keep the sizes done, drop this one
					fmt.Fprintf(out, "interrupted during N=%d: the fit and the file keep the sizes completed\n", n)
					interrupted = true
					break sizeLoop
				}
				if err != nil {
					// a failed world fails the run, but the sizes done are
					// kept beside the file (the failing one is not)
					err = fmt.Errorf("%s, %d ranks: %w", v.name, n, err)
					keep := &bootsim.Fitted{Date: date, Load: loadBefore + " / " + benchenv.LoadAvg(), NProc: benchenv.NProc(), FitMaxN: o.fitMax, Rows: rows,
						Notes: map[string]string{"failed": cfmt.Escape(err.Error(), 300)}, AgreePath: "split"}
					if len(rows) > 0 {
						if serr := bootsim.SaveFitted(o.fitted+".rows", keep); serr != nil {
							return errors.Join(err, serr)
						}
						fmt.Fprintf(out, "the sizes done before the failure are in %s.rows\n", o.fitted)
					}
					return err
				}
				if smp != nil {
					ub, errB := windowUsage(ticks, tm.start, tm.start.Add(ms(tm.boot)))
					ua, errA := windowUsage(ticks, tm.start, tm.start.Add(ms(tm.agree)))
					if err := errors.Join(errT, errB, errA); err != nil {
						return fmt.Errorf("%s, %d ranks: the host's share over the window: %w", v.name, n, err)
					}
					if pr != nil {
						wb, errB := windowWait(ticks, tm.start, tm.start.Add(ms(tm.boot)))
						wa, errA := windowWait(ticks, tm.start, tm.start.Add(ms(tm.agree)))
						if err := errors.Join(errB, errA); err != nil {
							return fmt.Errorf("%s, %d ranks: the wake-up wait over the window: %w", v.name, n, err)
						}
						waits[i] = append(waits[i], wb)
						waitsA[i] = append(waitsA[i], wa)
					}
					availBoot[i] = append(availBoot[i], ub.avail(cores))
					availAgree[i] = append(availAgree[i], ua.avail(cores))
				}
				boot[i] = append(boot[i], tm.boot)
				agree[i] = append(agree[i], tm.agree)
				u := since(s0, s1)
				avail[i] = append(avail[i], u.avail(cores))
				cpuMs[i] = append(cpuMs[i], u.cpu*1e3)
				csw[i] = append(csw[i], u.nvcsw)
			}
		}
		for i, v := range vs {
			if v.skipped != "" {
				continue
			}
			put(meds, v.name, n, benchenv.Median(boot[i]))
			put(agreeMeds, v.name, n, benchenv.Median(agree[i]))
			r := bootsim.MeasuredRow{Variant: v.name, Algo: v.algo.String(), Lang: v.lang, Bidi: v.bidi, N: n,
				BootMs: meds[v.name][n], AgreeMs: agreeMeds[v.name][n],
				Avail: benchenv.Median(avail[i]), CPUMs: benchenv.Median(cpuMs[i]), Nvcsw: benchenv.Median(csw[i])}
			fmt.Fprintf(out, "  %s N=%d: the world had %.0f%% of the %d cores left by the rest of the host (median), used %.0f ms CPU, %.0f voluntary switches\n",
				v.name, n, r.Avail*100, cores, r.CPUMs, r.Nvcsw)
			if cg != nil {
				r.AvailBoot, r.AvailAgree = benchenv.Median(availBoot[i]), benchenv.Median(availAgree[i])
				fmt.Fprintf(out, "  %s N=%d: over the boot's window %.0f%%, over the agree's %.0f%% (medians)\n", v.name, n, r.AvailBoot*100, r.AvailAgree*100)
			}
			if pr != nil {
				r.Burn = o.burn
				r.RunnableBoot, r.WaitBootUs, r.PressureBoot = medianWait(waits[i])
				r.RunnableAgree, r.WaitAgreeUs, r.PressureAgree = medianWait(waitsA[i])
				fmt.Fprintf(out, "  %s N=%d: over the boot's window %.0f runnable tasks on the host, a woken task waited %.0f us for a CPU, the world waited %.0f%% of the time (medians; agree: %.0f, %.0f us, %.0f%%)\n",
					v.name, n, r.RunnableBoot, r.WaitBootUs, r.PressureBoot*100, r.RunnableAgree, r.WaitAgreeUs, r.PressureAgree*100)
			}
			if v.algo == bootsim.Hier {
				r.L = l
			}
			if v.multi {
				r.Roots = multiRoots(n, l)
			}
			if v.bound {
				continue // a floor: in the tables and the goals, never in the fit
			}
			rows = append(rows, r)
		}
		row(out, vs, n, l, meds)
		done = append(done, n)
	}
	sizes = done
	fmt.Fprintln(out, "\nagree: the same runs to the replica group's verdict and id (runtime/launch: after the world, the global comm's setup and the replica group's tree and hypercube; both groups' comms split from the world by default, docs/bootstrap.md#group-comm-split)")
	header(out, vs)
	for _, n := range sizes {
		row(out, vs, n, ls[n], agreeMeds)
	}
	loadAfter := benchenv.LoadAvg()
	fmt.Fprintf(out, "\nload after: %s\n", loadAfter)
	fmt.Fprintln(out, "goals (docs/benchmarks.md#hierarchical-bootstrap): agree <= 2x the star at 256 ranks, <= 2.5x at 1024; boot beside it")
	bounds := map[string]bool{}
	for _, v := range vs {
		bounds[v.name] = v.bound
	}
	goals(out, "agree", agreeMeds, bounds)
	goals(out, "boot", meds, bounds)
	if interrupted {
		notes["interrupted"] = fmt.Sprintf("the run was stopped; sizes completed: %v", done)
	}
	// the ranks' default since the world group's comm is split from the
	// world's bootstrap (the hierarchical rows also say so explicitly)
	fit := &bootsim.Fitted{Date: date, Load: loadBefore + " / " + loadAfter, NProc: benchenv.NProc(), FitMaxN: o.fitMax, Rows: rows, Notes: notes, AgreePath: "split"}
	if err := fitAndValidate(out, fit, o.fitExclude); err != nil {
		// the rows are kept beside the file, never in its place: a run of
		// a few variants at one size cannot be fitted, and is what
		// -refit -merge takes
		keep := &bootsim.Fitted{Date: fit.Date, Load: fit.Load, NProc: fit.NProc, FitMaxN: fit.FitMaxN, Rows: rows, Notes: notes, AgreePath: fit.AgreePath}
		rowsPath := o.fitted + ".rows"
		if serr := bootsim.SaveFitted(rowsPath, keep); serr != nil {
			return errors.Join(err, serr)
		}
		fmt.Fprintf(out, "not fitted (%v): the measured rows are in %s (bench/bootscale -refit -merge %s adds them to a fitted file)\n", err, rowsPath, rowsPath)
		if errors.Is(err, errNotFitted) {
			return nil
		}
		return err
	}
	if err := bootsim.SaveFitted(o.fitted, fit); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nfitted costs and measured rows written to %s: commit it, then make bench-bootstrap-project prints the 1k..100k projection and writes the plot from the committed file\n", o.fitted)
	return nil
}

func put(m map[string]map[int]float64, name string, n int, v float64) {
	if m[name] == nil {
		m[name] = map[int]float64{}
	}
	m[name][n] = v
}

func header(out io.Writer, vs []variant) {
	fmt.Fprintf(out, "%5s %4s", "N", "L")
	for _, v := range vs {
		fmt.Fprintf(out, " %12s", v.name)
	}
	for _, v := range vs[1:] {
		fmt.Fprintf(out, " %12s", v.name+"/star")
	}
	fmt.Fprintln(out)
}

// row prints one size: every variant's median and its ratio to the star's;
// a variant not measured shows "-", a losing row is printed like any other.
func row(out io.Writer, vs []variant, n, l int, meds map[string]map[int]float64) {
	fmt.Fprintf(out, "%5d %4d", n, l)
	for _, v := range vs {
		if x, ok := meds[v.name][n]; ok {
			fmt.Fprintf(out, " %12.2f", x)
		} else {
			fmt.Fprintf(out, " %12s", "-")
		}
	}
	star, sok := meds[vs[0].name][n]
	for _, v := range vs[1:] {
		if x, ok := meds[v.name][n]; ok && sok && star > 0 {
			fmt.Fprintf(out, " %11.2fx", x/star)
		} else {
			fmt.Fprintf(out, " %12s", "-")
		}
	}
	fmt.Fprintln(out)
}

func policyText(p string) string {
	if p == "sqrt" {
		return "ceil(sqrt(N))"
	}
	return p
}

// goals prints the targets (docs/benchmarks.md#hierarchical-bootstrap: at
// most 2x the star at 256 ranks, 2.5x at 1024) for every variant measured
// there, met or MISSED; a variant not measured at that size is said so.
func goals(out io.Writer, metric string, meds map[string]map[int]float64, bounds map[string]bool) {
	star := meds["star"]
	var names []string
	for name := range meds {
		if name != "star" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, g := range []struct {
		n    int
		goal float64
	}{{256, 2}, {1024, 2.5}} {
		s, ok := star[g.n]
		if !ok {
			fmt.Fprintf(out, "  %s at N=%d: the star was not measured there\n", metric, g.n)
			continue
		}
		for _, name := range names {
			h, ok := meds[name][g.n]
			if !ok {
				fmt.Fprintf(out, "  %s at N=%d: %s not measured\n", metric, g.n, name)
				continue
			}
			verdict := "met"
			if h/s > g.goal {
				verdict = "MISSED"
			}
			if bounds[name] {
				// docs/benchmarks.md#the-floor-under-agree
				verdict = "a floor: the seed's messages and nothing else; the goal " + map[bool]string{true: "is above it", false: "is below it"}[h/s <= g.goal]
			}
			fmt.Fprintf(out, "  %s at N=%d: %-14s %6.2fx star (goal <= %.1fx: %s)\n", metric, g.n, name, h/s, g.goal, verdict)
		}
	}
}

// variants builds what the bench runs and probes each variant that is not
// the star once at N=4, L=2: an implementation that refuses the flag or the
// variable is reported as not measured, never silently run as another
// shape under its name.
func variants(ctx context.Context, o options, dir string) ([]variant, error) {
	nrtabi, star := filepath.Join(dir, "nrtabi-runtime"), filepath.Join(dir, "bootstraptcp")
	for _, b := range [][2]string{{nrtabi, builder.Module + "/cmd/nrtabi-runtime"}, {star, builder.Module + "/bench/bootstraptcp"}} {
		if out, err := exec.CommandContext(ctx, "go", "build", "-tags", abi.BuildTag, "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", b[1], err, out)
		}
	}
	goRun := func(bin string, hier, multi bool, ring string) func(ctx context.Context, n, l int) (timing, error) {
		return func(ctx context.Context, n, l int) (timing, error) {
			args := []string{"--local", strconv.Itoa(n), "--timing"}
			if bin == nrtabi {
				args = append([]string{"bootstrap"}, args...)
				if hier {
					args = append(args, "--per-instance", strconv.Itoa(l))
				}
				if multi {
					args = append(args, "--roots", strconv.Itoa(multiRoots(n, l)))
				}
			}
			cmd := exec.CommandContext(ctx, bin, args...)
			// The Go ranks log warnings only, as the star logs nothing
			// (their checks are their report lines); the C hosts stay at
			// info, the level of the tables line their check reads.
			cmd.Env = append(os.Environ(), sockTimeout, "NRTABI_LOG_LEVEL=warn")
			if ring != "" {
				cmd.Env = append(cmd.Env, abi.EnvBootstrapRing+"="+ring)
			}
			if hier && bin == nrtabi {
				// the world group's comm split from the world's bootstrap
				// (docs/bootstrap.md#group-comm-split, the ranks' default, said
				// explicitly), so agree is the design's
				cmd.Env = append(cmd.Env, groupInitEnv+"=split")
			}
			return runWorld(cmd, bin, args, hier)
		}
	}
	floorRun := func(bin string, viaRoot bool) func(ctx context.Context, n, l int) (timing, error) {
		return func(ctx context.Context, n, l int) (timing, error) {
			args := []string{"--local", strconv.Itoa(n), "--timing", "--floor", "--per-instance", strconv.Itoa(l)}
			if viaRoot {
				args = append(args, "--via-root")
			}
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(os.Environ(), sockTimeout, "NRTABI_LOG_LEVEL=warn")
			return runWorld(cmd, bin, args, tcp.Hierarchical(true, n, l))
		}
	}
	vs := []variant{
		{name: "star", algo: bootsim.Star, lang: "go", measure: goRun(star, false, false, "")},
		{name: "flat-go", algo: bootsim.Flat, lang: "go", measure: goRun(nrtabi, false, false, "")},
		{name: "hier-go", algo: bootsim.Hier, lang: "go", measure: goRun(nrtabi, true, false, "")},
		{name: "mroot-go", algo: bootsim.Hier, lang: "go", multi: true, measure: goRun(nrtabi, true, true, "")},
		{name: "flat-go-bidi", algo: bootsim.Flat, lang: "go", bidi: true, measure: goRun(nrtabi, false, false, "bidirectional")},
		{name: "hier-go-bidi", algo: bootsim.Hier, lang: "go", bidi: true, measure: goRun(nrtabi, true, false, "bidirectional")},
		{name: "mroot-go-bidi", algo: bootsim.Hier, lang: "go", bidi: true, multi: true, measure: goRun(nrtabi, true, true, "bidirectional")},
		{name: "flat-c", algo: bootsim.Flat, lang: "c"},
		{name: "hier-c", algo: bootsim.Hier, lang: "c"},
		{name: "flat-c-bidi", algo: bootsim.Flat, lang: "c", bidi: true},
		{name: "hier-c-bidi", algo: bootsim.Hier, lang: "c", bidi: true},
		// The floors under agree (docs/benchmarks.md#the-floor-under-agree):
		// the star's gather, the rings made and get_nccl_comm's four
		// exchanges, nothing else, over the instances or through the root.
		{name: "floor", algo: bootsim.Hier, lang: "go", bound: true, measure: floorRun(star, false)},
		{name: "floor-root", algo: bootsim.Hier, lang: "go", bound: true, measure: floorRun(star, true)},
	}
	// A multi-root row is one only if the launcher takes the flag: an R
	// the world cannot have must be refused.
	if _, err := goRun(nrtabi, true, false, "")(ctx, 4, 2); err == nil {
		bad := exec.CommandContext(ctx, nrtabi, "bootstrap", "--local", "4", "--per-instance", "2", "--roots", "3", "--timing")
		if _, err := bad.CombinedOutput(); err == nil {
			for i := range vs {
				if vs[i].multi {
					vs[i].skipped = "the launcher did not refuse --roots 3 for 2 instances: it may not read it"
				}
			}
		}
	}
	// The replica group's hierarchical init is one only if the ranks read
	// the variable: a value they do not know must be refused by name.
	if err := exec.CommandContext(ctx, nrtabi, "bootstrap", "--local", "4", "--per-instance", "2", "--timing").Run(); err == nil {
		bad := exec.CommandContext(ctx, nrtabi, "bootstrap", "--local", "4", "--per-instance", "2", "--timing")
		bad.Env = append(os.Environ(), groupInitEnv+"=sideways")
		// the ranks exit 2 on it (the launcher does not pass their reason on)
		if _, err := bad.CombinedOutput(); err == nil {
			return nil, fmt.Errorf("the ranks did not refuse %s=sideways: the hierarchical rows' agree would not be what they say", groupInitEnv)
		}
	}
	// A bidirectional row is one only if the ranks read the variable: a
	// value they do not know must be refused by name.
	if _, err := goRun(nrtabi, false, false, "sideways")(ctx, 4, 2); err == nil || !strings.Contains(err.Error(), abi.EnvBootstrapRing) {
		why := fmt.Sprintf("the ranks did not refuse %s=sideways by name (%v): they may not read it", abi.EnvBootstrapRing, err)
		for i := range vs {
			if vs[i].bidi && vs[i].lang == "go" {
				vs[i].skipped = why
			}
		}
	}
	for i := range vs {
		v := &vs[i]
		if v.skipped != "" || v.lang != "go" || v.algo != bootsim.Hier && !v.multi && !v.bidi {
			continue
		}
		if _, err := v.measure(ctx, 4, 2); err != nil {
			v.skipped = "the probe world of 4 ranks, L=2 failed: " + err.Error()
		}
	}
	if o.only != "" {
		want := map[string]bool{}
		for _, n := range strings.Split(o.only, ",") {
			want[strings.TrimSpace(n)] = true
		}
		for i := range vs {
			if !want[vs[i].name] && vs[i].skipped == "" {
				vs[i].skipped = "not in -only"
			}
			delete(want, vs[i].name)
		}
		for n := range want {
			return nil, fmt.Errorf("-only %q: no variant %q", o.only, n)
		}
	}
	// The C hosts' variants, measured through cRun once the host is built.
	var cs []*variant
	for i := range vs {
		if vs[i].lang == "c" {
			cs = append(cs, &vs[i])
		}
	}
	skipC := func(why string) {
		for _, v := range cs {
			if v.skipped == "" {
				v.skipped = why
			}
		}
	}
	if !o.c {
		skipC("-c=false")
		return vs, nil
	}
	host, env, err := buildC(ctx, dir)
	if err != nil {
		skipC(err.Error())
		return vs, nil
	}
	// the C hosts read the ring mode too: a value they do not know must fail them
	if _, err := cRun(host, append(append([]string(nil), env...), abi.EnvBootstrapRing+"=sideways"), false)(ctx, 4, 2); err == nil {
		for _, v := range cs {
			if v.bidi && v.skipped == "" {
				v.skipped = "the C hosts did not refuse " + abi.EnvBootstrapRing + "=sideways: they may not read it"
			}
		}
	}
	for _, v := range cs {
		if v.skipped != "" {
			continue
		}
		e := env
		if v.bidi {
			e = append(append([]string(nil), env...), abi.EnvBootstrapRing+"=bidirectional")
		}
		v.measure = cRun(host, e, v.algo == bootsim.Hier)
		if _, err := v.measure(ctx, 4, 2); err != nil {
			v.skipped = "the probe world of 4 C hosts failed: " + err.Error()
		}
	}
	return vs, nil
}

// runWorld runs one world (cmd, which is bin with args) to its end and
// reads its timing line; hier: the launcher must say the world was
// hierarchical (a hierarchical row is never a flat run).
func runWorld(cmd *exec.Cmd, bin string, args []string, hier bool) (timing, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	end := time.Now()
	if err != nil {
		return timing{}, fmt.Errorf("%s %s: %w: %s%s", filepath.Base(bin), strings.Join(args, " "), err, lastLine(stderr.String()), lastLine(string(b)))
	}
	if hier && !strings.Contains(string(b), "(hierarchical,") {
		return timing{}, fmt.Errorf("%s %s: the world was not hierarchical: %s", filepath.Base(bin), strings.Join(args, " "), lastLine(string(b)))
	}
	return parseTiming(bin, args, b, end)
}

// parseTiming is the launcher's timing line of a world bin ran with args
// and that ended at end.
func parseTiming(bin string, args []string, b []byte, end time.Time) (timing, error) {
	boot, ok1 := timingField(string(b), "boot_ms")
	agree, ok2 := timingField(string(b), "agree_ms")
	done, ok3 := timingField(string(b), "done_ms")
	if !ok1 || !ok2 || !ok3 || done < agree {
		return timing{}, fmt.Errorf("%s %s printed no timing line", filepath.Base(bin), strings.Join(args, " "))
	}
	// the launcher prints spans, not instants: its exit is the last
	// rank's end (t_done) and the reaping after it, so the windows sit
	// later than the ranks' by that lag
	// (docs/benchmarks.md#the-simulator-2026-12-04-evening)
	return timing{boot: boot, agree: agree, start: end.Add(-ms(done))}, nil
}

// groupInitEnv is runtime/collectives' switch for the replica group's
// comm init (flat, the seed's dispatch, or hier).
const groupInitEnv = "NRTABI_BOOTSTRAP_GROUP_INIT"

// buildC builds libnrt.so.1, the reference libnccom and the C world host
// (runtime/e2e's worldhost.c) as bench/bootcomm does.
func buildC(ctx context.Context, dir string) (string, []string, error) {
	t, err := builder.Open("")
	if err != nil {
		return "", nil, err
	}
	lib, ref := filepath.Join(dir, "lib"), filepath.Join(dir, "ref")
	if _, err := t.BuildLibnrt(ctx, lib, builder.Versioned); err != nil {
		return "", nil, err
	}
	if _, err := t.BuildLibnccom(ctx, lib, ref, builder.Libnccom{}); err != nil {
		return "", nil, err
	}
	host := filepath.Join(dir, "worldhost")
	if err := t.BuildWorldHost(ctx, host, lib); err != nil {
		return "", nil, err
	}
	// info: libnccom's "gathered tables" line says which path ran (cRun)
	return host, []string{"LD_LIBRARY_PATH=" + lib + ":" + ref, sockTimeout, "NRTABI_LOG_LEVEL=info"}, nil
}

// tablesRE is libnccom's INFO line after the 112-byte peer all-gather
// (runtime/libnccom/comm.c): the digests of both gathered tables and the path.
var tablesRE = regexp.MustCompile(`gathered tables: addresses ([0-9a-f]{16}) peers ([0-9a-f]{16}) \((flat|hierarchical)\)`)

// cRun is one world of C hosts; the time is the launcher's definition
// (runtime/launch timingLine): last rank starting to last rank agreeing.
func cRun(host string, env []string, hier bool) func(ctx context.Context, n, l int) (timing, error) {
	return func(ctx context.Context, n, l int) (timing, error) {
		ms := make([]worldprog.Member, n)
		for r := range ms {
			ms[r] = worldprog.WorldHost(host, false)
		}
		root, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			return timing{}, err
		}
		e := env
		if hier {
			e = append(append([]string(nil), env...), perInstanceEnv+"="+strconv.Itoa(l))
		}
		// held as the Go rows' ranks are (runtime/worldprog/hold.go): no
		// host's exit takes the CPU of the hosts still agreeing
		runs, _, err := worldprog.LaunchHeld(ctx, ms, root, e)
		if err != nil {
			return timing{}, err
		}
		if ok, bad := worldprog.Agreed(runs); !ok {
			return timing{}, fmt.Errorf("the C host %d did not agree (exit %d): %s%s", bad, runs[bad].Exit, firstWarning(runs[bad].Stderr), lastLine(runs[bad].Stderr))
		}
		want := "flat"
		if hier {
			want = "hierarchical"
		}
		var tables string
		for r, run := range runs {
			// each rank logs the path it ran and its gathered tables' digests
			// (docs/libnccom.md): a hierarchical row is never a flat run
			m := tablesRE.FindStringSubmatch(run.Stderr)
			switch {
			case m == nil:
				return timing{}, fmt.Errorf("the C host %d logged no gathered tables at NRTABI_LOG_LEVEL=info", r)
			case m[3] != want:
				return timing{}, fmt.Errorf("the C host %d ran the %s bootstrap, not the %s one", r, m[3], want)
			case tables != "" && m[1]+m[2] != tables:
				return timing{}, fmt.Errorf("the C host %d gathered tables %s/%s, unlike host 0", r, m[1], m[2])
			}
			tables = m[1] + m[2]
		}
		return worldTiming(runs)
	}
}

// worldTiming checks that every C host succeeded on the same world and
// returns (last t_boot) - (last t_start) and (last t_agree) - (last
// t_start) in ms: runtime/launch's timingLine, for hosts it did not launch.
func worldTiming(runs []worldprog.Run) (timing, error) {
	var start, boot, agree int64
	for r, run := range runs {
		f := run.Fields
		if run.Exit != 0 || f["verdict"] != "ok" || f["cluster_id"] != runs[0].Fields["cluster_id"] ||
			f["unique_id"] != runs[0].Fields["unique_id"] || f["nranks"] != strconv.Itoa(len(runs)) {
			return timing{}, fmt.Errorf("rank %d did not agree (exit %d): %s", r, run.Exit, lastLine(run.Stderr))
		}
		s, err1 := strconv.ParseInt(f["t_start"], 10, 64)
		b, err2 := strconv.ParseInt(f["t_boot"], 10, 64)
		a, err3 := strconv.ParseInt(f["t_agree"], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || s <= 0 || b < s || a < b {
			return timing{}, fmt.Errorf("rank %d reported no ordered t_start/t_boot/t_agree", r)
		}
		start, boot, agree = max(start, s), max(boot, b), max(agree, a)
	}
	return timing{boot: float64(boot-start) / 1e6, agree: float64(agree-start) / 1e6, start: time.Unix(0, start)}, nil
}

// samplePeriod is how often the window's counters are read: /proc/stat's
// tick (userHZ).
const samplePeriod = 10 * time.Millisecond

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// timingField reads key=value from the launcher's "timing:" line.
func timingField(out, key string) (float64, bool) {
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "timing:") {
			continue
		}
		for _, kv := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(kv, key+"="); ok {
				f, err := strconv.ParseFloat(v, 64)
				return f, err == nil && f >= 0 && !math.IsInf(f, 0)
			}
		}
	}
	return 0, false
}

// firstWarning is the first WARN or ERROR line of a rank's log with "; then:
// " after it, or "" when it has none: the cause of a failure comes first,
// its last line is only how the rank ended.
func firstWarning(s string) string {
	for _, ln := range strings.Split(s, "\n") {
		if strings.Contains(ln, "WARN") || strings.Contains(ln, "ERROR") {
			return cfmt.Escape(strings.TrimSpace(ln), 300) + "; then: "
		}
	}
	return ""
}

// lastLine is the last line a child printed, for an error: escaped and cut
// by the project's one escaping of outside bytes (internal/cfmt, package
// esc), so a rank's output cannot forge a line of the bench's report.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return cfmt.Escape(s, 300)
}

// medianWait is the medians of a row's runs' wake-up readings: runnable
// tasks, the wait per wake (us) and the world's pressure share.
func medianWait(ws []waitOf) (runnable, waitUs, pressure float64) {
	var a, b, c []float64
	for _, w := range ws {
		a, b, c = append(a, w.runnable), append(b, w.perWake*1e6), append(c, w.pressure)
	}
	return benchenv.Median(a), benchenv.Median(b), benchenv.Median(c)
}
