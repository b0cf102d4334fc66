#include "hdrf/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <shared_mutex>
#include <span>
#include <thread>

#include "api/facade/engine_impl.h"
#include "api/facade/follower.h"

namespace hdrf {

StatusOr<Durability> ParseDurability(std::string_view t) {
  if (t == "sync") return Durability::kSync;
  if (t == "async") return Durability::kAsync;
  if (t == "none") return Durability::kNone;
  return Status::InvalidArgument("durability '" + std::string(t) + "': expected sync, async or none");
}

const char* DurabilityName(Durability d) {
  switch (d) {
    case Durability::kSync: return "sync";
    case Durability::kAsync: return "async";
    case Durability::kNone: return "none";
  }
  return "?";
}

std::string DigestToHex(uint64_t d) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(d));
  return buf;
}

namespace {
Status CheckOptions(const EngineOptions& o) {
  if (o.log_retention_seconds < 0)
    return Status::InvalidArgument("log_retention_seconds must be 0 (off) or more, not " +
                                   std::to_string(o.log_retention_seconds));
  if ((o.latency_sample_every & (o.latency_sample_every - 1)) != 0)
    return Status::InvalidArgument("latency_sample_every must be 0 or a power of two, not " +
                                   std::to_string(o.latency_sample_every));
  if (o.reserve_jobs > uint64_t{0xfffffffe})
    return Status::InvalidArgument("reserve_jobs " + std::to_string(o.reserve_jobs) +
                                   ": more than the 4294967294 job ids an engine has");
  return Status::Ok();
}
}  // namespace

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
  if (impl_ && impl_->journal && !impl_->closed) (void)impl_->journal->Close();
}

