package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"log/slog"
	"unsafe"

	"github.com/nrtabi/nrtabi/runtime/nrt"
)

// nrtabi_trampolines fills the struct nrt_nccl_slots at out (n must be its
// size) with the nccl* trampolines, for a host that drives libnccom as
// libnrt does (docs/runtime-boundary.md#the-trampoline-table). NRT_INVALID,
// nothing written, for any other n or a NULL out.
//
//export nrtabi_trampolines
func nrtabi_trampolines(out unsafe.Pointer, n C.size_t) C.uint32_t {
	if !nrt.TrampolineTable(out, uintptr(n)) {
		slog.Error("nrtabi_trampolines: refused", "n", uint64(n), "want", uint64(nrt.TrampolineTableSize), "out_null", out == nil)
		return C.uint32_t(nrt.ErrInvalid)
	}
	return C.uint32_t(nrt.StatusOf(nil))
}
