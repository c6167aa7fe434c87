package launch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// localRank is one spawned rank process and what it reported.
type localRank struct {
	rank   int
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	exit   int    // -1: ended by a signal
	signal string // the signal, when exit is -1
	fields map[string]string
	// cancel kills this rank's process group; stopped says the launcher
	// did (the world had already failed), ended when the process ended,
	// from the launcher's start.
	cancel  context.CancelFunc
	stopped bool
	ended   time.Duration
}

// RunLocal spawns o.Local rank processes (o.RankCmd, by default this very
// binary's "bootstrap"), each one rank of a world rooted on a free loopback
// port, prints every rank's line and the verdict, and returns nil only when
// every one exits 0 and all agree on the world.
func RunLocal(ctx context.Context, o Options, out, errw io.Writer) error {
	if err := tcp.CheckWorldSize("--local", o.Local); err != nil {
		return &UsageError{err}
	}
	ranks, summary, err := spawnLocal(ctx, o, errw)
	if err != nil {
		return err
	}
	if summary.cause != "" {
		fmt.Fprintln(out, summary.cause)
	}
	for _, r := range ranks {
		if line := r.fields["line"]; line != "" {
			fmt.Fprintln(out, esc(line))
		} else if r.stopped {
			fmt.Fprintf(out, "rank=%d printed nothing (stopped by the launcher)\n", r.rank)
		} else {
			fmt.Fprintf(out, "rank=%d printed nothing (exit %d)\n", r.rank, r.exit)
		}
	}
	fmt.Fprintln(out, summary.text)
	if o.Timing {
		fmt.Fprintln(out, summary.timing)
	}
	if !summary.ok {
		for _, r := range ranks {
			if r.exit != 0 && o.Verbose {
				fmt.Fprintf(errw, "---- rank %d (exit %d) stderr:\n%s", r.rank, r.exit, r.stderr.String())
			}
		}
		return ErrFailed
	}
	return nil
}

// localSummary is the launcher's verdict over all ranks.
type localSummary struct {
	ok     bool
	cause  string // the root cause line of a failed world (rootCause)
	text   string
	timing string
}

