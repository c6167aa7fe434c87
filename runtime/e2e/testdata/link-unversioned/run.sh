#!/bin/sh
# Reverse-leg link matrix: libnrt variant unversioned, then the good double.
"$LINKHOST" "$VARIANTS/unversioned/libnrt.so.1" "$STUBS/good/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
