package nrt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/spec/compiled"
)

// These tests load the forward-only libnccom doubles into the test process
// itself (the other doubles need a libnrt.so.1, and a second Go runtime in
// one process does not work: runtime/e2e covers them through a C host). The
// handoff runs once per process, so each failure mode runs in a child
// process of this test binary, selected by childEnv.

const childEnv = "NRTABI_NRT_TEST_CHILD"

var (
	stubs string // directory of the built doubles
	tree  *builder.Tree
	logs  = &logBuffer{}
)

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestMain(m *testing.M) {
	SetLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	var err error
	// The doubles of the release this test is built for: a release other
	// than the default reports its own compat id and git hash.
	if tree, err = builder.Open(Release); err == nil {
		stubs, err = os.MkdirTemp("", "nrtabi-nrt-")
	}
	if err == nil {
		for _, st := range tree.Stubs() {
			if st.ForwardOnly {
				if _, err = tree.BuildStub(context.Background(), "", stubs, st); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the forward-only doubles:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(stubs)
	os.Exit(code)
}

func stubPath(name string) string { return filepath.Join(stubs, name, builder.StubFile) }

func initGood(t testing.TB) *Outcome {
	t.Helper()
	o, err := Init(Options{Library: stubPath(builder.StubForwardOnly)})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	return o
}

func TestStatus(t *testing.T) {
	s, err := compiled.Load(Release)
	if err != nil {
		t.Fatal(err)
	}
	e := s.EnumByName("NRT_STATUS")
	if e == nil || len(e.Values) == 0 {
		t.Fatal("the spec has no NRT_STATUS enum")
	}
	for _, v := range e.Values {
		st := Status(v.Value)
		if st.String() != v.Name || st.Error() != v.Name {
			t.Errorf("Status(%d) = %q / %q, want %s", v.Value, st.String(), st.Error(), v.Name)
		}
		err := callErr("neuronX", uint32(v.Value))
		if v.Value == 0 {
			if err != nil {
				t.Errorf("NRT_SUCCESS gave error %v", err)
			}
			continue
		}
		var ce *CallError
		if !errors.As(err, &ce) || !errors.Is(err, st) || StatusOf(err) != st || err.Error() != "neuronX: "+v.Name {
			t.Errorf("callErr(%s) = %v", v.Name, err)
		}
	}
	if got := Status(12345).String(); !strings.Contains(got, "12345") {
		t.Errorf("an unknown status prints as %q", got)
	}
	if StatusOf(nil) != Status(statusSuccess) || StatusOf(errors.New("x")) != ErrFailure {
		t.Error("StatusOf")
	}
}

// Every caller of Init, concurrent or later, gets the one outcome.
func TestInitConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	outs := make([]*Outcome, 16)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _ = Init(Options{Library: stubPath(builder.StubForwardOnly)})
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o != outs[0] {
			t.Fatalf("caller %d got a different outcome", i)
		}
	}
	o := outs[0]
	if o.Stage != StageOK || o.Status != Status(statusSuccess) || o.Message != "" || !o.Probed || o.Version.CompatibilityVersion != CompatID {
		t.Errorf("outcome %+v", o)
	}
	if later, _ := Init(Options{Library: "elsewhere.so"}); later != o {
		t.Error("a later Init with other options ran the handoff again")
	}
	st := CurrentState()
	if !st.Initialised || st.ValidSlots != NumSlots || st.Armed {
		t.Errorf("state %+v", st)
	}
	using, _, _ := strings.Cut(tree.Spec.MessageByID("nccl_using_ccom").Text, "%")
	if n := strings.Count(logs.String(), "msg=\""+using); n != 1 {
		t.Errorf("%d Using CCOM lines, want 1:\n%s", n, logs.String())
	}
}

// Every forward entry point through its typed function, against the double:
// what each one answers is what the double wrote. The double's entry points
// without a behaviour of their own write NCCOM_STUB_OUT_BASE + 10 × dlsym
// index + parameter index through each out-pointer (mark), so a typed
// function that drops the answer, or reads the wrong parameter, shows.
func TestTypedAPI(t *testing.T) {
	initGood(t)
	s, err := compiled.Load(Release)
	if err != nil {
		t.Fatal(err)
	}
	mark := func(fn, param string) uintptr {
		f := s.ForwardByName(fn)
		if f == nil {
			t.Fatalf("no forward entry point %s", fn)
		}
		for k, p := range f.Params {
			if p.Name == param {
				return uintptr(1000 + 10*f.Index + k)
			}
		}
		t.Fatalf("%s has no parameter %s", fn, param)
		return 0
	}
	for i := range Forward {
		if _, err := Exercise(i); err != nil {
			t.Errorf("#%d %s: %v", i, Forward[i].Name, err)
		}
	}
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", what, got, err, want)
		}
	}

	v, err := GetVersionInfo()
	vs, _ := s.ConstantByName("NCCOM_VERSION_STRING").Str()
	check("GetVersionInfo", fmt.Sprintf("%d.%d.%d.%d-%s compat %d", v.Major, v.Minor, v.Patch, v.Maintenance, cut(v.GitHash[:]), v.CompatibilityVersion),
		fmt.Sprintf("%s-%s compat %d", vs, s.Release.LibNCCOM.Git, CompatID), err)

	id, err := GetUniqueID(4, "typed")
	id2, err2 := GetUniqueID(4, "typed")
	if err != nil || err2 != nil || !strings.HasPrefix(string(id[:]), "nccom-stub uid rank_n=4 hint=typed #") || id == id2 {
		t.Errorf("GetUniqueID = %q, %q (%v, %v): want two distinct ids of the double", cut(id[:]), cut(id2[:]), err, err2)
	}

	// two ranks of one comm share its cluster id; another comm has its own
	var dev DeviceInfo
	c0, err0 := InitComm(2, &id, 0, &dev, false)
	c1, err1 := InitComm(2, &id, 1, &dev, false)
	other, err2 := InitComm(1, &id2, 0, &dev, false)
	if err0 != nil || err1 != nil || err2 != nil || c0 == nil || c0 == c1 {
		t.Fatalf("InitComm = %v %v (%v, %v, %v): want two distinct comms", c0, c1, err0, err1, err2)
	}
	i0, e0 := GetCommInfo(c0)
	i1, e1 := GetCommInfo(c1)
	io, eo := GetCommInfo(other)
	if e0 != nil || e1 != nil || eo != nil || i0.ClusterID == 0 || i0.ClusterID != i1.ClusterID || io.ClusterID == i0.ClusterID {
		t.Errorf("GetCommInfo cluster ids %d %d (one comm), %d (another): %v %v %v", i0.ClusterID, i1.ClusterID, io.ClusterID, e0, e1, eo)
	}
	g0, err0 := InitGlobalComm(0, 2, &dev, "typed-api", "typed")
	g1, err1 := InitGlobalComm(1, 2, &dev, "typed-api", "typed")
	gi0, _ := GetCommInfo(g0)
	gi1, _ := GetCommInfo(g1)
	if err0 != nil || err1 != nil || g0 == g1 || gi0.ClusterID != gi1.ClusterID || gi0.ClusterID == i0.ClusterID {
		t.Errorf("InitGlobalComm: comms %v %v in clusters %d %d (%v, %v)", g0, g1, gi0.ClusterID, gi1.ClusterID, err0, err1)
	}
	for _, c := range []Comm{c0, c1, other, g0, g1} {
		if err := FreeComm(c); err != nil {
			t.Errorf("FreeComm: %v", err)
		}
	}
	if _, err := InitGlobalComm(2, 2, &dev, "typed-api", "typed"); !errors.Is(err, ErrInvalid) {
		t.Errorf("InitGlobalComm of rank 2 of 2: %v, want NRT_INVALID", err)
	}

	if peer, err := GetPeerDeviceID(c0, 3); err != nil || peer != 3 {
		t.Errorf("GetPeerDeviceID = %d, %v (the forward-only double answers the peer)", peer, err)
	}
	p, f, err := NetworkProxyProgress(nil, 0, 0)
	check("NetworkProxyProgress", [2]bool{p, f}, [2]bool{true, false}, err)
	nic, err := PreferredNcRidNic(0, 0)
	check("PreferredNcRidNic", uintptr(nic), mark("neuronPreferredNcRidNic", "out"), err)
	bdf, err := PreferredNcRidNicBdf(3, 0x1c)
	check("PreferredNcRidNicBdf", bdf, "nccom-stub:03:1c.0", err)
	mh, err := NetRegMr(nil, 0, 1, true, 0, nil, 0, 0)
	check("NetRegMr", uintptr(mh), mark("neuronNetRegMr", "mhandle"), err)
	conn, err := GetNetConnector(nil, 0, 1, true)
	check("GetNetConnector", uintptr(conn), mark("neuronGetNetConnector", "connector"), err)
	ofi, err := GetOFIHandle()
	check("GetOFIHandle", uintptr(ofi), mark("neuronGetOFIHandle", "out"), err)
	l, err := NetListen(0, make([]byte, 128))
	check("NetListen", uintptr(l), mark("neuronNetListen", "listen_comm"), err)
	sc, err := NetConnect(0, make([]byte, 128))
	check("NetConnect", uintptr(sc), mark("neuronNetConnect", "send_comm"), err)
	rc, err := NetAccept(nil)
	check("NetAccept", uintptr(rc), mark("neuronNetAccept", "recv_comm"), err)
	mog, err := NetRegMrOG(nil, nil, 0, 0)
	check("NetRegMrOG", uintptr(mog), mark("neuronNetRegMrOG", "mhandle"), err)
	key, err := NetGetMrKey(nil)
	check("NetGetMrKey", uintptr(key), mark("neuronNetGetMrKey", "key"), err)
	for name, fn := range map[string]func(NetComm, unsafe.Pointer, int, MemHandle) (Request, error){
		"neuronNetIsend": NetIsend, "neuronNetIrecv": NetIrecv, "neuronNetIflush": NetIflush} {
		req, err := fn(nil, nil, 0, nil)
		check(name, uintptr(req), mark(name, "request"), err)
	}
	done, size, err := NetTest(nil)
	check("NetTest", fmt.Sprint(done, uintptr(size)), fmt.Sprint(true, mark("neuronNetTest", "size")), err)

	if err := BootstrapAllGather(nil, make([]byte, 10), 4, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("BootstrapAllGather with a ragged buffer: %v", err)
	}
	if _, err := Exercise(len(Forward)); err == nil {
		t.Error("Exercise past the table: no error")
	}
}

