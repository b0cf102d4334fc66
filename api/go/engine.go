package hdrf

/*
#include <stdlib.h>
#include <hdrf/c.h>

// The hot calls return their message slot by value, so that no Go pointer
// crosses (and nothing escapes to the Go heap) on the fast path.
typedef struct { hdrf_code code; char* msg; } go_result;

static go_result go_op(hdrf_engine_t* e, int type, hdrf_job_ref_t j, int64_t n) {
  go_result r = {HDRF_OK, NULL};
  r.code = hdrf_apply_op(e, type, j, n, &r.msg);
  return r;
}

static go_result go_apply(hdrf_engine_t* e, const void* ops, size_t n, size_t size,
                          hdrf_code* results, size_t* applied) {
  go_result r = {HDRF_OK, NULL};
  r.code = hdrf_apply(e, (const hdrf_op_t*)ops, n, size, results, applied, &r.msg);
  return r;
}

static size_t go_op_offset(int field) {
  switch (field) {
    case 0: return offsetof(hdrf_op_t, job);
    case 1: return offsetof(hdrf_op_t, n);
    default: return offsetof(hdrf_op_t, type);
  }
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
)

// Durability of events with a store (docs/spec.md §9).
type Durability int

const (
	Sync  Durability = C.HDRF_DURABILITY_SYNC  // on disk before the call returns
	Async Durability = C.HDRF_DURABILITY_ASYNC // written by a background thread
	None  Durability = C.HDRF_DURABILITY_NONE  // memory only, even with a store
)

// Options of a new or reopened engine. The zero value is the engine's
// defaults: memory only, gate off, sync durability, a checkpoint every
// 1,000,000 events (or CheckpointEventsPerJob, 4, per live job when that is
// more: docs/storage.md "Checkpoints"), one event call in 16 timed.
type Options struct {
	OvercommitFactor float64    // docs/spec.md §12 enqueue gate; 0 = off
	DBPath           string     // store directory; "" = memory only (Open takes its own)
	Durability       Durability // with a store
	CheckpointEvery  int64      // 0 = default; < 0 = only on Checkpoint and Close
	// CheckpointEventsPerJob: k, a background checkpoint waits for at least
	// k logged events per live job when that is more than CheckpointEvery
	// (docs/storage.md "Checkpoints"); 0 = default (4); < 0 = CheckpointEvery
	// alone; at most 4294967295.
	CheckpointEventsPerJob int64
	// LatencySampleEvery: the event latency histogram times one in this
	// many calls (a power of two); 0 = default (16); < 0 = none.
	LatencySampleEvery int
}

func (o *Options) toC() (*C.hdrf_options_t, error) {
	if o == nil {
		return nil, nil
	}
	if o.CheckpointEventsPerJob > math.MaxUint32 {
		return nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf(
			"CheckpointEventsPerJob %d is more than %d (< 0: CheckpointEvery alone)",
			o.CheckpointEventsPerJob, uint32(math.MaxUint32))}
	}
	co := C.hdrf_options_create()
	if co == nil {
		return nil, &Error{Code: Internal, Message: "out of memory"}
	}
	var msg *C.char
	ok := func(code C.hdrf_code) bool {
		return code == C.HDRF_OK
	}
	path := cstrOrNil(o.DBPath)
	defer free(path)
	var every C.uint64_t = 1000000
	if o.CheckpointEvery > 0 {
		every = C.uint64_t(o.CheckpointEvery)
	} else if o.CheckpointEvery < 0 {
		every = 0
	}
	var perJob C.uint32_t = 4
	if o.CheckpointEventsPerJob > 0 {
		perJob = C.uint32_t(o.CheckpointEventsPerJob)
	} else if o.CheckpointEventsPerJob < 0 {
		perJob = 0
	}
	sample := C.uint32_t(16)
	if o.LatencySampleEvery > 0 {
		sample = C.uint32_t(o.LatencySampleEvery)
	} else if o.LatencySampleEvery < 0 {
		sample = 0
	}
	if ok(C.hdrf_options_set_overcommit_factor(co, C.double(o.OvercommitFactor), &msg)) &&
		ok(C.hdrf_options_set_db_path(co, path, &msg)) &&
		ok(C.hdrf_options_set_durability(co, C.int(o.Durability), &msg)) &&
		ok(C.hdrf_options_set_checkpoint_every(co, every, &msg)) &&
		ok(C.hdrf_options_set_checkpoint_events_per_job(co, perJob, &msg)) &&
		ok(C.hdrf_options_set_latency_sample_every(co, sample, &msg)) {
		return co, nil
	}
	C.hdrf_options_destroy(co)
	return nil, check(C.HDRF_INVALID_ARGUMENT, msg)
}

// Engine is one hdrf engine. Safe for concurrent use; Close it when done.
type Engine struct {
	h      *C.hdrf_engine_t // never changes; the C side refuses it once destroyed
	closed atomic.Bool
}

// Job names one job of one engine (a job ref). The zero Job is no job.
type Job struct {
	id, seq uint64
}

// Seq is the job's submission sequence number.
func (j Job) Seq() uint64 { return j.seq }

func (j Job) c() C.hdrf_job_ref_t {
	return C.hdrf_job_ref_t{id: C.uint64_t(j.id), seq: C.uint64_t(j.seq)}
}

func jobOf(r C.hdrf_job_ref_t) Job { return Job{id: uint64(r.id), seq: uint64(r.seq)} }

type createFn func(o *C.hdrf_options_t, h **C.hdrf_engine_t, msg **C.char) C.hdrf_code

func create(opts *Options, fn createFn) (*Engine, error) {
	co, err := opts.toC()
	if err != nil {
		return nil, err
	}
	if co != nil {
		defer C.hdrf_options_destroy(co)
	}
	var h *C.hdrf_engine_t
	var msg *C.char
	if err := check(fn(co, &h, &msg), msg); err != nil {
		return nil, err
	}
	return &Engine{h: h}, nil
}

// Create makes an engine over `cluster` (a resource list:
// "cpu=10,memory=64Gi,nvidia.com/gpu=8") with `queues` (docs/spec.md §3; missing
// parents are created). opts may be nil.
func Create(cluster string, queues []QueueSpec, opts *Options) (*Engine, error) {
	cc := cstr(cluster)
	defer free(cc)
	cq, release := queueSpecsToC(queues)
	defer release()
	return create(opts, func(o *C.hdrf_options_t, h **C.hdrf_engine_t, msg **C.char) C.hdrf_code {
		var p *C.hdrf_queue_spec_t
		if len(cq) > 0 {
			p = &cq[0]
		}
		return C.hdrf_engine_create(cc, p, C.size_t(len(cq)), o, h, msg)
	})
}

// CreateFromConfig makes an engine from a queue configuration in YAML
// (docs/config.md); cluster, when not "", gives or overrides its cluster.
func CreateFromConfig(yaml, cluster string, opts *Options) (*Engine, error) {
	cy, cc := cstr(yaml), cstrOrNil(cluster)
	defer free(cy)
	defer free(cc)
	return create(opts, func(o *C.hdrf_options_t, h **C.hdrf_engine_t, msg **C.char) C.hdrf_code {
		return C.hdrf_engine_create_from_config(cy, nil, cc, o, h, msg)
	})
}

// CreateFromScenario makes an engine from a scenario (docs/spec.md §10): its
// cluster, queues and jobs, and its steps when runSteps.
func CreateFromScenario(yaml string, runSteps bool, opts *Options) (*Engine, error) {
	cy := cstr(yaml)
	defer free(cy)
	run := C.int(0)
	if runSteps {
		run = 1
	}
	return create(opts, func(o *C.hdrf_options_t, h **C.hdrf_engine_t, msg **C.char) C.hdrf_code {
		return C.hdrf_engine_create_from_scenario(cy, nil, run, o, h, msg)
	})
}

// Open recovers the engine persisted at dbPath (docs/spec.md §9); opts.DBPath is
// ignored.
func Open(dbPath string, opts *Options) (*Engine, error) {
	cp := cstr(dbPath)
	defer free(cp)
	return create(opts, func(o *C.hdrf_options_t, h **C.hdrf_engine_t, msg **C.char) C.hdrf_code {
		return C.hdrf_engine_open(cp, o, h, msg)
	})
}

// Close makes every event durable, closes the store and frees the engine.
// It waits for calls in flight; later calls (and a second Close) fail.
func (e *Engine) Close() error {
	e.closed.Store(true)
	var msg *C.char
	return check(C.hdrf_engine_destroy(e.h, &msg), msg)
}

// ApplyOp applies one op of any type (hdrf_apply_op): what Allocate,
// Release, Finish or Remove does, as op.Type says; those four are ApplyOp
// with a fixed type. A Type that is none of the OpXxx values is
// InvalidArgument naming it, and changes nothing.
func (e *Engine) ApplyOp(op Op) error {
	r := C.go_op(e.h, C.int(op.Type), op.Job.c(), C.int64_t(op.N))
	return check(r.code, r.msg)
}

// Allocate records that n tasks of j started (the host's own placement).
func (e *Engine) Allocate(j Job, n int64) error { return e.ApplyOp(Op{Job: j, N: n, Type: OpAllocate}) }

// Release records that n running tasks of j stopped and wait again.
func (e *Engine) Release(j Job, n int64) error { return e.ApplyOp(Op{Job: j, N: n, Type: OpRelease}) }

// Finish records that n running tasks of j completed.
func (e *Engine) Finish(j Job, n int64) error { return e.ApplyOp(Op{Job: j, N: n, Type: OpFinish}) }

// Remove takes j out with all its tasks.
func (e *Engine) Remove(j Job) error { return e.ApplyOp(Op{Job: j, Type: OpRemove}) }

// OpType is the kind of one Op of Apply.
type OpType int32

const (
	OpAllocate OpType = C.HDRF_OP_ALLOCATE
	OpRelease  OpType = C.HDRF_OP_RELEASE
	OpFinish   OpType = C.HDRF_OP_FINISH
	OpRemove   OpType = C.HDRF_OP_REMOVE
)

// Op is one event of a batch. Its layout is hdrf_op_t's (checked by
// opLayoutOK), so a []Op goes to C without a copy.
type Op struct {
	Job  Job
	N    int64
	Type OpType
	_    int32
}

// opLayoutOK reports whether Op has hdrf_op_t's field offsets.
func opLayoutOK() bool {
	var o Op
	return unsafe.Offsetof(o.Job) == uintptr(C.go_op_offset(0)) &&
		unsafe.Offsetof(o.N) == uintptr(C.go_op_offset(1)) &&
		unsafe.Offsetof(o.Type) == uintptr(C.go_op_offset(2)) &&
		unsafe.Sizeof(o) >= uintptr(C.sizeof_hdrf_op_t)
}

var opLayout = opLayoutOK()

// Apply applies ops in order in one call (hdrf_apply: each op converted
// as ApplyOp's), waiting once for durability (group commit). Each op is accepted
// or refused on its own: results (optional, len(ops) entries) receives
// each op's Code. It returns the number applied and, when any op was
// refused, the first refusal (its message names the op).
func (e *Engine) Apply(ops []Op, results []Code) (int, error) {
	if !opLayout {
		return 0, &Error{Code: Internal, Message: "Op does not match hdrf_op_t"}
	}
	if len(ops) == 0 {
		return 0, nil
	}
	if results != nil && len(results) < len(ops) {
		return 0, &Error{Code: InvalidArgument, Message: "results is shorter than ops"}
	}
	var res *C.hdrf_code
	if results != nil {
		res = (*C.hdrf_code)(unsafe.Pointer(&results[0]))
	}
	var applied C.size_t
	r := C.go_apply(e.h, unsafe.Pointer(&ops[0]), C.size_t(len(ops)), C.size_t(unsafe.Sizeof(Op{})), res, &applied)
	return int(applied), check(r.code, r.msg)
}