// spawnLocal runs the ranks and judges them.
func spawnLocal(ctx context.Context, o Options, errw io.Writer) ([]*localRank, localSummary, error) {
	n := o.Local
	rankCmd := o.RankCmd
	if len(rankCmd) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, localSummary{}, fmt.Errorf("cannot find this binary to run its ranks: %w", err)
		}
		rankCmd = []string{exe, "bootstrap"}
	}
	// Bind the root's socket here, before any rank exists, and hand it to
	// rank 0: a port only probed for would be free to be taken by a rank's
	// own listener before rank 0 binds it.
	rootLn, err := tcp.ListenPlain(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0))
	if err != nil {
		return nil, localSummary{}, fmt.Errorf("binding the root's loopback socket: %w", err)
	}
	rootFile, err := rootLn.File()
	rootLn.Close() // the duplicate in rootFile keeps the socket listening
	if err != nil {
		return nil, localSummary{}, fmt.Errorf("passing the root's socket to rank 0: %w", err)
	}
	defer rootFile.Close()
	rootID := rootLn.Addr().String()
	base := append(localEnv(os.Environ()), o.ChildEnv...)
	cfg, err := tcp.ConfigFromEnv(envLookup(base))
	if err != nil {
		return nil, localSummary{}, err
	}
	timeout := cfg.SockTimeout()
	// L is the launcher's to decide, once, and every rank's (a C rank
	// reads only the variable): docs/bootstrap-hierarchy.md.
	l, err := o.perInstance(cfg.PerInstance)
	if err != nil {
		return nil, localSummary{}, &UsageError{err}
	}
	o.PerInstance = l
	if l > 0 {
		base = append(base, abi.EnvBootstrapPerInstance+"="+strconv.Itoa(l))
	}
	nroots, err := localRoots(o, n, l, cfg.Extended)
	if err != nil {
		return nil, localSummary{}, err
	}
	rootAddrs, rootFiles, err := bindRoots(nroots)
	for _, f := range rootFiles {
		defer f.Close()
	}
	if err != nil {
		return nil, localSummary{}, err
	}
	if nroots > 1 {
		base = append(base, abi.EnvBootstrapRoots+"="+strings.Join(append([]string{rootID}, rootAddrs...), ","))
	}
	base = oneProcPerRank(base, n, runtime.NumCPU())
	// Every rank bounds its own waits; this deadline only guards against a
	// rank that does not, and kills every rank's process group.
	ctx, cancel := context.WithTimeout(ctx, 6*timeout+time.Duration(n)*time.Second)
	defer cancel()
	ranks := make([]*localRank, n)
	for r := 0; r < n; r++ {
		args := append(append([]string(nil), rankCmd[1:]...), "--rank", strconv.Itoa(r), "--nranks", strconv.Itoa(n), "--root", rootID)
		if o.Timing {
			args = append(args, "--timing", "--hold")
		}
		if o.Verbose {
			args = append(args, "-v")
		}
		env := append([]string(nil), base...)
		if r == o.ReorderRank {
			env = append(env, EnvProgram+"=reordered")
		}
		if r == o.SkewRank {
			env = append(env, EnvNRTGit+"=0000skew")
		}
		if r == o.FaultRank && o.Fault != "" {
			env = append(env, EnvFault+"="+o.Fault)
		}
		if r == o.MisplaceRank && l > 0 {
			env = append(env, abi.EnvBootstrapPerInstance+"="+strconv.Itoa(l+1))
		}
		rctx, rcancel := context.WithCancel(ctx)
		defer rcancel()
		lr := &localRank{rank: r, cmd: proc.Command(rctx, rankCmd[0], args...), cancel: rcancel}
		if r == 0 {
			lr.cmd.ExtraFiles = []*os.File{rootFile} // fd 3
			env = append(env, envRootFD+"=3")
		}
		for i := 1; i < nroots; i++ {
			if lo, _ := tcp.RootRange(i, nroots, n, l, true); lo == r {
				lr.cmd.ExtraFiles = []*os.File{rootFiles[i-1]} // fd 3: root i
				env = append(env, envRootFD+"=3")
			}
		}
		lr.cmd.Env = env
		lr.cmd.Stderr = &lr.stderr
		ranks[r] = lr
	}
	// With --timing every rank holds after its start-up until all are up,
	// and after its report until all have reported (worldprog/hold.go), so the
	// measured phases include neither process creation nor the exits of
	// the ranks that finished first.
	ready := make(chan struct{}, n)
	settled := make(chan struct{}, n) // a rank's report line, or its end
	done := make(chan *localRank, n)
	var holds []io.WriteCloser
	start := time.Now()
	for _, lr := range ranks {
		stdout, err := lr.cmd.StdoutPipe()
		if err == nil && o.Timing {
			var hold io.WriteCloser
			if hold, err = lr.cmd.StdinPipe(); err == nil {
				holds = append(holds, hold)
			}
		}
		if err == nil {
			err = lr.cmd.Start()
		}
		if err != nil {
			cancel()
			for _, started := range ranks {
				if started.cmd.Process != nil {
					_ = started.cmd.Wait()
				}
			}
			return nil, localSummary{}, fmt.Errorf("starting rank %d: %w", lr.rank, err)
		}
		go func() {
			sc := bufio.NewScanner(stdout)
			held, reported := false, false
			for sc.Scan() {
				if sc.Text() == "ready" && !held {
					held = true
					ready <- struct{}{}
					continue
				}
				if !reported && worldprog.IsReportLine(sc.Text()) {
					reported = true
					settled <- struct{}{}
				}
				lr.stdout.WriteString(sc.Text() + "\n")
			}
			_, _ = io.Copy(&lr.stdout, stdout)
			if !held {
				// A rank that ends before it is ready will never be: the
				// others need not wait for it to start (it is judged failed).
				ready <- struct{}{}
			}
			if !reported {
				settled <- struct{}{}
			}
			lr.wait()
			lr.ended = time.Since(start)
			done <- lr
		}()
	}
	if o.Timing {
		end := (<-chan struct{})(settled)
		if plantEarlyRelease {
			end = nil
		}
		released := worldprog.ReleaseHolds(ctx, holds, ready, end, n)
		defer func() { <-released }()
	}
	awaitRanks(ranks, done, errw)
	return ranks, judge(ranks, o), nil
}

// plantEarlyRelease is a test's plant: the end hold released with the start.
var plantEarlyRelease bool

// localGrace is how long the other ranks have to report, once one rank
// has failed, before the launcher stops them: a world with a failed rank
// cannot agree, and a rank that has not heard of it would otherwise hold
// the command until its socket timeout (30 s by default) for nothing. It
// is above the 2 s in which a rank hears of a neighbour's death
// (docs/nrtabi-runtime-bootstrap.md#when-a-rank-fails).
const localGrace = 3 * time.Second

