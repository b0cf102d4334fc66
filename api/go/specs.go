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

// QueueState of a queue (docs/spec.md §3).
type QueueState int

const (
	QueueOpen    QueueState = C.HDRF_QUEUE_OPEN
	QueueClosing QueueState = C.HDRF_QUEUE_CLOSING
	QueueClosed  QueueState = C.HDRF_QUEUE_CLOSED
)

// QueueSpec describes a queue. Zero fields take the engine's defaults
// (weight 1, unlimited capability, no guarantee, reclaimable, open).
type QueueSpec struct {
	Path                string  // "root/eng/dev"; required
	Weight              float64 // 0 = 1
	Capability          string  // resource list; "" = unlimited
	Guarantee           string  // resource list; "" = none
	NotReclaimable      bool
	State               QueueState
	MinUserLimitPercent int     // 0 = 100 (no limit)
	UserLimitFactor     float64 // 0 = unset
}

// queueSpecsToC converts specs; release frees their C strings.
func queueSpecsToC(qs []QueueSpec) ([]C.hdrf_queue_spec_t, func()) {
	out := make([]C.hdrf_queue_spec_t, len(qs))
	var strs cstrings
	keep := strs.add
	for i, q := range qs {
		c := &out[i]
		C.hdrf_queue_spec_init(c)
		c.path = cstr(q.Path)
		strs = append(strs, c.path)
		if q.Weight != 0 {
			c.weight = C.double(q.Weight)
		}
		c.capability = keep(q.Capability)
		c.guarantee = keep(q.Guarantee)
		if q.NotReclaimable {
			c.reclaimable = 0
		}
		c.state = C.int(q.State)
		if q.MinUserLimitPercent != 0 {
			c.min_user_limit_percent = C.int(q.MinUserLimitPercent)
		}
		c.user_limit_factor = C.double(q.UserLimitFactor)
	}
	return out, func() { strs.free() }
}

// JobSpec describes a job.
type JobSpec struct {
	Name         string  // unique; required
	Queue        string  // a leaf, a parent (admission) or "" = root
	User         string  // "" = "default"
	Tasks        int64   // 0 = 1
	Task         string  // one task's shape, a resource list: "cpu=1,memory=1Gi"
	Weight       float64 // 0 = 1
	MinAvailable int64   // the gang size m (docs/spec.md §14): starts with m tasks at once; 0 = 1
}

// Submit submits a job and returns its Job.
func (e *Engine) Submit(s JobSpec) (Job, error) {
	var c C.hdrf_job_spec_t
	C.hdrf_job_spec_init(&c)
	c.name = cstr(s.Name)
	defer free(c.name)
	c.queue = cstrOrNil(s.Queue)
	defer free(c.queue)
	c.user = cstrOrNil(s.User)
	defer free(c.user)
	c.task = cstrOrNil(s.Task)
	defer free(c.task)
	if s.Tasks != 0 {
		c.tasks = C.int64_t(s.Tasks)
	}
	if s.Weight != 0 {
		c.weight = C.double(s.Weight)
	}
	if s.MinAvailable != 0 {
		c.min_available = C.int64_t(s.MinAvailable)
	}
	var ref C.hdrf_job_ref_t
	var msg *C.char
	err := check(C.hdrf_job_submit_spec(e.h, &c, &ref, &msg), msg)
	return jobOf(ref), err
}

// Find returns the Job called name.
func (e *Engine) Find(name string) (Job, error) {
	cn := cstr(name)
	defer free(cn)
	var ref C.hdrf_job_ref_t
	var msg *C.char
	err := check(C.hdrf_job_find(e.h, cn, &ref, &msg), msg)
	return jobOf(ref), err
}

func (e *Engine) pathCall(path string, fn func(p *C.char, msg **C.char) C.hdrf_code) error {
	cp := cstr(path)
	defer free(cp)
	var msg *C.char
	return check(fn(cp, &msg), msg)
}

// CreateQueue adds a queue; UpdateQueue replaces a queue's settings.
func (e *Engine) CreateQueue(q QueueSpec) error { return e.queueCall(q, false) }

// UpdateQueue replaces the settings (all but the state) of q.Path.
func (e *Engine) UpdateQueue(q QueueSpec) error { return e.queueCall(q, true) }