// The hot path allocates nothing per call.
func TestProxyProgressAllocs(t *testing.T) {
	initGood(t)
	var sink bool
	allocs := testing.AllocsPerRun(1000, func() {
		p, _, err := NetworkProxyProgress(nil, 1, 2)
		sink = sink != p || err != nil
	})
	if allocs != 0 {
		t.Errorf("NetworkProxyProgress allocates %.1f times per call", allocs)
	}
}

// TestVersion: nrt_get_version reports the spec's runtime_version and git
// hash, never numbers read off the release's name, and says "unknown" when
// the spec states none (a release named sdk2.28.0 is not runtime 0.28.0).
func TestVersion(t *testing.T) {
	v := Version()
	want := libnrtRuntimeVersion
	got := fmt.Sprintf("%d.%d.%d.%d", v.RtMajor, v.RtMinor, v.RtPatch, v.RtMaintenance)
	if want == "" {
		want = "0.0.0.0"
	} else if strings.Count(want, ".") == 2 {
		want += ".0"
	}
	git := libnrtGit
	if git == "" {
		git = Unknown
	}
	if got != want || cut(v.GitHash[:]) != git || !strings.Contains(cut(v.RtDetail[:]), "release "+Release+",") {
		t.Errorf("Version() = %s %q %q, want %s and git %s", got, cut(v.RtDetail[:]), cut(v.GitHash[:]), want, git)
	}
	for _, c := range []struct {
		release, runtime, git string
		nums                  [4]uint64
		detail, hash          string
	}{
		{"sdk2.28.0", "", "", [4]uint64{}, "nrtabi libnrt for release sdk2.28.0, runtime version unknown", "unknown"},
		{"neuron-2.30.0", "2.32.31", "abc123", [4]uint64{2, 32, 31, 0}, "nrtabi libnrt for release neuron-2.30.0, runtime version 2.32.31", "abc123"},
		{"x", "1.2.3.4", "h", [4]uint64{1, 2, 3, 4}, "nrtabi libnrt for release x, runtime version 1.2.3.4", "h"},
	} {
		v := version(c.release, c.runtime, c.git)
		if n := [4]uint64{v.RtMajor, v.RtMinor, v.RtPatch, v.RtMaintenance}; n != c.nums || cut(v.RtDetail[:]) != c.detail || cut(v.GitHash[:]) != c.hash {
			t.Errorf("version(%q, %q, %q) = %v %q %q, want %v %q %q", c.release, c.runtime, c.git, n, cut(v.RtDetail[:]), cut(v.GitHash[:]), c.nums, c.detail, c.hash)
		}
	}
}

