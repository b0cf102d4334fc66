// ApplyEvent: applies one public Event (hdrf/event.h) to the engine's Tree.
#ifndef HDRF_ENGINE_EVENT_H_
#define HDRF_ENGINE_EVENT_H_

#include "hdrf/event.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf {

namespace engine {
class Tree;
}

// Applies `e` to `tree`. A refused event returns its error and changes
// nothing.
Status ApplyEvent(engine::Tree& tree, const Event& e);

// Allocate, Release, Finish and Remove: the job events, which name one job
// by its submission number (job_seq) and carry a count (n). The log stores
// them compactly (storage/codec.h LogOp).
inline bool IsJobEvent(Event::Type t) {
  return t == Event::Type::kAllocate || t == Event::Type::kRelease || t == Event::Type::kFinish ||
         t == Event::Type::kRemove;
}

// Applies job event `t` (IsJobEvent) with count `n` to job `id` of `tree`:
// the one dispatch of job events, for ApplyEvent, ConcurrentTree's
// escalated and batched paths and storage's replayer. Anything else is
// InvalidArgument, and changes nothing.
Status ApplyJobEvent(engine::Tree& tree, Event::Type t, JobId id, int64_t n);

}  // namespace hdrf

#endif  // HDRF_ENGINE_EVENT_H_
