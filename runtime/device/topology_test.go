package device

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// testABI uses numbers unlike any release's, so a test sees that the
// topology reports the injected codes and not numbers of its own.
var testABI = ABI{PodTypes: map[string]uint32{"none": 10, "p2p": 11, "switch": 12, "invalid": 13}, MsgNoCore: "Failed to find core %u",
	MaxArchName: 16, MaxDeviceRevision: 8, MaxDevices: 4}

func mustDefault(t *testing.T) *Topology {
	t.Helper()
	top, err := Default(testABI)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func TestDefaultTopology(t *testing.T) {
	top := mustDefault(t)
	if got := top.Devices(); len(got) != 4 || got[0] != 0 || got[3] != 3 {
		t.Errorf("Devices() = %v", got)
	}
	if b, err := top.PCIBDF(2); err != nil || b.String() != "0000:20:1c.0" {
		t.Errorf("PCIBDF(2) = %v, %v", b, err)
	}
	if _, err := top.PCIBDF(9); err == nil || !strings.Contains(err.Error(), "no device 9") {
		t.Errorf("PCIBDF(9) error = %v", err)
	}
	if v, _ := top.VirtualCoreSize(); v != 2 {
		t.Errorf("VirtualCoreSize = %d", v)
	}
	if n := top.TotalVNCCount(); n != 4 {
		t.Errorf("TotalVNCCount = %d", n)
	}
	inst := top.Instance()
	if inst.Family != "trn2" || inst.FamilyID != 5 || inst.Size != 48 {
		t.Errorf("Instance = %+v", inst)
	}
	if !top.RemapsPorts(5) || top.RemapsPorts(4) {
		t.Error("RemapsPorts: trn2 family 5 remaps, other numbers do not")
	}
	if p, _ := top.Port(0, 0); p != 1 {
		t.Errorf("Port(0,0) = %d, want 1 (port_remap)", p)
	}
	if p, _ := top.Port(0, 7); p != 7 {
		t.Errorf("Port(0,7) = %d, want 7 (beyond port_remap: unchanged)", p)
	}
	if m, _ := top.PeerMLA(0, 1, 0); m != 2 {
		t.Errorf("PeerMLA(0,1,0) = %d, want 2", m)
	}
	if m, _ := top.PeerMLA(0, 1, 3); m != -1 {
		t.Errorf("PeerMLA(0,1,3) = %d, want -1", m)
	}
	if _, err := top.PeerMLA(0, 1, 4); err == nil {
		t.Error("PeerMLA beyond the ports: no error")
	}
	if r, _ := top.MLAToRID(0, 2); r != 3 {
		t.Errorf("MLAToRID(0,2) = %d, want 3", r)
	}
	if m, _ := top.RIDToMLA(0, 3); m != 2 {
		t.Errorf("RIDToMLA(0,3) = %d, want 2", m)
	}
	if _, err := top.RIDToMLA(0, 9); err == nil {
		t.Error("RIDToMLA of an unknown rid: no error")
	}
	if !top.MLAAvailable(0, 3) || top.MLAAvailable(0, 4) || top.MLAAvailable(7, 0) {
		t.Error("MLAAvailable")
	}
	ports, err := top.PortMap(3)
	if err != nil || len(ports) != 4 || ports[0] != (Port{MLA: 0, HostDeviceID: 0}) || ports[2] != (Port{MLA: -1, HostDeviceID: -1}) {
		t.Errorf("PortMap(3) = %v, %v", ports, err)
	}
}

func TestIdentity(t *testing.T) {
	top := mustDefault(t)
	id, err := top.CoreIdentity(2)
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{NecDev: 2, MLAIdx: 2, HostDeviceID: 2, RoutingID: 3, VtpbIdx: 0, PodType: 11, PodNodeID: 0, PodSize: 2}
	if id != want {
		t.Errorf("CoreIdentity(2) = %+v, want %+v", id, want)
	}
	if _, err := top.CoreIdentity(4); err == nil || !strings.HasPrefix(err.Error(), "Failed to find core 4 ") {
		t.Errorf("CoreIdentity(4) error = %v", err)
	}
	var src IdentitySource = top
	if src.VirtualServerSize() != 0 {
		t.Error("VirtualServerSize")
	}
}

func TestPod(t *testing.T) {
	top := mustDefault(t)
	if n, err := top.P2PPodPeerNode(0, 1, 3); err != nil || n != 0 {
		t.Errorf("P2PPodPeerNode(0,1,3) = %d, %v; want 0 (ring of 2)", n, err)
	}
	if _, err := top.P2PPodPeerNode(0, 2, 1); err == nil {
		t.Error("P2PPodPeerNode outside the pod: no error")
	}
	for _, c := range []struct {
		typ, a, b uint32
		want, err bool
	}{
		{10, 0, 0, true, false}, {10, 0, 1, false, false},
		{11, 0, 1, true, false}, {11, 0, 2, false, true},
		{12, 1, 0, true, false}, {13, 0, 0, false, true}, {99, 0, 0, false, true},
	} {
		got, err := top.PodNodeCanAccess(c.typ, 0, c.a, 1, c.b)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("PodNodeCanAccess(type %d, %d->%d) = %v, %v", c.typ, c.a, c.b, got, err)
		}
	}
}

