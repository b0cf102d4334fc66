// engine::EventSink: where engine::ConcurrentTree numbers and logs the
// events it applied (storage::Journal is one; docs/concurrency.md
// "Sequence numbers"). The engine knows nothing of storage: this is all it
// asks of a log.
#ifndef HDRF_ENGINE_EVENT_SINK_H_
#define HDRF_ENGINE_EVENT_SINK_H_

#include <cstdint>

#include "hdrf/event.h"
#include "hdrf/status.h"

namespace hdrf::engine {

// Thread safety: every method may be called from any thread at once.
// ConcurrentTree calls Append under the lock that orders the event against
// the state it changed (a shard's lock for a shard-local task event, its
// exclusive lock for anything else), so the order of the Append calls is a
// valid serial order of the events (docs/concurrency.md "Why local events
// are exact"); the sink must number the events in the order of its Append
// calls.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Numbers `e` (the event after the last one) and queues it for writing;
  // returns its sequence number. Only for events that were applied.
  virtual uint64_t Append(const Event& e) = 0;
  // The number of the last event appended.
  virtual uint64_t last_seq() const = 0;
  // Not Ok once the sink can take no more events (a write failed, or it
  // was closed): the tree then refuses events rather than diverge from
  // what was logged.
  virtual Status health() const = 0;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_EVENT_SINK_H_
