#!/usr/bin/env bash
# The installed package (suite `install`): `meson install --destdir` into a
# temporary directory, then, using only what was installed:
#   - every public header of api/hdrf/ is under include/hdrf/ and compiles
#     on its own (C++20; c.h and version.h also as C99 -Wpedantic);
#   - libhdrf_c.so has its SONAME, exports hdrf_* functions only and links
#     no jemalloc; libhdrf.a holds no jemalloc either;
#   - an outside C program and an outside C++ program build with only
#     `pkg-config --cflags --libs hdrf_c` / `hdrf` and run.
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
[ -f "$pcdir/hdrf.pc" ] && [ -f "$pcdir/hdrf_c.pc" ] || fail "hdrf.pc and hdrf_c.pc not installed"
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

# Outside programs, built with pkg-config only (stage.sh set its paths).
gcc -std=c99 -Wall -Wpedantic -o "$tmp/outside_c" "$src/tests/install/outside.c" \
  $(pkg-config --cflags --libs hdrf_c) || fail "outside C program does not build"
g++ -o "$tmp/outside_cc" "$src/tests/install/outside.cc" $(pkg-config --cflags --libs hdrf) ||
  fail "outside C++ program does not build"
"$tmp/outside_c" || fail "outside C program failed"
"$tmp/outside_cc" || fail "outside C++ program failed"
echo "install: ok ($soname)"
