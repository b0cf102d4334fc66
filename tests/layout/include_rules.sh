#!/usr/bin/env bash
# The layout rules of docs/architecture.md, one check per row of its table
# ("The parts"): every include of a part's files, quoted or angled, that
# names a project header (hdrf/, base/, engine/, storage/, api/, tools/,
# bench/, tests/) or a third-party library's (RocksDB, FlatBuffers,
# yaml-cpp, nlohmann-json, xxHash, CLI11, cpp-httplib, Google Benchmark and
# Test, pybind11, oneTBB, jemalloc) must be one the row allows; standard
# and system headers are not checked. Besides, every public header compiles
# on its own (hdrf/c.h also as C99).
# Usage: include_rules.sh SOURCE_ROOT [CXX [GENERATED_INCLUDE_DIR]] (the
# last holds the generated hdrf/version.h). Prints each violation as
# FILE:LINE: include; exits 1 when there is one.
set -u
root=${1:?source root}
cxx=${2:-c++}
gen=${3:-}
gen_inc=()
[ -n "$gen" ] && gen_inc=(-I"$gen")
cd "$root" || exit 1
bad=0

project='hdrf/|base/|engine/|storage/|api/|tools/|bench/|tests/'
third_party='rocksdb/|flatbuffers/|yaml-cpp/|nlohmann/|xxhash\.h|CLI/|httplib\.h|benchmark/|gtest/|gmock/|pybind11/|tbb/|oneapi/|jemalloc/'

