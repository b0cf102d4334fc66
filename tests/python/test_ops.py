"""One op, one conversion (hdrf/op.h): allocate, release, finish and
remove, a (job, op, n) tuple of apply (op by name or hdrf.OP_* value) and a
row of an int64 buffer all become the same C++ hdrf::Op; the single calls
go through Engine::Apply(Op) and batches through ApplyTasks. An op type
that is no job event is refused naming it; a batch that applies nothing
raises what hdrf_apply returns (its first refusal, naming the op)."""
import array

import pytest

import hdrf

NAMES = ["a", "b", "c"]


def engine():
    e = hdrf.Engine({"cpu": "12"}, [{"path": "root/x"}, {"path": "root/y"}])
    jobs = {n: e.submit(n, "root/x" if n != "b" else "root/y", tasks=6, task={"cpu": "1"})
            for n in NAMES}
    return e, jobs


def code(call):
    try:
        call()
        return 0
    except hdrf.Error as err:
        return err.code


def test_op_constants_are_the_event_types():
    assert (hdrf.OP_ALLOCATE, hdrf.OP_RELEASE, hdrf.OP_FINISH, hdrf.OP_REMOVE) == (0, 1, 2, 4)


def test_every_type_by_method_tuple_name_tuple_value_and_buffer_row_alike():
    engines = [engine() for _ in range(4)]
    names = {hdrf.OP_ALLOCATE: "allocate", hdrf.OP_RELEASE: "release",
             hdrf.OP_FINISH: "finish", hdrf.OP_REMOVE: "remove"}
    kinds = [hdrf.OP_ALLOCATE, hdrf.OP_ALLOCATE, hdrf.OP_RELEASE, hdrf.OP_FINISH, hdrf.OP_ALLOCATE]
    applied = set()
    for i in range(120):
        job, n = NAMES[i % 3], 1 + i % 3
        op = hdrf.OP_REMOVE if i == 100 else kinds[i % len(kinds)]
        (m, jm), (t, jt), (v, jv), (b, jb) = engines
        method = {hdrf.OP_ALLOCATE: lambda: m.allocate(jm[job], n),
                  hdrf.OP_RELEASE: lambda: m.release(jm[job], n),
                  hdrf.OP_FINISH: lambda: m.finish(jm[job], n),
                  hdrf.OP_REMOVE: lambda: m.remove(jm[job])}[op]
        got = [code(method),
               t.apply([(jt[job], names[op], n)], results=True)[1][0],
               v.apply([(jv[job], op, n)], results=True)[1][0],
               b.apply(array.array("q", [jb[job].id, jb[job].seq, op, n]), results=True)[1][0]]
        assert len(set(got)) == 1, (i, op, got)
        if got[0] == 0:
            applied.add(op)
    assert applied == set(names)
    digests = {e.digest() for e, _ in engines}
    assert len(digests) == 1
    for e, _ in engines:
        e.close()


@pytest.mark.parametrize("bad, says", [
    ("explode", "op 'explode' is not a job event"),
    ("submit", "op 'submit' is not a job event"),
    (3, r"op type 3 \(submit\) is not a job event"),
    (9, r"op type 9 \(set-capacity\) is not a job event"),
    (256, "op type 256 is not a job event"),
    (-1, "op type -1 is not a job event"),
])
def test_a_type_that_is_no_job_event_is_refused_naming_it(bad, says):
    e, jobs = engine()
    e.allocate(jobs["a"], 2)
    digest, seq = e.digest(), e.last_seq
    expected = r"expected allocate \(0\), release \(1\), finish \(2\) or remove \(4\)"
    calls = [lambda: e.apply([(jobs["a"], bad, 1)]),
             lambda: e.apply([(jobs["a"], "allocate", 1), (jobs["a"], bad, 1)], results=True)]
    if isinstance(bad, int):
        calls.append(lambda: e.apply(array.array("q", [jobs["a"].id, jobs["a"].seq, bad, 1])))
    for call in calls:
        with pytest.raises(hdrf.InvalidArgumentError, match=says + ".*" + expected):
            call()
        # Checked before any op runs: the good op beside it did not apply.
        assert (e.digest(), e.last_seq) == (digest, seq)
    e.close()


def test_a_batch_that_applies_nothing_raises_its_first_refusal_as_c_returns_it():
    e, jobs = engine()
    e.allocate(jobs["a"], 6)
    digest, seq = e.digest(), e.last_seq
    ops = [(jobs["a"], "allocate", 1), (jobs["b"], "release", 1)]
    # Without results: the first refusal, naming the op (hdrf_apply's return).
    with pytest.raises(hdrf.OutOfRangeError, match=r"op 0 of 2 \(2 refused\): "):
        e.apply(ops)
    # With results: each op's code, as before.
    applied, codes = e.apply(ops, results=True)
    assert applied == 0 and codes[0] == 5 and codes[1] != 0  # 5: OutOfRange
    assert (e.digest(), e.last_seq) == (digest, seq)
    # Some applied: the number applied, without raising; an empty batch: 0.
    assert e.apply(ops + [(jobs["b"], "allocate", 2)]) == 1
    assert e.apply([]) == 0
    e.close()
