package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// The default framing is upstream NCCL 2.9's bootstrapNetSend /
// bootstrapNetRecv (spec bootstrap_wire.toml, bootstrap_frame_size): a
// 4-byte host-order int size, then exactly size bytes, nothing else. It is
// what the reference libnccom speaks. The {u32 type, u32 length} frames with
// HELLO / ROOT_WAIT / RING_DONE / COMPLETE / ABORT are nrtabi's EXTENDED
// mode (Config.Extended), which names a failed peer to every rank.

// frameSizeBytes is the size prefix of a default frame.
const frameSizeBytes = abi.SizeofBootstrapFrameSize

// sendFrame writes one default frame within the timeout, prefix and data
// in one gathered write.
func (l *link) sendFrame(data []byte, what string) error {
	return l.writeAll("sending "+what+" to", frameBufs(data))
}

// frameBufs is one default frame (size prefix, data) ready for writeAll.
func frameBufs(data []byte) net.Buffers {
	var hdr [frameSizeBytes]byte
	fs := abi.BootstrapFrameSize{Size: int32(len(data))}
	fs.MarshalTo(hdr[:])
	return net.Buffers{hdr[:], data}
}

// DecodeFrameSize reads a default frame's size prefix and checks it against
// the receiver's buffer of max bytes: a larger frame is upstream's "Message
// truncated" (the receiver's error, which names nothing else).
func DecodeFrameSize(b []byte, max int) (int, error) {
	if len(b) < frameSizeBytes {
		return 0, fmt.Errorf("a frame size needs %d bytes, got %d", frameSizeBytes, len(b))
	}
	var h abi.BootstrapFrameSize
	h.UnmarshalFrom(b)
	if h.Size < 0 || int(h.Size) > max {
		return int(h.Size), fmt.Errorf("%s", cfmt.Sprintf(abi.MsgNccomMsgTruncated, h.Size, max))
	}
	return int(h.Size), nil
}

// recvFrame reads one default frame of at most len(into) bytes, size and
// data within one deadline: a total, so a peer that drips a byte now and
// then is named once the timeout passes instead of holding the reader (issue
// 22), and returns how many bytes it carried.
func (l *link) recvFrame(into []byte, what string) (int, error) {
	var hdr [frameSizeBytes]byte
	deadline := time.Now().Add(l.timeout)
	if err := l.c.SetReadDeadline(deadline); err != nil {
		return 0, l.ioErr("waiting for "+what+" from", err)
	}
	if err := l.cause(); err != nil {
		return 0, err
	}
	if n, err := io.ReadFull(l.in(), hdr[:]); err != nil {
		return 0, upstreamText(l.readErr("waiting for "+what, err, n, len(hdr), what+"'s size"))
	}
	if int32(leUint32(hdr[:])) == int32(abi.BootstrapFrameAbort) {
		// A rank's abort (docs/bootstrap-hierarchy.md#abort-frames), on any link.
		ra, err := ReadAbortFrame(l.in(), l.peer)
		if err != nil {
			return 0, err
		}
		if l.st != nil && l.st.deaf {
			return 0, l.deafWait(deadline, what)
		}
		return 0, ra
	}
	size, err := DecodeFrameSize(hdr[:], len(into))
	if err != nil {
		return 0, fmt.Errorf("%w (%s from %s)", err, what, l.peer)
	}
	if n, err := io.ReadFull(l.in(), into[:size]); err != nil {
		return 0, upstreamText(l.readErr("reading "+what, err, n, size, what))
	}
	return size, nil
}

// recvExact is recvFrame of exactly len(into) bytes.
func (l *link) recvExact(into []byte, what string) error {
	n, err := l.recvFrame(into, what)
	if err != nil {
		return err
	}
	if n != len(into) {
		return fmt.Errorf("%s sent a %d-byte %s where %d bytes were due: the peers disagree on the message size", l.peer, n, what, len(into))
	}
	return nil
}

func putInt(v int) []byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(int32(v)))
	return b[:]
}

func leUint32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// upstreamText leads a hang-up with upstream's words for it.
func upstreamText(err error) error {
	var hu *hangUp
	if errors.As(err, &hu) {
		return &hangUp{abi.MsgNccomConnectionClosed + ": " + hu.msg}
	}
	return err
}

// deafWait is the planted deaf rank (Hooks.Deaf) given an abort frame: it
// hears nothing and waits out its own deadline, or its own state's end, as
// a rank that read no abort would.
func (l *link) deafWait(deadline time.Time, what string) error {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.st.done:
	}
	return l.ioErr("waiting for "+what+" from", os.ErrDeadlineExceeded)
}
