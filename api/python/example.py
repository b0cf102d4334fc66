"""The Python example of docs/embedding.md (run by CI: tests/python,
python_example)."""
import hdrf

# An engine over a cluster and a queue tree; `with` closes it.
with hdrf.Engine({"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"},
                 [{"path": "root/research", "weight": 2},
                  {"path": "root/prod/web", "capability": {"cpu": "32"}},
                  {"path": "root/prod/batch"}]) as eng:
    # submit hands back a Job: keep it, events on it are the fast path.
    train = eng.submit("train", "root/research", "alice", tasks=8,
                       task={"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"})
    web = eng.submit("web", "root/prod/web", tasks=16, task={"cpu": "2", "memory": "4Gi"})

    # The host's own placements, one call each...
    eng.allocate(train, 2)
    # ...or many in one call (a list of (job, op, n), or an int64 array).
    applied, codes = eng.apply([(web, "allocate", 4), (train, "release", 1),
                                (web, "allocate", 100)], results=True)
    print(f"apply: {applied} of 3 applied; codes {codes}")

    # hdrf's own choice: fill the cluster in fair order.
    print(f"fill: {eng.fill()} steps")
    for job in eng.jobs():
        print(f"  {job['name']}: {job['allocated']} of {job['tasks']} tasks running, "
              f"share {job['share']:.3f}")

    # Errors carry the engine's code.
    try:
        eng.find("nope")
    except hdrf.NotFoundError as err:
        print(f"find nope: {err.code_name} ({err.code}): {err}")
    x = eng.explain("web")
    print(f"explain web: queue {x['queue']}, blocked {x['blocked']} {x['blocked_by']}")
    for q in eng.queues():
        if q["is_leaf"]:
            print(f"  {q['path']}: cpu {q['allocated']['cpu']}, share {q['share']:.3f}")

    # After a restart: tell the engine what the cluster holds now.
    changes = eng.reconcile([{"name": "train", "queue": "root/research", "user": "alice",
                              "task": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                              "tasks": 8, "running": 8}])
    print(f"reconcile: {changes['events']} events, removed {changes['jobs_removed']}, "
          f"adjusted {changes['jobs_adjusted']}")
    print("digest", eng.digest())
