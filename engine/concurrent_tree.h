// engine::ConcurrentTree: the engine's tree with the locks that let any
// number of threads apply events to it (docs/concurrency.md). It owns the
// tree, the big-reader lock, the lock shards with their event counts, the
// last sequence number, the exclusive section, the shard path of task
// events (with escalation) and the batch machinery (shard-grouped windows,
// their back-off, exclusive runs). Events are numbered and logged through
// an engine::EventSink (engine/event_sink.h); the engine knows nothing of
// storage.
//
// Thread safety (every method says which section it needs):
//   * `rw_` shared + `shards_[s].mu`: a task event (Allocate/Release/Finish)
//     on a job of shard s tries Tree::LocalAllocate/LocalRelease. Task
//     events on different shards run in parallel.
//   * `rw_` shared alone (class Shared): FindJob-style lookups that read
//     only what local events never write (see "Name lookups" below).
//   * `rw_` exclusive (class Exclusive): everything else, and a task event
//     the tree could not do locally (it escalates: the shared section is
//     left, the exclusive one entered, and the event re-checked there).
//     Exclusive brackets the section with Tree::BeginExclusive/EndExclusive,
//     so every reader sees the root agree with its children.
//   * Lock order: rw_ (shared) before a shard's mu, before the sink's own
//     lock; exclusive holders take no shard lock (there are no shared
//     holders to exclude) and call the sink directly. A batch's in-order
//     path may hold several shards' locks (its logged run) but takes a
//     further one only with try_lock, releasing them all before it waits.
// Invariants:
//   * Sequence numbers: with a sink, every event takes its number from
//     EventSink::Append, called under the shard's lock (local events) or
//     the exclusive lock, or a batch's from EventSink::AppendBatch, called
//     for a run of its job events while the locks of all of them are held
//     (concurrent_tree_batch.cc "Logged runs"), so one shard's events reach
//     the log in the order they were applied. Local events of different shards commute (each
//     changes only its shard and its shard's lease), so the log order is a
//     valid serial order. Without a sink, a local event only counts itself
//     in its shard's `shards_[s].events`. Inside an exclusive section
//     `last_seq_` is the number of the last applied event either way
//     (SyncLastSeq: the sink's number, or the shards' counts folded in).
//   * Refusals: while `refusal_` is not Ok (a closed engine, a follower)
//     or the sink is unhealthy, every event is refused with that status
//     and changes nothing.
//   * Name lookups: the tree's name index (engine/job_index.h), its names
//     and its jobs' submission numbers change only where the tree gains or
//     loses a job (Apply of a submission or removal, ApplyTasks' exclusive
//     runs, Swap, a caller's use of tree() in an exclusive section such as
//     a follower's catch-up), all under the exclusive lock, and no local
//     event writes them, so a lookup under Shared runs beside task events.
#ifndef HDRF_ENGINE_CONCURRENT_TREE_H_
#define HDRF_ENGINE_CONCURRENT_TREE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "base/shard_lock.h"
#include "base/thread_annotations.h"
#include "engine/event_sink.h"
#include "engine/tree.h"
#include "hdrf/engine.h"
#include "hdrf/event.h"
#include "hdrf/op.h"
#include "hdrf/status.h"

namespace hdrf::engine {

// NotFound unless `j` names a live job of `t` (its id and submission
// number).
Status CheckRef(const Tree& t, JobRef j);

class ConcurrentTree {
 public:
  static constexpr int kShards = Tree::kShards;

  ConcurrentTree() = default;
  ConcurrentTree(const ConcurrentTree&) = delete;
  ConcurrentTree& operator=(const ConcurrentTree&) = delete;

  // The big-reader lock, for the annotations of callers' functions
  // (REQUIRES(ct.lock())).
  base::BigReaderLock& lock() const RETURN_CAPABILITY(rw_) { return rw_; }

