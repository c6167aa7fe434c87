package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/collectives"
	"github.com/nrtabi/nrtabi/runtime/launch"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The star: every rank sends the root one record (its listen address and
// its signature, framed as the extended bootstrap frames it: {u32 type, u32
// length} then the payload); the root, once it holds all of them, answers
// every rank with the verdict, a unique id naming the root, and the whole
// address table. It is written here, on the public abi and tcp encoders,
// rather than inside runtime/transport/tcp, so that the runtime carries no
// code only the bench runs.

// star is one rank's part in one naive gather.
type star struct {
	rank, nranks int
	root         netip.AddrPort
	timeout      time.Duration // the whole gather's deadline
}

// starResult is what a rank learns from the gather.
type starResult struct {
	Valid bool
	ID    tcp.UniqueID
	Peers []netip.AddrPort
}

const starRecordSize = abi.SizeofExtInfo + abi.SizeofEncSigMsg

// runRank is one rank of the bench: rank 0 serves the root (on the socket
// launch.RunLocal passed down, else its own), every rank joins, and res gets
// the times and the agreement, as a flat-bootstrap rank reports them.
func runRank(ctx context.Context, s star, res *worldprog.Report) error {
	return withRoot(ctx, s, 0, res, func(ctx context.Context) error { return joinRank(ctx, s, res) })
}

// withRoot runs join as rank s.rank under s.timeout, with rank 0 serving
// the star's root beside it (serveStarRounds with rounds) and its verdict
// joined to join's.
func withRoot(ctx context.Context, s star, rounds int, res *worldprog.Report, join func(context.Context) error) error {
	res.TStart, res.UStart = time.Now(), worldprog.SelfUsage()
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var served chan error
	if s.rank == 0 {
		ln, err := launch.InheritedRootListener()
		if err != nil {
			return err
		}
		if ln == nil {
			var lc net.ListenConfig
			l, err := lc.Listen(ctx, "tcp", s.root.String())
			if err != nil {
				return fmt.Errorf("naive root cannot listen on %s: %w", s.root, err)
			}
			ln = l.(*net.TCPListener)
		}
		served = make(chan error, 1)
		go func() { served <- serveStarRounds(ctx, ln, s.nranks, rounds) }()
	}
	err := join(ctx)
	if served != nil {
		if err != nil {
			cancel() // the root need not wait for the others any longer
		}
		if rerr := <-served; rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

func joinRank(ctx context.Context, s star, res *worldprog.Report) error {
	c := worldprog.Context(s.rank, s.nranks, false)
	if err := collectives.Sign(c, uint32(s.rank)); err != nil {
		return err
	}
	got, err := joinStar(ctx, s, c.Signature)
	if err != nil {
		return err
	}
	res.TBoot, res.UBoot = time.Now(), worldprog.SelfUsage()
	res.TAgree, res.UAgree = res.TBoot, res.UBoot
	res.Prev, res.Next = (s.rank-1+s.nranks)%s.nranks, (s.rank+1)%s.nranks
	ap, err := tcp.RootAddr(&got.ID)
	if err != nil {
		return err
	}
	res.UID = ap.String()
	if !got.Valid {
		return errors.New(cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(s.rank)))
	}
	return nil
}

// serveStar answers one gather of nranks on ln and closes it.
func serveStar(ctx context.Context, ln *net.TCPListener, nranks int) error {
	return serveStarRounds(ctx, ln, nranks, 0)
}

// serveStarRounds is serveStar, then rounds more exchanges on the same
// connections (the floor's agree through the root): every rank's
// EncSigMsg in, the AND of them and the id out to every rank.
func serveStarRounds(ctx context.Context, ln *net.TCPListener, nranks, rounds int) error {
	self := ln.Addr().(*net.TCPAddr).AddrPort()
	conns := make([]net.Conn, nranks)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer ln.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = ln.SetDeadline(d)
	}
	sigs := make([]abi.EncSigMsg, nranks)
	table := make([]byte, int(abi.NcclSocketAddressSize)*nranks)
	rec := make([]byte, starRecordSize)
	for have := 0; have < nranks; have++ {
		c, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("naive gather: %d of %d ranks arrived: %w", have, nranks, ctxErr(ctx, err))
		}
		if err := recvFrame(ctx, c, bufio.NewReader(c), abi.BootstrapMsgInfoToRoot, rec); err != nil {
			c.Close()
			return fmt.Errorf("naive gather: from %s: %w", c.RemoteAddr(), err)
		}
		var info abi.ExtInfo
		info.UnmarshalFrom(rec)
		if info.Sanity != abi.BootstrapSanity || int(info.Nranks) != nranks || info.Rank < 0 || int(info.Rank) >= nranks || conns[info.Rank] != nil {
			c.Close()
			return fmt.Errorf("naive gather: %s sent a bad record (sanity %#x, rank %d of %d)", c.RemoteAddr(), info.Sanity, info.Rank, info.Nranks)
		}
		conns[info.Rank] = c
		sigs[info.Rank].UnmarshalFrom(rec[abi.SizeofExtInfo:])
		info.ExtAddressListen.MarshalTo(table[int(info.Rank)*int(abi.NcclSocketAddressSize):])
	}
	valid := true
	for _, s := range sigs {
		valid = valid && s.Ok && s.Signature == sigs[0].Signature
	}
	reply := make([]byte, abi.SizeofEncUIDMsg+len(table))
	m := abi.EncUIDMsg{ID: tcp.NewUniqueID(netip.AddrPortFrom(self.Addr().Unmap(), self.Port())), Valid: valid}
	m.MarshalTo(reply)
	copy(reply[abi.SizeofEncUIDMsg:], table)
	for r, c := range conns {
		if err := sendFrame(ctx, c, abi.BootstrapMsgInfoFromRoot, reply); err != nil {
			return fmt.Errorf("naive gather: answering rank %d: %w", r, err)
		}
	}
	if rounds == 0 {
		return nil
	}
	readers := make([]*bufio.Reader, nranks)
	for r, c := range conns {
		readers[r] = bufio.NewReader(c)
	}
	var sb [abi.EncSigMsgSize]byte
	var ub [abi.EncUIDMsgSize]byte
	for range rounds {
		ok := true
		for r, c := range conns {
			if err := recvFrame(ctx, c, readers[r], abi.BootstrapMsgPeerData, sb[:]); err != nil {
				return fmt.Errorf("naive gather: the verdict of rank %d: %w", r, err)
			}
			var sm abi.EncSigMsg
			sm.UnmarshalFrom(sb[:])
			ok = ok && sm.Ok && sm.Signature == sigs[0].Signature
		}
		m.Valid = ok
		m.MarshalTo(ub[:])
		for r, c := range conns {
			if err := sendFrame(ctx, c, abi.BootstrapMsgPeerData, ub[:]); err != nil {
				return fmt.Errorf("naive gather: the id to rank %d: %w", r, err)
			}
		}
	}
	return nil
}

