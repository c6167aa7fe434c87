#!/bin/sh
# The forward -> reverse round trip traced at debug level: neuronGetPeerDeviceId in the double calls
# nec_get_peer_mla_idx, which re-enters nrt_get_instance_info before it asks the device layer. On a
# trn1 topology the port is used as given; on the default (trn2) topology it is remapped first.
for topo in "$SCENARIO/trn1.toml" -; do
	echo "--- topology $topo"
	out=$(LD_LIBRARY_PATH="$BUILD" NRTABI_LOG_LEVEL=debug "$HOST" run "$topo" "$STUBS/good/libnccom.so" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -E "nrtabi_init|#18|callback=(nrt_get_instance_info|encd_arch_get_port|nec_get_peer_mla_idx)" | head -5
	echo "exit=$rc"
done
