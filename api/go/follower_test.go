package hdrf

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// sameState fails the test unless a and b have the same digest and last
// sequence number.
func sameState(t *testing.T, what string, a, b *Engine) {
	t.Helper()
	da, err1 := a.Digest()
	db, err2 := b.Digest()
	sa, _ := a.LastSeq()
	sb, _ := b.LastSeq()
	if err1 != nil || err2 != nil || da != db || sa != sb {
		t.Fatalf("%s: digest %s seq %d, want %s seq %d (%v %v)", what, da, sa, db, sb, err1, err2)
	}
}

// A writer writes a store; a follower of it sees its events after a
// catch-up, refuses events, reports its lag and, once the writer closed,
// becomes the writer.
func TestFollowerAndPromote(t *testing.T) {
	db := t.TempDir() + "/db"
	w, err := Create("cpu=8", []QueueSpec{{Path: "root/a"}, {Path: "root/b"}}, &Options{DBPath: db})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a, _ := w.Submit(JobSpec{Name: "a", Queue: "root/a", Tasks: 4, Task: "cpu=1"})
	if err := w.Allocate(a, 1); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFollower(db, &FollowerOptions{CatchUpInterval: -1}) // only on CatchUp
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sameState(t, "opened", f, w)

	// The writer moves on; the follower sees it after CatchUp.
	before, _ := f.Digest()
	b, _ := w.Submit(JobSpec{Name: "b", Queue: "root/b", Tasks: 4, Task: "cpu=1"})
	if _, err := w.Fill(); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.Digest(); d != before {
		t.Fatal("the follower changed without a catch-up")
	}
	if err := f.CatchUp(); err != nil {
		t.Fatal(err)
	}
	sameState(t, "caught up", f, w)
	seq, _ := w.LastSeq()
	lag, err := f.Lag()
	if err != nil || !lag.IsFollower || lag.Events != 0 || lag.AppliedSeq != seq || lag.WriterSeq != seq {
		t.Fatalf("lag %+v %v, writer at %d", lag, err, seq)
	}
	if lag, _ := w.Lag(); lag != (Lag{}) {
		t.Fatalf("a writer's lag: %+v", lag)
	}
	if err := w.CatchUp(); !errors.Is(err, FailedPrecondition) {
		t.Fatalf("catch-up of a writer: %v", err)
	}
	// The job the writer submitted, as the follower sees it (a Job names
	// one job of one engine).
	fb, err := f.Find("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Info(b); !errors.Is(err, InvalidArgument) {
		t.Fatalf("the writer's Job on the follower: %v", err)
	}
	if info, err := f.Info(fb); err != nil || info.Allocated == 0 {
		t.Fatalf("b on the follower: %+v %v", info, err)
	}

	// Events are refused, and change nothing.
	refused := map[string]error{"allocate": f.Allocate(fb, 1), "remove": f.Remove(fb)}
	_, refused["submit"] = f.Submit(JobSpec{Name: "c", Queue: "root/a", Task: "cpu=1"})
	_, refused["apply"] = f.Apply([]Op{{Job: fb, N: 1, Type: OpRelease}}, nil)
	_, refused["fill"] = f.Fill()
	_, _, refused["step"] = f.Step()
	_, refused["reconcile"] = f.Reconcile(nil, nil)
	refused["queue"] = f.CreateQueue(QueueSpec{Path: "root/c"})
	for what, err := range refused {
		if !errors.Is(err, FailedPrecondition) || !strings.Contains(err.Error(), "read-only follower of "+db) {
			t.Errorf("%s on a follower: %v", what, err)
		}
	}
	sameState(t, "after refused events", f, w)

	// Promote: refused while the writer holds the store, then taken over.
	if err := f.Promote(0, nil); !errors.Is(err, FailedPrecondition) || !strings.Contains(err.Error(), "not promoted") {
		t.Fatalf("promote while held: %v", err)
	}
	if err := w.Release(a, 1); err != nil {
		t.Fatal(err)
	}
	want, _ := w.Digest()
	seq, _ = w.LastSeq()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Promote(10*time.Second, &Options{Durability: Sync}); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.Digest(); d != want {
		t.Fatalf("promoted digest %s, the writer's %s", d, want)
	}
	// Events are accepted (the task of a that the writer released last).
	fa, err := f.Find("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Allocate(fa, 1); err != nil {
		t.Fatal(err)
	}
	if s, _ := f.LastSeq(); s != seq+1 {
		t.Fatalf("promoted: seq %d, want %d", s, seq+1)
	}
	if lag, _ := f.Lag(); lag.IsFollower {
		t.Fatal("still a follower")
	}
}