  // The exclusive section (see "Thread safety").
  class SCOPED_CAPABILITY Exclusive {
   public:
    explicit Exclusive(const ConcurrentTree& ct) ACQUIRE(ct.rw_) : ct_(const_cast<ConcurrentTree&>(ct)) {
      ct_.rw_.lock();
      ct_.tree_->BeginExclusive();
      ct_.SyncLastSeq();
    }
    ~Exclusive() RELEASE() {
      ct_.tree_->EndExclusive();
      ct_.rw_.unlock();
    }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    ConcurrentTree& ct_;
  };

  // `rw_` shared alone: for reads of what local events never write (the
  // name index, names, submission numbers; see "Name lookups").
  class SCOPED_CAPABILITY Shared {
   public:
    explicit Shared(const ConcurrentTree& ct) ACQUIRE_SHARED(ct.rw_) : rw_(ct.rw_) { rw_.lock_shared(); }
    ~Shared() RELEASE() { rw_.unlock_shared(); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    base::BigReaderLock& rw_;
  };

  // Before the tree is shared with other threads: takes `tree` (after
  // event `last_seq`) and the sink events are logged to (null: none).
  void Init(std::unique_ptr<Tree> tree, uint64_t last_seq, EventSink* sink) EXCLUDES(rw_);
  // Replaces the tree (a follower's reload) and returns the old one, to be
  // freed outside the lock.
  std::unique_ptr<Tree> Swap(std::unique_ptr<Tree> tree, uint64_t last_seq) REQUIRES(rw_);
  // From now on events are logged to `sink` (a promoted follower).
  void set_sink(EventSink* sink) REQUIRES(rw_) { sink_ = sink; }
  // From now on every event is refused with `why` (Ok: accepted again).
  void Refuse(Status why) REQUIRES(rw_) { refusal_ = std::move(why); }
  // Ok when events may be applied: not refused, and the sink is healthy.
  Status Writable() const REQUIRES_SHARED(rw_);

  // The tree: shared to read, and to change a shard's part with the
  // shard's lock (only this class does that); exclusive for anything else.
  Tree& tree() REQUIRES_SHARED(rw_) { return *tree_; }
  const Tree& tree() const REQUIRES_SHARED(rw_) { return *tree_; }
  // The last event's number (up to date in an exclusive section).
  uint64_t last_seq() const REQUIRES(rw_) { return last_seq_; }
  // A follower's catch-up applied the log up to `seq` to the tree itself.
  void set_last_seq(uint64_t seq) REQUIRES(rw_) { last_seq_ = seq; }

  // Under the exclusive lock: the next sequence number, with `e` logged
  // when there is a sink.
  uint64_t Record(const Event& e) REQUIRES(rw_) {
    if (sink_) return last_seq_ = sink_->Append(e);
    return ++last_seq_;
  }
  // Record for job event `t` (engine/event.h IsJobEvent) on the job of
  // submission number `job_seq`: the event is built only for the sink.
  uint64_t RecordJob(Event::Type t, uint64_t job_seq, int64_t n) REQUIRES(rw_) {
    if (!sink_) return ++last_seq_;
    return Record(Event::Task(t, job_seq, n));
  }
  // Under the exclusive lock: applies `e` (validated or not), records it
  // and sets *submitted (may be null) to a submission's new job.
  Status Apply(const Event& e, JobRef* submitted) REQUIRES(rw_);

  // Task event `op` (kAllocate, kRelease or kFinish; Engine::Apply(Op))
  // through the shard path, escalating when needed; *seq receives the
  // event's sequence number (0 without a sink).
  Status TaskEvent(const Op& op, uint64_t* seq) EXCLUDES(rw_);

  // Engine::ApplyTasks without the durability wait (docs/concurrency.md
  // "Batches"): applies `ops` in order, task ops through the shard path
  // (grouped by shard per `grouping`), the rest in exclusive runs. Sets
  // *refused (may be null) to the refused ops, *logged to the number of
  // the last op numbered (with a sink, the one whose durability to wait
  // for; 0: none), and *last_seq (may be null) to that number, or without
  // a sink, where shard-path events are counted rather than numbered, to
  // last_seq() at the batch's end. Returns the refusal that stopped the
  // tree accepting events (every op from there refused with it), else Ok.
  Status ApplyTasks(const Engine::TaskOp* ops, size_t n, EngineOptions::BatchGrouping grouping,
                    uint64_t* last_seq, size_t* refused, uint64_t* logged) EXCLUDES(rw_);

