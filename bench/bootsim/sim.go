// Package bootsim predicts the time a bootstrap takes to reach agreement
// past what one machine can run: the naive star, the flat ring, the 2-tier
// hierarchical bootstrap and the multi-root one, each ring unidirectional
// or bidirectional (docs/benchmarks.md#the-simulator; the published
// figures it is judged against are docs/sources.md#ref-scale).
//
// A root is simulated event by event: every rank's connect arrives at a
// time set by its start skew and the connect stagger, waits in the listen
// queue (at most Backlog pending; a connect arriving at a full queue is
// dropped and retried after the SYN retransmit delays 1, 2, 4 ... times
// Retry, as the kernel does), and is accepted by one root thread that spends
// Accept on each, then Reply on each answer. Several roots (Roots) each
// serve a contiguous range of units (ranks, or instances of L), the balanced
// split of docs/bootstrap-hierarchy.md; they pass the cluster id once round
// their own ring, each root forwarding it once its own ranks are in, and
// answer their ranks after it (and after the next root's first rank).
//
// The rings that follow are evaluated by their max-plus recurrence: with a
// uniform cost c per message a ring of s steps over ranks ready at t_r
// completes at max(t_r) + s*c (exact for the last rank; TestRingClosedForm
// checks it against a step-by-step run). A bidirectional ring takes
// ceil((k-1)/2) steps of two messages per rank (TestBidiRingStepByStep).
// Costs are per message: Hop, plus HopPerActive for every message in
// flight in the same step (on one host, m ranks each handling a message
// share its cores: a step takes about m times a message's CPU over the
// cores; past one host the term is 0), plus Record per record the message
// carries, plus, for a hop whose receiver was asleep (the leaders' ring, the
// blocks going down, the roots' ring), the wake-up: WakeFixed + Wake per
// rank busy on the host (the woken rank queues behind them for a core).
//
// On a host of few cores (Cores > 0) each phase also ends no sooner than
// the CPU it queues there: the ranks' starts and every root's accepts and
// replies (several roots share the cores), and each ring message's CPU.
// A ring receive that must sleep for its frame pays a wake-up (WakeWork),
// one whose frame is already queued only Work: a one-way ring's ranks
// sleep for a share of their receives that falls as the step's CPU
// outgrows its path (ringWork; a hierarchical world's intra rings by their
// own L ranks), a both-ways ring's once a step. What the
// rest of the host leaves the world (Avail, measured) stretches every
// cost but no sleep (docs/benchmarks.md#the-simulator).
package bootsim

import (
	"fmt"
	"math"
	"sort"
)

// Algo is a bootstrap shape.
type Algo int

const (
	Star Algo = iota // everyone to the root; the root answers each with the whole table
	Flat             // root replies, then ring all-gathers over all N (BOOTSTRAP_RING_STEPS)
	Hier             // root replies, then intra ring, leaders' inter ring, down (BOOTSTRAP_HIER_*)
)

func (a Algo) String() string {
	switch a {
	case Star:
		return "star"
	case Flat:
		return "flat"
	case Hier:
		return "hier"
	}
	return fmt.Sprintf("algo(%d)", int(a))
}

