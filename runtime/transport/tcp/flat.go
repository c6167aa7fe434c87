package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// InitFlat is bootstrapInit + bootstrapInitFlat for one rank: when
// nrt_get_total_vnc_count() reports non-zero it does nothing and returns a
// nil Endpoint (the single-vNC gate: comm->bootstrap stays NULL). Otherwise
// it listens on the chosen interface, sends the root its INFO_TO_ROOT record
// (with the git-hash tag on a global init), takes the reply, connects to its
// ring successor, accepts its predecessor and ring-all-gathers every rank's
// listen address; it returns once the root reports the whole world wired.
// ctx bounds the bootstrap and the endpoint's life (see Endpoint): when it
// ends, the wait in progress returns at once with an error wrapping
// context.Cause(ctx); the socket timeout bounds each operation as before.
func (n *Net) InitFlat(ctx context.Context, root netip.AddrPort, rank, nranks int, global bool) (*Endpoint, error) {
	return n.initFlat(ctx, root, rank, nranks, global, rootSpan{lo: 0, hi: nranks})
}

// initFlat is InitFlat through the root serving span (InitScalable).
func (n *Net) initFlat(ctx context.Context, root netip.AddrPort, rank, nranks int, global bool, span rootSpan) (*Endpoint, error) {
	c, err := n.vncGate()
	if err != nil {
		return nil, err
	}
	if c != 0 {
		n.log.Info("bootstrap is a no-op: nrt_get_total_vnc_count() reports a single-vNC process", "count", c, "rank", rank)
		return nil, nil
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, errors.New(cfmt.Sprintf(abi.MsgNccomInvalidRank, rank, nranks))
	}
	if err := CheckWorldSize("bootstrap: nranks", nranks); err != nil {
		return nil, err
	}
	if global {
		if err := setFilesLimit(); err != nil {
			n.log.Error(err.Error())
			return nil, err
		}
	}
	if !Hierarchical(global, nranks, n.cfg.PerInstance) {
		if err := n.reguardFlat(rank); err != nil {
			n.log.Error(err.Error())
			return nil, err
		}
	}
	iface, err := n.Init(root.Addr())
	if err != nil {
		return nil, err
	}
	ln, err := ListenPlain(netip.AddrPortFrom(iface.Addr, 0))
	if err != nil {
		return nil, fmt.Errorf("rank %d: cannot listen on %s: %w", rank, iface, err)
	}
	e := newEndpoint(ctx, n, ln, root, rank, nranks)
	e.span = span
	if Hierarchical(global, nranks, n.cfg.PerInstance) {
		// The root's dispatch (contradiction bootstrap-dispatch), on this
		// side too: docs/bootstrap-hierarchy.md.
		e.hier = newShape(rank, nranks, n.cfg.PerInstance)
		n.log.Info("bootstrap: hierarchical", "rank", rank, "nranks", nranks, "per_instance", e.hier.l,
			"instance", e.hier.h, "instances", e.hier.hn, "local_rank", e.hier.local, "local_n", e.hier.lh)
	} else if n.cfg.PerInstance > 0 {
		n.log.Info("bootstrap: flat", "rank", rank, "nranks", nranks, "per_instance", n.cfg.PerInstance, "global", global,
			"why", "the hierarchical bootstrap is for a global init of more ranks than one instance holds")
	}
	handshake := e.handshakeDefault
	if n.cfg.Extended {
		handshake = e.handshake
	}
	if err := handshake(global); err != nil {
		e.tellRings(err)
		e.Close()
		n.log.Error(err.Error())
		return nil, err
	}
	e.startAcceptor()
	e.ringMu.Lock()
	e.watchRings()
	e.ringMu.Unlock()
	n.log.Info("bootstrap: world wired", "rank", rank, "nranks", nranks, "listen", e.me.String(),
		"cluster_id", fmt.Sprintf("%#016x", e.cluster), "prev", e.Prev(), "next", e.Next())
	return e, nil
}

