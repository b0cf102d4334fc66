package hdrf

/*
#include <stdlib.h>
#include <hdrf/c.h>
*/
import "C"

import (
	"encoding/json"
	"unsafe"
)

// TruthJob is one job as the platform sees it after a restart.
type TruthJob struct {
	Name         string
	Queue        string // its leaf queue
	User         string // "" = "default"
	Task         string // one task's shape, a resource list
	Tasks        int64  // tasks not finished; 0 = 1
	Running      int64  // running tasks, 0..Tasks
	Weight       float64
	MinAvailable int64
}

// ReconcileResult names what Reconcile changed.
type ReconcileResult struct {
	Events          uint64   `json:"events"`
	QueuesCreated   []string `json:"queues_created"`
	QueuesUpdated   []string `json:"queues_updated"`
	QueuesDeleted   []string `json:"queues_deleted"`
	JobsRemoved     []string `json:"jobs_removed"`
	JobsSubmitted   []string `json:"jobs_submitted"`
	JobsResubmitted []string `json:"jobs_resubmitted"`
	JobsAdjusted    []string `json:"jobs_adjusted"`
}

// Reconcile makes the engine hold exactly `jobs` (and, when queues is not
// nil, exactly those queues) with the fewest ordinary events, each logged
// like any event: call it after Open, before other events, with the
// platform's view of the cluster. A refused truth changes nothing (the
// events are tried on a copy of the state first).
func (e *Engine) Reconcile(jobs []TruthJob, queues []QueueSpec) (ReconcileResult, error) {
	var out ReconcileResult
	cj := make([]C.hdrf_truth_job_t, len(jobs))
	var strs cstrings
	keep := strs.add
	defer func() { strs.free() }()
	for i, j := range jobs {
		c := &cj[i]
		C.hdrf_truth_job_init(c)
		c.name, c.queue, c.user, c.task = keep(j.Name), keep(j.Queue), keep(j.User), keep(j.Task)
		if j.Tasks != 0 {
			c.tasks = C.int64_t(j.Tasks)
		}
		c.running = C.int64_t(j.Running)
		if j.Weight != 0 {
			c.weight = C.double(j.Weight)
		}
		if j.MinAvailable != 0 {
			c.min_available = C.int64_t(j.MinAvailable)
		}
	}
	cq, release := queueSpecsToC(queues)
	defer release()
	var pj *C.hdrf_truth_job_t
	if len(cj) > 0 {
		pj = &cj[0]
	}
	var pq *C.hdrf_queue_spec_t
	if len(cq) > 0 {
		pq = &cq[0]
	}
	match := C.int(0)
	if queues != nil {
		match = 1
	}
	var text, msg *C.char
	if err := check(C.hdrf_reconcile(e.h, pj, C.size_t(len(cj)), pq, C.size_t(len(cq)), match, nil, &text, &msg), msg); err != nil {
		return out, err
	}
	defer C.hdrf_free(unsafe.Pointer(text))
	if err := json.Unmarshal([]byte(C.GoString(text)), &out); err != nil {
		return out, &Error{Code: Internal, Message: "reconcile: " + err.Error()}
	}
	return out, nil
}