func TestPrintk(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	mustDefault(t).Printk("neuron: hello", 3)
	if !strings.Contains(buf.String(), `level=INFO msg=ndl_printk text="neuron: hello" action=3`) {
		t.Errorf("log = %q", buf.String())
	}
}

func TestParseBDF(t *testing.T) {
	for s, want := range map[string]string{"0000:10:1c.0": "0000:10:1c.0", "10:1f.7": "0000:10:1f.7", "ffff:ff:00.1": "ffff:ff:00.1"} {
		b, err := ParseBDF(s)
		if err != nil || b.String() != want {
			t.Errorf("ParseBDF(%q) = %v, %v", s, b, err)
		}
	}
	for _, s := range []string{"", "10:1c", "0000:100:1c.0", "0000:10:20.0", "0000:10:1c.8", "x:10:1c.0", "0000:10:.0"} {
		if _, err := ParseBDF(s); err == nil {
			t.Errorf("ParseBDF(%q): no error", s)
		}
	}
}

// Each bad file is the default with one edit; the error must name the file,
// the line and the field, and say how to fix it.
func TestTopologyErrors(t *testing.T) {
	base := string(defaultTOML)
	for _, c := range []struct {
		name, old, new string
		want           string
	}{
		{"syntax", "[pod]", "[pod", "bad.toml:16: "},
		{"unknown key", "vcore_size = 2", "vcore_size = 2\nvcore_sise = 3", "bad.toml:12: instance.vcore_sise: unknown key"},
		{"family", `family = "trn2"`, `family = "Trn 2"`, "bad.toml:6: instance.family: \"Trn 2\" is not a family name"},
		{"family id", "family_id = 5\n", "", "bad.toml:5: instance.family_id: missing"},
		{"vcore", "vcore_size = 2", "vcore_size = 0", "bad.toml:11: instance.vcore_size: must be at least 1"},
		{"remap", "port_remap = [1, 0, 3, 2]", "port_remap = [1, 1, 3, 2]", "bad.toml:13: instance.port_remap: entry 1 (1)"},
		{"pod type", `type = "p2p"`, `type = "ring"`, `bad.toml:16: pod.type: "ring" is not a pod type; use one of none, p2p, switch`},
		{"pod invalid", `type = "p2p"`, `type = "invalid"`, `pod.type: "invalid" is not a pod type`},
		{"pod node", "node = 0", "node = 2", "bad.toml:18: pod.node: 2 is not below the pod size 2"},
		{"bdf", `bdf = "0000:20:1c.0"`, `bdf = "0000:20:1c"`, `bad.toml:33: device[2].bdf: "0000:20:1c" is not a PCI address`},
		{"device mla", "id = 3\nbdf = \"0000:20:1d.0\"\nmla = 3", "id = 3\nbdf = \"0000:20:1d.0\"\nmla = 8", "bad.toml:39: device[3].mla: MLA 8 has no [[mla]] row"},
		{"dup device", "id = 1\nbdf", "id = 0\nbdf", "bad.toml:27: device[1].id: device 0 is already described by device[0]"},
		{"dup rid", "rid = 3", "rid = 1", "bad.toml:55: mla[2].rid: routing id 1 is already used by mla[1]"},
		{"peer", "peers = [3, 1, -1, -1]", "peers = [3, 9, -1, -1]", "bad.toml:57: mla[2].peers: port 1 names MLA 9"},
		{"core device", "device = 3\nvtpb", "device = 4\nvtpb", "bad.toml:78: core[3].device: device 4 has no [[device]] row"},
		{"negative", "size = 48", "size = -1", "bad.toml:8: instance.size: -1 is out of range for uint32; write a value of the type"},
		{"type", "size = 2\nnode", "size = \"two\"\nnode", `bad.toml:17: pod.size: incompatible types: TOML value has type string`},
		{"type in a table array", `bdf = "0000:20:1c.0"`, `bdf = 7`, "bad.toml:33: device[2].bdf: incompatible types"},
		{"array for a number", "rid = 3", "rid = [3]", "bad.toml:55: mla[2].rid: incompatible types"},
		{"range in a table array", "device = 1\nvtpb = 0", "device = 1\nvtpb = -1", "bad.toml:71: core[1].vtpb: -1 is out of range for uint32"},
		{"arch name", `arch_name = "trn2"`, `arch_name = "0123456789abcdef"`, "bad.toml:9: instance.arch_name: \"0123456789abcdef\" is 16 bytes"},
		{"revision", `device_revision = "1.0"`, `device_revision = "1.0.0.0.0"`, "bad.toml:10: instance.device_revision:"},
		{"max devices", "id = 3\nbdf", "id = 4\nbdf", "bad.toml:37: device[3].id: 4 is not below NEC_MAX_DEVICES (4)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(base, c.old, c.new, 1)
			if src == base {
				t.Fatalf("the edit %q did not apply", c.old)
			}
			_, err := ParseTopology("bad.toml", []byte(src), testABI)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, c.want)
			}
			if err != nil && strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestLoadTopologyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.toml")
	if err := os.WriteFile(p, defaultTOML, 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := LoadTopology(p, testABI)
	if err != nil || top.File() != p {
		t.Fatalf("LoadTopology = %v, %v", top, err)
	}
	if _, err := LoadTopology(filepath.Join(dir, "missing.toml"), testABI); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadTopology(dir, testABI); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTopology(fifo, testABI); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO (a read would block forever): %v", err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, append(defaultTOML, bytes.Repeat([]byte("# pad\n"), MaxTopologyBytes/6)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTopology(big, testABI); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file over the cap: %v", err)
	}
}