// A follower with the default period catches up by itself.
func TestFollowerInTheBackground(t *testing.T) {
	db := t.TempDir() + "/db"
	w, err := Create("cpu=8", []QueueSpec{{Path: "root/a"}}, &Options{DBPath: db})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := OpenFollower(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	j, _ := w.Submit(JobSpec{Name: "a", Queue: "root/a", Tasks: 4, Task: "cpu=1"})
	w.Allocate(j, 3)
	seq, _ := w.LastSeq()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if s, _ := f.LastSeq(); s >= seq {
			break
		}
	}
	sameState(t, "followed", f, w)
}

func TestFollowerOfNoStore(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenFollower(dir+"/none", &FollowerOptions{SecondaryPath: dir + "/secondary"})
	if !errors.Is(err, NotFound) || !strings.Contains(err.Error(), dir+"/none") {
		t.Fatalf("follower of no store: %v", err)
	}
	if _, err := OpenFollower("", nil); !errors.Is(err, InvalidArgument) {
		t.Fatalf("empty path: %v", err)
	}
	e, _ := Create("cpu=1", nil, nil)
	defer e.Close()
	if err := e.Promote(-1, nil); !errors.Is(err, FailedPrecondition) {
		t.Fatalf("promote of a writer: %v", err)
	}
}

// reloadsAfterTheCadence: w (a writer with CheckpointEvery 100) submits 200
// jobs; a follower opened then catches up once, after 1,000 more task
// events. It reloads the newest checkpoint only when the writer deleted log
// it had not read, which takes two background checkpoints after it opened:
// with CheckpointEventsPerJob 4 there is at most one (4 x 200 = 800 events
// apart), with it off (< 0) one every 100 events (docs/storage.md
// "Checkpoints"). Returns the follower's reloads.
func reloadsAfterTheCadence(t *testing.T, w *Engine, db string) uint64 {
	t.Helper()
	jobs := make([]Job, 200)
	for i := range jobs {
		j, err := w.Submit(JobSpec{Name: fmt.Sprintf("j%d", i), Queue: "root/a", Tasks: 2, Task: "cpu=1"})
		if err != nil {
			t.Fatal(err)
		}
		jobs[i] = j
	}
	f, err := OpenFollower(db, &FollowerOptions{CatchUpInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start, _ := w.LastSeq()
	for i := 0; ; i++ {
		if s, _ := w.LastSeq(); s >= start+1000 {
			break
		}
		j := jobs[i/2%len(jobs)]
		if i%2 == 0 {
			err = w.Allocate(j, 1)
		} else {
			err = w.Release(j, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.CatchUp(); err != nil {
		t.Fatal(err)
	}
	sameState(t, "caught up", f, w)
	lag, err := f.Lag()
	if err != nil {
		t.Fatal(err)
	}
	return lag.Reloads
}

// Options.CheckpointEventsPerJob reaches a new writer and a promoted one;
// more than a uint32 is refused.
func TestCheckpointEventsPerJob(t *testing.T) {
	for _, k := range []int64{0, -1} { // 0: the default, 4
		for _, promoted := range []bool{false, true} {
			db := t.TempDir() + "/db"
			opts := &Options{DBPath: db, CheckpointEvery: 100, CheckpointEventsPerJob: k}
			var w *Engine
			var err error
			if promoted {
				var old *Engine
				if old, err = Create("cpu=8", []QueueSpec{{Path: "root/a"}}, &Options{DBPath: db}); err != nil {
					t.Fatal(err)
				}
				if w, err = OpenFollower(db, &FollowerOptions{CatchUpInterval: -1}); err != nil {
					t.Fatal(err)
				}
				old.Close()
				err = w.Promote(10*time.Second, opts)
			} else {
				w, err = Create("cpu=8", []QueueSpec{{Path: "root/a"}}, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			reloads := reloadsAfterTheCadence(t, w, db)
			w.Close()
			if (k == 0) != (reloads == 0) {
				t.Errorf("CheckpointEventsPerJob %d (promoted %v): the follower reloaded %d times",
					k, promoted, reloads)
			}
		}
	}
	_, err := Create("cpu=8", nil, &Options{CheckpointEventsPerJob: 1 << 32})
	if !errors.Is(err, InvalidArgument) || !strings.Contains(err.Error(), "CheckpointEventsPerJob 4294967296") {
		t.Fatalf("CheckpointEventsPerJob 2^32: %v", err)
	}
	if _, err := Create("cpu=8", nil, &Options{CheckpointEventsPerJob: 1<<32 - 1}); err != nil {
		t.Fatal(err)
	}
}
