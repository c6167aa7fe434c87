package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// sendRootWaits plays a fake root's heartbeats: ROOT_WAIT messages in the
// extended framing on c, every apart, the i-th saying have(i) of nranks
// have arrived, until a write fails or stop closes.
func sendRootWaits(c net.Conn, every time.Duration, nranks uint32, have func(i int) uint32, stop <-chan struct{}) {
	w := make([]byte, abi.SizeofBootstrapRootWait)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; ; i++ {
		v := abi.BootstrapRootWait{Have: have(i), Nranks: nranks}
		v.MarshalTo(w)
		if _, err := c.Write(extMsg(abi.BootstrapMsgRootWait, w)); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// acceptRank takes the C rank r's connection on l, bounded at hostileCap;
// a rank that never connects fails the test with its log.
func acceptRank(t *testing.T, l net.Listener, r *cRank) net.Conn {
	t.Helper()
	c, err := l.Accept()
	if err != nil {
		<-r.done
		t.Fatalf("the rank did not connect: %v (%v)\n%s", err, r.err, r.stderr.String())
	}
	_ = c.SetDeadline(time.Now().Add(hostileCap))
	return c
}

// readRankMsg reads one extended-framing message from the C rank r on c
// (its payload capped at 4096 bytes) and returns its type and payload.
func readRankMsg(t *testing.T, c net.Conn, r *cRank) (uint32, []byte) {
	t.Helper()
	h := make([]byte, abi.BootstrapMsgHeaderSize)
	if _, err := io.ReadFull(c, h); err != nil {
		t.Fatalf("reading the rank: %v\n%s", err, r.stderr.String())
	}
	p := make([]byte, min(binary.LittleEndian.Uint32(h[4:]), 4096))
	if _, err := io.ReadFull(c, p); err != nil {
		t.Fatalf("reading the rank: %v\n%s", err, r.stderr.String())
	}
	return binary.LittleEndian.Uint32(h), p
}

// wantHeartbeatsRefused checks how the C rank r ended once heartbeats
// started at start in place of the message due: a failure within three
// timeouts, its log naming the wait heartbeats do not extend, no
// sanitizer report.
func wantHeartbeatsRefused(t *testing.T, r *cRank, start time.Time, due string) {
	t.Helper()
	<-r.done
	took := r.ended.Sub(start)
	log := r.stderr.String()
	if strings.Contains(log, "Sanitizer") || strings.Contains(log, "runtime error") {
		t.Errorf("a sanitizer spoke:\n%s", log)
	}
	if limit := (3*hostileTimeout + 2) * time.Second; took > limit || r.err == nil {
		t.Errorf("the rank ended %s after the heartbeats started (%v), want a failure within %s\n%s", took.Round(time.Millisecond), r.err, limit, log)
	}
	if want := "and no " + due + " for 6 s: heartbeats do not extend the wait"; !strings.Contains(log, want) {
		t.Errorf("the rank's log lacks %q:\n%s", want, log)
	}
}
