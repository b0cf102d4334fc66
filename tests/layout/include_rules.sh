#!/usr/bin/env bash
# The layout rules of docs/architecture.md, checked on the source tree:
#   - api/hdrf/ (the public headers) includes only "hdrf/..." headers, and
#     every public header compiles on its own;
#   - tools/ includes only public headers and its own;
#   - bench/ includes only public headers, its own, and the reference model
#     it measures the engine against (tests/reference/);
#   - engine/ knows nothing of storage/, the api parts or tools/;
#   - storage/ knows the engine's state types but nothing of api parts or tools/.
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

# check DIR ALLOWED_REGEX: every quoted include under DIR must match.
check() {
  local dir=$1 allowed=$2
  while IFS= read -r hit; do
    [ -z "$hit" ] && continue
    echo "layout: $hit (allowed from $dir/: $allowed)"
    bad=1
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$dir" \
             --include='*.h' --include='*.cc' --include='*.c' \
           | grep -vE "#[[:space:]]*include[[:space:]]+\"($allowed)")
}

check api/hdrf 'hdrf/'
check tools 'hdrf/|tools/'
check bench 'hdrf/|bench/|tests/reference/'
check engine 'hdrf/|engine/'
check storage 'hdrf/|engine/|storage/|hdrf_state_generated\.h|rocksdb/|flatbuffers/'

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
