package nettest_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/proc"
	"github.com/nrtabi/nrtabi/runtime/builder"
)

// stack is one build of the pieces: the C libnrt double, the reference
// libnccom, the host, and every double variant.
type stack struct {
	nrt, nccom, host string
	doubles          map[string]string
}

var (
	buildOnce sync.Once
	built     [2]*stack // plain, sanitized
	buildErr  [2]error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func build(ctx context.Context, tr *builder.Tree, dir string, sanitize bool) (*stack, error) {
	s := &stack{doubles: map[string]string{}}
	var err error
	if s.nrt, err = tr.BuildLibnrtDouble(ctx, filepath.Join(dir, "nrt")); err != nil {
		return nil, err
	}
	nrtDir := filepath.Dir(s.nrt)
	if s.nccom, err = tr.BuildLibnccom(ctx, nrtDir, filepath.Join(dir, "nccom"), builder.Libnccom{Sanitize: sanitize}); err != nil {
		return nil, err
	}
	for _, d := range builder.NetDoubles() {
		if sanitize && d.Name != builder.NetDoubleGood {
			continue
		}
		p, err := tr.BuildNetDouble(ctx, filepath.Join(dir, "doubles"), d, sanitize)
		if err != nil {
			return nil, fmt.Errorf("double %s: %w", d.Name, err)
		}
		s.doubles[d.Name] = p
	}
	s.host = filepath.Join(dir, "nethost")
	flags := []string{"-L" + filepath.Dir(s.nccom), "-l:" + builder.LibnccomFile, "-L" + nrtDir, "-l:" + builder.LibnrtFile, "-ldl"}
	if sanitize {
		flags = append(flags, "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
	}
	return s, tr.BuildProgram(ctx, s.host, []string{tr.NetHostSource()}, flags...)
}

// stacks builds both once per test binary.
func stacks(t *testing.T, sanitize bool) *stack {
	t.Helper()
	buildOnce.Do(func() {
		tr, err := builder.Open(abi.Release)
		if err != nil {
			buildErr[0], buildErr[1] = err, err
			return
		}
		if buildDir, err = os.MkdirTemp("", "nrtabi-netplugin-"); err != nil {
			buildErr[0], buildErr[1] = err, err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		// The two stacks build side by side (one compiler each).
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := builder.SanitizerRuntime(ctx); err != nil {
				buildErr[1] = err
				return
			}
			built[1], buildErr[1] = build(ctx, tr, filepath.Join(buildDir, "asan"), true)
		}()
		built[0], buildErr[0] = build(ctx, tr, filepath.Join(buildDir, "plain"), false)
		wg.Wait()
	})
	i := 0
	if sanitize {
		i = 1
	}
	if buildErr[i] != nil {
		if sanitize {
			t.Skipf("no sanitizer build: %v", buildErr[i])
		}
		t.Fatal(buildErr[i])
	}
	return built[i]
}

// run is one host process's outcome.
type run struct {
	out, stderr string
	code        int
	took        time.Duration
}

// warns are the WARN lines of its stderr.
func (r run) warns() []string {
	var w []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "NCCL WARN") {
			w = append(w, l)
		}
	}
	return w
}

func (r run) field(key string) string {
	for _, l := range strings.Split(r.out, "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			return v
		}
	}
	return ""
}

func (s *stack) start(ctx context.Context, plugin string, env []string, args ...string) (*procRun, error) {
	cmd := proc.Command(ctx, s.host, args...)
	cmd.Env = append(os.Environ(),
		"LD_LIBRARY_PATH="+filepath.Dir(s.nccom)+":"+filepath.Dir(s.nrt),
		"NRTABI_NET_PLUGIN="+plugin,
		"NEURON_CCOM_SOCK_TIMEOUT=10",
		"ASAN_OPTIONS=detect_leaks=1:abort_on_error=1",
	)
	cmd.Env = append(cmd.Env, env...)
	p := &procRun{started: time.Now()}
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.out = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.cmd = cmd
	return p, nil
}

type procRun struct {
	cmd     interface{ Wait() error }
	out     *bufio.Reader
	stdout  bytes.Buffer
	stderr  bytes.Buffer
	started time.Time
}

