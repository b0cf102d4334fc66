// Package hdrf embeds the hdrf engine (hierarchical multi-resource
// fairness, Dynamic H-DRF) in a Go program through its C interface
// (libhdrf_c, hdrf/c.h). docs/embedding.md is the guide.
//
// Ownership: an *Engine holds a C engine until Close, which must be called
// (there is no finalizer). A Job is a plain value (a job ref): copy it
// freely; it names one job of one engine, and a Job of a removed job, of
// another engine or of a closed one is refused with an error, never
// misapplied. Strings and slices returned are Go values. A *Plan (Plan,
// ApplyPlan) is a Go value too: the C plan inside it is freed by a
// finalizer once no copy of it is left.
//
// Threads: every method of *Engine may be called from any number of
// goroutines at once. Allocate, Release and Finish on jobs under different
// top-level queues run in parallel (the engine's lock sharding); Apply
// carries many events in one call. Close waits for the calls in flight;
// later calls fail with an *Error.
//
// Errors: every failure is an *Error with a Code and the engine's message;
// errors.Is(err, hdrf.NotFound) tests the code.
//
// Followers: OpenFollower opens a read-only Engine over a store that another
// process writes (events fail with FailedPrecondition); CatchUp, Lag and
// Promote (docs/embedding.md "Followers and takeover").
package hdrf

/*
#cgo pkg-config: hdrf_c
#include <stdlib.h>
#include <hdrf/c.h>
*/
import "C"

import "unsafe"

func unsafePointer(p *C.char) unsafe.Pointer { return unsafe.Pointer(p) }

// Version is the version of the C library loaded ("0.1.0").
func Version() string { return C.GoString(C.hdrf_version(nil, nil, nil)) }

// cstr is a C copy of s, to be freed with free (nil stays NULL when
// allowed by the callee: see cstrOrNil).
func cstr(s string) *C.char { return C.CString(s) }

func cstrOrNil(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

// cstrings keeps the C copies of strings passed in one call.
type cstrings []*C.char

// add is a C copy of s ("" is NULL), freed by free.
func (c *cstrings) add(s string) *C.char {
	p := cstrOrNil(s)
	if p != nil {
		*c = append(*c, p)
	}
	return p
}

func (c cstrings) free() {
	for _, p := range c {
		free(p)
	}
}

func free(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// goStrings copies and frees a list from hdrf_queue_paths and friends.
func goStrings(list **C.char, n C.size_t) []string {
	out := make([]string, int(n))
	items := unsafe.Slice(list, int(n))
	for i := range out {
		out[i] = C.GoString(items[i])
	}
	C.hdrf_free_strings(list, n)
	return out
}
