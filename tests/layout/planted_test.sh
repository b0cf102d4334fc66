#!/usr/bin/env bash
# The layout check must fail on what it is there to catch: a RocksDB header
# or type planted in api/facade/ (storage/ owns the store's libraries), a
# lock of the tree's taken by the facade (engine::ConcurrentTree owns
# them), storage or the facade included from engine/, and the follower's
# machinery included from the replica (storage/replica.h). Runs
# include_rules.sh over a scratch copy of the tree's parts (symbolic links,
# api/facade/, engine/ and storage/ copied) with one planted file at a time, and
# expects a failure naming it; the unplanted copy must pass.
# Usage: planted_test.sh SOURCE_ROOT
set -u
root=$(cd "${1:?source root}" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hdrf-layout-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
for d in "$root"/*; do
  case "$(basename "$d")" in api | engine | storage) ;; *) ln -s "$d" "$scratch/$(basename "$d")" ;; esac
done
cp -r "$root/engine" "$scratch/engine"
cp -r "$root/storage" "$scratch/storage"
mkdir "$scratch/api"
for d in "$root"/api/*; do
  [ "$(basename "$d")" = facade ] || ln -s "$d" "$scratch/api/$(basename "$d")"
done
cp -r "$root/api/facade" "$scratch/api/facade"
rules="$root/tests/layout/include_rules.sh"
bad=0
if ! out=$(LAYOUT_RULES_ONLY=1 bash "$rules" "$scratch" 2>&1); then
  echo "planted_test: the unplanted copy fails:"; echo "$out"; bad=1
fi
plant() {  # FILE LINE EXPECTED (FILE under api/facade/ unless it names its folder)
  local f=$1
  [[ $f == */* ]] || f=api/facade/$f
  printf '%s\n' "$2" > "$scratch/$f"
  if out=$(LAYOUT_RULES_ONLY=1 bash "$rules" "$scratch" 2>&1) || ! grep -q "$3" <<<"$out"; then
    echo "planted_test: $f ($2) was not caught:"; echo "$out"; bad=1
  fi
  rm -f "$scratch/$f"
}
plant planted_include.h '#include "rocksdb/db.h"' 'planted_include.h:1:#include "rocksdb/db.h"'
plant planted_fbs.cc '#include "flatbuffers/flatbuffers.h"' 'planted_fbs.cc:1'
plant planted_generated.cc '#include "hdrf_state_generated.h"' 'planted_generated.cc:1'
plant planted_type.cc 'void F(rocksdb::WriteBatch* b);' 'a RocksDB or FlatBuffers type outside storage/: .*planted_type.cc:1'
plant planted_lock.cc '#include "base/shard_lock.h"' 'planted_lock.cc:1:#include "base/shard_lock.h"'
plant engine/planted_storage.cc '#include "storage/journal.h"' 'engine/planted_storage.cc:1:#include "storage/journal.h"'
plant engine/planted_facade.h '#include "api/facade/engine_impl.h"' 'engine/planted_facade.h:1'
plant storage/replica.h '#include "storage/secondary.h"' 'storage/replica.h:1:#include "storage/secondary.h"'
[ $bad -eq 0 ] && echo "planted_test: ok"
exit $bad
