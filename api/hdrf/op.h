// hdrf::Op: one job event (allocate, release, finish, remove) on a job ref,
// and the one check of an op's type.
//
//   hdrf::Op op{hdrf::Event::Type::kRelease, job, 2};
//   engine->Apply(op);  // the same as engine->Release(job, 2)
//
// A job event has this one form from an embedder's call to the engine's
// dispatch: Engine::Allocate/Release/Finish/Remove are Engine::Apply(Op),
// the C interface's single and batch calls (hdrf_op_t, hdrf_apply_op,
// hdrf_apply) and Python's methods and Engine.apply turn their input into
// an Op with JobEventType, and the engine applies it with
// engine::ApplyJobEvent (engine/event.h), as recovery's replayer does for
// a logged job event (docs/architecture.md "One event's path").
#ifndef HDRF_OP_H_
#define HDRF_OP_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "hdrf/event.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf {

// A handle for fast event calls; valid until the job is removed.
struct JobRef {
  JobId id = engine::kNone;
  uint64_t seq = 0;  // the job's submission sequence number
};

// Allocate, Release, Finish and Remove: the job events, which name one job
// and carry a count (n), in Event::Type order. The log stores them
// compactly (storage/codec.h LogOp).
inline constexpr Event::Type kJobEventTypes[] = {Event::Type::kAllocate, Event::Type::kRelease,
                                                 Event::Type::kFinish, Event::Type::kRemove};
inline bool IsJobEvent(Event::Type t) {
  return t == Event::Type::kAllocate || t == Event::Type::kRelease || t == Event::Type::kFinish ||
         t == Event::Type::kRemove;
}

// One job event: `type` (IsJobEvent) on `job`, with count `n` (tasks;
// ignored by kRemove).
struct Op {
  Event::Type type = Event::Type::kAllocate;
  JobRef job;
  int64_t n = 1;

  static Op Allocate(JobRef job, int64_t n = 1) { return {Event::Type::kAllocate, job, n}; }
  static Op Release(JobRef job, int64_t n = 1) { return {Event::Type::kRelease, job, n}; }
  static Op Finish(JobRef job, int64_t n = 1) { return {Event::Type::kFinish, job, n}; }
  static Op Remove(JobRef job) { return {Event::Type::kRemove, job, 0}; }
};

// The one check of an op's type. The type of a job event given as a number
// (an Event::Type value: C's HDRF_OP_*, Go's OpType, Python's hdrf.OP_*)
// or by name (EventTypeName: "allocate", "release", "finish", "remove");
// anything else is InvalidArgument naming what was given and the four
// types: "op type 9 (set-capacity) is not a job event: expected allocate
// (0), release (1), finish (2) or remove (4)".
inline StatusOr<Event::Type> JobEventType(int64_t value);
StatusOr<Event::Type> JobEventType(std::string_view name);
// JobEventType's refusal of `value` (out of line: the accepting path is
// inline, as it runs once per event of the C interface and Python).
Status NotAJobEventType(int64_t value);
// JobEventType for a value already of type Event::Type: Ok for a job event.
Status CheckJobEvent(Event::Type t);

inline StatusOr<Event::Type> JobEventType(int64_t value) {
  // The range first: a value above 255 must not wrap to a job event.
  if (value >= 0 && value <= UINT8_MAX && IsJobEvent(static_cast<Event::Type>(value)))
    return static_cast<Event::Type>(value);
  return NotAJobEventType(value);
}

// What a batch of ops reports as one status (hdrf_apply's return, Python's
// Engine.apply): `batch` (what Engine::ApplyTasks returned) when it is an
// error and some op was applied (applied, but not made durable); else the
// first refused op's status, prefixed "op I of N (K refused): "; else
// `batch` (Ok when every op was applied and is durable). `outcomes` holds
// each op's status in batch order.
Status BatchStatus(const Status& batch, std::span<const Status> outcomes);

}  // namespace hdrf

#endif  // HDRF_OP_H_