func TestDeviceABI(t *testing.T) {
	a := DeviceABI()
	for name, v := range map[string]rawPodType{"none": podTypes[0], "p2p": podTypes[1], "switch": podTypes[2]} {
		if a.PodTypes[name] != uint32(v) {
			t.Errorf("pod type %s = %d, want %d", name, a.PodTypes[name], v)
		}
	}
	// A release that lacks arch_name or device_revision
	// (docs/generator.md#absent-fields) has nothing to fit: limit 0.
	var info InstanceInfo
	wantArch, wantRev := 0, 0
	if info.HasArchName() {
		wantArch = 16
	}
	if info.HasDeviceRevision() {
		wantRev = 8
	}
	if len(a.PodTypes) != 3 || a.MaxArchName != wantArch || a.MaxDeviceRevision != wantRev || a.MaxDevices != maxDevices {
		t.Errorf("DeviceABI() = %+v", a)
	}
	if Device() == nil || Device().TotalVNCCount() == 0 {
		t.Error("no default device layer")
	}
	if _, err := LoadTopology(filepath.Join(t.TempDir(), "none.toml")); err == nil {
		t.Error("LoadTopology of a missing file: no error")
	}
}

// child runs a named scenario in a fresh process and reports problems.
func child(t *testing.T, name string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+name, "NRTABI_STUBS="+stubs)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("child %s: %v\n%s", name, err, out)
	}
}

