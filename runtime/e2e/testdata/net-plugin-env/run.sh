#!/bin/sh
# NRTABI_NET_PLUGIN names the plugin by path, off the search path (a real Neuron host's installed libnccom-net.so): the soft load keeps that file's handle.
out=$(LD_LIBRARY_PATH="$BUILD:$STUBS/good" NRTABI_NET_PLUGIN="$STUBS/net-plugin/libnccom-net.so" "$HOST" run - - 2>&1); rc=$?
printf '%s\n' "$out" | grep -vE "^  #|^again|^after the calls"
echo "exit=$rc"
