"""Issue 25 item 5: every path of the Python module that takes a job ref
checks that the ref is this engine's and names a live job, with a clear
error, and a refused call changes nothing: a Job given to allocate,
release, finish, remove, job and plan; a (job, op, n) tuple of apply; a row
of an int64 buffer given to apply (array.array, a 1-D and a 2-D
memoryview), alone or after a good row; a plan given to apply_plan. A
Job.id names exactly one engine: serials are never reused and never wrap
(the last one a process can give is refused past, not wrapped to an
earlier engine's)."""
import array
import os
import subprocess
import sys

import pytest

import hdrf

CLUSTER = {"cpu": "10"}
QUEUES = [{"path": "root/a"}, {"path": "root/b"}]


def engine():
    """An engine with a running job and a waiting one; two of these hand out
    the same JobIds and seqs, so only the engine check tells their refs
    apart."""
    e = hdrf.Engine(CLUSTER, QUEUES)
    run = e.submit("run", "root/a", tasks=10, task={"cpu": "1"})
    e.allocate(run, 10)
    wait = e.submit("wait", "root/b", tasks=4, task={"cpu": "1"})
    return e, run, wait


def buffers(*refs, op=hdrf.OP_RELEASE, n=1):
    """The rows (Job.id, Job.seq, op, n) of `refs` as each buffer apply takes."""
    values = [v for r in refs for v in (r.id, r.seq, op, n)]
    flat = array.array("q", values)
    return [flat, memoryview(flat),
            memoryview(array.array("q", values)).cast("B").cast("q", shape=[len(refs), 4])]


def paths(mine, theirs):
    """(name, call) for every path that takes a job ref, each given `theirs`
    (`mine`: a good ref of the same engine, to mix in)."""
    calls = [
        ("allocate", lambda e: e.allocate(theirs)),
        ("release", lambda e: e.release(theirs)),
        ("finish", lambda e: e.finish(theirs)),
        ("remove", lambda e: e.remove(theirs)),
        ("job", lambda e: e.job(theirs)),
        ("plan", lambda e: e.plan(theirs)),
        ("apply tuple", lambda e: e.apply([(theirs, "release", 1)])),
        ("apply tuples, results", lambda e: e.apply([(mine, "release", 1), (theirs, "release", 1)],
                                                    results=True)),
    ]
    for i, buf in enumerate(buffers(theirs)):
        calls.append((f"apply buffer {i}", lambda e, buf=buf: e.apply(buf)))
    for i, buf in enumerate(buffers(mine, theirs)):
        calls.append((f"apply buffer {i} after a good row",
                      lambda e, buf=buf: e.apply(buf, results=True)))
    return calls


def expect_refused(e, calls, error, match):
    for name, call in calls:
        digest, seq = e.digest(), e.last_seq
        with pytest.raises(error, match=match):
            call(e)
        assert (e.digest(), e.last_seq) == (digest, seq), name


def test_a_ref_of_another_engine_is_refused_on_every_path():
    a, run_a, wait_a = engine()
    b, run_b, wait_b = engine()
    assert (run_a.id & 0xFFFFFFFF, run_a.seq) == (run_b.id & 0xFFFFFFFF, run_b.seq)
    for theirs in (run_b, wait_b):
        expect_refused(a, paths(run_a, theirs), hdrf.InvalidArgumentError, "another engine")
    # A plan names its engine too.
    plan_b = b.plan(wait_b)
    expect_refused(a, [("apply_plan", lambda e: e.apply_plan(plan_b))],
                   hdrf.InvalidArgumentError, "another engine")
    # A ref without its engine's tag (a bare JobId) is no ref at all.
    bare = array.array("q", [run_a.id & 0xFFFFFFFF, run_a.seq, hdrf.OP_RELEASE, 1])
    expect_refused(a, [("bare id", lambda e: e.apply(bare))], hdrf.InvalidArgumentError,
                   "another engine")
    # The good refs still work, on either path.
    assert a.apply(buffers(run_a)[0]) == 1
    assert a.apply([(run_a, "release", 1)]) == 1
    a.close()
    b.close()


