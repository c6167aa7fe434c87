package tcp

import (
	"errors"
	"fmt"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// serveDefault is the root in the default framing, as the reference
// libnccom's root thread runs it (docs/sources.md#s001-3 with upstream NCCL 2.9's
// framing): one framed record per connection, every check upstream or the
// seed names, then INFO_FROM_ROOT on each rank's own fd and close. A bad
// world closes every connection, so the ranks waiting fail at once with the
// upstream "Connection closed by remote peer"; the reason is the root's log.
func (r *Root) serveDefault() error {
	size, _ := r.recordSize()
	byRank := make([]*rankConn, r.nranks)
	lo, hi := r.span()
	var prevRoot, nextRoot *link
	nextc := make(chan error, 1)
	gotNext := false
	defer func() {
		r.ln.Close()
		for _, rc := range byRank {
			if rc != nil {
				rc.l.close()
			}
		}
		prevRoot.close()
		if r.ring != nil {
			if !gotNext {
				// A failed root lets its dial of the next root finish
				// (at most culpritGrace) before it hangs up: a next root
				// that gets the connection and then EOF fails at once,
				// one that never gets it waits for it until its socket
				// timeout, and so do its ranks
				// (docs/bootstrap-hierarchy.md#multi-root-the-roots-ring).
				select {
				case <-nextc:
				case <-time.After(min(r.n.cfg.Timeout, culpritGrace)):
					r.st.abort(errClosed)
					<-nextc
				}
			}
			nextRoot.close()
		}
	}()
	fail := func(err error) error {
		r.n.log.Error(err.Error())
		return err
	}
	if r.ring != nil {
		go func() {
			var err error
			nextRoot, err = r.dialNextRoot()
			nextc <- err
		}()
	}
	for have := 0; have < hi-lo || r.ring != nil && prevRoot == nil; {
		_ = r.ln.SetDeadline(time.Now().Add(r.n.cfg.Timeout))
		c, err := r.ln.Accept()
		if err != nil {
			if err := r.stopped(); err != nil {
				return err
			}
			if have == hi-lo {
				return fail(r.errf("root ring: the previous %s did not connect within %s (%s)", r.rootName(r.ring.prev()), r.n.cfg.Timeout, abi.EnvSockTimeout))
			}
			return fail(r.errf("no INFO_TO_ROOT from %s within %s (%s): %d of %d ranks arrived",
				rankList(missing(byRank, nil, lo, hi)), r.n.cfg.Timeout, abi.EnvSockTimeout, have, hi-lo))
		}
		r.st.add(c)
		remote := c.RemoteAddr().String()
		rc := &rankConn{l: &link{c: c, peer: "peer " + remote, timeout: r.n.cfg.Timeout, st: r.st}, remote: remote, rank: -1}
		// Room for any rank's record: one of the other shape is named.
		buf := make([]byte, max(size, maxRecord))
		n, err := rc.l.recvFrame(buf, "its INFO_TO_ROOT record")
		if err != nil {
			rc.l.close()
			if err := r.stopped(); err != nil {
				return err
			}
			return fail(r.errf("%v", err))
		}
		if r.ring != nil && n == abi.SizeofBootstrapRootRange {
			if prevRoot != nil {
				rc.l.close()
				return fail(r.errf("root ring: a second root connection from peer %s (the previous root is %s)", remote, prevRoot.peer))
			}
			if err := r.takeRange(rc, buf[:n]); err != nil {
				rc.l.close()
				return fail(r.errf("root ring: %v", err))
			}
			prevRoot = rc.l
			continue
		}
		if n != size {
			rc.l.close()
			if n >= 8 {
				rc.rank = int(int32(leUint32(buf[4:8])))
			}
			if err := r.wrongShape(rc.who(), n, buf[:n]); err != nil {
				return fail(err)
			}
			if n > size {
				return fail(r.errf("%s (its INFO_TO_ROOT record from %s)", cfmt.Sprintf(abi.MsgNccomMsgTruncated, n, size), rc.l.peer))
			}
			return fail(r.errf("Bootstrap Root : peer %s sent a %d-byte extInfo, expected %d", remote, n, size))
		}
		r.unmarshalRecord(rc, buf)
		info := rc.rec.Info
		switch {
		case info.Sanity != abi.BootstrapSanity:
			rc.l.close()
			return fail(r.errf("%s", cfmt.Sprintf(abi.MsgNccomRootBadSanity, info.Sanity, remote, abi.BootstrapSanity)))
		case int(info.Nranks) != r.nranks:
			rc.l.close()
			return fail(r.errf("peer %s: %s", remote, cfmt.Sprintf(abi.MsgNccomRootNranksMismatch, r.nranks, info.Nranks)))
		case info.Rank < 0 || int(info.Rank) >= r.nranks:
			// Upstream reports this as "has already checked in" (its check
			// is one test); a rank no world has is said to be out of range,
			// with the address the claim came from
			// (docs/bootstrap.md#two-framings).
			rc.l.close()
			return fail(r.errf("peer %s: rank %d is out of range 0..%d for a world of %d", remote, info.Rank, r.nranks-1, r.nranks))
		case int(info.Rank) < lo || int(info.Rank) >= hi:
			rc.l.close()
			o := RootOf(int(info.Rank), len(r.ring.roots), r.nranks, r.perInstance, r.global)
			olo, ohi := RootRange(o, len(r.ring.roots), r.nranks, r.perInstance, r.global)
			return fail(r.errf("peer %s: rank %d belongs to root %d (ranks %d..%d), not this root %d (ranks %d..%d): give every rank the same %s",
				remote, info.Rank, o, olo, ohi-1, r.ring.index, lo, hi-1, abi.EnvBootstrapRoots))
		case byRank[info.Rank] != nil:
			rc.l.close()
			return fail(r.errf("peer %s: %s (by peer %s)", remote, cfmt.Sprintf(abi.MsgNccomRootAlreadyCheckedIn, info.Rank, r.nranks), byRank[info.Rank].remote))
		}
		if _, err := DecodeAddr(info.ExtAddressListen); err != nil {
			rc.l.close()
			return fail(r.errf("peer %s rank %d: its listen address: %v", remote, info.Rank, err))
		}
		rc.rank = int(info.Rank)
		rc.l.peer = fmt.Sprintf("rank %d (peer %s)", rc.rank, remote)
		if err := r.admitHier(rc); err != nil {
			rc.l.close()
			return fail(err)
		}
		byRank[info.Rank] = rc
		have++
	}
	r.ln.Close()
	if r.global {
		if odd, ref := oddTag(byRank[lo:hi]); odd >= 0 {
			odd, ref = odd+lo, ref+lo
			return fail(r.errf("%s (rank %d is peer %s, rank %d peer %s)", cfmt.Sprintf(abi.MsgNccomRootGitHashMismatch, odd, formatGitHash(byRank[odd].rec.NcclNRTGitHash),
				ref, formatGitHash(byRank[ref].rec.NcclNRTGitHash)), odd, byRank[odd].remote, ref, byRank[ref].remote))
		}
	}
	if r.ring != nil {
		err := <-nextc
		gotNext = true
		if err != nil {
			return fail(r.errf("root ring: %v", err))
		}
		first, err := r.ringOfRoots(prevRoot, nextRoot, byRank[lo].rec.Info.ExtAddressListen)
		if err != nil {
			if err := r.stopped(); err != nil {
				return err
			}
			return fail(r.errf("root ring (%s): %v", r.rootName(r.ring.index), err))
		}
		// The next range's first rank: the successor that crosses this
		// range's end (docs/bootstrap-hierarchy.md#multi-root-range-assignment).
		byRank[hi%r.nranks] = &rankConn{rank: hi % r.nranks, rec: abi.ExtInfoGlobal{Info: abi.ExtInfo{ExtAddressListen: first}}}
	}
	r.mu.Lock()
	r.completing = true
	r.mu.Unlock()
	for rank := lo; rank < hi; rank++ {
		rc := byRank[rank]
		if err := rc.l.sendFrame(r.reply(byRank, rank), "INFO_FROM_ROOT"); err != nil {
			if err := r.stopped(); err != nil {
				return err
			}
			return fail(r.errf("%v", err))
		}
		rc.l.close()
	}
	r.n.log.Info("bootstrap root: every rank answered", "addr", r.addr.String(), "nranks", r.nranks, "ranks", fmt.Sprintf("%d..%d", lo, hi-1))
	return nil
}

// span is the ranks this root serves: all, or its range of the roots'.
func (r *Root) span() (lo, hi int) {
	if r.ring == nil {
		return 0, r.nranks
	}
	return r.ring.lo, r.ring.hi
}

// stopped is the root's failure once Close or the context ended its wait
// (nil while neither has).
func (r *Root) stopped() error {
	cause := r.st.cause()
	if errors.Is(cause, errClosed) {
		return r.errf("closed before the world was complete")
	}
	return cause
}

// oddTag is the lowest rank whose git-hash tag differs from the most common
// one (ties: the lowest rank's), and that reference rank; -1 when all agree.
func oddTag(byRank []*rankConn) (odd, ref int) {
	count := map[abi.NcclNRTGitHash]int{}
	for _, rc := range byRank {
		count[rc.rec.NcclNRTGitHash]++
	}
	for i, rc := range byRank {
		if count[rc.rec.NcclNRTGitHash] > count[byRank[ref].rec.NcclNRTGitHash] {
			ref = i
		}
	}
	for i, rc := range byRank {
		if rc.rec.NcclNRTGitHash != byRank[ref].rec.NcclNRTGitHash {
			return i, ref
		}
	}
	return -1, ref
}
