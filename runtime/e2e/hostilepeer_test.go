package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/hostile"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// Hostile peers against the reference libnccom
// (docs/libnccom.md#deadlines-and-what-peers-send): real C processes
// (nccompeer.c, linked against the reference libnccom) face a Go fake peer
// over loopback that drips bytes, connects as a stranger, forges log lines
// or claims ranks it is not. Every blocking operation of the C library has a
// total deadline of NEURON_CCOM_SOCK_TIMEOUT, so each process ends within
// hostileTimeout + 2 s of the hostile peer's start, naming its address.

// hostileTimeout is NEURON_CCOM_SOCK_TIMEOUT here, in seconds.
const hostileTimeout = 2

// hostileBound is how long a C process may take once a hostile peer
// started: the timeout and 2 s of slack.
const hostileBound = (hostileTimeout + 2) * time.Second

// hostileCap kills what is still running well past the bound, so that a
// library which restarts its timeout on progress fails the test instead of
// hanging it.
const hostileCap = hostileBound + 8*time.Second

var (
	peerOnce sync.Once
	peerErr  error
	// hostileSan runs the C processes on the ASan/UBSan build of the
	// reference libnccom (TestCHostilePeersUnderSanitizers, or every hostile
	// test with NRTABI_E2E_SANITIZE=1 in the environment).
	hostileSan = os.Getenv("NRTABI_E2E_SANITIZE") == "1"
)

func peerHostPath() string { return filepath.Join(buildRoot, "bin", "nccompeer") }

func requirePeerHost(t *testing.T) {
	t.Helper()
	requireWorld(t)
	peerOnce.Do(func() {
		src := filepath.Join(tree.Root, "runtime", "e2e", "testdata", "common", "nccompeer.c")
		peerErr = tree.BuildProgram(t.Context(), peerHostPath(), []string{src},
			"-L"+refLibDir("ref"), "-l:"+builder.LibnccomFile, "-L"+libnrtDir(), "-l:"+builder.LibnrtFile)
	})
	if peerErr != nil {
		t.Fatal(peerErr)
	}
}

// syncBuffer is a bytes.Buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cRank is one nccompeer process.
type cRank struct {
	cmd    *exec.Cmd
	lines  chan string // its stdout, line by line
	stderr syncBuffer
	done   chan struct{}
	err    error
	ended  time.Time
}

