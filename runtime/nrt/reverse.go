package nrt

// The Go half of the reverse callbacks: reverse.c's shims call these with
// the C arguments, these ask the device layer and the dynamic-input table.
// A failed lookup answers -1 or NRT_INVALID as its callback's C signature
// allows and is logged; nothing here calls a forward entry point.

/*
#include "nrtabi.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/nrtabi/nrtabi/runtime/dyninput"
)

func reverseFailed(callback string, err error) {
	runtimeLog().Error("reverse callback failed", "subsys", "NEC", "fn", callback, "err", err)
}

func status(err error, callback string) C.uint32_t {
	if err != nil {
		reverseFailed(callback, err)
		return C.uint32_t(statusInvalid)
	}
	return C.uint32_t(statusSuccess)
}

//export nrtDeviceCount
func nrtDeviceCount(out *C.int, n C.uint32_t) C.int {
	devs := Device().Devices()
	if out != nil {
		dst := unsafe.Slice(out, min(int(n), len(devs))) // never a view past what is written
		for i := range dst {
			dst[i] = C.int(devs[i])
		}
	}
	traceReverse("nec_get_device_count", "array_size", uint32(n), "count", len(devs))
	return C.int(len(devs))
}

//export nrtDevicePCIBDF
func nrtDevicePCIBDF(dev C.int, domain, bus *C.uint32_t, slot, fn *C.uint8_t) C.int {
	b, err := Device().PCIBDF(int(dev))
	if err != nil {
		reverseFailed("nec_get_device_pci_bdf", err)
		return -1
	}
	for _, p := range []*C.uint32_t{domain, bus} {
		if p == nil {
			reverseFailed("nec_get_device_pci_bdf", errNilOut)
			return -1
		}
	}
	if slot == nil || fn == nil {
		reverseFailed("nec_get_device_pci_bdf", errNilOut)
		return -1
	}
	*domain, *bus, *slot, *fn = C.uint32_t(b.Domain), C.uint32_t(b.Bus), C.uint8_t(b.Slot), C.uint8_t(b.Func)
	traceReverse("nec_get_device_pci_bdf", "dev", int(dev), "bdf", b.String())
	return 0
}

type nilOut struct{}

func (nilOut) Error() string { return "an output pointer is NULL" }

var errNilOut error = nilOut{}

//export nrtVirtualCoreSize
func nrtVirtualCoreSize(out *C.uint32_t) C.uint32_t {
	if out == nil {
		return status(errNilOut, "nec_get_virtual_core_size")
	}
	v, err := Device().VirtualCoreSize()
	if err == nil {
		*out = C.uint32_t(v)
	}
	return status(err, "nec_get_virtual_core_size")
}

// MaxPortMap bounds the count of nec_build_port_and_rid_map: every entry up
// to count is written (-1 past the MLA's last port), so a count no port map
// has would write far past any caller's arrays.
const MaxPortMap = 1 << 16

//export nrtBuildPortAndRIDMap
func nrtBuildPortAndRIDMap(dev C.int, mla, host *C.int, count C.int) C.uint32_t {
	const cb = "nec_build_port_and_rid_map"
	if count < 0 || count > MaxPortMap {
		return status(fmt.Errorf("count %d is outside 0..%d", int(count), MaxPortMap), cb)
	}
	if count > 0 && (mla == nil || host == nil) {
		return status(errNilOut, cb)
	}
	ports, err := Device().PortMap(int(dev))
	if err != nil {
		return status(err, cb)
	}
	m, h := unsafe.Slice(mla, int(count)), unsafe.Slice(host, int(count))
	for i := range m {
		m[i], h[i] = -1, -1
		if i < len(ports) {
			m[i], h[i] = C.int(ports[i].MLA), C.int(ports[i].HostDeviceID)
		}
	}
	traceReverse(cb, "local_dev", int(dev), "count", int(count), "ports", len(ports))
	return C.uint32_t(statusSuccess)
}

//export nrtIsMLAAvailable
func nrtIsMLAAvailable(dev, mla C.int) C.bool {
	ok := Device().MLAAvailable(int(dev), int(mla))
	traceReverse("nec_is_mla_available", "local_dev", int(dev), "mla_idx", int(mla), "available", ok)
	return C.bool(ok)
}

//export nrtMLAToRID
func nrtMLAToRID(dev, mla C.int) C.int {
	rid, err := Device().MLAToRID(int(dev), int(mla))
	traceReverse("nec_mla_idx_to_rid", "local_dev", int(dev), "mla_idx", int(mla), "rid", rid, "err", err)
	return C.int(rid)
}

//export nrtRIDToMLA
func nrtRIDToMLA(dev, rid C.int) C.int {
	mla, err := Device().RIDToMLA(int(dev), int(rid))
	traceReverse("nec_rid_to_mla_idx", "local_dev", int(dev), "rid", int(rid), "mla_idx", mla, "err", err)
	return C.int(mla)
}

//export nrtFamilyRemapsPorts
func nrtFamilyRemapsPorts(family C.uint32_t) C.bool {
	return C.bool(Device().RemapsPorts(uint32(family)))
}

//export nrtArchGetPort
func nrtArchGetPort(mla, port C.int) C.int {
	p, err := Device().Port(int(mla), int(port))
	if err != nil {
		reverseFailed("nec_get_peer_mla_idx", err)
		return -1
	}
	traceReverse("encd_arch_get_port", "mla_idx", int(mla), "port", int(port), "remapped", p)
	return C.int(p)
}

// totalVNCCount is the C nrt_get_total_vnc_count, called from Go (its
// tests); out nil passes NULL.
func totalVNCCount(out *uint32) uint32 {
	return uint32(C.nrt_get_total_vnc_count((*C.uint32_t)(unsafe.Pointer(out))))
}

// instanceInfo is the C nrt_get_instance_info into out with the caller's
// size len(out), called from Go (its tests).
func instanceInfo(out []byte) uint32 {
	return uint32(C.nrt_get_instance_info((*C.nrt_instance_info_t)(unsafe.Pointer(&out[0])), C.size_t(len(out))))
}

// peerMLAIdx is the C nec_get_peer_mla_idx, called from Go (its tests).
func peerMLAIdx(dev, mla, port int) int {
	return int(C.nec_get_peer_mla_idx(C.int(dev), C.int(mla), C.int(port)))
}

//export nrtArchGetPeerMLAIdx
func nrtArchGetPeerMLAIdx(dev, mla, port C.int) C.int {
	peer, err := Device().PeerMLA(int(dev), int(mla), int(port))
	if err != nil {
		reverseFailed("nec_get_peer_mla_idx", err)
		return -1
	}
	traceReverse("nec_get_peer_mla_idx", "local_dev", int(dev), "mla_idx", int(mla), "port", int(port), "peer", peer)
	return C.int(peer)
}

//export nrtP2PPodPeerNode
func nrtP2PPodPeerNode(dev C.uint32_t, node C.int, dist C.uint32_t, peer *C.int) C.int {
	const cb = "nec_get_p2p_pod_peer_node"
	if peer == nil {
		reverseFailed(cb, errNilOut)
		return -1
	}
	n, err := Device().P2PPodPeerNode(uint32(dev), int(node), uint32(dist))
	if err == nil && n > math.MaxInt32 {
		err = fmt.Errorf("peer node %d of a pod of more than 2^31 nodes does not fit the callback's int", n)
	}
	if err != nil {
		reverseFailed(cb, err)
		return -1
	}
	*peer = C.int(n)
	traceReverse(cb, "dev", uint32(dev), "node", int(node), "port_distance", uint32(dist), "peer_node", n)
	return 0
}

//export nrtPodNodeCanAccess
func nrtPodNodeCanAccess(podType, lrid, lnode, rrid, rnode C.uint32_t, can *C.int) C.uint32_t {
	const cb = "nec_pod_node_can_access_peer_node"
	if can == nil {
		return status(errNilOut, cb)
	}
	ok, err := Device().PodNodeCanAccess(uint32(podType), uint32(lrid), uint32(lnode), uint32(rrid), uint32(rnode))
	if err == nil {
		*can = 0
		if ok {
			*can = 1
		}
	}
	traceReverse(cb, "pod_type", uint32(podType), "local_node", uint32(lnode), "remote_node", uint32(rnode), "can_access", ok)
	return status(err, cb)
}

// PrintkMax is the most nec_ndl_printk reads of one line: the driver's
// lines are short, so a longer one is cut there (and says so) whatever size
// the caller claims.
const PrintkMax = 4096

// printkText is the line at str: up to its NUL, never past size bytes nor
// PrintkMax. It reads byte by byte, so memory after the NUL is not touched.
func printkText(p unsafe.Pointer, size uint32) string {
	limit := min(int64(size), PrintkMax)
	n := int64(0)
	for n < limit && *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	text := string(unsafe.Slice((*byte)(p), n))
	if n == PrintkMax && int64(size) > PrintkMax {
		text += fmt.Sprintf(" [cut at %d bytes; the caller claimed %d]", PrintkMax, size)
	}
	return text
}

//export nrtPrintk
func nrtPrintk(str *C.char, size, action C.uint32_t) {
	if str == nil {
		return
	}
	Device().Printk(printkText(unsafe.Pointer(str), uint32(size)), uint32(action))
}

// dynTable views the dynamic-input table at mem: the header first, then as
// many bytes as it says the table has.
func dynTable(mem unsafe.Pointer) (dyninput.Table, error) {
	if mem == nil {
		return dyninput.Table{}, errNilOut
	}
	n, err := dyninput.Header(unsafe.Slice((*byte)(mem), dyninput.HeaderSize))
	if err != nil {
		return dyninput.Table{}, err
	}
	return dyninput.View(unsafe.Slice((*byte)(mem), dyninput.Size(n)))
}

func dynResult(cb string, v uint64, err error) C.size_t {
	if err != nil {
		reverseFailed(cb, err)
		return 0
	}
	return C.size_t(v)
}

// enc_get_send_count_size_bytes(mem, dst_rank, data_type_sz).
//
//export nrtEncGetSendCountSizeBytes
func nrtEncGetSendCountSizeBytes(mem unsafe.Pointer, dst C.int, dts C.size_t) C.size_t {
	const cb = "nec_get_dynamic_send_size_bytes"
	t, err := dynTable(mem)
	if err != nil {
		return dynResult(cb, 0, err)
	}
	v, err := t.SendCountSizeBytes(int(dst), uint64(dts))
	traceReverse(cb, "dst_rank", int(dst), "data_type_sz", uint64(dts), "bytes", v)
	return dynResult(cb, v, err)
}

// enc_get_send_offset_bytes(mem, data_type_sz, dst_rank, rank_n).
//
//export nrtEncGetSendOffsetBytes
func nrtEncGetSendOffsetBytes(mem unsafe.Pointer, dts C.size_t, dst, rankN C.int) C.size_t {
	const cb = "nec_get_dynamic_send_offset_bytes"
	t, err := dynTable(mem)
	if err != nil {
		return dynResult(cb, 0, err)
	}
	v, err := t.SendOffsetBytes(uint64(dts), int(dst), int(rankN))
	return dynResult(cb, v, err)
}

// enc_get_recv_post_offset_bytes(mem, data_type_sz, src_rank, rank_n).
//
//export nrtEncGetRecvPostOffsetBytes
func nrtEncGetRecvPostOffsetBytes(mem unsafe.Pointer, dts C.size_t, src, rankN C.int) C.size_t {
	const cb = "nec_get_dynamic_recv_offset_bytes"
	t, err := dynTable(mem)
	if err != nil {
		return dynResult(cb, 0, err)
	}
	v, err := t.RecvPostOffsetBytes(uint64(dts), int(src), int(rankN))
	return dynResult(cb, v, err)
}

// enc_set_recv_size_bytes(mem, recv_size, data_type_sz, src_rank, rank_n).
//
//export nrtEncSetRecvSizeBytes
func nrtEncSetRecvSizeBytes(mem unsafe.Pointer, recvSize, dts C.size_t, src, rankN C.int) {
	const cb = "nec_set_recv_size_bytes"
	t, err := dynTable(mem)
	if err == nil {
		err = t.SetRecvSizeBytes(uint64(recvSize), uint64(dts), int(src), int(rankN))
	}
	if err != nil {
		reverseFailed(cb, err)
	}
}

//export nrtTotalVNCCount
func nrtTotalVNCCount(out *C.uint32_t) C.uint32_t {
	if out == nil {
		return status(errNilOut, "nrt_get_total_vnc_count")
	}
	*out = C.uint32_t(Device().ReportedVNCCount())
	traceReverse("nrt_get_total_vnc_count", "count", uint32(*out))
	return C.uint32_t(statusSuccess)
}

// nrtInstanceInfo fills a whole nrt_instance_info_t, as this release lays
// it out; nrt_get_instance_info copies what its caller's size covers. A
// release may lack arch_name and device_revision
// (docs/generator.md#absent-fields): the struct then has no room for them
// and they are not reported.
//
//export nrtInstanceInfo
func nrtInstanceInfo(out *C.nrt_instance_info_t) {
	in := Device().Instance()
	info := (*InstanceInfo)(unsafe.Pointer(out))
	*info = InstanceInfo{Family: in.FamilyID, Size: in.Size}
	if arch, ok := info.GetArchName(); ok {
		copy(arch[:len(arch)-1], in.Arch)
		info.SetArchName(arch)
	}
	if rev, ok := info.GetDeviceRevision(); ok {
		copy(rev[:len(rev)-1], in.Revision)
		info.SetDeviceRevision(rev)
	}
	traceReverse("nrt_get_instance_info", "family", in.Family, "family_id", in.FamilyID)
}

//export nrtRuntimeVersion
func nrtRuntimeVersion(out *C.nrt_version_t) {
	*(*RuntimeVersion)(unsafe.Pointer(out)) = Version()
}
