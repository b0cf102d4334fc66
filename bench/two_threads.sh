#!/usr/bin/env bash
# Two threads against one, not routed (issue 16 item 3), with the cost of
# moving a cache line between the two cores measured in the same process
# (BM_LineTransfer). On a VM that cost changes with where the host runs the
# two vCPUs (seen here: 27 ns or 160 ns per handoff, for minutes at a
# time), and the two-thread figures change with it; so each round is one
# process that measures the handoff first, then the engine on one thread
# and on two, and prints one line: the handoff and each size's ratio.
#
#   bench/two_threads.sh [-b BUILD_DIR] [-r ROUNDS] [-f BENCH] [-j JOBS_REGEX]
#
# On a machine with more cores, engine_bench also runs 4, 8 and 16 threads
# (as many as there are cores); each is printed against one thread. The
# handoff is then that of the two threads BM_LineTransfer runs.
#
# BENCH: BM_IngestBatched (default: ApplyTasks in batches of 1024, grouped
# by shard while two run), BM_IngestGrouped, BM_Ingest (one call per event)
# or BM_IngestByTopQueue (routed). JOBS_REGEX: default 1000|100000|1000000.
set -euo pipefail
build=build/release rounds=6 bench=BM_IngestBatched jobs='1000|100000|1000000'
while getopts "b:r:f:j:" o; do
  case $o in
    b) build=$OPTARG ;;
    r) rounds=$OPTARG ;;
    f) bench=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) exit 2 ;;
  esac
done
eb=$build/bench/engine_bench
echo "$bench, 2 (4, 8, 16) threads against 1 (M events/s), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
for r in $(seq "$rounds"); do
  "$eb" --benchmark_filter="BM_LineTransfer|^$bench/jobs:($jobs)/" --benchmark_format=json 2>/dev/null |
    python3 -c '
import json, sys
d = json.load(sys.stdin)["benchmarks"]
handoff = next(b["ns_per_handoff"] for b in d if b["name"].startswith("BM_LineTransfer"))
rate = {}
for b in d:
    if b["name"].startswith("BM_LineTransfer"):
        continue
    parts = b["name"].split("/")
    jobs = parts[1].split(":")[1]
    threads = parts[-1].split(":")[1]
    rate[(jobs, threads)] = b["items_per_second"] / 1e6
cells = []
for jobs in sorted({j for j, _ in rate}, key=int):
    one = rate.get((jobs, "1"))
    more = sorted((int(t), v) for (j, t), v in rate.items() if j == jobs and t != "1")
    if one and more:
        # 2 threads as "a -> b (r)"; 4, 8, 16 (machines with that many
        # cores) as "t: b (r)".
        cell = "%s jobs %.2f" % (jobs, one)
        for t, v in more:
            cell += (" -> %.2f (%.2fx)" if t == 2 else ", %d: %%.2f (%%.2fx)" % t) % (v, v / one)
        cells.append(cell)
print("round %s  handoff %5.1f ns  %s" % (sys.argv[1], handoff, "  ".join(cells)))
' "$r"
done
