package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/internal/proc"
)

// slurmCluster is a real Slurm on this machine for one test: munged with
// a key made for it, slurmctld and one slurmd per node, every daemon in
// the foreground as a child of the test (killed with its process group on
// cleanup), every file under one temporary directory. The nodes all run
// here (slurmd -N), each declared with more CPUs than the machine has
// (config_overrides: slurmd reports what the file says), OverSubscribe
// forced, no cgroups (proctrack/linuxproc, task/none).
type slurmCluster struct {
	dir, conf string
	env       []string // SLURM_CONF for the client commands
	logs      []string
}

// slurmTools are the programs the cluster needs, and their packages.
var slurmTools = map[string]string{"munged": "munge", "mungekey": "munge", "slurmctld": "slurmctld (slurm-wlm)",
	"slurmd": "slurmd (slurm-wlm)", "srun": "slurm-client (slurm-wlm)", "sinfo": "slurm-client (slurm-wlm)"}

// needPrograms skips t, saying what to install, when a program is missing.
func needPrograms(t *testing.T, tools map[string]string, install string) {
	t.Helper()
	var missing []string
	for p, pkg := range tools {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p+" ("+pkg+")")
		}
	}
	if len(missing) > 0 {
		t.Skipf("%s not installed: apt-get install -y --no-install-recommends %s (.ci/run installs them)", strings.Join(missing, ", "), install)
	}
}