// Params are the costs, in seconds, a prediction is driven by.
type Params struct {
	Fixed        float64 // once per bootstrap: what does not grow with N
	Accept       float64 // the root's serial work per INFO_TO_ROOT (accept, read, check)
	Reply        float64 // the root's serial work per reply
	Hop          float64 // one ring message, send to receive
	HopPerActive float64 // added to Hop per rank busy in the same step: ranks sharing one host's cores
	Record       float64 // per record a message carries (the star's table, a hierarchical block): the wire
	Table        float64 // the star's CPU per record of the whole table sent to each rank (N replies of N records: N*N*Table), charged at the root; fitted. On one host the root's copies and the N ranks' reads share the cores and cannot be told apart; past one host set it 0 and let Record (the wire) carry the table
	Gathers      int     // ring all-gathers after the replies (addresses, then the peer records)
	PerNC        bool    // add the per-NC tree AND-reduce and hypercube broadcast hops
	Final        bool    // flat and hier: nrtabi's final round, RING_DONE from every rank through the root (Accept each) before COMPLETE
	Skew         float64 // ranks start spread evenly over [0, Skew]
	Stagger      float64 // connects per second at most (NCCL_UID_STAGGER_RATE); 0: all at once
	Backlog      int     // listen backlog (BOOTSTRAP_LISTEN_BACKLOG); 0: unbounded
	Retry        float64 // first SYN retransmit delay after a drop; doubles per retry
	Roots        int     // roots, each serving a contiguous range of units with its own listener and thread (NCCL 2.23's several unique ids), joined by their own ring; 0 or 1: one
	RankDelay    bool    // each rank waits before its root connect as nrtabi's ranks do (ConnectDelay, counted within its root's range): a known delay, not a fitted cost
	Bidi         bool    // every ring both ways round: ceil((k-1)/2) steps of two messages per rank
	BidiExtra    float64 // added to a bidirectional step past one host: the second message's CPU on the rank's own core (on one host HopPerActive counts it)
	Wake         float64 // a hop whose receiver was asleep, per rank busy on the host: the woken rank waits behind them for a core; fitted
	WakeFixed    float64 // the same wake-up past one host, where the rank has a core of its own

	// The host's shape (docs/benchmarks.md#the-simulator): Cores CPUs shared
	// by every rank process. Each phase ends no sooner than its critical
	// path (the latency costs above) and no sooner than the CPU work it
	// queues on the cores (Work per message handled, StartWork per rank
	// process started) divided by the cores. 0: one core per rank (the
	// target's shape; the work then never binds before the path does).
	Cores     int
	Work      float64 // CPU per ring message, send and receive, on the host's cores
	StartWork float64 // CPU per rank process start and its first connect, on the host's cores
	AgreeWork float64 // CPU per rank of the agree phase beyond its rounds' messages (the global comm's setup on each rank), on the host's cores; fitted on the agree rows of N <= 64 alone
	WakeWork  float64 // CPU added to a ring message whose receiver had to sleep for it (its wake-up; ringWork says which do); fitted
	BidiWork  float64 // CPU added to every message of a ring both ways round: nrtabi's Go rank sends each step's two frames on their own goroutines (docs/benchmarks.md#the-simulator); fitted

	// Avail is the share of the host the rest of it left the world,
	// measured around each run (bench/bootscale's /proc/stat less the
	// world's own CPU), an input, never fitted; 0 means 1. The costs above
	// are an unloaded host's: on a host whose other sessions take 1 -
	// Avail of every core, each of them is CPU or a wait for a core and
	// takes 1/Avail as long (docs/benchmarks.md#the-simulator); the
	// sleeps (skew, stagger, the ranks' own connect delays, SYN retries)
	// are wall time and are not stretched.
	Avail float64

	// Runnable is the host's runnable tasks over the window (bench/bootscale's
	// /proc/stat procs_running, measured), an input, never fitted; 0 past
	// one host. Crowd is what each of them adds to every cost but the
	// sleeps, as a share: a woken rank waits in a longer queue, and runs
	// with its cache cold after more of the others did
	// (docs/benchmarks.md#the-simulator-2026-12-04-night); fitted on the
	// small worlds run beside the bench's own background load (-burn).
	Runnable float64
	Crowd    float64
	// RunWait is the mean wait of a woken task for a CPU over the window
	// (s; bench/bootscale's probe: its run-queue delay over its wakes),
	// an input, never fitted, 0 past one host; WaitScale is how many such
	// waits a hop whose receiver slept pays on the path (the leaders'
	// ring, the blocks down, the roots' ring, a both-ways step), fitted.
	// Wall time already: not stretched by the share.
	RunWait   float64
	WaitScale float64
}

// The connect staggers nrtabi's ranks apply themselves (docs/bootstrap-
// hierarchy.md#stagger), restated from the spec so the simulator has no
// generated import; TestConnectDelayMatchesSpec holds them equal.
const (
	delayConnectRanks = 128  // BOOTSTRAP_DELAY_CONNECT_RANKS: flat, upstream 2.9.9
	hierStaggerAbove  = 256  // BOOTSTRAP_HIER_STAGGER_THRESHOLD: hierarchical, upstream 2.23
	hierStaggerRate   = 7000 // BOOTSTRAP_HIER_STAGGER_RATE, connects per second
)

