#!/usr/bin/env bash
# `hdrf replay --threads 1` against the engine's own batched rate on the same
# trace (bench/replay_bench), alternating the two, R rounds per trace; prints
# the median ns per event of each, their ratio, and the replay's ratio of the
# last trace to the first (issue 16 item 2; bench/cost_history.md "Fourth pass").
#
#   bench/replay_gap.sh [-b BUILD_DIR] [-r ROUNDS] [-x HDRF_BIN] TRACE...
#
# Every run is a fresh process; the figures are the timed phases only
# (setup and trace reading excluded in both).
set -euo pipefail
build=build/release rounds=3 hdrf=
while getopts "b:r:x:" o; do
  case $o in
    b) build=$OPTARG ;;
    r) rounds=$OPTARG ;;
    x) hdrf=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-b BUILD_DIR] [-r ROUNDS] [-x HDRF_BIN] TRACE..." >&2; exit 2; }
hdrf=${hdrf:-$build/tools/hdrf}
bench=$build/bench/replay_bench

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" | tail -1; }
digest() { sed -n 's/.*"digest": "\([0-9a-f]*\)".*/\1/p' | tail -1; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

printf '%-24s %10s %10s %8s\n' trace replay_ns engine_ns replay/engine
first=
for t in "$@"; do
  rs=() es=()
  for ((k = 0; k < rounds; k++)); do
    r=$("$hdrf" replay --trace "$t" --threads 1 --json --no-progress | tail -1)
    e=$("$bench" --trace "$t" | tail -1)
    [ "$(digest <<<"$r")" = "$(digest <<<"$e")" ] || { echo "digests differ on $t" >&2; exit 1; }
    rs+=("$(awk -v s="$(field seconds <<<"$r")" -v n="$(field events <<<"$r")" 'BEGIN {printf "%.2f", s * 1e9 / n}')")
    es+=("$(field ns_per_event <<<"$e")")
  done
  rm=$(printf '%s\n' "${rs[@]}" | median)
  em=$(printf '%s\n' "${es[@]}" | median)
  printf '%-24s %10.1f %10.1f %8.3f   (replay %s; engine %s)\n' "$(basename "$t")" "$rm" "$em" \
    "$(awk -v a="$rm" -v b="$em" 'BEGIN {print a / b}')" "${rs[*]}" "${es[*]}"
  first=${first:-$rm}
  last=$rm
done
[ $# -ge 2 ] && printf 'replay last/first trace: %.2fx\n' "$(awk -v a="$last" -v b="$first" 'BEGIN {print a / b}')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
