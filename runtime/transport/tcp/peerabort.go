package tcp

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// A failing rank's abort on its point-to-point connections
// (docs/bootstrap-hierarchy.md#abort-frames): every rank that leaves a failed
// world says why on them, in either framing, so a peer that talks to it
// directly never takes a live rank that gave up for the dead one.
//
// The abort must land between frames. Another goroutine of this rank may
// be mid-frame on the same connection (a Send whose writev the peer has
// not read yet), so the abort takes the connection's wire lock, the one
// every frame write on it holds (Endpoint.wire). It waits for it at most
// abortLockWithin: a send stuck longer behind a peer that does not read
// could not have let the abort through either, and the endpoint's end cuts
// it short once the abort is out everywhere else.

// worldFailed says whether an endpoint's cause is its world's failure —
// an abort heard, or a fault of this rank's ring or point-to-point
// exchange — which a rank that leaves tells its peers; not the caller's
// context ending, nor the endpoint's close.
func worldFailed(c error) bool {
	var ab *AbortError
	var ra *RingAbortError
	var f *ringFault
	return errors.As(c, &ab) || errors.As(c, &ra) || errors.As(c, &f)
}

// abortLockWithin bounds the wait for a point-to-point connection's wire
// lock (a frame in flight on it), as broadcastAbort bounds its dials.
func (e *Endpoint) abortLockWithin() time.Duration { return min(e.n.cfg.Timeout, 2*time.Second) }

// lockWithin takes mu within d, polling, as the watcher takes the ring
// (watch.go): false if it could not.
func lockWithin(mu *sync.Mutex, d time.Duration) bool {
	until := time.Now().Add(d)
	for !mu.TryLock() {
		if time.Now().After(until) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// tellPeersExtended is tellPeers with the extended ABORT message: a heard
// ABORT's text passed on unchanged, this rank's own failure in its words.
// Once per endpoint, as floodAbort.
func (e *Endpoint) tellPeersExtended(err error, also []*link) {
	if errors.Is(err, errPlantedDeath) {
		return // a dead rank says nothing
	}
	e.abortOnce.Do(func() { e.tellPeers(abortMsg(e.extendedAbortText(err)), nil, also) })
}

// extendedAbortText is what an extended ABORT of this rank says: a heard
// ABORT's text passed on unchanged, else this rank's failure in its words.
func (e *Endpoint) extendedAbortText(err error) string {
	var ab *AbortError
	if errors.As(err, &ab) {
		return ab.Reason
	}
	return e.errf("%v", err).Error()
}

// tellRingsExtended writes the extended ABORT on this rank's ring links,
// where ABORT may travel as on any bootstrap socket, when the world fails
// while this rank is in an all-gather, once the endpoint's cause is set (so
// an ABORT a neighbour echoes back cannot take its place). Past COMPLETE
// the peer-record gather runs on the ring links, and a neighbour (a C rank
// among them) blocked on one that saw this rank hang up without a word
// would name it as the dead one (TestScaleMixedCRankDies, extended
// framing). Between gathers the ring links are only watched, and the
// point-to-point aborts and listeners tell the world (a C rank told on its
// ring link then would leave its point-to-point peers to name it:
// TestCRankDiesAfterItsGather). Once per endpoint.
func (e *Endpoint) tellRingsExtended(err error) {
	if errors.Is(err, errPlantedDeath) || e.n.cfg.Hooks != nil && e.n.cfg.Hooks.Deaf || !e.gathering.Load() {
		return
	}
	e.ringAbortOnce.Do(func() { e.writeRings(abortMsg(e.extendedAbortText(err)), nil) })
}

// tellPeers writes frame on this rank's point-to-point links — those in
// also, held by the failing operation, every send link under its wire
// lock, and every receive link no operation holds now — each then ended
// with a FIN and read until the peer hangs up, within drainWithin. A
// receive link held by another operation is passed over: its reader would
// race the drain, and it ends with the endpoint.
func (e *Endpoint) tellPeers(frame []byte, skip *link, also []*link) {
	if e.n.cfg.Hooks != nil && e.n.cfg.Hooks.Deaf {
		return
	}
	var mu sync.Mutex
	seen := map[*link]bool{nil: true}
	if skip != nil {
		seen[skip] = true
	}
	claim := func(l *link) bool {
		mu.Lock()
		defer mu.Unlock()
		if seen[l] || l.c == nil {
			return false
		}
		seen[l] = true
		return true
	}
	write := func(l *link) {
		_ = l.c.SetWriteDeadline(time.Now().Add(abortWriteWithin))
		_, _ = l.c.Write(frame)
		if tc, ok := l.c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	drain := func(l *link) {
		if tc, ok := l.c.(*net.TCPConn); ok {
			_ = tc.SetReadDeadline(time.Now().Add(drainWithin))
			_, _ = io.Copy(io.Discard, tc)
		}
	}
	var wg sync.WaitGroup
	// The send links first, each under its wire lock: a link also holds
	// (the failing Send's) is written there too, its frame already done.
	within := e.abortLockWithin()
	for r := range e.peers {
		locked := e.wire[r].TryLock()
		if locked && e.sendc[r] == nil {
			e.wire[r].Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !locked && !lockWithin(&e.wire[r], within) {
				e.n.log.Warn("bootstrap: a send held its point-to-point connection past the abort's wait; the endpoint's end cuts it short",
					"rank", e.rank, "peer", e.peerName(r), "within", within)
				return
			}
			l := e.sendc[r]
			ok := claim(l)
			if ok {
				write(l)
			}
			e.wire[r].Unlock()
			if ok {
				drain(l)
			}
		}()
	}
	ls := append([]*link(nil), also...)
	var waiting []*link
	for r := range e.peers {
		if e.recvMu[r].TryLock() {
			ls = append(ls, e.recvc[r])
			e.recvMu[r].Unlock()
		}
		// A connection a peer opened that no Recv has taken yet (the one
		// that fails may be the Recv waiting for it): the peer may be
		// writing to it, and must read why this rank leaves, not its end.
		select {
		case l := <-e.inbox[r]:
			waiting = append(waiting, l)
		default:
		}
	}
	for _, l := range append(ls, waiting...) {
		if !claim(l) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(l)
			drain(l)
		}()
	}
	wg.Wait()
	for _, l := range waiting {
		l.close() // taken from the inbox, which Close no longer sees
	}
}
