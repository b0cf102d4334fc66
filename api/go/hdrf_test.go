package hdrf

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// The scenario of the same example (tests/data).
const workedYAMLPath = "../../tests/data/scenarios/worked_example_1.yaml"

// Worked example 1 of docs/spec.md §4.
func workedExample(t testing.TB) (*Engine, map[string]Job) {
	t.Helper()
	queues := []QueueSpec{{Path: "root/sci", Weight: 50}, {Path: "root/eng", Weight: 50},
		{Path: "root/eng/dev", Weight: 50}, {Path: "root/eng/prod", Weight: 50}}
	e, err := Create("cpu=10,nvidia.com/gpu=10", queues, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]Job{}
	for _, s := range []JobSpec{
		{Name: "sci", Queue: "root/sci", Tasks: 10, Task: "cpu=1,nvidia.com/gpu=1"},
		{Name: "dev", Queue: "root/eng/dev", Tasks: 10, Task: "cpu=1"},
		{Name: "prod", Queue: "root/eng/prod", Tasks: 10, Task: "nvidia.com/gpu=1"},
	} {
		j, err := e.Submit(s)
		if err != nil {
			t.Fatal(err)
		}
		jobs[s.Name] = j
	}
	return e, jobs
}

func TestWorkedExample(t *testing.T) {
	e, jobs := workedExample(t)
	defer e.Close()
	steps, err := e.Fill()
	if err != nil || steps != 15 {
		t.Fatalf("fill: %d steps, %v", steps, err)
	}
	for name, j := range jobs {
		info, err := e.Info(j)
		if err != nil || info.Allocated != 5 || info.Share != 0.5 {
			t.Errorf("%s: %+v %v", name, info, err)
		}
	}
	// The same through the scenario runner: the same state.
	yaml, err := os.ReadFile(workedYAMLPath)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := CreateFromScenario(string(yaml), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, err := sc.Fill(); err != nil {
		t.Fatal(err)
	}
	d, err := e.Digest()
	want, _ := sc.Digest()
	if err != nil || d != want {
		t.Errorf("digest %s, scenario %s, %v", d, want, err)
	}
	if Version() == "" {
		t.Error("no version")
	}
}

func TestErrorsCarryTheCode(t *testing.T) {
	e, jobs := workedExample(t)
	_, err := e.Find("no-such-job")
	if !errors.Is(err, NotFound) || errors.Is(err, InvalidArgument) {
		t.Fatalf("find: %v", err)
	}
	var he *Error
	if !errors.As(err, &he) || he.Message != "job no-such-job: unknown job" || CodeOf(err) != NotFound {
		t.Fatalf("find: %#v", err)
	}
	_, err = e.Submit(JobSpec{Name: "bad", Queue: "root/sci", Task: "cpu=1x"})
	if !errors.Is(err, InvalidArgument) || !strings.Contains(err.Error(), "unknown suffix 'x'") {
		t.Fatalf("submit: %v", err)
	}
	if err := e.Release(jobs["sci"], 1); !errors.Is(err, OutOfRange) {
		t.Fatalf("release: %v", err)
	}
	if err := e.Allocate(Job{}, 1); !errors.Is(err, InvalidArgument) {
		t.Fatalf("zero job: %v", err)
	}
	// Another engine's job, and a removed one.
	other, ojobs := workedExample(t)
	if err := e.Allocate(ojobs["sci"], 1); !errors.Is(err, InvalidArgument) {
		t.Fatalf("foreign job: %v", err)
	}
	other.Close()
	if err := e.Remove(jobs["dev"]); err != nil {
		t.Fatal(err)
	}
	if err := e.Allocate(jobs["dev"], 1); !errors.Is(err, NotFound) {
		t.Fatalf("removed job: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Fill(); !errors.Is(err, InvalidArgument) || !strings.Contains(err.Error(), "destroyed") {
		t.Fatalf("after close: %v", err)
	}
	if err := e.Close(); !errors.Is(err, InvalidArgument) {
		t.Fatalf("second close: %v", err)
	}
}

func TestApplyResultsMatchOneCallPerOp(t *testing.T) {
	a, ja := workedExample(t)
	defer a.Close()
	b, jb := workedExample(t)
	defer b.Close()
	names := []string{"sci", "dev", "prod"}
	var ops []Op
	for i := 0; i < 60; i++ {
		ops = append(ops, Op{Job: ja[names[i%3]], N: int64(1 + i%4), Type: []OpType{OpAllocate, OpAllocate, OpRelease, OpFinish}[i%4]})
	}
	results := make([]Code, len(ops))
	applied, err := a.Apply(ops, results)
	n := 0
	for i, op := range ops {
		var one error
		j := jb[names[i%3]]
		switch op.Type {
		case OpAllocate:
			one = b.Allocate(j, op.N)
		case OpRelease:
			one = b.Release(j, op.N)
		default:
			one = b.Finish(j, op.N)
		}
		if CodeOf(one) != results[i] {
			t.Fatalf("op %d: batch %v, alone %v", i, results[i], one)
		}
		if one == nil {
			n++
		}
	}
	if applied != n || (n < len(ops)) != (err != nil) {
		t.Fatalf("applied %d of %d, %v", applied, n, err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("digests %s %s", da, db)
	}
}

// runOps drives the jobs of one goroutine with a fixed pseudo-random
// sequence (one call per event, or batches).
func runOps(e *Engine, mine []Job, seed uint32, batched bool) error {
	x := seed*2654435761 + 1
	next := func() uint32 { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x }
	var ops []Op
	for i := 0; i < 4000; i++ {
		r := next() % 10
		t := OpAllocate
		if r >= 6 {
			t = OpRelease
		}
		if r == 9 {
			t = OpFinish
		}
		ops = append(ops, Op{Job: mine[next()%uint32(len(mine))], N: int64(1 + next()%3), Type: t})
	}
	if batched {
		for i := 0; i < len(ops); i += 500 {
			if _, err := e.Apply(ops[i:i+500], nil); err != nil && !errors.Is(err, OutOfRange) {
				return err
			}
		}
		return nil
	}
	for _, op := range ops {
		var err error
		switch op.Type {
		case OpAllocate:
			err = e.Allocate(op.Job, op.N)
		case OpRelease:
			err = e.Release(op.Job, op.N)
		default:
			err = e.Finish(op.Job, op.N)
		}
		if err != nil && !errors.Is(err, OutOfRange) {
			return err
		}
	}
	return nil
}

// Goroutines in parallel end in the state of the same per-goroutine
// sequences run one after another (the cluster never refuses for
// capacity, so each refusal depends on the job's own history).
func parallelRun(t *testing.T, parallel bool) string {
	const workers = 8
	var queues []QueueSpec
	for w := 0; w < workers; w++ {
		queues = append(queues, QueueSpec{Path: fmt.Sprintf("root/t%d/leaf", w)})
	}
	e, err := Create("cpu=100000,memory=100Ti", queues, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	jobs := make([][]Job, workers)
	for w := range jobs {
		for i := 0; i < 5; i++ {
			j, err := e.Submit(JobSpec{Name: fmt.Sprintf("j%d-%d", w, i), Queue: queues[w].Path, Tasks: 50, Task: "cpu=1"})
			if err != nil {
				t.Fatal(err)
			}
			jobs[w] = append(jobs[w], j)
		}
	}
	errs := make([]error, workers)
	if parallel {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				errs[w] = runOps(e, jobs[w], uint32(w+1), w%2 == 1)
			}(w)
		}
		wg.Wait()
	} else {
		for w := 0; w < workers; w++ {
			errs[w] = runOps(e, jobs[w], uint32(w+1), w%2 == 1)
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := e.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParallelGoroutinesMatchOneThread(t *testing.T) {
	if p, s := parallelRun(t, true), parallelRun(t, false); p != s {
		t.Fatalf("parallel digest %s, one thread %s", p, s)
	}
}

// Calls racing a Close: each either runs or fails with an *Error; none
// panics or crashes.
func TestCallsRacingClose(t *testing.T) {
	for round := 0; round < 5; round++ {
		e, jobs := workedExample(t)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				<-start
				for i := 0; ; i++ {
					var err error
					switch g {
					case 0:
						err = e.Allocate(jobs["sci"], 1)
						if errors.Is(err, OutOfRange) {
							err = e.Release(jobs["sci"], 5)
						}
					case 1:
						_, err = e.Apply([]Op{{Job: jobs["dev"], N: 1, Type: OpAllocate}, {Job: jobs["dev"], N: 1, Type: OpRelease}}, nil)
					case 2:
						_, err = e.Queues()
					default:
						_, err = e.Metrics()
					}
					if errors.Is(err, InvalidArgument) {
						return // closed
					}
					var he *Error
					if err != nil && !errors.As(err, &he) {
						t.Errorf("not an *Error: %v", err)
						return
					}
				}
			}(g)
		}
		close(start)
		if err := e.Close(); err != nil {
			t.Error(err)
		}
		wg.Wait()
	}
}

func TestQueuesExplainMetrics(t *testing.T) {
	e, _ := workedExample(t)
	defer e.Close()
	if _, err := e.Fill(); err != nil {
		t.Fatal(err)
	}
	qs, err := e.Queues()
	if err != nil || len(qs) != 5 || qs[0].Path != "root" {
		t.Fatalf("queues %+v %v", qs, err)
	}
	for _, q := range qs {
		if q.Path == "root/eng/dev" && (q.Allocated["cpu"] != 5000 || !q.IsLeaf || q.Jobs[2] != 1) {
			t.Errorf("dev: %+v", q)
		}
	}
	x, err := e.Explain("dev")
	if err != nil || x.Job != "dev" || x.Queue != "root/eng/dev" || len(x.Levels) == 0 {
		t.Fatalf("explain %+v %v", x, err)
	}
	if _, err := e.Explain("nope"); !errors.Is(err, NotFound) {
		t.Fatal(err)
	}
	m, err := e.Metrics()
	if err != nil || !strings.Contains(m, "hdrf_jobs 3\n") {
		t.Fatalf("metrics %v", err)
	}
}

func TestOpLayoutMatchesC(t *testing.T) {
	if !opLayoutOK() {
		t.Fatal("Op does not match hdrf_op_t")
	}
}

// A store that missed the last events, reopened and reconciled with the
// truth, holds the truth's state (the digest of the engine that saw all).
func TestReconcileAfterRestart(t *testing.T) {
	dir := t.TempDir()
	queues := []QueueSpec{{Path: "root/a"}, {Path: "root/b"}}
	store, err := Create("cpu=100", queues, &Options{DBPath: dir + "/db"})
	if err != nil {
		t.Fatal(err)
	}
	truth, _ := Create("cpu=100", queues, nil)
	defer truth.Close()
	for _, e := range []*Engine{store, truth} {
		for i, q := range []string{"root/a", "root/b", "root/a"} {
			j, err := e.Submit(JobSpec{Name: fmt.Sprintf("j%d", i), Queue: q, Tasks: 10, Task: "cpu=1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Allocate(j, 4); err != nil {
				t.Fatal(err)
			}
		}
	}
	store.Close()
	// What the store missed: j0 finished 3 tasks, j1 left, j3 arrived.
	j0, _ := truth.Find("j0")
	j1, _ := truth.Find("j1")
	if truth.Finish(j0, 3) != nil || truth.Remove(j1) != nil {
		t.Fatal("truth events")
	}
	j3, _ := truth.Submit(JobSpec{Name: "j3", Queue: "root/b", Tasks: 2, Task: "cpu=1"})
	truth.Allocate(j3, 2)
	view := []TruthJob{
		{Name: "j0", Queue: "root/a", Task: "cpu=1", Tasks: 7, Running: 1},
		{Name: "j2", Queue: "root/a", Task: "cpu=1", Tasks: 10, Running: 4},
		{Name: "j3", Queue: "root/b", Task: "cpu=1", Tasks: 2, Running: 2},
	}
	reopened, err := Open(dir+"/db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	r, err := reopened.Reconcile(view, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.JobsRemoved, r.JobsSubmitted, r.JobsAdjusted) != "[j1] [j3] [j0]" || r.Events != 4 {
		t.Fatalf("reconcile: %+v", r)
	}
	got, _ := reopened.Digest()
	want, _ := truth.Digest()
	if got != want {
		t.Fatalf("digest %s, truth %s", got, want)
	}
	if r, err := reopened.Reconcile(view, nil); err != nil || r.Events != 0 {
		t.Fatalf("second reconcile: %+v %v", r, err)
	}
}
