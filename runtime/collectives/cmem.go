package collectives

/*
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "nrtabi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/nrtabi/nrtabi/generated/abi"
)

// The objects an external reader inspects live in C memory with the spec
// layout: the generated C header and the generated Go mirror must agree on
// their sizes, or this file does not compile.
var (
	_ [C.sizeof_struct_enc_glb_comm - abi.SizeofEncGlbComm]byte
	_ [abi.SizeofEncGlbComm - C.sizeof_struct_enc_glb_comm]byte
	_ [C.sizeof_struct_enc_nccl_comm_node - abi.SizeofEncNcclCommNode]byte
	_ [abi.SizeofEncNcclCommNode - C.sizeof_struct_enc_nccl_comm_node]byte
)

// calloc returns n zeroed bytes of C memory, or nil when the allocation fails.
func calloc(n uintptr) unsafe.Pointer { return C.calloc(1, C.size_t(n)) }

func cfree(p unsafe.Pointer) {
	if p != nil {
		C.free(p)
	}
}

// cbytes copies b into fresh C memory (its address is what a C reader sees).
func cbytes(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return C.CBytes(b)
}

// cstring copies s into a NUL-terminated C string.
func cstring(s string) unsafe.Pointer { return unsafe.Pointer(C.CString(s)) }

// newGlbCommMirror allocates enc_glb_comm the way enc_init_global_comm does:
// calloc(1, 0x89CB8).
func newGlbCommMirror() *abi.EncGlbComm {
	return (*abi.EncGlbComm)(calloc(C.sizeof_struct_enc_glb_comm))
}

// newCommNodeMirror allocates enc_nccl_comm_node: calloc(1, 0x58).
func newCommNodeMirror() *abi.EncNcclCommNode {
	return (*abi.EncNcclCommNode)(calloc(C.sizeof_struct_enc_nccl_comm_node))
}

func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	return C.GoString((*C.char)(p))
}

// CompileObjects are one enc_context and one enc_comm in C memory, as the op
// compiler holds them when it initialises a replica group's comm
// (NcclInitComm): every stream of the context ENC_STREAM_ID_UNINITIALIZED,
// the comm zeroed. Free releases both.
type CompileObjects struct {
	Context *abi.EncContext
	Comm    *abi.EncComm
}

// NewCompileObjects allocates the pair; it fails only when calloc does.
func NewCompileObjects() (*CompileObjects, error) {
	o := &CompileObjects{
		Context: (*abi.EncContext)(calloc(unsafe.Sizeof(abi.EncContext{}))),
		Comm:    (*abi.EncComm)(calloc(unsafe.Sizeof(abi.EncComm{}))),
	}
	if o.Context == nil || o.Comm == nil {
		o.Free()
		return nil, &Error{Status: abi.NRTFailHostMemAlloc, Msg: "calloc of enc_context / enc_comm failed"}
	}
	for i := range o.Context.StreamIDMap {
		o.Context.StreamIDMap[i] = abi.EncStreamIDUninitialized
	}
	return o, nil
}

// Free releases the C memory; safe to call twice.
func (o *CompileObjects) Free() {
	cfree(unsafe.Pointer(o.Context))
	cfree(unsafe.Pointer(o.Comm))
	o.Context, o.Comm = nil, nil
}
