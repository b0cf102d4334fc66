// Internal node layouts of the parts of engine::Tree (TreeStructure,
// TreeShares; engine/tree.h) and their hot inline accessors. Included only
// by engine/*.cc.
#ifndef HDRF_ENGINE_TREE_INTERNAL_H_
#define HDRF_ENGINE_TREE_INTERNAL_H_

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/res_array.h"
#include "engine/tree_shares.h"

namespace hdrf::engine {

// Per (leaf queue, user) bookkeeping for docs/spec.md §7; kept only while the leaf
// has a user limit.
struct TreeStructure::User {
  std::vector<int64_t> usage;  // R
  int64_t active_jobs = 0;     // jobs of this user in the leaf with tasks > 0
  ResMask exhausted = 0;       // resources where usage >= limit
};

// Layout: what a task event reads or writes on each queue of its path
// (parent, masks, weight, child and job counts, usage, capability) comes
// first, in three lines from a line boundary; the rest is cold.
struct alignas(64) TreeStructure::Queue {
  // ---- hot: the task-event path ----
  QueueId parent = kNone;
  uint32_t shard = 0;             // lock shard: of its top-level ancestor
  ResMask cap_reached = 0;        // own: usage >= cap
  ResMask path_cap = 0;           // OR of cap_reached from root to here
  ResMask held_mask = 0;          // leaf: free - held_back <= 0
  bool alive = false;
  bool limits_active = false;     // leaf has a user limit
  double weight = 1;              // (docs/spec.md §3)
  std::vector<QueueId> children;  // child queues, name order
  std::vector<JobId> jobs;        // jobs of a leaf; Job::slot indexes this
  ResArray<int64_t> usage;        // Σ allocations in the subtree
  ResArray<int64_t> cap;          // kUnlimited where unset (docs/spec.md §3)

  // ---- cold ----
  int depth = 0;
  std::string name;
  std::string path;
  // Attributes (docs/spec.md §3).
  std::vector<int64_t> guar;  // 0 where unset
  ResMask cap_set = 0;
  ResMask guar_set = 0;
  bool reclaimable = true;
  QueueState state = QueueState::kOpen;
  int min_user_limit_percent = 100;
  std::optional<double> user_limit_factor;