// reguardFlat is the first line of bootstrapInitFlat
// (docs/sources.md#s001-3): the flat path asks nrt_get_total_vnc_count()
// again and requires 0, though bootstrapInit's gate just let it through. The
// seed asserts; a count that moved between the two queries is refused here
// with an error before any socket is opened (extension
// flat-vnc-reguard-no-assert).
func (n *Net) reguardFlat(rank int) error {
	c, err := n.vncGate()
	if err != nil {
		return err
	}
	if c != 0 {
		return errors.New(cfmt.Sprintf(abi.MsgNccomFlatVNCReguard, rank, c))
	}
	return nil
}

// handshake is the flat exchange with the root and the ring wiring.
func (e *Endpoint) handshake(global bool) error {
	rl, rec, err := e.dialRoot(global)
	if err != nil {
		return e.errf("%w", err)
	}
	defer rl.close()
	if w := e.n.cfg.Hooks.WriteRecord; w != nil {
		frame := make([]byte, int(abi.BootstrapMsgHeaderSize)+len(rec))
		h := abi.BootstrapMsgHeader{Type: abi.BootstrapMsgInfoToRoot, Length: uint32(len(rec))}
		h.MarshalTo(frame)
		copy(frame[abi.BootstrapMsgHeaderSize:], rec)
		err = w(rl.c, frame, int(abi.BootstrapMsgHeaderSize))
	} else {
		err = rl.send(abi.BootstrapMsgInfoToRoot, rec)
	}
	if err != nil {
		return e.errf("%w", err)
	}
	reply, err := awaitReply(rl, e.replySize(), e.replyWithin())
	if err != nil {
		return e.errf("%w", err)
	}
	if h := e.n.cfg.Hooks.AfterReply; h != nil {
		h()
	}
	next, inter, err := e.takeReply(reply)
	if err != nil {
		return e.report(rl, err)
	}

	// From here the root connection is watched: an ABORT or a lost root
	// interrupts whatever the ring wiring is blocked on.
	complete := make(chan struct{})
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		e.superviseRoot(rl, complete)
	}()

	switch {
	case e.hier != nil:
		if err := e.wireHier(next, inter); err != nil {
			return e.report(rl, err)
		}
	case e.size > 1:
		if err := e.wireRing(next); err != nil {
			return e.report(rl, err)
		}
	}
	e.peers[e.rank] = e.me
	if e.size > 1 {
		buf := make([]byte, int(abi.NcclSocketAddressSize)*e.size)
		sa := EncodeAddr(e.me)
		sa.MarshalTo(buf[e.rank*int(abi.NcclSocketAddressSize):])
		if err := e.gather(buf); err != nil {
			return e.report(rl, err)
		}
		for r := range e.peers {
			sa.UnmarshalFrom(buf[r*int(abi.NcclSocketAddressSize):])
			ap, err := DecodeAddr(sa)
			if err != nil {
				return e.report(rl, fmt.Errorf("rank %d's listen address from the ring all-gather: %w", r, err))
			}
			e.peers[r] = ap
		}
		e.renameRings()
	}
	if err := rl.send(abi.BootstrapMsgRingDone, nil); err != nil {
		return e.report(rl, err)
	}
	// COMPLETE is due within one total, as INFO_FROM_ROOT was: the
	// supervisor passes over heartbeats, this timer does not.
	within := rootAnswerWithin(e.n.cfg.Timeout)
	late := time.NewTimer(within)
	defer late.Stop()
	select {
	case <-complete:
		return nil
	case <-e.st.done:
		return e.errf("%w", e.st.cause())
	case <-late.C:
		return e.errf("waiting for COMPLETE: %s", noAnswer(rl.peer, within, e.n.cfg.Timeout))
	}
}

// dialRoot connects to the root and builds this rank's INFO_TO_ROOT record,
// the opening both framings share; the caller closes the link.
//
// Both framings wait the connect stagger first, as the C side's
// nccom_root_exchange does for both (docs/bootstrap-hierarchy.md#stagger):
// the stagger is the root's accept load, which the framing does not change.
func (e *Endpoint) dialRoot(global bool) (*link, []byte, error) {
	if d := e.connectDelay(); d > 0 {
		if err := e.st.sleep(d); err != nil {
			return nil, nil, err
		}
	}
	rl, err := dial(e.root.String(), "the root "+e.root.String(), e.n.cfg.Timeout, e.st)
	if err != nil {
		return nil, nil, err
	}
	e.st.add(rl.c)
	rec, err := e.record(global)
	if err != nil {
		rl.close()
		return nil, nil, err
	}
	return rl, rec, nil
}

