package launch

import (
	"reflect"
	"strings"
	"testing"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// The environments srun, mpirun and torchrun give a rank (the variables
// as the real launchers set them: launcher_real_test.go runs them).
func TestReadLauncherPlacements(t *testing.T) {
	for _, c := range []struct {
		env            []string
		want           string
		rank, size, l  int
		local, node    int
		launcherChosen string
	}{
		{[]string{"SLURM_PROCID=11", "SLURM_NTASKS=16", "SLURM_STEP_NUM_TASKS=16", "SLURM_LOCALID=3", "SLURM_NODEID=1", "SLURM_STEP_TASKS_PER_NODE=8(x2)", "SLURM_TASKS_PER_NODE=8(x2)"}, "Slurm", 11, 16, 8, 3, 1, ""},
		{[]string{"SLURM_PROCID=4", "SLURM_NTASKS=5", "SLURM_STEP_NUM_TASKS=5", "SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_TASKS_PER_NODE=3,2"}, "Slurm", 4, 5, 3, 1, 1, ""},
		{[]string{"SLURM_PROCID=2", "SLURM_NTASKS=3", "SLURM_STEP_NUM_TASKS=3"}, "Slurm", 2, 3, 0, -1, -1, ""},
		{[]string{"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_RANK=5", "OMPI_COMM_WORLD_LOCAL_SIZE=8", "OMPI_COMM_WORLD_NODE_RANK=5"}, "Open MPI", 5, 8, 8, 5, 0, ""},
		{[]string{"RANK=9", "WORLD_SIZE=16", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "GROUP_RANK=2", "GROUP_WORLD_SIZE=4"}, "torchrun", 9, 16, 4, 1, 2, ""},
		// srun running one torchrun per node: two numberings, one chosen.
		{[]string{"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_STEP_NUM_TASKS=2", "RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4"}, "torchrun", 5, 8, 4, 1, 1, "torchrun"},
		// Open MPI under srun's direct launch: both agree.
		{[]string{"SLURM_PROCID=3", "SLURM_NTASKS=4", "SLURM_STEP_NUM_TASKS=4", "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4"}, "Slurm", 3, 4, 0, -1, -1, ""},
	} {
		p, err := ReadLauncher(c.launcherChosen, envOf(c.env...), true)
		if err != nil || p == nil {
			t.Errorf("%v: %v %v", c.env, p, err)
			continue
		}
		got := []int{p.Rank, p.Size, p.PerInstance, p.LocalRank, p.Node}
		if want := []int{c.rank, c.size, c.l, c.local, c.node}; p.Launcher != c.want || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: %s %v, want %s %v", c.env, p.Launcher, got, c.want, want)
		}
	}
	// A layout of 4096 nodes is read whole but shown bounded.
	long := envOf("SLURM_PROCID=0", "SLURM_NTASKS=4096", "SLURM_STEP_NUM_TASKS=4096", "SLURM_LOCALID=0", "SLURM_NODEID=0",
		"SLURM_STEP_TASKS_PER_NODE="+strings.Repeat("1,", 4095)+"1")
	if p, err := ReadLauncher("", long, true); err != nil || p.PerInstance != 1 || len(p.From) > 200 {
		t.Errorf("long layout: %v %+v", err, p)
	}
	if p, err := ReadLauncher("", envOf(), true); p != nil || err != nil {
		t.Errorf("no launcher: %v %v", p, err)
	}
}

