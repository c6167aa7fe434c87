package tcp

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The naive gather is the benchmark's named peer, not a libnccom protocol:
// every rank sends the root its listen address and its signature in one
// record, and the root, once it has all of them, answers every rank with
// the verdict, a unique id and the whole address table. One star round
// trip reaches the agreement the flat bootstrap, the tree AND-reduce and the
// hypercube broadcast reach in O(N) + O(log N) rounds.

// NaiveResult is what a rank learns from the naive gather.
type NaiveResult struct {
	Valid bool
	ID    UniqueID
	Peers []netip.AddrPort
}

// NaiveRoot serves one naive gather of nranks at addr and returns when every
// rank has its answer.
func (n *Net) NaiveRoot(addr netip.AddrPort, nranks int) (*Root, error) {
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(addr))
	if err != nil {
		return nil, fmt.Errorf("naive root cannot listen on %s: %w", addr, err)
	}
	return n.NaiveRootOn(ln, nranks), nil
}

// NaiveRootOn serves the naive gather on a listener the caller holds.
func (n *Net) NaiveRootOn(ln *net.TCPListener, nranks int) *Root {
	ta := ln.Addr().(*net.TCPAddr).AddrPort()
	r := &Root{n: n, ln: ln, nranks: nranks, addr: netip.AddrPortFrom(ta.Addr().Unmap(), ta.Port()), st: newAbortState(), done: make(chan struct{})}
	r.st.add(ln)
	go func() {
		defer close(r.done)
		r.err = r.serveNaive()
	}()
	return r
}

const naiveRecordSize = abi.SizeofExtInfo + abi.SizeofEncSigMsg

func (r *Root) serveNaive() error {
	t := r.n.cfg.Timeout
	links := make([]*link, r.nranks)
	sigs := make([]abi.EncSigMsg, r.nranks)
	table := make([]byte, int(abi.NcclSocketAddressSize)*r.nranks)
	defer func() {
		r.ln.Close()
		for _, l := range links {
			l.close()
		}
	}()
	buf := make([]byte, naiveRecordSize)
	for have := 0; have < r.nranks; have++ {
		_ = r.ln.SetDeadline(time.Now().Add(t))
		c, err := r.ln.Accept()
		if err != nil {
			return r.errf("naive gather: %d of %d ranks arrived: %v", have, r.nranks, err)
		}
		l := &link{c: c, peer: "peer " + c.RemoteAddr().String(), timeout: t, st: r.st}
		if err := l.recv(abi.BootstrapMsgInfoToRoot, buf); err != nil {
			l.close()
			return r.errf("naive gather: %v", err)
		}
		var info abi.ExtInfo
		info.UnmarshalFrom(buf)
		if info.Sanity != abi.BootstrapSanity || int(info.Nranks) != r.nranks || info.Rank < 0 || int(info.Rank) >= r.nranks || links[info.Rank] != nil {
			l.close()
			return r.errf("naive gather: %s sent a bad record (sanity %#x, rank %d of %d)", l.peer, info.Sanity, info.Rank, info.Nranks)
		}
		links[info.Rank] = l
		sigs[info.Rank].UnmarshalFrom(buf[abi.SizeofExtInfo:])
		info.ExtAddressListen.MarshalTo(table[int(info.Rank)*int(abi.NcclSocketAddressSize):])
	}
	valid := true
	for _, s := range sigs {
		valid = valid && s.Ok && s.Signature == sigs[0].Signature
	}
	reply := make([]byte, abi.SizeofEncUIDMsg+len(table))
	m := abi.EncUIDMsg{ID: NewUniqueID(r.addr), Valid: valid}
	m.MarshalTo(reply)
	copy(reply[abi.SizeofEncUIDMsg:], table)
	for _, l := range links {
		if err := l.send(abi.BootstrapMsgInfoFromRoot, reply); err != nil {
			return r.errf("naive gather: %v", err)
		}
	}
	return nil
}

// NaiveJoin is one rank's side of the naive gather: it listens (to have an
// address to publish, as the flat bootstrap does), sends its record and
// waits for the answer.
func (n *Net) NaiveJoin(root netip.AddrPort, rank, nranks int, sig [16]byte) (NaiveResult, error) {
	var res NaiveResult
	iface, err := n.Init(root.Addr())
	if err != nil {
		return res, err
	}
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(iface.Addr, 0)))
	if err != nil {
		return res, fmt.Errorf("rank %d: cannot listen on %s: %w", rank, iface, err)
	}
	defer ln.Close()
	ta := ln.Addr().(*net.TCPAddr).AddrPort()
	l, err := dial(root.String(), "the naive root "+root.String(), n.cfg.Timeout, nil)
	if err != nil {
		return res, fmt.Errorf("rank %d: %v", rank, err)
	}
	defer l.close()
	rec := make([]byte, naiveRecordSize)
	info := abi.ExtInfo{Sanity: abi.BootstrapSanity, Rank: int32(rank), Nranks: int32(nranks), ExtAddressListen: EncodeAddr(netip.AddrPortFrom(ta.Addr().Unmap(), ta.Port()))}
	info.MarshalTo(rec)
	s := abi.EncSigMsg{Signature: sig, Ok: true}
	s.MarshalTo(rec[abi.SizeofExtInfo:])
	if err := l.send(abi.BootstrapMsgInfoToRoot, rec); err != nil {
		return res, fmt.Errorf("rank %d: %v", rank, err)
	}
	reply := make([]byte, abi.SizeofEncUIDMsg+int(abi.NcclSocketAddressSize)*nranks)
	if err := l.recv(abi.BootstrapMsgInfoFromRoot, reply); err != nil {
		return res, fmt.Errorf("rank %d: %v", rank, err)
	}
	var m abi.EncUIDMsg
	m.UnmarshalFrom(reply)
	res.Valid, res.ID = m.Valid, m.ID
	var sa abi.NcclSocketAddress
	for r := 0; r < nranks; r++ {
		sa.UnmarshalFrom(reply[abi.SizeofEncUIDMsg+r*int(abi.NcclSocketAddressSize):])
		ap, err := DecodeAddr(sa)
		if err != nil {
			return res, fmt.Errorf("rank %d: naive table entry %d: %v", rank, r, err)
		}
		res.Peers = append(res.Peers, ap)
	}
	return res, nil
}
