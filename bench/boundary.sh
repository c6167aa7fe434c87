#!/bin/sh
# The runtime-boundary benchmark: ns per forward call, raw slot call vs
# guarded trampoline vs hot path vs Go through cgo, with the ratios.
# Flags go to bench/boundary (see -h).
set -e
cd "$(dirname "$0")/.."
exec go run ./bench/boundary "$@"