// Hostile or inconsistent environments: each refused naming the variable
// and saying what to do.
func TestReadLauncherRefusals(t *testing.T) {
	slurm := func(extra ...string) []string {
		return append([]string{"SLURM_PROCID=9", "SLURM_NTASKS=16", "SLURM_STEP_NUM_TASKS=16", "SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_STEP_TASKS_PER_NODE=8(x2)"}, extra...)
	}
	for _, c := range []struct {
		launcher string
		env      []string
		want     string
	}{
		{"", []string{"SLURM_PROCID=1"}, `SLURM_PROCID="1", SLURM_NTASKS="": both are needed`},
		{"", []string{"SLURM_PROCID=-1", "SLURM_NTASKS=4"}, `SLURM_PROCID="-1": not a whole number`},
		{"", []string{"SLURM_PROCID=+1", "SLURM_NTASKS=4"}, `SLURM_PROCID="+1": not a whole number`},
		{"", []string{"SLURM_PROCID=1", "SLURM_NTASKS=4 "}, `SLURM_NTASKS="4 ": not a whole number`},
		{"", []string{"SLURM_PROCID=1", "SLURM_NTASKS=99999999999"}, `SLURM_NTASKS="99999999999"`},
		{"", []string{"SLURM_PROCID=1", "SLURM_NTASKS=\x1b[2J"}, `SLURM_NTASKS="\x1b[2J"`},
		{"", []string{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_STEP_NUM_TASKS=2"}, "SLURM_NTASKS=4 but SLURM_STEP_NUM_TASKS=2"},
		{"", slurm("SLURM_STEP_TASKS_PER_NODE=8(x3)"), "adds up to 24 tasks, SLURM_NTASKS=16"},
		{"", slurm("SLURM_STEP_TASKS_PER_NODE=8(y2)"), `"8(y2)": want N or N(xR)`},
		{"", slurm("SLURM_STEP_TASKS_PER_NODE=0(x16)"), `"0(x16)": want N or N(xR)`},
		{"", slurm("SLURM_STEP_TASKS_PER_NODE=6,10"), "node 1 runs 10 tasks, node 0 6"},
		{"", slurm("SLURM_STEP_TASKS_PER_NODE=8,4,4"), "node 1 runs 4 tasks, node 0 8"},
		{"", slurm("SLURM_NODEID=2"), "SLURM_NODEID=2 but SLURM_STEP_TASKS_PER_NODE=\"8(x2)\" has 2 nodes"},
		{"", slurm("SLURM_LOCALID=8"), "SLURM_LOCALID=8 but node 1 runs 8 tasks"},
		{"", slurm("SLURM_PROCID=2"), "not block order (node*8+local = 9): run srun with --distribution=block"},
		{"", slurm("SLURM_NODEID="), "SLURM_NODEID is not set"},
		{"", []string{"SLURM_PROCID=1", "SLURM_NTASKS=4", "SLURM_STEP_NUM_TASKS=4", "SLURM_LOCALID=1", "SLURM_NODEID=0"}, "the tasks per node are unknown"},
		// sbatch's script, as a real Slurm sets it (no step variables).
		{"", []string{"SLURM_PROCID=0", "SLURM_NTASKS=16", "SLURM_LOCALID=0", "SLURM_NODEID=0", "SLURM_TASKS_PER_NODE=8(x2)"}, "this is a job's batch script or allocation shell, not a task of an srun step; start the ranks with srun"},
		{"", []string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=2"}, "not block order (local = rank % 2 = 1): use mpirun --map-by slot"},
		{"", []string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=2"}, "both are needed, or neither"},
		{"", []string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=8"}, "OMPI_COMM_WORLD_LOCAL_SIZE=8: want 1..4"},
		{"", []string{"RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "GROUP_RANK=0"}, "GROUP_RANK=0 but RANK=5"},
		{"", []string{"RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "GROUP_WORLD_SIZE=3"}, "GROUP_WORLD_SIZE=3"},
		{"", []string{"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_STEP_NUM_TASKS=2", "RANK=5", "WORLD_SIZE=8"}, "Slurm (SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_STEP_NUM_TASKS=2) and torchrun (RANK=5 WORLD_SIZE=8) disagree on this process's place: give --launcher slurm or --launcher torchrun"},
		{"mpich", []string{"RANK=1", "WORLD_SIZE=2"}, `--launcher "mpich": use slurm, ompi, torchrun`},
		{"ompi", []string{"RANK=1", "WORLD_SIZE=2"}, "--launcher ompi: none of its variables is set (OMPI_COMM_WORLD_RANK"},
	} {
		p, err := ReadLauncher(c.launcher, envOf(c.env...), true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v %v; want %q", c.env, p, err, c.want)
		}
	}
}

// The grouping a launcher gives is L unless a flag or the variable says
// otherwise; the variable and the launcher must agree.
func TestPerInstanceFromLauncher(t *testing.T) {
	env := envOf("SLURM_PROCID=9", "SLURM_NTASKS=16", "SLURM_STEP_NUM_TASKS=16", "SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_STEP_TASKS_PER_NODE=8(x2)")
	o := Options{Rank: -1}
	if err := o.ResolveRank(map[string]bool{}, env); err != nil || o.Rank != 9 || o.NRanks != 16 {
		t.Fatalf("%v %d/%d", err, o.Rank, o.NRanks)
	}
	if l, err := o.perInstance(0); l != 8 || err != nil {
		t.Errorf("launcher's L: %d %v", l, err)
	}
	if l, err := o.perInstance(8); l != 8 || err != nil {
		t.Errorf("agreeing variable: %d %v", l, err)
	}
	if _, err := o.perInstance(4); err == nil || !strings.Contains(err.Error(), "NRTABI_BOOTSTRAP_PER_INSTANCE=4 but Slurm's layout is 8 ranks per node") {
		t.Errorf("disagreeing variable: %v", err)
	}
	o.PerInstance = 4 // the flag wins
	if l, err := o.perInstance(2); l != 4 || err != nil {
		t.Errorf("--per-instance: %d %v", l, err)
	}
	// --per-instance: the layout is not read, so a broken one is no error.
	o = Options{Rank: -1, PerInstance: 4}
	broken := envOf("SLURM_PROCID=2", "SLURM_NTASKS=16", "SLURM_STEP_NUM_TASKS=16", "SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_STEP_TASKS_PER_NODE=8(x2)")
	if err := o.ResolveRank(map[string]bool{}, broken); err != nil || o.Rank != 2 || o.NRanks != 16 {
		t.Errorf("--per-instance over a cyclic layout: %v %d/%d", err, o.Rank, o.NRanks)
	}
	if l, err := o.perInstance(0); l != 4 || err != nil {
		t.Errorf("--per-instance over a cyclic layout: L %d %v", l, err)
	}
	o = Options{Rank: -1}
	if err := o.ResolveRank(map[string]bool{}, broken); err == nil || !strings.Contains(err.Error(), "not block order") {
		t.Errorf("cyclic layout: %v", err)
	}
	// Both flags: the environment is not read (even a broken one).
	o = Options{Rank: 1, NRanks: 2}
	if err := o.ResolveRank(map[string]bool{"rank": true, "nranks": true}, envOf("SLURM_PROCID=x")); err != nil || o.placement != nil {
		t.Errorf("flags: %v %v", err, o.placement)
	}
	// One flag that contradicts the launcher.
	o = Options{Rank: -1, NRanks: 4}
	if err := o.ResolveRank(map[string]bool{"nranks": true}, env); err == nil || !strings.Contains(err.Error(), "--nranks 4 but Slurm says a world of 16") {
		t.Errorf("contradicting --nranks: %v", err)
	}
}

func TestParseTasksPerNode(t *testing.T) {
	for in, want := range map[string][]int{"8": {8}, "8(x2)": {8, 8}, "3,2": {3, 2}, "4(x2),3,1(x2)": {4, 4, 3, 1, 1}} {
		if got, err := ParseTasksPerNode(in); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", ",", "8,", "x", "8(x)", "8(x2", "(x2)", "8(x0)", "8(x2)(x2)", "8(x65537)", "1(x40000),1(x40000)", "-1", "８"} {
		if got, err := ParseTasksPerNode(in); err == nil {
			t.Errorf("%q: %v", in, got)
		}
	}
}

func FuzzParseTasksPerNode(f *testing.F) {
	for _, s := range []string{"8(x2)", "3,2", "1(x65536)", "8(x", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseTasksPerNode(s)
		if err != nil {
			return
		}
		if len(c) == 0 || len(c) > tasksPerNodeMax {
			t.Fatalf("%q: %d nodes", s, len(c))
		}
		for _, n := range c {
			if n < 1 || n > worldMax {
				t.Fatalf("%q: count %d", s, n)
			}
		}
	})
}

// Any environment: a placement that comes back is a consistent one.
func FuzzReadLauncher(f *testing.F) {
	f.Add("9", "16", "1", "1", "8(x2)", "5", "8")
	f.Add("1", "2", "", "", "", "x", "")
	f.Fuzz(func(t *testing.T, procid, ntasks, localid, nodeid, tpn, rank, size string) {
		env := envOf("SLURM_PROCID="+procid, "SLURM_NTASKS="+ntasks, "SLURM_STEP_NUM_TASKS="+ntasks, "SLURM_LOCALID="+localid, "SLURM_NODEID="+nodeid,
			"SLURM_TASKS_PER_NODE="+tpn, "RANK="+rank, "WORLD_SIZE="+size, "LOCAL_RANK="+localid, "LOCAL_WORLD_SIZE="+tpn)
		p, err := ReadLauncher("", env, true)
		if err != nil || p == nil {
			return
		}
		if p.Rank < 0 || p.Size < 0 || p.Size > worldMax || p.Rank > worldMax {
			t.Fatalf("%+v", p)
		}
		if p.PerInstance > 0 && (p.Rank != p.Node*p.PerInstance+p.LocalRank || p.LocalRank >= p.PerInstance) {
			t.Fatalf("not block order: %+v", p)
		}
	})
}