// joinStar is one rank's side: it listens (to have an address to publish,
// as a flat-bootstrap rank does, on the interface that reaches the root),
// sends its record and waits for the answer.
func joinStar(ctx context.Context, s star, sig [16]byte) (starResult, error) {
	res, ln, c, err := joinStarOn(ctx, s, sig)
	if ln != nil {
		ln.Close()
		c.Close()
	}
	return res, err
}

// joinStarOn is joinStar that leaves the rank's listener and its
// connection to the root open for the caller (the floor's ring and agree
// run on them); both are returned whenever they were opened, error or not.
func joinStarOn(ctx context.Context, s star, sig [16]byte) (starResult, net.Listener, net.Conn, error) {
	var res starResult
	c, err := dialRoot(ctx, s.root)
	if err != nil {
		return res, nil, nil, fmt.Errorf("rank %d: %w", s.rank, err)
	}
	local := c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(local, 0).String())
	if err != nil {
		c.Close()
		return res, nil, nil, fmt.Errorf("rank %d: cannot listen on %s: %w", s.rank, local, err)
	}
	res, err = joinWith(ctx, s, sig, c, ln)
	return res, ln, c, err
}

// joinWith sends the record naming ln on c, the root's connection, and
// reads the root's answer.
func joinWith(ctx context.Context, s star, sig [16]byte, c net.Conn, ln net.Listener) (starResult, error) {
	var res starResult
	ta := ln.Addr().(*net.TCPAddr).AddrPort()
	rec := make([]byte, starRecordSize)
	info := abi.ExtInfo{Sanity: abi.BootstrapSanity, Rank: int32(s.rank), Nranks: int32(s.nranks), ExtAddressListen: tcp.EncodeAddr(netip.AddrPortFrom(ta.Addr().Unmap(), ta.Port()))}
	info.MarshalTo(rec)
	sm := abi.EncSigMsg{Signature: sig, Ok: true}
	sm.MarshalTo(rec[abi.SizeofExtInfo:])
	if err := sendFrame(ctx, c, abi.BootstrapMsgInfoToRoot, rec); err != nil {
		return res, fmt.Errorf("rank %d: sending the record to the root %s: %w", s.rank, s.root, err)
	}
	reply := make([]byte, abi.SizeofEncUIDMsg+int(abi.NcclSocketAddressSize)*s.nranks)
	if err := recvFrame(ctx, c, bufio.NewReader(c), abi.BootstrapMsgInfoFromRoot, reply); err != nil {
		return res, fmt.Errorf("rank %d: waiting for the root %s: %w", s.rank, s.root, err)
	}
	var m abi.EncUIDMsg
	m.UnmarshalFrom(reply)
	res.Valid, res.ID = m.Valid, m.ID
	var sa abi.NcclSocketAddress
	for r := 0; r < s.nranks; r++ {
		sa.UnmarshalFrom(reply[abi.SizeofEncUIDMsg+r*int(abi.NcclSocketAddressSize):])
		ap, err := tcp.DecodeAddr(sa)
		if err != nil {
			return res, fmt.Errorf("rank %d: naive table entry %d: %w", s.rank, r, err)
		}
		res.Peers = append(res.Peers, ap)
	}
	return res, nil
}

