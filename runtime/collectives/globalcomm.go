package collectives

import (
	"sync"
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/runtime/transport"
)

// GlobalComm is one registered enc_glb_comm. Its identity lives in the C-side
// mirror (Mirror) with the spec layout; the Go side keeps only what the
// documents place at no known offset (comm.nccl_comm_node, comm.ci) and the Go
// handles that own the C allocations.
type GlobalComm struct {
	dev, ctx int
	m        *abi.EncGlbComm // calloc(1, 0x89CB8), never the Go heap
	sem      []byte          // the mmap'd increment buffer behind m.IncRecvSemValuesBuffer
	rootID   unsafe.Pointer  // m.RootCommID
	barriers unsafe.Pointer  // m.DeviceBarrierTable: operator new(0x18)

	mu sync.Mutex
	// boot is the bootstrap socket every get_nccl_comm of this comm talks
	// over: the world neuronInitGlobalComm built. The seed names
	// comm.nccl_comm_node->nccl_comm; that is node's own comm here, a
	// separate neuronInitComm comm (contradiction global-comm-bootstrap-socket).
	boot   transport.Transport
	node   *CommNode      // comm.nccl_comm_node, nil until SetupGlobalComm
	ciRank int            // comm.ci.rank
	ciN    int            // comm.ci.rank_n
	rings  unsafe.Pointer // m.LocalRings
	peers  unsafe.Pointer // m.LocalPeerHandles
}

// Mirror is the enc_glb_comm object as C sees it.
func (g *GlobalComm) Mirror() *abi.EncGlbComm { return g.m }

// SemValues is the 516-byte semaphore-increment value buffer as C sees it.
func (g *GlobalComm) SemValues() *abi.EncSemIncValues {
	return (*abi.EncSemIncValues)(unsafe.Pointer(&g.sem[0]))
}

// Device and Context are the registry key.
func (g *GlobalComm) Device() int  { return g.dev }
func (g *GlobalComm) Context() int { return g.ctx }

// DeviceID and DeviceCount are g_device_id and g_device_cnt.
func (g *GlobalComm) DeviceID() uint32    { return g.m.GetGDeviceID() }
func (g *GlobalComm) DeviceCount() uint32 { return g.m.GetGDeviceCnt() }

// Node is comm.nccl_comm_node: the global replica group's comm node once
// SetupGlobalComm has bootstrapped it, else nil.
func (g *GlobalComm) Node() *CommNode {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.node
}

func (g *GlobalComm) bootstrap() transport.Transport {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.boot
}

// release frees everything the comm owns outside the Go heap. The caller has
// already unregistered it and freed its nodes.
func (g *GlobalComm) release() {
	if g.sem != nil {
		_ = munmap(g.sem)
		g.sem = nil
	}
	cfree(g.rootID)
	cfree(g.barriers)
	cfree(g.rings)
	cfree(g.peers)
	g.rootID, g.barriers, g.rings, g.peers = nil, nil, nil, nil
	if g.m != nil {
		cfree(unsafe.Pointer(g.m))
		g.m = nil
	}
}

// RootCommID is the root comm id the mirror points at.
func (g *GlobalComm) RootCommID() string { return goString(g.rootID) }
