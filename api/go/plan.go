package hdrf

// #include <hdrf/c.h>
import "C"

import "runtime"

// PlanMode says which running tasks a plan may take (docs/spec.md §15).
type PlanMode int32

const (
	Reclaim PlanMode = C.HDRF_PLAN_RECLAIM // units in other leaf queues (across queues)
	Preempt PlanMode = C.HDRF_PLAN_PREEMPT // units in the waiting job's own leaf
	Both    PlanMode = C.HDRF_PLAN_BOTH    // either
)

// NoLimit as Plan's maxVictims: a plan may hold any number of victims.
const NoLimit = -1

// Victim is one entry of a plan: Tasks running tasks of one job to stop
// (one task, or all of a gang that holds no more than its MinAvailable).
type Victim struct {
	Job   Job
	Name  string
	Tasks int64
}

// Plan answers "job Job waits: which running tasks should stop so that it
// can start?" (docs/spec.md §15). It is a Go value: copy it freely. ApplyPlan
// applies the plan as Engine.Plan made it (changing the fields does not
// change what is applied); the C plan it carries is freed by the garbage
// collector once no copy of the Plan is left.
type Plan struct {
	Job  Job    // the waiting job
	Name string // its name
	Mode PlanMode
	// Fits is true when the demand fits once the victims stop (no victims:
	// it fits now).
	Fits bool
	// Tasks is the demand: the job's MinAvailable when it holds no task,
	// else 1.
	Tasks   int64
	Victims []Victim // in plan order; empty when it does not fit
	// Short maps each resource still missing on failure to the amount, in
	// canonical units (cpu in millicores, memory in bytes, others in
	// milli-units); empty when it fits.
	Short map[string]int64
	c     *cPlan
}

// cPlan owns one hdrf_plan_t; copies of a Plan share it.
type cPlan struct{ p *C.hdrf_plan_t }

func freeCPlan(c *cPlan) { C.hdrf_plan_free(c.p) }

// Plan computes the plan for job j in mode (maxVictims: the most entries,
// NoLimit for none). It changes nothing. A plan that cannot be found is
// not an error: Fits is false and Short says what is missing. Errors:
// NotFound for a removed job, FailedPrecondition when j is Pending or has
// no unallocated task, InvalidArgument for a bad mode or maxVictims < -1.
func (e *Engine) Plan(j Job, mode PlanMode, maxVictims int64) (*Plan, error) {
	var p *C.hdrf_plan_t
	var msg *C.char
	if err := check(C.hdrf_plan(e.h, j.c(), C.int(mode), C.int64_t(maxVictims), &p, &msg), msg); err != nil {
		return nil, err
	}
	c := &cPlan{p: p}
	runtime.SetFinalizer(c, freeCPlan)
	out := &Plan{Job: j, Mode: PlanMode(C.hdrf_plan_mode(p)), Fits: C.hdrf_plan_fits(p) != 0,
		Tasks: int64(C.hdrf_plan_tasks(p)), Short: map[string]int64{}, c: c}
	var name *C.char
	if err := check(C.hdrf_plan_job(p, nil, &name, &msg), msg); err != nil {
		return nil, err
	}
	out.Name = C.GoString(name)
	for i := C.size_t(0); i < C.hdrf_plan_victim_count(p); i++ {
		var ref C.hdrf_job_ref_t
		var tasks C.int64_t
		if err := check(C.hdrf_plan_victim(p, i, &ref, &name, &tasks, &msg), msg); err != nil {
			return nil, err
		}
		out.Victims = append(out.Victims, Victim{Job: jobOf(ref), Name: C.GoString(name), Tasks: int64(tasks)})
	}
	for i := C.size_t(0); i < C.hdrf_plan_short_count(p); i++ {
		var amount C.int64_t
		if err := check(C.hdrf_plan_short(p, i, &name, &amount, &msg), msg); err != nil {
			return nil, err
		}
		out.Short[C.GoString(name)] = int64(amount)
	}
	runtime.KeepAlive(c)
	return out, nil
}

// ApplyPlan applies a plan made by Plan on this engine, as one event: the
// victims' tasks stop and the demand is allocated. It is checked again on
// the current state: when it no longer holds, the error is Aborted (a
// stale plan; errors.Is(err, hdrf.Aborted)) and nothing changes: plan
// again. A plan that does not fit gives FailedPrecondition; one whose job
// is gone NotFound; one of another engine, or a Plan not made by Plan,
// InvalidArgument.
func (e *Engine) ApplyPlan(p *Plan) error {
	if p == nil || p.c == nil {
		return &Error{Code: InvalidArgument, Message: "plan was not made by Engine.Plan"}
	}
	var msg *C.char
	err := check(C.hdrf_apply_plan(e.h, p.c.p, &msg), msg)
	runtime.KeepAlive(p.c)
	return err
}