// awaitRanks waits for every rank to end. When the first one fails it
// says so on errw at once, and the ranks still running localGrace later
// are stopped (their process groups killed) and marked so.
func awaitRanks(ranks []*localRank, done <-chan *localRank, errw io.Writer) {
	var grace <-chan time.Time
	var first *localRank
	ended := map[*localRank]bool{}
	for left := len(ranks); left > 0; {
		select {
		case lr := <-done:
			left--
			ended[lr] = true
			switch {
			case first == nil && lr.exit != 0:
				first = lr
				fmt.Fprintf(errw, "bootstrap --local %d: rank %d %s %.2fs in; the other ranks have %s to report before they are stopped\n",
					len(ranks), lr.rank, lr.how(), lr.ended.Seconds(), localGrace)
				t := time.NewTimer(localGrace)
				defer t.Stop()
				grace = t.C
			case lr.died() && !lr.stopped:
				// Reaped after the first failure, but dead, not told.
				fmt.Fprintf(errw, "bootstrap --local %d: rank %d %s %.2fs in\n", len(ranks), lr.rank, lr.how(), lr.ended.Seconds())
			}
		case <-grace:
			grace = nil
			for _, lr := range ranks {
				if !ended[lr] {
					lr.stopped = true
					lr.cancel()
				}
			}
		}
	}
}

// wait reaps the rank's process and reads how it ended.
func (lr *localRank) wait() {
	err := lr.cmd.Wait()
	lr.exit = 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		lr.exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			lr.signal = ws.Signal().String()
		}
	} else if err != nil {
		lr.exit = -1
	}
	lr.fields = parseRankLine(lr.stdout.String())
}

// died says the rank's process ended without its report: a signal the
// launcher did not send, or an exit with no report line.
func (lr *localRank) died() bool {
	return lr.exit != 0 && !lr.stopped && (lr.signal != "" || lr.fields["line"] == "")
}

// how says how a failed rank ended, for the launcher's lines.
func (lr *localRank) how() string {
	switch {
	case lr.signal != "":
		return "was ended by signal " + lr.signal
	case lr.fields["line"] == "":
		return fmt.Sprintf("exited %d without a report", lr.exit)
	}
	return fmt.Sprintf("exited %d", lr.exit)
}

// judge checks that every rank succeeded and that they agree.
func judge(ranks []*localRank, o Options) localSummary {
	n := len(ranks)
	var failed []string
	for _, lr := range ranks {
		if lr.exit != 0 {
			status, why := fmt.Sprintf("exit %d", lr.exit), lr.why()
			switch {
			case lr.stopped:
				status, why = "stopped by the launcher", fmt.Sprintf("still running %s after the first failure", localGrace)
			case lr.signal != "":
				status, why = "ended by signal", lr.signal
			}
			failed = append(failed, fmt.Sprintf("  rank %d: %s: %s", lr.rank, status, esc(why)))
		}
	}
	if len(failed) > 0 {
		return localSummary{cause: rootCause(ranks), text: fmt.Sprintf("bootstrap --local %d: %d of %d ranks exited non-zero:\n%s", n, len(failed), n, strings.Join(failed, "\n"))}
	}
	ref := ranks[0].fields
	var disagree []string
	for _, lr := range ranks {
		f := lr.fields
		for _, k := range []string{"cluster_id", "unique_id", "verdict", "nranks"} {
			if f[k] != ref[k] {
				disagree = append(disagree, fmt.Sprintf("  rank %d: %s=%s, rank 0 has %s", lr.rank, k, esc(f[k]), esc(ref[k])))
			}
		}
		if prev, next := worldprog.RingNeighbours(lr.rank, n, o.PerInstance); f["prev"] != strconv.Itoa(prev) || f["next"] != strconv.Itoa(next) {
			disagree = append(disagree, fmt.Sprintf("  rank %d: ring neighbours %s/%s, want %d/%d", lr.rank, esc(f["prev"]), esc(f["next"]), prev, next))
		}
		// The gathered peer-record tables, compared whole (by digest).
		if f["table"] != ref["table"] {
			disagree = append(disagree, fmt.Sprintf("  rank %d: gathered table %s, rank 0 has %s", lr.rank, esc(f["table"]), esc(ref["table"])))
		}
		if f["rank"] != strconv.Itoa(lr.rank) {
			disagree = append(disagree, fmt.Sprintf("  process %d reported rank %s", lr.rank, esc(f["rank"])))
		}
	}
	if len(disagree) > 0 {
		return localSummary{text: fmt.Sprintf("bootstrap --local %d: the ranks disagree:\n%s", n, strings.Join(disagree, "\n"))}
	}
	shape := "flat"
	if tcp.Hierarchical(true, n, o.PerInstance) {
		shape = fmt.Sprintf("hierarchical, %d instances of %d", (n+o.PerInstance-1)/o.PerInstance, o.PerInstance)
	}
	s := localSummary{ok: true, text: fmt.Sprintf("bootstrap --local %d: all %d ranks agree (%s): cluster_id %s, unique id %s, gathered table %s, signature verdict %s",
		n, n, shape, esc(ref["cluster_id"]), esc(ref["unique_id"]), esc(ref["table"]), esc(ref["verdict"]))}
	if o.Timing {
		s.timing = timingLine(ranks)
	}
	return s
}

