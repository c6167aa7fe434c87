#!/bin/sh
# A double without the entry point of dlsym index 18: the slots already filled are discarded too.
LD_LIBRARY_PATH="$BUILD" "$HOST" run - "$STUBS/missing-18/libnccom.so"
echo "exit=$?"