// ConnectDelay is how long rank r of n waits before it connects to the
// root: flat, 1 ms per rank past 128 ranks; hierarchical, r/7000 s past 256
// (flat when n <= l, as the dispatch); the star not at all.
func ConnectDelay(a Algo, n, l, r int) float64 {
	switch {
	case a == Hier && n > l && n > hierStaggerAbove:
		return float64(r) / hierStaggerRate
	case (a == Flat || a == Hier && n <= l) && n > delayConnectRanks:
		return float64(r) * 1e-3
	}
	return 0
}

// Result is one prediction.
type Result struct {
	Seconds  float64 // to agreement: the last rank holding the whole table
	Gathered float64 // the root has every INFO_TO_ROOT
	Steps    int     // sequential ring steps of one all-gather
	Drops    int     // connects dropped at a full listen queue
}

// Steps is the number of sequential ring steps of one all-gather of n
// records: star 0, flat n-1, hierarchical (k0-1)+(H-1)+(k0-1) where k0 is
// the first instance's size (the spec's BOOTSTRAP_HIER_STEPS for even
// instances; a flat world when n <= l, BOOTSTRAP_HIER_DISPATCH).
func Steps(a Algo, n, l int) int { return StepsOf(a, n, l, false) }

// StepsOf is Steps for either ring mode: a bidirectional ring of k takes
// ceil((k-1)/2) steps, and so does the broadcast down an instance
// (docs/bootstrap-hierarchy.md, "Bidirectional ring all-gather").
func StepsOf(a Algo, n, l int, bidi bool) int {
	s := func(k int) int { return ringSteps(k, bidi) }
	switch a {
	case Flat:
		return s(n)
	case Hier:
		if n <= l || l < 1 {
			return s(n)
		}
		h := (n + l - 1) / l
		return s(l) + s(h) + s(l)
	}
	return 0
}

// Messages is the ring messages of a world's gathers (the star has none):
// one per rank per step, two both ways round; hierarchical, the intra
// rings, the leaders' ring and a block down to every rank but the leaders.
func Messages(a Algo, n, l int, bidi bool, gathers int) float64 {
	ring := func(k int) float64 { return msgs(k, ringSteps(k, bidi), bidi) }
	var m float64
	switch {
	case a == Star:
		return 0
	case a == Flat || n <= l || l < 1:
		m = ring(n)
	default:
		h := (n + l - 1) / l
		for j := 0; j < h; j++ {
			m += ring(min(l, n-j*l))
		}
		m += ring(h) + float64(n-h)
	}
	return m * float64(max(gathers, 1))
}

// ringSteps is the sequential steps of a ring of k: k-1, or ceil((k-1)/2)
// both ways round.
func ringSteps(k int, bidi bool) int {
	if k < 2 {
		return 0
	}
	if bidi {
		return k / 2
	}
	return k - 1
}

// RootsFor is the rule for R (docs/bootstrap-hierarchy.md, "Multi-root: how
// many roots", tcp.RootsFor): ceil(N / BOOTSTRAP_RANKS_PER_ROOT), at most
// the units (ranks flat, instances of l hierarchical), at least 1.
func RootsFor(a Algo, n, l int) int {
	u := units(a, n, l)
	return max(1, min((n+RanksPerRoot-1)/RanksPerRoot, u))
}

// RanksPerRoot is BOOTSTRAP_RANKS_PER_ROOT, restated (TestRootsMatchRuntime).
const RanksPerRoot = 128

func units(a Algo, n, l int) int {
	if a == Hier && l >= 1 && n > l {
		return (n + l - 1) / l
	}
	return n
}

