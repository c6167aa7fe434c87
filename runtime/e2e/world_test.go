package e2e

import (
	"bytes"
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
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/internal/netns"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
	"github.com/nrtabi/nrtabi/spec"
)

// The boundary worlds: every rank a real process, C hosts linked against the
// Go libnrt.so.1, which dlopens the reference libnccom through ld.so and
// runs global comm init over TCP and the per-NC bootstrap over the
// ncclBootstrapSend/Recv trampolines; in a mixed world some ranks are the
// Go `nrtabi-runtime bootstrap` instead. Built once, on first use.
var (
	worldOnce sync.Once
	worldErr  error
)

func refLibDir(v string) string { return filepath.Join(buildRoot, "libnccom", v) }
func edgesPath() string         { return filepath.Join(buildRoot, "bin", "nccomedges") }
func worldHostPath() string     { return filepath.Join(buildRoot, "bin", "worldhost") }
func nrtabiPath() string        { return filepath.Join(buildRoot, "bin", "nrtabi-runtime") }
func checkerPath() string       { return filepath.Join(buildRoot, "bin", "nrtabi") }

// first8 is the part of a git hash nccl_nrt_git_hash keeps, NUL-padded.
func first8(s string) string {
	b := make([]byte, 8)
	copy(b, s)
	return string(b)
}

// skewHash is the git hash of the skewed libnccom build.
const skewHash = "0000skew"

func requireWorld(t *testing.T) {
	t.Helper()
	requireBuild(t)
	worldOnce.Do(func() {
		for v, o := range map[string]builder.Libnccom{"ref": {}, "skew": {GitHash: skewHash}, "asan": {Sanitize: true}} {
			if _, err := tree.BuildLibnccom(t.Context(), libnrtDir(), refLibDir(v), o); err != nil {
				worldErr = fmt.Errorf("libnccom %s: %w", v, err)
				return
			}
		}
		if worldErr = tree.BuildWorldHost(t.Context(), worldHostPath(), libnrtDir()); worldErr != nil {
			return
		}
		if worldErr = tree.BuildEdges(t.Context(), edgesPath(), libnrtDir(), refLibDir("ref")); worldErr != nil {
			return
		}
		// With the test-only fault hooks: the fault worlds plant
		// NRTABI_BOOTSTRAP_FAULT in a Go rank.
		out, err := exec.Command("go", "build", "-tags", "nrtabi_faults,"+abi.BuildTag, "-o", nrtabiPath(), builder.Module+"/cmd/nrtabi-runtime").CombinedOutput()
		if err != nil {
			worldErr = fmt.Errorf("go build nrtabi-runtime: %v\n%s", err, out)
			return
		}
		if out, err := exec.Command("go", "build", "-o", checkerPath(), builder.Module+"/cmd/nrtabi").CombinedOutput(); err != nil {
			worldErr = fmt.Errorf("go build nrtabi: %v\n%s", err, out)
		}
	})
	if worldErr != nil {
		t.Fatal(worldErr)
	}
}

// worldTimeout is NEURON_CCOM_SOCK_TIMEOUT in these worlds, in seconds.
const worldTimeout = 3

// member is one rank: a C host (lib: which libnccom build) or, with goRank,
// the Go `nrtabi-runtime bootstrap`.
type member struct {
	goRank    bool
	lib       string // "ref" by default
	reordered bool
	nranks    int // 0: the world's
	env       []string
	timing    bool // a Go rank reports its phase times (t_done), as a C host always does
}

// runWorld starts every member at once against a root on a free loopback
// port (rank 0 serves it) and waits for all.
func runWorld(t *testing.T, ms []member, extraEnv ...string) ([]worldprog.Run, time.Duration) {
	t.Helper()
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	return runWorldAt(t, root, ms, extraEnv...)
}

// runWorldAt is runWorld through the root id root.
func runWorldAt(t *testing.T, root string, ms []member, extraEnv ...string) ([]worldprog.Run, time.Duration) {
	t.Helper()
	wms := make([]worldprog.Member, len(ms))
	for r, m := range ms {
		lib := m.lib
		if lib == "" {
			lib = "ref"
		}
		env := append([]string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir(lib)}, m.env...)
		if m.goRank {
			wms[r] = worldprog.GoRank(nrtabiPath(), m.reordered, env...)
			if m.timing {
				args := wms[r].Args
				wms[r].Args = func(rank, nranks int, root string) []string { return append(args(rank, nranks, root), "--timing") }
			}
		} else {
			wms[r] = worldprog.WorldHost(worldHostPath(), m.reordered, env...)
		}
		wms[r].NRanks = m.nranks
	}
	base := append([]string{abi.EnvSockTimeout + "=" + strconv.Itoa(worldTimeout), "NRTABI_LOG_LEVEL=warn"}, extraEnv...)
	runs, took, err := worldprog.Launch(t.Context(), wms, root, base)
	if err != nil {
		t.Fatal(err)
	}
	return runs, took
}

