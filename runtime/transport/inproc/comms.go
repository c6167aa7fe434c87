package inproc

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nrtabi/nrtabi/generated/abi"
	"github.com/nrtabi/nrtabi/internal/cfmt"
)

// uidSeq makes unique ids unique across every Comms of the process.
var uidSeq atomic.Uint64

// Comms stands in for libnccom's ncclGetUniqueId / ncclInitComm /
// ncclBuildGraphComm / ncclGetCommInfo / ncclFreeComm for ranks living in one
// process. A comm handle is a small integer, never a Go pointer, so it can sit
// in C memory (enc_nccl_comm_node.nccl_comm).
type Comms struct {
	// FailUniqueID, when set, is returned by GetUniqueID (fault injection).
	FailUniqueID error
	// FailInit, when set, may fail InitComm for a rank (fault injection).
	FailInit func(rank int) error
	// WrongRank, when set, makes CommInfo report rank+WrongRank (fault
	// injection for the post-bootstrap invariants).
	WrongRank int

	mu      sync.Mutex
	next    uintptr
	handles map[uintptr]*comm
	members map[string]map[int]uintptr // unique id -> rank -> handle

	inits, graphs, frees atomic.Int64
}

type comm struct {
	uid          string
	rank, rankN  int
	graphPending bool
}

// CommStats counts the calls that succeeded.
type CommStats struct {
	Inits, GraphBuilds, Frees int64
	Live                      int
}

// Stats reports the counters.
func (c *Comms) Stats() CommStats {
	c.mu.Lock()
	live := len(c.handles)
	c.mu.Unlock()
	return CommStats{Inits: c.inits.Load(), GraphBuilds: c.graphs.Load(), Frees: c.frees.Load(), Live: live}
}

// GetUniqueID writes a fresh 128-byte id for a comm of rankN ranks.
func (c *Comms) GetUniqueID(id *[abi.NcclUniqueIDBytes]byte, rankN int, hint string) error {
	if c.FailUniqueID != nil {
		return fmt.Errorf("%s: %w", cfmt.Sprintf(abi.MsgNcclRequestFailed, "neuronGetUniqueId"), c.FailUniqueID)
	}
	*id = [abi.NcclUniqueIDBytes]byte{}
	copy(id[:len(id)-1], fmt.Sprintf("inproc uid %d rank_n=%d hint=%s", uidSeq.Add(1), rankN, hint))
	return nil
}

// InitComm joins rank to the comm named by id and returns its handle. It
// does not wait for the other ranks: what matters to the caller is that no
// rank ever gets here on a world that failed validation, and counting the
// calls shows exactly that.
func (c *Comms) InitComm(rankN int, id *[abi.NcclUniqueIDBytes]byte, rank int, bypassGraph bool) (uintptr, error) {
	if rank < 0 || rank >= rankN {
		return 0, errors.New(cfmt.Sprintf(abi.MsgNccomInvalidRank, rank, rankN))
	}
	if id[0] == 0 {
		return 0, fmt.Errorf("inproc InitComm rank %d: empty unique id (the root never broadcast one)", rank)
	}
	if c.FailInit != nil {
		if err := c.FailInit(rank); err != nil {
			return 0, err
		}
	}
	uid := string(bytes.TrimRight(id[:], "\x00"))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handles == nil {
		c.handles, c.members = map[uintptr]*comm{}, map[string]map[int]uintptr{}
	}
	m := c.members[uid]
	if m == nil {
		m = map[int]uintptr{}
		c.members[uid] = m
	}
	if _, dup := m[rank]; dup {
		return 0, fmt.Errorf("inproc InitComm: rank %d joined comm %q twice", rank, uid)
	}
	for _, h := range m {
		if other := c.handles[h]; other.rankN != rankN {
			return 0, fmt.Errorf("inproc InitComm rank %d: comm %q has %d ranks, this rank says %d", rank, uid, other.rankN, rankN)
		}
		break
	}
	c.next++
	h := c.next
	c.handles[h] = &comm{uid: uid, rank: rank, rankN: rankN, graphPending: bypassGraph}
	m[rank] = h
	c.inits.Add(1)
	return h, nil
}

func (c *Comms) lookup(h uintptr) (*comm, error) {
	cm := c.handles[h]
	if cm == nil {
		return nil, fmt.Errorf("inproc: comm handle %#x is not live", h)
	}
	return cm, nil
}

// BuildGraphComm builds the graph a comm initialised with bypassGraph skipped.
func (c *Comms) BuildGraphComm(h uintptr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, err := c.lookup(h)
	if err != nil {
		return err
	}
	cm.graphPending = false
	c.graphs.Add(1)
	return nil
}

// GraphPending reports whether the comm still lacks its graph.
func (c *Comms) GraphPending(h uintptr) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm := c.handles[h]
	return cm != nil && cm.graphPending
}

// CommInfo reports the comm's rank and size (nccl_comm_info_t's view).
func (c *Comms) CommInfo(h uintptr) (rank, rankN int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, err := c.lookup(h)
	if err != nil {
		return 0, 0, err
	}
	return cm.rank + c.WrongRank, cm.rankN, nil
}

// FreeComm releases the comm.
func (c *Comms) FreeComm(h uintptr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, err := c.lookup(h)
	if err != nil {
		return err
	}
	delete(c.handles, h)
	if m := c.members[cm.uid]; m != nil {
		delete(m, cm.rank)
		if len(m) == 0 {
			delete(c.members, cm.uid)
		}
	}
	c.frees.Add(1)
	return nil
}
