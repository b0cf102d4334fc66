// Internal: Engine::Impl, shared by api/engine.cc and api/engine_persist.cc.
#ifndef HDRF_API_ENGINE_IMPL_H_
#define HDRF_API_ENGINE_IMPL_H_

#include <atomic>
#include <memory>
#include <mutex>

#include "api/engine.h"
#include "engine/tree.h"

namespace hdrf {

class EventLog;  // api/event_log.h (persistence)

// Thread safety: `mu` guards `tree` and `last_seq`. Events take `mu`
// exclusively for the time of the tree update and the log append, so the
// sequence numbers are the order of application.
struct Engine::Impl {
  EngineOptions options;
  mutable std::mutex mu;
  std::unique_ptr<engine::Tree> tree;  // guarded by mu
  uint64_t last_seq = 0;               // guarded by mu
  std::unique_ptr<EventLog> log;       // null without a store
  bool closed = false;                 // guarded by mu: Close() was called

  // Ok when events may be applied: not closed, and the log is healthy.
  Status Writable() const;
  // Applies `e` (already validated by the caller or not) under `mu`, logs it
  // and assigns its sequence number. Defined in engine.cc.
  Status ApplyLocked(const Event& e, JobRef* submitted);
};

}  // namespace hdrf

#endif  // HDRF_API_ENGINE_IMPL_H_
