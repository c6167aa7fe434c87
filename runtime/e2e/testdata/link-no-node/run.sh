#!/bin/sh
# Reverse-leg link matrix: libnrt variant no-node, then the good double.
"$LINKHOST" "$VARIANTS/no-node/libnrt.so.1" "$STUBS/good/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