StatusOr<std::unique_ptr<Engine>> Engine::Create(const ResourceAmounts& cluster,
                                                  const std::vector<QueueSpec>& queues,
                                                  const EngineOptions& options) {
  HDRF_RETURN_IF_ERROR(CheckOptions(options));
  engine::TreeOptions topts;
  topts.overcommit_factor = options.overcommit_factor;
  auto tree = engine::Tree::Create(cluster, queues, topts);
  if (!tree.ok()) return tree.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  {
    base::LockGuard<base::BigReaderLock> unshared(impl->rw);  // no other thread yet: for the analysis
    impl->tree = std::move(tree).value();
    if (options.reserve_jobs > 0) {
      impl->tree->ReserveJobs(options.reserve_jobs);
    }
    if (!options.db_path.empty()) {
      auto journal = storage::CreateJournal(options.db_path, *impl->tree, options.overcommit_factor,
                                            JournalOptionsFor(options));
      if (!journal.ok()) return journal.status();
      impl->journal = std::move(journal).value();
    }
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

StatusOr<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  if (options.db_path.empty()) return Status::InvalidArgument("Engine::Open needs options.db_path");
  HDRF_RETURN_IF_ERROR(CheckOptions(options));
  auto rec = storage::RecoverJournal(options.db_path, RecoveryOptionsFor(options), JournalOptionsFor(options));
  if (!rec.ok()) return rec.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  {
    base::LockGuard<base::BigReaderLock> unshared(impl->rw);  // no other thread yet: for the analysis
    impl->tree = std::move(rec->state.tree);
    impl->last_seq = rec->state.last_seq;
  }
  impl->journal = std::move(rec->journal);
  impl->recovery.checkpoint_seq = rec->state.checkpoint_seq;
  impl->recovery.events_replayed = rec->state.events_replayed;
  impl->recovery.seconds = rec->seconds;
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Status Engine::Impl::Writable() const {
  if (closed) return Status::FailedPrecondition("engine is closed");
  if (!follows.empty()) return Status::FailedPrecondition("engine is a read-only follower of " + follows);
  if (journal) return journal->health();
  return Status::Ok();
}

Status Engine::Impl::ApplyLocked(const Event& e, JobRef* submitted) {
  HDRF_RETURN_IF_ERROR(Writable());
  if (e.type == Event::Type::kSubmit) {
    auto id = tree->Submit(e.job);
    if (!id.ok()) return id.status();
    if (submitted) *submitted = JobRef{*id, tree->job_seq(*id)};
  } else if (e.type == Event::Type::kRemove) {
    HDRF_ASSIGN_OR_RETURN(JobId id, tree->FindJobBySeq(e.job_seq));
    HDRF_RETURN_IF_ERROR(tree->Remove(id));
  } else {
    HDRF_RETURN_IF_ERROR(ApplyEvent(*tree, e));
  }
  RecordLocked(&e);
  return Status::Ok();
}

namespace {
uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
}  // namespace

EventTimer::EventTimer(EngineImpl& impl) : impl_(impl) {
  thread_local uint64_t calls = 0;
  // Atomic: a follower's Promote sets it while events may be under way.
  const uint32_t every =
      std::atomic_ref<uint32_t>(impl.options.latency_sample_every).load(std::memory_order_relaxed);
  if (every != 0 && (++calls & (every - 1)) == 0) start_ns_ = NowNs();
}

Status EventTimer::Done(Status s) {
  if (start_ns_ != 0 && s.ok()) impl_.latency.Record(NowNs() - start_ns_);
  return s;
}

ShardedLatencyHistogram::Snapshot Engine::EventLatency() const { return impl_->latency.Take(); }

namespace {
// Applies one event and, with a store, waits for its durability outside the
// engine lock so that concurrent callers share writes.
// With `ref`, the event is one on that job (the event names it by its
// submission number only): it must name a live job of this engine.
Status ApplyAndWaitUntimed(EngineImpl& impl, const Event& e, JobRef* submitted,
                           const JobRef* ref = nullptr) {
  uint64_t seq;
  {
    Exclusive lock(impl);
    if (ref) HDRF_RETURN_IF_ERROR(CheckRef(*impl.tree, *ref));
    HDRF_RETURN_IF_ERROR(impl.ApplyLocked(e, submitted));
    seq = impl.last_seq;
  }
  if (impl.journal) return impl.journal->WaitDurable(seq);
  return Status::Ok();
}

Status ApplyAndWait(EngineImpl& impl, const Event& e, JobRef* submitted, const JobRef* ref = nullptr) {
  EventTimer timer(impl);
  return timer.Done(ApplyAndWaitUntimed(impl, e, submitted, ref));
}

}  // namespace

Status CheckRef(const engine::Tree& t, JobRef j) {
  if (!t.job_live(j.id, j.seq))
    return Status::NotFound("job ref #" + std::to_string(j.seq) + "/" + std::to_string(j.id) +
                            ": no such job in this engine (removed, or not a ref it handed out)");
  return Status::Ok();
}

StatusOr<JobRef> Engine::Submit(const JobSpec& job) {
  // A new job's gang must fit in it (docs/spec.md §14). Not a rule of the
  // tree: logs and traces written before gangs existed may hold such jobs
  // (minAvailable was only the gate's minimum), and they still replay, the
  // gang capped at the task count. A job of 0 tasks has nothing to start.
  if (job.tasks > 0 && job.min_available > job.tasks)
    return Status::InvalidArgument("job " + job.name + ": a gang larger than its job (minAvailable " +
                                   std::to_string(job.min_available) + " > tasks " + std::to_string(job.tasks) +
                                   ")");
  Event e;
  e.type = Event::Type::kSubmit;
  e.job = job;
  JobRef ref;
  HDRF_RETURN_IF_ERROR(ApplyAndWait(*impl_, e, &ref));
  return ref;
}

// Task events on a JobRef: the fast path used by replay and embedders. See
// "Thread safety" in engine_impl.h.
Status Engine::Impl::TaskEvent(const Op& op, uint64_t* seq) {
  const JobRef job = op.job;
  bool escalate = false;
  {
    base::SharedLockGuard<base::BigReaderLock> shared(rw);
    // The job's lines, then its leaf's, then their buffers and heap entry,
    // each as soon as its address is known, so that the misses of one
    // stage come together (PrefetchAhead does the same for batches).
    tree->PrefetchJob(job.id);
    HDRF_RETURN_IF_ERROR(CheckRef(*tree, job));
    tree->PrefetchPath(job.id, 0);
    HDRF_RETURN_IF_ERROR(Writable());
    const int s = tree->ShardOf(job.id);
    tree->PrefetchPath(job.id, 1);
    base::LockGuard<base::SpinLock> lock(shards[s].mu);
    HDRF_RETURN_IF_ERROR(op.type == Event::Type::kAllocate
                             ? tree->LocalAllocate(job.id, op.n, &escalate)
                             : tree->LocalRelease(job.id, op.n, op.type == Event::Type::kFinish, &escalate));
    if (!escalate) {
      if (!journal) {
        ++shards[s].events;
        *seq = 0;
        return Status::Ok();
      }
      *seq = journal->Append(Event::Task(op.type, job.seq, op.n));  // under the shard's lock
      return Status::Ok();
    }
  }
  Exclusive lock(*this);
  HDRF_RETURN_IF_ERROR(CheckRef(*tree, job));
  HDRF_RETURN_IF_ERROR(Writable());
  HDRF_RETURN_IF_ERROR(ApplyJobEvent(*tree, op));
  *seq = RecordJobLocked(op.type, job.seq, op.n);
  return Status::Ok();
}

namespace {
// A task event of Engine::Apply(Op): the shard path (TaskEvent), then the
// wait for its durability, timed as one call. Not inlined into Apply:
// there the status's string moves became calls (~30 instructions an
// event, callgrind).
[[gnu::noinline]] Status TimedTaskEvent(EngineImpl& impl, const Op& op) {
  EventTimer timer(impl);
  uint64_t seq = 0;
  Status s = impl.TaskEvent(op, &seq);
  if (s.ok() && impl.journal) s = impl.journal->WaitDurable(seq);
  return timer.Done(std::move(s));
}
}  // namespace

// The one entry of a single job event (hdrf/op.h): a task event takes the
// shard path (TimedTaskEvent); a removal runs alone (ApplyAndWait).
Status Engine::Apply(const Op& op) {
  if (!IsJobEvent(op.type)) return CheckJobEvent(op.type);
  if (op.type == Event::Type::kRemove) return ApplyAndWait(*impl_, Event::Remove(op.job.seq), nullptr, &op.job);
  return TimedTaskEvent(*impl_, op);
}

Status Engine::Allocate(JobRef job, int64_t n) { return Apply(Op::Allocate(job, n)); }
Status Engine::Release(JobRef job, int64_t n) { return Apply(Op::Release(job, n)); }
Status Engine::Finish(JobRef job, int64_t n) { return Apply(Op::Finish(job, n)); }
Status Engine::Remove(JobRef job) { return Apply(Op::Remove(job)); }

namespace {
// Batches (Engine::ApplyTasks; docs/concurrency.md "Batches"). Task events
// go through the shard path like single ones; a submission, a removal or an
// event that escalates runs in an exclusive section, which then takes up
// to kExclusiveRun ops before the batch returns to the shard path (when
// the cluster is nearly full most events escalate: one lock per run, not
// per event). While applying op i, the memory of op i + kAheadJob is
// prefetched, then its leaf's nodes at i + kAheadNode and their buffers at
// i + kAheadSums, so that the misses of a few events overlap.
constexpr size_t kExclusiveRun = 256;
constexpr size_t kAheadJob = 12, kAheadNode = 8, kAheadSums = 4;

// Allocate, Release, Finish: the job events that change a job's task counts
// only (not Remove), which a run of a batch may apply together.
bool ChangesTasksOnly(Event::Type t) {
  return t == Event::Type::kAllocate || t == Event::Type::kRelease || t == Event::Type::kFinish;
}

void PrefetchAhead(const engine::Tree& t, const Engine::TaskOp* ops, size_t i, size_t n) {
  auto job = [&](size_t k) { return k < n && ops[k].type != Event::Type::kSubmit; };
  if (job(i + kAheadJob)) t.PrefetchJob(ops[i + kAheadJob].job.id);
  if (job(i + kAheadNode)) t.PrefetchPath(ops[i + kAheadNode].job.id, 0);
  if (job(i + kAheadSums)) t.PrefetchPath(ops[i + kAheadSums].job.id, 1);
}

// Back-off of the grouped windows. After a window that grouped little or
// nothing (a nearly full cluster: many ops might escalate), the next
// `in_order_left` task ops go in order; that run doubles with each such
// window, from kInOrderRun up to kMaxInOrderRun, and is reset by a window
// that groups whole. After a window cut short by an op that might
// escalate, kPastCut ops go in order (that op among them). With kAuto the
// back-off is the calling thread's, across its batches; with kAlways each
// batch starts afresh.
struct GroupBackoff {
  size_t in_order_left = 0;
  size_t run = 0;
};
thread_local GroupBackoff tls_group_backoff;

struct BatchState {
  uint64_t seq = 0;          // number of the last op numbered so far
  size_t bad = 0;            // refused ops
  bool unnumbered = false;   // without a store: an op went through a shard
  Status error;              // the engine stopped accepting events ...
  size_t stopped_at = 0;     // ... at this op: it and the rest are refused
  EngineOptions::BatchGrouping grouping;  // shard-grouped windows
  GroupBackoff backoff;      // kAlways: this batch's (kAuto: the thread's)

  void Refuse(const Engine::TaskOp& op, Status st) {
    ++bad;
    if (op.status) *op.status = std::move(st);
  }
};

// Task op `op` (its ref checked) on the shard path; the caller holds `rw`
// shared and shard s's lock. Returns false, having changed nothing, when
// the op must escalate.
bool ApplyLocalOp(EngineImpl& impl, engine::Tree& t, const Engine::TaskOp& op, int s, BatchState& b)
    REQUIRES_SHARED(impl.rw) REQUIRES(impl.shards[s].mu) {
  bool escalate = false;
  const Status st = op.type == Event::Type::kAllocate
                        ? t.LocalAllocate(op.job.id, op.n, &escalate)
                        : t.LocalRelease(op.job.id, op.n, op.type == Event::Type::kFinish, &escalate);
  if (!st.ok()) {
    b.Refuse(op, st);
    return true;
  }
  if (escalate) return false;
  if (op.status) *op.status = Status::Ok();
  if (!impl.journal) {
    ++impl.shards[s].events;
    b.unnumbered = true;
    return true;
  }
  b.seq = impl.journal->Append(Event::Task(op.type, op.job.seq, op.n));  // under the shard's lock
  return true;
}

// Shard-grouped windows (docs/concurrency.md "Batches"): up to
// kGroupWindow task ops are applied shard by shard, each shard's ops in
// batch order under one take of its lock, so that a shard's lines move to
// this core once per window instead of once per op. Only ops that are sure
// to stay local are grouped (Tree::ReserveLocal); the window ends before
// the first that is not. When that leaves fewer than kMinGroupRun ops (2
// with BatchGrouping::kAlways, which tests use to group every batch), the
// window fails and GroupBackoff decides when to try again.
constexpr size_t kGroupWindow = 1024;
constexpr size_t kMinGroupRun = 16;
constexpr size_t kInOrderRun = 256, kMaxInOrderRun = 65536, kPastCut = 16;
constexpr uint8_t kNoShard = 0xff;  // the op's ref is refused
static_assert(engine::Tree::kShards < kNoShard, "shard numbers fit below kNoShard");

// Calls fn(s) once for each of the n shards in `shards` under the shard's
// lock: those another thread holds are left for later, and it waits only
// when every one left is held, so that two threads grouping the same
// shards do not queue behind each other shard by shard.
template <typename Fn>
void ForEachShardLocked(EngineImpl& impl, const int* shards, int n, Fn fn) REQUIRES_SHARED(impl.rw) {
  int list[engine::Tree::kShards];
  std::copy(shards, shards + n, list);
  while (n > 0) {
    int left = 0;
    for (int p = 0; p < n; ++p) {
      base::SpinLock& mu = impl.shards[list[p]].mu;
      if (!mu.try_lock()) {
        list[left++] = list[p];
        continue;
      }
      fn(list[p]);
      mu.unlock();
    }
    if (left == n) {
      base::LockGuard<base::SpinLock> lock(impl.shards[list[0]].mu);
      fn(list[0]);
      std::copy(list + 1, list + left, list);
      --left;
    }
    n = left;
  }
}

// Where a thread's next window starts in its list of shards: a step of a
// per-thread sequence, so that threads working on the same shards start
// apart.
int NextWindowStart(int shards) {
  thread_local uint64_t x = 0x9e3779b97f4a7c15ull * (1 + std::hash<std::thread::id>()(std::this_thread::get_id()));
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return shards > 0 ? static_cast<int>(x % static_cast<uint64_t>(shards)) : 0;
}

// Under `rw` shared: applies a grouped window from ops[i]; returns the
// index of the first op not applied (i when it grouped nothing) and sets
// *whole when no op of the window was left for fear of escalating. Its
// arrays take about 36 KB of the caller's stack.
size_t ApplyGrouped(EngineImpl& impl, engine::Tree& t, const Engine::TaskOp* ops, size_t i, size_t n,
                    BatchState& b, bool* whole) REQUIRES_SHARED(impl.rw) {
  *whole = false;
  constexpr int kShards = engine::Tree::kShards;
  // 1. The window and each op's shard (reading the job records, asked for
  // kAheadJob ops ahead: their misses overlap here).
  uint8_t shard[kGroupWindow];
  uint16_t count[kShards] = {};
  size_t end = i;
  for (; end < n && end - i < kGroupWindow; ++end) {
    if (end + kAheadJob < n && ChangesTasksOnly(ops[end + kAheadJob].type))
      t.PrefetchJobRecord(ops[end + kAheadJob].job.id);  // its view entry: in step 4
    const Engine::TaskOp& op = ops[end];
    if (!ChangesTasksOnly(op.type)) break;
    if (!CheckRef(t, op.job).ok()) {
      shard[end - i] = kNoShard;  // refused when its turn comes
      continue;
    }
    const int s = t.ShardOf(op.job.id);
    shard[end - i] = static_cast<uint8_t>(s);
    ++count[s];
  }
  const size_t min_run = b.grouping == EngineOptions::BatchGrouping::kAlways ? 2 : kMinGroupRun;
  if (end - i < min_run) return i;
  // 2. Ops by shard, each shard's in batch order (window offsets).
  uint16_t first[kShards + 1];
  first[0] = 0;
  for (int s = 0; s < kShards; ++s) first[s + 1] = static_cast<uint16_t>(first[s] + count[s]);
  uint16_t order[kGroupWindow];
  {
    uint16_t next[kShards];
    std::copy(first, first + kShards, next);
    for (size_t k = 0; k < end - i; ++k)
      if (shard[k] != kNoShard) order[next[shard[k]]++] = static_cast<uint16_t>(k);
  }
  // 3. Reserve, shard by shard, the lease that each shard's ops need; the
  // window shrinks to end before the first op that might escalate (the
  // shards in any order: the cut only moves down, and a shard that reserved
  // for ops beyond it gets all of it back in step 4 anyway).
  int shards_in[kShards], nshards = 0;
  for (int s = 0; s < kShards; ++s)
    if (count[s] > 0) shards_in[nshards++] = s;
  std::rotate(shards_in, shards_in + NextWindowStart(nshards), shards_in + nshards);
  size_t cut = end - i;  // window offsets below `cut` are applied
  int64_t reserved[kShards][engine::kMaxResources];
  engine::Tree::LocalOp group[kGroupWindow];
  ForEachShardLocked(impl, shards_in, nshards, [&](int s) {
    size_t m = 0;
    for (uint16_t k = first[s]; k < first[s + 1] && order[k] < cut; ++k) {
      const Engine::TaskOp& op = ops[i + order[k]];
      group[m++] = {op.n, op.job.id, op.type == Event::Type::kAllocate};
    }
    const size_t sure = t.ReserveLocal(s, group, m, reserved[s]);
    if (sure < m) cut = order[first[s] + sure];
  });
  if (cut < min_run) {
    ForEachShardLocked(impl, shards_in, nshards, [&](int s) { t.ReturnReservation(s, reserved[s]); });
    return i;
  }
  // 4. Apply: the refused refs, then shard by shard. Every op applied here
  // stays local (its lease was reserved), and local ops of different shards
  // commute, so this gives the state and the statuses of applying the
  // window in batch order.
  for (size_t k = 0; k < cut; ++k)
    if (shard[k] == kNoShard) b.Refuse(ops[i + k], CheckRef(t, ops[i + k].job));
  ForEachShardLocked(impl, shards_in, nshards, [&](int s) {
    // The analysis checks a lambda on its own: it is told what
    // ForEachShardLocked holds.
    impl.rw.AssertReaderHeld();
    impl.shards[s].mu.AssertHeld();
    t.ReturnReservation(s, reserved[s]);
    const uint16_t from = first[s], to = first[s + 1];
    for (uint16_t k = from; k < to && k < from + kAheadNode; ++k) {
      t.PrefetchJob(ops[i + order[k]].job.id);
      t.PrefetchPath(ops[i + order[k]].job.id, 0);
    }
    for (uint16_t k = from; k < to && order[k] < cut; ++k) {
      if (k + kAheadJob < to) t.PrefetchJob(ops[i + order[k + kAheadJob]].job.id);
      if (k + kAheadNode < to) t.PrefetchPath(ops[i + order[k + kAheadNode]].job.id, 0);
      if (k + kAheadSums < to) t.PrefetchPath(ops[i + order[k + kAheadSums]].job.id, 1);
      const Engine::TaskOp& op = ops[i + order[k]];
      if (!ApplyLocalOp(impl, t, op, s, b))  // cannot happen: its lease was reserved
        b.Refuse(op, Status::Internal("ApplyTasks: an op with a reserved lease did not stay local"));
    }
  });
  *whole = cut == end - i;
  return i + cut;
}

// Under `rw` shared: applies ops[i..] through the shard path until one must
// run alone; returns its index (n when none is left).
size_t ApplyShared(EngineImpl& impl, const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b) {
  base::SharedLockGuard<base::BigReaderLock> shared(impl.rw);
  if (Status w = impl.Writable(); !w.ok()) {
    b.error = w;
    b.stopped_at = i;
    return n;
  }
  engine::Tree& t = *impl.tree;
  GroupBackoff& g = b.grouping == EngineOptions::BatchGrouping::kAuto ? tls_group_backoff : b.backoff;
  while (i < n) {
    if (!ChangesTasksOnly(ops[i].type)) return i;
    const bool group = b.grouping == EngineOptions::BatchGrouping::kAlways ||
                       (b.grouping == EngineOptions::BatchGrouping::kAuto &&
                        impl.batches.running.load(std::memory_order_relaxed) > 1);
    if (group && g.in_order_left == 0) {
      bool whole = false;
      const size_t next = ApplyGrouped(impl, t, ops, i, n, b, &whole);
      const size_t window = std::min(n - i, kGroupWindow);
      if (whole) {
        g.run = 0;
      } else if (next - i >= window / 4) {
        g.in_order_left = kPastCut;
      } else {  // grouped little or nothing
        g.run = std::min(kMaxInOrderRun, std::max(kInOrderRun, 2 * g.run));
        g.in_order_left = g.run;
      }
      if (next > i) {
        i = next;
        continue;
      }
    }
    if (group && g.in_order_left > 0) --g.in_order_left;
    PrefetchAhead(t, ops, i, n);
    const Engine::TaskOp& op = ops[i];
    if (Status st = CheckRef(t, op.job); !st.ok()) {
      b.Refuse(op, std::move(st));
      ++i;
      continue;
    }
    const int s = t.ShardOf(op.job.id);
    base::LockGuard<base::SpinLock> lock(impl.shards[s].mu);
    if (!ApplyLocalOp(impl, t, op, s, b)) return i;
    ++i;
  }
  return n;
}

// Under the exclusive lock: applies ops[i] and up to kExclusiveRun - 1 more;
// returns the index of the first op left.
size_t ApplyExclusive(EngineImpl& impl, const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b) {
  Exclusive lock(impl);
  if (Status w = impl.Writable(); !w.ok()) {
    b.error = w;
    b.stopped_at = i;
    return n;
  }
  engine::Tree& t = *impl.tree;
  const size_t end = std::min(n, i + kExclusiveRun);
  for (; i < end; ++i) {
    PrefetchAhead(t, ops, i, n);
    const Engine::TaskOp& op = ops[i];
    if (op.type == Event::Type::kSubmit) {
      Event e;
      e.type = Event::Type::kSubmit;
      if (op.spec) e.job = *op.spec;
      JobRef ref;
      Status st = op.spec ? impl.ApplyLocked(e, &ref)
                          : Status::InvalidArgument("ApplyTasks: a submission without a JobSpec");
      if (!st.ok()) {
        b.Refuse(op, std::move(st));
        continue;
      }
      if (op.status) *op.status = Status::Ok();
      if (op.submitted) *op.submitted = ref;
      b.seq = impl.last_seq;
      continue;
    }
    Status st = CheckRef(t, op.job);
    if (st.ok()) st = ApplyJobEvent(t, op.op());
    if (!st.ok()) {
      b.Refuse(op, std::move(st));
      continue;
    }
    if (op.status) *op.status = Status::Ok();
    b.seq = impl.RecordJobLocked(op.type, op.job.seq, op.type == Event::Type::kRemove ? 0 : op.n);
  }
  return i;
}
}  // namespace

Status Engine::ApplyTasks(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused) {
  struct Running {
    std::atomic<int>& count;
    explicit Running(std::atomic<int>& c) : count(c) { count.fetch_add(1, std::memory_order_relaxed); }
    ~Running() { count.fetch_sub(1, std::memory_order_relaxed); }
  } running(impl_->batches.running);
  BatchState b;
  b.grouping = impl_->options.batch_grouping;
  for (size_t i = 0; i < n && b.error.ok();) {
    i = ApplyShared(*impl_, ops, i, n, b);
    if (i < n && b.error.ok()) i = ApplyExclusive(*impl_, ops, i, n, b);
  }
  if (!b.error.ok()) {
    for (size_t i = b.stopped_at; i < n; ++i) b.Refuse(ops[i], b.error);
    if (refused) *refused = b.bad;
    if (last_seq) *last_seq = b.seq;
    return b.error;
  }
  if (last_seq && b.unnumbered) {
    // Without a store, events applied through the shards are counted, not
    // numbered: report the count of events applied so far, which covers
    // every op of this batch (docs/concurrency.md "Sequence numbers").
    Exclusive lock(*impl_);
    b.seq = impl_->last_seq;
  }
  if (last_seq) *last_seq = b.seq;
  if (refused) *refused = b.bad;
  if (impl_->journal && b.seq > 0) return impl_->journal->WaitDurable(b.seq);
  return Status::Ok();
}

Status Engine::CreateQueue(const QueueSpec& q) {
  Event e;
  e.type = Event::Type::kCreateQueue;
  e.queue = q;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::UpdateQueue(const QueueSpec& q) {
  Event e;
  e.type = Event::Type::kUpdateQueue;
  e.queue = q;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::SetQueueState(std::string_view path, QueueState state) {
  Event e;
  e.type = Event::Type::kSetQueueState;
  e.path = std::string(path);
  e.state = state;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::DeleteQueue(std::string_view path) {
  Event e;
  e.type = Event::Type::kDeleteQueue;
  e.path = std::string(path);
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::SetCapacity(const ResourceAmounts& cluster) {
  Event e;
  e.type = Event::Type::kSetCapacity;
  e.cluster = cluster;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::Apply(const Event& e) { return ApplyAndWait(*impl_, e, nullptr); }

namespace {

// The allocation of one task that a step picked, recorded in the log (the
// caller holds the exclusive section); returns the record's sequence number
// for the durability wait.
StatusOr<uint64_t> AllocateOneLocked(EngineImpl& impl, engine::Tree& t, JobRef ref) REQUIRES(impl.rw) {
  HDRF_RETURN_IF_ERROR(impl.Writable());
  const int64_t k = t.StepDemand(ref.id);  // a gang that holds no task: all m at once
  HDRF_RETURN_IF_ERROR(t.Allocate(ref.id, k));
  return impl.RecordJobLocked(Event::Type::kAllocate, ref.seq, k);
}

// One step (docs/spec.md §5, §14: a gang holding no task gets its m tasks in one
// event): with `can_place`, the first job in step order that it
// accepts; the ones it refuses go into `skip` (Engine::StepWhere).
StatusOr<std::optional<JobRef>> StepWith(EngineImpl& impl, const PlacementFn* can_place,
                                         engine::Tree::SkipSet* skip) {
  EventTimer timer(impl);
  uint64_t seq;
  JobRef ref;
  {
    Exclusive lock(impl);
    if (!impl.follows.empty()) return impl.Writable();  // a follower picks nothing
    engine::Tree& t = *impl.tree;
    if (can_place) HDRF_RETURN_IF_ERROR(impl.Writable());  // before the host reserves anything
    std::optional<JobId> j;
    for (;;) {
      j = t.PickNext(skip);
      if (!j) return std::optional<JobRef>();
      ref = JobRef{*j, t.job_seq(*j)};
      if (!can_place) break;
      const PlacementQuery q{ref, t.job_name(*j), t.job_queue_path(*j),
                             std::span<const int64_t>(t.job_task(*j), t.resource_names().size()),
                             t.StepDemand(*j)};
      bool ok;
      try {
        ok = (*can_place)(q);
      } catch (const std::exception& e) {
        return Status::Internal(std::string("placement test threw: ") + e.what());
      } catch (...) {
        return Status::Internal("placement test threw");
      }
      if (ok) break;
      (*skip)[*j] = ref.seq;
    }
    HDRF_ASSIGN_OR_RETURN(seq, AllocateOneLocked(impl, t, ref));
  }
  if (impl.journal) HDRF_RETURN_IF_ERROR(impl.journal->WaitDurable(seq));
  (void)timer.Done(Status::Ok());
  return std::optional<JobRef>(ref);
}

}  // namespace

StatusOr<std::optional<JobRef>> Engine::Step() { return StepWith(*impl_, nullptr, nullptr); }

StatusOr<int64_t> Engine::Fill() {
  int64_t steps = 0;
  for (;;) {
    auto s = Step();
    if (!s.ok()) return s.status();
    if (!s->has_value()) return steps;
    ++steps;
  }
}

StatusOr<int64_t> Engine::Fill(std::vector<JobRef>* started) {
  EngineImpl& impl = *impl_;
  EventTimer timer(impl);
  uint64_t seq = 0;
  int64_t steps = 0;
  {
    Exclusive lock(impl);
    if (!impl.follows.empty()) return impl.Writable();  // a follower picks nothing
    engine::Tree& t = *impl.tree;
    while (std::optional<JobId> j = t.PickNext(nullptr)) {  // as StepWith, one step after another
      const JobRef ref{*j, t.job_seq(*j)};
      const int64_t k = t.StepDemand(*j);
      HDRF_ASSIGN_OR_RETURN(seq, AllocateOneLocked(impl, t, ref));
      ++steps;
      if (started) started->insert(started->end(), static_cast<size_t>(k), ref);
    }
  }
  if (impl.journal && seq > 0) HDRF_RETURN_IF_ERROR(impl.journal->WaitDurable(seq));
  (void)timer.Done(Status::Ok());
  return steps;
}

StatusOr<std::optional<JobRef>> Engine::StepWhere(const PlacementFn& can_place,
                                                  PlacementSkips* skips) {
  if (!can_place) return Status::InvalidArgument("StepWhere: the placement test is empty");
  PlacementSkips local;
  return StepWith(*impl_, &can_place, &(skips ? skips : &local)->jobs_);
}

StatusOr<int64_t> Engine::FillWhere(const PlacementFn& can_place, PlacementSkips* skips) {
  PlacementSkips local;
  if (!skips) skips = &local;
  int64_t steps = 0;
  for (;;) {
    auto s = StepWhere(can_place, skips);
    if (!s.ok()) return s.status();
    if (!s->has_value()) return steps;
    ++steps;
  }
}

bool PlacementSkips::Contains(JobRef job) const {
  auto it = jobs_.find(job.id);
  return it != jobs_.end() && it->second == job.seq;
}

void PlacementSkips::Add(JobRef job) { jobs_[job.id] = job.seq; }

std::optional<JobInfo> Engine::PickNext() const {
  Exclusive lock(*impl_);
  std::optional<JobId> j = impl_->tree->PickNext();
  if (!j) return std::nullopt;
  return impl_->tree->GetJob(*j);
}

StatusOr<int> Engine::CompareQueues(std::string_view a, std::string_view b) const {
  Exclusive lock(*impl_);
  HDRF_ASSIGN_OR_RETURN(QueueId qa, impl_->tree->FindQueue(a));
  HDRF_ASSIGN_OR_RETURN(QueueId qb, impl_->tree->FindQueue(b));
  if (!impl_->tree->GetQueue(qa).is_leaf || !impl_->tree->GetQueue(qb).is_leaf)
    return Status::InvalidArgument("queue order compares leaf queues");
  return impl_->tree->CompareQueues(qa, qb);
}

StatusOr<int> Engine::CompareJobs(JobRef a, JobRef b) const {
  Exclusive lock(*impl_);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, a));
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, b));
  return impl_->tree->CompareJobs(a.id, b.id);
}

namespace {
Status RefsToIds(const engine::Tree& t, const std::vector<JobRef>& refs, std::vector<JobId>* ids) {
  for (const JobRef& r : refs) {
    HDRF_RETURN_IF_ERROR(CheckRef(t, r));
    ids->push_back(r.id);
  }
  return Status::Ok();
}
}  // namespace

StatusOr<std::vector<bool>> Engine::Preemptable(JobRef preemptor,
                                                const std::vector<JobRef>& victims) const {
  Exclusive lock(*impl_);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, preemptor));
  std::vector<JobId> ids;
  HDRF_RETURN_IF_ERROR(RefsToIds(*impl_->tree, victims, &ids));
  return impl_->tree->Preemptable(preemptor.id, ids);
}

StatusOr<std::vector<bool>> Engine::Reclaimable(JobRef reclaimer, const std::vector<JobRef>& victims) {
  Exclusive lock(*impl_);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, reclaimer));
  std::vector<JobId> ids;
  HDRF_RETURN_IF_ERROR(RefsToIds(*impl_->tree, victims, &ids));
  return impl_->tree->Reclaimable(reclaimer.id, ids);
}

