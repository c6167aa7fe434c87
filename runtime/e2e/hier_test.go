package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
	"github.com/nrtabi/nrtabi/runtime/builder"
	"github.com/nrtabi/nrtabi/runtime/transport/tcp"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The hierarchical bootstrap of the reference libnccom (docs/libnccom.md,
// docs/bootstrap-hierarchy.md) in C worlds through ld.so: every rank a C
// host whose libnrt dlopens libnccom, NRTABI_BOOTSTRAP_PER_INSTANCE giving
// L. A "faults" build carries the test-only hooks (NCCOM_REF_FAULTS) that
// kill a leader or a non-leader mid-gather or misstate a rank's instance.

const envPerInstance = "NRTABI_BOOTSTRAP_PER_INSTANCE"

var (
	hierOnce sync.Once
	hierErr  error
)

func requireHierWorld(t *testing.T) {
	t.Helper()
	requireWorld(t)
	hierOnce.Do(func() {
		_, hierErr = tree.BuildLibnccom(t.Context(), libnrtDir(), refLibDir("faults"), builder.Libnccom{Faults: true})
	})
	if hierErr != nil {
		t.Fatal(hierErr)
	}
}

// tablesRE is libnccom's INFO line after the 112-byte peer all-gather:
// digests of the gathered address and peer tables, and which path ran.
var tablesRE = regexp.MustCompile(`gathered tables: addresses ([0-9a-f]{16}) peers ([0-9a-f]{16}) \((flat|hierarchical)\)`)

// sameTables checks that every rank gathered identical tables over the
// hierarchical path (a world that silently went flat fails here).
func sameTables(t *testing.T, runs []worldprog.Run) {
	t.Helper()
	var first []string
	for r, run := range runs {
		m := tablesRE.FindStringSubmatch(run.Stderr)
		if m == nil {
			t.Errorf("rank %d logged no gathered tables:\n%s", r, run.Stderr)
			continue
		}
		if m[3] != "hierarchical" {
			t.Errorf("rank %d ran the %s bootstrap, not the hierarchical one", r, m[3])
		}
		if first == nil {
			first = m
		} else if m[1] != first[1] || m[2] != first[2] {
			t.Errorf("rank %d gathered tables %s/%s, the first rank %s/%s", r, m[1], m[2], first[1], first[2])
		}
	}
}

// hierWorld runs n C hosts with L ranks per instance.
func hierWorld(t *testing.T, ms []member, L int, extra ...string) ([]worldprog.Run, time.Duration) {
	t.Helper()
	env := append([]string{envPerInstance + "=" + strconv.Itoa(L), "NRTABI_LOG_LEVEL=info"}, extra...)
	return runWorld(t, ms, env...)
}

// TestHierarchicalWorlds: H instances of L C hosts agree on one world, with
// identical gathered tables on every rank, in both framings; the uneven
// world's last instance is short.
func TestHierarchicalWorlds(t *testing.T) {
	requireHierWorld(t)
	for _, c := range []struct{ h, l, n int }{{2, 2, 4}, {4, 8, 32}, {8, 8, 64}, {3, 4, 10}, {2, 4, 5}, {5, 1, 5}} {
		for _, framing := range []string{"default", "extended"} {
			t.Run(fmt.Sprintf("%dx%d-n%d-%s", c.h, c.l, c.n, framing), func(t *testing.T) {
				// Sixty-four processes starting on two cores: the socket
				// timeout covers their start-up skew, not the protocol.
				runs, took := hierWorld(t, cHosts(c.n), c.l, framingEnv(framing), abi.EnvSockTimeout+"=20")
				agree(t, runs)
				sameTables(t, runs)
				t.Logf("%d C hosts as %d instances of %d agreed in %s", c.n, c.h, c.l, took)
			})
		}
	}
}

// TestHierarchicalDispatch: nranks <= L is flat (the root-side condition of
// the bootstrap-dispatch row), and an L that is not a number of ranks is
// refused by name on every rank.
func TestHierarchicalDispatch(t *testing.T) {
	requireHierWorld(t)
	t.Run("n<=L is flat", func(t *testing.T) {
		runs, _ := hierWorld(t, cHosts(4), 4)
		agree(t, runs)
		for r, run := range runs {
			if m := tablesRE.FindStringSubmatch(run.Stderr); m == nil || m[3] != "flat" {
				t.Errorf("rank %d: want the flat bootstrap for 4 ranks with L=4:\n%s", r, run.Stderr)
			}
		}
	})
	for _, bad := range []string{"0", "-2", "abc", "4x", "65537", "\x1b[31m"} {
		t.Run(strconv.Quote(bad), func(t *testing.T) {
			runs, took := runWorld(t, cHosts(3), envPerInstance+"="+bad)
			if limit := time.Duration(2*worldTimeout)*time.Second + time.Second; took > limit {
				t.Errorf("the world took %s to fail, more than %s", took, limit)
			}
			for r, run := range runs {
				if run.Exit == 0 {
					t.Errorf("rank %d exited 0 with %s=%q", r, envPerInstance, bad)
				}
				if !strings.Contains(run.Stderr, envPerInstance+"=") || !strings.Contains(run.Stderr, "is not a number of ranks per instance in 1..") {
					t.Errorf("rank %d does not name %s:\n%s", r, envPerInstance, run.Stderr)
				}
				if strings.Contains(run.Stderr, "\x1b") {
					t.Errorf("rank %d logged the variable's control byte unescaped", r)
				}
			}
		})
	}
}

// TestHierarchicalFaults plants one fault in a world of 8 C hosts as two
// instances of 4 (leaders 0 and 4; rank 0 serves the root), in both
// framings: every rank exits non-zero within the bound, and the rank that
// can see the fault names it (the root, or the dead rank's ring successor).
func TestHierarchicalFaults(t *testing.T) {
	requireHierWorld(t)
	const n, L = 8, 4
	tag := func(nccom string) string {
		trim := func(s string) string { return strings.TrimRight(first8(s), "\x00") }
		return fmt.Sprintf("libnccom %q + libnrt %q", trim(nccom), trim(abi.LibnrtGit))
	}
	fault := func(name string) member {
		return member{lib: "faults", env: []string{"NRTABI_NCCOM_FAULT=" + name}}
	}
	type saw struct {
		rank int
		text string
	}
	const closed = "closed its root connection before the world was complete"
	for _, c := range []struct {
		name  string
		at    int
		bad   member
		both  []saw // named in either framing
		ext   []saw // and in the extended one
		def   []saw // and in the default one
		abort bool  // the root refuses the world: its reason reaches every rank (extended)
		late  bool  // the extended root sleeps before it reads RING_DONE (root-late)
	}{
		{name: "leader dies mid-gather", at: 4, bad: fault("die-leader"),
			both: []saw{{0, "inter ring predecessor (leader) rank 4"}, {5, "intra ring predecessor rank 4"}},
			ext:  []saw{{0, closed}}},
		// The root finds every failure at once, the echoes before the
		// death in rank order: it must still name the rank that died.
		{name: "leader dies, the root late", at: 4, bad: fault("die-leader"), late: true,
			both: []saw{{0, "inter ring predecessor (leader) rank 4"}, {5, "intra ring predecessor rank 4"}},
			ext:  []saw{{0, "rank 4 (listening on 127.0.0.1:"}, {0, ", after its INFO_FROM_ROOT went out, before its RING_DONE) " + closed}}},
		{name: "non-leader dies", at: 6, bad: fault("die-nonleader"),
			both: []saw{{7, "intra ring predecessor rank 6"}},
			ext:  []saw{{0, closed}}},
		{name: "rank in the wrong instance", at: 5, bad: fault("wrong-instance"), abort: true,
			both: []saw{{0, "rank 5 claims instance 0, but rank 5 with per_instance 4 is in instance 1: a rank in the wrong instance"}}},
		{name: "another instance shape", at: 3, bad: member{env: []string{envPerInstance + "=2"}}, abort: true,
			both: []saw{{0, "rank 3 reports per_instance 2, the root 4: set " + envPerInstance}}},
		{name: "skewed git hash", at: 2, bad: member{lib: "skew"}, abort: true,
			def: []saw{{0, cfmt.Sprintf(abi.MsgNccomRootGitHashMismatch, 2, tag(skewHash), 0, tag(abi.LibnccomGit))}},
			ext: []saw{{0, ` rank 2 carries nccl_nrt_git_hash libnccom "0000skew"`}}},
		{name: "a flat root", at: 0, bad: member{env: []string{envPerInstance + "="}}, abort: true,
			def: []saw{{0, "sent a 64-byte extInfo, expected 56 (a flat world at this root; 64 bytes is a hierarchical rank's extInfoHier: set " + envPerInstance}},
			ext: []saw{{0, "sent a 64-byte message of type 1, expected a 56-byte INFO_TO_ROOT record (a flat world at this root"}}},
		{name: "a flat rank", at: 6, bad: member{env: []string{envPerInstance + "="}}, abort: true,
			def: []saw{{0, "sent a 56-byte extInfo, expected 64 (extInfoHier"}},
			ext: []saw{{0, "sent a 56-byte message of type 1, expected a 64-byte INFO_TO_ROOT record (extInfoHier"}}},
	} {
		for _, framing := range []string{"default", "extended"} {
			t.Run(c.name+"/"+framing, func(t *testing.T) {
				ms := cHosts(n)
				ms[c.at] = c.bad
				if c.late {
					ms[0] = fault("root-late")
				}
				runs, took := hierWorld(t, ms, L, framingEnv(framing))
				// The flat fault worlds' bound; the extended root may wait
				// out the timeout twice for RING_DONE (docs/libnccom.md).
				limit := time.Duration(2*worldTimeout)*time.Second + time.Second
				if framing == "extended" {
					limit = time.Duration(3*worldTimeout)*time.Second + time.Second
				}
				if took > limit {
					t.Errorf("the world took %s to fail, more than %s", took, limit)
				}
				for r, run := range runs {
					if run.Exit == 0 {
						t.Errorf("rank %d exited 0: %s", r, run.Fields["line"])
					}
				}
				checks := append([]saw(nil), c.both...)
				if framing == "extended" {
					checks = append(checks, c.ext...)
				} else {
					checks = append(checks, c.def...)
				}
				for _, w := range checks {
					// A rank that dies is named by its ring neighbours, or by
					// the abort frame a neighbour's neighbour sent on, or (in
					// the extended framing) by the root's ABORT, whichever came
					// first (docs/bootstrap-hierarchy.md#abort-frames).
					relayed := strings.Contains(c.name, "dies") && (namesDead(runs[w.rank].Stderr, c.at) ||
						strings.Contains(runs[w.rank].Stderr, fmt.Sprintf("rank %d (listening on ", c.at)))
					if !strings.Contains(runs[w.rank].Stderr, w.text) && !relayed {
						t.Errorf("rank %d did not log %q:\n%s", w.rank, w.text, runs[w.rank].Stderr)
					}
				}
				if strings.Contains(c.name, "dies") {
					for r, run := range runs {
						if blamed := hungUpNamed(run.Stderr); len(blamed) > 0 && !slices.Equal(blamed, []int{c.at}) {
							t.Errorf("rank %d heard that ranks %v hung up, but only rank %d died:\n%s", r, blamed, c.at, run.Stderr)
						}
					}
				}
				if framing == "extended" && c.abort {
					for r, run := range runs {
						if !strings.Contains(run.Stderr, "bootstrap aborted by") && r != 0 {
							t.Errorf("rank %d did not hear the root's ABORT:\n%s", r, run.Stderr)
						}
					}
				}
			})
		}
	}
}

// TestHierarchicalUnderSanitizers: an uneven hierarchical world (instances
// of 4 and 2) with libnccom under ASan/UBSan, in both framings.
func TestHierarchicalUnderSanitizers(t *testing.T) {
	requireHierWorld(t)
	pre, err := builder.SanitizerRuntime(t.Context())
	if err != nil {
		t.Skipf("no sanitizer runtime to preload: %v", err)
	}
	for _, framing := range []string{"default", "extended"} {
		t.Run(framing, func(t *testing.T) {
			ms := cHosts(6)
			for r := range ms {
				ms[r].lib = "asan"
			}
			runs, _ := hierWorld(t, ms, 4, framingEnv(framing), "LD_PRELOAD="+pre,
				"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1", abi.EnvSockTimeout+"=20")
			agree(t, runs)
			sameTables(t, runs)
			for r, run := range runs {
				if strings.Contains(run.Stderr, "Sanitizer") || strings.Contains(run.Stderr, "runtime error") {
					t.Errorf("rank %d: a sanitizer spoke:\n%s", r, run.Stderr)
				}
			}
		})
	}
}

// framingEnv selects a framing: "default" is NCCL 2.9's (upstream).
func framingEnv(framing string) string {
	if framing == "default" {
		return "NRTABI_BOOTSTRAP_FRAMING=upstream"
	}
	return "NRTABI_BOOTSTRAP_FRAMING=" + framing
}

// TestHierarchicalWireBytes records the root connections of a hierarchical
// default-framing world of C hosts (6 ranks as instances of 4 and 2, the C
// root on rank 0) through a tap and checks each byte against the spec's
// rows (docs/bootstrap-hierarchy.md#the-root): one bootstrap_frame_size then
// an extInfoHier up (magic, rank, nranks, per_instance, instance, the
// git-hash weld), one bootstrap_frame_size then a bootstrap_root_reply_hier
// down (the instance arithmetic, intra_next the listen address of the
// instance successor, inter_next only for a leader), then the root closes.
func TestHierarchicalWireBytes(t *testing.T) {
	requireHierWorld(t)
	s := tree.Spec
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	tap := newWireTap(t, root)
	const n, L = 6, 4
	env := []string{"LD_LIBRARY_PATH=" + libnrtDir() + ":" + refLibDir("ref"), envPerInstance + "=" + strconv.Itoa(L)}
	tapAddr := tap.ln.Addr().String()
	ms := make([]worldprog.Member, n)
	for r := range ms {
		ms[r] = worldprog.WorldHost(worldHostPath(), false, env...)
		if r > 0 {
			args := ms[r].Args
			ms[r].Args = func(rank, nranks int, _ string) []string { return args(rank, nranks, tapAddr) }
		}
	}
	runs, _, err := worldprog.Launch(t.Context(), ms, root, []string{abi.EnvSockTimeout + "=" + strconv.Itoa(worldTimeout), "NRTABI_LOG_LEVEL=info"})
	if err != nil {
		t.Fatal(err)
	}
	tap.close()
	agree(t, runs)
	sameTables(t, runs)

	field := fieldOffsets(t, s)
	frame := s.StructByName("bootstrap_frame_size").Size
	up, down := s.StructByName("extInfoHier").Size, s.StructByName("bootstrap_root_reply_hier").Size
	addrSize := s.StructByName("nccl_socket_address_t").Size
	sanity, _ := s.ConstantByName("BOOTSTRAP_SANITY").Int()
	info := field("extInfoHier", "info") + field("extInfoGlobal", "info")
	listen := info + field("extInfo", "extAddressListen")
	le32 := func(b []byte, off int) int { return int(int32(binary.LittleEndian.Uint32(b[off:]))) }
	wantTag := first8(abi.LibnccomGit) + first8(tcp.ReleaseNRTGit())
	if len(tap.up) != n-1 {
		t.Fatalf("%d connections through the tap, want %d (ranks 1..%d)", len(tap.up), n-1, n-1)
	}
	addr := map[int][]byte{} // rank -> its listen address, as it reported it
	replies := map[int][]byte{}
	for i := range tap.up {
		u, d := tap.up[i], tap.down[i]
		if len(u) != frame+up || le32(u, 0) != up {
			t.Errorf("connection %d up: %d bytes, size prefix %d; want one frame of %d (bootstrap_frame_size + extInfoHier)", i, len(u), le32(u, 0), up)
			continue
		}
		rec := u[frame:]
		rank := le32(rec, info+field("extInfo", "rank"))
		if got := uint32(le32(rec, info+field("extInfo", "sanity"))); int64(got) != sanity {
			t.Errorf("rank %d: sanity %#x, want %#x", rank, got, sanity)
		}
		if nr := le32(rec, info+field("extInfo", "nranks")); nr != n || rank < 1 || rank >= n || addr[rank] != nil {
			t.Fatalf("record rank %d nranks %d", rank, nr)
		}
		addr[rank] = rec[listen : listen+addrSize]
		if tag := string(rec[field("extInfoHier", "info")+field("extInfoGlobal", "nccl_nrt_git_hash"):][:16]); tag != wantTag {
			t.Errorf("rank %d: nccl_nrt_git_hash %q, want %q", rank, tag, wantTag)
		}
		if per, inst := le32(rec, field("extInfoHier", "per_instance")), le32(rec, field("extInfoHier", "instance")); per != L || inst != rank/L {
			t.Errorf("rank %d: per_instance %d instance %d, want %d and %d", rank, per, inst, L, rank/L)
		}
		if len(d) != frame+down || le32(d, 0) != down {
			t.Errorf("rank %d down: %d bytes, size prefix %d; want one frame of %d (bootstrap_root_reply_hier), then close", rank, len(d), le32(d, 0), down)
			continue
		}
		replies[rank] = d[frame:]
	}
	zero := make([]byte, addrSize)
	for rank, reply := range replies {
		h, H := rank/L, (n+L-1)/L
		lh := min(L, n-h*L)
		for _, f := range []struct {
			name string
			want int
		}{{"instance", h}, {"ninstances", H}, {"local_rank", rank % L}, {"local_n", lh}} {
			if got := le32(reply, field("bootstrap_root_reply_hier", f.name)); got != f.want {
				t.Errorf("rank %d: reply %s %d, want %d", rank, f.name, got, f.want)
			}
		}
		cluster := binary.LittleEndian.Uint64(reply[field("bootstrap_root_reply_hier", "cluster_id"):])
		if got := fmt.Sprintf("%#016x", cluster); got != runs[rank].Fields["cluster_id"] {
			t.Errorf("rank %d: the reply's cluster_id %s, the rank reports %s", rank, got, runs[rank].Fields["cluster_id"])
		}
		at := func(f string) []byte {
			o := field("bootstrap_root_reply_hier", f)
			return reply[o : o+addrSize]
		}
		next := h*L + (rank%L+1)%lh
		if want := addr[next]; want != nil && !bytes.Equal(at("intra_next"), want) {
			t.Errorf("rank %d: intra_next %x, want rank %d's listen address %x", rank, at("intra_next"), next, want)
		} else if want == nil && binary.LittleEndian.Uint16(at("intra_next")) != 2 {
			t.Errorf("rank %d: intra_next (rank %d) family %d, want AF_INET", rank, next, binary.LittleEndian.Uint16(at("intra_next")))
		}
		inter := at("inter_next")
		switch {
		case rank%L != 0 && !bytes.Equal(inter, zero):
			t.Errorf("rank %d, not a leader: inter_next %x, want all zero", rank, inter)
		case rank%L == 0:
			leader := ((h + 1) % H) * L
			if want := addr[leader]; want != nil && !bytes.Equal(inter, want) {
				t.Errorf("rank %d: inter_next %x, want leader %d's listen address %x", rank, inter, leader, want)
			} else if want == nil && binary.LittleEndian.Uint16(inter) != 2 {
				t.Errorf("rank %d: inter_next (leader %d) family %d, want AF_INET", rank, leader, binary.LittleEndian.Uint16(inter))
			}
		}
	}
}

// hungUp finds the ranks a root said closed their root connections (each
// "peer ADDR rank R", with what the root knew of it in parentheses).
var (
	hungUp     = regexp.MustCompile(`((?:peer \S+ rank \d+(?: \([^)]*\))?(?:, )?)+) closed (?:its root connection|their root connections)`)
	hungUpRank = regexp.MustCompile(`peer \S+ rank (\d+)`)
)

// hungUpNamed is every rank text says hung up on its root, each once, in order.
func hungUpNamed(text string) []int {
	var out []int
	for _, m := range hungUp.FindAllStringSubmatch(text, -1) {
		for _, who := range hungUpRank.FindAllStringSubmatch(m[1], -1) {
			if r, err := strconv.Atoi(who[1]); err == nil && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}
