package tcp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// GetHash is upstream's getHash on char: a byte of 0x80 and up is
// sign-extended before the XOR. Worked by hand: 5381*33 = 177573, and
// 0xff as a char is -1, so the XOR flips every bit.
func TestGetHashSignExtends(t *testing.T) {
	if got, want := GetHash([]byte{0x41}), uint64(177573^0x41); got != want {
		t.Errorf("GetHash(A) = %#x, want %#x", got, want)
	}
	if got, want := GetHash([]byte{0xff}), ^uint64(177573); got != want {
		t.Errorf("GetHash(0xff) = %#x, want %#x (the byte read as a signed char)", got, want)
	}
	if TableDigest([]byte{0x80, 1}) != GetHash([]byte{0x80, 1}) {
		t.Error("TableDigest is not getHash")
	}
}

// The identity strings are upstream's: hostname then the boot id's first
// word, pid then the namespace link, each cut to 1023 bytes.
func TestIdentities(t *testing.T) {
	if got := string(HostIdentity("h1", []byte("  abcd-ef\nrest\n"))); got != "h1abcd-ef" {
		t.Errorf("HostIdentity = %q", got)
	}
	if got := string(HostIdentity("h1", nil)); got != "h1" {
		t.Errorf("HostIdentity without a boot id = %q", got)
	}
	if got := string(PidIdentity(4242, "pid:[4026531836]")); got != "4242pid:[4026531836]" {
		t.Errorf("PidIdentity = %q", got)
	}
	long := string(bytes.Repeat([]byte("x"), 2000))
	if n := len(HostIdentity(long, []byte("boot"))); n != identityBuf-1 {
		t.Errorf("a long host identity is %d bytes, want %d", n, identityBuf-1)
	}
	if n := len(PidIdentity(7, long)); n != identityBuf-1 {
		t.Errorf("a long pid identity is %d bytes, want %d", n, identityBuf-1)
	}
}

// PeerRecord puts every field where the spec's ncclPeerInfo row says and
// nothing anywhere else.
func TestPeerRecordLayout(t *testing.T) {
	var id UniqueID
	for i := range id {
		id[i] = byte(i * 37)
	}
	dev := abi.EncNeuronDeviceInfo{NECDevID: 3, MLAIdx: 9, HostDeviceID: 5, VirtualServerID: 2, PodType: abi.NECPodTypeP2P}
	rec := PeerRecord(6, &id, &dev, 1000, 2000, 0xdeadbeef)
	if len(rec) != 112 {
		t.Fatalf("%d bytes", len(rec))
	}
	h := GetHash(id[:])
	var p abi.NcclPeerInfo
	want := make([]byte, 112)
	binary.LittleEndian.PutUint32(want[0:], 6)
	binary.LittleEndian.PutUint32(want[4:], 3)
	binary.LittleEndian.PutUint64(want[16:], 1000+h+2)
	binary.LittleEndian.PutUint64(want[24:], 2000+h)
	binary.LittleEndian.PutUint64(want[88:], 0xdeadbeef)
	binary.LittleEndian.PutUint32(want[96:], 5)
	binary.LittleEndian.PutUint32(want[104:], 9)
	if unsafe.Offsetof(p.MLAIdx) != 104 || unsafe.Offsetof(p.Comm) != 88 {
		t.Fatal("the generated ncclPeerInfo moved; this test's offsets are the spec's")
	}
	if !bytes.Equal(rec, want) {
		t.Errorf("record\n%x\nwant\n%x", rec, want)
	}
}

// An in-process global world: every rank's gathered record is PeerRecord
// of its own inputs (device, the root's unique id, controlled host and pid
// hashes, its Endpoint's address), the tables agree, and the global maps
// read every rank's MLA and host device id; a non-global comm builds none.
func TestInitCommRecords(t *testing.T) {
	for _, global := range []bool{true, false} {
		t.Run(fmt.Sprintf("global=%v", global), func(t *testing.T) {
			const n = 4
			rn := testNet(t, 5*time.Second)
			root := loopRoot(t, rn, n, global)
			devs := make([]abi.EncNeuronDeviceInfo, n)
			eps := make([]*Endpoint, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for r := range n {
				devs[r] = abi.EncNeuronDeviceInfo{NECDevID: int32(r), MLAIdx: int32(10 + r), HostDeviceID: int32(20 + r), VirtualServerID: uint32(r % 2), PodType: abi.NECPodTypeSwitch}
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := Config{Timeout: 5 * time.Second, IfName: "lo", Logger: quietLog, Device: devs[r]}
					c.procHashes = func() (uint64, uint64) { return 0x1111 * uint64(r+1), 0x2222 * uint64(r+1) }
					eps[r], errs[r] = NewNet(c).InitComm(t.Context(), root.Addr(), r, n, global)
				}()
			}
			wg.Wait()
			t.Cleanup(func() {
				for _, e := range eps {
					e.Close()
				}
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			id := NewUniqueID(root.Addr())
			var want []byte
			for r := range n {
				want = append(want, PeerRecord(r, &id, &devs[r], 0x1111*uint64(r+1), 0x2222*uint64(r+1), uint64(uintptr(unsafe.Pointer(eps[r]))))...)
			}
			for r, e := range eps {
				if got := e.PeerTable(); !bytes.Equal(got, want) {
					t.Errorf("rank %d gathered\n%x\nwant\n%x", r, got, want)
				}
				m := e.GlobalMaps()
				if !global {
					if m != nil {
						t.Errorf("rank %d: a non-global comm built maps %+v", r, m)
					}
					continue
				}
				if m == nil {
					t.Fatalf("rank %d: a global init built no maps", r)
				}
				if !slices.Equal(m.MLAIndexes, []int32{10, 11, 12, 13}) || !slices.Equal(m.HostDeviceIDs, []int32{20, 21, 22, 23}) || !m.UltraServer || m.PodType != 2 {
					t.Errorf("rank %d: maps %+v", r, *m)
				}
			}
		})
	}
}

func TestIsUltraServer(t *testing.T) {
	for pt, want := range map[uint32]bool{0: false, 1: true, 2: true, 3: false, 99: false} {
		if IsUltraServer(pt) != want {
			t.Errorf("IsUltraServer(%d) = %v", pt, !want)
		}
	}
}

// FuzzBuildGlobalMaps: any bytes and count give maps of that count or an
// error naming the sizes, never a panic.
func FuzzBuildGlobalMaps(f *testing.F) {
	f.Add(make([]byte, 224), 2, uint32(1))
	f.Add(make([]byte, 100), 1, uint32(0))
	f.Add([]byte{}, 0, uint32(3))
	f.Fuzz(func(t *testing.T, table []byte, n int, pod uint32) {
		m, err := BuildGlobalMaps(table, n, pod)
		if err != nil {
			if n >= 1 && len(table)%112 == 0 && len(table)/112 == n {
				t.Fatalf("refused a table of %d records: %v", n, err)
			}
			return
		}
		if len(m.MLAIndexes) != n || len(m.HostDeviceIDs) != n {
			t.Fatalf("maps of %d/%d for %d records", len(m.MLAIndexes), len(m.HostDeviceIDs), n)
		}
	})
}
