#!/usr/bin/env bash
# Global comm init through the boundary (C hosts: libnrt.so.1 -> the
# reference libnccom over TCP, then the per-NC bootstrap over the
# ncclBootstrap trampolines) against the Go-only `nrtabi-runtime bootstrap --local N`,
# in the same run, with the ratio. REPS and SIZES as in bootstrap_tcp.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# The release to measure, by its build tag (docs/generator.md#building-for-a-release).
RELEASE=${RELEASE:-2.31.24}
tags=nrtabi_release_$(printf %s "$RELEASE" | tr .- __)
exec go run -tags "$tags" ./bench/bootcomm -reps "${REPS:-5}" -sizes "${SIZES:-2 4 8 16 32}"
