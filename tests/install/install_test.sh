#!/usr/bin/env bash
# The installed package (suite `install`): `meson install --destdir` into a
# temporary directory, then, using only what was installed:
#   - every public header of api/hdrf/ is under include/hdrf/ and compiles
#     on its own (C++20; c.h and version.h also as C99 -Wpedantic);
#   - libhdrf_c.so has its SONAME, exports hdrf_* functions only and links
#     no jemalloc; libhdrf.a holds no jemalloc either;
#   - no installed header includes a third-party header or names a
#     third-party type (nlohmann-json, yaml-cpp, RocksDB, FlatBuffers,
#     xxHash);
#   - hdrf.pc requires only what libhdrf.a calls (RocksDB), and libhdrf.a
#     calls nothing of yaml-cpp, xxHash or nlohmann-json; hdrf_config.pc,
#     hdrf_formats.pc and hdrf_sim.pc require exactly hdrf and their own;
#   - an outside C program and an outside C++ program build with only
#     `pkg-config --cflags --libs hdrf_c` / `hdrf` and run, and one program
#     per other library (outside_libs.cc) with only its own .pc file.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

eval "$(bash "$src/tests/install/stage.sh" "$build" "$tmp/dest")" || fail "meson install"
root=$HDRF_STAGE_PREFIX
inc="$root/include"
pcdir=$PKG_CONFIG_PATH
for pc in hdrf hdrf_c hdrf_config hdrf_formats hdrf_sim; do
  [ -f "$pcdir/$pc.pc" ] || fail "$pc.pc not installed"
done
libdir=$LD_LIBRARY_PATH

# Headers: the installed set is api/hdrf/*.h plus the generated version.h.
for h in "$src"/api/hdrf/*.h; do
  [ -f "$inc/hdrf/$(basename "$h")" ] || fail "header $(basename "$h") not installed"
done
[ -f "$inc/hdrf/version.h" ] || fail "hdrf/version.h not installed"
for h in "$inc"/hdrf/*.h; do
  echo "#include <hdrf/$(basename "$h")>" >"$tmp/one.cc"
  g++ -std=c++20 -fsyntax-only -Wall -Wextra -I"$inc" "$tmp/one.cc" ||
    fail "hdrf/$(basename "$h") does not compile on its own"
done
# No third-party header or type in an installed header: an embedder of the
# engine compiles against the standard library and hdrf/ only.
for h in "$inc"/hdrf/*.h; do
  bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$h" |
        grep -vE '#[[:space:]]*include[[:space:]]*("hdrf/[a-z_]+\.h"|<hdrf/[a-z_]+\.h>|<[a-z_]+(\.h)?>)' || true)
  [ -z "$bad" ] || fail "hdrf/$(basename "$h") includes a third-party header: $bad"
  bad=$(grep -nE 'nlohmann|YAML::|rocksdb::|flatbuffers::|XXH[0-9]*_[a-z_]*t\b' "$h" || true)
  [ -z "$bad" ] || fail "hdrf/$(basename "$h") names a third-party type: $bad"
done
for h in c.h version.h; do
  printf "#include <hdrf/%s>\nint hdrf_one;\n" "$h" >"$tmp/one.c"
  gcc -std=c99 -Wpedantic -Werror -fsyntax-only -I"$inc" "$tmp/one.c" || fail "hdrf/$h is not C99"
done

# The C library: SONAME, exports, no jemalloc.
so=$(find "$libdir" -maxdepth 1 -name 'libhdrf_c.so.*.*' | head -n 1)
[ -n "$so" ] || fail "no versioned libhdrf_c.so.X.Y.Z"
soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ "$soname" == libhdrf_c.so.* ]] || fail "SONAME is '$soname'"
[ -e "$libdir/$soname" ] && [ -e "$libdir/libhdrf_c.so" ] || fail "SONAME and development links missing"
others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^hdrf_' | grep -v '^_init$\|^_fini$' || true)
[ -z "$others" ] || fail "libhdrf_c.so exports more than hdrf_*: $(echo $others | head -c 300)"
if readelf -d "$so" | grep -qi jemalloc; then fail "libhdrf_c.so links jemalloc"; fi
if nm "$libdir/libhdrf.a" 2>/dev/null | grep -qE ' (U|T) (je_|mallctl)'; then fail "libhdrf.a uses jemalloc"; fi

# What each .pc file requires (issue 25 item 5): the engine's only RocksDB,
# so that an embedder of the engine gets no YAML, JSON or trace library.
requires() {  # PC: its Requires and Requires.private, names only, sorted, one line
  { pkg-config --print-requires "$1"; pkg-config --print-requires-private "$1"; } |
    awk '{print $1}' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
expect_requires() {  # PC EXPECTED
  local got
  got=$(requires "$1") || fail "pkg-config $1"
  [ "$got" = "$2" ] || fail "$1.pc requires '$got', not '$2'"
}
expect_requires hdrf "rocksdb"
expect_requires hdrf_config "hdrf yaml-cpp"
expect_requires hdrf_formats "hdrf libxxhash"
expect_requires hdrf_sim "hdrf hdrf_formats"
if pkg-config --cflags --libs --static hdrf | grep -qE -- '-l(yaml-cpp|xxhash|flatbuffers)\b|nlohmann'; then
  fail "pkg-config --static hdrf pulls a library the engine does not call: $(pkg-config --libs --static hdrf)"
fi
# ...and the engine's archive indeed calls none of them.
calls=$(nm -C --undefined-only "$libdir/libhdrf.a" | grep -E ' (YAML::|XXH|nlohmann::)' | sort -u | head -5 || true)
[ -z "$calls" ] || fail "libhdrf.a calls a library hdrf.pc does not name: $calls"

# Outside programs, built with pkg-config only (stage.sh set its paths).
gcc -std=c99 -Wall -Wpedantic -o "$tmp/outside_c" "$src/tests/install/outside.c" \
  $(pkg-config --cflags --libs hdrf_c) || fail "outside C program does not build"
g++ -o "$tmp/outside_cc" "$src/tests/install/outside.cc" $(pkg-config --cflags --libs hdrf) ||
  fail "outside C++ program does not build"
for lib in config formats sim; do
  flag=$(echo "$lib" | tr a-z A-Z)
  g++ -DUSE_$flag -o "$tmp/outside_$lib" "$src/tests/install/outside_libs.cc" \
    $(pkg-config --cflags --libs hdrf_$lib) || fail "outside program of hdrf_$lib does not build"
done
"$tmp/outside_c" || fail "outside C program failed"
"$tmp/outside_cc" || fail "outside C++ program failed"
for lib in config formats sim; do
  "$tmp/outside_$lib" || fail "outside program of hdrf_$lib failed"
done
# The engine's embedder loads none of the libraries the engine does not call.
if readelf -d "$tmp/outside_cc" | grep -E 'NEEDED' | grep -qE 'yaml|xxhash'; then
  fail "the outside C++ program loads $(readelf -d "$tmp/outside_cc" | grep -oE 'lib(yaml|xxhash)[^]]*' | head -1)"
fi
echo "install: ok ($soname)"