StatusOr<std::string> Engine::AdmitTo(std::string_view queue) const {
  Exclusive lock(*impl_);
  HDRF_ASSIGN_OR_RETURN(QueueId q, impl_->tree->Admit(queue));
  return impl_->tree->GetQueue(q).path;
}

StatusOr<Explanation> Engine::Explain(std::string_view job) const {
  Exclusive lock(*impl_);
  HDRF_ASSIGN_OR_RETURN(JobId id, impl_->tree->FindJob(job));
  return impl_->tree->Explain(id);
}

// The shared section task events use: the tree's name index, its names and
// submission numbers change only under the exclusive lock (engine_impl.h
// "Name lookups").
StatusOr<JobRef> Engine::FindJob(std::string_view name) const {
  base::SharedLockGuard<base::BigReaderLock> l(impl_->rw);
  const engine::Tree& t = *impl_->tree;
  HDRF_ASSIGN_OR_RETURN(JobId id, t.FindJob(name));
  return JobRef{id, t.job_seq(id)};
}

StatusOr<JobInfo> Engine::GetJob(std::string_view name) const {
  Exclusive lock(*impl_);
  HDRF_ASSIGN_OR_RETURN(JobId id, impl_->tree->FindJob(name));
  return impl_->tree->GetJob(id);
}

