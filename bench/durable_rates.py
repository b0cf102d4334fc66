#!/usr/bin/env python3
"""A durable engine against an in-memory one on one trace (issue 25 item 2).

    bench/durable_rates.py --trace T.trc [--rounds 2] [--threads 1] \
        [--modes none,async,sync] [--extra '--pipeline'] HDRF [HDRF ...]

For each round, each hdrf binary (or command: a string split on spaces, so a
loader and its arguments may come first) and each durability mode, runs
`hdrf replay --trace T --threads N [--db fresh-dir --durability MODE] --json`
in its own child and prints one line: the rate the tool reports
(events_per_sec over the timed events), that rate against the same binary's
in-memory rate of the same round, the child's CPU (user+sys) and peak RSS,
and the peak against the in-memory peak. Binaries alternate within a round,
so two builds are compared under the same conditions. `--extra` adds flags
to the durable runs only (e.g. `--pipeline` where the binary has it).
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile


def run_one(cmd):
    """Runs cmd in a child; returns (json output, cpu seconds, peak RSS bytes)."""
    pid = os.fork()
    if pid == 0:
        out = os.open(os.path.join(tmp, "out.json"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    if os.WEXITSTATUS(status) != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}")
    with open(os.path.join(tmp, "out.json")) as f:
        text = f.read()
    return json.loads(text[text.index("{"):]), ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


ap = argparse.ArgumentParser()
ap.add_argument("--trace", required=True)
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--modes", default="none,async,sync")
ap.add_argument("--extra", default="")
ap.add_argument("--dir", default=None, help="where the stores go (default: a temporary directory)")
ap.add_argument("binaries", nargs="+")
args = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="durable_rates.", dir=args.dir)
modes = args.modes.split(",")
print(f"trace {args.trace}, threads {args.threads}, {os.cpu_count()} cores, stores under {tmp}")
print(f"{'round':>5} {'binary':>6} {'mode':>6} {'events/s':>12} {'x mem':>6} {'CPU s':>7} {'peak MB':>8} {'x mem':>6}")
try:
    for r in range(1, args.rounds + 1):
        for b, binary in enumerate(args.binaries):
            base = None
            for mode in modes:
                cmd = binary.split() + ["replay", "--trace", args.trace, "--threads", str(args.threads), "--json"]
                if mode != "none":
                    db = os.path.join(tmp, "db")
                    shutil.rmtree(db, ignore_errors=True)
                    cmd += ["--db", db, "--durability", mode] + args.extra.split()
                out, cpu, peak = run_one(cmd)
                rate = out["events_per_sec"]
                if mode == "none":
                    base = (rate, peak)
                xr = f"{rate / base[0]:.2f}" if base else "-"
                xp = f"{peak / base[1]:.2f}" if base else "-"
                print(f"{r:>5} {b:>6} {mode:>6} {rate:>12,.0f} {xr:>6} {cpu:>7.2f} {peak / 1e6:>8.0f} {xp:>6}", flush=True)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
