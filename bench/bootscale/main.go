// Command bootscale is `make bench-bootstrap`: the wall time for N = 8 ..
// 256 rank processes on this host to agree on a world, for the naive star
// (bench/bootstraptcp), the flat ring and the 2-tier hierarchical
// bootstrap (`nrtabi-runtime bootstrap --local N [--per-instance L]`, and C
// hosts through libnrt.so.1 and the reference libnccom with
// NRTABI_BOOTSTRAP_PER_INSTANCE=L), interleaved in one run, medians of
// -reps; then the simulator (bench/bootsim) fitted to this run twice (A:
// the star and flat rows, the hierarchical ones held out; B: every Go row),
// its error on every measured row, its prediction for 1k .. 100k ranks
// beside the published anchors, and an SVG plot of both.
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
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/bench/benchenv"
	"github.com/nrtabi/nrtabi/bench/bootsim"
	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

func main() {
	o := options{}
	flag.IntVar(&o.reps, "reps", 5, "runs per size and variant (the median is reported)")
	flag.StringVar(&o.sizes, "sizes", "8 16 32 64 128 256", "world sizes")
	flag.StringVar(&o.perInstance, "per-instance", "sqrt", "ranks per instance L: an integer, or sqrt for ceil(sqrt(N))")
	flag.StringVar(&o.svg, "svg", "docs/bootstrap-scaling.svg", "where to write the plot (empty: none)")
	flag.BoolVar(&o.c, "c", true, "also measure C hosts through libnrt and the reference libnccom")
	flag.DurationVar(&o.runTimeout, "run-timeout", 5*time.Minute, "the longest one world may take")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
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
}

// timing is one world's two figures, ms from the last rank starting: the
// agreed world (boot) and the replica group's verdict (agree).
type timing struct{ boot, agree float64 }