StatusOr<JobInfo> Engine::GetJob(JobRef job) const {
  Exclusive lock(*impl_);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, job));
  return impl_->tree->GetJob(job.id);
}

std::vector<QueueInfo> Engine::Queues() const {
  Exclusive lock(*impl_);
  std::vector<QueueInfo> out;
  for (QueueId q : impl_->tree->QueuesInPathOrder()) out.push_back(impl_->tree->GetQueue(q));
  return out;
}

std::vector<QueueSpec> Engine::QueueSpecs() const {
  Exclusive lock(*impl_);
  return impl_->tree->QueueSpecs();
}

std::vector<JobInfo> Engine::Jobs() const {
  Exclusive lock(*impl_);
  std::vector<JobInfo> out;
  for (JobId j : impl_->tree->JobsInSubmitOrder()) out.push_back(impl_->tree->GetJob(j));
  return out;
}

std::vector<std::string> Engine::ResourceNames() const {
  Exclusive lock(*impl_);
  return impl_->tree->resource_names();
}

std::vector<int64_t> Engine::Total() const {
  Exclusive lock(*impl_);
  return impl_->tree->total();
}

uint64_t Engine::Digest() const {
  Exclusive lock(*impl_);
  return impl_->tree->Digest();
}

std::string Engine::DigestHex() const { return DigestToHex(Digest()); }

