package nrt

/*
#include "trampolines.h"
*/
import "C"

import "unsafe"

// TrampolineTableSize is the size of the table TrampolineTable fills: the
// slot table's (struct nrt_nccl_slots).
const TrampolineTableSize = C.sizeof_struct_nrt_nccl_slots

// TrampolineTable fills the struct nrt_nccl_slots at out with the nccl*
// trampolines (trampolines.c), for a C host that calls libnccom through
// them. It refuses (false, nothing written) a size that is not the table's.
func TrampolineTable(out unsafe.Pointer, size uintptr) bool {
	if out == nil || size != TrampolineTableSize {
		return false
	}
	C.nrt_trampoline_table((*C.struct_nrt_nccl_slots)(out))
	return true
}