// agree checks that every rank of a world succeeded and agrees with rank 0.
func agree(t *testing.T, runs []worldprog.Run) {
	t.Helper()
	if ok, r := worldprog.Agreed(runs); !ok {
		t.Errorf("rank %d disagrees: exit %d: %s\n%s", r, runs[r].Exit, runs[r].Fields["line"], runs[r].Stderr)
	}
	// By default the world group's id is rank 0's second split of the
	// world (docs/bootstrap.md#group-comm-split: the global group's is the
	// first); with NRTABI_BOOTSTRAP_GROUP_INIT=flat, a loopback root's.
	split := fmt.Sprintf(",n=%d,root=0,serial=2)", len(runs))
	if id := runs[0].Fields["unique_id"]; !strings.HasPrefix(id, "127.0.0.1:") && !(strings.HasPrefix(id, "split(") && strings.HasSuffix(id, split)) {
		t.Errorf("rank 0's unique id %q is neither a loopback root address nor the world group's split", id)
	}
	// Every rank initialised the group's comm through nccl_init_comm, as
	// libnrt's enc_init_comm does (docs/sources.md#s004-5), so its enc_comm
	// is bound to {group id, stream}: worldprog.GroupID/Stream.
	want := fmt.Sprintf("%d/%d", worldprog.GroupID, worldprog.Stream)
	for r, run := range runs {
		if got := run.Fields["bound"]; got != want {
			t.Errorf("rank %d: enc_comm {id, stream_id} = %q, want %q (nccl_init_comm not on its path?): %s", r, got, want, run.Fields["line"])
		}
	}
}

func cHosts(n int) []member { return make([]member, n) }

// TestBoundaryWorlds: N C hosts, each libnrt -> the reference libnccom,
// form one world over TCP and agree on the per-NC bootstrap's unique id,
// which crossed the ncclBootstrapSend/Recv trampolines (17-byte AND tree,
// 129-byte hypercube) between processes.
func TestBoundaryWorlds(t *testing.T) {
	requireWorld(t)
	for _, n := range []int{2, 8, 32} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			runs, took := runWorld(t, cHosts(n))
			agree(t, runs)
			t.Logf("%d C hosts agreed in %s", n, took)
		})
	}
}

// TestBoundaryReorderedProgram: one rank posts a reordered program; every
// rank fails with the exact signature message.
func TestBoundaryReorderedProgram(t *testing.T) {
	requireWorld(t)
	const n = 8
	ms := cHosts(n)
	ms[5].reordered = true
	runs, _ := runWorld(t, ms)
	for r, run := range runs {
		want := cfmt.Sprintf(abi.MsgSigValidationFailed, uint32(r))
		if run.Exit == 0 || run.Fields["error"] != want {
			t.Errorf("rank %d: exit %d %q; want a failure with %q", r, run.Exit, run.Fields["error"], want)
		}
	}
}

// TestMixedWorld: Go `nrtabi-runtime bootstrap` ranks and C hosts with the
// reference libnccom agree on one world, with the root on either side: the
// spec's default wire rows drive both implementations.
func TestMixedWorld(t *testing.T) {
	requireWorld(t)
	for _, goFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("go-root=%v", goFirst), func(t *testing.T) {
			ms := make([]member, 6)
			for r := range ms {
				ms[r].goRank = (r%2 == 0) == goFirst
			}
			runs, _ := runWorld(t, ms)
			agree(t, runs)
		})
	}
}

