"""Differential runs: random cases through the oracle and through the hdrf
binary, compared field by field.

    python3 -m oracle.differential --hdrf PATH --kind sim|simulate --seeds 0:1000

(run from tests/). Prints one line per disagreement and a count."""

import argparse
import copy
import csv
import io
import json
import os
import random
import subprocess
import sys
import tempfile

import yaml

from . import config_forms, gen, scenario
from .simulate import read_workload, simulate

# Float tolerance. Every float the summary holds is a time average
# Σ value·dt / makespan, or a mean of waits, over at most a few thousand
# terms; the two sides may sum in another order and the tool prints doubles
# with limited digits. 1e-9 absolute + 1e-9 relative is far above rounding
# noise (~1e-13 here) and far below any real difference (a one-millisecond
# change over a makespan of at most ~10^5 ms moves an average by >= 1e-5·share).
ABS_TOL = 1e-9
REL_TOL = 1e-9


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= ABS_TOL + REL_TOL * max(abs(a), abs(b))


# ---------------------------------------------------------------- hdrf sim
def sim_scenario(seed, user_limits=False, gate=False, large=False):
    """A §10 scenario with fill / submit / finish / remove / plan / evict
    steps; plan and evict steps name a job with unallocated tasks (chosen on
    the oracle's state, so the step is never refused)."""
    rng = random.Random(seed)
    squeeze = rng.random() < 0.2
    doc, leaves, parents, resources, units = (gen.squeeze_config if squeeze else gen.config)(
        rng, user_limits)
    users = ["u1", "u2", "u3"] if user_limits else None
    names = iter(f"j{i}" for i in range(1000))
    doc["jobs"] = [gen.job_spec(rng, next(names), leaves, parents, resources, units, users)
                   for _ in range(rng.randint(10, 25) if large else rng.randint(2, 10))]
    if squeeze or rng.random() < 0.5:
        # Hog: the first leaves' jobs take most of the cluster before the
        # others arrive, so that plans have something to take back.
        hogs = [l for l in leaves if l.endswith("/q")] if squeeze else \
            rng.sample(leaves, rng.randint(1, 2))
        for spec in doc["jobs"]:
            spec["queue"] = rng.choice(hogs)
            spec["tasks"] = rng.randint(3, 8)
            if spec.get("minAvailable", 1) > spec["tasks"]:
                spec["minAvailable"] = spec["tasks"]
        leaves = [leaf for leaf in leaves if leaf not in hogs] or leaves
    if gate:
        doc["overcommitFactor"] = rng.choice([0.5, 0.8, 1, 1.2, 2])
    doc["steps"] = ["fill"]
    for _ in range(rng.randint(10, 25) if large else rng.randint(2, 10)):
        state_jobs = scenario.run(doc)["jobs"]
        present = {j["name"]: j for j in state_jobs}
        tasks_left = {}
        for spec in doc["jobs"] + [s["submit"] for s in doc["steps"]
                                   if isinstance(s, dict) and "submit" in s]:
            tasks_left[spec["name"]] = spec["tasks"]
        for s in doc["steps"]:
            if isinstance(s, dict) and "finish" in s:
                tasks_left[s["finish"]["job"]] -= s["finish"].get("tasks", 1)
        waiting = [n for n, j in present.items()
                   if j["tasks_allocated"] < tasks_left[n] and j["state"] != "Pending"]
        running = [n for n, j in present.items() if j["tasks_allocated"] > 0]
        roll = rng.random()
        if roll < 0.5 and waiting:
            kind = rng.choice(["plan", "evict", "evict"])
            args = {"job": rng.choice(waiting)}
            mode = rng.choice([None, "reclaim", "preempt", "both"])
            if mode:
                args["mode"] = mode
            if rng.random() < 0.2:
                args["maxVictims"] = rng.randint(0, 3)
            doc["steps"].append({kind: args})
            if kind == "evict" and rng.random() < 0.7:
                doc["steps"].append("fill")
        elif roll < 0.75:
            spec = gen.job_spec(rng, next(names), leaves, parents, resources, units, users)
            edge = rng.random()
            if edge < 0.05:
                spec["tasks"], spec["minAvailable"] = 0, 0      # a job of no task
            elif edge < 0.1:
                spec["task"] = {}                               # a task that needs nothing
            doc["steps"].append({"submit": spec})
            if rng.random() < 0.7:
                doc["steps"].append("fill")
        elif roll < 0.9 and running:
            name = rng.choice(running)
            # Now and then down to 0 tasks (the job stays, holding nothing).
            most = min(present[name]["tasks_allocated"],
                       tasks_left[name] - (0 if rng.random() < 0.15 else 1))
            if most >= 1:
                doc["steps"].append({"finish": {"job": name, "tasks": rng.randint(1, most)}})
                if rng.random() < 0.7:
                    doc["steps"].append("fill")
        elif running:
            doc["steps"].append({"remove": {"job": rng.choice(running)}})
            if rng.random() < 0.7:
                doc["steps"].append("fill")
    return doc


