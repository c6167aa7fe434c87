package nrt

/*
#include "nrt_slots.h"
*/
import "C"

// NullOutProbe calls forward entry point index's trampoline with every
// argument 0, so every out-pointer NULL, and returns its status; ok is false
// when the entry point has no out-pointer. It exists for tests of the C
// boundary: a trampoline must refuse a NULL out-pointer with NRT_INVALID
// before libnccom could write through it.
func NullOutProbe(index int) (st Status, ok bool) {
	rc := C.nrt_nccl_null_out_probe(C.int(index))
	if rc < 0 {
		return 0, false
	}
	return Status(rc), true
}
