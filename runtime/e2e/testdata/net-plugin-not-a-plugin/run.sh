#!/bin/sh
# NRTABI_NET_PLUGIN names a shared object that loads but exports no plugin table (a libnccom double): it is closed and refused by name; collectives without the net stay up.
out=$(LD_LIBRARY_PATH="$BUILD:$STUBS/good" NRTABI_NET_PLUGIN="$STUBS/good/libnccom.so" "$HOST" run - - 2>&1); rc=$?
printf '%s\n' "$out" | grep -vE "^  #|^again|^after the calls"
echo "exit=$rc"
