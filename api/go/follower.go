package hdrf

/*
#include <hdrf/c.h>
*/
import "C"

import "time"

// FollowerOptions of OpenFollower. The zero value is the defaults.
type FollowerOptions struct {
	// SecondaryPath is the follower's own directory (a RocksDB secondary
	// instance); "" = a fresh temporary directory, removed on Close.
	SecondaryPath string
	// CatchUpInterval is the period of the background catch-up, in whole
	// milliseconds; 0 = the default (20 ms); < 0 = only on CatchUp.
	CatchUpInterval time.Duration
}

// OpenFollower opens a follower of the store at dbPath, which a writer (in
// this or another process) may hold: an Engine whose views, Explain and
// Metrics follow the writer, read-only (docs/storage.md "Followers"). Every
// event (Submit, Allocate, ..., Apply, Step, Fill, Reconcile, queue and
// capacity events) fails with FailedPrecondition ("engine is a read-only
// follower of DIR"). opts may be nil. Close it like any Engine.
func OpenFollower(dbPath string, opts *FollowerOptions) (*Engine, error) {
	cp := cstr(dbPath)
	defer free(cp)
	var fo C.hdrf_follower_options_t
	C.hdrf_follower_options_init(&fo)
	if opts != nil {
		fo.secondary_path = cstrOrNil(opts.SecondaryPath)
		defer free(fo.secondary_path)
		if opts.CatchUpInterval < 0 {
			fo.catch_up_interval_ms = 0
		} else if opts.CatchUpInterval > 0 {
			fo.catch_up_interval_ms = C.uint32_t(millis(opts.CatchUpInterval))
		}
	}
	return create(nil, func(_ *C.hdrf_options_t, h **C.hdrf_engine_t, msg **C.char) C.hdrf_code {
		return C.hdrf_engine_open_follower(cp, &fo, h, msg)
	})
}

// millis is d in whole milliseconds, at least 1 for any d > 0.
func millis(d time.Duration) int64 {
	ms := d.Milliseconds()
	if ms == 0 && d > 0 {
		return 1
	}
	return ms
}

// CatchUp applies what the writer logged since the last catch-up, now. It
// fails with FailedPrecondition on an engine that is not a follower.
func (e *Engine) CatchUp() error {
	var msg *C.char
	return check(C.hdrf_follower_catch_up(e.h, &msg), msg)
}

// Lag is how far a follower is behind its writer (all zero on an engine
// that is not a follower).
type Lag struct {
	IsFollower bool
	Events     uint64  // WriterSeq - AppliedSeq
	Seconds    float64 // since the last catch-up that left nothing to apply
	AppliedSeq uint64  // the last event applied (= LastSeq)
	WriterSeq  uint64  // the newest event in the store at the last catch-up
	Reloads    uint64  // times it reloaded the newest checkpoint
}

// Lag reports the follower's lag.
func (e *Engine) Lag() (Lag, error) {
	var l C.hdrf_follower_lag_t
	C.hdrf_follower_lag_init(&l)
	var msg *C.char
	if err := check(C.hdrf_follower_lag(e.h, &l, &msg), msg); err != nil {
		return Lag{}, err
	}
	return Lag{IsFollower: l.is_follower != 0, Events: uint64(l.events), Seconds: float64(l.seconds),
		AppliedSeq: uint64(l.applied_seq), WriterSeq: uint64(l.writer_seq), Reloads: uint64(l.reloads)}, nil
}

// Promote makes a follower the writer (warm standby): it waits up to wait
// (< 0: until it does; 0: only if it is free now) for the writer to release
// the store, applies the log tail and accepts events from then on,
// continuing the writer's sequence numbers, with nothing acknowledged lost.
// opts (nil = defaults) gives the new writer's Durability, CheckpointEvery,
// CheckpointEventsPerJob and LatencySampleEvery; its other fields are
// ignored. When the wait runs
// out it fails with FailedPrecondition and the engine stays a follower.
// Close waits for a Promote in flight.
func (e *Engine) Promote(wait time.Duration, opts *Options) error {
	co, err := opts.toC()
	if err != nil {
		return err
	}
	if co != nil {
		defer C.hdrf_options_destroy(co)
	}
	ms := int64(-1)
	if wait >= 0 {
		ms = millis(wait)
	}
	var msg *C.char
	return check(C.hdrf_follower_promote(e.h, C.int64_t(ms), co, &msg), msg)
}
