"""Random small cases: a queue tree (depth <= 3, 2-6 leaves) with weights,
some capabilities, guarantees and reclaimable=false; jobs with 1-6 tasks,
some gangs. Everything is valid per SPEC §3 so that both sides accept it."""


RESOURCES = ["cpu", "memory", "nvidia.com/gpu", "example.com/fpga"]

# Sweep options (differential.py --deep / --root-capability): trees of up to
# four levels below root with 3-9 leaves; a capability on root itself.
OPTIONS = {"deep": False, "root_capability": False}


def _amount_text(resource, units):
    """Whole units (CPUs, GiB, GPUs) as a §2 quantity."""
    return f"{units}Gi" if resource == "memory" else str(units)


def _tree(rng):
    """List of leaf paths and parent paths."""
    while True:
        leaves, parents = [], []

        def grow(path, depth):
            kids = rng.randint(2, 3) if depth == 0 else rng.randint(1, 3)
            deep = OPTIONS["deep"]
            for index in range(kids):
                child = f"{path}/{'abcdef'[index]}{depth}"
                if depth < (3 if deep else 2) and rng.random() < (0.45 if deep else 0.35):
                    parents.append(child)
                    grow(child, depth + 1)
                else:
                    leaves.append(child)

        grow("root", 0)
        if (3 <= len(leaves) <= 9) if OPTIONS["deep"] else (2 <= len(leaves) <= 6):
            return parents, leaves


