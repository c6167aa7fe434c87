package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The ranks as users start them: under a real srun and a real mpirun, with
// no --rank, --nranks or --per-instance, so rank, size and ranks per node
// come from the launcher's own environment
// (docs/nrtabi-runtime-bootstrap.md#launchers). Cost: Slurm's start
// (about 3 s) and two worlds of 16 and 8 processes, well under 60 s.

// launcherRankEnv is the environment of the ranks a launcher starts: no
// launcher variables of the test's own, a root on a free loopback port, a
// short socket timeout, and one thread each (16 ranks on 2 cores).
func launcherRankEnv(t *testing.T) (env []string, root string) {
	root = "127.0.0.1:" + strconv.Itoa(freeTestPort(t))
	return append(cleanLauncherEnv(os.Environ()), abi.EnvRootCommID+"="+root, abi.EnvSockTimeout+"=10", "GOMAXPROCS=1"), root
}

// checkLauncherWorld checks the n report lines of a world of l per
// instance (l == n: flat) that must agree.
func checkLauncherWorld(t *testing.T, out string, n, l int) {
	t.Helper()
	lines := rankLines(t, out, n)
	for r, f := range lines {
		prev, next := worldprog.RingNeighbours(r, n, l)
		wantL := strconv.Itoa(l)
		if l >= n {
			prev, next, wantL = (r+n-1)%n, (r+1)%n, ""
		}
		if f["verdict"] != "ok" || f["nranks"] != strconv.Itoa(n) || f["prev"] != strconv.Itoa(prev) || f["next"] != strconv.Itoa(next) ||
			f["per_instance"] != wantL || f["unique_id"] != lines[0]["unique_id"] || f["cluster_id"] != lines[0]["cluster_id"] || f["table"] != lines[0]["table"] {
			t.Errorf("rank %d: %s (want prev=%d next=%d per_instance=%q)", r, f["line"], prev, next, wantL)
		}
	}
}

// srun -N 2 -n 16: two nodes of 8 tasks, block distribution; each rank
// takes rank 0..15, the world size and L = 8 from Slurm, so the world is
// hierarchical, 2 instances of 8. A cyclic distribution is refused by
// the ranks out of block order, naming Slurm's variables, and runs with
// --per-instance; a batch script is refused.
func TestBootstrapUnderSrun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	bin := nrtabiBinary(t)
	t0 := time.Now()
	c := startSlurm(ctx, t, 2, 8)
	t.Logf("Slurm up: %s", time.Since(t0).Round(time.Millisecond))
	env, _ := launcherRankEnv(t)
	srun := func(args ...string) (string, error) {
		return c.run(ctx, env, 20*time.Second, "srun", append([]string{"--time=1", "--kill-on-bad-exit=0", "--quiet"}, args...)...)
	}
	start := time.Now()
	out, err := srun("-N", "2", "-n", "16", "--distribution=block", bin, "bootstrap")
	if err != nil {
		t.Fatalf("srun: %v\n%s", err, tail(out, 6000))
	}
	checkLauncherWorld(t, out, 16, 8)
	if !strings.Contains(out, "bootstrap: placed by Slurm") || !strings.Contains(out, "SLURM_STEP_TASKS_PER_NODE=8(x2)") {
		t.Errorf("no rank says Slurm placed it:\n%s", tail(out, 3000))
	}
	t.Logf("srun -n 16 (2 nodes of 8): %s", time.Since(start).Round(time.Millisecond))

	// The job's batch script has SLURM_PROCID=0 and the job's 16 tasks,
	// but it is one process, not a step's task: refused, not a wait for
	// 15 ranks that never come.
	start = time.Now()
	script, batchOut := filepath.Join(c.dir, "job.sh"), filepath.Join(c.dir, "job.out")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+bin+" bootstrap\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// sbatch --wait polls the job's state at a growing interval (10 s
	// seen): the job's output is read as it comes instead.
	if out, err = c.run(ctx, env, 10*time.Second, "sbatch", "--time=1", "-N", "2", "-n", "16", "-o", batchOut, script); err != nil {
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	waitFor(ctx, t, "the batch script's refusal in "+batchOut, func() (bool, string) {
		b, _ := os.ReadFile(batchOut)
		return strings.Contains(string(b), "not a task of an srun step; start the ranks with srun"), tail(string(b), 3000)
	})
	t.Logf("sbatch, refused: %s", time.Since(start).Round(time.Millisecond))

	// Cyclic: rank 1 is node 1's task 0. Ranks 0 and 3 are in block
	// order by chance and would wait for the others: the step is killed
	// when the first rank is refused.
	start = time.Now()
	out, err = srun("--kill-on-bad-exit=1", "-N", "2", "-n", "4", "--distribution=cyclic", bin, "bootstrap")
	if err == nil || !strings.Contains(out, "is not block order") || !strings.Contains(out, "run srun with --distribution=block, or give --per-instance") {
		t.Errorf("cyclic: %v\n%s", err, tail(out, 3000))
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("cyclic: refused after %s", took)
	} else {
		t.Logf("srun -n 4 cyclic, refused: %s", took.Round(time.Millisecond))
	}
	// The fix the refusal names: --per-instance, and the layout is not read.
	start = time.Now()
	out, err = srun("-N", "2", "-n", "4", "--distribution=cyclic", bin, "bootstrap", "--per-instance", "2")
	if err != nil {
		t.Fatalf("cyclic with --per-instance 2: %v\n%s", err, tail(out, 6000))
	}
	checkLauncherWorld(t, out, 4, 2)
	t.Logf("srun -n 4 cyclic --per-instance 2: %s", time.Since(start).Round(time.Millisecond))
}

