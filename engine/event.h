// ApplyEvent: applies one public Event (hdrf/event.h) to the engine's Tree;
// ApplyJobEvent: one job event (hdrf/op.h).
#ifndef HDRF_ENGINE_EVENT_H_
#define HDRF_ENGINE_EVENT_H_

#include "hdrf/event.h"
#include "hdrf/op.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf {

namespace engine {
class Tree;
}

// Applies `e` to `tree`. A refused event returns its error and changes
// nothing.
Status ApplyEvent(engine::Tree& tree, const Event& e);

// Applies job event `op` (hdrf/op.h; IsJobEvent) to job op.job.id of `tree`:
// the one dispatch of job events, for ApplyEvent, ConcurrentTree's
// escalated and batched paths and storage's replayer. The caller has
// checked that the id names the job (engine::CheckRef, the replayer's
// lookup by submission number). A type that is not a job event is InvalidArgument
// naming it (CheckJobEvent), and changes nothing.
Status ApplyJobEvent(engine::Tree& tree, const Op& op);

}  // namespace hdrf

#endif  // HDRF_ENGINE_EVENT_H_
