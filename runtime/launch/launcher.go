package launch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
)

// Placement is what one launcher's environment says of this process: its
// rank in a world of Size, and, when the launcher gives it, the grouping
// of the world into hosts (instances): L ranks per host, the ranks of a
// host consecutive (docs/bootstrap-hierarchy.md#grouping-and-leaders).
type Placement struct {
	Launcher   string // "Slurm", "Open MPI", "torchrun"
	Rank, Size int
	// PerInstance is L from the launcher's layout (0: the launcher gave no
	// grouping); LocalRank and Node the process's place in it (-1: unknown).
	PerInstance, LocalRank, Node int
	// From names the variables read, as NAME=value, for the messages.
	From string
}

// launcherEnv is one launcher's reader of the environment: nil, nil when
// none of its variables is set.
type launcherEnv struct {
	name, key string // the display name; the --launcher value
	vars      []string
	read      func(getenv func(string) string, layout bool) (*Placement, error)
}

// launchers are the launchers whose environment names a rank
// (docs/nrtabi-runtime-bootstrap.md#launchers).
var launchers = []launcherEnv{
	{"Slurm", "slurm", []string{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}, readSlurm},
	{"Open MPI", "ompi", []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK"}, readOMPI},
	{"torchrun", "torchrun", []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE"}, readTorchrun},
}

// LauncherNames are the values --launcher takes.
func LauncherNames() []string {
	var s []string
	for _, l := range launchers {
		s = append(s, l.key)
	}
	return s
}

// launcherVars are every variable a launcher reader looks at: the --local
// launcher takes them out of its ranks' environment (it numbers them itself).
func launcherVars() []string {
	var s []string
	for _, l := range launchers {
		s = append(s, l.vars...)
	}
	return s
}

// envValueMax bounds how much of a variable's value a message quotes.
const envValueMax = 64

// envq quotes a variable's value for a message: escaped and bounded.
func envq(v string) string {
	if len(v) > envValueMax {
		return strconv.Quote(v[:envValueMax]) + fmt.Sprintf("... (%d more bytes)", len(v)-envValueMax)
	}
	return strconv.Quote(v)
}

// envReader reads one launcher's variables, remembering what it read.
type envReader struct {
	launcher string
	getenv   func(string) string
	from     []string
}

func (e *envReader) has(name string) bool { return e.getenv(name) != "" }

// num reads a variable as a whole number in 0..max ("" with optional: -1).
// Only decimal digits are taken: a sign, a space or a suffix is refused.
func (e *envReader) num(name string, max int, optional bool) (int, error) {
	v := e.getenv(name)
	if v == "" {
		if optional {
			return -1, nil
		}
		return 0, fmt.Errorf("%s environment: %s is not set; give %s", e.launcher, name, flagsFor(name))
	}
	n, ok := parseCount(v, max)
	if !ok {
		return 0, fmt.Errorf("%s environment: %s=%s: not a whole number in 0..%d; unset it, or give %s", e.launcher, name, envq(v), max, flagsFor(name))
	}
	e.from = append(e.from, name+"="+v)
	return n, nil
}

// flagsFor names the flags that stand in for a launcher variable: the
// rank and size ones for the rank and size, --per-instance for the layout
// (which is then not read).
func flagsFor(name string) string {
	switch name {
	case "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "RANK", "WORLD_SIZE":
		return "--rank and --nranks"
	}
	return "--per-instance (the layout is then not read)"
}

// parseCount reads s as decimal digits only, at most max.
func parseCount(s string, max int) (int, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= max
}

// worldMax bounds every count a launcher gives: no world is larger.
const worldMax = 1 << 16

// world reads the rank and size variables: a size of 1..MaxRanks, a rank below it.
func (e *envReader) world(rankVar, sizeVar string) (int, int, error) {
	if err := e.pair(rankVar, sizeVar); err != nil {
		return 0, 0, err
	}
	rank, err := e.num(rankVar, worldMax, false)
	if err != nil {
		return 0, 0, err
	}
	size, err := e.num(sizeVar, worldMax, false)
	if err != nil {
		return 0, 0, err
	}
	if err := tcp.CheckWorldSize(e.launcher+" environment: "+sizeVar, size); err != nil {
		return 0, 0, err
	}
	if rank >= size {
		return 0, 0, fmt.Errorf("%s environment: %s=%d is not below %s=%d", e.launcher, rankVar, rank, sizeVar, size)
	}
	return rank, size, nil
}

func (e *envReader) placement(rank, size int) *Placement {
	return &Placement{Launcher: e.launcher, Rank: rank, Size: size, LocalRank: -1, Node: -1, From: strings.Join(e.from, " ")}
}

// errMissing names a launcher's variable that is set without its partner.
func (e *envReader) pair(rank, size string) error {
	r, s := e.getenv(rank), e.getenv(size)
	if r == "" || s == "" {
		return fmt.Errorf("%s environment: %s=%s, %s=%s: both are needed (or give --rank and --nranks)", e.launcher, rank, envq(r), size, envq(s))
	}
	return nil
}

// readSlurm reads an srun task's variables. The size is SLURM_NTASKS, and
// SLURM_STEP_NUM_TASKS, which srun sets and a batch script lacks, must
// agree; the layout is
// SLURM_STEP_TASKS_PER_NODE, else SLURM_TASKS_PER_NODE, in Slurm's
// compressed form ("8(x2),3"), with SLURM_NODEID and SLURM_LOCALID.
func readSlurm(getenv func(string) string, layout bool) (*Placement, error) {
	e := &envReader{launcher: "Slurm", getenv: getenv}
	if !e.has("SLURM_PROCID") && !e.has("SLURM_NTASKS") && !e.has("SLURM_STEP_NUM_TASKS") {
		return nil, nil
	}
	rank, size, err := e.world("SLURM_PROCID", "SLURM_NTASKS")
	if err != nil {
		return nil, err
	}
	if step, err := e.num("SLURM_STEP_NUM_TASKS", worldMax, true); err != nil {
		return nil, err
	} else if step < 0 {
		// sbatch's script and salloc's shell carry SLURM_PROCID=0 and the
		// job's SLURM_NTASKS: one process would wait for a world of N.
		return nil, fmt.Errorf("%s environment: SLURM_PROCID and SLURM_NTASKS are set but SLURM_STEP_NUM_TASKS is not: this is a job's batch script or allocation shell, not a task of an srun step; start the ranks with srun, or give --rank and --nranks", e.launcher)
	} else if step != size {
		return nil, fmt.Errorf("%s environment: SLURM_NTASKS=%d but SLURM_STEP_NUM_TASKS=%d: the job's and the step's task counts differ; run the ranks with srun -n %d, or give --rank and --nranks", e.launcher, size, step, size)
	}
	p := e.placement(rank, size)
	if !layout {
		return p, nil
	}
	layoutVar := "SLURM_STEP_TASKS_PER_NODE"
	if !e.has(layoutVar) {
		layoutVar = "SLURM_TASKS_PER_NODE"
	}
	if !e.has(layoutVar) && !e.has("SLURM_LOCALID") && !e.has("SLURM_NODEID") {
		return p, nil // a rank and a size, no layout
	}
	local, err := e.num("SLURM_LOCALID", worldMax, false)
	if err != nil {
		return nil, err
	}
	node, err := e.num("SLURM_NODEID", worldMax, false)
	if err != nil {
		return nil, err
	}
	v := getenv(layoutVar)
	if v == "" {
		return nil, fmt.Errorf("%s environment: SLURM_LOCALID and SLURM_NODEID are set but neither SLURM_STEP_TASKS_PER_NODE nor SLURM_TASKS_PER_NODE is: the tasks per node are unknown; give --per-instance", e.launcher)
	}
	counts, err := ParseTasksPerNode(v)
	if err != nil {
		return nil, fmt.Errorf("%s environment: %s=%s: %w", e.launcher, layoutVar, envq(v), err)
	}
	shown := v // checked: digits, "(x", ")" and commas; bounded for the messages
	if len(shown) > envValueMax {
		shown = shown[:envValueMax] + "..."
	}
	e.from = append(e.from, layoutVar+"="+shown)
	p.From = strings.Join(e.from, " ")
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != size {
		return nil, fmt.Errorf("%s environment: %s=%s adds up to %d tasks, SLURM_NTASKS=%d: the layout is not this step's; give --per-instance", e.launcher, layoutVar, envq(v), total, size)
	}
	if node >= len(counts) {
		return nil, fmt.Errorf("%s environment: SLURM_NODEID=%d but %s=%s has %d nodes; give --per-instance (the layout is then not read)", e.launcher, node, layoutVar, envq(v), len(counts))
	}
	if local >= counts[node] {
		return nil, fmt.Errorf("%s environment: SLURM_LOCALID=%d but node %d runs %d tasks (%s=%s); give --per-instance (the layout is then not read)", e.launcher, local, node, counts[node], layoutVar, envq(v))
	}
	l := counts[0]
	for i, c := range counts {
		if c > l || (c < l && i != len(counts)-1) {
			return nil, fmt.Errorf("%s environment: %s=%s: node %d runs %d tasks, node 0 %d: ranks per instance must be the same on every node but the last (srun --ntasks-per-node=%d), or give --per-instance", e.launcher, layoutVar, envq(v), i, c, l, l)
		}
	}
	if rank != node*l+local {
		return nil, fmt.Errorf("%s environment: SLURM_PROCID=%d on node %d as its task %d is not block order (node*%d+local = %d): run srun with --distribution=block, or give --per-instance", e.launcher, rank, node, local, l, node*l+local)
	}
	p.PerInstance, p.LocalRank, p.Node = l, local, node
	return p, nil
}

// tasksPerNodeMax bounds the nodes of a tasks-per-node list.
const tasksPerNodeMax = worldMax

// ParseTasksPerNode reads Slurm's compressed tasks-per-node list: comma
// separated counts, each optionally repeated as "N(xR)" ("8(x2),3" is
// 8, 8, 3). Every count is at least 1 and the nodes at most 65536.
func ParseTasksPerNode(s string) ([]int, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	var out []int
	for _, item := range strings.Split(s, ",") {
		num, rep := item, "1"
		if i := strings.IndexByte(item, '('); i >= 0 {
			if !strings.HasPrefix(item[i:], "(x") || !strings.HasSuffix(item, ")") {
				return nil, fmt.Errorf("%s: want N or N(xR)", envq(item))
			}
			num, rep = item[:i], item[i+2:len(item)-1]
		}
		n, ok1 := parseCount(num, worldMax)
		r, ok2 := parseCount(rep, tasksPerNodeMax)
		if !ok1 || !ok2 || n == 0 || r == 0 {
			return nil, fmt.Errorf("%s: want N or N(xR), whole numbers 1..%d", envq(item), worldMax)
		}
		if len(out)+r > tasksPerNodeMax {
			return nil, fmt.Errorf("more than %d nodes", tasksPerNodeMax)
		}
		for ; r > 0; r-- {
			out = append(out, n)
		}
	}
	return out, nil
}

// readOMPI reads an Open MPI rank's variables. Open MPI names no node
// index: the grouping is OMPI_COMM_WORLD_LOCAL_SIZE ranks per node, which
// is the instance grouping only when mpirun mapped the ranks by slot
// (its default): the local rank must be rank % L.
func readOMPI(getenv func(string) string, layout bool) (*Placement, error) {
	e := &envReader{launcher: "Open MPI", getenv: getenv}
	if !e.has("OMPI_COMM_WORLD_RANK") && !e.has("OMPI_COMM_WORLD_SIZE") {
		return nil, nil
	}
	rank, size, err := e.world("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")
	if err != nil {
		return nil, err
	}
	if !layout {
		return e.placement(rank, size), nil
	}
	local, err := e.num("OMPI_COMM_WORLD_LOCAL_RANK", worldMax, true)
	if err != nil {
		return nil, err
	}
	lsize, err := e.num("OMPI_COMM_WORLD_LOCAL_SIZE", worldMax, true)
	if err != nil {
		return nil, err
	}
	if _, err := e.num("OMPI_COMM_WORLD_NODE_RANK", worldMax, true); err != nil {
		return nil, err
	}
	p := e.placement(rank, size)
	if local < 0 && lsize < 0 {
		return p, nil
	}
	if local < 0 || lsize < 0 {
		return nil, fmt.Errorf("%s environment: OMPI_COMM_WORLD_LOCAL_RANK and OMPI_COMM_WORLD_LOCAL_SIZE: both are needed, or neither; give --per-instance (the layout is then not read)", e.launcher)
	}
	return p, p.group("OMPI_COMM_WORLD_LOCAL_RANK", local, "OMPI_COMM_WORLD_LOCAL_SIZE", lsize, "mpirun --map-by slot")
}

// readTorchrun reads a torchrun worker's variables: LOCAL_WORLD_SIZE
// workers per node, numbered node after node (GROUP_RANK is the node).
func readTorchrun(getenv func(string) string, layout bool) (*Placement, error) {
	e := &envReader{launcher: "torchrun", getenv: getenv}
	if !e.has("RANK") && !e.has("WORLD_SIZE") {
		return nil, nil
	}
	rank, size, err := e.world("RANK", "WORLD_SIZE")
	if err != nil {
		return nil, err
	}
	if !layout {
		return e.placement(rank, size), nil
	}
	local, err := e.num("LOCAL_RANK", worldMax, true)
	if err != nil {
		return nil, err
	}
	lsize, err := e.num("LOCAL_WORLD_SIZE", worldMax, true)
	if err != nil {
		return nil, err
	}
	group, err := e.num("GROUP_RANK", worldMax, true)
	if err != nil {
		return nil, err
	}
	groups, err := e.num("GROUP_WORLD_SIZE", worldMax, true)
	if err != nil {
		return nil, err
	}
	p := e.placement(rank, size)
	if local < 0 && lsize < 0 {
		return p, nil
	}
	if local < 0 || lsize < 0 {
		return nil, fmt.Errorf("torchrun environment: LOCAL_RANK and LOCAL_WORLD_SIZE: both are needed, or neither; give --per-instance (the layout is then not read)")
	}
	if err := p.group("LOCAL_RANK", local, "LOCAL_WORLD_SIZE", lsize, "torchrun --nproc-per-node the same on every node"); err != nil {
		return nil, err
	}
	if group >= 0 && group != p.Node {
		return nil, fmt.Errorf("torchrun environment: GROUP_RANK=%d but RANK=%d with LOCAL_WORLD_SIZE=%d is on node %d: the nodes run different worker counts; give --per-instance", group, rank, lsize, p.Node)
	}
	if groups >= 0 && groups != (size+lsize-1)/lsize {
		return nil, fmt.Errorf("torchrun environment: GROUP_WORLD_SIZE=%d but WORLD_SIZE=%d over LOCAL_WORLD_SIZE=%d is %d nodes: the nodes run different worker counts; give --per-instance", groups, size, lsize, (size+lsize-1)/lsize)
	}
	return p, nil
}

// group checks a local rank and local size against the block grouping
// rank = node*L + local, and records it.
func (p *Placement) group(localVar string, local int, sizeVar string, lsize int, fix string) error {
	if lsize < 1 || lsize > p.Size {
		return fmt.Errorf("%s environment: %s=%d: want 1..%d (the world size); give --per-instance (the layout is then not read)", p.Launcher, sizeVar, lsize, p.Size)
	}
	if local >= lsize {
		return fmt.Errorf("%s environment: %s=%d is not below %s=%d; give --per-instance (the layout is then not read)", p.Launcher, localVar, local, sizeVar, lsize)
	}
	if p.Rank < p.Size && p.Rank%lsize != local {
		return fmt.Errorf("%s environment: rank %d as local rank %s=%d of %s=%d is not block order (local = rank %% %d = %d): use %s, or give --per-instance", p.Launcher, p.Rank, localVar, local, sizeVar, lsize, lsize, p.Rank%lsize, fix)
	}
	p.PerInstance, p.LocalRank, p.Node = lsize, local, p.Rank/lsize
	return nil
}

// ReadLauncher returns this process's placement from the launchers'
// environments: the one named by want ("" for any), nil when none is set.
// With layout false only the rank and size are read (a flag gives L: the
// launcher's layout is neither needed nor checked).
// Two launchers whose variables are both set must agree on the rank, the
// size and the grouping; else both are named (a torchrun under srun sets
// both, and only the caller knows which numbering it means).
func ReadLauncher(want string, getenv func(string) string, layout bool) (*Placement, error) {
	var found *Placement
	known := false
	for _, l := range launchers {
		if want != "" && want != l.key {
			continue
		}
		known = true
		p, err := l.read(getenv, layout)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		if found != nil && (found.Rank != p.Rank || found.Size != p.Size || found.PerInstance != p.PerInstance) {
			return nil, fmt.Errorf("%s (%s) and %s (%s) disagree on this process's place: give --launcher %s or --launcher %s, or --rank and --nranks",
				found.Launcher, found.From, p.Launcher, p.From, keyOf(found.Launcher), l.key)
		}
		if found == nil {
			found = p
		}
	}
	if !known {
		return nil, fmt.Errorf("--launcher %q: use %s", want, strings.Join(LauncherNames(), ", "))
	}
	if want != "" && found == nil {
		return nil, fmt.Errorf("--launcher %s: none of its variables is set (%s)", want, strings.Join(varsOf(want), ", "))
	}
	return found, nil
}

func keyOf(name string) string {
	for _, l := range launchers {
		if l.name == name {
			return l.key
		}
	}
	return name
}

func varsOf(key string) []string {
	for _, l := range launchers {
		if l.key == key {
			return l.vars
		}
	}
	return nil
}
