#!/bin/sh
# The 20 reverse callbacks called directly by the host through their @NRT_2.0.0 bindings, answered from the default simulated topology.
LD_LIBRARY_PATH="$BUILD" "$HOST" reverse - "$STUBS/good/libnccom.so"
echo "exit=$?"
