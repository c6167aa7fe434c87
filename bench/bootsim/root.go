package bootsim

// The root, event by event: the listen queue, its drops and SYN
// retries, the one accept thread.

import (
	"container/heap"
	"math"
)

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
