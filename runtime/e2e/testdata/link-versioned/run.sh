#!/bin/sh
# Reverse-leg link matrix: the runtime's own libnrt.so.1 (callbacks @@NRT_2.0.0), then the good double.
"$LINKHOST" "$BUILD/libnrt.so.1" "$STUBS/good/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
