#!/bin/sh
# NRTABI_NET_PLUGIN names a file that is not there: the soft load fails, non-fatally, and nrt_get_libnccl_net says why by name.
out=$(LD_LIBRARY_PATH="$BUILD:$STUBS/good" NRTABI_NET_PLUGIN="$STUBS/no-such/libnccom-net.so" "$HOST" run - - 2>&1); rc=$?
printf '%s\n' "$out" | grep -vE "^  #|^again|^after the calls"
echo "exit=$rc"
