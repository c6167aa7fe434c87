#!/usr/bin/env bash
# Wall time for N processes on loopback to agree on a world, against a named
# peer measured in the same run:
#   flat   what `nrtabi-runtime bootstrap` does (runtime/transport/tcp + the per-NC
#          bootstrap of runtime/collectives): the global flat bootstrap
#          (root gather, ring wiring, ring all-gather), the global comm's
#          signature validation + id broadcast + comm init, then the replica
#          group's signature validation (tree AND-reduce) and unique-id
#          broadcast (hypercube). "agree" is the moment the group's verdict
#          and id are known everywhere; "boot" the world alone.
#   naive  one everyone-to-root gather reaching the same agreement
#          (bench/bootstraptcp --local N, launched, held and judged by the
#          same runtime/launch launcher): each rank sends the root its
#          address and signature, the root answers everyone with the
#          verdict, an id and the address table.
# Each figure is the median over REPS runs of (last rank reaching the phase)
# - (last rank starting); ranks start together after all have launched.
set -euo pipefail
cd "$(dirname "$0")/.."
# The release to measure, by its build tag (docs/generator.md#building-for-a-release).
RELEASE=${RELEASE:-2.31.24}
tags=nrtabi_release_$(printf %s "$RELEASE" | tr .- __)
reps=${REPS:-5}
sizes=${SIZES:-"2 4 8 16 32 64"}
export NEURON_CCOM_SOCK_TIMEOUT=${NEURON_CCOM_SOCK_TIMEOUT:-30}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -tags "$tags" -o "$dir/nrtabi-runtime" ./cmd/nrtabi-runtime
go build -tags "$tags" -o "$dir/bootstraptcp" ./bench/bootstraptcp

# timing COMMAND... -> "boot agree done" in ms
timing() {
	"$@" --timing | awk '
	/^timing:/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } ok = 1 }
	END { if (!ok) exit 1; print v["boot_ms"], v["agree_ms"], v["done_ms"] }'
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "nproc $(nproc), $reps runs per size, NEURON_CCOM_SOCK_TIMEOUT=$NEURON_CCOM_SOCK_TIMEOUT"
printf "%5s %14s %16s %14s %14s %12s\n" N "flat boot ms" "flat agree ms" "flat done ms" "naive ms" "agree/naive"
for n in $sizes; do
	: >"$dir/flat" && : >"$dir/naive"
	for ((i = 0; i < reps; i++)); do # interleaved, so both see the same machine
		timing "$dir/nrtabi-runtime" bootstrap --local "$n" >>"$dir/flat" || { echo "bench: a flat run of $n processes failed" >&2; exit 1; }
		timing "$dir/bootstraptcp" --local "$n" >>"$dir/naive" || { echo "bench: a naive run of $n processes failed" >&2; exit 1; }
	done
	boot=$(awk '{ print $1 }' "$dir/flat" | median)
	agree=$(awk '{ print $2 }' "$dir/flat" | median)
	done_=$(awk '{ print $3 }' "$dir/flat" | median)
	naive=$(awk '{ print $2 }' "$dir/naive" | median)
	awk -v n="$n" -v b="$boot" -v a="$agree" -v d="$done_" -v v="$naive" \
		'BEGIN { printf "%5d %14.2f %16.2f %14.2f %14.2f %11.2fx\n", n, b, a, d, v, a / v }'
done