// startRank runs nccompeer RANK NRANKS ROOT MODE ARG, killed at hostileCap.
func startRank(t *testing.T, rank, nranks int, root, mode string, arg int, extraEnv ...string) *cRank {
	t.Helper()
	lib := []string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir("ref")}
	if hostileSan {
		pre, err := builder.SanitizerRuntime(t.Context())
		if err != nil {
			t.Skipf("no sanitizer runtime to preload: %v", err)
		}
		lib = []string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir("asan"), "LD_PRELOAD=" + pre,
			"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), hostileCap)
	cmd := proc.Command(ctx, peerHostPath(), strconv.Itoa(rank), strconv.Itoa(nranks), root, mode, strconv.Itoa(arg))
	cmd.Env = append(append(append(os.Environ(), lib...),
		abi.EnvSockTimeout+"="+strconv.Itoa(hostileTimeout), "NRTABI_LOG_LEVEL=warn"), extraEnv...)
	c := &cRank{cmd: cmd, lines: make(chan string, 16), done: make(chan struct{})}
	cmd.Stderr = &c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			c.lines <- s.Text()
		}
		close(c.lines)
	}()
	go func() {
		c.err = proc.Err(ctx, cmd.Wait())
		c.ended = time.Now()
		cancel()
		close(c.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}

// listenAddr waits for the "listen ADDR" line of a rank that formed its world.
func (c *cRank) listenAddr(t *testing.T) string {
	t.Helper()
	for l := range c.lines {
		if a, ok := strings.CutPrefix(l, "listen "); ok {
			return a
		}
	}
	<-c.done
	t.Fatalf("the rank printed no listen address: %v\n%s", c.err, c.stderr.String())
	return ""
}

// wait returns how long after start the process ended; a process still
// running at hostileCap was killed and fails the test.
func (c *cRank) wait(t *testing.T, start time.Time) time.Duration {
	t.Helper()
	<-c.done
	took := c.ended.Sub(start)
	if testing.Verbose() {
		t.Logf("its log:\n%s", c.stderr.String())
	}
	if c.err == nil {
		t.Errorf("the rank exited 0 facing a hostile peer\n%s", c.stderr.String())
	}
	if log := c.stderr.String(); strings.Contains(log, "Sanitizer") || strings.Contains(log, "runtime error") {
		t.Errorf("a sanitizer spoke:\n%s", log)
	}
	if took > hostileBound {
		t.Errorf("the rank ended %s after the hostile peer started, more than %s with %s=%d (%v)\n%s",
			took.Round(time.Millisecond), hostileBound, abi.EnvSockTimeout, hostileTimeout, c.err, c.stderr.String())
	}
	return took
}

// dialRetry connects to addr, retrying while nobody listens yet.
func dialRetry(t *testing.T, addr string) net.Conn {
	t.Helper()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		if i == 500 {
			t.Fatalf("dial %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// drip writes b one byte per second until it is written, the connection
// breaks or stop closes.
func drip(c net.Conn, b []byte, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := range b {
		if _, err := c.Write(b[i : i+1]); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

func le32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

// frame is the default framing: an int size, then the bytes.
func frame(b []byte) []byte { return append(le32(int32(len(b))), b...) }

// extMsg is the extended framing: {u32 type, u32 length}, then the bytes.
func extMsg(typ uint32, b []byte) []byte {
	h := make([]byte, abi.BootstrapMsgHeaderSize)
	v := abi.BootstrapMsgHeader{Type: typ, Length: uint32(len(b))}
	v.MarshalTo(h)
	return append(h, b...)
}

// record is an INFO_TO_ROOT extInfoGlobal claiming rank of nranks.
func record(rank, nranks int32, nccom, nrt string) []byte {
	r := abi.ExtInfoGlobal{Info: abi.ExtInfo{Sanity: abi.BootstrapSanity, Rank: rank, Nranks: nranks,
		ExtAddressListen: abi.NcclSocketAddress{Family: 2, Port: 0x0100, Addr: [16]byte{127, 0, 0, 1}}}}
	copy(r.NcclNRTGitHash.Nccom[:], nccom)
	copy(r.NcclNRTGitHash.NRT[:], nrt)
	b := make([]byte, abi.SizeofExtInfoGlobal)
	r.MarshalTo(b)
	return b
}

func hello(rank, nranks int32, channel uint32) []byte {
	b := make([]byte, abi.SizeofBootstrapPeerHello)
	v := abi.BootstrapPeerHello{Sanity: abi.BootstrapSanity, Rank: rank, Nranks: nranks, Channel: channel}
	v.MarshalTo(b)
	return extMsg(abi.BootstrapMsgHello, b)
}

// noForgery holds a log to escaped peer bytes: no raw control byte, and
// no line begins with text a peer sent after a newline.
func noForgery(t *testing.T, log string, forged ...string) {
	t.Helper()
	if i, bad := hostile.RawControl(log); bad {
		t.Errorf("the log carries a raw control byte %#x at %d:\n%q", log[i], i, log)
	}
	for _, l := range strings.Split(log, "\n") {
		for _, f := range forged {
			if strings.HasPrefix(l, f) {
				t.Errorf("a peer forged the log line %q", l)
			}
		}
	}
}

// TestCRootDrip: a peer sends its INFO_TO_ROOT one byte per second to the
// C root (rank 0's process, NEURON_CCOM_SOCK_TIMEOUT=2), in either framing:
// the root gives up within the timeout, naming the peer's address, and rank
// 0's process ends.
func TestCRootDrip(t *testing.T) {
	requirePeerHost(t)
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", ext), func(t *testing.T) {
			root, err := worldprog.FreeLoopbackRoot()
			if err != nil {
				t.Fatal(err)
			}
			var env []string
			msg := frame(record(1, 2, abi.LibnccomGit, tcp.ReleaseNRTGit()))
			if ext {
				env = append(env, "NRTABI_BOOTSTRAP_FRAMING=extended")
				msg = extMsg(abi.BootstrapMsgInfoToRoot, record(1, 2, abi.LibnccomGit, tcp.ReleaseNRTGit()))
			}
			r0 := startRank(t, 0, 2, root, "idle", 0, env...)
			c := dialRetry(t, root)
			defer c.Close()
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go drip(c, msg, stop)
			took := r0.wait(t, start)
			t.Logf("rank 0 (the C root) ended %s after the drip started", took.Round(time.Millisecond))
			if me := c.LocalAddr().String(); !strings.Contains(r0.stderr.String(), me) {
				t.Errorf("the root's log does not name the dripping peer %s:\n%s", me, r0.stderr.String())
			}
		})
	}
}

// TestCRankFakeRootDrip: a fake root reads a C rank's INFO_TO_ROOT and
// drips INFO_FROM_ROOT one byte per second, in either framing: the rank
// gives up within the timeout, naming the root's address.
func TestCRankFakeRootDrip(t *testing.T) {
	requirePeerHost(t)
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", ext), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			var env []string
			reply := frame(make([]byte, abi.SizeofBootstrapRootReply))
			if ext {
				env = append(env, "NRTABI_BOOTSTRAP_FRAMING=extended")
				reply = extMsg(abi.BootstrapMsgInfoFromRoot, make([]byte, abi.SizeofBootstrapRootReply))
			}
			r1 := startRank(t, 1, 2, ln.Addr().String(), "idle", 0, env...)
			c, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The rank's whole record arrives before the drip starts.
			if _, err := io.ReadFull(c, make([]byte, len(frame(record(1, 2, "", ""))))); err != nil {
				t.Fatalf("reading the rank's INFO_TO_ROOT: %v\n%s", err, r1.stderr.String())
			}
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go drip(c, reply, stop)
			took := r1.wait(t, start)
			t.Logf("the C rank ended %s after the fake root's drip started", took.Round(time.Millisecond))
			if !strings.Contains(r1.stderr.String(), ln.Addr().String()) {
				t.Errorf("the rank's log does not name the root %s:\n%s", ln.Addr(), r1.stderr.String())
			}
		})
	}
}