// line reads stdout up to the first line starting with key.
func (p *procRun) line(key string) (string, error) {
	for {
		l, err := p.out.ReadString('\n')
		p.stdout.WriteString(l)
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+" "); ok {
			return v, nil
		}
		if err != nil {
			return "", fmt.Errorf("no %q line: %v (stdout %q)", key, err, p.stdout.String())
		}
	}
}

func (p *procRun) wait() run {
	rest, _ := p.out.ReadString(0)
	p.stdout.WriteString(rest)
	err := p.cmd.Wait()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			code = ee.ExitCode()
		}
	}
	return run{out: p.stdout.String(), stderr: p.stderr.String(), code: code, took: time.Since(p.started)}
}

// pair runs a receiver and a sender of size bytes through plugin.
func pair(t *testing.T, s *stack, plugin string, size int, senderEnv ...string) (recv, send run) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r, err := s.start(ctx, plugin, nil, "recv", fmt.Sprint(size))
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.line("handle")
	if err != nil {
		rr := r.wait()
		return rr, run{code: -1, stderr: "no sender: " + err.Error()}
	}
	sp, err := s.start(ctx, plugin, senderEnv, "send", fmt.Sprint(size), h)
	if err != nil {
		t.Fatal(err)
	}
	send = sp.wait()
	recv = r.wait()
	return recv, send
}

// world runs n ranks of a global comm on loopback; env[i] is rank i's extra.
func world(t *testing.T, s *stack, plugin string, n, size int, env map[int][]string) []run {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	root := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	ps := make([]*procRun, n)
	for r := range n {
		if ps[r], err = s.start(ctx, plugin, env[r], "world", fmt.Sprint(r), fmt.Sprint(n), root, fmt.Sprint(size)); err != nil {
			t.Fatal(err)
		}
	}
	runs := make([]run, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() { defer wg.Done(); runs[r] = ps[r].wait() }()
	}
	wg.Wait()
	return runs
}

func ok(t *testing.T, who string, r run) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s exited %d\nstdout:\n%s\nstderr:\n%s", who, r.code, r.out, r.stderr)
	}
	if w := r.warns(); len(w) != 0 {
		t.Errorf("%s: WARN lines on a good run: %q", who, w)
	}
	if r.field("live_mrs") != "0" {
		t.Errorf("%s: live_mrs %q after the run, want 0 (a registration left behind)", who, r.field("live_mrs"))
	}
}

// The 1:1 entry points, listen to close, move 64 MiB between two processes,
// every byte checked by the receiver, through the newest table.
func TestPairMovesBytes(t *testing.T) {
	s := stacks(t, false)
	const size = 64 << 20
	recv, send := pair(t, s, s.doubles[builder.NetDoubleGood], size)
	ok(t, "sender", send)
	ok(t, "receiver", recv)
	for who, r := range map[string]run{"sender": send, "receiver": recv} {
		if got := r.field("moved"); got != fmt.Sprint(size) {
			t.Errorf("%s moved %q bytes, want %d", who, got, size)
		}
		if got := r.field("table"); got != "v6" {
			t.Errorf("%s used table %q, want v6 (the newest the double exports)", who, got)
		}
		if r.field("mrkey") == "none" {
			t.Errorf("%s: no getMrKey through a v6 table", who)
		}
	}
	t.Logf("64 MiB in %v (receiver's whole run)", recv.took.Round(time.Millisecond))
}

// Upstream's rule: the newest table the plugin exports that the library
// understands; an older one when that is all there is.
func TestTableChoice(t *testing.T) {
	s := stacks(t, false)
	for _, c := range []struct{ double, table, mrkey string }{
		{builder.NetDoubleV5Only, "v5", ""},
		{builder.NetDoubleV4Only, "v4", "none"},
	} {
		t.Run(c.double, func(t *testing.T) {
			recv, send := pair(t, s, s.doubles[c.double], 4<<20)
			if send.code != 0 || recv.code != 0 {
				t.Fatalf("exit %d/%d\n%s\n%s\n%s\n%s", send.code, recv.code, send.out, send.stderr, recv.out, recv.stderr)
			}
			if got := recv.field("table"); got != c.table {
				t.Errorf("table %q, want %s", got, c.table)
			}
			if c.mrkey == "none" && recv.field("mrkey") != "none" {
				t.Errorf("a v4 table gave an MR key %q", recv.field("mrkey"))
			}
			if recv.field("moved") != fmt.Sprint(4<<20) {
				t.Errorf("moved %q", recv.field("moved"))
			}
		})
	}
}

