"""SPEC §13 workload simulation with its "Additions" (gangs, the reclaim
phase, --reclaim-budget) on a virtual clock in whole milliseconds."""

import csv
import math
from fractions import Fraction

from . import plan as plans
from . import quantity
from .schedule import admit, fill, pick

_FIXED = {"name", "queue", "arrival", "duration", "user", "tasks", "weight", "min_available"}


def parse_seconds(text):
    """Decimal seconds -> whole milliseconds (at most 3 decimals)."""
    ms = Fraction(str(text).strip()) * 1000
    if ms.denominator != 1 or ms < 0:
        raise ValueError(f"bad time {text!r}")
    return int(ms)


def read_workload(path, resources):
    rows = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            task = {}
            for column, cell in row.items():
                if column in _FIXED or cell is None or cell.strip() == "":
                    continue
                task[column] = quantity.parse(column, cell)
            rows.append({
                "name": row["name"], "queue": (row.get("queue") or "").strip() or "root",
                "arrival": parse_seconds(row["arrival"]),
                "duration": parse_seconds(row["duration"]),
                "user": (row.get("user") or "").strip() or "default",
                "tasks": int(row.get("tasks") or 1),
                "weight": float(row.get("weight") or 1),
                "min_available": int(row.get("min_available") or 1),
                "task": task,
            })
    return rows


def _seconds(ms):
    return f"{ms // 1000}.{ms % 1000:03d}"


def _nearest_rank(sorted_values, p):
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


