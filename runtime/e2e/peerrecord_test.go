package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/device"
	"github.com/nrtabi/nrtabi/runtime/nrt"
	"github.com/nrtabi/nrtabi/runtime/worldprog"
)

// The 112-byte peer record of "initTransportRank AllGather1", filled by the
// reference libnccom (C) and the Go transport by one rule (seed 001 §3,
// docs/libnccom.md#the-peer-record, contradiction rows peer-record-fill,
// peer-record-hosthash, peer-record-pidhash). Both sides log, per comm, the
// record a rank made and the process-local inputs it made it from (pid,
// the comm's address), and, on a global init, the maps built from the
// gathered records (global-init-maps).

var (
	peerRecordRE = regexp.MustCompile(`initTransportRank: rank (\d+) peer record pid (\d+) comm 0x([0-9a-f]+): ([0-9a-f]{224})`)
	globalMapsRE = regexp.MustCompile(`initTransportRank: rank (\d+) global init maps: mla_indexes ([-0-9,.]*) host_device_ids ([-0-9,.]*) pod_type (\d+) ultraserver ([01])`)
)

// oracleHash is upstream NCCL 2.9's getHash, written here again from the
// spec's row rather than taken from tcp: h = h*33 ^ c from 5381, c a
// sign-extended char.
func oracleHash(b []byte) uint64 {
	h := uint64(5381)
	for _, c := range b {
		h = h*33 ^ uint64(int64(int8(c)))
	}
	return h
}

// oracleID is the 128-byte unique id of an IPv4 root: a sockaddr_in
// (family 2 little-endian, the port big-endian, the address), zeros after.
func oracleID(t *testing.T, root string) []byte {
	t.Helper()
	ap, err := netip.ParseAddrPort(root)
	if err != nil || !ap.Addr().Is4() {
		t.Fatalf("root %q: want an IPv4 address and port (%v)", root, err)
	}
	id := make([]byte, 128)
	binary.LittleEndian.PutUint16(id[0:], 2)
	binary.BigEndian.PutUint16(id[2:], ap.Port())
	a := ap.Addr().As4()
	copy(id[4:], a[:])
	return id
}

// oracleRecord is rank's record by the spec's rule, from the inputs the
// test sets (the root, the device layer's core 0) or reads from the
// process (its pid, its comm's address); the host is this one.
func oracleRecord(t *testing.T, rank int, id []byte, core device.Identity, pid int, comm uint64) []byte {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skipf("no boot id to hash (%v)", err)
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Skipf("no pid namespace link (%v)", err)
	}
	h := oracleHash(id)
	rec := make([]byte, 112)
	binary.LittleEndian.PutUint32(rec[0:], uint32(rank))
	binary.LittleEndian.PutUint32(rec[4:], uint32(core.NecDev))
	binary.LittleEndian.PutUint64(rec[16:], oracleHash([]byte(host+strings.Fields(string(boot))[0]))+h) // virtual_server_id 0
	binary.LittleEndian.PutUint64(rec[24:], oracleHash([]byte(strconv.Itoa(pid)+ns))+h)
	binary.LittleEndian.PutUint64(rec[88:], comm)
	binary.LittleEndian.PutUint32(rec[96:], uint32(core.HostDeviceID))
	binary.LittleEndian.PutUint32(rec[104:], uint32(core.MLAIdx))
	return rec
}

// peerLine is one logged record with its inputs.
type peerLine struct {
	pid  int
	comm uint64
	rec  []byte
}

func peerLines(t *testing.T, r int, stderr string) []peerLine {
	t.Helper()
	var out []peerLine
	for _, m := range peerRecordRE.FindAllStringSubmatch(stderr, -1) {
		if m[1] != strconv.Itoa(r) {
			t.Errorf("process of rank %d logged a record as rank %s", r, m[1])
		}
		pid, _ := strconv.Atoi(m[2])
		comm, _ := strconv.ParseUint(m[3], 16, 64)
		rec, _ := hex.DecodeString(m[4])
		out = append(out, peerLine{pid, comm, rec})
	}
	return out
}

// masked is a record without its two process-local fields, pidHash (the
// pid) and comm (an address): what two processes in the same rank of the
// same world share byte for byte, whichever side they run.
func masked(rec []byte) []byte {
	m := bytes.Clone(rec)
	clear(m[24:32])
	clear(m[88:96])
	return m
}

// masked16 is a record without its two hashes.
func masked16(rec []byte) []byte {
	m := bytes.Clone(rec)
	clear(m[16:32])
	return m
}