// A world's ring and mesh connectors, registration by pattern and peer, and
// one proxy op list per rank: every byte checked, both completion
// semaphores bumped once per op, nothing registered left.
func TestWorld(t *testing.T) {
	s := stacks(t, false)
	for _, c := range []struct{ n, size int }{{2, 64 << 20}, {4, 8 << 20}} {
		t.Run(fmt.Sprintf("%d-ranks", c.n), func(t *testing.T) {
			runs := world(t, s, s.doubles[builder.NetDoubleGood], c.n, c.size, nil)
			want := c.size + (c.n-1)*(c.size/4)
			for r, run := range runs {
				ok(t, fmt.Sprintf("rank %d", r), run)
				if got := run.field("moved"); got != fmt.Sprint(want) {
					t.Errorf("rank %d received %q bytes, want %d", r, got, want)
				}
			}
			t.Logf("%d ranks, %d bytes received per rank through the proxy, %v", c.n, want, runs[0].took.Round(time.Millisecond))
		})
	}
}

// oneLine holds a failed run to one WARN line naming the plugin's path and
// every one of want.
func oneLine(t *testing.T, who string, r run, plugin string, want ...string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("%s exited 0 on a fault\n%s", who, r.out)
	}
	w := r.warns()
	if len(w) != 1 {
		t.Fatalf("%s: %d WARN lines, want one:\n%s", who, len(w), r.stderr)
	}
	t.Logf("%s: %s", who, w[0])
	for _, s := range append([]string{plugin}, want...) {
		if !strings.Contains(w[0], s) {
			t.Errorf("%s: the line does not name %q: %s", who, s, w[0])
		}
	}
}

func TestFaults(t *testing.T) {
	s := stacks(t, false)
	t.Run("no-table", func(t *testing.T) {
		p := s.doubles[builder.NetDoubleNoTables]
		recv, _ := pair(t, s, p, 1<<20)
		oneLine(t, "receiver", recv, p, "no usable table", "ncclNetPlugin_v6 absent", "ncclNetPlugin_v4 absent")
	})
	t.Run("null-member", func(t *testing.T) {
		p := s.doubles[builder.NetDoubleNullIsend]
		recv, _ := pair(t, s, p, 1<<20)
		oneLine(t, "receiver", recv, p, "ncclNetPlugin_v6 has a NULL isend member", "ncclNetPlugin_v4 has a NULL isend member")
	})
	t.Run("error-mid-transfer", func(t *testing.T) {
		p := s.doubles[builder.NetDoubleFailMidway]
		for r, run := range world(t, s, p, 2, 8<<20, nil) {
			who := fmt.Sprintf("rank %d", r)
			oneLine(t, who, run, p, "returned", fmt.Sprintf("rank %d", 1-r))
			if run.field("live_mrs") != "0" {
				t.Errorf("%s: live_mrs %q after the failure, want 0", who, run.field("live_mrs"))
			}
		}
	})
	t.Run("peer-vanishes", func(t *testing.T) {
		p := s.doubles[builder.NetDoubleGood]
		runs := world(t, s, p, 2, 64<<20, map[int][]string{1: {"NETHOST_VANISH=1"}})
		if runs[1].code != 3 {
			t.Fatalf("rank 1 did not vanish mid-transfer (exit %d)\n%s\n%s", runs[1].code, runs[1].out, runs[1].stderr)
		}
		oneLine(t, "rank 0", runs[0], p, "rank 1")
		if runs[0].field("live_mrs") != "0" {
			t.Errorf("rank 0: live_mrs %q after the peer vanished, want 0", runs[0].field("live_mrs"))
		}
		if runs[0].took > 30*time.Second {
			t.Errorf("rank 0 took %v to notice", runs[0].took)
		}
	})
}

// The whole C path once under AddressSanitizer and UBSan: a 2-rank world.
func TestSanitized(t *testing.T) {
	s := stacks(t, true)
	for r, run := range world(t, s, s.doubles[builder.NetDoubleGood], 2, 8<<20, nil) {
		ok(t, fmt.Sprintf("rank %d", r), run)
		if strings.Contains(run.stderr, "Sanitizer") {
			t.Errorf("rank %d: a sanitizer report:\n%s", r, run.stderr)
		}
	}
}

