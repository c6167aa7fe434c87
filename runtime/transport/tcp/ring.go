package tcp

import (
	"errors"
	"net"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The bidirectional ring all-gather (docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather):
// the link to the successor also carries frames back from it, the link from
// the predecessor frames back to it, so each ring runs ceil((n-1)/2) steps
// instead of n-1 over the connections it already has.

// ringOp is one half of a step: a frame sent or received on a link, and
// which slice of the all-gather it is.
type ringOp struct {
	l     *link
	send  bool
	buf   []byte
	first int // rank of buf's first record (AllGatherRecords), received ops only
}

// exchange runs one step's ops: sends first then receives when every frame
// is small (it fits the socket buffer, so a send never waits on the peer's
// read), else all at once on goroutines, the first failure cutting the
// others short. Received slices are held to the AllGatherRecords check.
func (e *Endpoint) exchange(ops []ringOp, check bool) (*link, error) {
	small := true
	for _, o := range ops {
		small = small && len(o.buf) <= smallBlock
	}
	if small {
		for _, o := range ops {
			if o.send {
				if err := e.sendOn(o.l, abi.BootstrapMsgRingData, o.buf); err != nil {
					return o.l, err
				}
			}
		}
		for _, o := range ops {
			if !o.send {
				if err := e.recvOn(o.l, abi.BootstrapMsgRingData, o.buf); err != nil {
					return o.l, err
				}
			}
		}
	} else {
		type result struct {
			l   *link
			err error
		}
		done := make(chan result, len(ops))
		for _, o := range ops {
			go func() {
				if o.send {
					done <- result{o.l, e.sendOn(o.l, abi.BootstrapMsgRingData, o.buf)}
				} else {
					done <- result{o.l, e.recvOn(o.l, abi.BootstrapMsgRingData, o.buf)}
				}
			}()
		}
		var first result
		for range ops {
			if r := <-done; r.err != nil && first.err == nil {
				first = r
				for _, o := range ops {
					_ = o.l.c.SetDeadline(time.Unix(1, 0))
				}
			}
		}
		if first.err != nil {
			return first.l, first.err
		}
	}
	if !check {
		return nil, nil
	}
	for _, o := range ops {
		if !o.send {
			if err := e.verifyRelayed(o.l, o.first, o.buf); err != nil {
				return o.l, err
			}
		}
	}
	return nil, nil
}

// ringStepsBidir is ringSteps both ways round: at step s party k sends
// slice (k-s) mod n to the successor and receives (k-s-1) mod n from the
// predecessor, and while s < floor((n-1)/2) also sends (k+s) mod n to the
// predecessor and receives (k+s+1) mod n from the successor.
func (e *Endpoint) ringStepsBidir(send, recv *link, data []byte, bounds []int, k, rank0 int, phase uint32) error {
	n := len(bounds) - 1
	fwd, back := n/2, (n-1)/2 // ceil((n-1)/2), floor((n-1)/2)
	slice := func(j int) []byte { j = ((j % n) + n) % n; return data[bounds[j]:bounds[j+1]] }
	rankOf := func(j int) int {
		j = ((j % n) + n) % n
		if e.relayed == nil {
			return 0
		}
		return rank0 + bounds[j]/e.relayed.size
	}
	for s := 0; s < fwd; s++ {
		if err := e.plantedDeath(phase, s); err != nil {
			return err
		}
		ops := []ringOp{
			{l: send, send: true, buf: e.relayOut(slice(k - s))},
			{l: recv, buf: slice(k - s - 1), first: rankOf(k - s - 1)},
		}
		if s < back {
			ops = append(ops,
				ringOp{l: recv, send: true, buf: e.relayOut(slice(k + s))},
				ringOp{l: send, buf: slice(k + s + 1), first: rankOf(k + s + 1)})
		}
		if l, err := e.exchange(ops, true); err != nil {
			return e.ringFailed(l, phase, s, err)
		}
	}
	return nil
}

// downRoute is where a non-leader takes the down frame from, where it
// passes it on and whether it does. One way round, from the predecessor to
// the successor unless that is the leader; both ways
// (docs/bootstrap-hierarchy.md#bidirectional-ring-all-gather), locals
// 1..ceil((L_h-1)/2) take it from the predecessor and the others from the
// successor, each passing it on away from the leader while the next one is
// in its half.
func (e *Endpoint) downRoute() (from, to *link, pass bool) {
	s := e.hier
	if !e.n.cfg.Bidirectional {
		return e.ringRecv, e.ringSend, s.intraNext() != s.leader(s.h)
	}
	half := s.lh / 2 // ceil((L_h-1)/2), the last local reached forward
	if s.local <= half {
		return e.ringRecv, e.ringSend, s.local < half
	}
	return e.ringSend, e.ringRecv, s.local > half+1
}

func (e *Endpoint) exchangeDown(ops []ringOp) error {
	if l, err := e.exchange(ops, false); err != nil {
		return e.ringFailed(l, abi.BootstrapPhaseDown, 0, err)
	}
	return nil
}

// errPlantedDeath is what a rank made to die by Hooks.RingStep returns.
var errPlantedDeath = errors.New("planted death (Hooks.RingStep): every socket reset")

// plantedDeath runs Hooks.RingStep; when it says die, every socket of this
// rank is reset (SO_LINGER 0, then close: the peers see RST or EOF at once,
// as when a process is killed).
func (e *Endpoint) plantedDeath(phase uint32, step int) error {
	h := e.n.cfg.Hooks.RingStep
	if h == nil || !h(phase, step, e.me) {
		return nil
	}
	for _, l := range []*link{e.ringSend, e.ringRecv, e.interSend, e.interRecv} {
		if l == nil || l.c == nil {
			continue
		}
		if tc, ok := l.c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		l.c.Close()
	}
	e.ln.Close()
	e.st.abort(errPlantedDeath)
	return errPlantedDeath
}
