#!/bin/sh
# Reverse-leg link matrix: libnrt variant not-exported, then the good double.
"$LINKHOST" "$VARIANTS/not-exported/libnrt.so.1" "$STUBS/good/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
