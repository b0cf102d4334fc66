// engine::ConcurrentTree::ApplyTasks: batches (docs/concurrency.md
// "Batches"), their shard-grouped windows and back-off, and the exclusive
// runs.
#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

#include "base/mutex.h"
#include "engine/concurrent_tree.h"
#include "engine/event.h"

namespace hdrf::engine {
namespace {
// Task events go through the shard path like single ones; a submission, a
// removal or an event that escalates runs in an exclusive section, which
// then takes up to kExclusiveRun ops before the batch returns to the shard
// path (when the cluster is nearly full most events escalate: one lock per
// run, not per event). While applying op i, the memory of op i + kAheadJob
// is prefetched, then its leaf's nodes at i + kAheadNode and their buffers
// at i + kAheadSums, so that the misses of a few events overlap.
constexpr size_t kExclusiveRun = 256;
constexpr size_t kAheadJob = 12, kAheadNode = 8, kAheadSums = 4;

// Allocate, Release, Finish: the job events that change a job's task counts
// only (not Remove), which a run of a batch may apply together.
bool ChangesTasksOnly(Event::Type t) {
  return t == Event::Type::kAllocate || t == Event::Type::kRelease || t == Event::Type::kFinish;
}

void PrefetchAhead(const Tree& t, const Engine::TaskOp* ops, size_t i, size_t n) {
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
static_assert(Tree::kShards < kNoShard, "shard numbers fit below kNoShard");

// Logged runs: with a sink, a batch appends its events in runs of up to
// kLogRun (EventSink::AppendBatch: one take of the journal's lock and one
// clock read per run, not per event). An event must reach the sink before
// the lock that ordered it is released (so that one shard's events are
// logged in the order they were applied), so a run is appended while the
// locks of all its events are held: a grouped window appends each shard's
// run under that shard's lock, an exclusive run before a submission (which
// is appended on its own) and at its end, and the in-order path, when this
// is the only batching thread, keeps the locks of the shards its run
// touched for up to kLogRun ops. It takes a further shard's lock only with
// try_lock: when another thread holds it, the run is appended and every
// lock released before it waits, so it never waits holding a shard lock
// (no lock-order cycle), and another thread waits for it at most kLogRun
// ops. With other batching threads the in-order path appends per op, as a
// single call does: holding several shards' locks would make the threads
// queue behind each other.
constexpr size_t kLogRun = 32;
static_assert(Tree::kShards <= 64, "the in-order path's held shards fit a 64-bit mask");

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
}  // namespace

struct ConcurrentTree::BatchState {
  uint64_t seq = 0;          // number of the last op numbered so far
  size_t bad = 0;            // refused ops
  bool unnumbered = false;   // without a sink: an op went through a shard
  Status error;              // the tree stopped accepting events ...
  size_t stopped_at = 0;     // ... at this op: it and the rest are refused
  EngineOptions::BatchGrouping grouping;  // shard-grouped windows
  GroupBackoff backoff;      // kAlways: this batch's (kAuto: the thread's)
  // The logged run ("Logged runs"): job events applied, not yet appended.
  JobEventRecord run[kLogRun];
  size_t run_n = 0;
  // The in-order path: the shards whose locks this batch holds (bit s) and
  // the ops applied since it took the first.
  uint64_t held = 0;
  size_t held_ops = 0;