// record is the INFO_TO_ROOT payload: extInfo, and on a global init the
// 16-byte git-hash tag after it.
func (e *Endpoint) record(global bool) ([]byte, error) {
	info := abi.ExtInfo{Sanity: abi.BootstrapSanity, Rank: int32(e.rank), Nranks: int32(e.size), ExtAddressListen: EncodeAddr(e.me)}
	if !global {
		b := make([]byte, abi.SizeofExtInfo)
		info.MarshalTo(b)
		return b, nil
	}
	h, err := GitHash(e.n.cfg.Versions)
	if err != nil {
		return nil, err
	}
	g := abi.ExtInfoGlobal{Info: info, NcclNRTGitHash: h}
	if s := e.hier; s != nil {
		x := abi.ExtInfoHier{Info: g, PerInstance: uint32(s.l), Instance: uint32(s.h)}
		b := make([]byte, abi.SizeofExtInfoHier)
		x.MarshalTo(b)
		return b, nil
	}
	b := make([]byte, abi.SizeofExtInfoGlobal)
	g.MarshalTo(b)
	return b, nil
}

// awaitReply reads INFO_FROM_ROOT of size bytes (bootstrap_root_reply, or
// bootstrap_root_reply_hier), passing over the root's heartbeats, within
// total in all: a heartbeat says the root lives, it does not move the
// deadline (a root that only ever heartbeats would hold the rank forever).
func awaitReply(rl *link, size int, total time.Duration) ([]byte, error) {
	rl.until, rl.waitFor = time.Now().Add(total), total
	defer func() { rl.until, rl.waitFor = time.Time{}, 0 }()
	for {
		typ, p, err := rl.recvAny("waiting for INFO_FROM_ROOT", max(size, abi.SizeofBootstrapRootWait), false)
		if err != nil {
			return nil, err
		}
		switch {
		case typ == abi.BootstrapMsgRootWait:
			continue
		case typ == abi.BootstrapMsgInfoFromRoot && len(p) == size:
			return p, nil
		}
		return nil, fmt.Errorf("%s sent a %d-byte %s where INFO_FROM_ROOT (%d bytes) was due", rl.peer, len(p), msgName(typ), size)
	}
}

// rootAnswerWithin is how long a rank waits in all for one answer of the
// root (INFO_FROM_ROOT, COMPLETE) however many heartbeats come: three
// socket timeouts, as the C ranks wait (nccom_recv_want). A live root
// answers sooner: it declares a missing rank missing after one timeout
// without a record, a missing RING_DONE after two (docs/bootstrap.md#bounds-and-tests).
func rootAnswerWithin(timeout time.Duration) time.Duration { return 3 * timeout }

// replyWithin is rootAnswerWithin plus the part of the world's connect
// stagger still to come after this rank's own: the root cannot answer
// before the last rank has connected.
func (e *Endpoint) replyWithin() time.Duration {
	last := e.span.hi - 1 - e.span.lo
	return rootAnswerWithin(e.n.cfg.Timeout) + connectDelay(e.hier != nil, last, e.span.hi-e.span.lo) - e.connectDelay()
}

// renameRings names the ring peers by rank and address once the addresses
// are all-gathered.
func (e *Endpoint) renameRings() {
	if e.ringSend != nil {
		e.ringSend.peer = e.peerName(e.Next())
	}
	if e.ringRecv != nil {
		e.ringRecv.peer = claimed(e.Prev(), e.ringRecv.c)
	}
	if e.interSend != nil {
		e.interSend.peer = "inter ring successor (leader) " + e.peerName(e.hier.interNext())
	}
	if e.interRecv != nil {
		e.interRecv.peer = "inter ring predecessor (leader) " + claimed(e.hier.interPrev(), e.interRecv.c)
	}
}

