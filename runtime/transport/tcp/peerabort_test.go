package tcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// plantedText is what the failing rank of TestAbortLandsBetweenFrames says.
const plantedText = "planted: the test fails this rank while it sends"

// slowPeer reads what rank a sends it on one point-to-point connection, a
// little at a time so that a's sends are always mid-frame, and checks it
// frame by frame: the opening, whole data frames each filled with its
// number, then one whole abort carrying plantedText, then the end. A torn
// frame (the connection ending inside one, or an abort's bytes where data
// was due) is the error. It returns how many data frames came whole.
func slowPeer(c net.Conn, extended bool, size int, frames chan<- int) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReaderSize(&slowReader{c}, 64<<10)
	whole := 0
	payload := make([]byte, size)
	readPayload := func(n int) error {
		if n != size {
			return fmt.Errorf("after %d whole frames: a frame of %d bytes where %d were due (a torn frame)", whole, n, size)
		}
		if k, err := io.ReadFull(r, payload); err != nil {
			return fmt.Errorf("after %d whole frames: a frame cut short after %d of %d bytes (a torn frame): %v", whole, k, size, err)
		}
		for i, b := range payload {
			if b != byte(whole+1) {
				return fmt.Errorf("frame %d: byte %d is %#x, want %#x (another write inside the frame)", whole+1, i, b, byte(whole+1))
			}
		}
		whole++
		select {
		case frames <- whole:
		default:
		}
		return nil
	}
	abortText := func(n int) error {
		text := make([]byte, n)
		if _, err := io.ReadFull(r, text); err != nil {
			return fmt.Errorf("after %d whole frames: an abort cut short: %v", whole, err)
		}
		if !strings.Contains(string(text), plantedText) {
			return fmt.Errorf("after %d whole frames: an abort whose text is not the failing rank's: %q", whole, text)
		}
		if _, err := r.ReadByte(); err != io.EOF {
			return fmt.Errorf("after the abort: more bytes or no clean end (%v)", err)
		}
		return nil
	}
	if extended {
		var hb [abi.BootstrapMsgHeaderSize]byte
		if _, err := io.ReadFull(r, hb[:]); err != nil {
			return 0, fmt.Errorf("no HELLO: %v", err)
		}
		var h abi.BootstrapMsgHeader
		h.UnmarshalFrom(hb[:])
		if _, err := r.Discard(int(h.Length)); err != nil || h.Type != abi.BootstrapMsgHello {
			return 0, fmt.Errorf("the opening is not a HELLO (type %d): %v", h.Type, err)
		}
		for {
			if _, err := io.ReadFull(r, hb[:]); err != nil {
				return whole, fmt.Errorf("after %d whole frames: no abort before the end (%v)", whole, err)
			}
			h.UnmarshalFrom(hb[:])
			switch h.Type {
			case abi.BootstrapMsgPeerData:
				if err := readPayload(int(h.Length)); err != nil {
					return whole, err
				}
			case abi.BootstrapMsgAbort:
				return whole, abortText(int(h.Length))
			default:
				return whole, fmt.Errorf("after %d whole frames: a message of type %d (a torn frame)", whole, h.Type)
			}
		}
	}
	var fb [frameSizeBytes]byte
	for range 2 { // {rank}{tag}
		if _, err := io.ReadFull(r, fb[:]); err != nil || leUint32(fb[:]) != 4 {
			return 0, fmt.Errorf("the opening is not {rank}{tag}: %v", err)
		}
		if _, err := r.Discard(4); err != nil {
			return 0, err
		}
	}
	for {
		if _, err := io.ReadFull(r, fb[:]); err != nil {
			return whole, fmt.Errorf("after %d whole frames: no abort before the end (%v)", whole, err)
		}
		n := int32(leUint32(fb[:]))
		if n != int32(abi.BootstrapFrameAbort) {
			if err := readPayload(int(n)); err != nil {
				return whole, err
			}
			continue
		}
		var ib [abi.SizeofBootstrapAbortInfo]byte
		if _, err := io.ReadFull(r, ib[:]); err != nil {
			return whole, fmt.Errorf("after %d whole frames: an abort cut short: %v", whole, err)
		}
		var info abi.BootstrapAbortInfo
		info.UnmarshalFrom(ib[:])
		if info.Sanity != abi.BootstrapSanity || info.TextLen > abi.BootstrapAbortTextMax {
			return whole, fmt.Errorf("after %d whole frames: an abort with magic %#x and %d bytes of text (a torn frame)", whole, info.Sanity, info.TextLen)
		}
		return whole, abortText(int(info.TextLen))
	}
}

// slowReader hands out at most 16 KiB a read, a millisecond apart.
type slowReader struct{ c net.Conn }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.c.Read(p[:min(len(p), 16<<10)])
}

// TestAbortLandsBetweenFrames: a rank that fails while another of its
// goroutines is mid-frame on a point-to-point connection writes its abort
// there only between frames (peerabort.go: the wire lock), in both
// framings: the peer reads whole frames, then the whole abort, then the
// end — never a torn frame. Rank 2 of a 4-rank ring is closed once the
// world is up and its listen port taken over by slowPeer, so rank 0 (not
// its ring neighbour) dials it for its sends. Cost: two worlds of 4 in
// process, 1 MiB frames, about 0.3 s each under -race.
func TestAbortLandsBetweenFrames(t *testing.T) {
	const n, a, b, size = 4, 0, 2, 1 << 20
	for _, extended := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "extended"}[extended]
		t.Run(name, func(t *testing.T) {
			eps, errs, _ := worldIn(t, extended, n, false, 10*time.Second, nil)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			at := eps[b].Addr()
			eps[b].Close()
			ln, err := net.Listen("tcp", at.String())
			if err != nil {
				t.Fatalf("taking over rank %d's port %s: %v", b, at, err)
			}
			defer ln.Close()
			conns := make(chan net.Conn, 1)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					select {
					case conns <- c: // the first: rank a's point-to-point connection
					default:
						c.Close() // an extended ABORT connection: not what is read here
					}
				}
			}()
			sent := make(chan error, 1)
			go func() {
				buf := make([]byte, size)
				for i := 1; ; i++ {
					for k := range buf {
						buf[k] = byte(i)
					}
					if err := eps[a].Send(b, buf); err != nil {
						sent <- err
						return
					}
				}
			}()
			var c net.Conn
			select {
			case c = <-conns:
			case <-time.After(10 * time.Second):
				t.Fatal("rank 0 never connected")
			}
			defer c.Close()
			frames := make(chan int, 1)
			read := make(chan error, 1)
			var whole int
			go func() {
				var err error
				whole, err = slowPeer(c, extended, size, frames)
				read <- err
			}()
			// Fail rank a once two frames came whole: its sender is then
			// blocked mid-frame behind the slow reader.
			for got := 0; got < 2; {
				select {
				case got = <-frames:
				case err := <-read:
					t.Fatalf("before the abort: %v", err)
				}
			}
			_ = eps[a].fail(&ringFault{phase: abi.BootstrapPhasePeer, step: -1, dead: -1, self: true, err: errors.New(plantedText)})
			eps[a].Close()
			if err := <-read; err != nil {
				t.Fatalf("rank %d's peer read a torn frame: %v", a, err)
			}
			if err := <-sent; err == nil {
				t.Fatal("the send after the abort succeeded")
			}
			t.Logf("%d whole frames, then the whole abort, then the end", whole)
		})
	}
}
