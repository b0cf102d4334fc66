#!/usr/bin/env bash
# Installs the build into DEST (meson install --destdir) and prints the
# environment that makes pkg-config and the dynamic loader find it there:
#   eval "$(bash tests/install/stage.sh BUILD_DIR DEST)"
# sets PKG_CONFIG_PATH, PKG_CONFIG_SYSROOT_DIR and LD_LIBRARY_PATH. Used by
# the install, Go and embedding tests (the .pc files name the final prefix;
# the sysroot maps it into DEST).
set -euo pipefail
build=$(cd "$1" && pwd)
dest=$2
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
meson install -C "$build" --no-rebuild --destdir "$dest" --quiet >"$dest/.install.log" 2>&1 ||
  { cat "$dest/.install.log" >&2; exit 1; }
prefix=$(meson introspect "$build" --buildoptions |
  python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
pc=$(find "$dest$prefix" -name hdrf_c.pc | head -n 1)
[ -n "$pc" ] || { echo "stage: no hdrf_c.pc under $dest$prefix" >&2; exit 1; }
pcdir=$(dirname "$pc")
echo "export PKG_CONFIG_PATH='$pcdir' PKG_CONFIG_SYSROOT_DIR='$dest' LD_LIBRARY_PATH='$(dirname "$pcdir")'"
echo "export HDRF_STAGE_PREFIX='$dest$prefix'"