// NIC preference over the double's one device, its missing PCI address
// refused by name, affinity pinned and restored, and a second fini refused.
func TestNICAndAffinity(t *testing.T) {
	s := stacks(t, false)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p, err := s.start(ctx, s.doubles[builder.NetDoubleGood], nil, "misc")
	if err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	if r.code != 0 {
		t.Fatalf("misc exited %d\n%s\n%s", r.code, r.out, r.stderr)
	}
	if r.field("nic") != "0" {
		t.Errorf("nic %q, want 0 ((3 + 5) mod 1 device)", r.field("nic"))
	}
	if r.field("bdf") != fmt.Sprint(int(abi.NRTFailure)) {
		t.Errorf("bdf status %q, want NRT_FAILURE: the double's device has no PCI address", r.field("bdf"))
	}
	if !strings.HasPrefix(r.field("pinned"), "1 of ") {
		t.Errorf("pinned %q, want one CPU", r.field("pinned"))
	}
	if r.field("restored") != "1" {
		t.Errorf("restored %q: the saved affinity did not come back", r.field("restored"))
	}
	if r.field("fini-again") != fmt.Sprint(int(abi.NRTInvalid)) {
		t.Errorf("a second fini: status %q, want NRT_INVALID", r.field("fini-again"))
	}
	w := r.warns()
	if len(w) != 2 || !strings.Contains(w[0], "has no PCI address") || !strings.Contains(w[1], "no net plugin is loaded") {
		t.Errorf("WARN lines %q, want the missing PCI address and the second fini", w)
	}
}

// Start refuses a list that does not end in EXEC_COMPLETE, names an op it
// does not have, a rank without a connector, a stream the comm has not or
// a registration of another connector, each in one line; the good list
// then runs.
func TestProxyRefusesBadLists(t *testing.T) {
	s := stacks(t, false)
	runs := world(t, s, s.doubles[builder.NetDoubleGood], 2, 1<<20, map[int][]string{0: {"NETHOST_BADFIFO=1"}, 1: {"NETHOST_BADFIFO=1"}})
	invalid := fmt.Sprint(int(abi.NRTInvalid))
	for r, run := range runs {
		if run.code != 0 {
			t.Fatalf("rank %d exited %d\n%s\n%s", r, run.code, run.out, run.stderr)
		}
		for _, k := range []string{"end", "op", "peer", "stream", "mhandle"} {
			if got := run.field("badfifo " + k); got != invalid {
				t.Errorf("rank %d: bad list (%s): status %q, want NRT_INVALID", r, k, got)
			}
		}
		w := strings.Join(run.warns(), "\n")
		for _, want := range []string{"does not end in EXEC_COMPLETE", "net_op_idx 9 is not one of the 2 ops", "no connector to rank 7", "stream 3 is not one of", "is no registration of the connector send to rank"} {
			if !strings.Contains(w, want) {
				t.Errorf("rank %d: no line says %q:\n%s", r, want, w)
			}
		}
		if len(run.warns()) != 5 {
			t.Errorf("rank %d: %d WARN lines, want 5", r, len(run.warns()))
		}
	}
}

// A comm closed with its registration left releases it first (one line
// says so), and a pointer that is no registration is refused.
func TestCloseReleasesRegistrations(t *testing.T) {
	s := stacks(t, false)
	recv, send := pair(t, s, s.doubles[builder.NetDoubleGood], 1<<20, "NETHOST_LEAVE_MR=1")
	if send.code != 0 || recv.code != 0 {
		t.Fatalf("exit %d/%d\n%s\n%s\n%s\n%s", send.code, recv.code, send.out, send.stderr, recv.out, recv.stderr)
	}
	if send.field("dereg-foreign") != fmt.Sprint(int(abi.NRTInvalid)) {
		t.Errorf("deregistering a buffer that is no registration: status %q, want NRT_INVALID", send.field("dereg-foreign"))
	}
	if send.field("live_mrs") != "0" {
		t.Errorf("live_mrs %q after the close, want 0", send.field("live_mrs"))
	}
	w := send.warns()
	if len(w) != 2 || !strings.Contains(w[1], "still held 1 registrations of neuronNetRegMrOG; released before the close") {
		t.Errorf("WARN lines %q, want the refused deregistration and the released registration", w)
	}
}