def test_a_ref_of_a_closed_engine_is_refused():
    old, run_old, _ = engine()
    old.close()
    e, run, _ = engine()
    expect_refused(e, paths(run, run_old), hdrf.InvalidArgumentError, "another engine")
    e.close()


def test_a_ref_of_a_removed_job_is_refused():
    e, run, wait = engine()
    e.remove(wait)
    single = [c for c in paths(run, wait) if not c[0].startswith("apply")]
    expect_refused(e, single, hdrf.NotFoundError, "no such job in this engine")
    # In a batch each op is accepted or refused on its own (docs/embedding.md
    # "Errors"): the removed job's op is refused with NotFound (code 2) and
    # changes nothing; a good op beside it applies. A batch that applies
    # nothing raises its first refusal without results=True, as hdrf_apply
    # returns it.
    digest, seq = e.digest(), e.last_seq
    assert e.apply([(wait, "release", 1)], results=True) == (0, [2])
    for buf in buffers(wait):
        with pytest.raises(hdrf.NotFoundError, match=r"op 0 of 1 \(1 refused\): .*no such job"):
            e.apply(buf)
        assert e.apply(buf, results=True) == (0, [2])
    assert (e.digest(), e.last_seq) == (digest, seq)
    for buf in buffers(run, wait):
        assert e.apply(buf, results=True) == (1, [0, 2])
    e.close()


def test_what_is_no_job_is_refused():
    e, run, _ = engine()
    for bad in (5, run.id, None, (run.id, run.seq)):
        expect_refused(e, [("allocate", lambda e, bad=bad: e.allocate(bad)),
                           ("apply tuple", lambda e, bad=bad: e.apply([(bad, "release", 1)])),
                           ("plan", lambda e, bad=bad: e.plan(bad))],
                       hdrf.InvalidArgumentError, "a job is an hdrf.Job or a job name")
    e.close()


WRAP = r"""
import array, hdrf
cluster, queues = {"cpu": "10"}, [{"path": "root/a"}]
a = hdrf.Engine(cluster, queues)
ja = a.submit("j", "root/a", tasks=2, task={"cpu": "1"})
# Engine serials are 31 bits (a Job.id is serial << 32 | JobId): the last
# serial a process can give, then none.
hdrf._skip_engine_serials(2**31 - 1)
b = hdrf.Engine(cluster, queues)
jb = b.submit("j", "root/a", tasks=2, task={"cpu": "1"})
assert jb.id >> 32 == 2**31 - 1, jb.id
for e, theirs in ((a, jb), (b, ja)):
    try:
        e.apply(array.array("q", [theirs.id, theirs.seq, hdrf.OP_ALLOCATE, 1]))
        raise SystemExit("a ref of another engine was applied")
    except hdrf.InvalidArgumentError as err:
        assert "another engine" in str(err), err
# A serial that would wrap to an earlier engine's tag is not given.
hdrf._skip_engine_serials(2**31 + (ja.id >> 32))
try:
    c = hdrf.Engine(cluster, queues)
except hdrf.FailedPreconditionError as err:
    assert "never reused" in str(err), err
else:
    c.submit("j", "root/a", tasks=2, task={"cpu": "1"})
    try:
        c.apply(array.array("q", [ja.id, ja.seq, hdrf.OP_ALLOCATE, 1]))
    except hdrf.InvalidArgumentError:
        raise SystemExit("a serial past 2**31 - 1 was given")
    raise SystemExit("the serials wrapped: a later engine applied a ref of the first")
assert a.apply(array.array("q", [ja.id, ja.seq, hdrf.OP_ALLOCATE, 1])) == 1
assert b.apply(array.array("q", [jb.id, jb.seq, hdrf.OP_ALLOCATE, 1])) == 1
print("ok")
"""


def test_engine_serials_never_wrap():
    # In a process of its own: it uses up the serials.
    r = subprocess.run([sys.executable, "-c", WRAP], capture_output=True, text=True,
                       env=dict(os.environ), timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