# check PART ALLOWED_REGEX [EXCLUDED_FILE...]: PART is a folder or a file;
# every quoted include, and every angled one of a project or third-party
# header, must match ALLOWED_REGEX (anchored at the start of the path).
# Includes in cgo preambles (`// #include` in .go files) count too.
check() {
  local part=$1 allowed=$2
  shift 2
  local excl=()
  for f in "$@"; do excl+=(--exclude="$f"); done
  local out
  out=$(grep -rnHE '^[[:space:]]*(//[[:space:]]*)?#[[:space:]]*include[[:space:]]*["<]' "$part" \
          --include='*.h' --include='*.cc' --include='*.c' --include='*.go' "${excl[@]}" |
        ALLOWED="^($allowed)" CHECKED="^($project|$third_party)" PART="$part" awk '{
          inc = $0
          sub(/^[^#]*#[[:space:]]*include[[:space:]]*/, "", inc)
          open = substr(inc, 1, 1)
          path = substr(inc, 2)
          sub(/[">].*$/, "", path)
          if (open == "<" && path !~ ENVIRON["CHECKED"]) next  # a standard or system header
          if (path !~ ENVIRON["ALLOWED"]) print "layout: " $0 " (allowed from " ENVIRON["PART"] ": " ENVIRON["ALLOWED"] ")"
        }')
  if [ -n "$out" ]; then
    echo "$out"
    bad=1
  fi
}

# One line per row of docs/architecture.md's table, in its order. base/ is
# the bottom layer every part may use.
check api/hdrf 'hdrf/'
check base 'base/'
check engine 'hdrf/|base/|engine/'
# The parts of engine::Tree (docs/architecture.md "The engine's parts"):
# each part's header includes only the part below it, so that a part's
# interface is written in the words of the parts it is built on.
check engine/tree_structure.h 'hdrf/|engine/(huge_alloc|job_index)\.h'
check engine/tree_shares.h 'hdrf/|engine/(key_heap|tree_structure)\.h'
check engine/tree_shards.h 'engine/tree_shares\.h'
check engine/tree_schedule.h 'engine/tree_shards\.h'
check engine/tree_decisions.h 'hdrf/|engine/tree_schedule\.h'
# The engine's concurrency (engine::ConcurrentTree) is written in the words
# of the tree, the locks and the event sink; the sink in the public types.
check engine/concurrent_tree.h 'hdrf/|base/|engine/(tree|event_sink)\.h'
check engine/event_sink.h 'hdrf/'
check storage 'hdrf/|base/|engine/|storage/|hdrf_state_generated\.h|rocksdb/|flatbuffers/'
# The replica (a tree, its replayer and a log position) is written in the
# words of the tree, the records, the store and the checkpoint reader: the
# follower's machinery (secondary.h) and the journal build on it, not it
# on them.
check storage/replica.h 'hdrf/|engine/|storage/(codec|store|state_io)\.h'
check storage/replica.cc 'hdrf/|engine/|storage/(replica|codec|store|state_io)\.h'
# The facade: anything but tools/, bench/, tests/ and the store's own
# libraries (RocksDB, FlatBuffers and the generated record header belong to
# storage/, which owns the journal and the format), and of base/ no lock
# header but mutex.h: the tree's locks are engine::ConcurrentTree's.
check api/facade "hdrf/|base/(mutex|thread_annotations)\.h|engine/|storage/|api/|${third_party//rocksdb\/|flatbuffers\/|/}"
if out=$(grep -rnHE '\b(rocksdb|flatbuffers|fbs)::' api/facade --include='*.h' --include='*.cc'); then
  echo "$out" | sed 's/^/layout: a RocksDB or FlatBuffers type outside storage\/: /'
  bad=1
fi
check api/files 'hdrf/|base/|api/files/'
check api/config 'hdrf/|base/|api/config/|yaml-cpp/'
check api/metrics 'hdrf/|base/|api/metrics/'
check api/formats 'hdrf/|base/|api/formats/|xxhash\.h|nlohmann/' store_trace.cc
check api/formats/store_trace.cc 'hdrf/|base/|api/formats/|engine/|storage/'
check api/sim 'hdrf/|base/|api/sim/|api/formats/(text_lines|json_line)\.h|nlohmann/' store_import.cc simulate.cc
check api/sim/store_import.cc 'hdrf/|base/|api/sim/|api/formats/(text_lines|json_line)\.h|nlohmann/|storage/'
check api/sim/simulate.cc 'hdrf/|base/|api/sim/|api/formats/(text_lines|json_line)\.h|nlohmann/|api/facade/plan_screen\.h'
check api/capi 'hdrf/|base/|api/capi/|nlohmann/'
check api/python 'hdrf/|base/|pybind11/'
check api/go 'hdrf/c\.h'
check tools 'hdrf/|base/|tools/|api/formats/json_line\.h|CLI/|httplib\.h|nlohmann/'
check bench 'hdrf/|base/|bench/|tests/reference/|benchmark/|jemalloc/'
# tests/ may include anything: nothing to check.

# LAYOUT_RULES_ONLY=1 (planted_test.sh): the include rules only.
if [ -n "${LAYOUT_RULES_ONLY:-}" ]; then
  [ "$bad" -ne 0 ] && { echo "layout: FAILED"; exit 1; }
  echo "layout: ok (rules only)"
  exit 0
fi

# Every public header on its own (C headers also as C).
for h in api/hdrf/*.h; do
  if ! out=$(echo "#include \"${h#api/}\"" | "$cxx" -std=c++20 -fsyntax-only -Iapi "${gen_inc[@]}" -x c++ - 2>&1); then
    echo "layout: $h does not compile on its own:"
    echo "$out" | head -5
    bad=1
  fi
done

# The C interface also as C99.
case "$cxx" in *g++*) cc=${cxx/g++/gcc} ;; *clang++*) cc=${cxx/clang++/clang} ;; *) cc=cc ;; esac
if ! out=$(echo '#include "hdrf/c.h"' | "$cc" -std=c99 -pedantic -fsyntax-only -Iapi "${gen_inc[@]}" -x c - 2>&1); then
  echo "layout: api/hdrf/c.h does not compile as C99:"
  echo "$out" | head -5
  bad=1
fi

if [ "$bad" -ne 0 ]; then
  echo "layout: FAILED (docs/architecture.md lists who may include whom)"
  exit 1
fi
echo "layout: ok"