// rootRange is the ranks [lo, hi) root i of r serves: the units split q =
// U / r each, the first U % r one more (tcp.RootRange).
func rootRange(a Algo, i, r, n, l int) (lo, hi int) {
	u := 1
	if a == Hier && l >= 1 && n > l {
		u = l
	}
	nu := units(a, n, l)
	q, m := nu/r, nu%r
	ulo := i*q + min(i, m)
	cnt := q
	if i < m {
		cnt++
	}
	return ulo * u, min(n, (ulo+cnt)*u)
}

// maxRanks bounds a simulated world (the events are one per connect).
const maxRanks = 1 << 22

// Simulate predicts a world of n ranks (l per instance for Hier).
func Simulate(a Algo, n, l int, p Params) (Result, error) {
	if n < 1 || n > maxRanks {
		return Result{}, fmt.Errorf("bootsim: %d ranks: simulate 1..%d", n, maxRanks)
	}
	if a == Hier && (l < 1 || l > n) {
		l = n
	}
	if math.IsNaN(p.Avail) || p.Avail < 0 || p.Avail > 1 {
		return Result{}, fmt.Errorf("bootsim: a share of the host of %v: want 0..1", p.Avail)
	}
	if math.IsNaN(p.RunWait) || p.RunWait < 0 || p.RunWait > 3600 || math.IsNaN(p.WaitScale) || p.WaitScale < 0 || p.WaitScale > 1e3 {
		return Result{}, fmt.Errorf("bootsim: a wait of %v s a wake at %v waits a sleeping hop: want 0..3600 and 0..1000", p.RunWait, p.WaitScale)
	}
	if math.IsNaN(p.Runnable) || p.Runnable < 0 || p.Runnable > 1e7 || math.IsNaN(p.Crowd) || p.Crowd < 0 || p.Crowd > 1e3 {
		return Result{}, fmt.Errorf("bootsim: %v runnable tasks at %v a task: want 0..1e7 and 0..1000", p.Runnable, p.Crowd)
	}
	p = dilate(p)
	if p.Backlog > 0 && p.Retry <= 0 {
		return Result{}, fmt.Errorf("bootsim: a listen backlog of %d needs a retry delay > 0", p.Backlog)
	}
	roots := max(p.Roots, 1)
	if a == Star {
		roots = 1 // the naive star has one root
	}
	if u := units(a, n, l); roots > u {
		return Result{}, fmt.Errorf("bootsim: %d roots for %d units: at most one root per unit", roots, u)
	}
	var res Result
	hop := func(active int) float64 { return p.Hop + p.HopPerActive*float64(active) }
	wake := func(active int) float64 { return p.WakeFixed + p.Wake*float64(active) + p.WaitScale*p.RunWait }

	// each root's gather, then the cluster id once round the roots' ring
	gathered := make([]float64, roots)
	lo := make([]int, roots+1)
	memo := map[[2]int]float64{}
	for i := 0; i < roots; i++ {
		l0, h0 := rootRange(a, i, roots, n, l)
		lo[i] = l0
		cnt := h0 - l0
		var delay func(r int) float64
		if p.RankDelay {
			// a rank waits as rank r - lo of a world of the range's size
			delay = func(r int) float64 { return ConnectDelay(a, cnt, l, r) }
		}
		key := [2]int{cnt, 0}
		g, ok := memo[key]
		if !ok {
			var drops int
			g, drops = rootGather(cnt, p, delay)
			memo[key] = g
			res.Drops += drops * countOf(a, roots, n, l, cnt)
		}
		gathered[i] = g
	}
	lo[roots] = n
	// every rank's start is CPU work queued on the host's cores: no root
	// has its ranks before the host has started them all
	// no root has its ranks before the host has started them all, nor
	// before the host's cores have done every root's accepts: on one host
	// several roots' accepts share the cores (a multi-root world of 512 on
	// 2 cores gathers no faster than one root: docs/benchmarks.md#the-simulator)
	for i := range gathered {
		gathered[i] = max(gathered[i], cpu(p, n, float64(n)*(p.StartWork+p.Accept)))
	}
	res.Gathered = maxOf(gathered)
	replyAt := make([]float64, roots)
	if roots == 1 {
		replyAt[0] = gathered[0]
	} else {
		rh := hop(roots) + wake(roots)
		cluster := make([]float64, roots) // when root i has the cluster id
		cluster[0] = 0                    // root 0 mints it and sends it at once
		fwd := 0.0                        // when root i-1 sent it on
		for i := 1; i < roots; i++ {
			cluster[i] = max(gathered[i], fwd+rh)
			fwd = cluster[i]
		}
		back := fwd + rh // root R-1 forwards it to root 0: the ring is closed
		for i := 0; i < roots; i++ {
			first := gathered[(i+1)%roots] + rh // the next root's first rank
			replyAt[i] = max(gathered[i], cluster[i], first)
			if i == 0 {
				replyAt[i] = max(replyAt[i], back)
			}
		}
	}

	// replies: serial at each root, in rank order; rank r has its reply at ready[r]
	ready := make([]float64, n)
	for i := 0; i < roots; i++ {
		for r := lo[i]; r < lo[i+1]; r++ {
			cost := p.Reply
			if a == Star {
				// the whole table to every rank: its bytes on the wire and the
				// root's own copy of them, serial at the one root thread
				cost += (p.Record + p.Table) * float64(n)
			}
			ready[r] = replyAt[i] + float64(r-lo[i]+1)*cost + hop(1)
		}
	}
	// and every root's replies share the cores too: the r-th reply of the
	// host no sooner than r replies' CPU over the cores after the first
	// root could answer
	if roots > 1 {
		first := minOf(replyAt)
		done := make([]float64, n)
		copy(done, ready)
		sort.Float64s(done)
		for k := range done {
			done[k] = max(done[k], first+cpu(p, n, float64(k+1)*p.Reply)+hop(1))
		}
		// the ranks keep their order of readiness
		ready = reorder(ready, done)
	}
	if a == Star {
		res.Seconds = p.Fixed + maxOf(ready)
		return res, nil
	}
	if a == Hier && n <= l {
		a = Flat // BOOTSTRAP_HIER_DISPATCH: n > l, else the flat ring
	}
	res.Steps = StepsOf(a, n, l, p.Bidi)
	t := ready
	gathers := max(p.Gathers, 1)
	for g := 0; g < gathers; g++ {
		if a == Flat {
			s := ringSteps(n, p.Bidi)
			end := ring(t, s, stepCost(p, hop, n, 1))
			w := ringWork(p, n, stepCost(p, hop, n, 1))
			t = uniform(max(end, minOf(t)+cpu(p, n, msgs(n, s, p.Bidi)*w)), n)
			continue
		}
		t = hierGather(t, n, l, p, hop, wake)
	}
	end := maxOf(t)
	if p.Final {
		// the root reads its ranks' RING_DONEs one after another, then COMPLETE
		end += float64(lo[1]-lo[0])*p.Accept + hop(1)
	}
	if p.PerNC {
		// each round of the tree and of the hypercube is n messages whose
		// receivers wait for them (a round cannot run ahead of the last):
		// every one pays its wake-up, and on few cores the round is no
		// shorter than its messages' CPU over them
		round := max(hop(n), cpu(p, n, float64(n)*(p.Work+p.WakeWork)))
		end += float64(treeRounds(n)+cubeRounds(n)) * round
		// and every rank's own setup of the global comm, on the cores
		end += cpu(p, n, float64(n)*p.AgreeWork)
	}
	res.Seconds = p.Fixed + end
	return res, nil
}

