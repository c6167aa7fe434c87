#!/bin/sh
# No libnccom.so on the search path: dlopen fails, the table stays NULL, the sentinel is armed.
LD_LIBRARY_PATH="$BUILD" "$HOST" run - -
echo "exit=$?"
