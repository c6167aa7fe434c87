#!/bin/sh
# Every entry point of the double returns NRT_INVALID: each guarded trampoline logs its own failure literal and passes the status through.
LD_LIBRARY_PATH="$BUILD" "$HOST" run - "$STUBS/fail-rc/libnccom.so"
echo "exit=$?"
