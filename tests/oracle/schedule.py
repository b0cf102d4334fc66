"""SPEC §5 step, fill and admission; §14 gang steps."""

from .model import EPS


def _smallest(items, key_of, tie_of):
    """The item with the smallest key; the items whose key is within EPS of
    that smallest key are equal to it, and the smallest tie value among
    them wins. (Keys are not transitively equal: with keys m, m + 0.6e-9,
    m + 1.2e-9 the last is not tied with the smallest.)"""
    items = list(items)
    if not items:
        return None
    keys = {id(item): key_of(item) for item in items}
    least = min(keys.values())
    return min((item for item in items if keys[id(item)] <= least + EPS), key=tie_of)


def pick(state, eligible):
    """§5 descent: at each level the child with the smallest key among those
    whose subtree holds an eligible job (ties: name, byte order); in the
    leaf the eligible job with the smallest s/w (ties: earlier submitted)."""
    shares, free = state.shares()
    ok = [job for job in state.jobs if eligible(job)]
    if not ok:
        return None
    ok_set = set(ok)
    node = state.root
    while not node.is_leaf():
        candidates = [c for c in node.children
                      if any(j in ok_set for j in c.subtree_jobs())]
        node = _smallest(candidates, lambda c: state.key(c, shares, free),
                         lambda c: c.name.encode())
    jobs = [j for j in node.jobs if j in ok_set]
    return _smallest(jobs, lambda j: state.key(j, shares, free), lambda j: j.seq)


def step(state):
    """One step: returns (job, tasks started) or None."""
    job = pick(state, state.schedulable)
    if job is None:
        return None
    k = job.demand_tasks()
    job.running += k
    return job, k


def fill(state, on_start=None):
    while True:
        done = step(state)
        if done is None:
            return
        if on_start is not None:
            on_start(*done)


def admit(state, queue):
    """§5 admission: from a parent, descend to the child with the smallest
    plain dominant share of its subtree's allocation over its weight."""
    while not queue.is_leaf():
        queue = _smallest([c for c in queue.children if c.is_open()],
                          lambda c: state.plain_share(state.usage(c)) / c.weight,
                          lambda c: c.name.encode())
    return queue