// variant is one column of the table.
type variant struct {
	name    string
	algo    bootsim.Algo
	lang    string // "go" or "c"
	measure func(ctx context.Context, n, l int) (timing, error)
	skipped string // why it is not measured, when it is not
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
		if err != nil || n < 2 || n > 4096 {
			return nil, fmt.Errorf("-sizes: %q is not a world size of 2..4096", f)
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
	dir, err := os.MkdirTemp("", "nrtabi-bootscale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	vs, err := variants(ctx, o, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s, nproc %s, load %s, %d runs per size and variant (medians, interleaved), %s\n",
		time.Now().UTC().Format(time.RFC3339), benchenv.NProc(), benchenv.LoadAvg(), o.reps, sockTimeout)
	fmt.Fprintf(out, "L (ranks per instance) = %s\n", policyText(o.perInstance))
	for _, v := range vs {
		if v.skipped != "" {
			fmt.Fprintf(out, "%s: not measured: %s\n", v.name, v.skipped)
		}
	}
	fmt.Fprintln(out, "\nboot: ms from the last rank starting to the last rank holding the agreed world (the bootstrap's address and peer-record all-gathers; the star's one round trip)")
	header(out, vs)
	var pts []bootsim.Point
	meds := map[string]map[int]float64{}      // boot
	agreeMeds := map[string]map[int]float64{} // agree
	ls := map[int]int{}
	for _, n := range sizes {
		l, _ := perInstance(o.perInstance, n)
		ls[n] = l
		boot := make([][]float64, len(vs))
		agree := make([][]float64, len(vs))
		for rep := 0; rep < o.reps; rep++ {
			for k := range vs { // rotate the order: no variant always runs first
				i := (k + rep) % len(vs)
				v := vs[i]
				if v.skipped != "" {
					continue
				}
				rctx, cancel := context.WithTimeout(ctx, o.runTimeout)
				tm, err := v.measure(rctx, n, l)
				cancel()
				if err != nil {
					return fmt.Errorf("%s, %d ranks: %w", v.name, n, err)
				}
				boot[i] = append(boot[i], tm.boot)
				agree[i] = append(agree[i], tm.agree)
			}
		}
		for i, v := range vs {
			if v.skipped == "" {
				put(meds, v.name, n, benchenv.Median(boot[i]))
				put(agreeMeds, v.name, n, benchenv.Median(agree[i]))
				if v.lang == "go" {
					pts = append(pts, bootsim.Point{Algo: v.algo, N: n, L: l, Seconds: meds[v.name][n] / 1000})
				}
			}
		}
		row(out, vs, n, l, meds)
	}
	fmt.Fprintln(out, "\nagree: the same runs to the replica group's verdict and id (runtime/launch: after the world, the global comm's setup and the replica group's own comm init, which is not a global init and so flat by the dispatch, then its tree and hypercube)")
	header(out, vs)
	for _, n := range sizes {
		row(out, vs, n, ls[n], agreeMeds)
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "goals on boot, the goal metric of docs/benchmarks.md#hierarchical-bootstrap (wall time to agreement of the bootstrap: every rank holds the identical gathered table):")
	goals(out, "boot", meds)
	fmt.Fprintln(out, "the same ratios on agree, the whole world program (its replica-group comm init is flat by the dispatch), beside the goal, not the goal:")
	goals(out, "agree", agreeMeds)
	fit, err := simulate(out, o, pts)
	if err != nil {
		return err
	}
	if o.svg != "" {
		if err := writePlot(o.svg, o.perInstance, meds, fit); err != nil {
			return err
		}
		fmt.Fprintf(out, "plot: %s\n", o.svg)
	}
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

// goals prints the hierarchical bootstrap's targets
// (docs/benchmarks.md#hierarchical-bootstrap: at most 2x the star at 64
// ranks, 2.5x at 256) against the hierarchical rows of both sides, and
// flat's ratio beside each.
func goals(out io.Writer, metric string, meds map[string]map[int]float64) {
	star := meds["star"]
	for _, g := range []struct {
		n    int
		goal float64
	}{{64, 2}, {256, 2.5}} {
		s, ok := star[g.n]
		if !ok {
			continue
		}
		for _, lang := range []string{"go", "c"} {
			hv, fv := "hier-"+lang, "flat-"+lang
			flat := fv + " not measured"
			if f, ok := meds[fv][g.n]; ok {
				flat = fmt.Sprintf("%s %.2fx", fv, f/s)
			}
			h, ok := meds[hv][g.n]
			if !ok {
				fmt.Fprintf(out, "  %s, goal at N=%d (hier <= %.1fx star): %s not measured; %s\n", metric, g.n, g.goal, hv, flat)
				continue
			}
			verdict := "met"
			if h/s > g.goal {
				verdict = "MISSED"
			}
			fmt.Fprintf(out, "  %s, goal at N=%d: %s %.2fx star (goal <= %.1fx: %s); %s\n", metric, g.n, hv, h/s, g.goal, verdict, flat)
		}
	}
}

// variants builds what the bench runs and probes each hierarchical
// variant once at N=4, L=2: an implementation that refuses the flag or the
// variable is reported as not measured, never silently run flat.
func variants(ctx context.Context, o options, dir string) ([]variant, error) {
	nrtabi, star := filepath.Join(dir, "nrtabi-runtime"), filepath.Join(dir, "bootstraptcp")
	for _, b := range [][2]string{{nrtabi, builder.Module + "/cmd/nrtabi-runtime"}, {star, builder.Module + "/bench/bootstraptcp"}} {
		if out, err := exec.CommandContext(ctx, "go", "build", "-tags", abi.BuildTag, "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", b[1], err, out)
		}
	}
	goRun := func(bin string, hier bool) func(ctx context.Context, n, l int) (timing, error) {
		return func(ctx context.Context, n, l int) (timing, error) {
			args := []string{"--local", strconv.Itoa(n), "--timing"}
			if bin == nrtabi {
				args = append([]string{"bootstrap"}, args...)
				if hier {
					args = append(args, "--per-instance", strconv.Itoa(l))
				}
			}
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(os.Environ(), sockTimeout)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			b, err := cmd.Output()
			if err != nil {
				return timing{}, fmt.Errorf("%s %s: %w: %s%s", filepath.Base(bin), strings.Join(args, " "), err, lastLine(stderr.String()), lastLine(string(b)))
			}
			// the launcher names the shape it ran: a hierarchical row is never a flat run
			if hier && !strings.Contains(string(b), "(hierarchical,") {
				return timing{}, fmt.Errorf("%s %s: the world was not hierarchical: %s", filepath.Base(bin), strings.Join(args, " "), lastLine(string(b)))
			}
			boot, ok1 := timingField(string(b), "boot_ms")
			agree, ok2 := timingField(string(b), "agree_ms")
			if !ok1 || !ok2 {
				return timing{}, fmt.Errorf("%s %s printed no timing line", filepath.Base(bin), strings.Join(args, " "))
			}
			return timing{boot: boot, agree: agree}, nil
		}
	}
	vs := []variant{
		{name: "star", algo: bootsim.Star, lang: "go", measure: goRun(star, false)},
		{name: "flat-go", algo: bootsim.Flat, lang: "go", measure: goRun(nrtabi, false)},
		{name: "hier-go", algo: bootsim.Hier, lang: "go", measure: goRun(nrtabi, true)},
		{name: "flat-c", algo: bootsim.Flat, lang: "c"},
		{name: "hier-c", algo: bootsim.Hier, lang: "c"},
	}
	if _, err := vs[2].measure(ctx, 4, 2); err != nil {
		vs[2].skipped = "the probe world of 4 ranks, L=2 failed: " + err.Error()
	}
	if !o.c {
		vs[3].skipped, vs[4].skipped = "-c=false", "-c=false"
		return vs, nil
	}
	host, env, err := buildC(ctx, dir)
	if err != nil {
		vs[3].skipped, vs[4].skipped = err.Error(), err.Error()
		return vs, nil
	}
	vs[3].measure = cRun(host, env, false)
	vs[4].measure = cRun(host, env, true)
	if _, err := vs[4].measure(ctx, 4, 2); err != nil {
		vs[4].skipped = "the probe world of 4 C hosts, " + perInstanceEnv + "=2 failed: " + err.Error()
	}
	return vs, nil
}

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
		runs, _, err := worldprog.Launch(ctx, ms, root, e)
		if err != nil {
			return timing{}, err
		}
		if ok, bad := worldprog.Agreed(runs); !ok {
			return timing{}, fmt.Errorf("the C host %d did not agree (exit %d): %s", bad, runs[bad].Exit, lastLine(runs[bad].Stderr))
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
	return timing{boot: float64(boot-start) / 1e6, agree: float64(agree-start) / 1e6}, nil
}

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

// ---- the simulator ---------------------------------------------------------

// simGoal is the simulator's validation goal (docs/benchmarks.md#the-simulator):
// a prediction within 25 % of the measured point.
const simGoal = 0.25

// noiseFloor: a row measured below it is graded against an absolute
// tolerance (simGoal of the floor, 1.25 ms) as well as the 25 %: at a few
// milliseconds one scheduler delay of this 2-core host is a quarter of the
// time (docs/benchmarks.md#hierarchical-bootstrap). Both are printed; the
// grade is continuous at the floor (25 % of 5 ms is the tolerance).
const noiseFloor = 5e-3

// simTol is the absolute tolerance of a row below noiseFloor.
const simTol = simGoal * noiseFloor

// within says whether a prediction of a row measured at sec seconds with
// relative error e meets the goal, and how: by the 25 % or, below the
// noise floor, by the absolute tolerance.
func within(sec, e float64) (ok bool, how string) {
	if math.Abs(e) <= simGoal {
		return true, ""
	}
	if sec < noiseFloor && math.Abs(e)*sec <= simTol {
		return true, fmt.Sprintf("  within %.2f ms of a %.1f ms row (below the %.0f ms noise floor; %+.0f%%)", simTol*1e3, sec*1e3, noiseFloor*1e3, e*100)
	}
	return false, ""
}

// missCause says what a missed row is made of, as far as this host's
// traces tell (docs/benchmarks.md#hierarchical-bootstrap): at a few
// milliseconds one scheduling delay of the loaded host is a quarter of the
// time; otherwise the cost the model lacks or overcharges for that shape.
func missCause(p bootsim.Point, e float64) string {
	switch {
	case p.Seconds < 0.015:
		return fmt.Sprintf("%.1f ms in all, a few scheduling delays of this host", p.Seconds*1e3)
	case p.Algo == bootsim.Star && e < 0:
		return "its root's N replies of N records cost more at this N than the fitted per-record table cost says"
	case p.Algo == bootsim.Star:
		return "the fitted per-record table cost, set by the largest star rows, overcharges this one"
	case p.Algo == bootsim.Hier && e < 0:
		return "a hop that must wake a sleeping rank waits longer than the per-busy-rank cost fitted on the flat ring says"
	case p.Algo == bootsim.Flat && e > 0:
		return "the per-busy-rank cost fitted across sizes overcharges the longest ring, whose ranks are never all asleep"
	case e < 0:
		return "the row spends time the model has no cost for"
	}
	return "the model charges a cost this row does not pay in full"
}

// interNodeHop is a message's latency between nodes (about 15 us over EFA,
// docs/sources.md#ref-scale).
const interNodeHop = 15e-6

// ranksPerRoot is NCCL's "at most about 128-256 ranks per root"
// (docs/sources.md#ref-scale), for the hier/R column.
const ranksPerRoot = 256

// scaleRecord is the per-record cost past one host: a 112-byte peer record
// at 10 Gb/s.
const scaleRecord = 112 * 8 / 10e9

// published are the anchors of docs/sources.md#ref-scale.
var published = []struct{ what, figure string }{
	{"upstream NCCL, stated goal (fast bootstrap, ~128-256 ranks per root)", "< 30 s at 100k GPUs"},
	{"PyTorch TCPStore, libuv backend", "~100 s for 96k ranks"},
	{"stock NCCL at ~96k GPUs (secondary summary of arXiv 2510.20171)", "~265 s"},
	{"Gloo (pytorch/gloo PR 408)", "85 s at 8k ranks"},
}

// fitResult is the simulator as fitted to this run.
type fitResult struct {
	host    bootsim.Params // this host: with the contention term
	scale   bootsim.Params // past one host: no contention, the spec's backlog, bytes on a wire
	maxErr  float64        // B, every row
	maxHeld float64        // A, the hierarchical rows it did not see
	missed  int            // rows outside the goal (and, below noiseFloor, outside simTol)
}

func simulate(out io.Writer, o options, pts []bootsim.Point) (*fitResult, error) {
	var train []bootsim.Point
	for _, p := range pts {
		if p.Algo != bootsim.Hier {
			train = append(train, p)
		}
	}
	// boot: the address all-gather, then the 112-byte peer records'. The
	// worlds run the default framing (NRTABI_BOOTSTRAP_FRAMING unset), which has no
	// RING_DONE / COMPLETE round through the root; the ranks' own connect
	// delays (flat: rank ms past 128; hierarchical: rank/7000 s past 256,
	// docs/bootstrap-hierarchy.md#stagger) are known, not fitted.
	base := bootsim.Params{Gathers: 2, RankDelay: true}
	held, err := bootsim.Fit(base, train)
	if err != nil {
		fmt.Fprintf(out, "simulator: not fitted: %v\n", err)
		return nil, nil
	}
	host, err := bootsim.Fit(base, pts)
	if err != nil {
		fmt.Fprintf(out, "simulator: not fitted: %v\n", err)
		return nil, nil
	}
	costs := func(p bootsim.Params) string {
		return fmt.Sprintf("fixed %.2f ms, root accept %.1f us per rank, ring hop %.1f us + %.2f us per rank busy in the step (one host's cores), star table %.3f us per record per rank",
			p.Fixed*1e3, p.Accept*1e6, p.Hop*1e6, p.HopPerActive*1e6, p.Table*1e6)
	}
	fmt.Fprintf(out, "\nsimulator (bench/bootsim) on boot, fitted to this run:\n  A (star and flat-go rows; hier held out): %s\n  B (every Go row): %s\n", costs(held), costs(host))
	fmt.Fprintf(out, "%8s %5s %4s %12s %12s %9s %12s %9s\n", "variant", "N", "L", "measured ms", "A ms", "A error", "B ms", "B error")
	res := &fitResult{host: host}
	for _, p := range pts {
		ra, err := bootsim.Simulate(p.Algo, p.N, p.L, held)
		if err != nil {
			return nil, err
		}
		rb, err := bootsim.Simulate(p.Algo, p.N, p.L, host)
		if err != nil {
			return nil, err
		}
		ea, eb := (ra.Seconds-p.Seconds)/p.Seconds, (rb.Seconds-p.Seconds)/p.Seconds
		res.maxErr = max(res.maxErr, math.Abs(eb))
		if p.Algo == bootsim.Hier {
			res.maxHeld = max(res.maxHeld, math.Abs(ea))
		}
		mark := ""
		if p.Algo == bootsim.Hier {
			mark = "  (held out of A)"
		}
		// A row outside the goal is named, on the fit that counts for it:
		// B for every row, and A too for the hierarchical rows it did not
		// see (A's miss named first).
		grades := []float64{eb}
		if p.Algo == bootsim.Hier {
			grades = []float64{ea, eb}
		}
		for _, e := range grades {
			ok, how := within(p.Seconds, e)
			if !ok {
				res.missed++
				mark += fmt.Sprintf("  MISSED (%+.0f%%: %s)", e*100, missCause(p, e))
				break
			}
			if how != "" {
				mark += how
				break
			}
		}
		fmt.Fprintf(out, "%8s %5d %4d %12.2f %12.2f %+8.1f%% %12.2f %+8.1f%%%s\n", p.Algo.String(), p.N, p.L, p.Seconds*1e3, ra.Seconds*1e3, ea*100, rb.Seconds*1e3, eb*100, mark)
	}
	fmt.Fprintf(out, "largest error: B %.1f%% over every row; A %.1f%% on the held-out hierarchical rows (goal within 25%%, or %.2f ms below a %.0f ms row); %d of %d rows MISSED\n", res.maxErr*100, res.maxHeld*100, simTol*1e3, noiseFloor*1e3, res.missed, len(pts))

	// Past one host a rank has a core of its own: a message costs its CPU
	// (the contention term times this host's cores) plus the wire's latency.
	scale := host
	scale.Hop = host.Hop + host.HopPerActive*float64(runtime.NumCPU()) + interNodeHop
	scale.HopPerActive = 0
	scale.Record = scaleRecord
	// The fitted table cost is this host's cores shared by the root's
	// copies and N ranks reading N records each, a contention like
	// HopPerActive's; past one host the table costs its bytes on the
	// root's wire (Record).
	scale.Table = 0
	scale.Backlog = int(abi.BootstrapListenBacklog)
	scale.Retry = 1 // the first SYN retransmit (Linux)
	// The columns are the root's accept scenarios (a burst, NCCL's rate);
	// the flat path's own 2.9.9 stagger (1 ms per rank: 100 s at 100k) is
	// left out of them.
	scale.RankDelay = false
	res.scale = scale
	fmt.Fprintf(out, "\npast one host (B's accept and fixed costs; the star's table at the wire's rate, not this host's contended table cost; a hop of %.1f us: B's per-message CPU on a core of its own + %.0f us between nodes; 112-B records at 10 Gb/s; listen backlog %d = BOOTSTRAP_LISTEN_BACKLOG, SYN retry 1 s doubling; L = %s; hier/R: one root per %d ranks, which nrtabi does not implement):\n",
		scale.Hop*1e6, interNodeHop*1e6, scale.Backlog, policyText(o.perInstance), ranksPerRoot)
	fmt.Fprintf(out, "%7s %5s | %8s %8s %8s %8s | %8s %8s %8s %8s | %s\n", "N", "L", "star", "flat", "hier", "hier/R", "star", "flat", "hier", "hier/R", "drops (burst, hier)")
	fmt.Fprintf(out, "%7s %5s | %35s | %35s |\n", "", "", "all connect at once, s", "staggered 7000/s (NCCL), s")
	for _, n := range []int{1000, 8000, 32000, 100000} {
		l, _ := perInstance(o.perInstance, n)
		fmt.Fprintf(out, "%7d %5d |", n, l)
		drops := 0
		for _, stagger := range []float64{0, 7000} {
			for i, a := range []bootsim.Algo{bootsim.Star, bootsim.Flat, bootsim.Hier, bootsim.Hier} {
				p := scale
				p.Stagger = stagger
				if i == 3 {
					p.Roots = (n + ranksPerRoot - 1) / ranksPerRoot
				}
				r, err := bootsim.Simulate(a, n, l, p)
				if err != nil {
					return nil, err
				}
				if stagger == 0 && i == 2 {
					drops = r.Drops
				}
				fmt.Fprintf(out, " %8.1f", r.Seconds)
			}
			fmt.Fprint(out, " |")
		}
		fmt.Fprintf(out, " %d\n", drops)
	}
	fmt.Fprintln(out, "published anchors (docs/sources.md#ref-scale):")
	for _, a := range published {
		fmt.Fprintf(out, "  %-70s %s\n", a.what, a.figure)
	}
	return res, nil
}
