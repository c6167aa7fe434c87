package nrt

import (
	"fmt"
	"sync"
	"unsafe"
)

// Comms offers the libnccom entry points the per-NC bootstrap calls besides
// the bootstrap socket — the method set of runtime/collectives' Comms
// interface — over the loaded libnccom's trampolines. Device is the
// enc_neuron_device_info_t handed to neuronInitComm (zero when nil).
//
// nccl_comm_info_t does not document where libnccom keeps a comm's rank and
// rank count, so CommInfo asks libnccom for the comm's info (the call must
// succeed) and answers with the rank and count the comm was initialised with.
type Comms struct {
	Device *DeviceInfo

	mu    sync.Mutex
	comms map[uintptr]commRec // by the handle value collectives keeps
}

type commRec struct {
	comm        Comm
	rank, rankN int
	refs        int // a libnccom may hand out one handle twice
}

// GetUniqueID is ncclGetUniqueId into id.
func (c *Comms) GetUniqueID(id *[UniqueIDBytes]byte, rankN int, hint string) error {
	u, err := GetUniqueID(rankN, hint)
	*id = u
	return err
}

// InitComm is ncclInitComm.
func (c *Comms) InitComm(rankN int, id *[UniqueIDBytes]byte, rank int, bypassGraph bool) (uintptr, error) {
	dev := c.Device
	if dev == nil {
		dev = new(DeviceInfo)
	}
	comm, err := InitComm(rankN, (*UniqueID)(id), rank, dev, bypassGraph)
	if err != nil {
		return 0, err
	}
	// The value is libnccom's handle (what enc_nccl_comm_node.nccl_comm
	// holds); the Comm itself is kept here, so it never comes back from an
	// integer.
	h := uintptr(unsafe.Pointer(comm))
	c.mu.Lock()
	if c.comms == nil {
		c.comms = map[uintptr]commRec{}
	}
	r := c.comms[h]
	c.comms[h] = commRec{comm, rank, rankN, r.refs + 1}
	c.mu.Unlock()
	return h, nil
}

func (c *Comms) lookup(h uintptr) (commRec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.comms[h]
	if !ok {
		return r, fmt.Errorf("comm %#x was not initialised through these Comms", h)
	}
	return r, nil
}

// BuildGraphComm is ncclBuildGraphComm.
func (c *Comms) BuildGraphComm(comm uintptr) error {
	r, err := c.lookup(comm)
	if err != nil {
		return err
	}
	return BuildGraphComm(r.comm)
}

// CommInfo is ncclGetCommInfo, answered with the rank the comm was made for.
func (c *Comms) CommInfo(comm uintptr) (rank, rankN int, err error) {
	r, err := c.lookup(comm)
	if err != nil {
		return 0, 0, err
	}
	if _, err := GetCommInfo(r.comm); err != nil {
		return 0, 0, err
	}
	return r.rank, r.rankN, nil
}

// FreeComm is ncclFreeComm.
func (c *Comms) FreeComm(comm uintptr) error {
	r, err := c.lookup(comm)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if r.refs--; r.refs == 0 {
		delete(c.comms, comm)
	} else {
		c.comms[comm] = r
	}
	c.mu.Unlock()
	return FreeComm(r.comm)
}
