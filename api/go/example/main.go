// The Go example of docs/embedding.md (run by CI: tests/go, go_example).
package main

import (
	"errors"
	"fmt"
	"log"

	"hdrf"
)

func main() {
	// An engine over a cluster and a queue tree (memory only; set
	// Options.DBPath for a store).
	eng, err := hdrf.Create("cpu=64,memory=256Gi,nvidia.com/gpu=8", []hdrf.QueueSpec{
		{Path: "root/research", Weight: 2},
		{Path: "root/prod/web", Capability: "cpu=32"},
		{Path: "root/prod/batch"},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close() // explicit: there is no finalizer

	// Submit hands back a Job: keep it, events on it are the fast path.
	train, err := eng.Submit(hdrf.JobSpec{Name: "train", Queue: "root/research", User: "alice",
		Tasks: 8, Task: "cpu=4,memory=16Gi,nvidia.com/gpu=1"})
	if err != nil {
		log.Fatal(err)
	}
	web, _ := eng.Submit(hdrf.JobSpec{Name: "web", Queue: "root/prod/web", Tasks: 16, Task: "cpu=2,memory=4Gi"})

	// The host's own placements, one call each...
	if err := eng.Allocate(train, 2); err != nil {
		log.Fatal(err)
	}
	// ...or many in one call (one cgo crossing, one durability wait).
	applied, err := eng.Apply([]hdrf.Op{
		{Job: web, N: 4, Type: hdrf.OpAllocate},
		{Job: train, N: 1, Type: hdrf.OpRelease},
		{Job: web, N: 100, Type: hdrf.OpAllocate}, // refused: more than its tasks
	}, nil)
	fmt.Printf("apply: %d of 3 applied; first refusal: %v\n", applied, err)

	// hdrf's own choice: fill the cluster in fair order.
	steps, _ := eng.Fill()
	fmt.Printf("fill: %d steps\n", steps)
	for _, j := range []hdrf.Job{train, web} {
		info, _ := eng.Info(j)
		fmt.Printf("  job #%d: %d of %d tasks running, share %.3f\n", j.Seq(), info.Allocated, info.Tasks, info.Share)
	}

	// Errors carry the engine's code.
	if _, err := eng.Find("nope"); errors.Is(err, hdrf.NotFound) {
		fmt.Println("find nope:", err)
	}
	x, _ := eng.Explain("web")
	fmt.Printf("explain web: queue %s, blocked %v %v\n", x.Queue, x.Blocked, x.BlockedBy)

	// After a restart: tell the engine what the cluster holds now.
	r, err := eng.Reconcile([]hdrf.TruthJob{
		{Name: "train", Queue: "root/research", User: "alice", Task: "cpu=4,memory=16Gi,nvidia.com/gpu=1", Tasks: 8, Running: 8},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("reconcile: %d events, removed %v, adjusted %v\n", r.Events, r.JobsRemoved, r.JobsAdjusted)
	d, _ := eng.Digest()
	fmt.Println("digest", d)
}
