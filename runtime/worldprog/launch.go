package worldprog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/nrtabi/nrtabi/internal/proc"
)

// Member is one rank process of a world: Cmd is its program and arguments
// before the rank's own ("worldhost" or "nrtabi-runtime bootstrap"); Args builds
// the rest from rank, world size and root id.
type Member struct {
	Cmd  []string
	Args func(rank, nranks int, root string) []string
	// NRanks, when non-zero, is the world size this member claims (a fault).
	NRanks int
	Env    []string
}

// WorldHost is a member running the C world host (runtime/e2e's
// worldhost.c: RANK NRANKS ROOT [reordered]).
func WorldHost(path string, reordered bool, env ...string) Member {
	return Member{Cmd: []string{path}, Env: env, Args: func(rank, nranks int, root string) []string {
		a := []string{strconv.Itoa(rank), strconv.Itoa(nranks), root}
		if reordered {
			a = append(a, "reordered")
		}
		return a
	}}
}

// GoRank is a member running `nrtabi-runtime bootstrap` of the nrtabi-runtime binary at path.
func GoRank(path string, reordered bool, env ...string) Member {
	return Member{Cmd: []string{path, "bootstrap"}, Env: env, Args: func(rank, nranks int, root string) []string {
		a := []string{"--rank", strconv.Itoa(rank), "--nranks", strconv.Itoa(nranks), "--root", root}
		if reordered {
			a = append(a, "--program", "reordered")
		}
		return a
	}}
}

// Run is what one member did.
type Run struct {
	Exit   int               // -1: it did not exit normally
	Fields map[string]string // its report line (ParseLine)
	Stderr string
}

// Launch starts every member at once as rank i of one world through root
// (rank 0 serves it), each with env plus its own, and waits for all; when
// ctx ends first, the members still running are killed and report Exit -1.
func Launch(ctx context.Context, ms []Member, root string, env []string) ([]Run, time.Duration, error) {
	return launch(ctx, ms, root, env, false)
}

// LaunchHeld is Launch with the members held up once they agreed (EnvHold,
// hold.go) until every member has said it agreed or has ended, so that no
// member's exit takes the CPU of the members still agreeing.
func LaunchHeld(ctx context.Context, ms []Member, root string, env []string) ([]Run, time.Duration, error) {
	return launch(ctx, ms, root, env, true)
}

// plantHeldEarly is a test's plant: LaunchHeld releases at once.
var plantHeldEarly bool

func launch(ctx context.Context, ms []Member, root string, env []string, held bool) ([]Run, time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(ms)
	runs := make([]Run, n)
	var wg sync.WaitGroup
	settled := make(chan struct{}, n) // a member said it agreed, or ended
	var holds []io.WriteCloser
	start := time.Now()
	for r, m := range ms {
		size := n
		if m.NRanks != 0 {
			size = m.NRanks
		}
		args := append(append([]string(nil), m.Cmd[1:]...), m.Args(r, size, root)...)
		cmd := proc.Command(ctx, m.Cmd[0], args...)
		cmd.Env = append(append(os.Environ(), env...), m.Env...)
		var out, errw bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errw
		var stdout io.ReadCloser
		var err error
		if held {
			cmd.Env = append(cmd.Env, EnvHold+"=1")
			cmd.Stdout = nil
			if stdout, err = cmd.StdoutPipe(); err == nil {
				var h io.WriteCloser
				if h, err = cmd.StdinPipe(); err == nil {
					holds = append(holds, h)
				}
			}
		}
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			cancel() // the members already started cannot form the world
			for _, h := range holds {
				h.Close()
			}
			wg.Wait()
			return nil, 0, fmt.Errorf("starting rank %d (%s): %w", r, m.Cmd[0], err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if stdout != nil {
				said := false
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if !said && (sc.Text() == AgreedLine || IsReportLine(sc.Text())) {
						said = true
						settled <- struct{}{}
					}
					out.WriteString(sc.Text() + "\n")
				}
				_, _ = io.Copy(&out, stdout)
				if !said {
					settled <- struct{}{}
				}
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				runs[r].Exit = ee.ExitCode()
			case err != nil:
				runs[r].Exit = -1
			}
			runs[r].Fields = ParseLine(out.String())
			runs[r].Stderr = errw.String()
		}()
	}
	if held {
		end := (<-chan struct{})(settled)
		if plantHeldEarly {
			end = nil
		}
		released := ReleaseHolds(ctx, holds, nil, end, n)
		defer func() { <-released }()
	}
	wg.Wait()
	return runs, time.Since(start), nil
}

// Agreed reports whether every run succeeded and agrees with rank 0 on the
// world (cluster id, unique id, ring neighbours, size); the first rank
// that does not is returned otherwise. A rank that reports per_instance
// (a hierarchical world, docs/bootstrap-hierarchy.md) must report the
// intra-instance ring's neighbours; the ranks that print a gathered-table
// digest must all print the same one.
func Agreed(runs []Run) (bool, int) {
	n := len(runs)
	table := ""
	for r, run := range runs {
		f := run.Fields
		l, _ := strconv.Atoi(f["per_instance"])
		prev, next := RingNeighbours(r, n, l)
		if run.Exit != 0 || f["verdict"] != "ok" || f["cluster_id"] != runs[0].Fields["cluster_id"] || f["unique_id"] != runs[0].Fields["unique_id"] ||
			f["prev"] != strconv.Itoa(prev) || f["next"] != strconv.Itoa(next) || f["nranks"] != strconv.Itoa(n) {
			return false, r
		}
		if t := f["table"]; t != "" {
			if table != "" && t != table {
				return false, r
			}
			table = t
		}
	}
	return true, -1
}

// RingNeighbours are the prev and next a rank reports: the flat ring's, or
// on a hierarchical world (global, n > l >= 1) the intra-instance ring's.
func RingNeighbours(r, n, l int) (prev, next int) {
	if l < 1 || n <= l {
		return (r + n - 1) % n, (r + 1) % n
	}
	base := r / l * l
	lh := min(l, n-base)
	return base + (r-base-1+lh)%lh, base + (r-base+1)%lh
}