// TestPeerRecordsAcrossImplementations: the same world of 4 ranks through
// one root — all C hosts, all Go ranks, and mixed with the root on either
// side — and a hierarchical mixed world of 6 (instances of 4): on every
// rank, each comm's record (the global comm's, the replica group's, and,
// but for the id's hash, the one between) is the spec's rule applied to
// its inputs, byte for byte; the gathered table
// every rank digests is those records end to end; the records of one rank
// are byte-identical across all the flat worlds but for the pid and the
// comm address; and a global init's maps list every rank's MLA and host
// device id, with neuronIsUltraServer(pod_type).
func TestPeerRecordsAcrossImplementations(t *testing.T) {
	requireWorld(t)
	topo, err := device.Default(nrt.DeviceABI())
	if err != nil {
		t.Fatal(err)
	}
	core, err := topo.CoreIdentity(0)
	if err != nil {
		t.Fatal(err)
	}
	root, err := worldprog.FreeLoopbackRoot()
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	goAll := make([]member, n)
	for r := range goAll {
		goAll[r].goRank = true
	}
	worlds := []struct {
		name string
		ms   []member
		l    int
	}{
		{"all-C", cHosts(n), 0},
		{"all-Go", goAll, 0},
		{"mixed-Go-root", mixedHier(n, true), 0},
		{"mixed-C-root", mixedHier(n, false), 0},
		{"hier-mixed-6x4", mixedHier(6, false), 4},
	}
	flat := make([][][]byte, 0, 4) // world -> rank -> masked global record
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			// The seed's group inits, so every comm gathers records of its
			// own (the default split ones reuse the world's:
			// docs/bootstrap.md#group-comm-split).
			env := []string{"NRTABI_LOG_LEVEL=info", abi.EnvBootstrapGroupInit + "=flat"}
			if w.l > 0 {
				env = append(env, envPerInstance+"="+strconv.Itoa(w.l))
			}
			runs, _ := runWorldAt(t, root, w.ms, env...)
			agree(t, runs)
			k := len(w.ms)
			gid := oracleID(t, root)
			uid := oracleID(t, runs[0].Fields["unique_id"])
			var table []byte
			mine := make([][]byte, k)
			for r, run := range runs {
				side := map[bool]string{true: "Go", false: "C"}[w.ms[r].goRank]
				ls := peerLines(t, r, run.Stderr)
				if len(ls) < 2 {
					t.Errorf("rank %d (%s) logged %d peer records, want the global comm's first and the replica group's last:\n%s", r, side, len(ls), run.Stderr)
					continue
				}
				// The global comm's id is the root's, the replica group's is
				// the unique id it agreed; a comm between them (the global
				// setup's) has an id no process reports, so its record is
				// checked with the id's hash taken out: every field but the
				// two hashes, and hostHash - pidHash, which the id's hash
				// cancels from.
				last := len(ls) - 1
				for i, l := range ls {
					switch i {
					case 0, last:
						id := gid
						if i == last {
							id = uid
						}
						if want := oracleRecord(t, r, id, core, l.pid, l.comm); !bytes.Equal(l.rec, want) {
							t.Errorf("rank %d (%s) comm %d of %d: record\n%x\nwant (the spec's rule)\n%x", r, side, i, len(ls), l.rec, want)
						}
					default:
						want := oracleRecord(t, r, make([]byte, 128), core, l.pid, l.comm)
						d := func(rec []byte) uint64 {
							return binary.LittleEndian.Uint64(rec[16:]) - binary.LittleEndian.Uint64(rec[24:])
						}
						if !bytes.Equal(masked16(l.rec), masked16(want)) || d(l.rec) != d(want) {
							t.Errorf("rank %d (%s) comm %d of %d: record\n%x\nwant, but for the id's hash,\n%x", r, side, i, len(ls), l.rec, want)
						}
					}
				}
				table = append(table, ls[0].rec...)
				mine[r] = masked(ls[0].rec)
				mm := globalMapsRE.FindAllStringSubmatch(run.Stderr, -1)
				rep := func(v int) string { return strings.TrimSuffix(strings.Repeat(strconv.Itoa(v)+",", k), ",") }
				ultra := "0"
				if core.PodType == 1 || core.PodType == 2 {
					ultra = "1"
				}
				if len(mm) != 1 || mm[0][2] != rep(core.MLAIdx) || mm[0][3] != rep(core.HostDeviceID) || mm[0][4] != fmt.Sprint(core.PodType) || mm[0][5] != ultra {
					t.Errorf("rank %d (%s): global init maps %q, want mla_indexes %s host_device_ids %s pod_type %d ultraserver %s, once", r, side, mm, rep(core.MLAIdx), rep(core.HostDeviceID), core.PodType, ultra)
				}
			}
			// Every rank digests the gathered global table: it must be the
			// records above end to end.
			want := fmt.Sprintf("%016x", oracleHash(table))
			for r, run := range runs {
				got := run.Fields["table"]
				if !w.ms[r].goRank {
					if m := tablesRE.FindStringSubmatch(run.Stderr); m != nil {
						got = m[2]
					}
				}
				if got != want {
					t.Errorf("rank %d (go=%v) gathered a table of digest %q, the records make %s", r, w.ms[r].goRank, got, want)
				}
			}
			if w.l == 0 {
				flat = append(flat, mine)
			}
		})
	}
	t.Run("all-C-distinct-cores", func(t *testing.T) { distinctCores(t, root) })
	if len(flat) != 4 {
		t.Fatalf("%d flat worlds ran", len(flat))
	}
	for i := 1; i < len(flat); i++ {
		for r := range n {
			if !bytes.Equal(flat[i][r], flat[0][r]) {
				t.Errorf("rank %d: %s's record (pid and comm masked)\n%x\n%s's\n%x", r, worlds[i].name, flat[i][r], worlds[0].name, flat[0][r])
			}
		}
	}
}