func (e *Engine) queueCall(q QueueSpec, update bool) error {
	cq, release := queueSpecsToC([]QueueSpec{q})
	defer release()
	var msg *C.char
	if update {
		return check(C.hdrf_queue_update(e.h, &cq[0], &msg), msg)
	}
	return check(C.hdrf_queue_create(e.h, &cq[0], &msg), msg)
}

// SetQueueState opens, drains or closes a queue.
func (e *Engine) SetQueueState(path string, s QueueState) error {
	return e.pathCall(path, func(p *C.char, msg **C.char) C.hdrf_code {
		return C.hdrf_queue_set_state(e.h, p, C.int(s), msg)
	})
}

// DeleteQueue deletes a closed, empty queue and its subtree.
func (e *Engine) DeleteQueue(path string) error {
	return e.pathCall(path, func(p *C.char, msg **C.char) C.hdrf_code { return C.hdrf_queue_delete(e.h, p, msg) })
}

// SetCapacity sets the cluster capacity (every resource of the cluster).
func (e *Engine) SetCapacity(cluster string) error {
	return e.pathCall(cluster, func(p *C.char, msg **C.char) C.hdrf_code { return C.hdrf_set_capacity(e.h, p, msg) })
}

// Step allocates one task to the job hdrf picks (MinAvailable tasks, in
// one step, for a gang that holds no task yet: docs/spec.md §14); ok is false when
// no job can run.
func (e *Engine) Step() (job Job, ok bool, err error) {
	var stepped C.int
	var ref C.hdrf_job_ref_t
	var msg *C.char
	err = check(C.hdrf_step_ref(e.h, &stepped, &ref, &msg), msg)
	return jobOf(ref), stepped != 0, err
}

// Fill steps until no job can run and returns the number of steps (not
// of tasks: a gang's first step starts MinAvailable tasks).
func (e *Engine) Fill() (int64, error) {
	var n C.int64_t
	var msg *C.char
	err := check(C.hdrf_fill(e.h, &n, &msg), msg)
	return int64(n), err
}

// JobInfo is a view of one job.
type JobInfo struct {
	Tasks, Allocated int64
	State            int // HDRF_JOB_*: 0 Pending, 1 Inqueue, 2 Running
	Blocked          bool
	Key, Share       float64
	Weight           float64
	MinAvailable     int64
	Seq              uint64
}

// Info returns a view of j.
func (e *Engine) Info(j Job) (JobInfo, error) {
	var c C.hdrf_job_info_t
	C.hdrf_job_info_init(&c)
	var msg *C.char
	if err := check(C.hdrf_job_get_ref(e.h, j.c(), &c, &msg), msg); err != nil {
		return JobInfo{}, err
	}
	return JobInfo{Tasks: int64(c.tasks), Allocated: int64(c.allocated), State: int(c.state),
		Blocked: c.blocked != 0, Key: float64(c.key), Share: float64(c.share), Weight: float64(c.weight),
		MinAvailable: int64(c.min_available), Seq: uint64(c.seq)}, nil
}

// QueueInfo is a view of one queue.
type QueueInfo struct {
	Path        string
	Weight      float64
	Share       float64 // dominant share s(U)
	Key         float64 // s(U)/weight
	Blocked     bool
	State       QueueState
	IsLeaf      bool
	Reclaimable bool
	Depth       int
	Jobs        [4]int64         // jobs in the subtree by state (Pending, Inqueue, Running, Unknown)
	Allocated   map[string]int64 // resource -> amount held under the queue, canonical units
}

