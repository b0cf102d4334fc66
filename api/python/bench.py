"""Events/s of the Python module: one call per event and batches of 1,000
through Engine.apply (an int64 buffer). bench/README.md "Embedding" has
the figures and the command:

    PYTHONPATH=build/release/api/python python3 api/python/bench.py [JOBS] [EVENTS]

The world is bench/engine_bench's shape: 1,000 leaves (depth 3, fanout 10),
JOBS jobs of 8 tasks with half of each running, nothing saturates; events
are random allocate/release that stay valid (generated before timing)."""
import array
import random
import sys
import time

import hdrf


def world(njobs, rng):
    leaves = [f"root/a{i}/b{j}/c{k}" for i in range(10) for j in range(10) for k in range(10)]
    e = hdrf.Engine({"cpu": "10000000", "memory": "100Pi", "pods": "10000000"},
                    [{"path": p, "weight": 1 + n % 4} for n, p in enumerate(leaves)])
    jobs = [e.submit(f"job{i}", rng.choice(leaves), f"user{rng.randrange(50)}", 8,
                     {"cpu": "500m", "memory": "1Gi", "pods": "1"}) for i in range(njobs)]
    e.apply([(j, hdrf.OP_ALLOCATE, 4) for j in jobs])
    return e, jobs


def events(jobs, alloc, n, rng):
    out = []
    for _ in range(n):
        j = rng.randrange(len(jobs))
        if alloc[j] == 8 or (alloc[j] > 0 and rng.random() < 0.5):
            alloc[j] -= 1
            out.append((j, hdrf.OP_RELEASE))
        else:
            alloc[j] += 1
            out.append((j, hdrf.OP_ALLOCATE))
    return out


def main():
    njobs = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    nevents = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    rng = random.Random(1)
    e, jobs = world(njobs, rng)
    alloc = [4] * njobs
    # One call per event.
    evs = events(jobs, alloc, nevents // 4, rng)
    calls = {hdrf.OP_ALLOCATE: e.allocate, hdrf.OP_RELEASE: e.release}
    t0 = time.perf_counter()
    for j, op in evs:
        calls[op](jobs[j], 1)
    per_call = len(evs) / (time.perf_counter() - t0)
    # Batches of 1,000 from an int64 buffer (id, seq, op, n per event).
    evs = events(jobs, alloc, nevents, rng)
    buf = array.array("q")
    for j, op in evs:
        buf.extend((jobs[j].id, jobs[j].seq, op, 1))
    t0 = time.perf_counter()
    mv = memoryview(buf)
    for i in range(0, len(evs), 1000):
        e.apply(mv[4 * i:4 * (i + 1000)])
    batched = len(evs) / (time.perf_counter() - t0)
    e.close()
    print(f"python per-call: {per_call:,.0f} events/s ({njobs} jobs)")
    print(f"python batched (1000 per apply): {batched:,.0f} events/s ({njobs} jobs)")


if __name__ == "__main__":
    main()