class _Run:
    def __init__(self, state, rows, reclaim, preempt, budget):
        self.state = state
        self.rows = rows
        self.reclaim = reclaim
        self.mode = "both" if preempt else "reclaim"
        self.budget = budget
        self.record = {}            # workload index -> dict of outputs
        self.starts = {}            # job -> list of start instants of running tasks
        self.job_row = {}           # job -> workload index
        self.lost_ms = 0
        self.plans_applied = 0

    def start_tasks(self, job, k, t):
        rec = self.record[self.job_row[job]]
        self.starts[job].extend([t] * k)
        if rec["first_start"] is None:
            rec["first_start"] = t
        rec["last_start"] = t

    def evict(self, victim, n, t):
        # Of a job's running tasks the latest started are evicted first.
        self.starts[victim].sort()
        for _ in range(n):
            started = self.starts[victim].pop()
            self.lost_ms += t - started
        victim.running -= n
        self.record[self.job_row[victim]]["evicted"] += n

    def complete(self, t):
        for job in list(self.state.jobs):
            duration = self.rows[self.job_row[job]]["duration"]
            ending = [s for s in self.starts[job] if s + duration == t]
            if not ending:
                continue
            self.starts[job] = [s for s in self.starts[job] if s + duration != t]
            job.running -= len(ending)
            job.tasks -= len(ending)
            if job.tasks == 0:
                self.record[self.job_row[job]]["end"] = t
                self.state.remove(job)
                del self.starts[job]

    def arrive(self, index):
        row = self.rows[index]
        queue = self.state.queues.get(row["queue"])
        too_big = any(row["task"].get(r, 0) > self.state.total.get(r, 0) for r in row["task"])
        if queue is None or too_big or any(r not in self.state.total for r in row["task"]):
            return                  # refused: no start, no queue
        if not queue.is_open():
            return                  # refused: only an open queue accepts jobs
        leaf = admit(self.state, queue)
        job = self.state.submit(row["name"], leaf, row["user"], row["weight"], row["task"],
                                row["tasks"], row["min_available"])
        self.job_row[job] = index
        self.starts[job] = []
        self.record[index]["queue"] = leaf.path

    def reclaim_phase(self, t):
        tried = set()
        evicted_now = 0
        while True:
            if self.budget is not None and evicted_now >= self.budget:
                return
            # reading: "the one a step would serve first if everything fit": the
            # §5 descent over the §4 keys of the real state, every waiting job
            # counted as schedulable.
            taker = pick(self.state, lambda j: j.running < j.tasks and j not in tried)
            if taker is None:
                return
            tried.add(taker)
            result = plans.compute(self.state, taker, self.mode)
            if not result["fits"] or not result["victims"]:
                continue
            for victim, n in result["victims"]:
                self.evict(victim, n, t)
                evicted_now += n
            taker.running += result["tasks"]
            self.start_tasks(taker, result["tasks"], t)
            self.plans_applied += 1
            fill(self.state, lambda job, k: self.start_tasks(job, k, t))

    def run(self):
        state = self.state
        for index, row in enumerate(self.rows):
            self.record[index] = {"queue": None, "first_start": None, "last_start": None,
                                  "end": None, "evicted": 0}
        order = sorted(range(len(self.rows)), key=lambda i: (self.rows[i]["arrival"], i))
        util_ms = {r: 0 for r in state.resources}            # Σ alloc·dt (exact ints)
        share_ms = {path: 0.0 for path in state.queues}       # Σ share·dt
        next_index = 0
        t_prev = None
        makespan = 0
        while True:
            next_arrival = order[next_index] if next_index < len(order) else None
            candidates = []
            if next_arrival is not None:
                candidates.append(self.rows[next_arrival]["arrival"])
            for job, starts in self.starts.items():
                duration = self.rows[self.job_row[job]]["duration"]
                candidates.extend(s + duration for s in starts)
            if not candidates:
                break
            t = min(candidates)
            if t_prev is not None:
                self.accumulate(util_ms, share_ms, t - t_prev)
            self.complete(t)
            while next_index < len(order) and self.rows[order[next_index]]["arrival"] == t:
                self.arrive(order[next_index])
                next_index += 1
            fill(state, lambda job, k: self.start_tasks(job, k, t))
            if self.reclaim:
                self.reclaim_phase(t)
            t_prev = t
            makespan = t                # reading: the last instant processed
        return self.report(makespan, util_ms, share_ms)

    def accumulate(self, util_ms, share_ms, dt):
        state = self.state
        used = state.usage(state.root)
        for r in state.resources:
            util_ms[r] += used[r] * dt
        for path, queue in state.queues.items():
            share_ms[path] += state.plain_share(state.usage(queue)) * dt

    def report(self, makespan, util_ms, share_ms):
        state = self.state
        jobs_rows = []
        for index, row in enumerate(self.rows):
            rec = self.record[index]
            jobs_rows.append({
                "name": row["name"], "queue": rec["queue"] or "",
                "arrival": _seconds(row["arrival"]),
                "first_start": "" if rec["first_start"] is None else _seconds(rec["first_start"]),
                "last_start": "" if rec["last_start"] is None else _seconds(rec["last_start"]),
                "end": "" if rec["end"] is None else _seconds(rec["end"]),
                "evicted": str(rec["evicted"]),
            })
        summary = {
            "jobs": len(self.rows),
            "unscheduled": sum(1 for rec in self.record.values() if rec["first_start"] is None),
            "makespan": makespan / 1000.0,
            "utilization": {r: (util_ms[r] / state.total[r] / makespan
                                if makespan > 0 and state.total[r] > 0 else 0.0)
                            for r in state.resources},
            "evicted_tasks": sum(rec["evicted"] for rec in self.record.values()),
            "lost_task_seconds": self.lost_ms / 1000.0,
            "plans_applied": self.plans_applied,
            "queues": [],
        }
        for path in sorted(state.queues, key=lambda p: [c.encode() for c in p.split("/")]):
            def inside(index):
                leaf = self.record[index]["queue"]
                return leaf is not None and (leaf == path or leaf.startswith(path + "/"))
            members = [i for i in range(len(self.rows)) if inside(i)]
            waits = sorted(self.record[i]["first_start"] - self.rows[i]["arrival"]
                           for i in members if self.record[i]["first_start"] is not None)
            wait = {"count": len(waits)}
            if waits:
                wait.update({"mean": sum(waits) / len(waits) / 1000.0,
                             "p50": _nearest_rank(waits, 50) / 1000.0,
                             "p95": _nearest_rank(waits, 95) / 1000.0,
                             "p99": _nearest_rank(waits, 99) / 1000.0,
                             "max": waits[-1] / 1000.0})
            summary["queues"].append({
                "path": path, "jobs": len(members),
                "usage_share_avg": share_ms[path] / makespan if makespan > 0 else 0.0,
                "wait": wait, "leaf": state.queues[path].is_leaf(),
                "evicted_tasks": sum(self.record[i]["evicted"] for i in members),
            })
        return jobs_rows, summary


def simulate(state, rows, reclaim=False, preempt=False, budget=None):
    """(jobs-out rows, JSON summary) of §13 for `rows` on `state`'s tree."""
    return _Run(state, rows, reclaim, preempt, budget).run()