  void Refuse(const Engine::TaskOp& op, Status st) {
    ++bad;
    if (op.status) *op.status = std::move(st);
  }
};

// Task op `op` (its ref checked) on the shard path; the caller holds `rw_`
// shared and shard s's lock. Returns false, having changed nothing, when
// the op must escalate.
bool ConcurrentTree::ApplyLocalOp(const Engine::TaskOp& op, int s, BatchState& b) {
  Tree& t = *tree_;
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
  if (!sink_) {
    ++shards_[s].events;
    b.unnumbered = true;
    return true;
  }
  LogJobEvent(b, op.type, op.job.seq, op.n);  // appended under the shard's lock
  return true;
}

void ConcurrentTree::LogJobEvent(BatchState& b, Event::Type type, uint64_t job_seq, int64_t n) {
  b.run[b.run_n++] = JobEventRecord{job_seq, n, type};
  if (b.run_n == kLogRun) AppendRun(b);
}

void ConcurrentTree::AppendRun(BatchState& b) {
  if (b.run_n == 0) return;
  b.seq = sink_->AppendBatch({b.run, b.run_n}) + b.run_n - 1;
  b.run_n = 0;
}

void ConcurrentTree::LockForRun(int s, BatchState& b) {
  const uint64_t bit = uint64_t{1} << s;
  if (b.held & bit) return;
  if (b.held == 0 || shards_[s].mu.try_lock()) {
    if (b.held == 0) shards_[s].mu.lock();
    b.held |= bit;
    return;
  }
  ReleaseRun(b);  // never wait holding a shard's lock
  shards_[s].mu.lock();
  b.held = bit;
}

void ConcurrentTree::ReleaseRun(BatchState& b) {
  if (sink_) AppendRun(b);
  for (uint64_t h = b.held; h != 0; h &= h - 1) shards_[__builtin_ctzll(h)].mu.unlock();
  b.held = 0;
  b.held_ops = 0;
}

// Calls fn(s) once for each of the n shards in `shards` under the shard's
// lock: those another thread holds are left for later, and it waits only
// when every one left is held, so that two threads grouping the same
// shards do not queue behind each other shard by shard.
template <typename Fn>
void ConcurrentTree::ForEachShardLocked(const int* shards, int n, Fn fn) {
  int list[kShards];
  std::copy(shards, shards + n, list);
  while (n > 0) {
    int left = 0;
    for (int p = 0; p < n; ++p) {
      base::SpinLock& mu = shards_[list[p]].mu;
      if (!mu.try_lock()) {
        list[left++] = list[p];
        continue;
      }
      fn(list[p]);
      mu.unlock();
    }
    if (left == n) {
      base::LockGuard<base::SpinLock> lock(shards_[list[0]].mu);
      fn(list[0]);
      std::copy(list + 1, list + left, list);
      --left;
    }
    n = left;
  }
}

// Under `rw_` shared: applies a grouped window from ops[i]; returns the
// index of the first op not applied (i when it grouped nothing) and sets
// *whole when no op of the window was left for fear of escalating. Its
// arrays take about 36 KB of the caller's stack.
size_t ConcurrentTree::ApplyGrouped(const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b,
                                    bool* whole) {
  *whole = false;
  Tree& t = *tree_;
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
  int64_t reserved[kShards][kMaxResources];
  Tree::LocalOp group[kGroupWindow];
  ForEachShardLocked(shards_in, nshards, [&](int s) {
    size_t m = 0;
    for (uint16_t k = first[s]; k < first[s + 1] && order[k] < cut; ++k) {
      const Engine::TaskOp& op = ops[i + order[k]];
      group[m++] = {op.n, op.job.id, op.type == Event::Type::kAllocate};
    }
    const size_t sure = t.ReserveLocal(s, group, m, reserved[s]);
    if (sure < m) cut = order[first[s] + sure];
  });
  if (cut < min_run) {
    ForEachShardLocked(shards_in, nshards, [&](int s) { t.ReturnReservation(s, reserved[s]); });
    return i;
  }
  // 4. Apply: the refused refs, then shard by shard. Every op applied here
  // stays local (its lease was reserved), and local ops of different shards
  // commute, so this gives the state and the statuses of applying the
  // window in batch order.
  for (size_t k = 0; k < cut; ++k)
    if (shard[k] == kNoShard) b.Refuse(ops[i + k], CheckRef(t, ops[i + k].job));
  ForEachShardLocked(shards_in, nshards, [&](int s) {
    // The analysis checks a lambda on its own: it is told what
    // ForEachShardLocked holds.
    rw_.AssertReaderHeld();
    shards_[s].mu.AssertHeld();
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
      if (!ApplyLocalOp(op, s, b))  // cannot happen: its lease was reserved
        b.Refuse(op, Status::Internal("ApplyTasks: an op with a reserved lease did not stay local"));
    }
    if (sink_) AppendRun(b);  // the shard's run, under its lock
  });
  *whole = cut == end - i;
  return i + cut;
}

// Under `rw_` shared: applies ops[i..] through the shard path until one
// must run alone; returns its index (n when none is left).
size_t ConcurrentTree::ApplyShared(const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b) {
  base::SharedLockGuard<base::BigReaderLock> shared(rw_);
  // Whatever way this returns, the run is appended and its locks released
  // (before `shared` is).
  struct RunEnd {
    ConcurrentTree& ct;
    BatchState& b;
    ~RunEnd() NO_THREAD_SAFETY_ANALYSIS { ct.ReleaseRun(b); }
  } run_end{*this, b};
  if (Status w = Writable(); !w.ok()) {
    b.error = w;
    b.stopped_at = i;
    return n;
  }
  Tree& t = *tree_;
  GroupBackoff& g = b.grouping == EngineOptions::BatchGrouping::kAuto ? tls_group_backoff : b.backoff;
  while (i < n) {
    if (!ChangesTasksOnly(ops[i].type)) return i;
    const bool group = b.grouping == EngineOptions::BatchGrouping::kAlways ||
                       (b.grouping == EngineOptions::BatchGrouping::kAuto &&
                        batches_.running.load(std::memory_order_relaxed) > 1);
    if (group && g.in_order_left == 0) {
      ReleaseRun(b);  // the window takes shard locks itself
      bool whole = false;
      const size_t next = ApplyGrouped(ops, i, n, b, &whole);
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
    // A run keeps its shards' locks when this is the only batching thread
    // ("Logged runs"); else one lock per op, as a single call takes it.
    if (!sink_ || batches_.running.load(std::memory_order_relaxed) > 1) {
      if (b.held != 0) ReleaseRun(b);
      base::LockGuard<base::SpinLock> lock(shards_[s].mu);
      const bool local = ApplyLocalOp(op, s, b);
      if (sink_) AppendRun(b);  // under the shard's lock
      if (!local) return i;
      ++i;
      continue;
    }
    if (!(b.held >> s & 1)) LockForRun(s, b);
    shards_[s].mu.AssertHeld();
    if (!ApplyLocalOp(op, s, b)) return i;  // escalates: RunEnd appends the run
    ++i;
    if (++b.held_ops == kLogRun) ReleaseRun(b);
  }
  return n;
}

// Under the exclusive lock: applies ops[i] and up to kExclusiveRun - 1 more;
// returns the index of the first op left.
size_t ConcurrentTree::ApplyExclusive(const Engine::TaskOp* ops, size_t i, size_t n, BatchState& b) {
  Exclusive lock(*this);
  if (Status w = Writable(); !w.ok()) {
    b.error = w;
    b.stopped_at = i;
    return n;
  }
  Tree& t = *tree_;
  const size_t end = std::min(n, i + kExclusiveRun);
  for (; i < end; ++i) {
    PrefetchAhead(t, ops, i, n);
    const Engine::TaskOp& op = ops[i];
    if (op.type == Event::Type::kSubmit) {
      Event e;
      e.type = Event::Type::kSubmit;
      if (op.spec) e.job = *op.spec;
      JobRef ref;
      if (sink_) AppendRun(b);  // the run's events come before the submission
      Status st = op.spec ? Apply(e, &ref) : Status::InvalidArgument("ApplyTasks: a submission without a JobSpec");
      if (!st.ok()) {
        b.Refuse(op, std::move(st));
        continue;
      }
      if (op.status) *op.status = Status::Ok();
      if (op.submitted) *op.submitted = ref;
      b.seq = last_seq_;
      continue;
    }
    Status st = CheckRef(t, op.job);
    if (st.ok()) st = ApplyJobEvent(t, op.op());
    if (!st.ok()) {
      b.Refuse(op, std::move(st));
      continue;
    }
    if (op.status) *op.status = Status::Ok();
    const int64_t count = op.type == Event::Type::kRemove ? 0 : op.n;
    if (sink_) {
      LogJobEvent(b, op.type, op.job.seq, count);
    } else {
      b.seq = ++last_seq_;
    }
  }
  if (sink_) {
    AppendRun(b);
    last_seq_ = std::max(last_seq_, b.seq);  // the sink's last number: nobody else appends here
  }
  return i;
}

Status ConcurrentTree::ApplyTasks(const Engine::TaskOp* ops, size_t n, EngineOptions::BatchGrouping grouping,
                                  uint64_t* last_seq, size_t* refused, uint64_t* logged) {
  struct Running {
    std::atomic<int>& count;
    explicit Running(std::atomic<int>& c) : count(c) { count.fetch_add(1, std::memory_order_relaxed); }
    ~Running() { count.fetch_sub(1, std::memory_order_relaxed); }
  } running(batches_.running);
  BatchState b;
  b.grouping = grouping;
  for (size_t i = 0; i < n && b.error.ok();) {
    i = ApplyShared(ops, i, n, b);
    if (i < n && b.error.ok()) i = ApplyExclusive(ops, i, n, b);
  }
  *logged = b.seq;
  if (!b.error.ok()) {
    for (size_t i = b.stopped_at; i < n; ++i) b.Refuse(ops[i], b.error);
    if (refused) *refused = b.bad;
    if (last_seq) *last_seq = b.seq;
    return b.error;
  }
  if (last_seq && b.unnumbered) {
    // Without a sink, events applied through the shards are counted, not
    // numbered: report the count of events applied so far, which covers
    // every op of this batch (docs/concurrency.md "Sequence numbers").
    Exclusive lock(*this);
    b.seq = last_seq_;
  }
  if (last_seq) *last_seq = b.seq;
  if (refused) *refused = b.bad;
  return Status::Ok();
}

}  // namespace hdrf::engine