def run_hdrf_sim(hdrf, doc, workdir):
    path = os.path.join(workdir, "scenario.yaml")
    with open(path, "w") as handle:
        yaml.safe_dump(doc, handle, sort_keys=False)
    proc = subprocess.run([hdrf, "sim", path], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def compare_sim(expected, got):
    """Differences between the oracle's and hdrf's `hdrf sim` outputs."""
    diffs = []
    want_jobs = [(j["name"], j["queue"], j["tasks_allocated"],
                  {r: v for r, v in j["allocated"].items() if v}) for j in expected["jobs"]]
    got_jobs = [(j["name"], j["queue"], j["tasks_allocated"],
                 {r: v for r, v in (j.get("allocated") or {}).items() if v})
                for j in got.get("jobs", [])]
    if want_jobs != got_jobs:
        diffs.append(f"jobs: oracle {want_jobs} hdrf {got_jobs}")
    for want, have in zip(expected["jobs"], got.get("jobs", [])):
        if want["state"] != have.get("state"):
            diffs.append(f"job {want['name']} state: oracle {want['state']} "
                         f"hdrf {have.get('state')}")
        if not close(want["share"], have.get("share")):
            diffs.append(f"job {want['name']} share: oracle {want['share']} "
                         f"hdrf {have.get('share')}")
    keys = ("job", "mode", "fits", "tasks", "victims", "short", "applied")
    got_plans = [{k: p.get(k) for k in keys} for p in got.get("plans", [])]
    if len(got_plans) != len(expected["plans"]):
        diffs.append(f"plans: oracle {len(expected['plans'])} entries, hdrf {len(got_plans)}")
    for index, (want, have) in enumerate(zip(expected["plans"], got_plans)):
        if want != have:
            diffs.append(f"plan {index}: oracle {json.dumps(want)} hdrf {json.dumps(have)}")
    return diffs


def check_sim(hdrf, doc):
    with tempfile.TemporaryDirectory() as workdir:
        got, error = run_hdrf_sim(hdrf, doc, workdir)
    if got is None:
        return [f"hdrf sim failed: {error}"]
    return compare_sim(scenario.run(copy.deepcopy(doc)), got)


# ----------------------------------------------------------- hdrf simulate
def simulate_case(seed, user_limits=False, large=False):
    rng = random.Random(seed)
    if rng.random() < 0.15:
        doc, leaves, parents, resources, units = gen.squeeze_config(rng, user_limits)
    else:
        doc, leaves, parents, resources, units = gen.config(rng, user_limits, rng.random() < 0.2)
    users = ["u1", "u2", "u3"] if user_limits else None
    hog = next((l for l in leaves if l.endswith("/q")), None)     # squeeze configs
    rows = gen.workload(rng, leaves, parents, resources, units, users,
                        (60, 150) if large else (5, 40), hog)
    flags = []
    if rng.random() < 0.8:
        flags.append("--reclaim")
        if rng.random() < 0.4:
            flags.append("--preempt")
        if rng.random() < 0.3:
            flags += ["--reclaim-budget", str(rng.randint(0, 3))]
    jsonl = rng.random() < 0.25
    form = rng.choice([1, 2, 3]) if rng.random() < 0.3 else 4   # §3 form of the config
    if form != 4 and rng.random() < 0.3:
        flags += ["--cluster", ",".join(f"{r}={v}" for r, v in doc["cluster"].items())]
    return doc, gen.workload_csv(rows, resources), flags, jsonl, form


def run_oracle_simulate(doc, csv_text, flags, workdir):
    path = os.path.join(workdir, "oracle_workload.csv")
    with open(path, "w") as handle:
        handle.write(csv_text)
    state = scenario.build_state(copy.deepcopy(doc))
    rows = read_workload(path, state.resources)
    budget = int(flags[flags.index("--reclaim-budget") + 1]) if "--reclaim-budget" in flags \
        else None
    return simulate(state, rows, "--reclaim" in flags, "--preempt" in flags, budget)


def csv_to_jsonl(csv_text):
    """The same workload as JSONL (§13: "or JSONL with the same keys"):
    empty cells left out, times and counts as JSON numbers."""
    lines = []
    for row in csv.DictReader(io.StringIO(csv_text)):
        obj = {}
        for key, cell in row.items():
            if cell == "":
                continue
            if key in ("arrival", "duration", "weight"):
                obj[key] = float(cell) if "." in cell else int(cell)
            elif key in ("tasks", "min_available"):
                obj[key] = int(cell)
            else:
                obj[key] = cell
        lines.append(json.dumps(obj))
    return "\n".join(lines) + "\n"


def run_hdrf_simulate(hdrf, doc, csv_text, flags, workdir, jsonl=False, form=4,
                      config_path=None, workload_path=None):
    """(jobs-out rows, JSON summary, error) of hdrf simulate on `doc` and
    `csv_text`, or on the given files when config_path/workload_path name them."""
    config = os.path.join(workdir, "config.yaml")
    workload = os.path.join(workdir, "workload.jsonl" if jsonl else "workload.csv")
    jobs_out = os.path.join(workdir, "jobs.csv")
    if config_path is not None:
        return _run_simulate_files(hdrf, config_path, workload_path, jobs_out, flags)
    with open(config, "w") as handle:
        if form in config_forms.FORMS and "--cluster" in flags:
            # The cluster only on the command line (§13 `--cluster LIST`).
            handle.write(config_forms.FORMS[form]({k: v for k, v in doc.items()
                                                   if k != "cluster"}))
        elif form in config_forms.FORMS:
            handle.write(config_forms.FORMS[form](doc))
        else:
            yaml.safe_dump(doc, handle, sort_keys=False)
    with open(workload, "w") as handle:
        handle.write(csv_to_jsonl(csv_text) if jsonl else csv_text)
    return _run_simulate_files(hdrf, config, workload, jobs_out, flags)


def _run_simulate_files(hdrf, config, workload, jobs_out, flags):
    proc = subprocess.run([hdrf, "simulate", "--config", config, "--workload", workload,
                           "--jobs-out", jobs_out, "--json", "--no-progress"] + flags,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return None, None, proc.stderr.strip()
    with open(jobs_out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    return rows, json.loads(proc.stdout.strip().splitlines()[-1]), None


def compare_simulate(expected_rows, expected, got_rows, got, reclaim):
    diffs = []
    columns = ["name", "queue", "arrival", "first_start", "last_start", "end"]
    if reclaim:
        columns.append("evicted")
    for want, have in zip(expected_rows, got_rows):
        a = {c: want[c] for c in columns}
        b = {c: have.get(c) for c in columns}
        if a != b:
            diffs.append(f"job row: oracle {a} hdrf {b}")
    if not reclaim and (any("evicted" in row for row in got_rows) or "evicted_tasks" in got):
        diffs.append("without --reclaim the outputs must be as before (no evicted fields)")
    if len(expected_rows) != len(got_rows):
        diffs.append(f"jobs-out rows: oracle {len(expected_rows)} hdrf {len(got_rows)}")
    for key in ("jobs", "unscheduled"):
        if expected[key] != got.get(key):
            diffs.append(f"{key}: oracle {expected[key]} hdrf {got.get(key)}")
    if not close(expected["makespan"], got.get("makespan")):
        diffs.append(f"makespan: oracle {expected['makespan']} hdrf {got.get('makespan')}")
    for r, value in expected["utilization"].items():
        if not close(value, (got.get("utilization") or {}).get(r)):
            diffs.append(f"utilization {r}: oracle {value} hdrf {got['utilization'].get(r)}")
    if reclaim:
        for key in ("evicted_tasks", "plans_applied"):
            if expected[key] != got.get(key):
                diffs.append(f"{key}: oracle {expected[key]} hdrf {got.get(key)}")
        if not close(expected["lost_task_seconds"], got.get("lost_task_seconds")):
            diffs.append(f"lost_task_seconds: oracle {expected['lost_task_seconds']} "
                         f"hdrf {got.get('lost_task_seconds')}")
    got_queues = {q["path"]: q for q in got.get("queues", [])}
    if [q["path"] for q in expected["queues"]] != [q["path"] for q in got.get("queues", [])]:
        diffs.append(f"queue paths: oracle {[q['path'] for q in expected['queues']]} "
                     f"hdrf {[q['path'] for q in got.get('queues', [])]}")
    for want in expected["queues"]:
        have = got_queues.get(want["path"])
        if have is None:
            continue
        where = want["path"]
        if want["jobs"] != have.get("jobs"):
            diffs.append(f"{where} jobs: oracle {want['jobs']} hdrf {have.get('jobs')}")
        if not close(want["usage_share_avg"], have.get("usage_share_avg")):
            diffs.append(f"{where} usage_share_avg: oracle {want['usage_share_avg']} "
                         f"hdrf {have.get('usage_share_avg')}")
        if reclaim and want["evicted_tasks"] != have.get("evicted_tasks"):
            diffs.append(f"{where} evicted_tasks: oracle {want['evicted_tasks']} "
                         f"hdrf {have.get('evicted_tasks')}")
        # §13 asks `wait` of leaves; parents are compared too (docs/simulate.md
        # gives every queue one, over its subtree).
        wait_want, wait_have = want["wait"], have.get("wait") or {}
        for key in ("mean", "p50", "p95", "p99", "max"):
            if not close(wait_want.get(key), wait_have.get(key)):
                diffs.append(f"{where} wait.{key}: oracle {wait_want.get(key)} "
                             f"hdrf {wait_have.get(key)}")
    return diffs


def check_simulate(hdrf, doc, csv_text, flags, jsonl=False, form=4):
    with tempfile.TemporaryDirectory() as workdir:
        got_rows, got, error = run_hdrf_simulate(hdrf, doc, csv_text, flags, workdir, jsonl,
                                                 form)
        if got is None:
            return [f"hdrf simulate failed: {error}"]
        want_rows, want = run_oracle_simulate(doc, csv_text, flags, workdir)
    return compare_simulate(want_rows, want, got_rows, got, "--reclaim" in flags)


# -------------------------------------------------------------------- CLI
def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdrf", default=os.environ.get("HDRF_BIN", "build/release/tools/hdrf"))
    parser.add_argument("--kind", choices=["sim", "simulate"], required=True)
    parser.add_argument("--seeds", default="0:100")
    parser.add_argument("--user-limits", action="store_true")
    parser.add_argument("--large", action="store_true",
                        help="simulate: 60-150 jobs; sim: 10-25 jobs and 10-25 steps")
    parser.add_argument("--gate", action="store_true", help="sim: overcommitFactor (§12)")
    parser.add_argument("--deep", action="store_true", help="trees of up to 4 levels")
    parser.add_argument("--root-capability", action="store_true")
    parser.add_argument("--stop-after", type=int, default=0)
    args = parser.parse_args(argv)
    first, last = (int(x) for x in args.seeds.split(":"))
    gen.OPTIONS.update(deep=args.deep, root_capability=args.root_capability)
    failures = 0
    for seed in range(first, last):
        if args.kind == "sim":
            diffs = check_sim(args.hdrf, sim_scenario(seed, args.user_limits, args.gate,
                                                      args.large))
        else:
            diffs = check_simulate(args.hdrf, *simulate_case(seed, args.user_limits, args.large))
        if diffs:
            failures += 1
            print(f"seed {seed}: " + " | ".join(diffs[:3]), flush=True)
            if args.stop_after and failures >= args.stop_after:
                break
    print(f"{args.kind}: {last - first} cases, {failures} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