uint64_t Engine::last_seq() const {
  Exclusive lock(*impl_);
  return impl_->last_seq;
}

uint64_t Engine::durable_seq() const {
  if (!impl_->journal) return last_seq();
  return impl_->journal->durable_seq();
}

size_t Engine::job_count() const {
  Exclusive lock(*impl_);
  return impl_->tree->job_count();
}

size_t Engine::queue_count() const {
  Exclusive lock(*impl_);
  return impl_->tree->queue_count();
}

Status Engine::Flush() { return impl_->journal ? impl_->journal->Flush() : Status::Ok(); }
Status Engine::Checkpoint() { return impl_->journal ? impl_->journal->Checkpoint() : Status::Ok(); }

// The journal lives until the engine is destroyed: a concurrent caller
// may still be waiting in WaitDurable. Once closed, `closed` makes
// Writable() refuse later events.
Status Engine::Close() {
  if (impl_->follower) impl_->follower->Stop();  // outside the lock: it joins a thread that takes it
  Exclusive lock(*impl_);
  if (!impl_->journal || impl_->closed) return Status::Ok();
  impl_->closed = true;
  return impl_->journal->Close();
}

RecoveryStats Engine::recovery_stats() const { return impl_->recovery; }

Status CheckEngineInvariants(const Engine& engine) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl);
  return impl.tree->CheckInvariants();
}

}  // namespace hdrf