// strangers connects to addr once a second until stop closes, each time
// sending what hostile returns and reading until the C side hangs up; it
// returns the local addresses it used.
func strangers(addr string, stop <-chan struct{}, msg []byte) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		var used []string
		defer func() { out <- used }()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if c, err := net.Dial("tcp", addr); err == nil {
				used = append(used, c.LocalAddr().String())
				_, _ = c.Write(msg)
				_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				_, _ = io.Copy(io.Discard, c)
				c.Close()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestCP2PStrangers: while a C rank waits in neuronBootstrapRecv for a peer
// that never sends, a stranger connects once a second naming a rank the
// world does not have: each is refused, naming its address, and the
// receive ends within the timeout instead of accepting forever.
func TestCP2PStrangers(t *testing.T) {
	requirePeerHost(t)
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("extended=%v", ext), func(t *testing.T) {
			root, err := worldprog.FreeLoopbackRoot()
			if err != nil {
				t.Fatal(err)
			}
			var env []string
			msg := append(frame(le32(7)), frame(le32(0))...)
			if ext {
				env = append(env, "NRTABI_BOOTSTRAP_FRAMING=extended")
				msg = hello(7, 2, abi.BootstrapChannelPeer)
			}
			r1 := startRank(t, 1, 2, root, "idle", 30, env...)
			r0 := startRank(t, 0, 2, root, "recv", 1, env...)
			addr := r0.listenAddr(t)
			start := time.Now()
			stop := make(chan struct{})
			used := strangers(addr, stop, msg)
			took := r0.wait(t, start)
			close(stop)
			from := <-used
			t.Logf("the receiving C rank ended %s after the first of %d strangers", took.Round(time.Millisecond), len(from))
			log := r0.stderr.String()
			if len(from) == 0 || !strings.Contains(log, from[0]) {
				t.Errorf("the log does not name the stranger %v:\n%s", from, log)
			}
			if !strings.Contains(log, "out of range") {
				t.Errorf("the log does not call rank 7 of 2 out of range:\n%s", log)
			}
			_ = r1
		})
	}
}

