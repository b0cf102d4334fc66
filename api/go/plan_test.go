package hdrf

import (
	"errors"
	"runtime"
	"testing"
)

// cpu=4 over root/a and root/b; "hog" in root/a runs 4 tasks of 1 cpu and
// "want" (one task of 1 cpu) waits in root/b.
func reclaimExample(t *testing.T) (e *Engine, hog, want Job) {
	t.Helper()
	e, err := Create("cpu=4,memory=16Gi", []QueueSpec{{Path: "root/a"}, {Path: "root/b"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hog, err = e.Submit(JobSpec{Name: "hog", Queue: "root/a", Tasks: 4, Task: "cpu=1"}); err != nil {
		t.Fatal(err)
	}
	if err = e.Allocate(hog, 4); err != nil {
		t.Fatal(err)
	}
	if want, err = e.Submit(JobSpec{Name: "want", Queue: "root/b", Task: "cpu=1"}); err != nil {
		t.Fatal(err)
	}
	return e, hog, want
}

func allocated(t *testing.T, e *Engine, j Job) int64 {
	t.Helper()
	info, err := e.Info(j)
	if err != nil {
		t.Fatal(err)
	}
	return info.Allocated
}

func TestPlanApplyStale(t *testing.T) {
	e, hog, want := reclaimExample(t)
	defer e.Close()
	before, _ := e.Digest()
	p, err := e.Plan(want, Reclaim, NoLimit)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := e.Digest(); d != before {
		t.Error("making a plan changed the engine")
	}
	if !p.Fits || p.Tasks != 1 || p.Name != "want" || p.Job != want || p.Mode != Reclaim ||
		len(p.Victims) != 1 || len(p.Short) != 0 {
		t.Fatalf("plan %+v", p)
	}
	if v := p.Victims[0]; v.Job != hog || v.Name != "hog" || v.Tasks != 1 {
		t.Errorf("victim %+v", v)
	}
	if err := e.ApplyPlan(p); err != nil {
		t.Fatal(err)
	}
	if allocated(t, e, hog) != 3 || allocated(t, e, want) != 1 {
		t.Errorf("after apply: hog %d, want %d", allocated(t, e, hog), allocated(t, e, want))
	}
	// Applied twice: stale, nothing changes.
	after, _ := e.Digest()
	err = e.ApplyPlan(p)
	if !errors.Is(err, Aborted) || CodeOf(err).String() != "Aborted" {
		t.Fatalf("second apply: %v", err)
	}
	if d, _ := e.Digest(); d != after {
		t.Error("a stale plan changed the engine")
	}
}

func TestPlanRefusals(t *testing.T) {
	e, hog, want := reclaimExample(t)
	defer e.Close()
	other, _, _ := reclaimExample(t)
	defer other.Close()
	gone, err := e.Submit(JobSpec{Name: "gone", Queue: "root/b", Task: "cpu=1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Remove(gone); err != nil {
		t.Fatal(err)
	}
	before, _ := e.Digest()
	if _, err := e.Plan(gone, Reclaim, NoLimit); !errors.Is(err, NotFound) {
		t.Errorf("removed job: %v", err)
	}
	if _, err := e.Plan(Job{}, Reclaim, NoLimit); !errors.Is(err, InvalidArgument) {
		t.Errorf("zero job: %v", err)
	}
	if _, err := e.Plan(want, PlanMode(9), NoLimit); !errors.Is(err, InvalidArgument) {
		t.Errorf("bad mode: %v", err)
	}
	if _, err := e.Plan(want, Reclaim, -2); !errors.Is(err, InvalidArgument) {
		t.Errorf("maxVictims -2: %v", err)
	}
	if _, err := e.Plan(hog, Reclaim, NoLimit); !errors.Is(err, FailedPrecondition) {
		t.Errorf("no unallocated task: %v", err)
	}
	if err := e.ApplyPlan(&Plan{Fits: true}); !errors.Is(err, InvalidArgument) {
		t.Errorf("a Plan not made by Plan: %v", err)
	}
	p, err := e.Plan(want, Both, NoLimit)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.ApplyPlan(p); !errors.Is(err, InvalidArgument) {
		t.Errorf("another engine's plan: %v", err)
	}
	// A failed plan: no victims allowed.
	p, err = e.Plan(want, Reclaim, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Fits || len(p.Victims) != 0 || p.Short["cpu"] != 1000 {
		t.Errorf("failed plan %+v", p)
	}
	if err := e.ApplyPlan(p); !errors.Is(err, FailedPrecondition) {
		t.Errorf("applying a failed plan: %v", err)
	}
	if d, _ := e.Digest(); d != before {
		t.Error("a refused call changed the engine")
	}
}

// A gang of MinAvailable 2 demands 2 tasks: the plan takes 2 of hog's.
func TestPlanForAGang(t *testing.T) {
	e, hog, _ := reclaimExample(t)
	defer e.Close()
	gang, err := e.Submit(JobSpec{Name: "gang", Queue: "root/b", Tasks: 2, Task: "cpu=1", MinAvailable: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan(gang, Reclaim, NoLimit)
	if err != nil || !p.Fits || p.Tasks != 2 {
		t.Fatalf("plan %+v, %v", p, err)
	}
	var taken int64
	for _, v := range p.Victims {
		taken += v.Tasks
	}
	if taken != 2 {
		t.Errorf("victims %+v", p.Victims)
	}
	// Plans dropped are freed by the collector; a copy keeps its C plan.
	for i := 0; i < 100; i++ {
		if _, err := e.Plan(gang, Both, NoLimit); err != nil {
			t.Fatal(err)
		}
	}
	kept := *p
	p = nil
	runtime.GC()
	runtime.GC()
	if err := e.ApplyPlan(&kept); err != nil {
		t.Fatal(err)
	}
	if allocated(t, e, gang) != 2 || allocated(t, e, hog) != 2 {
		t.Errorf("after apply: gang %d, hog %d", allocated(t, e, gang), allocated(t, e, hog))
	}
}