func TestChildBeforeInit(t *testing.T)   { child(t, "before-init") }
func TestChildIncompatible(t *testing.T) { child(t, "incompatible") }
func TestChildFailRC(t *testing.T)       { child(t, "fail-rc") }
func TestChildMissingLib(t *testing.T)   { child(t, "missing-library") }

func runChild(name string) int {
	stubs = os.Getenv("NRTABI_STUBS")
	var err error
	if tree, err = builder.Open(Release); err != nil {
		fmt.Println(err)
		return 1
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch name {
	case "before-init":
		childBeforeInit(bad)
	case "incompatible":
		childFault(bad, stubPath(builder.StubForwardOnly+"-"+tree.StubIncompatible()), StageIncompatible,
			cfmt.Sprintf(tree.Spec.MessageByID("nccl_incompatible").Text, tree.WrongCompat()))
	case "missing-library":
		lib := filepath.Join(stubs, "nowhere", builder.StubFile)
		childFault(bad, lib, StageDlopen,
			cfmt.Sprintf(tree.Spec.MessageByID("nccl_dlopen_failed").Text, lib+": cannot open shared object file: No such file or directory"))
	case "fail-rc":
		childFailRC(bad)
	default:
		bad("no child scenario %q", name)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Println("--- log\n" + logs.String())
		return 1
	}
	return 0
}

// Before the handoff the slots are NULL and the sentinel is clear: the Go
// layer refuses instead of entering a trampoline, and the probe reports
// NRT_FAILURE without touching a slot.
func childBeforeInit(bad func(string, ...any)) {
	if _, err := GetUniqueID(1, ""); !errors.Is(err, ErrUninitialized) {
		bad("GetUniqueID before Init: %v", err)
	}
	if _, _, err := NetworkProxyProgress(nil, 0, 0); !errors.Is(err, ErrUninitialized) {
		bad("NetworkProxyProgress before Init: %v", err)
	}
	if _, err := GetVersionInfo(); !errors.Is(err, ErrFailure) {
		bad("GetVersionInfo before Init: %v", err)
	}
	if st := CurrentState(); st.Initialised || st.ValidSlots != 0 || st.Armed {
		bad("state before Init: %+v", st)
	}
}

func childFault(bad func(string, ...any), lib string, stage Stage, message string) {
	o, err := Init(Options{Library: lib})
	var ie *InitError
	if !errors.As(err, &ie) || !errors.Is(err, ErrFailure) || o.Stage != stage || o.Message != message || ie.Message != message {
		bad("Init = %+v, %v; want stage %v, message %q", o, err, stage, message)
	}
	if st := CurrentState(); st.ValidSlots != 0 || !st.Armed || st.Message != message {
		bad("state after a failed handoff: %+v", st)
	}
	for round := 0; round < 2; round++ {
		for i, f := range Forward {
			_, err := Exercise(i)
			want := ErrFailure
			if f.Guard == guardHot {
				want = ErrUninitialized
			}
			if !errors.Is(err, want) {
				bad("round %d #%d %s: %v, want %v", round, i, f.Name, err, want)
			}
			var ce *CallError
			if f.Guard != guardHot && (!errors.As(err, &ce) || ce.Symbol != f.Name) {
				bad("#%d: the error %v does not name %s", i, err, f.Name)
			}
		}
	}
	initErr := cfmt.Sprintf(msgInitError, message)
	for _, f := range Forward {
		want := 0
		if f.Guard != guardHot && f.Guard != guardProbe {
			want = 2
		}
		line := fmt.Sprintf("level=ERROR msg=%q subsys=ENC fn=%s\n", initErr, f.Trampoline)
		if n := strings.Count(logs.String(), line); n != want {
			bad("%s logged %q %d times, want %d", f.Trampoline, initErr, n, want)
		}
	}
}

// A double that fails every call: each guarded trampoline logs its own
// literal and the status comes back typed, naming the entry point.
func childFailRC(bad func(string, ...any)) {
	if _, err := Init(Options{Library: stubPath(builder.StubForwardOnly + "-" + builder.StubFailRC)}); err != nil {
		bad("Init: %v", err)
		return
	}
	for i, f := range Forward {
		_, err := Exercise(i)
		if f.Guard == guardProbe {
			if err != nil {
				bad("the probe failed: %v", err)
			}
			continue
		}
		if !errors.Is(err, Status(statusInvalid)) {
			bad("#%d %s: %v, want NRT_INVALID", i, f.Name, err)
		}
		var ce *CallError
		if f.Guard != guardHot && (!errors.As(err, &ce) || ce.Symbol != f.Name) {
			bad("#%d: the error %v does not name %s", i, err, f.Name)
		}
		lit := fmt.Sprintf("msg=%q subsys=ENC fn=%s\n", cfmt.Sprintf(msgRequestFailed, f.Name), f.Trampoline)
		want := 1
		if f.Guard == guardHot {
			want = 0
		}
		if n := strings.Count(logs.String(), lit); n != want {
			bad("%s: %d log lines %q, want %d", f.Trampoline, n, lit, want)
		}
	}
	// A failing tick ends the proxy-<tid> loop at once, with the status.
	d, err := RunProxy(context.Background(), nil, 0, 0, ProxyOptions{})
	if err != nil {
		bad("RunProxy: %v", err)
		return
	}
	select {
	case <-d.Done():
	case <-time.After(10 * time.Second):
		bad("the proxy loop kept ticking a failing libnccom")
	}
	if err := d.Stop(); !errors.Is(err, Status(statusInvalid)) || d.Stats().Ticks != 1 || !strings.Contains(err.Error(), d.Thread()+": stream 0 proxy 0: tick 1: ") {
		bad("proxy driver over a failing tick: %v after %d ticks; want NRT_INVALID after 1, naming its thread", err, d.Stats().Ticks)
	}
}

// The adapter has the method set of runtime/transport/nccl's Bootstrap and
// reaches the double.
func TestBootstrapAdapter(t *testing.T) {
	initGood(t)
	var b interface {
		BootstrapSend(state unsafe.Pointer, peer int, data []byte, hint string) error
		BootstrapRecv(state unsafe.Pointer, peer int, data []byte, hint string) error
		BootstrapAllGather(state unsafe.Pointer, allData []byte, size int, hint string) error
	} = Bootstrap{}
	// The NULL state is the double's one-rank loopback: what is sent to
	// rank 0 comes back, a peer outside the world is refused.
	if err := b.BootstrapSend(nil, 0, []byte("x"), "t"); err != nil {
		t.Error(err)
	}
	got := make([]byte, 1)
	if err := b.BootstrapRecv(nil, 0, got, "t"); err != nil || string(got) != "x" {
		t.Errorf("BootstrapRecv = %q, %v; want the %q sent", got, err, "x")
	}
	if err := b.BootstrapSend(nil, 1, []byte("x"), "t"); !errors.Is(err, ErrInvalid) {
		t.Errorf("BootstrapSend to peer 1 of a one-rank world: %v, want NRT_INVALID", err)
	}
	all := []byte{7, 7}
	if err := b.BootstrapAllGather(nil, all, 2, "t"); err != nil || all[0] != 7 {
		t.Errorf("BootstrapAllGather of one rank = %v, %v", all, err)
	}
}

// TestEveryForwardHasAnExercise: each forward entry point of the canonical
// release has a typed function in the exercise table. Built for another
// release, entry points new in it are listed: they are reachable through
// their C trampolines until a typed function is written.
func TestEveryForwardHasAnExercise(t *testing.T) {
	for _, f := range Forward {
		if _, ok := exercises[f.Name]; !ok {
			if Release == "2.31.24" {
				t.Errorf("%s has no entry in exercises", f.Name)
			} else {
				t.Logf("%s is new in release %s: no typed Go function, only the trampoline %s", f.Name, Release, f.Trampoline)
			}
		}
	}
	for name := range exercises {
		found := false
		for _, f := range Forward {
			found = found || f.Name == name
		}
		if !found {
			t.Errorf("exercises names %s, which release %s does not have", name, Release)
		}
	}
}

// Every trampoline with an out-pointer refuses a NULL one with NRT_INVALID,
// and the guarded ones say so in one log line, before libnccom is reached:
// the double behind them answers a NULL out with a status of its own and no
// log line, and neuronGetVersionInfo would write through it.
func TestTrampolinesRefuseNullOuts(t *testing.T) {
	initGood(t)
	before := logs.String()
	probed := 0
	for i, f := range Forward {
		st, ok := NullOutProbe(i)
		if !ok {
			continue
		}
		probed++
		if st != ErrInvalid {
			t.Errorf("%s with NULL out-pointers: %v, want NRT_INVALID", f.Trampoline, st)
		}
		line := f.Trampoline + ": an out-pointer is NULL"
		want := 1
		if i == 0 || f.Name == "neuronNetworkProxyProgress" { // the probe and the hot path do not log
			want = 0
		}
		if n := strings.Count(logs.String(), line) - strings.Count(before, line); n != want {
			t.Errorf("%s: %d log lines %q, want %d", f.Trampoline, n, line, want)
		}
	}
	if probed < 20 {
		t.Errorf("only %d trampolines have out-pointers; the spec notes more", probed)
	}
	if _, ok := NullOutProbe(len(Forward)); ok {
		t.Error("a probe past the table")
	}
}

// TestLogLevelFromEnv: the four levels in any case, info unset, and any
// other value refused by name, escaped.
func TestLogLevelFromEnv(t *testing.T) {
	for v, want := range map[string]slog.Level{"": slog.LevelInfo, "info": slog.LevelInfo, "DEBUG": slog.LevelDebug, "warn": slog.LevelWarn, "Error": slog.LevelError} {
		got, err := LogLevelFromEnv(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("%q: %v, %v", v, got, err)
		}
	}
	for _, v := range []string{"verbose", "warn\x1b[2J", "3"} {
		_, err := LogLevelFromEnv(func(string) string { return v })
		if err == nil || !strings.Contains(err.Error(), EnvLogLevel) || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%q: %v", v, err)
		}
	}
}
