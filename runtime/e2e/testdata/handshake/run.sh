#!/bin/sh
# The reference pair: libnrt dlopens the good double by its default name through the normal search path; every forward entry point through the Go API; neuronGetPeerDeviceId calls back into nec_get_peer_mla_idx.
LD_LIBRARY_PATH="$BUILD:$STUBS/good" "$HOST" run - -
echo "exit=$?"
