#!/bin/sh
# Sixteen threads race into a failing handoff: one outcome, one sentinel.
LD_LIBRARY_PATH="$BUILD" "$HOST" concurrent 16 - "$STUBS/$INCOMPATIBLE/libnccom.so"
echo "exit=$?"
