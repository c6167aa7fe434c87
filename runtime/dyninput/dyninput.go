// Package dyninput is the memory behind enc_host_mem_t: the per-peer element
// counts and offsets of one variable-peer collective, which the four
// dynamic-size callbacks read (and one writes). The shipped layout is not
// documented; this one is nrtabi's, described in
// docs/runtime-boundary.md#dynamic-input-memory.
//
// All fields are little-endian (the boundary is x86-64), 8-byte aligned:
//
//	+0             u32 magic        MagicValue ("DYNI")
//	+4             u32 rank_n       ranks the table covers
//	+8             u64 reserved     0
//	+16            u64 send_count[rank_n]   elements sent to rank r
//	+16+8n         u64 send_offset[rank_n]  element offset of rank r's block in the send buffer
//	+16+16n        u64 recv_offset[rank_n]  element offset where rank r's block lands in the receive buffer
//	+16+24n        u64 recv_size[rank_n]    bytes received from rank r (written by nec_set_recv_size_bytes)
//
// Sizes and offsets are kept in elements; the callbacks scale them by the
// data type size the caller passes, so one table serves any data type.
//
// See docs/runtime-boundary.md#dynamic-input-memory.
package dyninput

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Layout constants.
const (
	MagicValue = 0x494e5944 // "DYNI" read as a little-endian u32
	HeaderSize = 16
	MaxRanks   = 1 << 20 // a header claiming more is taken as garbage
	columns    = 4
)

var le = binary.LittleEndian

// Size is the byte size of a table for rankN ranks.
func Size(rankN int) int { return HeaderSize + columns*8*rankN }

// Encode builds a table; the three slices must have one entry per rank.
func Encode(sendCount, sendOffset, recvOffset []uint64) ([]byte, error) {
	n := len(sendCount)
	if len(sendOffset) != n || len(recvOffset) != n {
		return nil, fmt.Errorf("dyninput: %d send counts, %d send offsets, %d receive offsets: give one of each per rank", n, len(sendOffset), len(recvOffset))
	}
	if n == 0 || n > MaxRanks {
		return nil, fmt.Errorf("dyninput: %d ranks; a table covers 1..%d", n, MaxRanks)
	}
	b := make([]byte, Size(n))
	le.PutUint32(b[0:], MagicValue)
	le.PutUint32(b[4:], uint32(n))
	for r := 0; r < n; r++ {
		le.PutUint64(b[HeaderSize+8*r:], sendCount[r])
		le.PutUint64(b[HeaderSize+8*(n+r):], sendOffset[r])
		le.PutUint64(b[HeaderSize+8*(2*n+r):], recvOffset[r])
	}
	return b, nil
}

// Header reads the rank count from the first HeaderSize bytes of a table.
func Header(h []byte) (rankN int, err error) {
	if len(h) < HeaderSize {
		return 0, fmt.Errorf("dyninput: %d bytes is shorter than the %d-byte header", len(h), HeaderSize)
	}
	if m := le.Uint32(h); m != MagicValue {
		return 0, fmt.Errorf("dyninput: magic %#x, want %#x: the pointer is not a dynamic-input table", m, MagicValue)
	}
	n := int(le.Uint32(h[4:]))
	if n == 0 || n > MaxRanks {
		return 0, fmt.Errorf("dyninput: header claims %d ranks; a table covers 1..%d", n, MaxRanks)
	}
	return n, nil
}

// Table is a view of one table's memory.
type Table struct {
	mem []byte
	n   int
}

// View checks mem's header and returns a view of it.
func View(mem []byte) (Table, error) {
	n, err := Header(mem)
	if err != nil {
		return Table{}, err
	}
	if len(mem) < Size(n) {
		return Table{}, fmt.Errorf("dyninput: %d bytes hold no table for %d ranks (%d bytes)", len(mem), n, Size(n))
	}
	return Table{mem: mem, n: n}, nil
}

// RankN is the number of ranks the table covers.
func (t Table) RankN() int { return t.n }

func (t Table) cell(col, r int) int { return HeaderSize + 8*(col*t.n+r) }

func (t Table) rank(what string, r int) error {
	if r < 0 || r >= t.n {
		return fmt.Errorf("dyninput: %s rank %d is outside the table's %d ranks", what, r, t.n)
	}
	return nil
}

func (t Table) checkRankN(rankN int) error {
	if rankN != t.n {
		return fmt.Errorf("dyninput: the caller says %d ranks, the table covers %d", rankN, t.n)
	}
	return nil
}

func scale(elems, dts uint64) (uint64, error) {
	hi, lo := bits.Mul64(elems, dts)
	if hi != 0 {
		return 0, fmt.Errorf("dyninput: %d elements of %d bytes overflow 64 bits", elems, dts)
	}
	return lo, nil
}

// SendCountSizeBytes is enc_get_send_count_size_bytes(mem, dst_rank,
// data_type_sz): the bytes sent to dst. It takes no rank count.
func (t Table) SendCountSizeBytes(dst int, dts uint64) (uint64, error) {
	if err := t.rank("destination", dst); err != nil {
		return 0, err
	}
	return scale(le.Uint64(t.mem[t.cell(0, dst):]), dts)
}

// SendOffsetBytes is enc_get_send_offset_bytes(mem, data_type_sz, dst_rank,
// rank_n): where dst's block starts in the send buffer.
func (t Table) SendOffsetBytes(dts uint64, dst, rankN int) (uint64, error) {
	if err := t.checkRankN(rankN); err != nil {
		return 0, err
	}
	if err := t.rank("destination", dst); err != nil {
		return 0, err
	}
	return scale(le.Uint64(t.mem[t.cell(1, dst):]), dts)
}

// RecvPostOffsetBytes is enc_get_recv_post_offset_bytes(mem, data_type_sz,
// src_rank, rank_n): where src's block lands in the receive buffer.
func (t Table) RecvPostOffsetBytes(dts uint64, src, rankN int) (uint64, error) {
	if err := t.checkRankN(rankN); err != nil {
		return 0, err
	}
	if err := t.rank("source", src); err != nil {
		return 0, err
	}
	return scale(le.Uint64(t.mem[t.cell(2, src):]), dts)
}

// SetRecvSizeBytes is enc_set_recv_size_bytes(mem, recv_size, data_type_sz,
// src_rank, rank_n): records that recvSize elements arrived from src, in
// bytes.
func (t Table) SetRecvSizeBytes(recvSize, dts uint64, src, rankN int) error {
	if err := t.checkRankN(rankN); err != nil {
		return err
	}
	if err := t.rank("source", src); err != nil {
		return err
	}
	b, err := scale(recvSize, dts)
	if err != nil {
		return err
	}
	le.PutUint64(t.mem[t.cell(3, src):], b)
	return nil
}

// RecvSizeBytes is what SetRecvSizeBytes recorded for src.
func (t Table) RecvSizeBytes(src int) (uint64, error) {
	if err := t.rank("source", src); err != nil {
		return 0, err
	}
	return le.Uint64(t.mem[t.cell(3, src):]), nil
}