// countOf is how many of the roots serve cnt ranks (the split gives at most
// two sizes), for the drop count.
func countOf(a Algo, roots, n, l, cnt int) int {
	k := 0
	for i := 0; i < roots; i++ {
		lo, hi := rootRange(a, i, roots, n, l)
		if hi-lo == cnt {
			k++
		}
	}
	return k
}

// stepCost is one ring step's message cost with n ranks busy on the host,
// each message carrying recs records: a bidirectional step has two
// messages per rank in flight (twice the contention, twice the records)
// and, past one host, the second message's CPU.
func stepCost(p Params, hop func(int) float64, n, recs int) float64 {
	if p.Bidi {
		// a both-ways rank sleeps once a step, for the step's two frames
		return hop(2*n) + 2*p.Record*float64(recs) + p.BidiExtra + p.WaitScale*p.RunWait
	}
	return hop(n) + p.Record*float64(recs)
}

// hierGather is the three phases over ranks ready at t: the intra ring of
// each instance, the leaders' ring of instance blocks, the leaders' blocks
// down each intra ring. It returns when each rank holds the table.
func hierGather(t []float64, n, l int, p Params, hop, wake func(active int) float64) []float64 {
	h := (n + l - 1) / l
	size := func(j int) int { return min(l, n-j*l) }
	intra := make([]float64, h)
	for j := 0; j < h; j++ {
		k := size(j)
		intra[j] = ring(t[j*l:j*l+k], ringSteps(k, p.Bidi), stepCost(p, hop, n, 1))
	}
	// the intra rings' messages, all instances' at once, on the host's cores
	var w float64
	for j := 0; j < h; j++ {
		k := size(j)
		w += msgs(k, ringSteps(k, p.Bidi), p.Bidi)
	}
	// A receive's sleep share is judged on the ring's own ranks (L), not
	// on every rank of the host: with the share of a ring of n, the
	// one-way hierarchical rows past 64 ranks were under-charged by
	// 25-67 % and ran faster than the both-ways ones, which they do not
	// on this host (docs/benchmarks.md#the-simulator-2026-12-04): an
	// intra ring's ranks find their frame queued no more often than a
	// flat ring of L ranks does
	floor := minOf(t) + cpu(p, n, w*ringWork(p, l, stepCost(p, hop, n, 1)))
	for j := range intra {
		intra[j] = max(intra[j], floor)
	}
	// Every hop is charged all n ranks busy, not only the H leaders: on one
	// host the instances' phases overlap (an instance whose block came down
	// starts the next all-gather's intra ring while others are still on
	// the inter ring or going down), so a leader's message waits behind
	// them. Measured (docs/benchmarks.md#hierarchical-bootstrap, a trace of
	// N = 256, L = 16): inter and down hops took 1-2.5 ms, as long as an
	// intra hop with all 256 busy. Past one host HopPerActive is 0 and the
	// charge is moot. An inter or down hop's receiver has been asleep since
	// its own intra ring ended: it pays the wake-up.
	busy := n
	// a block of instance j carries size(j) records: the longest is l
	inter := ring(intra, ringSteps(h, p.Bidi), stepCost(p, hop, busy, l)+wake(busy))
	// the leaders' and the blocks' receivers were asleep: every one wakes
	inter = max(inter, minOf(intra)+cpu(p, n, msgs(h, ringSteps(h, p.Bidi), p.Bidi)*(msgWork(p)+p.WakeWork)))
	// the blocks down: every rank but the leaders receives one, on the cores
	downFloor := inter + cpu(p, n, float64(n-h)*(msgWork(p)+p.WakeWork))
	out := make([]float64, n)
	for j := 0; j < h; j++ {
		k := size(j)
		// the leader's block of n - k records, hop by hop down the intra
		// ring (both ways round when bidirectional: the farthest local is
		// ceil((k-1)/2) hops away)
		c := hop(busy) + wake(busy) + p.Record*float64(n-k)
		for x := 0; x < k; x++ {
			d := x
			if p.Bidi {
				d = min(x, k-x)
			}
			out[j*l+x] = max(inter+float64(d)*c, downFloor)
		}
	}
	return out
}

// ring is when the last rank of a ring all-gather of s steps holds every
// slice, the ranks being ready at t and each message costing c.
func ring(t []float64, s int, c float64) float64 {
	return maxOf(t) + float64(max(s, 0))*c
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func uniform(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// treeRounds and cubeRounds are runtime/collectives' TreeRounds and
// CubeRounds (binary tree depth, hypercube dimension), restated so the
// simulator has no runtime import; a test holds them equal.
func treeRounds(n int) int {
	d := 0
	for r := n - 1; r > 0; r = (r - 1) >> 1 {
		d++
	}
	return d
}

func cubeRounds(n int) int {
	d := 0
	for 1<<d < n {
		d++
	}
	return d
}
