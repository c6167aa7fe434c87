#!/bin/sh
# Reverse-leg link matrix: a libnrt.so.1 with no version information at all (no .gnu.version): the loader aborts the process.
"$LINKHOST" "$VARIANTS/minimal/libnrt.so.1" "$STUBS/good/libnccom.so" "$ROUNDTRIP" 2>&1
echo "exit=$?"
