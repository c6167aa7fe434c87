package tcp

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// handshakeDefault is bootstrapInitFlat in the default framing (docs/sources.md#s001-3,
// upstream NCCL 2.9 where the seed is silent): INFO_TO_ROOT and
// INFO_FROM_ROOT on one connection, closed at once; connect to the ring
// successor and accept the predecessor with nothing said on either; then
// the ring all-gather of the listen addresses.
func (e *Endpoint) handshakeDefault(global bool) error {
	rl, rec, err := e.dialRoot(global)
	if err != nil {
		return e.errf("%w", err)
	}
	defer rl.close()
	if w := e.n.cfg.Hooks.WriteRecord; w != nil {
		frame := append(putInt(len(rec)), rec...)
		err = w(rl.c, frame, frameSizeBytes)
	} else {
		err = rl.sendFrame(rec, "INFO_TO_ROOT")
	}
	if err != nil {
		return e.errf("%w", err)
	}
	buf := make([]byte, e.replySize())
	if err := rl.recvExact(buf, "INFO_FROM_ROOT"); err != nil {
		return e.errf("%w", err)
	}
	rl.close()
	if h := e.n.cfg.Hooks.AfterReply; h != nil {
		h()
	}
	next, inter, err := e.takeReply(buf)
	if err != nil {
		return e.errf("%w", err)
	}
	if e.hier != nil {
		err = e.wireHier(next, inter)
	} else {
		err = e.wireRingDefault(next)
	}
	if err != nil {
		return e.errf("%w", err)
	}
	e.peers[e.rank] = e.me
	buf2 := make([]byte, int(abi.NcclSocketAddressSize)*e.size)
	sa := EncodeAddr(e.me)
	sa.MarshalTo(buf2[e.rank*int(abi.NcclSocketAddressSize):])
	if err := e.gather(buf2); err != nil {
		return e.errf("%w", err)
	}
	for r := range e.peers {
		sa.UnmarshalFrom(buf2[r*int(abi.NcclSocketAddressSize):])
		ap, err := DecodeAddr(sa)
		if err != nil {
			return e.errf("rank %d's listen address from the ring all-gather: %v", r, err)
		}
		e.peers[r] = ap
	}
	e.renameRings()
	return nil
}

// connectDelay is how long this rank waits before it connects to the root,
// so that a large world's connects do not all reach the root at once. The
// flat path is upstream 2.9.9's: over BOOTSTRAP_DELAY_CONNECT_RANKS ranks,
// rank r waits r ms (rank 255 of 256 a quarter of a second, more than the
// whole star bootstrap on one host). The hierarchical path, which upstream
// 2.9.9 does not have, takes the stagger of the upstream that serves large
// worlds (2.23 and later): only past BOOTSTRAP_HIER_STAGGER_THRESHOLD ranks
// per root, at BOOTSTRAP_HIER_STAGGER_RATE connects per second
// (docs/bootstrap-hierarchy.md#stagger).
func (e *Endpoint) connectDelay() time.Duration {
	// Counted within this rank's root: upstream 2.23 staggers per root.
	return connectDelay(e.hier != nil, e.rank-e.span.lo, e.span.hi-e.span.lo)
}

func connectDelay(hier bool, rank, nranks int) time.Duration {
	switch {
	case hier && nranks > int(abi.BootstrapHierStaggerThreshold):
		return time.Duration(rank) * time.Second / time.Duration(abi.BootstrapHierStaggerRate)
	case !hier && nranks > int(abi.BootstrapDelayConnectRanks):
		return time.Duration(rank) * time.Millisecond
	}
	return 0
}

// wireRingDefault connects to the successor and accepts the predecessor:
// a world of one connects to itself, as upstream does.
func (e *Endpoint) wireRingDefault(next netip.AddrPort) error {
	t := e.n.cfg.Timeout
	succ, pred := e.Next(), e.Prev()
	l, err := dial(next.String(), fmt.Sprintf("ring successor rank %d (%s)", succ, next), t, e.st)
	if err != nil {
		return err
	}
	e.ringSend = l
	e.st.add(l.c)
	e.ringRecv, err = e.acceptPredecessor(pred, t)
	return err
}

// greetDefault reads the {rank}{tag} a point-to-point connection opens with
// (upstream bootstrapSend) and files it under the rank: the queue of
// connections upstream's bootstrapRecv keeps for (peer, tag)s it is not
// waiting for yet.
func (e *Endpoint) greetDefault(c net.Conn) {
	l := &link{c: c, peer: "peer " + c.RemoteAddr().String(), timeout: e.n.cfg.Timeout, st: e.st}
	var rb, tb [4]byte
	err := l.recvExact(rb[:], "its rank")
	if err == nil {
		err = l.recvExact(tb[:], "its tag")
	}
	rank := int(int32(leUint32(rb[:])))
	tag := int(int32(leUint32(tb[:])))
	if err == nil && (rank < 0 || rank >= e.size || rank == e.rank || tag != int(abi.BootstrapP2PTag)) {
		err = fmt.Errorf("%s names rank %d tag %d: not another rank of this world of %d", l.peer, rank, tag, e.size)
	}
	if err != nil {
		if e.st.cause() == nil {
			e.n.log.Warn("bootstrap: refused a connection", "rank", e.rank, "err", err)
		}
		l.close()
		return
	}
	l.peer = claimed(rank, c)
	select {
	case e.inbox[rank] <- l:
	default:
		e.n.log.Warn("bootstrap: a second connection from one peer", "rank", e.rank, "peer", l.peer)
		l.close()
	}
}
