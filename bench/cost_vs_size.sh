#!/usr/bin/env bash
# The figures of bench/README.md "Cost versus size" (issue 16), in one run:
# replay on 1 and 2 threads, replay against the engine on the same trace,
# the engine's per-size ingest, churn, memory and memory-latency figures,
# the two-thread table (medians of 3) and bench/two_threads.sh's rounds
# (each with the line handoff between the cores measured beside it).
# Run it on a quiet machine.
#
#   bash bench/cost_vs_size.sh [-b BUILD_DIR] [-t TRACE_DIR] OUT_DIR
#
# Traces (5·10^6 task events; 10^3, 10^5, 10^6 jobs) are made in TRACE_DIR
# (default OUT_DIR/traces) when missing. Writes OUT_DIR/*.json and *.txt;
# prints a summary. The plot: python3 bench/plot_cost_vs_size.py OUT_DIR/cost.json
set -euo pipefail
build=build/release tdir=
while getopts "b:t:" o; do
  case $o in
    b) build=$OPTARG ;;
    t) tdir=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-b BUILD_DIR] [-t TRACE_DIR] OUT_DIR" >&2; exit 2; }
out=$1
tdir=${tdir:-$out/traces}
mkdir -p "$out" "$tdir"
hdrf=$build/tools/hdrf
eb=$build/bench/engine_bench
echo "== $(date -u)  $(nproc) cores  load: $(cut -d' ' -f1-3 /proc/loadavg)  commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)" | tee "$out/summary.txt"
for j in 1000 100000 1000000; do
  [ -f "$tdir/t$j.trc" ] || "$hdrf" trace gen --jobs $j --depth 3 --fanout 10 --events 5000000 --seed 1 --out "$tdir/t$j.trc" >/dev/null
done
rate() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('%.2f M/s (%.1f ns) refused %d digest %s' % (d['events_per_sec']/1e6, 1e9/d['events_per_sec'], d['refused'], d['digest']))" "$1"; }
for j in 1000 100000 1000000; do
  "$hdrf" replay --trace "$tdir/t$j.trc" --threads 1 --json --no-progress > "$out/replay_$j.json"
  "$hdrf" replay --trace "$tdir/t$j.trc" --threads 1 --batch 1 --json --no-progress > "$out/replay_${j}_b1.json"
  echo "replay $j jobs, 1 thread, batched:  $(rate "$out/replay_$j.json")" | tee -a "$out/summary.txt"
  echo "replay $j jobs, 1 thread, --batch 1: $(rate "$out/replay_${j}_b1.json")" | tee -a "$out/summary.txt"
done
for j in 100000 1000000; do
  for p in job subtree; do
    "$hdrf" replay --trace "$tdir/t$j.trc" --threads 2 --partition $p --json --no-progress > "$out/replay_${j}_2_$p.json"
    echo "replay $j jobs, 2 threads, --partition $p: $(rate "$out/replay_${j}_2_$p.json")" | tee -a "$out/summary.txt"
  done
done
bash bench/replay_gap.sh -b "$build" -r 3 "$tdir/t1000.trc" "$tdir/t100000.trc" "$tdir/t1000000.trc" | tee "$out/replay_gap.txt" | tee -a "$out/summary.txt"
"$eb" --benchmark_filter='BM_Ingest(Batched)?/jobs:|BM_MemoryPerJob|BM_FullUseChurn/|BM_MemoryLatency|BM_LineTransfer' \
  --benchmark_out="$out/cost.json" --benchmark_out_format=json 2>&1 | grep -E '^BM_' | tee "$out/cost.txt" >> "$out/summary.txt"
"$eb" --benchmark_filter='BM_Ingest(Batched|Grouped|ByTopQueue)?/jobs:(1000|100000|1000000)/' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | tee "$out/two_threads.txt" >> "$out/summary.txt"
# Two threads against one, round by round with the cores' line handoff
# measured in the same process (it changes with the VM's vCPU placement).
bash bench/two_threads.sh -b "$build" -r 4 | tee "$out/two_threads_rounds.txt" >> "$out/summary.txt"
# Churn against plain ingest, alone (the worlds of 10^7 jobs above stay
# resident in that process and slow what follows them there).
"$eb" --benchmark_filter='BM_FullUseChurn|BM_Ingest/jobs:(1000|100000)/.*threads:1$' \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | tee "$out/churn.txt" >> "$out/summary.txt"
echo "== done $(date -u)  load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/summary.txt"
