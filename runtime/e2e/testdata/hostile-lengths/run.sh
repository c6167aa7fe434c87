#!/bin/sh
# The C boundary under hostile lengths and NULL out-pointers (docs/runtime-boundary.md#behaviour-worth-knowing): nec_ndl_printk with sizes of 2^31 and more reads only up to the NUL (at most 4096 bytes), the nrtabi_* exports refuse SIZE_MAX buffers, and the libnccom double answers NRT_INVALID (2) to NULL out-pointers and out-of-range sizes instead of crashing.
LD_LIBRARY_PATH="$BUILD" "$HOST" hostile - "$STUBS/good/libnccom.so"
echo "exit=$?"
