#!/bin/sh
# Forward leg: a double whose neuron* exports carry a version node still loads through dlsym.
"$LINKHOST" "$BUILD/libnrt.so.1" "$STUBS/forward-versioned/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
