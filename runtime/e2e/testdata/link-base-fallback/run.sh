#!/bin/sh
# Reverse-leg link matrix: libnrt variant base-fallback, then the good double.
"$LINKHOST" "$VARIANTS/base-fallback/libnrt.so.1" "$STUBS/good/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