// TestBoundaryUnderSanitizers runs one world with the reference libnccom
// built with AddressSanitizer and UBSan (libasan preloaded): any memory
// error or undefined behaviour aborts its process.
func TestBoundaryUnderSanitizers(t *testing.T) {
	requireWorld(t)
	pre, err := builder.SanitizerRuntime(t.Context())
	if err != nil {
		t.Skipf("no sanitizer runtime to preload: %v", err)
	}
	ms := cHosts(4)
	for r := range ms {
		ms[r].lib = "asan"
	}
	runs, _ := runWorld(t, ms, "LD_PRELOAD="+pre, "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
	agree(t, runs)
	for r, run := range runs {
		if strings.Contains(run.Stderr, "Sanitizer") || strings.Contains(run.Stderr, "runtime error") {
			t.Errorf("rank %d: a sanitizer spoke:\n%s", r, run.Stderr)
		}
	}
}

// TestBoundaryFaults plants one bad peer (rank 2 of 4) in a world whose
// root is a C host's reference libnccom, in the default framing: every rank
// exits non-zero within the socket timeout, and the root (rank 0) logs the
// upstream or seed-derived message that names the fault.
func TestBoundaryFaults(t *testing.T) {
	requireWorld(t)
	const n = 4
	tag := func(nccom string) string {
		trim := func(s string) string { return strings.TrimRight(first8(s), "\x00") }
		return fmt.Sprintf("libnccom %q + libnrt %q", trim(nccom), trim(tcp.ReleaseNRTGit()))
	}
	for _, c := range []struct {
		name string
		bad  member
		want string
	}{
		{"foreign magic", member{goRank: true, env: []string{"NRTABI_BOOTSTRAP_FAULT=bad-magic"}},
			cfmt.Sprintf("Bootstrap Root : sanity %#x from ", ^abi.BootstrapSanity)},
		{"skewed git hash", member{lib: "skew"},
			cfmt.Sprintf(abi.MsgNccomRootGitHashMismatch, 2, tag(skewHash), 0, tag(abi.LibnccomGit))},
		{"wrong nranks", member{nranks: n + 1}, cfmt.Sprintf(abi.MsgNccomRootNranksMismatch, n, n+1)},
		{"dies mid-handshake", member{goRank: true, env: []string{"NRTABI_BOOTSTRAP_FAULT=die-mid-record"}}, abi.MsgNccomConnectionClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := cHosts(n)
			ms[2] = c.bad
			runs, took := runWorld(t, ms)
			if limit := time.Duration(2*worldTimeout)*time.Second + time.Second; took > limit {
				t.Errorf("the world took %s to fail, more than %s with %s=%d", took, limit, abi.EnvSockTimeout, worldTimeout)
			}
			for r, run := range runs {
				if run.Exit == 0 {
					t.Errorf("rank %d exited 0: %s", r, run.Fields["line"])
				}
			}
			if !strings.Contains(runs[0].Stderr, c.want) {
				t.Errorf("the root (rank 0) did not log %q:\n%s", c.want, runs[0].Stderr)
			}
		})
	}
}

// wireTap forwards connections from its own loopback port to target and
// keeps both directions of each, byte for byte.
type wireTap struct {
	ln     net.Listener
	mu     sync.Mutex
	up     [][]byte // rank -> root, one per connection
	down   [][]byte // root -> rank
	wg     sync.WaitGroup
	target string
}

func newWireTap(t *testing.T, target string) *wireTap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireTap{ln: ln, target: target}
	go w.serve()
	return w
}

func (w *wireTap) serve() {
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close()
			var s net.Conn
			for i := 0; i < 500; i++ { // the root may not listen yet
				if s, err = net.Dial("tcp", w.target); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if s == nil {
				return
			}
			defer s.Close()
			var up, down bytes.Buffer
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(io.MultiWriter(s, &up), c)
				_ = s.(*net.TCPConn).CloseWrite()
				close(done)
			}()
			_, _ = io.Copy(io.MultiWriter(c, &down), s)
			_ = c.(*net.TCPConn).CloseWrite()
			<-done
			w.mu.Lock()
			w.up = append(w.up, up.Bytes())
			w.down = append(w.down, down.Bytes())
			w.mu.Unlock()
		}()
	}
}

func (w *wireTap) close() {
	w.ln.Close()
	w.wg.Wait()
}

