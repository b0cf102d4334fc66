"""Followers through the Python module: a writer engine writes a store, a
follower of it sees the writer's events after catch_up() (the writer's
digest), refuses events, reports its lag, and after the writer closed
becomes the writer with promote()."""
import time

import pytest

import hdrf


def writer(db):
    w = hdrf.Engine({"cpu": "8"}, [{"path": "root/a"}, {"path": "root/b"}], db_path=db)
    a = w.submit("a", "root/a", tasks=4, task={"cpu": "1"})
    w.allocate(a, 1)
    return w


def same_state(f, w):
    assert (f.digest(), f.last_seq) == (w.digest(), w.last_seq)


def test_follower_sees_the_writer_refuses_events_and_is_promoted(tmp_path):
    db = str(tmp_path / "db")
    w = writer(db)
    with hdrf.Engine.open_follower(db, catch_up_interval_ms=0) as f:
        assert f.is_follower and not w.is_follower
        same_state(f, w)
        before = f.digest()
        w.submit("b", "root/b", tasks=4, task={"cpu": "1"})
        w.fill()
        assert f.digest() == before  # nothing without a catch-up
        f.catch_up()
        same_state(f, w)
        lag = f.lag()
        assert lag["follower"] and lag["events"] == 0
        assert lag["applied_seq"] == lag["writer_seq"] == w.last_seq
        assert w.lag() == {"follower": False, "events": 0, "seconds": 0.0, "applied_seq": 0,
                           "writer_seq": 0, "reloads": 0}
        assert f.job("b")["allocated"] == w.job("b")["allocated"] > 0
        assert "hdrf_follower_lag_events 0" in f.metrics()

        # Every event is refused and changes nothing.
        job = f.find("a")
        calls = {
            "allocate": lambda: f.allocate(job),
            "release": lambda: f.release("a"),
            "finish": lambda: f.finish(job),
            "remove": lambda: f.remove(job),
            "submit": lambda: f.submit("c", "root/a", task={"cpu": "1"}),
            "apply": lambda: f.apply([(job, "allocate", 1)]),
            "step": f.step,
            "fill": f.fill,
            "reconcile": lambda: f.reconcile([]),
        }
        for what, call in calls.items():
            with pytest.raises(hdrf.FailedPreconditionError, match="read-only follower of " + db):
                call()
        same_state(f, w)

        # Promote: refused while the writer holds the store, then taken over.
        with pytest.raises(hdrf.FailedPreconditionError, match="not promoted"):
            f.promote(0)
        with pytest.raises(hdrf.InvalidArgumentError):
            f.promote(-2)
        w.release("a", 1)
        want, seq = w.digest(), w.last_seq
        w.close()
        f.promote(10000, durability="sync")
        assert not f.is_follower and f.lag()["follower"] is False
        assert (f.digest(), f.last_seq) == (want, seq)
        f.allocate("a")
        assert f.last_seq == seq + 1
        promoted = f.digest()
        with pytest.raises(hdrf.FailedPreconditionError):
            f.catch_up()
    # The promoted engine logged its event: a recovery has its state.
    with hdrf.Engine.open(db) as r:
        assert (r.digest(), r.last_seq) == (promoted, seq + 1)


def test_follower_catches_up_in_the_background(tmp_path):
    db = str(tmp_path / "db")
    with writer(db) as w, hdrf.Engine.open_follower(db) as f:
        w.submit("b", "root/b", tasks=2, task={"cpu": "1"})
        w.fill()
        deadline = time.monotonic() + 10
        while f.last_seq < w.last_seq and time.monotonic() < deadline:
            time.sleep(0.002)
        same_state(f, w)


def test_follower_of_no_store(tmp_path):
    none = str(tmp_path / "none")
    with pytest.raises(hdrf.NotFoundError, match=none):
        hdrf.Engine.open_follower(none, secondary_path=str(tmp_path / "secondary"))
    assert not (tmp_path / "secondary").exists()
    with pytest.raises(hdrf.InvalidArgumentError):
        hdrf.Engine.open_follower("")
    with hdrf.Engine({"cpu": "1"}) as e:
        with pytest.raises(hdrf.FailedPreconditionError, match="not a follower"):
            e.promote(0)
        with pytest.raises(hdrf.FailedPreconditionError, match="not a follower"):
            e.catch_up()


def reloads_after_the_cadence(w, db):
    """w (a writer with checkpoint_every=100) submits 200 jobs; a follower
    opened then catches up once, after 1,000 more task events. It reloads
    the newest checkpoint only when the writer deleted log it had not read,
    which takes two background checkpoints after it opened: with
    checkpoint_events_per_job=4 there is at most one (4 x 200 = 800 events
    apart), with 0 one every 100 events (docs/storage.md "Checkpoints").
    Returns the follower's reloads."""
    jobs = [w.submit("j%d" % i, "root/a", tasks=2, task={"cpu": "1"}) for i in range(200)]
    with hdrf.Engine.open_follower(db, catch_up_interval_ms=0) as f:
        end = w.last_seq + 1000
        i = 0
        while w.last_seq < end:
            (w.allocate if i % 2 == 0 else w.release)(jobs[i // 2 % len(jobs)])
            i += 1
        f.catch_up()
        same_state(f, w)
        return f.lag()["reloads"]


@pytest.mark.parametrize("k", [4, 0])
def test_checkpoint_events_per_job_reaches_a_new_and_a_promoted_writer(tmp_path, k):
    db = str(tmp_path / "new")
    with hdrf.Engine({"cpu": "8"}, [{"path": "root/a"}], db_path=db, checkpoint_every=100,
                     checkpoint_events_per_job=k) as w:
        reloads = reloads_after_the_cadence(w, db)
    assert (reloads == 0) == (k == 4), reloads
    db = str(tmp_path / "promoted")
    hdrf.Engine({"cpu": "8"}, [{"path": "root/a"}], db_path=db).close()
    with hdrf.Engine.open_follower(db, catch_up_interval_ms=0) as w:
        w.promote(10000, checkpoint_every=100, checkpoint_events_per_job=k)
        reloads = reloads_after_the_cadence(w, db)
    assert (reloads == 0) == (k == 4), reloads


def test_checkpoint_events_per_job_out_of_range(tmp_path):
    for bad in (-1, 2**32):
        with pytest.raises(hdrf.InvalidArgumentError, match="checkpoint_events_per_job must be in "
                           "0..4294967295 .* not %d" % bad):
            hdrf.Engine({"cpu": "1"}, checkpoint_events_per_job=bad)
    hdrf.Engine({"cpu": "1"}, checkpoint_events_per_job=2**32 - 1).close()
    db = str(tmp_path / "db")
    hdrf.Engine({"cpu": "1"}, db_path=db).close()
    with hdrf.Engine.open_follower(db, catch_up_interval_ms=0) as f:
        with pytest.raises(hdrf.InvalidArgumentError, match="not -1"):
            f.promote(0, checkpoint_events_per_job=-1)
        assert f.is_follower  # nothing changed
