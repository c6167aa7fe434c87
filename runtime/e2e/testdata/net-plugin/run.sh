#!/bin/sh
# A libnccom-net.so on the search path: the soft load keeps its handle and nrt_get_libnccl_net returns it.
out=$(LD_LIBRARY_PATH="$BUILD:$STUBS/good:$STUBS/net-plugin" "$HOST" run - - 2>&1); rc=$?
printf '%s\n' "$out" | grep -vE "^  #"
echo "exit=$rc"
