"""The state of SPEC §1-§7 and §14, with every quantity recomputed from
scratch whenever it is asked for (no incremental bookkeeping: this is an
oracle, slowness is fine, cleverness is not).

Amounts are integers in §2 units; shares are floats (the SPEC compares
them within 1e-9)."""

import math

EPS = 1e-9
INF = math.inf

# Bumped by every change of a job's running tasks or of the set of jobs;
# State caches per-queue usage for one generation only. This is the one
# concession to speed: the values are still recomputed from the jobs.
_generation = [0]


def _bump():
    _generation[0] += 1


class Queue:
    def __init__(self, path, weight=1.0):
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        self.parent = None
        self.children = []          # child queues, kept sorted by name
        self.weight = max(1.0, float(weight))
        self.capability = {}        # resource -> amount; absent = no cap
        self.guarantee = {}         # resource -> amount; absent = 0
        self.reclaimable = True
        self.state = "open"         # §3: open, closing or closed
        self.min_user_limit_percent = 100
        self.user_limit_factor = None
        self.jobs = []              # present jobs, submission order (leaves only)

    def is_leaf(self):
        return not self.children

    def is_open(self):
        """§3: only open queues accept jobs; closing a parent closes its subtree."""
        return all(q.state == "open" for q in self.ancestors_and_self())

    def ancestors_and_self(self):
        """root first, self last."""
        chain = []
        node = self
        while node is not None:
            chain.append(node)
            node = node.parent
        return list(reversed(chain))

    def subtree_jobs(self):
        out = list(self.jobs)
        for child in self.children:
            out.extend(child.subtree_jobs())
        return out


class Job:
    def __init__(self, name, seq, leaf, user, weight, task, tasks, min_available):
        self.name = name
        self.seq = seq              # submission order
        self.leaf = leaf
        self.user = user
        self.weight = max(1.0, float(weight))
        self.task = task            # resource -> amount of one task
        self._running = 0           # allocated tasks
        self._tasks = tasks
        self.min_available = min_available
        self.admitted = True        # §12: Inqueue/Running; False = Pending

    @property
    def running(self):
        return self._running

    @running.setter
    def running(self, value):
        assert 0 <= value <= self._tasks, (self.name, value, self._tasks)
        self._running = value
        _bump()

    @property
    def tasks(self):
        return self._tasks

    @tasks.setter
    def tasks(self, value):
        self._tasks = value
        _bump()

    def gang_size(self):
        """§14: minAvailable, 0 counts as 1, capped at the task count."""
        return min(max(self.min_available, 1), self.tasks)

    def demand_tasks(self):
        """§14/§15: m when the job holds nothing, else 1."""
        return self.gang_size() if self.running == 0 else 1

    def allocation(self, resources):
        return {r: self.running * self.task.get(r, 0) for r in resources}