// TestDefaultWireBytes records the root connections of a default-mode world
// (ranks 1..3 reach rank 0's root through a tap; ranks 1 and 3 are C hosts
// with the reference libnccom, rank 2 the Go `nrtabi-runtime bootstrap`) and checks
// every byte against the spec's rows: one bootstrap_frame_size then an
// extInfoGlobal up (magic, rank, nranks, listen address, the git-hash weld),
// one bootstrap_frame_size then a bootstrap_root_reply down, then the root
// closes (docs/sources.md#s001-3: close(fd)).
func TestDefaultWireBytes(t *testing.T) {
	requireWorld(t)
	s := tree.Spec
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	tap := newWireTap(t, root)
	const n = 4
	env := []string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir("ref")}
	rootOf := func(m worldprog.Member, id string) worldprog.Member {
		args := m.Args
		m.Args = func(rank, nranks int, _ string) []string { return args(rank, nranks, id) }
		return m
	}
	tapAddr := tap.ln.Addr().String()
	ms := []worldprog.Member{
		worldprog.WorldHost(worldHostPath(), false, env...),
		rootOf(worldprog.WorldHost(worldHostPath(), false, env...), tapAddr),
		rootOf(worldprog.GoRank(nrtabiPath(), false, env...), tapAddr),
		rootOf(worldprog.WorldHost(worldHostPath(), false, env...), tapAddr),
	}
	runs, _, err := worldprog.Launch(t.Context(), ms, root, []string{abi.EnvSockTimeout + "=" + strconv.Itoa(worldTimeout), "NRTABI_LOG_LEVEL=warn"})
	if err != nil {
		t.Fatal(err)
	}
	tap.close()
	agree(t, runs)

	field := fieldOffsets(t, s)
	frame := s.StructByName("bootstrap_frame_size").Size
	up, down := s.StructByName("extInfoGlobal").Size, s.StructByName("bootstrap_root_reply").Size
	sanity, _ := s.ConstantByName("BOOTSTRAP_SANITY").Int()
	info := field("extInfoGlobal", "info")
	le32 := func(b []byte, off int) int { return int(int32(binary.LittleEndian.Uint32(b[off:]))) }
	wantTag := first8(abi.LibnccomGit) + first8(tcp.ReleaseNRTGit())
	seen := map[int]bool{}
	if len(tap.up) != n-1 {
		t.Fatalf("%d connections through the tap, want %d (ranks 1..%d)", len(tap.up), n-1, n-1)
	}
	for i := range tap.up {
		u, d := tap.up[i], tap.down[i]
		if len(u) != frame+up || le32(u, 0) != up {
			t.Errorf("connection %d up: %d bytes, size prefix %d; want one frame of %d (bootstrap_frame_size + extInfoGlobal)", i, len(u), le32(u, 0), up)
			continue
		}
		rec := u[frame:]
		rank := le32(rec, info+field("extInfo", "rank"))
		if got := uint32(le32(rec, info+field("extInfo", "sanity"))); int64(got) != sanity {
			t.Errorf("rank %d: sanity %#x, want %#x", rank, got, sanity)
		}
		if nr := le32(rec, info+field("extInfo", "nranks")); nr != n || rank < 1 || rank >= n || seen[rank] {
			t.Errorf("record rank %d nranks %d", rank, nr)
		}
		seen[rank] = true
		fam := binary.LittleEndian.Uint16(rec[info+field("extInfo", "extAddressListen"):])
		if fam != uint16(2) {
			t.Errorf("rank %d: listen address family %d, want AF_INET", rank, fam)
		}
		if tag := string(rec[field("extInfoGlobal", "nccl_nrt_git_hash"):up]); tag != wantTag {
			t.Errorf("rank %d: nccl_nrt_git_hash %q, want %q", rank, tag, wantTag)
		}
		if len(d) != frame+down || le32(d, 0) != down {
			t.Errorf("rank %d down: %d bytes, size prefix %d; want one frame of %d (bootstrap_root_reply), then close", rank, len(d), le32(d, 0), down)
			continue
		}
		reply := d[frame:]
		cluster := binary.LittleEndian.Uint64(reply[field("bootstrap_root_reply", "cluster_id"):])
		if got := fmt.Sprintf("%#016x", cluster); got != runs[rank].Fields["cluster_id"] {
			t.Errorf("rank %d: the reply's cluster_id %s, the rank reports %s", rank, got, runs[rank].Fields["cluster_id"])
		}
		if fam := binary.LittleEndian.Uint16(reply[field("bootstrap_root_reply", "neighbour"):]); fam != uint16(2) {
			t.Errorf("rank %d: the neighbour's family %d", rank, fam)
		}
	}
}

