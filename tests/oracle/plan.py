"""SPEC §15 reclaim and preemption plans, computed literally on the state
(mutated in place for the what-ifs and always restored)."""

import math

from .model import EPS


def unit_tasks(victim):
    """§15 unit: one task when V holds more than m_V, else all it holds."""
    return 1 if victim.running > victim.gang_size() else victim.running


def _vec(task, n, resources):
    return {r: n * task.get(r, 0) for r in resources}


def _plus(a, b, sign=1):
    return {r: a[r] + sign * b[r] for r in a}


def _below_then_not_above(state, a, w_a, b, w_b, demand, unit):
    """§15 condition 2, the share clause: d(A)/w_A < d(B)/w_B - 1e-9 and
    d(A + D)/w_A <= d(B - u)/w_B + 1e-9."""
    before = state.plain_share(a) / w_a < state.plain_share(b) / w_b - EPS
    after = state.plain_share(_plus(a, demand)) / w_a <= state.plain_share(_plus(b, unit, -1)) / w_b + EPS
    return before and after


def permitted(state, taker, demand, victim, n):
    """The transfer rule of §15 for the unit of `n` tasks of `victim`."""
    res = state.resources
    unit = _vec(victim.task, n, res)
    if victim.leaf is taker.leaf:
        # preempt: A is J, B is V, with the jobs' weights; no guarantee test.
        return _below_then_not_above(state, taker.allocation(res), taker.weight,
                                     victim.allocation(res), victim.weight, demand, unit)
    path_j = taker.leaf.ancestors_and_self()
    path_v = victim.leaf.ancestors_and_self()
    depth = 0
    while depth + 1 < min(len(path_j), len(path_v)) and path_j[depth + 1] is path_v[depth + 1]:
        depth += 1
    # path_j[depth] is C; A and B are the next queues on each side.
    side_a, side_b = path_j[depth + 1], path_v[depth + 1]
    # Condition 1: reclaimable below C, and no guarantee crossed downwards.
    for queue in path_v[depth + 1:]:
        if not queue.reclaimable:
            return False
    for index, queue in enumerate(path_v):
        used = state.usage(queue)
        for r in res:
            # reading: "would see its usage drop to below its guarantee" refuses
            # only a drop (change < 0) that ends below the guarantee.
            change = -unit[r] if index > depth else demand[r] - unit[r]
            if change < 0 and used[r] + change < queue.guarantee.get(r, 0):
                return False
    # Condition 2: the share clause, or the guarantee clause.
    usage_a = state.usage(side_a)
    if _below_then_not_above(state, usage_a, side_a.weight, state.usage(side_b), side_b.weight, demand, unit):
        return True
    return all(usage_a[r] + demand[r] <= side_a.guarantee.get(r, 0)
               for r in res if demand[r] > 0)


def _in_scope(taker, victim, mode):
    if victim is taker or victim.running == 0:
        return False
    same_leaf = victim.leaf is taker.leaf
    return {"reclaim": not same_leaf, "preempt": same_leaf, "both": True}[mode]


def _helps(state, taker, demand, victim, n):
    before = state.room(taker.leaf, taker.user)
    victim.running -= n
    after = state.room(taker.leaf, taker.user)
    victim.running += n
    return any(demand[r] > before[r] and after[r] > before[r] for r in state.resources)


def _largest(items, key_of, tie_of):
    """Largest key; the items within EPS of it are equal to it, and the
    largest tie value among them wins."""
    items = list(items)
    if not items:
        return None
    keys = {id(item): key_of(item) for item in items}
    most = max(keys.values())
    return max((item for item in items if keys[id(item)] >= most - EPS), key=tie_of)


def _choose_victim(state, taker, demand, mode):
    candidates = set()
    for victim in state.jobs:
        if not _in_scope(taker, victim, mode):
            continue
        n = unit_tasks(victim)
        if permitted(state, taker, demand, victim, n) and _helps(state, taker, demand, victim, n):
            candidates.add(victim)
    if not candidates:
        return None
    node = state.root
    while not node.is_leaf():
        kids = [c for c in node.children if any(j in candidates for j in c.subtree_jobs())]
        node = _largest(kids, lambda c: state.plain_share(state.usage(c)) / c.weight,
                        lambda c: c.name.encode())
    jobs = [j for j in node.jobs if j in candidates]
    return _largest(jobs, lambda j: state.plain_share(j.allocation(state.resources)) / j.weight,
                    lambda j: j.seq)


def _valid_sequence(state, taker, k, entries):
    """With `entries` removed in order from the current state: each is its
    job's unit and permitted at its point, and then D fits."""
    demand = _vec(taker.task, k, state.resources)
    done = []
    ok = True
    for victim, n in entries:
        if victim.running == 0 or unit_tasks(victim) != n or \
                not permitted(state, taker, demand, victim, n):
            ok = False
            break
        victim.running -= n
        done.append((victim, n))
    if ok:
        ok = state.fits(taker, k)
    for victim, n in reversed(done):
        victim.running += n
    return ok


def compute(state, taker, mode="reclaim", max_victims=None):
    """Returns dict(fits, tasks, victims=[(job, n)], short={r: amount})."""
    k = taker.demand_tasks()
    demand = _vec(taker.task, k, state.resources)
    if state.fits(taker, k):
        return {"fits": True, "tasks": k, "victims": [], "short": {}}
    plan = []
    failed_short = None
    while not state.fits(taker, k):
        victim = _choose_victim(state, taker, demand, mode)
        if victim is None or (max_victims is not None and len(plan) >= max_victims):
            room = state.room(taker.leaf, taker.user)
            failed_short = {r: int(math.ceil(demand[r] - room[r]))
                            for r in state.resources if demand[r] > room[r]}
            break
        n = unit_tasks(victim)
        victim.running -= n
        plan.append((victim, n))
    for victim, n in reversed(plan):
        victim.running += n
    if failed_short is not None:
        return {"fits": False, "tasks": k, "victims": [], "short": failed_short}
    for index in reversed(range(len(plan))):
        shorter = plan[:index] + plan[index + 1:]
        if _valid_sequence(state, taker, k, shorter):
            plan = shorter
    return {"fits": True, "tasks": k, "victims": plan, "short": {}}


def apply(state, taker, result):
    """Stops the victims' tasks, then allocates the demand."""
    for victim, n in result["victims"]:
        victim.running -= n
    taker.running += result["tasks"]
