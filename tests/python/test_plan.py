"""Plans (docs/spec.md §15) and gangs (§14) in the Python module: a reclaim
that takes one task, applied; a stale plan raising hdrf.StalePlanError and
changing nothing; plans refused for unknown and removed jobs, bad modes and
another engine's plan; a failed plan's shortfall; a gang's m tasks."""
import pytest

import hdrf


def reclaim_example():
    """cpu=4 over root/a and root/b; "hog" in root/a runs 4 tasks of 1 cpu,
    "want" (one task of 1 cpu) waits in root/b."""
    e = hdrf.Engine({"cpu": "4", "memory": "16Gi"}, [{"path": "root/a"}, {"path": "root/b"}])
    hog = e.submit("hog", "root/a", tasks=4, task={"cpu": "1"})
    e.allocate(hog, 4)
    want = e.submit("want", "root/b", task={"cpu": "1"})
    return e, hog, want


def test_plan_apply_and_stale():
    e, hog, want = reclaim_example()
    with e:
        before, seq = e.digest(), e.last_seq
        p = e.plan(want)
        assert (e.digest(), e.last_seq) == (before, seq)  # a plan changes nothing
        assert (p.fits, p.tasks, p.name, p.mode) == (True, 1, "want", "reclaim")
        assert p.job == want
        assert p.victims == [("hog", 1)] and p.victim_jobs == [hog]
        assert p.short == {}
        e.apply_plan(p)
        assert e.last_seq == seq + 1  # one event
        assert (e.job(hog)["allocated"], e.job(hog)["tasks"], e.job(want)["allocated"]) == (3, 4, 1)
        after = e.digest()
        with pytest.raises(hdrf.StalePlanError, match="stale plan") as ex:
            e.apply_plan(p)
        assert isinstance(ex.value, hdrf.Error) and hdrf.StalePlanError is hdrf.AbortedError
        assert (ex.value.code, ex.value.code_name) == (10, "Aborted")
        assert (e.digest(), e.last_seq) == (after, seq + 1)


def test_a_victim_gone_makes_the_plan_stale():
    e, hog, want = reclaim_example()
    with e:
        p = e.plan("want", mode="both")  # by name
        e.remove(hog)
        before = e.digest()
        with pytest.raises(hdrf.StalePlanError, match="victim hog is gone"):
            e.apply_plan(p)
        assert e.digest() == before and e.job(want)["allocated"] == 0


def test_refused_plans():
    e, hog, want = reclaim_example()
    other, _, _ = reclaim_example()
    with e, other:
        gone = e.submit("gone", "root/b", task={"cpu": "1"})
        e.remove(gone)
        before = e.digest()
        with pytest.raises(hdrf.NotFoundError, match="unknown job"):
            e.plan("no-such-job")
        with pytest.raises(hdrf.NotFoundError):
            e.plan(gone)
        with pytest.raises(hdrf.InvalidArgumentError, match="expected reclaim, preempt or both"):
            e.plan(want, mode="steal")
        with pytest.raises(hdrf.InvalidArgumentError, match="maxVictims"):
            e.plan(want, max_victims=-1)
        with pytest.raises(hdrf.FailedPreconditionError, match="no unallocated task"):
            e.plan(hog)
        with pytest.raises(hdrf.InvalidArgumentError, match="another engine"):
            other.plan(want)
        p = e.plan(want)
        other_before = other.digest()
        with pytest.raises(hdrf.InvalidArgumentError, match="belongs to another engine"):
            other.apply_plan(p)
        assert other.digest() == other_before
        with pytest.raises(TypeError):
            e.apply_plan({"fits": True})
        failed = e.plan(want, max_victims=0)
        assert (failed.fits, failed.victims, failed.short) == (False, [], {"cpu": 1000})
        with pytest.raises(hdrf.FailedPreconditionError):
            e.apply_plan(failed)
        assert e.digest() == before
    with pytest.raises(hdrf.FailedPreconditionError, match="closed"):
        e.apply_plan(p)


def test_a_plan_never_initialised_raises():
    p = hdrf.Plan.__new__(hdrf.Plan)  # no constructor ran: zero-filled, no plan
    assert repr(p) == "<hdrf.Plan, not initialised>"
    for attr in ("fits", "tasks", "victims", "victim_jobs", "short", "job", "name"):
        with pytest.raises(hdrf.FailedPreconditionError, match="not initialised"):
            getattr(p, attr)
    e, _, want = reclaim_example()
    with e:
        before = e.digest()
        with pytest.raises(hdrf.FailedPreconditionError, match="not initialised"):
            e.apply_plan(p)
        assert e.digest() == before and e.job(want)["allocated"] == 0


def test_a_gang_starts_with_its_m_tasks_and_plans_for_them():
    e, hog, _ = reclaim_example()
    with e:
        gang = e.submit("gang", "root/b", tasks=3, task={"cpu": "1"}, min_available=2)
        assert e.job(gang)["min_available"] == 2
        p = e.plan(gang)
        assert p.fits and p.tasks == 2 and sum(n for _, n in p.victims) == 2
        e.apply_plan(p)
        assert (e.job(gang)["allocated"], e.job(hog)["allocated"]) == (2, 2)
    with hdrf.Engine({"cpu": "4"}) as e:
        gang = e.submit("gang", tasks=4, task={"cpu": "1"}, min_available=3)
        seq = e.last_seq
        assert e.step() == gang
        assert e.last_seq == seq + 1 and e.job(gang)["allocated"] == 3  # one step, m tasks