// Queues returns every queue in path order.
func (e *Engine) Queues() ([]QueueInfo, error) {
	var list **C.char
	var n C.size_t
	var msg *C.char
	if err := check(C.hdrf_queue_paths(e.h, &list, &n, &msg), msg); err != nil {
		return nil, err
	}
	paths := goStrings(list, n)
	if err := check(C.hdrf_resource_names(e.h, &list, &n, &msg), msg); err != nil {
		return nil, err
	}
	resources := goStrings(list, n)
	out := make([]QueueInfo, 0, len(paths))
	for _, p := range paths {
		q, err := e.queue(p, resources)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func (e *Engine) queue(path string, resources []string) (QueueInfo, error) {
	cp := cstr(path)
	defer free(cp)
	var c C.hdrf_queue_info_t
	C.hdrf_queue_info_init(&c)
	var msg *C.char
	if err := check(C.hdrf_queue_get(e.h, cp, &c, &msg), msg); err != nil {
		return QueueInfo{}, err
	}
	q := QueueInfo{Path: path, Weight: float64(c.weight), Share: float64(c.share), Key: float64(c.key),
		Blocked: c.blocked != 0, State: QueueState(c.state), IsLeaf: c.is_leaf != 0,
		Reclaimable: c.reclaimable != 0, Depth: int(c.depth), Allocated: map[string]int64{}}
	for i := range q.Jobs {
		q.Jobs[i] = int64(c.jobs[i])
	}
	for _, r := range resources {
		cr := cstr(r)
		var v C.int64_t
		err := check(C.hdrf_queue_allocated(e.h, cp, cr, &v, &msg), msg)
		free(cr)
		if err != nil {
			return QueueInfo{}, err
		}
		q.Allocated[r] = int64(v)
	}
	return q, nil
}

// Explanation says why a job is or is not next (the form of
// `hdrf explain --json`).
type Explanation struct {
	Job          string   `json:"job"`
	Queue        string   `json:"queue"`
	Key          float64  `json:"key"`
	Blocked      bool     `json:"blocked"`
	Schedulable  bool     `json:"schedulable"`
	Next         bool     `json:"next"`
	BlockedBy    []string `json:"blocked_by"`
	UnfitBecause []string `json:"unfit_because"`
	Plan         []string `json:"plan"` // a waiting job's reclaim plan, or why there is none
	Levels       []struct {
		Parent   string `json:"parent"`
		Siblings []struct {
			Name    string  `json:"name"`
			Key     float64 `json:"key"`
			Blocked bool    `json:"blocked"`
			OnPath  bool    `json:"on_path"`
		} `json:"siblings"`
	} `json:"levels"`
}

// Explain tells why the job called name is or is not next.
func (e *Engine) Explain(name string) (Explanation, error) {
	var out Explanation
	var text *C.char
	err := e.pathCall(name, func(p *C.char, msg **C.char) C.hdrf_code { return C.hdrf_explain(e.h, p, &text, msg) })
	if err != nil {
		return out, err
	}
	defer C.hdrf_free(unsafe.Pointer(text))
	if jerr := json.Unmarshal([]byte(C.GoString(text)), &out); jerr != nil {
		return out, &Error{Code: Internal, Message: "explain: " + jerr.Error()}
	}
	return out, nil
}

// Metrics returns the engine's metrics in Prometheus text format.
func (e *Engine) Metrics() (string, error) {
	var text *C.char
	var n C.size_t
	var msg *C.char
	if err := check(C.hdrf_metrics(e.h, &text, &n, &msg), msg); err != nil {
		return "", err
	}
	defer C.hdrf_free(unsafe.Pointer(text))
	return C.GoStringN(text, C.int(n)), nil
}

// Digest returns the state digest (docs/spec.md §9), 16 hex digits.
func (e *Engine) Digest() (string, error) {
	var buf [C.HDRF_DIGEST_SIZE]C.char
	var msg *C.char
	if err := check(C.hdrf_digest(e.h, &buf[0], C.size_t(len(buf)), &msg), msg); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// LastSeq is the sequence number of the last applied event.
func (e *Engine) LastSeq() (uint64, error) {
	var v C.uint64_t
	var msg *C.char
	err := check(C.hdrf_last_seq(e.h, &v, &msg), msg)
	return uint64(v), err
}

// JobCount is the number of jobs.
func (e *Engine) JobCount() (uint64, error) {
	var v C.uint64_t
	var msg *C.char
	err := check(C.hdrf_job_count(e.h, &v, &msg), msg)
	return uint64(v), err
}

// Flush makes every applied event durable (a no-op without a store).
func (e *Engine) Flush() error {
	var msg *C.char
	return check(C.hdrf_flush(e.h, &msg), msg)
}

// Checkpoint writes a checkpoint now (a no-op without a store).
func (e *Engine) Checkpoint() error {
	var msg *C.char
	return check(C.hdrf_checkpoint(e.h, &msg), msg)
}