// TestCPeerBytesEscaped: a peer's git hash (default framing, to the C root)
// and its ABORT text (extended framing, on a point-to-point connection)
// carry ESC, BEL and newlines; the C process's log carries them escaped.
func TestCPeerBytesEscaped(t *testing.T) {
	requirePeerHost(t)
	t.Run("git hash", func(t *testing.T) {
		root, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			t.Fatal(err)
		}
		r0 := startRank(t, 0, 2, root, "idle", 0)
		c := dialRetry(t, root)
		defer c.Close()
		if _, err := c.Write(frame(record(1, 2, hostile.PeerGitHash[0], hostile.PeerGitHash[1]))); err != nil {
			t.Fatal(err)
		}
		r0.wait(t, time.Now())
		log := r0.stderr.String()
		noForgery(t, log, hostile.PeerGitHashForged...)
		if !strings.Contains(log, `\x0aFORGE\x1b\x07`) {
			t.Errorf("the root's log does not show the git hash escaped:\n%s", log)
		}
	})
	t.Run("abort text", func(t *testing.T) {
		root, err := worldprog.FreeLoopbackRoot()
		if err != nil {
			t.Fatal(err)
		}
		ext := "NRTABI_BOOTSTRAP_FRAMING=extended"
		startRank(t, 1, 2, root, "idle", 30, ext)
		r0 := startRank(t, 0, 2, root, "recv", 1, ext)
		addr := r0.listenAddr(t)
		c := dialRetry(t, addr)
		defer c.Close()
		if _, err := c.Write(append(hello(1, 2, abi.BootstrapChannelAbort), extMsg(abi.BootstrapMsgAbort, []byte(hostile.PeerAbortText))...)); err != nil {
			t.Fatal(err)
		}
		r0.wait(t, time.Now())
		log := r0.stderr.String()
		noForgery(t, log, hostile.ForgedLine, "\x1b")
		if !strings.Contains(log, `evil\x0a\x1b[31mlibnccom 1 NCCL WARN forged\x07\x0d`) {
			t.Errorf("the rank's log does not show the ABORT text escaped:\n%s", log)
		}
	})
}

// TestCAbortBlame: ABORTs on point-to-point connections claim ranks 7 and
// -1 of a world of 2 (refused as out of range, naming the address) and then
// rank 1 (honoured, blamed on "rank 1 (claimed by ADDR)").
func TestCAbortBlame(t *testing.T) {
	requirePeerHost(t)
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	ext := "NRTABI_BOOTSTRAP_FRAMING=extended"
	startRank(t, 1, 2, root, "idle", 30, ext)
	r0 := startRank(t, 0, 2, root, "recv", 1, ext)
	addr := r0.listenAddr(t)
	start := time.Now()
	var from []string
	for _, rank := range []int32{7, -1, 1} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Errorf("the rank stopped listening before the ABORT claiming rank %d: %v", rank, err)
			break
		}
		from = append(from, c.LocalAddr().String())
		_, _ = c.Write(append(hello(rank, 2, abi.BootstrapChannelAbort), extMsg(abi.BootstrapMsgAbort, []byte("stop"))...))
		_ = c.SetReadDeadline(time.Now().Add(hostileBound))
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
	r0.wait(t, start)
	log := r0.stderr.String()
	if len(from) < 3 {
		t.Fatalf("the log:\n%s", log)
	}
	for i, rank := range []int{7, -1} {
		if !strings.Contains(log, fmt.Sprintf("%s claiming rank %d of 2: out of range", from[i], rank)) {
			t.Errorf("the log does not refuse rank %d from %s as out of range:\n%s", rank, from[i], log)
		}
	}
	if want := "aborted by rank 1 (claimed by " + from[2] + "): stop"; !strings.Contains(log, want) {
		t.Errorf("the log does not hold %q:\n%s", want, log)
	}
}

