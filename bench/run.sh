#!/usr/bin/env bash
# Runs the benchmark set whose figures bench/README.md reports.
# Usage: bash bench/run.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
b="${1:-build/release}"
cd "$(dirname "$0")/.."
echo "== $(date -u)  $(nproc) cores  load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$b/bench/engine_bench" --benchmark_filter='BM_Ingest|BM_FullUseChurn|BM_ScheduleLoop|BM_ReferenceIngest|BM_MemoryPerJob' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median|BM_MemoryPerJob|BM_ReferenceIngest'
t=$(mktemp -d)
"$b/tools/hdrf" trace gen --jobs 100000 --depth 3 --fanout 10 --events 10000000 --seed 1 --out "$t/t.trc" >/dev/null
for th in 1 2; do
  echo "== replay in memory, $th thread(s)"
  "$b/tools/hdrf" replay --trace "$t/t.trc" --threads $th --json | tail -1
done
"$b/tools/hdrf" trace gen --jobs 100000 --depth 3 --fanout 10 --events 2000000 --seed 2 --out "$t/p.trc" >/dev/null
for d in async sync; do
  echo "== replay into a store, $d, batches of 4096"
  "$b/tools/hdrf" replay --trace "$t/p.trc" --db "$t/db-$d" --durability $d --batch 4096 --json | tail -1
  echo "== recover ($d store)"
  "$b/tools/hdrf" recover --db "$t/db-$d" --json
done
rm -rf "$t"