// superviseRoot reads the root connection until COMPLETE; anything else
// aborts the handshake.
func (e *Endpoint) superviseRoot(rl *link, complete chan<- struct{}) {
	for {
		typ, _, err := rl.recvAny("waiting for COMPLETE", abi.SizeofBootstrapRootWait, false)
		switch {
		case err != nil:
			var ab *AbortError
			if !errors.As(err, &ab) {
				err = fmt.Errorf("lost the root while wiring the ring: %v", err)
			}
			e.st.abort(err)
			return
		case typ == abi.BootstrapMsgRootWait:
			continue
		case typ == abi.BootstrapMsgComplete:
			close(complete)
			return
		}
		e.st.abort(fmt.Errorf("%s sent an unexpected %s while the ring was being wired", rl.peer, msgName(typ)))
		return
	}
}

// wireRing connects to the successor and accepts the predecessor.
func (e *Endpoint) wireRing(next netip.AddrPort) error {
	t := e.n.cfg.Timeout
	succ, pred := e.Next(), e.Prev()
	l, err := dial(next.String(), fmt.Sprintf("ring successor rank %d (%s)", succ, next), t, e.st)
	if err != nil {
		return err
	}
	e.ringSend = l
	e.st.add(l.c)
	if err := e.sendHello(l, abi.BootstrapChannelRing); err != nil {
		return err
	}
	if err := e.st.cause(); err != nil {
		return err
	}
	if e.ringRecv, err = e.acceptPredecessor(pred, t); err != nil {
		return err
	}
	h, err := e.readHello(e.ringRecv)
	if err != nil {
		return err
	}
	if h.Channel != abi.BootstrapChannelRing || int(h.Rank) != pred {
		return fmt.Errorf("a connection from %s (rank %d, channel %d) arrived where ring predecessor rank %d was due", e.ringRecv.c.RemoteAddr(), h.Rank, h.Channel, pred)
	}
	return nil
}

// report sends a local failure of the handshake to the root and returns the
// root's verdict: the root aborts every rank with the first failure it sees,
// which is the cause when this one is only its echo (a neighbour that hung
// up because the root had already told it to). A failure that came from
// elsewhere is returned as it is.
func (e *Endpoint) report(rl *link, err error) error {
	if errors.Is(err, errPlantedDeath) {
		return e.errf("%w", err) // a dead rank says nothing
	}
	if cause := e.st.cause(); cause != nil {
		return e.errf("%w", cause)
	}
	full := e.errf("%w", err)
	text := full.Error()
	if len(text) > int(abi.BootstrapAbortTextMax) {
		text = text[:abi.BootstrapAbortTextMax]
	}
	if rl.send(abi.BootstrapMsgAbort, []byte(text)) != nil {
		return full
	}
	t := time.NewTimer(e.n.cfg.Timeout)
	defer t.Stop()
	select {
	case <-e.st.done:
		return e.errf("%w", e.st.cause())
	case <-t.C:
		return full
	}
}

// setFilesLimit raises RLIMIT_NOFILE to its hard limit: a global world opens
// a socket per peer.
func setFilesLimit() error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return errors.New(cfmt.Sprintf(abi.MsgNccomRlimitFailed, err.Error()))
	}
	if rl.Cur == rl.Max {
		return nil
	}
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return errors.New(cfmt.Sprintf(abi.MsgNccomSetrlimitFailed, err.Error()))
	}
	return nil
}

// acceptPredecessor accepts the ring predecessor's connection within t, in
// either framing; an abort already recorded wins over the accept's own error.
func (e *Endpoint) acceptPredecessor(pred int, t time.Duration) (*link, error) {
	_ = e.ln.SetDeadline(time.Now().Add(t))
	c, err := e.ln.Accept()
	if err != nil {
		if cause := e.st.cause(); cause != nil {
			return nil, cause
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("ring predecessor rank %d did not connect within %s (%s)", pred, t, abi.EnvSockTimeout)
		}
		return nil, fmt.Errorf("accepting ring predecessor rank %d: %w", pred, err)
	}
	_ = e.ln.SetDeadline(time.Time{})
	e.st.add(c)
	return &link{c: c, peer: fmt.Sprintf("ring predecessor rank %d (%s)", pred, c.RemoteAddr()), timeout: t, st: e.st}, nil
}