// distinctCores: a C world of 4 whose rank r's core 0 is device r (the
// default topology with its [[core]] rows rotated, given to libnrt through
// NRTABI_WORLDHOST_TOPOLOGY), so every rank's cudaDev, MLA and host device
// id differ: each record is the rule applied to its own rank's core, and
// every rank's global maps list all four ranks' MLAs and host device ids
// in rank order, read from the gathered records.
func distinctCores(t *testing.T, root string) {
	src, err := os.ReadFile(filepath.Join("..", "device", "default.toml"))
	if err != nil {
		t.Fatal(err)
	}
	head, coresText, ok := strings.Cut(string(src), "[[core]]")
	if !ok {
		t.Fatal("default.toml has no [[core]] rows")
	}
	cores := strings.Split("[[core]]"+coresText, "[[core]]")[1:]
	const n = 4
	if len(cores) < n {
		t.Fatalf("default.toml has %d cores, want %d", len(cores), n)
	}
	ms := cHosts(n)
	ids := make([]device.Identity, n)
	for r := range n {
		var b strings.Builder
		b.WriteString(head)
		for i := range cores {
			b.WriteString("[[core]]" + cores[(i+r)%len(cores)])
		}
		path := filepath.Join(t.TempDir(), fmt.Sprintf("rank%d.toml", r))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		topo, err := device.LoadTopology(path, nrt.DeviceABI())
		if err != nil {
			t.Fatal(err)
		}
		if ids[r], err = topo.CoreIdentity(0); err != nil {
			t.Fatal(err)
		}
		ms[r].env = []string{"NRTABI_WORLDHOST_TOPOLOGY=" + path}
	}
	if ids[1].MLAIdx == ids[0].MLAIdx || ids[1].HostDeviceID == ids[0].HostDeviceID {
		t.Fatalf("the rotated topologies do not give the ranks distinct cores: %+v", ids)
	}
	runs, _ := runWorldAt(t, root, ms, "NRTABI_LOG_LEVEL=info")
	agree(t, runs)
	var mla, hdi []string
	for _, id := range ids {
		mla = append(mla, strconv.Itoa(id.MLAIdx))
		hdi = append(hdi, strconv.Itoa(id.HostDeviceID))
	}
	gid := oracleID(t, root)
	for r, run := range runs {
		ls := peerLines(t, r, run.Stderr)
		if len(ls) == 0 {
			t.Errorf("rank %d logged no peer record:\n%s", r, run.Stderr)
			continue
		}
		if want := oracleRecord(t, r, gid, ids[r], ls[0].pid, ls[0].comm); !bytes.Equal(ls[0].rec, want) {
			t.Errorf("rank %d: record\n%x\nwant\n%x", r, ls[0].rec, want)
		}
		mm := globalMapsRE.FindAllStringSubmatch(run.Stderr, -1)
		if len(mm) != 1 || mm[0][2] != strings.Join(mla, ",") || mm[0][3] != strings.Join(hdi, ",") {
			t.Errorf("rank %d: global init maps %q, want mla_indexes %s host_device_ids %s", r, mm, strings.Join(mla, ","), strings.Join(hdi, ","))
		}
	}
}
