// Event: one change of engine state (docs/spec.md §1), as applied, logged and
// replayed. Jobs are named by their submission sequence number (`job_seq`,
// unique for the life of a store and restored by recovery), so that logged
// events stay small and never depend on in-memory ids.
#ifndef HDRF_EVENT_H_
#define HDRF_EVENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hdrf/spec.h"

namespace hdrf {

struct Event {
  // Stored on disk: never renumber, only append.
  enum class Type : uint8_t {
    kAllocate = 0,       // job_seq, n
    kRelease = 1,        // job_seq, n
    kFinish = 2,         // job_seq, n
    kSubmit = 3,         // job
    kRemove = 4,         // job_seq
    kCreateQueue = 5,    // queue
    kUpdateQueue = 6,    // queue
    kSetQueueState = 7,  // path, state
    kDeleteQueue = 8,    // path
    kSetCapacity = 9,    // cluster
    kApplyPlan = 10,     // job_seq (the waiting job), n (its demand), victims
  };
  // kApplyPlan: the plan's entries in order (docs/spec.md §15).
  struct Victim {
    uint64_t job_seq = 0;
    int64_t tasks = 0;
  };
  Type type = Type::kAllocate;
  uint64_t job_seq = 0;
  int64_t n = 1;
  JobSpec job;
  QueueSpec queue;
  std::string path;
  QueueState state = QueueState::kOpen;
  ResourceAmounts cluster;
  std::vector<Victim> victims;  // kApplyPlan

  static Event Allocate(uint64_t seq, int64_t n) { return Task(Type::kAllocate, seq, n); }
  static Event Release(uint64_t seq, int64_t n) { return Task(Type::kRelease, seq, n); }
  static Event Finish(uint64_t seq, int64_t n) { return Task(Type::kFinish, seq, n); }
  static Event Remove(uint64_t seq) { return Task(Type::kRemove, seq, 0); }
  // A job event of type `t` (kAllocate, kRelease, kFinish, kRemove).
  static Event Task(Type t, uint64_t seq, int64_t n) {
    Event e;
    e.type = t;
    e.job_seq = seq;
    e.n = n;
    return e;
  }
};

const char* EventTypeName(Event::Type t);

}  // namespace hdrf

#endif  // HDRF_EVENT_H_