class State:
    def __init__(self, total):
        self.resources = list(total)
        self.total = dict(total)
        self.root = Queue("root")
        self.queues = {"root": self.root}
        self.jobs = []              # present jobs, submission order
        self.next_seq = 0
        self._usage_cache = {}
        self._shares_cache = None

    # ---- tree building -------------------------------------------------
    def add_queue(self, path, weight=None):
        """Creates `path` and its missing ancestors (weight 1)."""
        if path in self.queues:
            if weight is not None:
                self.queues[path].weight = max(1.0, float(weight))
            return self.queues[path]
        parent_path = path.rsplit("/", 1)[0]
        parent = self.add_queue(parent_path)
        queue = Queue(path, 1.0 if weight is None else weight)
        queue.parent = parent
        parent.children.append(queue)
        parent.children.sort(key=lambda q: q.name.encode())
        self.queues[path] = queue
        return queue

    def submit(self, name, leaf, user, weight, task, tasks, min_available):
        job = Job(name, self.next_seq, leaf, user, weight, task, tasks, min_available)
        self.next_seq += 1
        leaf.jobs.append(job)
        self.jobs.append(job)
        _bump()
        return job

    def remove(self, job):
        job.leaf.jobs.remove(job)
        self.jobs.remove(job)
        _bump()

    def job(self, name):
        for job in self.jobs:
            if job.name == name:
                return job
        return None

    # ---- §2/§6 quantities ---------------------------------------------
    def usage(self, queue):
        """Plain sum of the allocations of the jobs under `queue`."""
        cached = self._usage_cache.get(queue.path)
        if cached is not None and cached[0] == _generation[0]:
            return dict(cached[1])
        out = {r: 0 for r in self.resources}
        for job in queue.subtree_jobs():
            for r in self.resources:
                out[r] += job.running * job.task.get(r, 0)
        self._usage_cache[queue.path] = (_generation[0], dict(out))
        return out

    def free(self):
        used = self.usage(self.root)
        return {r: self.total[r] - used[r] for r in self.resources}

    def held_back(self, leaf):
        """§6: unused guarantees of every sibling of the leaf or of one of
        its ancestors."""
        out = {r: 0 for r in self.resources}
        for node in leaf.ancestors_and_self():
            if node.parent is None:
                continue
            for sibling in node.parent.children:
                if sibling is node:
                    continue
                used = self.usage(sibling)
                for r in self.resources:
                    out[r] += max(0, sibling.guarantee.get(r, 0) - used[r])
        return out

    def real_capability(self, queue):
        if queue.parent is None:
            return dict(self.total)       # §6: realcap(root) = T
        parent_cap = self.real_capability(queue.parent)
        out = {}
        for r in self.resources:
            siblings_guaranteed = sum(s.guarantee.get(r, 0) for s in queue.parent.children
                                      if s is not queue)
            out[r] = min(queue.capability.get(r, INF), parent_cap[r] - siblings_guaranteed)
        return out

    # ---- §7 user limits -------------------------------------------------
    def user_limit(self, leaf):
        """resource -> the most one user may hold in `leaf` (INF: no limit).
        reading: B is taken per resource (the guarantee of r where the queue
        guarantees r, else the real capability of r; a guarantee of 0 is no
        guarantee); n counts the distinct users with a running or pending
        job, i.e. a job with running or waiting tasks: a job of 0 tasks
        does not count (oracle_findings/user-limit-zero-task-job)."""
        out = {r: INF for r in self.resources}
        p = leaf.min_user_limit_percent
        f = leaf.user_limit_factor
        if p < 100:
            realcap = self.real_capability(leaf)
            users = {job.user for job in leaf.jobs if job.tasks > 0}
            n = max(1, len(users))
            for r in self.resources:
                base = leaf.guarantee[r] if leaf.guarantee.get(r, 0) > 0 else realcap[r]
                out[r] = min(out[r], max(base * p / 100.0, base / n))
        if f is not None:
            for r in self.resources:
                if leaf.guarantee.get(r, 0) > 0:
                    out[r] = min(out[r], leaf.guarantee[r] * f)
        return out

    def user_usage(self, leaf, user):
        out = {r: 0 for r in self.resources}
        for job in leaf.jobs:
            if job.user == user:
                for r in self.resources:
                    out[r] += job.running * job.task.get(r, 0)
        return out

    # ---- §6 fit and §15 room --------------------------------------------
    def room(self, leaf, user):
        """§15 room[r]: the largest amount one more allocation in `leaf`
        (by `user`) could take per §6."""
        free = self.free()
        held = self.held_back(leaf)
        out = {r: free[r] - held[r] for r in self.resources}
        for node in leaf.ancestors_and_self():
            if node.capability:
                used = self.usage(node)
                for r, cap in node.capability.items():
                    if r in out:
                        out[r] = min(out[r], cap - used[r])
        limit = self.user_limit(leaf)
        if all(v == INF for v in limit.values()):
            return out
        used = self.user_usage(leaf, user)
        for r in self.resources:
            if limit[r] != INF:
                out[r] = min(out[r], limit[r] - used[r])
        return out

    def fits(self, job, k):
        """§6 (with §14's k tasks): every inequality, for every resource.
        reading: literally every resource, also those the task does not use
        (0 <= room[r] must hold)."""
        room = self.room(job.leaf, job.user)
        return all(k * job.task.get(r, 0) <= room[r] for r in self.resources)

    def schedulable(self, job):
        """§5/§14: unallocated tasks left and its next allocation fits;
        §12: only Inqueue and Running jobs."""
        return job.admitted and job.running < job.tasks and self.fits(job, job.demand_tasks())

    # ---- §12 enqueue gate ---------------------------------------------
    def _minimum(self, job):
        return {r: job.gang_size() * job.task.get(r, 0) for r in self.resources}

    def may_enqueue(self, job, factor):
        """§12: m fits in what is left of the leaf's guarantee, or both the
        cluster-wide and the leaf's sums stay within bounds."""
        leaf = job.leaf
        m = self._minimum(job)
        idle = [j for j in self.jobs if j.admitted and j.running == 0 and j is not job]
        used = self.usage(leaf)
        left = {r: leaf.guarantee.get(r, 0) - used[r]
                - sum(self._minimum(j)[r] for j in idle if j.leaf is leaf) for r in self.resources}
        if all(m[r] <= left[r] for r in self.resources):
            return True
        total_used = self.usage(self.root)
        realcap = self.real_capability(leaf)
        for r in self.resources:
            if total_used[r] + sum(self._minimum(j)[r] for j in idle) + m[r] > \
                    factor * self.total[r]:
                return False
            if used[r] + sum(self._minimum(j)[r] for j in idle if j.leaf is leaf) + m[r] > \
                    realcap[r]:
                return False
        return True

    def reexamine_pending(self, factor):
        """Pending jobs, in submission order, each examined once."""
        for job in self.jobs:
            if not job.admitted and self.may_enqueue(job, factor):
                job.admitted = True
                _bump()

    # ---- §4 shares ------------------------------------------------------
    def job_blocked(self, job, free, held):
        if job.running >= job.tasks:
            return True
        if not job.admitted:
            # reading (SPEC silent; oracle_findings/pending-in-shares): a
            # Pending job (§12) counts as blocked in §4. Read literally, §4
            # would make it a non-blocked child with share 0, so M = 0 and
            # its leaf would keep key 0 (first served) while the job waits.
            return True
        limit = self.user_limit(job.leaf)
        user_used = self.user_usage(job.leaf, job.user) if any(
            v != INF for v in limit.values()) else None
        path = job.leaf.ancestors_and_self()
        for r in self.resources:
            if job.task.get(r, 0) <= 0:
                continue
            if free[r] == 0 or free[r] - held[job.leaf.path][r] <= 0:
                return True
            for node in path:
                if r in node.capability and self.usage(node)[r] >= node.capability[r]:
                    return True
            if user_used is not None and user_used[r] >= limit[r]:
                return True
        return False

    def dominant_share(self, vector, free):
        """s(U): over the resources that are not saturated."""
        best = 0.0
        for r in self.resources:
            if free[r] != 0 and self.total[r] > 0:
                best = max(best, vector[r] / self.total[r])
        return best

    def shares(self):
        """node -> (vector, blocked) for every queue and job, §4."""
        if self._shares_cache is not None and self._shares_cache[0] == _generation[0]:
            return self._shares_cache[1]
        free = self.free()
        held = {path: self.held_back(q) for path, q in self.queues.items() if q.is_leaf()}
        result = {}

        def visit(queue):
            kids = []
            if queue.is_leaf():
                for job in queue.jobs:
                    vec = {r: float(v) for r, v in job.allocation(self.resources).items()}
                    blocked = self.job_blocked(job, free, held)
                    result[job] = (vec, blocked)
                    kids.append((job, vec, blocked, job.weight))
            else:
                for child in queue.children:
                    vec, blocked = visit(child)
                    kids.append((child, vec, blocked, child.weight))
            blocked_self = all(k[2] for k in kids)   # no children -> blocked
            non_blocked = [k for k in kids if not k[2]]
            m = min((self.dominant_share(k[1], free) / k[3] for k in non_blocked), default=0.0)
            vec = {r: 0.0 for r in self.resources}
            for _, kvec, kblocked, kweight in kids:
                if kblocked:
                    for r in self.resources:
                        vec[r] += kvec[r]
                else:
                    s = self.dominant_share(kvec, free)
                    if s > 0:
                        for r in self.resources:
                            vec[r] += (m * kweight / s) * kvec[r]
            result[queue] = (vec, blocked_self)
            return vec, blocked_self

        visit(self.root)
        self._shares_cache = (_generation[0], (result, free))
        return result, free

    def key(self, node, shares, free):
        vec, _ = shares[node]
        return self.dominant_share(vec, free) / node.weight

    # ---- plain dominant share (§5 admission, §13 outputs, §15 d) --------
    def plain_share(self, vector):
        return max((vector[r] / self.total[r] for r in self.resources if self.total[r] > 0),
                   default=0.0)
