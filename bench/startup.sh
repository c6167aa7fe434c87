#!/bin/bash
# Where nrtabi --help's start-up goes, against an empty Go program in the
# same run (docs/benchmarks.md#start-up-2026-12-04). It builds, all with
# CGO_ENABLED=0 the way go install does:
#   empty      func main() {}
#   std        a main that only imports (blank) the standard library's
#              packages nrtabi links: their inits and nothing else
#   std+deps   the same plus the third-party packages nrtabi links
#   all        the same plus this module's packages
#   nrtabi     the command itself, run as nrtabi --help
#   linked     the same binary as the linker wrote it (see rewrite below)
# and prints, for each, page faults and CPU time (perf stat -r RUNS, ROUNDS
# rounds, the programs interleaved within a round) and wall time (hyperfine
# -N, one run of all programs per round), each with its ratio to the empty
# program's, medians over the rounds, with the load average before and
# after. The ladder separates the cost of linking a package (its init, the
# pages the init touches) from nrtabi's own work and the size of its binary.
# Not part of make test: about a minute on an idle 2-core machine.
# Usage: bench/startup.sh [ROUNDS [RUNS]]; needs perf, hyperfine and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
runs=${2:-100}
for tool in perf hyperfine jq go; do
	command -v "$tool" >/dev/null || { echo "bench/startup.sh: $tool not found (apt-get install linux-perf hyperfine jq)" >&2; exit 2; }
done

tmp=$(mktemp -d)
# The import-only programs live inside the module (they import its internal
# packages); the directory starts with "_" so ./... never sees it.
ladder=$(mktemp -d ./bench/_startup.XXXXXX)
trap 'rm -rf "$tmp" "$ladder"' EXIT

export CGO_ENABLED=0
go build -o "$tmp/nrtabi.linked" ./cmd/nrtabi
# Every program is timed as a copy written by write(2): the file the
# linker writes through a memory map (and go build renames into place)
# starts about 0.4 ms slower in system time, same bytes, same faults to
# within 7% (docs/benchmarks.md#start-up-2026-12-04); the nrtabi.linked row
# shows it.
rewrite() { cat "$1" >"$2" && chmod +x "$2"; }
rewrite "$tmp/nrtabi.linked" "$tmp/nrtabi"

mkdir -p "$tmp/empty"
printf 'module empty\n\ngo 1.26\n' >"$tmp/empty/go.mod"
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty/main.go"
(cd "$tmp/empty" && go build -o "$tmp/empty.linked" .)
rewrite "$tmp/empty.linked" "$tmp/empty.bin"

# The packages nrtabi links, in three sets; the runtime's, internal and
# vendored ones come in with the others (they cannot be imported).
go list -deps ./cmd/nrtabi | grep -v -e '^main$' -e '/cmd/nrtabi$' >"$tmp/deps"
importable() { grep -v -E '(^|/)internal(/|$)|^vendor/|^unsafe$|^runtime(/|$)' || true; }
grep -v '\.' "$tmp/deps" | importable >"$tmp/std"
grep '\.' "$tmp/deps" | grep -v '^github.com/nrtabi/nrtabi' | importable >"$tmp/thirdparty"
grep '^github.com/nrtabi/nrtabi' "$tmp/deps" >"$tmp/own"
variant() {
	local name=$1
	shift
	mkdir -p "$ladder/$name"
	{
		echo "package main"
		echo "import ("
		cat "$@" | sed 's/.*/\t_ "&"/'
		echo ")"
		echo "func main() {}"
	} >"$ladder/$name/main.go"
	go build -o "$tmp/$name.linked" "./$ladder/$name"
	rewrite "$tmp/$name.linked" "$tmp/$name.bin"
}
variant std "$tmp/std"
variant stddeps "$tmp/std" "$tmp/thirdparty"
variant all "$tmp/std" "$tmp/thirdparty" "$tmp/own"

names=(empty std stddeps all nrtabi linked)
cmds=("$tmp/empty.bin" "$tmp/std.bin" "$tmp/stddeps.bin" "$tmp/all.bin" "$tmp/nrtabi --help" "$tmp/nrtabi.linked --help")
inits() { GODEBUG=inittrace=1 $1 2>&1 >/dev/null | grep -c '^init ' || true; }

echo "start-up ladder, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/_startup.*' || echo ' (with uncommitted changes)')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
	for i in "${!names[@]}"; do
		perf stat -x, -e page-faults,task-clock -r "$runs" ${cmds[$i]} 2>&1 >/dev/null |
			awk -F, -v n="${names[$i]}" -v r="$r" '/page-faults/{pf=$1} /task-clock/{tc=$1} END{print n, r, pf, tc}' >>"$tmp/perf"
	done
	hyperfine -N -w 10 -r "$runs" --export-json "$tmp/hf$r.json" "${cmds[@]}" >/dev/null 2>&1
	jq -r '.results[] | [.command, .median, .min] | @tsv' "$tmp/hf$r.json" >>"$tmp/wall"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -n | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-8s %6s %9s %7s %7s %9s %9s %7s %9s %7s\n' program inits size_MB faults x_empty cpu_ms wall_ms x_empty min_ms x_empty
base_pf= base_cpu= base_wall= base_min=
for i in "${!names[@]}"; do
	n=${names[$i]}
	pf=$(awk -v n="$n" '$1==n{print $3}' "$tmp/perf" | median)
	cpu=$(awk -v n="$n" '$1==n{print $4}' "$tmp/perf" | median)
	wall=$(awk -F'\t' -v c="${cmds[$i]}" '$1==c{print $2*1000}' "$tmp/wall" | median)
	min=$(awk -F'\t' -v c="${cmds[$i]}" '$1==c{print $3*1000}' "$tmp/wall" | sort -n | head -1)
	bin=${cmds[$i]%% *}
	if [ "$n" = empty ]; then base_pf=$pf base_cpu=$cpu base_wall=$wall base_min=$min; fi
	awk -v n="$n" -v ni="$(inits "${cmds[$i]}")" -v sz="$(stat -c %s "$bin")" -v pf="$pf" -v cpu="$cpu" -v w="$wall" -v m="$min" \
		-v bpf="$base_pf" -v bw="$base_wall" -v bm="$base_min" \
		'BEGIN{printf "%-8s %6d %9.1f %7d %7.2f %9.3f %9.3f %7.2f %9.3f %7.2f\n", n, ni, sz/1e6, pf, pf/bpf, cpu, w, w/bw, m, m/bm}'
done
