#!/bin/sh
# A topology file with a mistake: nrtabi_init refuses it, naming the file, line and field, and loads no libnccom.
out=$(LD_LIBRARY_PATH="$BUILD" "$HOST" run "$SCENARIO/bad.toml" "$STUBS/good/libnccom.so" 2>&1); rc=$?
printf '%s\n' "$out" | grep -vE "^  #"
echo "exit=$rc"
