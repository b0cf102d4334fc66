package hdrf

import (
	"fmt"
	"testing"
	"time"
)

// A world like bench/engine_bench's: 1,000 leaves (depth 3, fanout 10),
// 10^5 jobs of 8 tasks, half of every job's tasks running, nothing
// saturates; events are random allocate/release that stay valid.
type world struct {
	e     *Engine
	jobs  []Job
	alloc []int8
	x     uint64
}

func newWorld(b *testing.B, njobs int) *world {
	var queues []QueueSpec
	var leaves []string
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			for k := 0; k < 10; k++ {
				p := fmt.Sprintf("root/a%d/b%d/c%d", i, j, k)
				queues = append(queues, QueueSpec{Path: p, Weight: float64(1 + (i+j+k)%4)})
				leaves = append(leaves, p)
			}
		}
	}
	e, err := Create("cpu=10000000,memory=100Pi,pods=10000000", queues, nil)
	if err != nil {
		b.Fatal(err)
	}
	w := &world{e: e, x: 88172645463325252}
	var ops []Op
	for i := 0; i < njobs; i++ {
		j, err := e.Submit(JobSpec{Name: fmt.Sprintf("job%d", i), Queue: leaves[int(w.next()%uint64(len(leaves)))],
			User: fmt.Sprintf("user%d", w.next()%50), Tasks: 8, Task: "cpu=500m,memory=1Gi,pods=1"})
		if err != nil {
			b.Fatal(err)
		}
		w.jobs = append(w.jobs, j)
		w.alloc = append(w.alloc, 4)
		ops = append(ops, Op{Job: j, N: 4, Type: OpAllocate})
	}
	if _, err := e.Apply(ops, nil); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *world) next() uint64 {
	w.x ^= w.x << 13
	w.x ^= w.x >> 7
	w.x ^= w.x << 17
	return w.x
}

func (w *world) event() Op {
	j := int(w.next() % uint64(len(w.jobs)))
	t := OpAllocate
	if w.alloc[j] == 8 || (w.alloc[j] > 0 && w.next()&1 == 0) {
		t = OpRelease
		w.alloc[j]--
	} else {
		w.alloc[j]++
	}
	return Op{Job: w.jobs[j], N: 1, Type: t}
}

var shared *world

func sharedWorld(b *testing.B) *world {
	if shared == nil {
		shared = newWorld(b, 100000)
	}
	return shared
}

func report(b *testing.B, events int, d time.Duration) {
	b.ReportMetric(float64(events)/d.Seconds(), "events/s")
}

// One event per cgo call (Engine.Allocate / Engine.Release on a Job).
func BenchmarkPerCall(b *testing.B) {
	w := sharedWorld(b)
	ops := make([]Op, b.N)
	for i := range ops {
		ops[i] = w.event()
	}
	b.ResetTimer()
	start := time.Now()
	for _, op := range ops {
		var err error
		if op.Type == OpAllocate {
			err = w.e.Allocate(op.Job, 1)
		} else {
			err = w.e.Release(op.Job, 1)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	report(b, b.N, time.Since(start))
}

// 1,000 events per cgo call (Engine.Apply).
func BenchmarkBatched(b *testing.B) {
	w := sharedWorld(b)
	const batch = 1000
	ops := make([]Op, b.N)
	for i := range ops {
		ops[i] = w.event()
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < len(ops); i += batch {
		end := i + batch
		if end > len(ops) {
			end = len(ops)
		}
		if _, err := w.e.Apply(ops[i:end], nil); err != nil {
			b.Fatal(err)
		}
	}
	report(b, b.N, time.Since(start))
}
