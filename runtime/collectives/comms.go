package collectives

import "github.com/nrtabi/nrtabi/generated/abi"

// UniqueID is libnccom's ncclUniqueId: 128 bytes naming the root listener.
type UniqueID = [abi.NcclUniqueIDBytes]byte

// Comms is the slice of libnccom the per-NC bootstrap calls besides the
// bootstrap socket: ncclGetUniqueId, ncclInitComm, ncclBuildGraphComm,
// ncclGetCommInfo and ncclFreeComm. A comm is libnccom's void*, carried as a
// uintptr so it can live in C memory (enc_nccl_comm_node.nccl_comm).
// Implementations: inproc.Comms now; the libnccom trampolines at merge time.
type Comms interface {
	GetUniqueID(id *UniqueID, rankN int, hint string) error
	InitComm(rankN int, id *UniqueID, rank int, bypassGraph bool) (uintptr, error)
	BuildGraphComm(comm uintptr) error
	// CommInfo is the part of nccl_comm_info_t the global comm checks: the
	// comm's rank and rank count (enc_comm.ci).
	CommInfo(comm uintptr) (rank, rankN int, err error)
	FreeComm(comm uintptr) error
}
