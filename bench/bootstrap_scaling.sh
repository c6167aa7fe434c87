#!/usr/bin/env bash
# Bootstrap time against world size N on the in-process transport
# (runtime/collectives BenchmarkBootstrap): prints the rounds, the time per
# bootstrap and the ratio against the named peer N=16, for two transports:
#   link  every message pays a modelled link latency (NRTABI_BENCH_LATENCY,
#         default 2ms): the time is the rounds, as between machines.
#         Goal: time(256) / time(16) <= 2.5 (logarithmic rounds).
#   mem   no latency: all N ranks' CPU work shares this machine's cores, so
#         the time grows with N; shown for what it costs here.
set -euo pipefail
cd "$(dirname "$0")/.."
# The release to measure, by its build tag (docs/generator.md#building-for-a-release).
RELEASE=${RELEASE:-2.31.24}
tags=nrtabi_release_$(printf %s "$RELEASE" | tr .- __)
benchtime=${BENCHTIME:-20x}
out=$(go test -tags "$tags" -run '^$' -bench 'BenchmarkBootstrap' -benchtime "$benchtime" ./runtime/collectives/)
echo "$out" | grep -E '^(goos|goarch|cpu):' || true
echo "$out" | awk -v goal=2.5 '
/^BenchmarkBootstrap\// {
	split($1, p, "/"); mode = p[2]; n = p[3]; sub(/^N=/, "", n); sub(/-[0-9]+$/, "", n)
	ns[mode, n] = $3; rounds[mode, n] = $7; msgs[mode, n] = $5
	if (!(mode in seen)) { seen[mode] = 1; modes[++nm] = mode }
	if (!(n in seenN)) { seenN[n] = 1; sizes[++nn] = n }
}
END {
	if (nm == 0) { print "no benchmark output"; exit 1 }
	for (m = 1; m <= nm; m++) {
		mode = modes[m]
		printf "\n%s transport\n%6s %7s %9s %14s %10s\n", mode, "N", "rounds", "msgs", "time/bootstrap", "vs N=16"
		for (i = 1; i <= nn; i++) {
			n = sizes[i]
			if (!((mode, n) in ns)) continue
			printf "%6d %7d %9d %12.3f ms %9.2fx\n", n, rounds[mode, n], msgs[mode, n], ns[mode, n] / 1e6, ns[mode, n] / ns[mode, 16]
		}
		r = ns[mode, 256] / ns[mode, 16]
		if (mode == "link")
			printf "time(256)/time(16) = %.2f (goal <= %.1f): %s\n", r, goal, (r <= goal ? "met" : "MISSED")
		else
			printf "time(256)/time(16) = %.2f (no goal: N ranks share the CPUs)\n", r
	}
}'
