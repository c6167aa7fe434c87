#!/bin/sh
# Sixteen threads call nrtabi_init at once: one handoff, one outcome (one Using CCOM line).
LD_LIBRARY_PATH="$BUILD:$STUBS/good" "$HOST" concurrent 16 - -
echo "exit=$?"
