#!/usr/bin/env bash
# Runs one libFuzzer target (tests/fuzz/meson.build, docs/testing.md).
#   run_fuzz.sh BINARY CORPUS_DIR WORK_DIR SECONDS     bounded fuzzing
#   run_fuzz.sh BINARY CORPUS_DIR WORK_DIR replay      every corpus file once
# Fuzzing writes new inputs to WORK_DIR/corpus (the tree's corpus is only
# read) and a crashing input to WORK_DIR/crash-*. HDRF_FUZZ_SECONDS
# overrides SECONDS; extra libFuzzer flags can be given in HDRF_FUZZ_FLAGS.
set -euo pipefail
bin=$1 corpus=$2 work=$3 mode=$4
mkdir -p "$work/corpus"
if [ "$mode" = replay ]; then
  # Individual files: libFuzzer runs each once and exits (no fuzzing).
  files=("$corpus"/*)
  exec "$bin" -rss_limit_mb=2048 -timeout=20 "${files[@]}"
fi
secs=${HDRF_FUZZ_SECONDS:-$mode}
# shellcheck disable=SC2086
exec "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$work/" ${HDRF_FUZZ_FLAGS:-} "$work/corpus" "$corpus"