// timingLine is the wall time of each phase, from the moment the last rank
// started to the moment the last rank reached the phase.
func timingLine(ranks []*localRank) string {
	last := func(k string) int64 {
		var m int64
		for _, lr := range ranks {
			v, _ := strconv.ParseInt(lr.fields[k], 10, 64)
			m = max(m, v)
		}
		return m
	}
	start := last("t_start")
	ms := func(k string) float64 { return float64(last(k)-start) / 1e6 }
	line := fmt.Sprintf("timing: n=%d boot_ms=%.3f agree_ms=%.3f done_ms=%.3f", len(ranks), ms("t_boot"), ms("t_agree"), ms("t_done"))
	return line + usageSums(ranks)
}

// usageSums is the CPU and voluntary context switches every rank spent in
// each phase (start to boot, boot to agree, agree to done), summed over
// the world from the ranks' u_* fields (worldprog.Usage); "" when a rank
// reported none, so a sum never stands for part of the world.
func usageSums(ranks []*localRank) string {
	var cpu [3]float64
	var vcsw [3]int64
	keys := [4]string{"u_start", "u_boot", "u_agree", "u_done"}
	for _, lr := range ranks {
		var u [4]worldprog.Usage
		for i, k := range keys {
			v, ok := worldprog.ParseUsage(lr.fields[k])
			if !ok {
				return ""
			}
			u[i] = v
		}
		for i := 0; i < 3; i++ {
			cpu[i] += float64(u[i+1].CPU-u[i].CPU) / 1e6
			vcsw[i] += u[i+1].Nvcsw - u[i].Nvcsw
		}
	}
	return fmt.Sprintf(" cpu_boot_ms=%.1f cpu_agree_ms=%.1f cpu_done_ms=%.1f vcsw_boot=%d vcsw_agree=%d vcsw_done=%d", cpu[0], cpu[1], cpu[2], vcsw[0], vcsw[1], vcsw[2])
}

// parseRankLine reads the key=value line a rank prints (worldprog.ParseLine).
func parseRankLine(out string) map[string]string { return worldprog.ParseLine(out) }

// esc shows a rank's text on the launcher's terminal: a rank's error can
// hold a peer's words (an ABORT's reason), and a rank program other than
// bootstrap prints what it likes, so control bytes are escaped
// (docs/nrtabi-runtime-bootstrap.md).
func esc(s string) string { return cfmt.Escape(s, rankTextMax) }

// rankTextMax bounds one piece of a rank's text in the summary: room for
// the longest error a rank reports, a peer's ABORT inside it.
const rankTextMax = 4 * cfmt.PeerTextMax

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// localEnv is the environment the ranks inherit: without another
// launcher's rank variables and without the per-rank knobs, which the
// launcher hands out itself.
func localEnv(env []string) []string {
	drop := map[string]bool{EnvProgram: true, EnvNRTGit: true, EnvFault: true, abi.EnvRootCommID: true}
	for _, v := range launcherVars() {
		drop[v] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}

// oneProcPerRank gives each rank GOMAXPROCS=1 when the ranks outnumber
// the cores and the caller set no GOMAXPROCS: a Go rank whose one
// goroutine parks on a ring read otherwise spins a second thread looking
// for work to steal, CPU the other ranks on the host are waiting for
// (docs/benchmarks.md#hierarchical-bootstrap: boot 25-30 % faster at 64-256
// ranks on 2 cores). A C rank ignores the variable.
func oneProcPerRank(env []string, n, cpus int) []string {
	if n <= cpus {
		return env
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOMAXPROCS=") {
			return env
		}
	}
	return append(env, "GOMAXPROCS=1")
}

// envLookup reads a KEY=value list as getenv would (the last one wins).
func envLookup(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}
