// Internal: Engine::Impl, shared by the files of api/facade/.
#ifndef HDRF_API_ENGINE_IMPL_H_
#define HDRF_API_ENGINE_IMPL_H_

#include <memory>
#include <string>

#include "hdrf/engine.h"
#include "api/facade/engine_access.h"
#include "base/thread_annotations.h"
#include "engine/concurrent_tree.h"
#include "engine/tree.h"
#include "storage/journal.h"

namespace hdrf {

class Follower;  // api/facade/follower.h (followers)

// Thread safety: the tree, its locks and the shard path of events are
// engine::ConcurrentTree's (engine/concurrent_tree.h, docs/concurrency.md):
// the facade enters its sections (ConcurrentTree::Exclusive, ::Shared) and
// calls it; `closed` and `follows` are guarded by its lock. The journal is
// the tree's event sink (storage::Journal is an engine::EventSink), so
// every event is numbered and logged under the lock that ordered it; the
// facade waits for durability outside the locks.
struct Engine::Impl {
  EngineOptions options;
  engine::ConcurrentTree ct;
  // Null without a store. Not GUARDED_BY: set before the engine is shared,
  // or by a follower's Promote under the exclusive lock (a follower has
  // none). Thread-safe (storage/journal.h).
  std::unique_ptr<storage::Journal> journal;
  bool closed GUARDED_BY(ct.lock()) = false;  // Close() was called
  ShardedLatencyHistogram latency;             // thread-safe (per-thread shards)
  RecoveryStats recovery;                      // set once by Open, then read-only
  std::string follows GUARDED_BY(ct.lock());   // a follower's store; "" for a writer
  // A follower's catch-up machinery (null for an engine that never was
  // one); kept after Promote(). Declared last: destroyed first, stopping
  // its thread while the tree is still there.
  std::unique_ptr<Follower> follower;
  ~Impl();
};

// The sections of the engine's tree (engine/concurrent_tree.h).
using Exclusive = engine::ConcurrentTree::Exclusive;
using Shared = engine::ConcurrentTree::Shared;
using engine::CheckRef;

// Times one in EngineOptions::latency_sample_every event calls of the
// calling thread into Impl::latency; Done() records accepted calls only.
class EventTimer {
 public:
  explicit EventTimer(EngineImpl& impl);
  Status Done(Status s);

 private:
  EngineImpl& impl_;
  uint64_t start_ns_ = 0;  // 0: this call is not timed
};

// The journal's options and recovery's for `options` (engine_persist.cc).
storage::JournalOptions JournalOptionsFor(const EngineOptions& options);
storage::LoadOptions RecoveryOptionsFor(const EngineOptions& options);

// Testing aid: a full recompute compared with the incremental state.
Status CheckEngineInvariants(const Engine& engine);
// Testing aid: FindJob (the shared-lock path) finds every job of the tree
// with its current JobRef, and the tree's name and submission-number
// indexes hold exactly its jobs (a writer's, and a follower's after its
// catch-ups, reloads and promotion).
Status CheckNameIndex(const Engine& engine);

}  // namespace hdrf

#endif  // HDRF_API_ENGINE_IMPL_H_
