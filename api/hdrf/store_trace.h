// A store's own event log as a trace, for `hdrf replay --from-db DIR`
// (docs/trace.md "Replaying a store's log").
//
// A store keeps its latest checkpoint and the log after it (older log
// records are deleted when a checkpoint commits, docs/storage.md). The trace
// rebuilds the checkpoint state first and then holds the log tail:
//
//   events 1 .. base_submits              submit every job of the checkpoint
//                                          (in submission order, to its leaf)
//   events base_submits+1 .. base_events  allocate each job's running tasks
//   events base_events+1 ..               the logged events checkpoint_seq+1 ..
//                                          last_seq, in order
//
// Replayed on one thread into a fresh engine, the trace ends in the state
// `hdrf recover` (Engine::Open) rebuilds from the store: the same digest. The
// store is opened read-only and nothing in it is written.
//
// What a trace cannot express is an error that says so: a log tail holding
// queue or capacity events, jobs in a closing or closed queue at the
// checkpoint, a store that uses the enqueue gate (overcommitFactor).
#ifndef HDRF_STORE_TRACE_H_
#define HDRF_STORE_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "hdrf/trace.h"
#include "hdrf/status.h"

namespace hdrf {

struct StoreTrace {
  Trace trace;
  size_t base_submits = 0;     // events 1..base_submits: the checkpoint's jobs
  size_t base_events = 0;      // events 1..base_events rebuild the checkpoint
  uint64_t checkpoint_seq = 0; // the store event the checkpoint was taken after
  uint64_t last_seq = 0;       // the store's last event (what hdrf recover reports)
};

// Reads the store at `dir` (read-only; checksums verified). Errors name the
// store and the key or event.
StatusOr<StoreTrace> ReadStoreTrace(const std::string& dir);

}  // namespace hdrf

#endif  // HDRF_STORE_TRACE_H_
