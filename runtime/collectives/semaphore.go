package collectives

import (
	"encoding/binary"
	"syscall"

	"github.com/nrtabi/nrtabi/generated/abi"
)

func mmapAnon(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
}

func munmap(b []byte) error { return syscall.Munmap(b) }

// fillSemValues writes the semaphore-increment value buffer. Word 0 is the
// header; then the seed's SSE loop, read as in the spec (SEM_INC_FIRST_VALUE,
// contradiction sem-buffer-loop, INFERRED): a four-lane seed starting at
// SEM_INC_FIRST_VALUE, stored four words at a time and bumped by four, for as
// many 16-byte stores as the 128 value words hold (32). Word k is k.
func fillSemValues(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], abi.SemIncHeader)
	const lanes = 4
	seed := [lanes]uint32{}
	for l := range seed {
		seed[l] = abi.SemIncFirstValue + uint32(l)
	}
	for i := 0; i < int(abi.SemIncValues)/lanes; i++ {
		off := 4 + 16*i
		for l, v := range seed {
			le.PutUint32(b[off+4*l:], v)
		}
		for l := range seed {
			seed[l] += lanes
		}
	}
}