// TestCRootOutOfRange: a record claiming rank 7, or -1, of a world of 3 is
// reported by the C root as out of range, naming the peer, not as a rank
// that "has already checked in".
func TestCRootOutOfRange(t *testing.T) {
	requirePeerHost(t)
	for _, rank := range []int32{7, -1} {
		t.Run(strconv.Itoa(int(rank)), func(t *testing.T) {
			root, err := worldprog.FreeLoopbackRoot()
			if err != nil {
				t.Fatal(err)
			}
			r0 := startRank(t, 0, 3, root, "idle", 0)
			c := dialRetry(t, root)
			defer c.Close()
			if _, err := c.Write(frame(record(rank, 3, abi.LibnccomGit, tcp.ReleaseNRTGit()))); err != nil {
				t.Fatal(err)
			}
			r0.wait(t, time.Now())
			log := r0.stderr.String()
			want := fmt.Sprintf("peer %s claims rank %d of 3: out of range 0..2", c.LocalAddr(), rank)
			if !strings.Contains(log, want) || strings.Contains(log, "has already checked in") {
				t.Errorf("the root's log does not hold %q (or says \"has already checked in\"):\n%s", want, log)
			}
		})
	}
}

// TestCRankFakeRootHeartbeats: a fake root in the extended framing answers
// a C rank's INFO_TO_ROOT with ROOT_WAIT heartbeats whose count never moves,
// twice a second, forever: each heartbeat is a whole message, but the rank
// waits for no more than three times the timeout in all.
func TestCRankFakeRootHeartbeats(t *testing.T) {
	requirePeerHost(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r1 := startRank(t, 1, 2, ln.Addr().String(), "idle", 0, "NRTABI_BOOTSTRAP_FRAMING=extended")
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(extMsg(abi.BootstrapMsgInfoToRoot, record(1, 2, "", ""))))); err != nil {
		t.Fatalf("reading the rank's INFO_TO_ROOT: %v\n%s", err, r1.stderr.String())
	}
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go sendRootWaits(c, 500*time.Millisecond, 2, func(int) uint32 { return 1 }, stop)
	<-r1.done
	took := r1.ended.Sub(start)
	t.Logf("the C rank ended %s after the fake root's first heartbeat", took.Round(time.Millisecond))
	if log := r1.stderr.String(); strings.Contains(log, "Sanitizer") || strings.Contains(log, "runtime error") {
		t.Errorf("a sanitizer spoke:\n%s", log)
	}
	if limit := (3*hostileTimeout + 2) * time.Second; took > limit || r1.err == nil {
		t.Errorf("the rank ended %s after the heartbeats started (%v), want a failure within %s\n%s", took, r1.err, limit, r1.stderr.String())
	}
	if want := "and no INFO_FROM_ROOT for 6 s"; !strings.Contains(r1.stderr.String(), want) {
		t.Errorf("the rank's log lacks %q:\n%s", want, r1.stderr.String())
	}
}

// TestCHostilePeersUnderSanitizers runs the quick hostile-peer tests (the
// escaping, the blame, the strangers and out-of-range ranks) on the
// ASan/UBSan build of the reference libnccom: no memory error and no
// undefined behaviour on those paths.
func TestCHostilePeersUnderSanitizers(t *testing.T) {
	if hostileSan {
		t.Skip("every hostile test already runs under the sanitizers")
	}
	hostileSan = true
	defer func() { hostileSan = false }()
	t.Run("escaped", TestCPeerBytesEscaped)
	t.Run("blame", TestCAbortBlame)
	t.Run("out of range", TestCRootOutOfRange)
}
