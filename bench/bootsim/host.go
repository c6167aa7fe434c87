package bootsim

// The host of few cores: what the rest of it leaves a world, what a
// ring message costs its cores, and a phase's CPU over them
// (docs/benchmarks.md#the-simulator).

import (
	"math"
	"sort"
)

// dilate is p on a host that leaves the world a share a of its cores and
// has Runnable tasks in its run queue: every cost stretched by 1/a and by
// 1 + Crowd*Runnable, the sleeps kept.
func dilate(p Params) Params {
	a := p.Avail
	if a <= 0 || a >= 1 {
		a = 1
	}
	k := (1 + p.Crowd*p.Runnable) / a
	if k == 1 {
		return p
	}
	for _, c := range []*float64{&p.Fixed, &p.Accept, &p.Reply, &p.Hop, &p.HopPerActive, &p.Record, &p.Table,
		&p.BidiExtra, &p.Wake, &p.WakeFixed, &p.Work, &p.StartWork, &p.BidiWork, &p.WakeWork, &p.AgreeWork} {
		*c *= k
	}
	p.Avail, p.Runnable = 1, 0
	return p
}

// reorder gives the ranks the times of floor, in the order their own
// times had: the k-th ready rank gets floor[k].
func reorder(t, floor []float64) []float64 {
	idx := make([]int, len(t))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return t[idx[a]] < t[idx[b]] })
	out := make([]float64, len(t))
	for k, i := range idx {
		out[i] = floor[k]
	}
	return out
}

// ringWork is the CPU a message of a ring phase costs the host's cores
// for a ring of n ranks (n messages in flight each step) whose step's path is h
// (docs/benchmarks.md#the-simulator). A receive that finds its frame
// already queued costs Work; one that must sleep for it costs WakeWork
// more, the wake-up. A one-way ring rank depends on its predecessor alone
// and may run ahead of its successor, so once the step's CPU on the cores
// (n messages over the cores) outlasts the step's path, a rank waiting for
// a core finds its next frame already there: the share P of receives that
// sleep is the path over the step's CPU, P = h / (n (Work + P WakeWork) /
// C), solved for P in (0, 1]. A ring both ways round waits for both
// neighbours every step and cannot run ahead: it sleeps once a step, for
// the step's two frames; every receive past one host sleeps (a core per
// rank: no queue to wait in).
func ringWork(p Params, n int, h float64) float64 {
	if p.Bidi {
		// one wake-up a step, for the step's two frames
		return msgWork(p) + p.WakeWork/2
	}
	full := msgWork(p) + p.WakeWork
	if p.Cores <= 0 || p.WakeWork <= 0 {
		return full
	}
	c := float64(p.Cores)
	a, b := float64(n)*p.Work/c, float64(n)*p.WakeWork/c
	if a+b <= h {
		return full
	}
	// b P^2 + a P - h = 0, the positive root, written to keep its digits
	// when a is large against b h
	share := 2 * h / (a + math.Sqrt(a*a+4*b*h))
	return p.Work + min(share, 1)*p.WakeWork
}

// msgWork is the CPU one ring message costs the host's cores: a message
// of a ring both ways round costs BidiWork more.
func msgWork(p Params) float64 {
	if p.Bidi {
		return p.Work + p.BidiWork
	}
	return p.Work
}

// cpu is how long work seconds of CPU take on the host's cores: Cores of
// them shared by the n ranks, or one per rank when Cores is 0.
func cpu(p Params, n int, work float64) float64 {
	c := p.Cores
	if c <= 0 {
		c = n
	}
	return work / float64(max(c, 1))
}

// msgs is the messages a ring of k ranks handles in s steps: one per rank
// per step, two both ways round.
func msgs(k, s int, bidi bool) float64 {
	m := float64(k) * float64(s)
	if bidi {
		m *= 2
	}
	return m
}