// A pod of more than 2^31 nodes: the ring arithmetic is 64-bit, so access is
// symmetric and the ring neighbours P2PPodPeerNode names are the ones
// PodNodeCanAccess lets through, right up to the last node.
func TestHugePodIsSymmetric(t *testing.T) {
	for _, size := range []uint32{1<<31 + 1, 3_000_000_000, 1<<32 - 1} {
		top := mustDefault(t)
		top.podSize = size
		last := size - 1
		var nodes []uint32
		for _, n := range []uint32{0, 1, 2, 1 << 30, 1<<31 - 1, 1 << 31, 1<<31 + 1, last - 1, last} {
			if n < size {
				nodes = append(nodes, n)
			}
		}
		for _, a := range nodes {
			for _, b := range nodes {
				ab, err1 := top.PodNodeCanAccess(11, 0, a, 0, b)
				ba, err2 := top.PodNodeCanAccess(11, 0, b, 0, a)
				if err1 != nil || err2 != nil || ab != ba {
					t.Fatalf("pod of %d: %d->%d = %v, %d->%d = %v (%v, %v)", size, a, b, ab, b, a, ba, err1, err2)
				}
				d := (uint64(b) + uint64(size) - uint64(a)) % uint64(size)
				if want := d == 0 || d == 1 || d == uint64(size)-1; ab != want {
					t.Fatalf("pod of %d: %d->%d = %v, want %v", size, a, b, ab, want)
				}
			}
		}
		for _, a := range []uint32{0, 1<<31 - 1, last} {
			for _, dist := range []uint32{1, size - 1} {
				p, err := top.P2PPodPeerNode(0, int(a), dist)
				if err != nil {
					t.Fatal(err)
				}
				if ok, _ := top.PodNodeCanAccess(11, 0, a, 0, uint32(p)); !ok {
					t.Fatalf("pod of %d: the peer %d of node %d at distance %d is not accessible", size, p, a, dist)
				}
			}
		}
		if ok, _ := top.PodNodeCanAccess(11, 0, 0, 0, last); !ok {
			t.Fatalf("pod of %d: node 0 and the last node %d are ring neighbours", size, last)
		}
	}
}