// startSlurm starts the cluster with nodes nodes of cpus CPUs each, within
// the test's context, and waits until every node is idle.
func startSlurm(ctx context.Context, t *testing.T, nodes, cpus int) *slurmCluster {
	t.Helper()
	needPrograms(t, slurmTools, "slurm-wlm munge")
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "nrtabi-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	c := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	c.env = []string{"SLURM_CONF=" + c.conf}
	var daemons []*exec.Cmd
	var wg sync.WaitGroup
	// The daemons outlive the test function's context (its deferred
	// cancel runs before the cleanup, which needs slurmd to end the
	// steps) but not this bound.
	dctx, dcancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(func() {
		defer dcancel()
		t0 := time.Now()
		defer func() { t.Logf("Slurm down: %s", time.Since(t0).Round(time.Millisecond)) }()
		// The steps first, while slurmd can still end them; a slurmstepd
		// is in a session of its own, out of slurmd's process group.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if len(daemons) > 2 {
			_, _ = c.client(cctx, 3*time.Second, "scancel", "--user", me.Username)
			for cctx.Err() == nil && len(holders(dir, "slurmstepd")) > 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		for _, d := range daemons {
			_ = d.Cancel()
		}
		wg.Wait()
		for _, pid := range holders(dir, "") {
			t.Logf("killing process %d, still holding a file of %s", pid, dir)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if t.Failed() {
			for _, l := range c.logs {
				b, _ := os.ReadFile(l)
				t.Logf("---- %s:\n%s", filepath.Base(l), tail(string(b), 3000))
			}
		}
		os.RemoveAll(dir)
	})
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key, sock := filepath.Join(dir, "munge", "key"), filepath.Join(dir, "munge", "sock")
	run := func(name string, args ...string) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if out, err := proc.Command(cctx, name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("mungekey", "--create", "--keyfile", key, "--bits", "1024")
	ports := make([]int, nodes+1)
	for i := range ports {
		ports[i] = freeTestPort(t)
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, `ClusterName=nrtabi
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmUser=%[3]s
SlurmdUser=%[3]s
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[4]s
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool/%%n
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.%%n.pid
SlurmctldLogFile=%[5]s/slurmctld.log
SlurmdLogFile=%[5]s/slurmd.%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
`, host, ports[0], me.Username, sock, dir)
	var names []string
	for i := 0; i < nodes; i++ {
		names = append(names, fmt.Sprintf("n%d", i))
		fmt.Fprintf(&conf, "NodeName=n%d NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d State=UNKNOWN\n", i, host, ports[i+1], cpus)
	}
	fmt.Fprintf(&conf, "PartitionName=p Nodes=%s Default=YES OverSubscribe=FORCE MaxTime=2 State=UP\n", strings.Join(names, ","))
	if err := os.WriteFile(c.conf, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(log string, name string, args ...string) {
		cmd := proc.Command(dctx, name, args...)
		cmd.Env = append(os.Environ(), c.env...)
		f, err := os.Create(filepath.Join(dir, log+".out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		daemons = append(daemons, cmd)
		c.logs = append(c.logs, f.Name())
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = cmd.Wait()
			f.Close()
		}()
	}
	// -f: the key's directory is the test's, not /etc/munge.
	start("munged", "munged", "--foreground", "--force", "--key-file="+key, "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munge", "pid"), "--log-file="+filepath.Join(dir, "munge", "log"), "--seed-file="+filepath.Join(dir, "munge", "seed"))
	c.logs = append(c.logs, filepath.Join(dir, "munge", "log"))
	waitFor(ctx, t, "munged's socket", func() (bool, string) { _, err := os.Stat(sock); return err == nil, fmt.Sprint(err) })
	start("slurmctld", "slurmctld", "-D", "-i", "-f", c.conf)
	c.logs = append(c.logs, filepath.Join(dir, "slurmctld.log"))
	for _, n := range names {
		start("slurmd."+n, "slurmd", "-D", "-N", n, "-f", c.conf)
		c.logs = append(c.logs, filepath.Join(dir, "slurmd."+n+".log"))
	}
	want := strings.Repeat("idle\n", nodes)
	waitFor(ctx, t, "every node idle in sinfo", func() (bool, string) {
		out, err := c.client(ctx, 5*time.Second, "sinfo", "-h", "-N", "-o", "%t")
		return err == nil && out == want, out + fmt.Sprint(err)
	})
	return c
}

// client runs one of Slurm's client commands against the cluster, bounded
// by limit, and returns its standard output.
func (c *slurmCluster) client(ctx context.Context, limit time.Duration, name string, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := proc.Command(cctx, name, args...)
	cmd.Env = append(cleanLauncherEnv(os.Environ()), c.env...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %v: %w: %s", name, args, proc.Err(cctx, err), tail(errw.String(), 2000))
	}
	return out.String(), err
}

// run runs a job command (srun, sbatch) with env and the cluster's
// SLURM_CONF, bounded by limit, and returns its output, both streams.
func (c *slurmCluster) run(ctx context.Context, env []string, limit time.Duration, name string, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := proc.Command(cctx, name, args...)
	cmd.Env = append(append([]string(nil), env...), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), proc.Err(cctx, err)
}

// waitFor polls ok every 100 ms until it holds or ctx ends (then t fails
// with the last state).
func waitFor(ctx context.Context, t *testing.T, what string, ok func() (bool, string)) {
	t.Helper()
	last := ""
	for {
		var done bool
		if done, last = ok(); done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; last: %s", what, context.Cause(ctx), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// cleanLauncherEnv is env without any launcher's variables: a test run
// under srun, mpirun or torchrun must not hand its own placement to the
// ranks it launches.
func cleanLauncherEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "OMPI_") || strings.HasPrefix(k, "PMIX_") ||
			k == "RANK" || k == "WORLD_SIZE" || k == "LOCAL_RANK" || k == "LOCAL_WORLD_SIZE" || k == "GROUP_RANK" || k == "GROUP_WORLD_SIZE" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// holders are the processes with a file under dir open whose command
// line starts with prefix: the cluster's daemons and whatever slurmstepd
// outlived them.
func holders(dir, prefix string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if cl, err := os.ReadFile(p + "/cmdline"); err != nil || !strings.HasPrefix(string(cl), prefix) {
			continue
		}
		fds, _ := filepath.Glob(p + "/fd/*")
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, dir+"/") {
				if pid, err := strconv.Atoi(filepath.Base(p)); err == nil && pid != os.Getpid() {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}