// TestReferenceLibnccomBadArguments calls every neuron* export of the
// reference libnccom with NULL out-pointers, out-of-range sizes and ranks
// and comms it never made, and split unique ids of no world here or of a
// version no maker writes (nccomedges.c), normally and under ASan/UBSan:
// the init path (neuronGetUniqueId, neuronInitGlobalComm, neuronInitComm)
// answers ncclInvalidArgument (4) as the seed's wrappers pass it through
// (contradiction row init-status-invalid-argument), every other export
// NRT_INVALID, and none crashes; the entry points it does not provide
// refuse with a non-success status and one line naming themselves;
// ncclGetVersion answers 2999 (NCCOM_NCCL_VERSION).
func TestReferenceLibnccomBadArguments(t *testing.T) {
	requireWorld(t)
	pre, preErr := builder.SanitizerRuntime(t.Context())
	for _, v := range []string{"ref", "asan"} {
		t.Run(v, func(t *testing.T) {
			cmd := exec.Command(edgesPath())
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+refLibDir(v)+":"+libnrtDir(), "NRTABI_LOG_LEVEL=warn")
			if v == "asan" {
				if preErr != nil {
					t.Skipf("no sanitizer runtime to preload: %v", preErr)
				}
				cmd.Env = append(cmd.Env, "LD_PRELOAD="+pre, "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS=halt_on_error=1")
			}
			var out, errw bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errw
			if err := cmd.Run(); err != nil {
				t.Fatalf("nccomedges: %v\n%s\n%s", err, out.String(), errw.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) < 40 || lines[0] != "neuronGetVersionInfo(n=8) wrote nothing" {
				t.Fatalf("nccomedges printed:\n%s", out.String())
			}
			if want := fmt.Sprintf("version %d %d", abi.NccomNcclVersion, abi.NcclSuccess); lines[1] != want {
				t.Errorf("ncclGetVersion: printed %q, want %q", lines[1], want)
			}
			invalid := strconv.Itoa(int(abi.NRTInvalid))
			invalidArg := strconv.Itoa(int(abi.NcclInvalidArgument))
			seen := 0
			for _, l := range lines[2:] {
				i := strings.LastIndexByte(l, ' ')
				name, rc := l[:i], l[i+1:]
				// The net and proxy entry points (docs/net-seam.md) over a comm
				// the library did not make and no plugin: NRT_INVALID, or a
				// refusal in a line naming the entry point.
				if fn, ok := strings.CutPrefix(name, "unprovided "); ok {
					if rc == "0" || (rc != invalid && !strings.Contains(errw.String(), fn+": ")) {
						t.Errorf("%s: status %s; want a refusal and a line naming it", fn, rc)
					}
					continue
				}
				want, what := invalid, "NRT_INVALID"
				for _, p := range []string{"ncclGetVersion(", "neuronGetUniqueId(", "neuronInitGlobalComm(", "neuronInitComm("} {
					if strings.HasPrefix(name, p) {
						want, what = invalidArg, "ncclInvalidArgument passed through"
						seen++
					}
				}
				if rc != want {
					t.Errorf("%s: status %s, want %s (%s)", name, rc, what, want)
				}
			}
			if seen != 15 {
				t.Errorf("%d init-path calls checked, want 15:\n%s", seen, out.String())
			}
			// the two split ids, each refused by name (docs/bootstrap.md#group-comm-split)
			for _, want := range []string{"holds no world of 2 ranks with that cluster id and epoch: forged or from another world", "split unique id: version 2"} {
				if !strings.Contains(errw.String(), want) {
					t.Errorf("no %q among the refusals:\n%s", want, errw.String())
				}
			}
		})
	}
}

