"""The Python module `hdrf` (api/python): worked cases, errors carrying the
code, the context manager, iterables, batch apply from a list and from an
int64 buffer, and threads in parallel ending in a one-thread run's state."""
import array
import pathlib
import threading

import pytest

import hdrf

WORKED_YAML = (pathlib.Path(__file__).parent.parent / "data" / "scenarios" /
               "worked_example_1.yaml").read_text()


def worked_example():
    e = hdrf.Engine({"cpu": "10", "nvidia.com/gpu": "10"},
                    [{"path": p, "weight": 50}
                     for p in ("root/sci", "root/eng", "root/eng/dev", "root/eng/prod")])
    jobs = {
        "sci": e.submit("sci", "root/sci", tasks=10, task={"cpu": "1", "nvidia.com/gpu": "1"}),
        "dev": e.submit("dev", "root/eng/dev", tasks=10, task={"cpu": "1"}),
        "prod": e.submit("prod", "root/eng/prod", tasks=10, task={"nvidia.com/gpu": "1"}),
    }
    return e, jobs


def test_worked_example_matches_the_scenario_runner():
    with hdrf.Engine.from_scenario(WORKED_YAML) as sc:
        sc.fill()
        want = sc.digest()
    e, jobs = worked_example()
    with e:
        assert e.fill() == 15
        for name, job in jobs.items():
            info = e.job(job)
            assert (info["name"], info["allocated"], info["share"]) == (name, 5, 0.5)
        assert e.digest() == want
        assert len(e) == 3
    assert e.closed


def test_errors_carry_the_code():
    e, jobs = worked_example()
    with pytest.raises(hdrf.NotFoundError) as ex:
        e.find("no-such-job")
    assert ex.value.code == 2 and ex.value.code_name == "NotFound"
    assert str(ex.value) == "job no-such-job: unknown job"
    assert isinstance(ex.value, hdrf.Error)
    with pytest.raises(hdrf.InvalidArgumentError, match="unknown suffix 'x'"):
        e.submit("bad", "root/sci", task={"cpu": "1x"})
    with pytest.raises(hdrf.OutOfRangeError):
        e.release(jobs["sci"], 1)
    seq = e.last_seq
    other, ojobs = worked_example()
    with pytest.raises(hdrf.InvalidArgumentError, match="another engine"):
        e.allocate(ojobs["sci"])
    other.close()
    e.remove(jobs["dev"])
    with pytest.raises(hdrf.NotFoundError):
        e.allocate(jobs["dev"])
    assert e.last_seq == seq + 1
    e.close()
    e.close()  # a no-op, like file.close()
    with pytest.raises(hdrf.FailedPreconditionError):
        e.fill()


def test_names_iterables_explain_metrics():
    e, jobs = worked_example()
    with e:
        e.allocate("dev", 2)  # by name
        assert e.find("dev") == jobs["dev"]
        assert e.step() is not None
        queues = list(e.queues())
        assert [q["path"] for q in queues][:2] == ["root", "root/eng"]
        dev = next(q for q in queues if q["path"] == "root/eng/dev")
        assert dev["allocated"]["cpu"] >= 2000 and dev["is_leaf"]
        assert [j["name"] for j in e.jobs()] == ["sci", "dev", "prod"]
        x = e.explain("prod")
        assert x["job"] == "prod" and x["queue"] == "root/eng/prod" and x["levels"]
        assert "hdrf_jobs 3\n" in e.metrics()


def one_call(e, job, op, n):
    fn = {hdrf.OP_ALLOCATE: e.allocate, hdrf.OP_RELEASE: e.release, hdrf.OP_FINISH: e.finish}[op]
    try:
        fn(job, n)
        return 0
    except hdrf.Error as err:
        return err.code


def test_apply_list_and_buffer_match_one_call_per_op():
    a, ja = worked_example()
    b, jb = worked_example()
    c, jc = worked_example()
    names = ["sci", "dev", "prod"]
    kinds = [hdrf.OP_ALLOCATE, hdrf.OP_ALLOCATE, hdrf.OP_RELEASE, hdrf.OP_FINISH]
    plan = [(names[i % 3], kinds[i % 4], 1 + i % 4) for i in range(90)]
    applied, codes = a.apply([(ja[n], op, k) for n, op, k in plan], results=True)
    flat = array.array("q")
    for n, op, k in plan:
        flat.extend([jc[n].id, jc[n].seq, op, k])
    applied_c, codes_c = c.apply(flat, results=True)
    alone = [one_call(b, jb[n], op, k) for n, op, k in plan]
    assert codes == alone and codes_c == alone
    assert applied == applied_c == alone.count(0) > 0
    assert a.digest() == b.digest() == c.digest()
    with pytest.raises(hdrf.InvalidArgumentError):
        a.apply([(ja["sci"], "explode", 1)])
    for e in (a, b, c):
        e.close()


