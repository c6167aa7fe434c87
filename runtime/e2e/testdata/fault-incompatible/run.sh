#!/bin/sh
# A double that reports the wrong compatibility id: the gate refuses it before any other symbol is resolved.
LD_LIBRARY_PATH="$BUILD" "$HOST" run - "$STUBS/$INCOMPATIBLE/libnccom.so"
echo "exit=$?"
