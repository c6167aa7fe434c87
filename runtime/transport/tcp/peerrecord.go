package tcp

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The 112-byte ncclPeerInfo record of "initTransportRank AllGather1", filled
// byte for byte as the reference libnccom's fill_peer fills it (seed 001 §3;
// docs/libnccom.md#the-peer-record; contradiction rows peer-record-fill,
// peer-record-hosthash, peer-record-pidhash), so a world mixing Go and C
// ranks gathers one table whatever side each rank runs.

// identityBuf is upstream's 1024-byte buffer: the host and pid identity
// strings are cut to 1023 bytes before they are hashed, on both sides.
const identityBuf = 1024

// GetHash is upstream NCCL 2.9's getHash(string, n): DJB2a from 5381,
// h = h*33 ^ c, each byte read as a C char, which x86-64 sign-extends
// (contradiction row peer-record-hosthash). The 128-byte unique id, the
// host and pid identities and the digest of a gathered table go through it.
func GetHash(b []byte) uint64 {
	h := uint64(5381)
	for _, c := range b {
		h = (h<<5 + h) ^ uint64(int64(int8(c)))
	}
	return h
}

// HostIdentity is the string getHostHash hashes: the hostname, then the
// first word of the kernel's boot id (upstream 2.9), cut to 1023 bytes.
func HostIdentity(hostname string, bootID []byte) []byte {
	s := []byte(hostname)
	if f := strings.Fields(string(bootID)); len(f) > 0 {
		s = append(s, f[0]...)
	}
	if len(s) > identityBuf-1 {
		s = s[:identityBuf-1]
	}
	return s
}

// PidIdentity is the string getPidHash hashes: the decimal pid, then the
// target of /proc/self/ns/pid (upstream 2.9), cut to 1023 bytes.
func PidIdentity(pid int, pidNS string) []byte {
	s := append([]byte(strconv.Itoa(pid)), pidNS...)
	if len(s) > identityBuf-1 {
		s = s[:identityBuf-1]
	}
	return s
}

// processHashes are getHostHash() and getPidHash() of this process; the
// files they read are the kernel's, and a process without them hashes the
// hostname or the pid alone, as upstream does.
func processHashes() (host, pid uint64) {
	name, err := os.Hostname()
	if err != nil {
		name = "unknown"
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id") // absent: the hostname alone
	ns, _ := os.Readlink("/proc/self/ns/pid")                 // absent: the pid alone
	return GetHash(HostIdentity(name, boot)), GetHash(PidIdentity(os.Getpid(), ns))
}

// PeerRecord is rank's 112-byte record: rank, cudaDev (the device
// ncclRtSetDevice(dev->nec_dev_id) selects), hostHash = getHostHash() +
// getHash(id) + dev->virtual_server_id, pidHash = getPidHash() +
// getHash(id), comm (the address of this rank's comm object, meaningful in
// its own process only), compCap = dev->host_device_id and mla_idx =
// dev->mla_idx; every other byte zero. hostHash and pidHash are the
// process's getHostHash() and getPidHash().
func PeerRecord(rank int, id *UniqueID, dev *abi.EncNeuronDeviceInfo, hostHash, pidHash, comm uint64) []byte {
	var p abi.NcclPeerInfo
	b := make([]byte, abi.SizeofNcclPeerInfo)
	h := GetHash(id[:])
	binary.LittleEndian.PutUint32(b[unsafe.Offsetof(p.Rank):], uint32(int32(rank)))
	binary.LittleEndian.PutUint32(b[unsafe.Offsetof(p.CudaDev):], uint32(dev.NECDevID))
	binary.LittleEndian.PutUint64(b[unsafe.Offsetof(p.HostHash):], hostHash+h+uint64(dev.VirtualServerID))
	binary.LittleEndian.PutUint64(b[unsafe.Offsetof(p.PidHash):], pidHash+h)
	binary.LittleEndian.PutUint64(b[unsafe.Offsetof(p.Comm):], comm)
	binary.LittleEndian.PutUint32(b[unsafe.Offsetof(p.CompCap):], uint32(dev.HostDeviceID))
	binary.LittleEndian.PutUint32(b[unsafe.Offsetof(p.MLAIdx):], uint32(dev.MLAIdx))
	return b
}

// GlobalMaps is what a global init builds from the gathered records after
// AllGather1 (seed 001 §3): every rank's MLA and host device id (read from
// compCap: host_dev_id's own offset is undocumented, contradiction row
// global-init-maps), and neuronIsUltraServer(dev->pod_type).
type GlobalMaps struct {
	MLAIndexes    []int32
	HostDeviceIDs []int32
	PodType       uint32
	UltraServer   bool
}

// IsUltraServer is neuronIsUltraServer, whose body no seed traces: a pod of
// instances, P2P or switched (contradiction row global-init-maps).
func IsUltraServer(podType uint32) bool {
	return podType == uint32(abi.NECPodTypeP2P) || podType == uint32(abi.NECPodTypeSwitch)
}

// BuildGlobalMaps reads the maps out of a gathered table of nranks records,
// refusing a table of any other length.
func BuildGlobalMaps(table []byte, nranks int, podType uint32) (GlobalMaps, error) {
	size := abi.SizeofNcclPeerInfo
	if nranks < 1 || len(table)%size != 0 || len(table)/size != nranks { // no product: it could wrap
		return GlobalMaps{}, fmt.Errorf("initTransportRank: a gathered table of %d bytes is not %d records of %d bytes", len(table), nranks, size)
	}
	var p abi.NcclPeerInfo
	m := GlobalMaps{MLAIndexes: make([]int32, nranks), HostDeviceIDs: make([]int32, nranks), PodType: podType, UltraServer: IsUltraServer(podType)}
	for r := range nranks {
		rec := table[r*size : (r+1)*size]
		m.MLAIndexes[r] = int32(binary.LittleEndian.Uint32(rec[unsafe.Offsetof(p.MLAIdx):]))
		m.HostDeviceIDs[r] = int32(binary.LittleEndian.Uint32(rec[unsafe.Offsetof(p.CompCap):]))
	}
	return m, nil
}

// intList is "a,b,c" of at most 32 values ("..." after), the C log's shape.
func intList(v []int32) string {
	var b strings.Builder
	for i, x := range v {
		if i == 32 {
			b.WriteString(",...")
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(x)))
	}
	return b.String()
}