// dialRoot connects to the root, retrying while nobody listens yet (a rank
// may start before the root binds its own socket).
func dialRoot(ctx context.Context, root netip.AddrPort) (net.Conn, error) {
	var d net.Dialer
	wait := 5 * time.Millisecond
	for {
		c, err := d.DialContext(ctx, "tcp", root.String())
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("cannot connect to the naive root %s: %w", root, ctxErr(ctx, err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cannot connect to the naive root %s: nobody listens there: %w", root, context.Cause(ctx))
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// sendFrame writes one frame, header and payload in one gathered write,
// before ctx ends.
func sendFrame(ctx context.Context, c net.Conn, typ uint32, payload []byte) error {
	defer watch(ctx, c)()
	var hdr [abi.BootstrapMsgHeaderSize]byte
	h := abi.BootstrapMsgHeader{Type: typ, Length: uint32(len(payload))}
	h.MarshalTo(hdr[:])
	bufs := net.Buffers{hdr[:], payload}
	if _, err := bufs.WriteTo(c); err != nil {
		return ctxErr(ctx, err)
	}
	return nil
}

// recvFrame reads one frame of type typ carrying exactly len(into) bytes
// before ctx ends.
func recvFrame(ctx context.Context, c net.Conn, r io.Reader, typ uint32, into []byte) error {
	defer watch(ctx, c)()
	var hdr [abi.BootstrapMsgHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return ctxErr(ctx, err)
	}
	var h abi.BootstrapMsgHeader
	h.UnmarshalFrom(hdr[:])
	if h.Type != typ || int(h.Length) != len(into) {
		return fmt.Errorf("a frame of type %d with %d bytes where type %d with %d bytes was due: not a naive-gather peer", h.Type, h.Length, typ, len(into))
	}
	if _, err := io.ReadFull(r, into); err != nil {
		return ctxErr(ctx, err)
	}
	return nil
}

// watch makes c's blocked reads and writes fail once ctx ends; the returned
// func stops watching.
func watch(ctx context.Context, c net.Conn) func() bool {
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	return context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
}

// ctxErr names ctx's end as the cause of an I/O error it provoked.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	return err
}
