#!/usr/bin/env bash
# Instructions and simulated cache misses per event of engine_bench's ingest
# loops, from callgrind (deterministic: not disturbed by a loaded machine).
# Usage: bash bench/callgrind_probe.sh [BENCH_BINARY] FILTER...
#   e.g. bash bench/callgrind_probe.sh 'BM_Ingest/jobs:100000/.*threads:1$'
# Each timed loop of the benchmark zeroes callgrind's counters when it starts
# and dumps them when it ends (HDRF_PROBE_* in engine_bench.cc); the longest
# dump of each filter is reported: Ir, D1 and LL misses (reads + writes) per
# event. The cache model is callgrind's (D1 and LL as detected on this
# machine), one thread only.
set -euo pipefail
bin=build/release/bench/engine_bench
if [ $# -gt 0 ] && [ -x "$1" ]; then bin=$1; shift; fi
[ $# -gt 0 ] || { echo "usage: $0 [BENCH_BINARY] FILTER..." >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%-40s %10s %10s %10s %10s\n' filter events Ir/event D1miss/ev LLmiss/ev
for f in "$@"; do
  rm -f "$dir"/cg.*
  valgrind --tool=callgrind --cache-sim=yes --compress-strings=no --callgrind-out-file="$dir/cg.%p" \
    "$bin" --benchmark_filter="$f" --benchmark_min_time=0.05 >/dev/null 2>"$dir/log" ||
    { cat "$dir/log" >&2; exit 1; }
  best=""
  best_events=0
  for d in "$dir"/cg.*; do
    ev=$(sed -n 's/^desc: Trigger: Client Request: .* events=\([0-9]*\)$/\1/p' "$d")
    [ -n "$ev" ] && [ "$ev" -gt "$best_events" ] && { best=$d; best_events=$ev; }
  done
  [ -n "$best" ] || { echo "$f: no probe dump (built without valgrind/callgrind.h?)" >&2; continue; }
  # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
  read -r ir d1r d1w llr llw < <(awk '/^summary:|^totals:/{print $2, $6, $7, $9, $10; exit}' "$best")
  awk -v f="$f" -v n="$best_events" -v ir="$ir" -v d1="$((d1r + d1w))" -v ll="$((llr + llw))" \
    'BEGIN{printf "%-40s %10d %10.0f %10.2f %10.2f\n", f, n, ir/n, d1/n, ll/n}'
done
