"""SPEC §10 scenarios (`hdrf sim`) with the §15 `plan` / `evict` steps."""

import yaml

from . import plan as plans
from . import quantity
from .model import State
from .schedule import admit, fill


def build_state(doc):
    """Cluster and queue tree of a §10 document."""
    total = {r: quantity.parse(r, v) for r, v in doc["cluster"].items()}
    state = State(total)
    for entry in doc.get("queues") or []:
        queue = state.add_queue(entry["path"], entry.get("weight"))
        queue.capability = {r: quantity.parse(r, v)
                            for r, v in (entry.get("capability") or {}).items()}
        queue.guarantee = {r: quantity.parse(r, v)
                           for r, v in (entry.get("guarantee") or {}).items()}
        queue.reclaimable = bool(entry.get("reclaimable", True))
        queue.state = str(entry.get("state", "open")).lower()
        queue.min_user_limit_percent = int(entry.get("minUserLimitPercent", 100))
        if entry.get("userLimitFactor") is not None:
            queue.user_limit_factor = float(entry["userLimitFactor"])
    return state


def submit(state, spec, factor=None):
    queue = admit(state, state.queues[spec.get("queue") or "root"])
    task = {r: quantity.parse(r, v) for r, v in (spec.get("task") or {}).items()}
    job = state.submit(spec["name"], queue, spec.get("user", "default"),
                       spec.get("weight", 1), task, int(spec.get("tasks", 1)),
                       int(spec.get("minAvailable", 1)))
    if factor is not None:
        job.admitted = False
        job.admitted = state.may_enqueue(job, factor)
    return job


def run(doc):
    """The output `hdrf sim` must print for the parsed scenario `doc`."""
    state = build_state(doc)
    factor = doc.get("overcommitFactor")
    factor = None if factor is None else float(factor)

    def released():
        if factor is not None:
            state.reexamine_pending(factor)

    for spec in doc.get("jobs") or []:
        submit(state, spec, factor)
    out_plans = []
    steps = doc.get("steps")
    for step in ["fill"] if steps is None else steps:    # an explicit [] runs nothing
        if step == "fill":
            fill(state)
            continue
        (kind, args), = step.items()
        if kind == "finish":
            job = state.job(args["job"])
            n = int(args.get("tasks", 1))
            job.running -= n
            job.tasks -= n
            released()
        elif kind == "remove":
            state.remove(state.job(args["job"]))
            released()
        elif kind == "submit":
            submit(state, args, factor)
        elif kind in ("plan", "evict"):
            job = state.job(args["job"])
            if job.running >= job.tasks or not job.admitted:
                raise ValueError(f"job {job.name}: no unallocated task (FailedPrecondition)")
            mode = args.get("mode", "reclaim")
            result = plans.compute(state, job, mode, args.get("maxVictims"))
            applied = False
            if kind == "evict" and result["fits"]:
                plans.apply(state, job, result)
                applied = True
                if result["victims"]:
                    released()
            out_plans.append({
                "job": job.name, "mode": mode, "fits": result["fits"],
                "tasks": result["tasks"],
                "victims": [{"job": v.name, "tasks": n} for v, n in result["victims"]],
                "short": result["short"], "applied": applied})
        else:
            raise ValueError(f"unknown step {kind}")
    jobs = [{"name": j.name, "queue": j.leaf.path, "tasks_allocated": j.running,
             "allocated": j.allocation(state.resources),
             # reading: §10's "share" is the plain dominant share of the
             # job's allocation (8 CPU, 8Gi of 30, 30Gi -> 0.27 in §10).
             "share": state.plain_share(j.allocation(state.resources)),
             "state": "Pending" if not j.admitted else "Running" if j.running else "Inqueue"}
            for j in state.jobs]
    return {"jobs": jobs, "plans": out_plans}


def run_file(path):
    with open(path) as handle:
        return run(yaml.safe_load(handle))
