#!/bin/sh
# A double without neuronGetVersionInfo.
LD_LIBRARY_PATH="$BUILD" "$HOST" run - "$STUBS/no-probe/libnccom.so"
echo "exit=$?"