// TestBoundaryAcrossThreeHosts: one rank per network namespace (as root):
// hosts 0 and 2 C hosts with the reference libnccom, host 1 the Go
// `nrtabi-runtime bootstrap`; each picks its interface on the root's subnet, and the
// three agree.
func TestBoundaryAcrossThreeHosts(t *testing.T) {
	hosts, addrs := netns.Hosts(t, 3)
	requireWorld(t)
	env := []string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir("ref")}
	ms := []worldprog.Member{
		worldprog.WorldHost(worldHostPath(), false, env...),
		worldprog.GoRank(nrtabiPath(), false, env...),
		worldprog.WorldHost(worldHostPath(), false, env...),
	}
	for i := range ms {
		ms[i].Cmd = append([]string{"ip", "netns", "exec", hosts[i]}, ms[i].Cmd...)
	}
	// The seed's group init, so the agreed id names the root rank 0 started
	// on its own interface (the default split id names none).
	runs, _, err := worldprog.Launch(t.Context(), ms, addrs[0]+":29556", []string{abi.EnvSockTimeout + "=" + strconv.Itoa(worldTimeout), "NRTABI_LOG_LEVEL=info",
		abi.EnvBootstrapGroupInit + "=flat"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, bad := worldprog.Agreed(runs); !ok {
		t.Fatalf("host %s rank %d: exit %d %s\n%s", hosts[bad], bad, runs[bad].Exit, runs[bad].Fields["line"], runs[bad].Stderr)
	}
	for r, run := range runs {
		if want := fmt.Sprintf("Bootstrap : Using eth0:%s<0>", addrs[r]); !strings.Contains(run.Stderr, want) {
			t.Errorf("rank %d did not log %q:\n%s", r, want, run.Stderr)
		}
	}
	if id := runs[0].Fields["unique_id"]; !strings.HasPrefix(id, addrs[0]+":") {
		t.Errorf("the agreed unique id %s is not on host 0 (%s)", id, addrs[0])
	}
}

// TestReferenceLibnccomIsClean: `nrtabi check` holds the reference libnccom
// to the spec (layouts from its DWARF and the libnccom link contract: 37
// unversioned neuron* exports, DT_NEEDED libnrt.so.1, the 20 callbacks bound
// @NRT_2.0.0) and finds it CLEAN.
func TestReferenceLibnccomIsClean(t *testing.T) {
	requireWorld(t)
	out, err := exec.Command(checkerPath(), "check", filepath.Join(refLibDir("ref"), builder.LibnccomFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("nrtabi check: %v\n%s", err, out)
	}
	for _, want := range []string{"link contract (libnccom)", "ok   all 37 neuron* defined, unversioned, global functions",
		"ok   DT_NEEDED libnrt.so.1", "ok   the 20 imports bound @NRT_2.0.0", "verdict: CLEAN"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("nrtabi check lacks %q:\n%s", want, out)
		}
	}
}

// TestExtendedFraming: both implementations speak nrtabi's extended framing
// too. A mixed world agrees in it, and a bad peer under a C root is named,
// with the same reason, on every rank: in a Go rank's error, in a C rank's
// log ("bootstrap aborted by the root ...: <reason>").
func TestExtendedFraming(t *testing.T) {
	requireWorld(t)
	ext := "NRTABI_BOOTSTRAP_FRAMING=extended"
	t.Run("mixed world", func(t *testing.T) {
		ms := make([]member, 5)
		for r := range ms {
			ms[r].goRank = r%2 == 1
		}
		runs, _ := runWorld(t, ms, ext)
		agree(t, runs)
	})
	const n = 4
	for _, c := range []struct {
		name string
		bad  member
		want string
	}{
		{"foreign magic", member{goRank: true, env: []string{"NRTABI_BOOTSTRAP_FAULT=bad-magic"}}, " rank 2: bad sanity magic 0x9e869396 in INFO_TO_ROOT"},
		{"skewed git hash", member{lib: "skew"}, ` rank 2 carries nccl_nrt_git_hash libnccom "0000skew"`},
		{"wrong nranks", member{nranks: n + 1}, " rank 2 says nranks 5, this root serves a world of 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := cHosts(n)
			ms[1].goRank = true
			ms[2] = c.bad
			runs, took := runWorld(t, ms, ext)
			if limit := time.Duration(2*worldTimeout)*time.Second + time.Second; took > limit {
				t.Errorf("the world took %s to fail, more than %s", took, limit)
			}
			for r, run := range runs {
				if run.Exit == 0 {
					t.Errorf("rank %d exited 0: %s", r, run.Fields["line"])
					continue
				}
				where := run.Stderr
				if ms[r].goRank {
					where = run.Fields["error"]
				}
				if !strings.Contains(where, c.want) {
					t.Errorf("rank %d does not name the fault %q:\n%s\n%s", r, c.want, run.Fields["line"], run.Stderr)
				}
			}
		})
	}
}

// fieldOffsets looks up a field's offset in the spec's struct, failing the
// test when the spec has no such field (the wire tests read every offset
// from the spec, never from a copy).
func fieldOffsets(t *testing.T, s *spec.Spec) func(st, f string) int {
	return func(st, f string) int {
		t.Helper()
		for _, x := range s.StructByName(st).Fields {
			if x.Name == f {
				return x.Offset
			}
		}
		t.Fatalf("spec struct %s has no field %s", st, f)
		return 0
	}
}
