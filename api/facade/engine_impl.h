// Internal: Engine::Impl, shared by the files of api/facade/.
#ifndef HDRF_API_ENGINE_IMPL_H_
#define HDRF_API_ENGINE_IMPL_H_

#include <atomic>
#include <memory>
#include <string>

#include "hdrf/engine.h"
#include "api/facade/engine_access.h"
#include "base/mutex.h"
#include "base/shard_lock.h"
#include "engine/tree.h"
#include "storage/journal.h"

namespace hdrf {

class Follower;  // api/facade/follower.h (followers)

// Thread safety (docs/concurrency.md):
//   * `rw` shared + `shards[s].mu`: a task event (Allocate/Release/Finish) on
//     a job of shard s tries engine::Tree::LocalAllocate/LocalRelease. Task
//     events on different shards run in parallel.
//   * `rw` shared alone: FindJob (see "Name lookups" below).
//   * `rw` exclusive (class Exclusive): everything else, and a task event
//     the tree could not do locally (it escalates: the shared section is
//     left, the exclusive one entered, and the event re-checked there).
//     Exclusive brackets the section with Tree::BeginExclusive/EndExclusive,
//     so every reader sees the root agree with its children.
//   * Lock order: rw (shared) before a shard's mu; exclusive holders take no
//     shard lock (there are no shared holders to exclude).
// Sequence numbers: with a store, every event takes its number from the
// journal (storage::Journal::Append numbers and queues under the journal's
// one lock), called under the shard's lock (local events) or the exclusive
// lock, so one shard's events reach the log in the order they were applied.
// Local events of different shards commute (each changes only its shard and
// its shard's lease), so the log order is a valid serial order. Without a
// store, a local event only counts itself in its shard's
// `shards[s].events`. Exclusive brings `last_seq` up to date either way
// (SyncLastSeq).
// Name lookups: FindJob takes `rw` shared (no shard lock) and reads the
// tree's own name index (engine/job_index.h), its names and its jobs'
// submission numbers. Those change only where the tree gains or loses a job
// (Submit, Remove, ApplyTasks, Open, a follower's catch-up; a follower's
// reload swaps the whole tree), all under the exclusive lock, and no local
// event writes them, so name lookups of embedders run beside task events
// instead of excluding them (docs/concurrency.md "Name lookups").
struct Engine::Impl {
  static constexpr int kShards = engine::Tree::kShards;
  // A lock shard's lock and event count in one line: a local event writes
  // both, so with two threads writing the same shard one line moves
  // between their cores per event, not two.
  struct alignas(base::kCacheLine) Shard {
    base::SpinLock mu;
    uint64_t events GUARDED_BY(mu) = 0;  // local events without a store (and rw exclusive: SyncLastSeq)
  };

  EngineOptions options;
  mutable base::BigReaderLock rw;
  mutable Shard shards[kShards];
  // See "Thread safety": rw shared to read, and to change a shard's part
  // with the shard's lock; rw exclusive for anything else.
  std::unique_ptr<engine::Tree> tree GUARDED_BY(rw) PT_GUARDED_BY(rw);
  // The last event's number as of the last exclusive section (SyncLastSeq);
  // a local event's number comes from the journal, or is counted in its
  // shard without a store.
  uint64_t last_seq GUARDED_BY(rw) = 0;
  // Null without a store. Not GUARDED_BY: set before the engine is shared,
  // or by a follower's Promote under rw exclusive (a follower has none).
  // Thread-safe (storage/journal.h).
  std::unique_ptr<storage::Journal> journal;
  bool closed GUARDED_BY(rw) = false;  // Close() was called
  ShardedLatencyHistogram latency;     // thread-safe (per-thread shards)
  RecoveryStats recovery;              // set once by Open, then read-only
  std::string follows GUARDED_BY(rw);  // a follower's store; "" for a writer
  // ApplyTasks calls running now (any thread; relaxed). With more than one,
  // batches group their ops by shard (engine.cc "Shard-grouped windows").
  // Alone on its line: written twice per batch by every batching thread.
  struct alignas(base::kCacheLine) BatchCount {
    std::atomic<int> running{0};
  };
  BatchCount batches;
  // A follower's catch-up machinery (null for an engine that never was
  // one); kept after Promote(). Declared last: destroyed first, stopping
  // its thread while the tree is still there.
  std::unique_ptr<Follower> follower;
  ~Impl();

  // Ok when events may be applied: not closed, and the log is healthy.
  Status Writable() const REQUIRES_SHARED(rw);
  // Applies `e` (already validated by the caller or not) under the
  // exclusive lock, logs it and assigns its sequence number. Defined in
  // engine.cc.
  Status ApplyLocked(const Event& e, JobRef* submitted) REQUIRES(rw);
  // Task event `op` (kAllocate, kRelease or kFinish; Engine::Apply(Op))
  // through the shard path, escalating when needed; *seq receives the
  // event's sequence number (0 without a store).
  Status TaskEvent(const Op& op, uint64_t* seq) EXCLUDES(rw);
  // Under the exclusive lock: the next sequence number, with the event
  // logged when there is a store (`e` may be null without one).
  uint64_t RecordLocked(const Event* e) REQUIRES(rw) {
    if (journal) return last_seq = journal->Append(*e);
    return ++last_seq;
  }
  // RecordLocked for job event `t` (engine/event.h IsJobEvent) on the job
  // of submission number `job_seq`: the event is built only for the journal.
  uint64_t RecordJobLocked(Event::Type t, uint64_t job_seq, int64_t n) REQUIRES(rw) {
    if (!journal) return ++last_seq;
    const Event e = Event::Task(t, job_seq, n);
    return RecordLocked(&e);
  }
  // Under rw exclusive: brings last_seq up to date with the local events
  // since the last exclusive section: the journal's number with a store;
  // without one, the counts of the shards in use, folded in. The shards'
  // locks are not taken: they are taken only under rw shared, which rw
  // exclusive excludes; the analysis cannot see that one lock implies the
  // others, hence NO_THREAD_SAFETY_ANALYSIS.
  void SyncLastSeq() REQUIRES(rw) NO_THREAD_SAFETY_ANALYSIS {
    if (journal) {
      last_seq = journal->last_seq();
      return;
    }
    // Local events happen only on the shards in use (Tree::ShardOf of a
    // job), and that set changes only in exclusive sections.
    for (int s : tree->used_shards()) {
      last_seq += shards[s].events;
      shards[s].events = 0;
    }
  }
};

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

// The exclusive section of Engine::Impl (see "Thread safety" above).
class SCOPED_CAPABILITY Exclusive {
 public:
  explicit Exclusive(const EngineImpl& impl) ACQUIRE(impl.rw) : impl_(const_cast<EngineImpl&>(impl)) {
    impl_.rw.lock();
    impl_.tree->BeginExclusive();
    impl_.SyncLastSeq();
  }
  ~Exclusive() RELEASE() {
    impl_.tree->EndExclusive();
    impl_.rw.unlock();
  }
  Exclusive(const Exclusive&) = delete;
  Exclusive& operator=(const Exclusive&) = delete;

 private:
  EngineImpl& impl_;
};

// NotFound unless `j` names a live job of the tree (its id and submission
// number).
Status CheckRef(const engine::Tree& t, JobRef j);

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