// mpirun -n 8 on this one host: L = OMPI_COMM_WORLD_LOCAL_SIZE = 8, a flat
// world; --per-instance 4 (a flag wins) makes it 2 instances of 4; a
// variable that contradicts Open MPI's layout is refused by name.
func TestBootstrapUnderMpirun(t *testing.T) {
	needPrograms(t, map[string]string{"mpirun": "openmpi-bin"}, "openmpi-bin")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	bin := nrtabiBinary(t)
	mpirun := func(extraEnv []string, n int, args ...string) (string, error) {
		env, _ := launcherRankEnv(t)
		env = append(env, extraEnv...)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		mpiArgs := []string{"--allow-run-as-root", "--oversubscribe", "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo", "-n", strconv.Itoa(n)}
		for _, kv := range env {
			if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "NEURON_") || strings.HasPrefix(k, "NRTABI_") || k == "GOMAXPROCS" {
				mpiArgs = append(mpiArgs, "-x", k)
			}
		}
		cmd := proc.Command(cctx, "mpirun", append(append(mpiArgs, bin, "bootstrap"), args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), proc.Err(cctx, err)
	}
	for _, c := range []struct {
		l    int
		args []string
	}{{8, nil}, {4, []string{"--per-instance", "4"}}} {
		t.Run(fmt.Sprintf("L=%d", c.l), func(t *testing.T) {
			start := time.Now()
			out, err := mpirun(nil, 8, c.args...)
			if err != nil {
				t.Fatalf("mpirun: %v\n%s", err, tail(out, 6000))
			}
			checkLauncherWorld(t, out, 8, c.l)
			if !strings.Contains(out, "bootstrap: placed by Open MPI") {
				t.Errorf("no rank says Open MPI placed it:\n%s", tail(out, 3000))
			}
			t.Logf("mpirun -n 8: %s", time.Since(start).Round(time.Millisecond))
		})
	}
	out, err := mpirun([]string{abi.EnvBootstrapPerInstance + "=4"}, 2)
	if err == nil || !strings.Contains(out, abi.EnvBootstrapPerInstance+"=4 but Open MPI's layout is 2 ranks per node (OMPI_COMM_WORLD_RANK=") {
		t.Errorf("contradicting %s: %v\n%s", abi.EnvBootstrapPerInstance, err, tail(out, 3000))
	}
}