 private:
  // A lock shard's lock and event count in one line: a local event writes
  // both, so with two threads writing the same shard one line moves
  // between their cores per event, not two.
  struct alignas(base::kCacheLine) Shard {
    base::SpinLock mu;
    uint64_t events GUARDED_BY(mu) = 0;  // local events without a sink (and rw_ exclusive: SyncLastSeq)
  };
  // ApplyTasks calls running now (any thread; relaxed). With more than one,
  // batches group their ops by shard (concurrent_tree_batch.cc
  // "Shard-grouped windows"). Alone on its line: written twice per batch by
  // every batching thread.
  struct alignas(base::kCacheLine) BatchCount {
    std::atomic<int> running{0};
  };
  struct BatchState;  // concurrent_tree_batch.cc

  // Under rw_ exclusive: brings last_seq_ up to date with the local events
  // since the last exclusive section: the sink's number with a sink;
  // without one, the counts of the shards in use, folded in. The shards'
  // locks are not taken: they are taken only under rw_ shared, which rw_
  // exclusive excludes; the analysis cannot see that one lock implies the
  // others, hence NO_THREAD_SAFETY_ANALYSIS.
  void SyncLastSeq() REQUIRES(rw_) NO_THREAD_SAFETY_ANALYSIS;

  // The batch machinery (concurrent_tree_batch.cc).
  bool ApplyLocalOp(const Engine::TaskOp& op, int s, BatchState& b) REQUIRES_SHARED(rw_) REQUIRES(shards_[s].mu);
  // Logged runs (concurrent_tree_batch.cc "Logged runs"): adds a job event
  // to the batch's run, appending the run when full; appends the run. The
  // caller holds the locks that order every event of the run.
  void LogJobEvent(BatchState& b, Event::Type type, uint64_t job_seq, int64_t n) REQUIRES_SHARED(rw_);
  void AppendRun(BatchState& b) REQUIRES_SHARED(rw_);
  // The in-order path's shard locks (a set that changes at run time, which
  // the analysis cannot follow, hence NO_THREAD_SAFETY_ANALYSIS): takes
  // shard s's lock for the run (the locks held stay held; when another
  // thread holds s, the run is appended and they are released first), or
  // appends the run and releases every lock it holds.
  void LockForRun(int s, BatchState& b) REQUIRES_SHARED(rw_) NO_THREAD_SAFETY_ANALYSIS;
  void ReleaseRun(BatchState& b) REQUIRES_SHARED(rw_) NO_THREAD_SAFETY_ANALYSIS;
  template <typename Fn>
  void ForEachShardLocked(const int* shards, int n, Fn fn) REQUIRES_SHARED(rw_);
  size_t ApplyGrouped(const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b, bool* whole)
      REQUIRES_SHARED(rw_);
  size_t ApplyShared(const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b) EXCLUDES(rw_);
  size_t ApplyExclusive(const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b) EXCLUDES(rw_);

  mutable base::BigReaderLock rw_;
  mutable Shard shards_[kShards];
  // See "Thread safety": rw_ shared to read, and to change a shard's part
  // with the shard's lock; rw_ exclusive for anything else.
  std::unique_ptr<Tree> tree_ GUARDED_BY(rw_) PT_GUARDED_BY(rw_);
  // The last event's number as of the last exclusive section (SyncLastSeq).
  uint64_t last_seq_ GUARDED_BY(rw_) = 0;
  EventSink* sink_ GUARDED_BY(rw_) = nullptr;  // null: events are counted, not logged
  Status refusal_ GUARDED_BY(rw_);             // not Ok: every event is refused with it
  BatchCount batches_;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_CONCURRENT_TREE_H_
