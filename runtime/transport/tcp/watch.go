package tcp

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// Watching the ring between gathers (docs/bootstrap-hierarchy.md#abort-frames):
// a rank whose gather is done may still be needed by a world that failed
// after it (a neighbour killed once this rank's records had gone round).
// While no all-gather holds the ring, one goroutine per ring link peeks at
// what arrives: an abort (either framing) is read, passed on to the other
// ring links and fails the endpoint, so every wait of the rank's next
// phases that ends with the endpoint (Endpoint.Context) ends at once,
// naming the dead rank, its address and the phase. Anything else is left
// where it is: ring data is a neighbour already in the next gather, which
// reads it; a hang-up without an abort is a neighbour that is done as much
// as one that died, so the watcher only records it (ringgone.go): a
// point-to-point wait for that neighbour's message takes it for its death,
// as the C ranks do, and otherwise a neighbour that died is named by the
// ranks still in the gather, whose aborts reach this one. Nothing is
// consumed that a gather would read: peeking leaves the bytes in the link's
// reader.

// watch is the endpoint's set of ring watchers; its fields are guarded by
// the endpoint's ringMu.
type watch struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

func (e *Endpoint) ringLinks() []*link {
	var out []*link
	for _, l := range []*link{e.ringSend, e.ringRecv, e.interSend, e.interRecv} {
		if l != nil && l.c != nil {
			out = append(out, l)
		}
	}
	return out
}

// watchRings starts the watchers; the caller holds ringMu.
func (e *Endpoint) watchRings() {
	if e.watching.stop != nil || e.st.cause() != nil || e.n.cfg.Hooks.Deaf {
		return
	}
	stop := make(chan struct{})
	e.watching.stop = stop
	for _, l := range e.ringLinks() {
		e.watching.wg.Add(1)
		go func() {
			defer e.watching.wg.Done()
			e.watchLink(l, stop)
		}()
	}
}

// unwatchRings stops the watchers and waits for them; the caller holds
// ringMu. A watcher blocked in its peek is woken by a read deadline in the
// past, which the next read of the link replaces with its own.
func (e *Endpoint) unwatchRings() {
	if e.watching.stop == nil {
		return
	}
	close(e.watching.stop)
	e.watching.stop = nil
	for _, l := range e.ringLinks() {
		_ = l.c.SetReadDeadline(time.Unix(1, 0))
	}
	e.watching.wg.Wait()
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// headerIsAbort says whether a frame header opens an abort in the
// endpoint's framing.
func (e *Endpoint) headerIsAbort(b []byte) bool {
	if e.n.cfg.Extended {
		var h abi.BootstrapMsgHeader
		h.UnmarshalFrom(b)
		return h.Type == abi.BootstrapMsgAbort
	}
	return int32(leUint32(b)) == int32(abi.BootstrapFrameAbort)
}

func (e *Endpoint) watchLink(l *link, stop <-chan struct{}) {
	hs := frameSizeBytes
	if e.n.cfg.Extended {
		hs = int(abi.BootstrapMsgHeaderSize)
	}
	// No deadline while idle; set before the checks below, so a stop or an
	// abort that put one in the past first is still seen.
	_ = l.c.SetReadDeadline(time.Time{})
	if stopped(stop) || e.st.cause() != nil {
		return
	}
	b, err := l.in().Peek(hs)
	if stopped(stop) || e.st.cause() != nil {
		return
	}
	if err != nil {
		// Done or gone: only a wait for this neighbour's message can tell
		// which (ringgone.go), so it is told.
		e.n.log.Debug("bootstrap: a ring link closed after the gather (the neighbour is done, or gone: a wait for its message, or the ranks still in the gather, say which)",
			"rank", e.rank, "peer", l.peer, "err", err)
		e.gone.mark(e.linkRank(l))
		return
	}
	if !e.headerIsAbort(b) {
		return // a neighbour already in the next gather: that gather reads it
	}
	// The ring is taken to read the abort; a gather that takes it first
	// reads the abort itself, and its stop ends this wait.
	for !e.ringMu.TryLock() {
		t := time.NewTimer(time.Millisecond)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
	defer e.ringMu.Unlock()
	e.heardAfterGather(l)
}

// heardAfterGather reads the abort waiting on l, passes it on to the other
// ring links and fails the endpoint with it; the caller holds ringMu.
func (e *Endpoint) heardAfterGather(l *link) {
	var err error
	if e.n.cfg.Extended {
		_, err = l.recvHeader("reading an ABORT after the gather", false)
	} else {
		var none [0]byte
		_, err = l.recvFrame(none[:], "an abort frame after the gather")
	}
	var ra *RingAbortError
	var ab *AbortError
	switch {
	case errors.As(err, &ra):
		// floodAbort passes it on, unchanged, to the other links. A copy:
		// the read may return the abort the endpoint already holds (its
		// cause, which other goroutines read), never to be written.
		heard := *ra
		heard.via = l
		err = &heard
	case errors.As(err, &ab):
		e.relayAbortMsg(l, ab)
	case err == nil:
		err = fmt.Errorf("%s: an abort frame with nothing in it", l.peer)
	}
	err = e.fail(err)
	e.n.log.Error("bootstrap: the world failed after this rank's gather", "rank", e.rank, "err", err)
}

// relayAbortMsg passes an extended ABORT heard on from to the other ring
// links, each write within abortWriteWithin, so a neighbour that is done
// with its gather and watching hears it too.
func (e *Endpoint) relayAbortMsg(from *link, ab *AbortError) {
	frame := abortMsg(ab.Reason)
	for _, l := range e.ringLinks() {
		if l == from {
			continue
		}
		_ = l.c.SetWriteDeadline(time.Now().Add(abortWriteWithin))
		_, _ = l.c.Write(frame)
	}
}