def run_ops(e, mine, seed, batched):
    x = seed * 2654435761 % 2**32 + 1
    ops = []
    for _ in range(1500):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        r = x % 10
        op = hdrf.OP_ALLOCATE if r < 6 else hdrf.OP_RELEASE if r < 9 else hdrf.OP_FINISH
        ops.append((mine[x % len(mine)], op, 1 + x % 3))
    if batched:
        for i in range(0, len(ops), 500):
            e.apply(ops[i:i + 500])
    else:
        for job, op, n in ops:
            one_call(e, job, op, n)


def threaded_run(parallel):
    workers = 6
    with hdrf.Engine({"cpu": "100000", "memory": "100Ti"},
                     [{"path": f"root/t{w}/leaf"} for w in range(workers)]) as e:
        jobs = [[e.submit(f"j{w}-{i}", f"root/t{w}/leaf", tasks=50, task={"cpu": "1"})
                 for i in range(5)] for w in range(workers)]
        if parallel:
            threads = [threading.Thread(target=run_ops, args=(e, jobs[w], w + 1, w % 2 == 1))
                       for w in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for w in range(workers):
                run_ops(e, jobs[w], w + 1, w % 2 == 1)
        return e.digest()


def test_threads_in_parallel_match_one_thread():
    assert threaded_run(True) == threaded_run(False)


def test_persistence_round_trip(tmp_path):
    db = str(tmp_path / "db")
    with hdrf.Engine({"cpu": "4"}, db_path=db) as e:
        j = e.submit("j", tasks=8, task={"cpu": "1"})
        e.fill()
        e.finish(j, 2)
        digest = e.digest()
    with hdrf.Engine.open(db) as r:
        assert r.digest() == digest
        assert r.job("j")["tasks"] == 6


def test_reconcile_after_restart(tmp_path):
    db = str(tmp_path / "db")
    queues = [{"path": "root/a"}, {"path": "root/b"}]
    truth = hdrf.Engine({"cpu": "100"}, queues)
    with hdrf.Engine({"cpu": "100"}, queues, db_path=db) as store:
        for e in (store, truth):
            for i, q in enumerate(["root/a", "root/b", "root/a"]):
                e.allocate(e.submit(f"j{i}", q, tasks=10, task={"cpu": "1"}), 4)
    # What the store missed.
    truth.finish("j0", 3)
    truth.remove("j1")
    truth.allocate(truth.submit("j3", "root/b", tasks=2, task={"cpu": "1"}), 2)
    view = [{"name": j["name"], "queue": j["queue"], "task": {"cpu": "1"},
             "tasks": j["tasks"], "running": j["allocated"]} for j in truth.jobs()]
    with hdrf.Engine.open(db) as reopened:
        changes = reopened.reconcile(view)
        assert (changes["jobs_removed"], changes["jobs_submitted"], changes["jobs_adjusted"]) == \
            (["j1"], ["j3"], ["j0"])
        assert changes["events"] == 4
        assert reopened.digest() == truth.digest()
        assert reopened.reconcile(view)["events"] == 0
    truth.close()


def test_a_refused_engine_raises(tmp_path):
    # The error is raised with the GIL held (it crashed the interpreter
    # when raised inside the GIL-free section).
    with pytest.raises(hdrf.InvalidArgumentError, match="listed twice"):
        hdrf.Engine({"cpu": "1"}, [{"path": "root/a"}, {"path": "root/a"}])
    with pytest.raises(hdrf.NotFoundError, match="no store at"):
        hdrf.Engine.open(str(tmp_path / "none"))
    with pytest.raises(hdrf.Error):
        hdrf.Engine.from_config("cluster: {cpu: 1}\nqueues: [{path: root/a}, {path: root/a}]\n")


def test_unknown_keys_are_refused():
    with pytest.raises(hdrf.InvalidArgumentError, match="queue spec: unknown key 'wieght'"):
        hdrf.Engine({"cpu": "1"}, [{"path": "root/a", "wieght": 2}])
    with hdrf.Engine({"cpu": "2"}, [{"path": "root/a", "weight": 2, "capability": {"cpu": "1"},
                                    "reclaimable": False}]) as e:
        q = next(q for q in e.queues() if q["path"] == "root/a")
        assert (q["weight"], q["reclaimable"]) == (2, False)
        with pytest.raises(hdrf.InvalidArgumentError, match="truth job: unknown key 'cpu'"):
            e.reconcile([{"name": "j", "queue": "root/a", "cpu": 1}])
        assert e.reconcile([{"name": "j", "queue": "root/a", "task": {"cpu": "1"}, "tasks": 2,
                             "running": 1}])["jobs_submitted"] == ["j"]
        assert e.job("j")["allocated"] == 1
