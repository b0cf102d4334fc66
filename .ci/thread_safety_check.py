#!/usr/bin/env python3
"""Checks the lock annotations of the sources a fuzz build does not compile.

Usage: thread_safety_check.py BUILD_DIR

BUILD_DIR is .ci/test's clang build (-Dthread_safety=true): it compiles
every library for the fuzz targets, with -Werror=thread-safety. The tools
and the Python module are not part of those targets; compiling them there
(with the sanitizers and the fuzzer's instrumentation) costs minutes, so
this runs each of their compile commands from compile_commands.json with
-fsyntax-only instead: the analysis runs on the parsed code, no object is
made. Exits 1 when any file fails, printing clang's messages.
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

# Object folders (meson's TARGET.p) of the targets to check.
PREFIXES = ("tools/hdrf.p/", "tools/libhdrf_tools_view.a.p/", "api/python/")


def syntax_only(entry):
    # without the object and the dependency file meson adds
    cleaned, skip = [], False
    for a in shlex.split(entry["command"]):
        if skip:
            skip = False
            continue
        if a in ("-o", "-MQ", "-MF"):
            skip = True
            continue
        if a == "-MD":
            continue
        cleaned.append(a)
    if cleaned and cleaned[0] == "ccache":
        cleaned = cleaned[1:]
    cmd = cleaned + ["-fsyntax-only"]
    r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], r.returncode, r.stderr


def main():
    build = sys.argv[1]
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    chosen = [e for e in entries if e.get("output", "").startswith(PREFIXES)]
    if not chosen:
        print("thread_safety_check: no tool or Python sources in " + build, file=sys.stderr)
        return 1
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, rc, err in pool.map(syntax_only, chosen):
            if rc != 0:
                failed += 1
                sys.stderr.write(err)
                print("thread_safety_check: FAILED " + name, file=sys.stderr)
    print("thread_safety_check: %d files, %d failed" % (len(chosen), failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