def config(rng, user_limits=False, closed=False):
    resources = rng.sample(RESOURCES, rng.randint(1, 3 if rng.random() < 0.9 else 4))
    resources.sort(key=RESOURCES.index)
    cluster_units = {r: rng.randint(4, 24) for r in resources}
    parents, leaves = _tree(rng)
    queues = []
    caps, guars, capped = {}, {}, {}
    for path in sorted(parents + leaves, key=lambda p: p.count("/")):
        entry = {"path": path}
        if rng.random() < 0.6:
            entry["weight"] = rng.choice([1, 1, 2, 3, 4, 0.5, 1.5])
        parent = path.rsplit("/", 1)[0]
        parent_cap = caps.get(parent, cluster_units)
        caps[path] = dict(parent_cap)
        if rng.random() < 0.25:
            cap = {r: rng.randint(0 if rng.random() < 0.1 or parent_cap[r] == 0 else 1,
                                  parent_cap[r])
                   for r in resources if rng.random() < 0.7}
            if cap:
                entry["capability"] = {r: _amount_text(r, v) for r, v in cap.items()}
                caps[path].update(cap)
                if path in parents:
                    capped[path] = dict(caps[path])
        # Guarantees: the budget left under the parent's guarantee (root: the
        # cluster). Children of a capped parent without a guarantee share the
        # parent's capability: a guarantee there is what the §15 guarantee
        # clause is for (a sibling may fill the parent's capability).
        capped_parent = parent in capped
        if parent == "root" or parent in guars or capped_parent:
            if parent == "root":
                budget = guars.setdefault("root", dict(cluster_units))
            elif parent in guars:
                budget = guars[parent]
            else:
                budget = capped[parent]
            if rng.random() < (0.6 if capped_parent else 0.3):
                g = {}
                for r in resources:
                    most = min(budget[r], caps[path][r])
                    if most > 0 and rng.random() < 0.7:
                        g[r] = rng.randint(1, max(1, most // 2))
                if g and rng.random() < 0.1:
                    g.setdefault(rng.choice(resources), 0)     # a guarantee of 0
                if g:
                    for r, v in g.items():
                        budget[r] -= v
                    guars[path] = dict(g)
                    for r in resources:
                        guars[path].setdefault(r, 0)
                    entry["guarantee"] = {r: _amount_text(r, v) for r, v in g.items()}
        if rng.random() < 0.15:
            entry["reclaimable"] = False
        if user_limits and path in leaves and rng.random() < 0.3:
            entry["minUserLimitPercent"] = rng.choice([25, 50, 75])
        if user_limits and path in leaves and "guarantee" in entry and rng.random() < 0.5:
            entry["userLimitFactor"] = rng.choice([0.5, 1, 1.5])
        queues.append(entry)
    if closed:
        # Some leaves closed or closing, each keeping an open sibling leaf,
        # so that admission from a parent always finds an open leaf.
        entries = {e["path"]: e for e in queues}
        for path in leaves:
            parent = path.rsplit("/", 1)[0]
            open_siblings = [p for p in leaves if p != path and p.rsplit("/", 1)[0] == parent
                             and entries[p].get("state", "open") == "open"]
            if open_siblings and rng.random() < 0.3:
                entries[path]["state"] = rng.choice(["closed", "closing", "Closed"])
    if OPTIONS["root_capability"]:
        # root's own capability below the cluster in one resource; the other
        # queues lose their amounts of it so that they stay within it.
        r = rng.choice(resources)
        for entry in queues:
            for key in ("capability", "guarantee"):
                if r in entry.get(key, {}):
                    del entry[key][r]
                    if not entry[key]:
                        del entry[key]
        queues.append({"path": "root", "weight": rng.choice([1, 5]),
                       "capability": {r: _amount_text(r, max(1, cluster_units[r] * 3 // 4))}})
    rng.shuffle(queues)
    return {"cluster": {r: _amount_text(r, v) for r, v in cluster_units.items()},
            "queues": queues}, leaves, parents, resources, cluster_units


def task_shape(rng, resources, cluster_units):
    """resource -> quantity text of one task; sometimes in quarters of a
    unit (250m, 256Mi) so that shares are not round."""
    divisor = rng.choice([3, 6])
    quarters = rng.random() < 0.3
    while True:
        task = {}
        for r in resources:
            if rng.random() < 0.75:
                most = max(1, cluster_units[r] // divisor)
                if quarters:
                    q = rng.randint(1, 4 * most)
                    if r == "memory":
                        # Now and then a few bytes off: on clusters of ~10^10 bytes
                        # that puts keys within 1e-9 of each other (§5 ties).
                        task[r] = rng.choice([f"{q * 256}Mi", f"{q * 256 * 1024}Ki",
                                              str(q * 256 * 2**20 + rng.randint(1, 40))])
                    else:
                        task[r] = rng.choice([f"{q * 250}m", f"{q / 4:g}"])
                else:
                    units = rng.randint(1, most)
                    task[r] = f"{units}c" if r == "cpu" and rng.random() < 0.2 \
                        else _amount_text(r, units)
        if task:
            return task


def job_spec(rng, name, leaves, parents, resources, cluster_units, users):
    tasks = rng.randint(1, 6)
    spec = {"name": name,
            "queue": rng.choice(parents) if parents and rng.random() < 0.1 else rng.choice(leaves),
            "tasks": tasks,
            "task": task_shape(rng, resources, cluster_units)}
    if users:
        spec["user"] = rng.choice(users)
    if rng.random() < 0.3:
        spec["weight"] = rng.choice([2, 3, 0.5])
    if tasks > 1 and rng.random() < 0.25:
        spec["minAvailable"] = rng.randint(2, tasks)
    return spec


def workload(rng, leaves, parents, resources, cluster_units, users=None, jobs=(5, 40),
             hog=None):
    """Rows for a CSV workload (times in ms)."""
    rows = []
    coarse = rng.random() < 0.5        # coarse times make many ties
    count = rng.randint(*jobs)
    span = 20000 * max(1, count // 40)
    hogs = [hog] if hog else rng.sample(leaves, 1) if rng.random() < 0.3 else []
    for index in range(count):
        spec = job_spec(rng, f"j{index}", leaves, parents, resources, cluster_units, users)
        arrival = rng.randint(0, span // 500) * 500 if coarse else rng.randint(0, span)
        duration = rng.randint(1, 20) * 1000 if coarse else rng.randint(1, 20000)
        if hogs and index < 4:
            # A hog: long jobs at 0 in one leaf, for the reclaim phase to take back from.
            spec["queue"], arrival, duration = hogs[0], 0, rng.randint(30, 60) * 1000
        edge = rng.random()
        if edge < 0.03:
            spec["task"] = {}                             # a task that needs nothing
        elif edge < 0.06:
            spec["queue"] = ""                            # empty cell: admission from root
        if rng.random() < 0.04:
            spec["queue"] = "root/nosuchqueue"            # refused: unknown queue
        elif rng.random() < 0.04:
            r = rng.choice(resources)                     # refused: task larger than the cluster
            spec["task"][r] = _amount_text(r, cluster_units[r] + 1)
        rows.append({"name": spec["name"], "queue": spec["queue"], "arrival": arrival,
                     "duration": duration, "user": spec.get("user", ""),
                     "tasks": spec["tasks"], "weight": spec.get("weight", ""),
                     "min_available": spec.get("minAvailable", ""), "task": spec["task"]})
    rows.sort(key=lambda row: row["arrival"] if rng.random() < 0.7 else 0)
    return rows


def workload_csv(rows, resources):
    def seconds(ms):
        return f"{ms // 1000}.{ms % 1000:03d}"
    lines = [",".join(["name", "queue", "arrival", "duration", "user", "tasks", "weight",
                       "min_available"] + resources)]
    for row in rows:
        cells = [row["name"], row["queue"], seconds(row["arrival"]), seconds(row["duration"]),
                 row["user"], str(row["tasks"]), str(row["weight"]), str(row["min_available"])]
        cells += [row["task"].get(r, "") for r in resources]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def squeeze_config(rng, user_limits=False):
    """A capped parent whose children share its capability, one of them
    with a guarantee (the §15 guarantee clause: a sibling may have filled
    the parent's capability, so the guaranteed queue waits although its
    guarantee is not held). Same return value as config()."""
    resources = sorted(rng.sample(RESOURCES[:3], rng.randint(1, 2)), key=RESOURCES.index)
    cluster_units = {r: rng.randint(8, 24) for r in resources}
    cap = {r: rng.randint(3, cluster_units[r] // 2) for r in resources}
    guaranteed = {r: rng.randint(1, cap[r] - 1) for r in resources if rng.random() < 0.8} \
        or {resources[0]: 1}
    parent = rng.choice(["root/x", "root/x/z"])
    queues = [{"path": parent, "capability": {r: _amount_text(r, v) for r, v in cap.items()}},
              {"path": f"{parent}/p", "guarantee":
                  {r: _amount_text(r, v) for r, v in guaranteed.items()},
               "weight": rng.choice([1, 1, 2])},
              {"path": f"{parent}/q", "weight": rng.choice([2, 4, 4])},
              {"path": "root/y", "weight": rng.choice([1, 2])}]
    if rng.random() < 0.5:
        queues.append({"path": f"{parent}/s", "weight": rng.choice([1, 3])})
    if user_limits:
        queues[1]["minUserLimitPercent"] = rng.choice([50, 100])
    leaves = [q["path"] for q in queues[1:]]
    parents = [parent] + (["root/x"] if parent == "root/x/z" else [])
    rng.shuffle(queues)
    return ({"cluster": {r: _amount_text(r, v) for r, v in cluster_units.items()},
             "queues": queues}, leaves, parents, resources, cluster_units)