  // Raw sums.
  std::vector<int64_t> realcap;   // §6 real capability
  int64_t jobs_by_state[4] = {0, 0, 0, 0};
  std::vector<int64_t> held_back; // leaf: held_back(Q), when any guarantee
  // leaf: Σ min_available × task over its Inqueue jobs (the enqueue gate,
  // docs/spec.md §12), kept on every state change so the gate costs O(R), not a
  // pass over the leaf's jobs. Guarded like usage: shard-owned below root.
  std::vector<GateSum> inqueue_min;
  // A lower bound of the task shapes of the jobs in the subtree (every job
  // ever linked; exclusive sections only): engine/plan.cc prunes with it.
  std::vector<int64_t> min_task;
  int64_t active_users = 0;       // users with active_jobs > 0
  std::unordered_map<uint32_t, User> users;
  // leaf: its jobs that hold at least one task (allocated > 0), in no
  // particular order; Job::holder_slot indexes this (swap-remove). Kept by
  // SyncHolder wherever an allocation crosses 0; the plan search's leaf
  // scan (engine/plan.cc FindVictimInLeaf) walks it instead of `jobs`,
  // most of which wait. Written like usage: by a shard-local event under
  // its shard's lock (the leaf's jobs are all of one shard), read only in
  // exclusive sections.
  std::vector<JobId> holders;
};

// The hot part of a job: what an event reads or writes (checks, the
// allocation, the key's weight, the leaf, the submission number that a
// JobRef is checked against), in one 64-byte line, so that an event on a
// job not in cache costs one miss for its record (with the task shape in
// task_ and the view entry: three lines, asked for together by
// PrefetchJob). Cold fields live in arrays beside it (TreeStructure::job_names_).
// Fields ordered largest first so the struct has no padding holes (memory
// per job is a benchmarked target).
struct alignas(64) TreeStructure::Job {
  int64_t tasks = 0;
  int64_t allocated = 0;
  double weight = 1;
  int64_t min_available = 1;
  uint64_t seq = 0;
  QueueId queue = kNone;
  uint32_t user = 0;
  ResMask req = 0;
  uint32_t slot = 0;
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  uint32_t holder_slot = kNoSlot;  // index in its leaf's Queue::holders; kNoSlot when allocated is 0
  JobState state = JobState::kInqueue;
  bool alive = false;
};

// Derived state of a job within one View: 16 bytes, so that an entry never
// straddles a cache line (an event reads its job's entry and writes those of
// the heap siblings it moves). The job's key is not stored: in the current
// view it is JobKey(j), which a non-blocked job's heap entry holds.
// heap_pos is read without the shard lock by the batch prefetcher
// (PrefetchPath, a hint that may be stale): local events store it with
// relaxed atomic stores (TreeShares::JobHeapPos), exclusive sections as they like.
struct TreeShares::JobView {
  int64_t contrib_alloc = 0;  // the allocation its contribution was made with
  uint32_t heap_pos = KeyHeap::kAbsent;
  bool blocked = true;        // also: "not contributing" while detached
};

// The `pos` of a leaf heap's sifts (KeyHeap): the moved job's
// JobView::heap_pos, stored with a relaxed atomic store (JobView).
struct TreeShares::RelaxedPos {
  uint32_t* p;
  void operator=(uint32_t v) const { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
};

// Derived state of a queue within one View (docs/spec.md §4). Layout: line 0 holds
// the heap and the scalars, lines 1-2 the three sums of R <= 4 resources
// (what an event reads and writes on each queue of its path), line 3 the
// wait bound.
struct alignas(64) TreeShares::QueueView {
  KeyHeap nb;                     // non-blocked children
  int64_t n_norm = 0;             // contributors to sum_norm
  int64_t n_blk = 0;              // contributors to sum_blk
  double s = 0;
  double key = 0;
  uint32_t heap_pos = KeyHeap::kAbsent;  // in the parent's nb heap
  uint32_t ops = 0;               // aggregate updates since the last re-sum
  ResArray<double> sum_norm;      // Σ_{nb, s>0} (w/s)·U
  ResArray<double> sum_blk;       // Σ_{blocked} U
  ResArray<double> U;
  bool blocked = true;
  bool dirty = false;
  // Below the root: a lower bound of the task shapes of the non-blocked
  // jobs in the subtree (fill_bound.cc); INT64_MAX where none. Tightened by
  // searches, which are const: hence mutable (exclusive sections only).
  mutable ResArray<int64_t> wait_min;
};

// All derived share state for one saturated set. The current view is kept
// exact; the others are views of earlier saturated sets that catch up on the
// jobs touched since they were current (touched_) when they become current
// again (docs/algorithm.md, "Saturation changes").
struct TreeShares::View {
  ResMask mask = 0;
  uint64_t log_pos = 0;           // touched_ entries applied (absolute)
  uint64_t last_used = 0;
  std::vector<JobView, HugeAlloc<JobView>> jobs;  // indexed by JobId
  std::vector<QueueView> queues;  // indexed by QueueId
};

// Scratch state of one thread of work on the tree: the exclusive path uses
// TreeStructure::main_, a shard-local event the Scratch of its shard (guarded by the
// caller's shard lock; see "Thread safety" in tree_shards.h). A shard's Scratch
// also holds what its local events owe the root-level aggregates, folded in
// by BeginExclusive().
//
// Layout: a shard's Scratch is written by every local event of the shard,
// from whichever thread holds its lock, so each line it writes may have to
// come from another core. What an event writes is packed into few lines
// (for R <= 4): line 0 (flags, counters), one line of lease + usage delta
// per resource, and, when the job's state changes, one line of state and
// inqueue deltas. The dirty lists of a local event are the calling
// thread's own (TreeShares::DirtyLists), not the shard's. Fixed arrays, not
// vectors: the shards' hot fields must not share cache lines (separate
// small heap blocks of different shards would).
struct alignas(64) TreeStructure::Scratch {
  // ---- line 0 ----
  bool local = false;
  bool active = false;                // local: an event since the last fold
  bool root_stale = false;            // local: a top-level queue's key moved
  Counters counters;
  // ---- local shards only ----
  struct Res {
    int64_t lease = 0;                // free capacity this shard may take
    int64_t d_usage = 0;              // Σ allocation deltas (root usage, usage_total_)
  };
  alignas(64) Res res[kMaxResources];
  alignas(64) int64_t d_state[4] = {0, 0, 0, 0};  // root jobs_by_state deltas
  GateSum d_inqueue_min[kMaxResources] = {};      // inqueue_min_total_ deltas
  std::vector<JobId> touched;         // Touch() while saved views exist
  // ---- the exclusive path (main_) only ----
  std::vector<std::vector<QueueId>> dirty_by_depth;
};

// ---- the fit code (engine/fill_bound.cc, "Fit codes") ----
// A task's fit code holds, for each of its first kFitCodeResources
// resources, one byte c naming a floor kFitFloor[c] <= the amount: 0 for an
// amount <= 0 (floor INT64_MIN: no bound), else 1 + 4e + m for an amount
// whose leading bit is bit e and whose next two bits are m (floor
// (4 + m)·2^e / 4, the amount with its lower bits cleared). Resources past
// the first kFitCodeResources, or past R, have byte 0.
inline constexpr int kFitCodeResources = 4;

inline constexpr int64_t FitFloorOf(uint32_t c) {
  if (c == 0) return INT64_MIN;
  const int e = static_cast<int>((c - 1) / 4), m = static_cast<int>((c - 1) % 4);
  return e >= 2 ? int64_t{4 + m} << (e - 2) : (int64_t{4 + m} << e) >> 2;
}

inline constexpr std::array<int64_t, 256> kFitFloor = [] {
  std::array<int64_t, 256> f{};
  for (uint32_t c = 0; c < 256; ++c) f[c] = c <= 1 + 4 * 62 + 3 ? FitFloorOf(c) : INT64_MIN;  // > 252: never made
  return f;
}();

inline uint32_t FitCodeOf(const int64_t* task, int R) {
  uint32_t code = 0;
  for (int r = 0; r < std::min(R, kFitCodeResources); ++r) {
    const int64_t t = task[r];
    if (t <= 0) continue;
    const int e = 63 - std::countl_zero(static_cast<uint64_t>(t));
    const int64_t m = e >= 2 ? (t >> (e - 2)) & 3 : (t << (2 - e)) & 3;
    code |= static_cast<uint32_t>(1 + 4 * e + m) << (8 * r);
  }
  return code;
}

// False when the code proves that the task exceeds room[r] on some resource
// r < kFitCodeResources; room has kFitCodeResources entries.
inline bool CodeMayFit(uint32_t code, const int64_t* room) {
  for (int r = 0; r < kFitCodeResources; ++r)
    if (kFitFloor[(code >> (8 * r)) & 0xff] > room[r]) return false;
  return true;
}

// ---- hot accessors of the event path, inline (every engine/*.cc that
// calls them includes this header) ----

inline TreeShares::View& TreeShares::cv() { return views_[cur_]; }
inline TreeShares::JobView& TreeShares::JV(JobId j) { return views_[cur_].jobs[j]; }
inline const TreeShares::JobView& TreeShares::JV(JobId j) const { return views_[cur_].jobs[j]; }
inline TreeShares::QueueView& TreeShares::QV(QueueId q) { return views_[cur_].queues[q]; }
inline const TreeShares::QueueView& TreeShares::QV(QueueId q) const { return views_[cur_].queues[q]; }

inline Status TreeStructure::CheckJobId(JobId j) const {
  if (j >= jobs_.size() || !jobs_[j].alive) return UnknownJob(j);
  return Status::Ok();
}

// Job id's entry in its leaf's Queue::holders after its allocation changed:
// added when it holds a task and had no entry, swap-removed when it holds
// none and had one. Touches only the job, its leaf and the leaf's job moved
// into the freed place (one shard's: a shard-local event may call it).
inline void TreeStructure::SyncHolder(JobId id) {
  Job& j = jobs_[id];
  const bool holds = j.allocated > 0;
  if (holds == (j.holder_slot != Job::kNoSlot)) return;
  std::vector<JobId>& h = queues_[j.queue].holders;
  if (holds) {
    j.holder_slot = static_cast<uint32_t>(h.size());
    h.push_back(id);
  } else {
    const JobId last = h.back();
    h[j.holder_slot] = last;
    jobs_[last].holder_slot = j.holder_slot;
    h.pop_back();
    j.holder_slot = Job::kNoSlot;
  }
}

inline int64_t TreeStructure::GangSize(JobId id) const {
  const Job& j = jobs_[id];
  if (j.tasks <= 0) return 0;  // capped at the task count: nothing to start
  return std::min(std::max<int64_t>(1, j.min_available), j.tasks);
}

inline ResMask TreeStructure::RequiredMask(const int64_t* task) const {
  ResMask m = 0;
  for (int r = 0; r < R_; ++r)
    if (task[r] > 0) m |= ResMask{1} << r;
  return m;
}

// The shares below run over the resources of share_res_ (not saturated,
// total > 0) in ascending order.
inline double TreeShares::DominantPerTask(const int64_t* task) const {
  double d = 0;
  for (ResMask m = share_res_; m != 0; m &= m - 1) {
    const int r = std::countr_zero(m);
    d = std::max(d, static_cast<double>(task[r]) / total_d_[r]);
  }
  return d;
}

inline double TreeShares::ShareOf(const double* u) const {
  double s = 0;
  for (ResMask m = share_res_; m != 0; m &= m - 1) {
    const int r = std::countr_zero(m);
    s = std::max(s, u[r] / total_d_[r]);
  }
  return s;
}

inline double TreeShares::JobKey(JobId id) const {
  const Job& j = jobs_[id];
  if (j.allocated == 0) return 0;
  const int64_t* t = &task_[size_t{id} * R_];
  double s = 0;
  for (ResMask m = share_res_; m != 0; m &= m - 1) {
    const int r = std::countr_zero(m);
    s = std::max(s, static_cast<double>(j.allocated * t[r]) / total_d_[r]);
  }
  return s / j.weight;
}

inline QueueId TreeShares::JobLeaf(JobId j) const { return jobs_[j].queue; }

inline bool TreeShares::JobBlocked(JobId id) const {
  const Job& j = jobs_[id];
  if (j.state == JobState::kPending || j.allocated >= j.tasks) return true;
  const Queue& q = queues_[j.queue];
  ResMask m = saturated_ | q.path_cap | q.held_mask;
  if (q.limits_active) m |= UserExhausted(j.queue, j.user);
  return (j.req & m) != 0;
}

// The dirty lists of a local event are the calling thread's: they are empty
// between events (Propagate drains them before the event returns), so they
// need not be the shard's, whose lines another core may hold.
inline std::vector<std::vector<QueueId>>& TreeShares::DirtyLists(Scratch& sc) {
  if (!sc.local) return sc.dirty_by_depth;
  thread_local std::vector<std::vector<QueueId>> lists;
  return lists;
}

inline void TreeShares::Touch(JobId j, Scratch& sc) {
  if (!log_touched_) return;
  // An event touches its job more than once (the allocation, the refresh),
  // and a release and allocate of the same job often follow each other:
  // one entry serves (a catch-up re-derives the job as it is then), if
  // every saved view still has to read it (at or after log_floor_).
  if (sc.local) {
    if (sc.touched.empty() || sc.touched.back() != j) sc.touched.push_back(j);
  } else if (touched_.empty() || touched_.back() != j ||
             touched_base_ + touched_.size() <= log_floor_) {
    touched_.push_back(j);
  }
}

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_INTERNAL_H_
