// Package bootsim predicts the time a bootstrap takes to reach agreement
// past what one machine can run: the naive star, the flat ring and the
// 2-tier hierarchical bootstrap (docs/benchmarks.md#the-simulator; the
// published figures it is judged against are docs/sources.md#ref-scale).
//
// The root is simulated event by event: every rank's connect arrives at a
// time set by its start skew and the connect stagger, waits in the listen
// queue (at most Backlog pending; a connect arriving at a full queue is
// dropped and retried after the SYN retransmit delays 1, 2, 4 ... times
// Retry, as the kernel does), and is accepted by one root thread that spends
// Accept on each, then Reply on each answer. The rings that follow are
// evaluated by their max-plus recurrence: with a uniform cost c per message
// a ring of s steps over ranks ready at t_r completes at max(t_r) + s*c
// (exact for the last rank; TestRingClosedForm checks it against a
// step-by-step run). Costs are per message: Hop, plus HopPerActive for
// every rank busy in the same step (on one host, m ranks each handling a
// message share its cores: a step takes about m times a message's CPU over
// the cores; past one host the term is 0), plus Record per record the
// message carries. The busy ranks of a step: all N in the flat ring and in
// every hierarchical phase (the instances' phases overlap on one host; see
// hierGather).
package bootsim

import (
	"container/heap"
	"fmt"
	"math"
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
	Roots        int     // roots sharing the ranks evenly, each its own listener and thread (NCCL 2.23's several unique ids); 0 or 1: one
	RankDelay    bool    // each rank waits before its root connect as nrtabi's ranks do (ConnectDelay): a known delay, not a fitted cost
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
func Steps(a Algo, n, l int) int {
	switch a {
	case Flat:
		return n - 1
	case Hier:
		if n <= l || l < 1 {
			return n - 1
		}
		h := (n + l - 1) / l
		return (l - 1) + (h - 1) + (l - 1)
	}
	return 0
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
	if p.Backlog > 0 && p.Retry <= 0 {
		return Result{}, fmt.Errorf("bootsim: a listen backlog of %d needs a retry delay > 0", p.Backlog)
	}
	var res Result
	per := n // the ranks one root serves
	if p.Roots > 1 {
		per = (n + p.Roots - 1) / p.Roots
	}
	var delay func(r int) float64
	if p.RankDelay {
		delay = func(r int) float64 { return ConnectDelay(a, n, l, r) }
	}
	accepted, drops := rootGather(per, p, delay)
	res.Drops = drops
	res.Gathered = accepted
	hop := func(active int) float64 { return p.Hop + p.HopPerActive*float64(active) }

	// replies: serial at the root, in rank order; rank r has its reply at ready[r]
	ready := make([]float64, n)
	for r := range ready {
		cost := p.Reply
		if a == Star {
			// the whole table to every rank: its bytes on the wire and the
			// root's own copy of them, serial at the one root thread
			cost += (p.Record + p.Table) * float64(n)
		}
		ready[r] = accepted + float64(r%per+1)*cost + hop(1)
	}
	if a == Star {
		res.Seconds = p.Fixed + maxOf(ready)
		return res, nil
	}
	if a == Hier && n <= l {
		a = Flat // BOOTSTRAP_HIER_DISPATCH: n > l, else the flat ring
	}
	res.Steps = Steps(a, n, l)
	t := ready
	gathers := max(p.Gathers, 1)
	for g := 0; g < gathers; g++ {
		if a == Flat {
			t = uniform(ring(t, n-1, hop(n)+p.Record), n)
			continue
		}
		t = hierGather(t, n, l, hop, p.Record)
	}
	end := maxOf(t)
	if p.Final {
		// the root reads the N RING_DONEs one after another, then COMPLETE
		end += float64(per)*p.Accept + hop(1)
	}
	if p.PerNC {
		end += float64(treeRounds(n)+cubeRounds(n)) * hop(n)
	}
	res.Seconds = p.Fixed + end
	return res, nil
}

// hierGather is the three phases over ranks ready at t: the intra ring of
// each instance, the leaders' ring of instance blocks, the leaders' blocks
// down each intra ring. It returns when each rank holds the table.
func hierGather(t []float64, n, l int, hop func(active int) float64, record float64) []float64 {
	h := (n + l - 1) / l
	size := func(j int) int { return min(l, n-j*l) }
	intra := make([]float64, h)
	for j := 0; j < h; j++ {
		k := size(j)
		intra[j] = ring(t[j*l:j*l+k], k-1, hop(n)+record)
	}
	// Every hop is charged all n ranks busy, not only the H leaders: on one
	// host the instances' phases overlap (an instance whose block came down
	// starts the next all-gather's intra ring while others are still on
	// the inter ring or going down), so a leader's message waits behind
	// them. Measured (docs/benchmarks.md#hierarchical-bootstrap, a trace of
	// N = 256, L = 16): inter and down hops took 1-2.5 ms, as long as an
	// intra hop with all 256 busy. Past one host HopPerActive is 0 and the
	// charge is moot.
	busy := n
	// a block of instance j carries size(j) records: the longest is l
	inter := ring(intra, h-1, hop(busy)+record*float64(l))
	out := make([]float64, n)
	for j := 0; j < h; j++ {
		k := size(j)
		// the leader's block of n - k records, hop by hop down the intra ring
		for x := 0; x < k; x++ {
			out[j*l+x] = inter + float64(x)*(hop(busy)+record*float64(n-k))
		}
	}
	return out
}

// ring is when the last rank of a ring all-gather of s steps holds every
// slice, the ranks being ready at t and each message costing c.
func ring(t []float64, s int, c float64) float64 {
	return maxOf(t) + float64(max(s, 0))*c
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

// ---- the root, event by event ------------------------------------------------

// retry is a dropped connect coming back.
type retry struct {
	t     float64
	seq   int // FIFO among equal times: deterministic
	tries int
}

type retries []retry

func (e retries) Len() int { return len(e) }
func (e retries) Less(i, j int) bool {
	if e[i].t != e[j].t {
		return e[i].t < e[j].t
	}
	return e[i].seq < e[j].seq
}
func (e retries) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *retries) Push(x any)   { *e = append(*e, x.(retry)) }
func (e *retries) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// rootGather is when the root has accepted every rank's INFO_TO_ROOT, and
// how many connects a full listen queue dropped on the way. Three event
// sources, taken in time order (ties: the root's accept finishing first,
// then first connects, then retries): the first connects, already in time
// order (rank r starts at its share of the skew, no earlier than its
// stagger slot); retries, in a heap; the one accept in progress.
func rootGather(n int, p Params, delay func(r int) float64) (float64, int) {
	arrival := func(r int) float64 {
		t := 0.0
		if n > 1 {
			t = p.Skew * float64(r) / float64(n-1)
		}
		if p.Stagger > 0 {
			t = max(t, float64(r)/p.Stagger)
		}
		if delay != nil {
			// a rank's own wait counts from its start (the skew)
			t += delay(r)
		}
		return t
	}
	q := &retries{}
	seq := 0
	next := 0             // the next first connect
	pending := 0          // in the listen queue, not yet accepted
	doneAt := math.Inf(1) // when the accept in progress finishes
	accepted, drops := 0, 0
	var now float64
	for accepted < n {
		ta, tr := math.Inf(1), math.Inf(1)
		if next < n {
			ta = arrival(next)
		}
		if q.Len() > 0 {
			tr = (*q)[0].t
		}
		switch {
		case doneAt <= ta && doneAt <= tr:
			now = doneAt
			accepted++
			doneAt = math.Inf(1)
		default:
			tries := 0
			if ta <= tr {
				now = ta
				next++
			} else {
				e := heap.Pop(q).(retry)
				now, tries = e.t, e.tries
			}
			if p.Backlog > 0 && pending >= p.Backlog {
				drops++
				heap.Push(q, retry{t: now + p.Retry*float64(int(1)<<min(tries, 20)), seq: seq, tries: tries + 1})
				seq++
				continue
			}
			pending++
		}
		if math.IsInf(doneAt, 1) && pending > 0 {
			pending--
			doneAt = now + p.Accept
		}
	}
	return now, drops
}
