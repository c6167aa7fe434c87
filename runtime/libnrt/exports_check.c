/* Compiled into libnrt so that the public header and the prototypes cgo
 * writes for the Go exports cannot disagree: conflicting declarations do not
 * compile. */
#include "nrtabi_runtime.h"
#include "_cgo_export.h"
