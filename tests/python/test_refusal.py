"""Issue 26 in Python: a refused call changes nothing (digest, last_seq and
the store opened again), Python accepts no resource name, weight or
quantity that the C interface refuses (one validation layer: the engine's),
an uninitialised hdrf.Engine raises instead of crashing, and a buffer of
refs is checked like Job objects."""
import array
import math

import pytest

import hdrf

CLUSTER = {"cpu": "10", "memory": "64Gi"}


def store(tmp_path):
    db = str(tmp_path / "db")
    e = hdrf.Engine(CLUSTER, [{"path": "root/a"}, {"path": "root/b"}], db_path=db)
    run = e.submit("run", "root/a", tasks=4, task={"cpu": "1"})
    e.submit("wait", "root/b", tasks=2, task={"cpu": "1"})
    e.allocate(run, 2)
    return db, e, run


def expect_unchanged(db, e, refusals):
    """Each refusal raises its error; nothing changes, in memory or on disk."""
    for error, match, call in refusals:
        digest, seq = e.digest(), e.last_seq
        with pytest.raises(error, match=match):
            call(e)
        assert (e.digest(), e.last_seq) == (digest, seq), match
        e.close()
        e = hdrf.Engine.open(db)
        assert (e.digest(), e.last_seq) == (digest, seq), match
    e.close()


def test_refused_calls_change_nothing(tmp_path):
    db, e, run = store(tmp_path)
    expect_unchanged(db, e, [
        # Issue 26 item 1: reconcile([{}]) removed every job before refusing.
        (hdrf.InvalidArgumentError, "empty name", lambda e: e.reconcile([{}])),
        (hdrf.NotFoundError, "root/nowhere",
         lambda e: e.reconcile([{"name": "z", "queue": "root/nowhere"}])),
        (hdrf.OutOfRangeError, "free",
         lambda e: e.reconcile([{"name": "z", "queue": "root/b", "task": {"cpu": "5"},
                                 "tasks": 3, "running": 3}])),
        (hdrf.InvalidArgumentError, "largest weight",
         lambda e: e.submit("x", "root/b", weight=1e304)),
        (hdrf.InvalidArgumentError, "finite", lambda e: e.submit("x", "root/b", weight=math.nan)),
        (hdrf.InvalidArgumentError, "largest amount",
         lambda e: e.submit("x", "root/b", tasks=2**62, task={"cpu": "1"})),
        (hdrf.NotFoundError, "cpus", lambda e: e.submit("x", "root/b", task={"cpus": "1"})),
        (hdrf.OutOfRangeError, "unallocated", lambda e: e.allocate("run", 3)),
        (hdrf.OutOfRangeError, "running", lambda e: e.release("wait", 1)),
        (hdrf.NotFoundError, "nope", lambda e: e.remove("nope")),
    ])


@pytest.mark.parametrize("name", ["", "cpus", "a/b/c", "gpu"])
def test_resource_names_the_c_interface_refuses_are_refused(tmp_path, name):
    # Issue 26 item 2: an empty name was accepted, acknowledged, and made
    # a store that close() and recovery refused.
    with pytest.raises(hdrf.InvalidArgumentError, match="unknown resource|empty resource name|resource name"):
        hdrf.Engine({name: "5", "cpu": "1"}, [{"path": "root/a"}], db_path=str(tmp_path / "db"))
    assert not (tmp_path / "db").exists()


@pytest.mark.parametrize("factor", [math.nan, math.inf, -1.0])
def test_overcommit_factor_must_be_a_finite_number(factor):
    with pytest.raises(hdrf.InvalidArgumentError, match="overcommit factor"):
        hdrf.Engine(CLUSTER, overcommit_factor=factor)


def test_weights_are_bounded():
    with pytest.raises(hdrf.InvalidArgumentError, match="largest weight"):
        hdrf.Engine(CLUSTER, [{"path": "root/a", "weight": 1e304}])
    with hdrf.Engine(CLUSTER, [{"path": "root/a", "weight": 1e9}]) as e:
        assert next(q for q in e.queues() if q["path"] == "root/a")["weight"] == 1e9


def test_an_uninitialised_engine_raises():
    # Issue 26 item 12: these crashed or spun.
    e = hdrf.Engine.__new__(hdrf.Engine)
    calls = [lambda: e.close(), lambda: e.allocate("x"), lambda: e.digest(),
             lambda: list(e.queues()), lambda: e.last_seq, lambda: e.closed,
             lambda: e.apply(array.array("q", [1, 1, 0, 1])), lambda: e.submit("x")]
    for call in calls:
        with pytest.raises(hdrf.FailedPreconditionError, match="not initialised"):
            call()
    # A Job never initialised names no engine's job.
    j = hdrf.Job.__new__(hdrf.Job)
    with hdrf.Engine(CLUSTER, [{"path": "root/a"}]) as real:
        real.submit("x", "root/a")
        with pytest.raises(hdrf.InvalidArgumentError, match="another engine"):
            real.allocate(j)


def test_buffer_refs_are_checked():
    a = hdrf.Engine(CLUSTER, [{"path": "root/a"}])
    b = hdrf.Engine(CLUSTER, [{"path": "root/a"}])
    ja = a.submit("j", "root/a", tasks=2, task={"cpu": "1"})
    jb = b.submit("j", "root/a", tasks=2, task={"cpu": "1"})
    digest = a.digest()
    for bad in ([jb.id, jb.seq, hdrf.OP_ALLOCATE, 1],               # b's job
                [ja.id & 0xFFFFFFFF, ja.seq, hdrf.OP_ALLOCATE, 1]):  # no tag
        with pytest.raises(hdrf.InvalidArgumentError, match="another engine"):
            a.apply(array.array("q", bad))
    assert a.digest() == digest
    assert a.apply(array.array("q", [ja.id, ja.seq, hdrf.OP_ALLOCATE, 1])) == 1
    a.close()
    b.close()
