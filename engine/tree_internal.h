// Internal node layouts of engine::Tree. Included only by engine/*.cc.
#ifndef HDRF_ENGINE_TREE_INTERNAL_H_
#define HDRF_ENGINE_TREE_INTERNAL_H_

#include <unordered_map>
#include <vector>

#include "engine/tree.h"

namespace hdrf::engine {

// Per (leaf queue, user) bookkeeping for SPEC §7; kept only while the leaf
// has a user limit.
struct Tree::User {
  std::vector<int64_t> usage;  // R
  int64_t active_jobs = 0;     // jobs of this user in the leaf with tasks > 0
  ResMask exhausted = 0;       // resources where usage >= limit
};

struct Tree::Queue {
  bool alive = false;
  std::string name;
  std::string path;
  QueueId parent = kNone;
  int depth = 0;
  std::vector<QueueId> children;  // child queues, name order
  std::vector<JobId> jobs;        // jobs of a leaf; Job::slot indexes this

  // Attributes (SPEC §3).
  double weight = 1;
  std::vector<int64_t> cap;   // kUnlimited where unset
  std::vector<int64_t> guar;  // 0 where unset
  ResMask cap_set = 0;
  ResMask guar_set = 0;
  bool reclaimable = true;
  QueueState state = QueueState::kOpen;
  int min_user_limit_percent = 100;
  std::optional<double> user_limit_factor;

  // Raw sums.
  std::vector<int64_t> usage;     // Σ allocations in the subtree
  std::vector<int64_t> realcap;   // §6 real capability
  int64_t jobs_by_state[4] = {0, 0, 0, 0};
  ResMask cap_reached = 0;        // own: usage >= cap
  ResMask path_cap = 0;           // OR of cap_reached from root to here
  ResMask held_mask = 0;          // leaf: free - held_back <= 0
  std::vector<int64_t> held_back; // leaf: held_back(Q), when any guarantee
  bool limits_active = false;     // leaf has a user limit
  int64_t active_users = 0;       // users with active_jobs > 0
  std::unordered_map<uint32_t, User> users;
  uint32_t shard = 0;             // lock shard: of its top-level ancestor

};

// The hot part of a job: what an event reads or writes (checks, the
// allocation, the key's weight, the leaf, the submission number that a
// JobRef is checked against), in one 64-byte line, so that an event on a
// job not in cache costs one miss for its record (with the task shape in
// task_ and the view entry: three lines, asked for together by
// PrefetchJob). Cold fields live in arrays beside it (Tree::job_names_).
// Fields ordered largest first so the struct has no padding holes (memory
// per job is a benchmarked target).
struct alignas(64) Tree::Job {
  int64_t tasks = 0;
  int64_t allocated = 0;
  double weight = 1;
  int64_t min_available = 1;
  uint64_t seq = 0;
  QueueId queue = kNone;
  uint32_t user = 0;
  ResMask req = 0;
  uint32_t slot = 0;
  JobState state = JobState::kInqueue;
  bool alive = false;
};

// Derived state of a job within one View: 16 bytes, so that an entry never
// straddles a cache line (an event reads its job's entry and writes those of
// the heap siblings it moves). The job's key is not stored: in the current
// view it is JobKey(j), which a non-blocked job's heap entry holds.
// heap_pos is read without the shard lock by the batch prefetcher
// (PrefetchPath, a hint that may be stale): local events store it with
// relaxed atomic stores (Tree::JobHeapPos), exclusive sections as they like.
struct Tree::JobView {
  int64_t contrib_alloc = 0;  // the allocation its contribution was made with
  uint32_t heap_pos = KeyHeap::kAbsent;
  bool blocked = true;        // also: "not contributing" while detached
};

// The `pos` of a leaf heap's sifts (KeyHeap): the moved job's
// JobView::heap_pos, stored with a relaxed atomic store (JobView).
struct Tree::RelaxedPos {
  uint32_t* p;
  void operator=(uint32_t v) const { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
};

// Derived state of a queue within one View (SPEC §4).
struct Tree::QueueView {
  KeyHeap nb;                     // non-blocked children
  std::vector<double> sum_norm;   // Σ_{nb, s>0} (w/s)·U
  std::vector<double> sum_blk;    // Σ_{blocked} U
  std::vector<double> U;
  int64_t n_norm = 0;             // contributors to sum_norm
  int64_t n_blk = 0;              // contributors to sum_blk
  double s = 0;
  double key = 0;
  bool blocked = true;
  bool dirty = false;
  uint32_t heap_pos = KeyHeap::kAbsent;  // in the parent's nb heap
  uint32_t ops = 0;               // aggregate updates since the last re-sum
  // Below the root: a lower bound of the task shapes of the non-blocked
  // jobs in the subtree (fill_bound.cc); INT64_MAX where none. Tightened by
  // searches, which are const: hence mutable (exclusive sections only).
  mutable std::vector<int64_t> wait_min;
};

// All derived share state for one saturated set. The current view is kept
// exact; the others are views of earlier saturated sets that catch up on the
// jobs touched since they were current (touched_) when they become current
// again (docs/algorithm.md, "Saturation changes").
struct Tree::View {
  ResMask mask = 0;
  uint64_t log_pos = 0;           // touched_ entries applied (absolute)
  uint64_t last_used = 0;
  std::vector<JobView, HugeAlloc<JobView>> jobs;  // indexed by JobId
  std::vector<QueueView> queues;  // indexed by QueueId
};

// Scratch state of one thread of work on the tree: the exclusive path uses
// Tree::main_, a shard-local event the Scratch of its shard (guarded by the
// caller's shard lock; see "Thread safety" in tree.h). A shard's Scratch
// also holds what its local events owe the root-level aggregates, folded in
// by BeginExclusive().
//
// Layout: a shard's Scratch is written by every local event of the shard,
// from whichever thread holds its lock, so each line it writes may have to
// come from another core. What an event writes is packed into few lines
// (for R <= 4): line 0 (flags, counters), one line of lease + usage delta
// per resource, and, when the job's state changes, one line of state and
// inqueue deltas. The dirty lists of a local event are the calling
// thread's own (Tree::DirtyLists), not the shard's. Fixed arrays, not
// vectors: the shards' hot fields must not share cache lines (separate
// small heap blocks of different shards would).
struct alignas(64) Tree::Scratch {
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
  int64_t d_inqueue_min[kMaxResources] = {};      // inqueue_min_total_ deltas
  std::vector<JobId> touched;         // Touch() while saved views exist
  // ---- the exclusive path (main_) only ----
  std::vector<std::vector<QueueId>> dirty_by_depth;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_INTERNAL_H_
