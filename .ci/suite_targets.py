#!/usr/bin/env python3
"""Prints the ninja targets a build tree needs to run some test suites.

Usage: suite_targets.py BUILD_DIR SUITE...

Every target outside tests/ (the libraries, the hdrf tool, the bindings,
the benchmarks: so that `meson install --no-rebuild` and the packaging
suites find what they install, and the benchmarks keep compiling), plus
the programs and dependencies of the tests in the given suites. Reads the
introspection files meson writes when it configures the tree.
"""
import json
import os
import sys


def main():
    build = os.path.abspath(sys.argv[1])
    suites = set(sys.argv[2:])
    info = os.path.join(build, "meson-info")
    with open(os.path.join(info, "intro-targets.json")) as f:
        targets = json.load(f)
    with open(os.path.join(info, "intro-tests.json")) as f:
        tests = json.load(f)
    by_id = {t["id"]: t for t in targets}
    out = set()

    def add(path):
        path = os.path.normpath(path)
        if os.path.isabs(path) and path.startswith(build + os.sep):
            out.add(os.path.relpath(path, build))

    for t in targets:
        rel = os.path.relpath(t["filename"][0], build)
        if not rel.startswith("tests" + os.sep):
            add(t["filename"][0])
    for t in tests:
        if not {s.split(":")[-1] for s in t["suite"]} & suites:
            continue
        for arg in t["cmd"]:
            add(arg)
        for dep in t["depends"]:
            if dep in by_id:
                for fn in by_id[dep]["filename"]:
                    add(fn)
    print(" ".join(sorted(out)))


if __name__ == "__main__":
    main()
