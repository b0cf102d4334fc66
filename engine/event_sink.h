// engine::EventSink: where engine::ConcurrentTree numbers and logs the
// events it applied (storage::Journal is one; docs/concurrency.md
// "Sequence numbers"). The engine knows nothing of storage: this is all it
// asks of a log.
#ifndef HDRF_ENGINE_EVENT_SINK_H_
#define HDRF_ENGINE_EVENT_SINK_H_

#include <cstdint>
#include <span>

#include "hdrf/event.h"
#include "hdrf/status.h"

namespace hdrf::engine {

// A job event (hdrf/op.h IsJobEvent: Allocate, Release, Finish, Remove) as
// EventSink::AppendBatch takes it: Event::Task(type, job_seq, n) without
// the rest of an Event.
struct JobEventRecord {
  uint64_t job_seq = 0;  // the job's submission number
  int64_t n = 0;         // tasks (0 for kRemove)
  Event::Type type = Event::Type::kAllocate;
};

// Thread safety: every method may be called from any thread at once.
// ConcurrentTree calls Append and AppendBatch under the lock that orders
// each event against the state it changed (a shard's lock for a shard-local
// task event, its exclusive lock for anything else; a batch's run holds the
// locks of all its events' shards until AppendBatch returns), so the order
// of the calls is a valid serial order of the events (docs/concurrency.md
// "Why local events are exact"); the sink must number the events in the
// order of its calls, and a batch's events consecutively, in order.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Numbers `e` (the event after the last one) and queues it for writing;
  // returns its sequence number. Only for events that were applied.
  virtual uint64_t Append(const Event& e) = 0;
  // Numbers `events` (not empty) as one contiguous run after the last
  // event, in order, and queues them; returns the first one's number (the
  // last one's is that + size - 1). As one Append call each, made at once.
  virtual uint64_t AppendBatch(std::span<const JobEventRecord> events) = 0;
  // The number of the last event appended.
  virtual uint64_t last_seq() const = 0;
  // Not Ok once the sink can take no more events (a write failed, or it
  // was closed): the tree then refuses events rather than diverge from
  // what was logged.
  virtual Status health() const = 0;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_EVENT_SINK_H_
