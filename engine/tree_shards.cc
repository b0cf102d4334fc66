// engine::Tree: lock sharding by top-level subtree (tree.h, "Thread
// safety"; docs/concurrency.md). Shard-local task events, the fold of the
// shards' deltas into the root at the start of an exclusive section, and
// the leases of free capacity handed out at its end.
#include "engine/tree.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

int Tree::ShardOf(JobId j) const { return static_cast<int>(queues_[jobs_[j].queue].shard); }

Tree::Counters Tree::counters() const {
  Counters c = main_->counters;
  for (const auto& sc : shards_) {
    if (!sc) continue;
    c.full_rebuilds += sc->counters.full_rebuilds;
    c.node_rebuilds += sc->counters.node_rebuilds;
    c.job_refreshes += sc->counters.job_refreshes;
    c.view_switches += sc->counters.view_switches;
    c.view_catchups += sc->counters.view_catchups;
    c.fill_skips += sc->counters.fill_skips;
  }
  return c;
}

// Called from RebuildView (exclusive, leases gathered): every queue's shard
// is its top-level ancestor's id % kShards; each shard in use gets a Scratch.
void Tree::AssignShards(const std::vector<QueueId>& order) {
  if (shards_.empty()) shards_.resize(kShards);
  std::vector<bool> used(kShards, false);
  for (QueueId id : order) {
    Queue& q = queues_[id];
    if (q.parent == kNone) {
      q.shard = 0;
      continue;
    }
    q.shard = q.parent == 0 ? id % kShards : queues_[q.parent].shard;
    used[q.shard] = true;
  }
  used_shards_.clear();
  for (int s = 0; s < kShards; ++s) {
    if (!used[s]) continue;
    used_shards_.push_back(s);
    if (shards_[s]) continue;
    shards_[s] = std::make_unique<Scratch>();
    Scratch& sc = *shards_[s];
    sc.local = true;
  }
}

// The event path of a job reads three records at random addresses in arrays
// of (jobs) entries: the job, its task shape and its entry in the current
// view. At 10^5+ jobs each is a cache miss; the local events ask for all of
// them up front so that the misses overlap with the checks instead of
// following one another.
void Tree::PrefetchJobRecord(JobId id) const {
  if (id >= jobs_.size()) return;
  __builtin_prefetch(&jobs_[id]);
  __builtin_prefetch(task_.data() + size_t{id} * R_);
}

void Tree::PrefetchJob(JobId id) const {
  if (id >= jobs_.size()) return;
  PrefetchJobRecord(id);
  __builtin_prefetch(views_[cur_].jobs.data() + id, 1);
  // Saved views (other saturated sets): an event that flips the set
  // catches the job up in the view it switches to (SwitchView), so that
  // view's entry, and its heap entry (PrefetchPath), are read too. With one
  // view (nothing ever saturated) this costs a compare.
  for (size_t v = 0; v < views_.size(); ++v)
    if (v != cur_ && id < views_[v].jobs.size()) __builtin_prefetch(views_[v].jobs.data() + id, 1);
}

// The hot lines of queue q's raw node and of its node in the current view
// (three each, at fixed offsets: tree_internal.h).
void Tree::PrefetchNodes(QueueId q) const {
  const char* raw = reinterpret_cast<const char*>(&queues_[q]);
  const char* view = reinterpret_cast<const char*>(&views_[cur_].queues[q]);
  for (int line = 0; line < 3; ++line) {
    __builtin_prefetch(raw + 64 * line, 1);
    __builtin_prefetch(view + 64 * line, 1);
  }
}

// Stage 0: the leaf's nodes; stage 1 (when the leaf's raw node has
// arrived): its parent's, and the lines of the leaf heap that the job's key
// update reads (PrefetchHeapSift). Job::queue, Queue::parent and the node
// arrays change only in exclusive sections, and so does a leaf heap's buffer
// (it has room for all the leaf's jobs: local events never move it); the
// heap position is a relaxed atomic read of a value local events store
// atomically, stale if another thread has since moved the entry (then a
// wasted prefetch).
void Tree::PrefetchPath(JobId id, int stage) const {
  if (id >= jobs_.size()) return;
  const QueueId q = jobs_[id].queue;
  if (q >= queues_.size()) return;
  if (stage == 0) {
    PrefetchNodes(q);
    return;
  }
  const QueueId parent = queues_[q].parent;
  if (parent != kNone) PrefetchNodes(parent);
  if (id >= views_[cur_].jobs.size()) return;
  PrefetchHeapSift(views_[cur_].queues[q].nb, __atomic_load_n(&views_[cur_].jobs[id].heap_pos, __ATOMIC_RELAXED));
  // A saved view (PrefetchJob): only the job's heap entry, which a
  // catch-up reads first; its neighbours are likely in cache by then.
  for (size_t v = 0; v < views_.size(); ++v) {
    if (v == cur_) continue;
    const View& view = views_[v];
    if (id >= view.jobs.size() || q >= view.queues.size()) continue;
    const KeyHeap& nb = view.queues[q].nb;
    const uint32_t pos = view.jobs[id].heap_pos;  // saved views change only in exclusive sections
    if (pos < nb.capacity()) __builtin_prefetch(nb.slot(pos), 1);
  }
}

// The lines of heap `nb` that updating entry `pos`'s key reads: the entry,
// its parent and grandparent (a lower key sifts up), its children (one
// line; a higher key sifts down, and KeyHeap::SiftDown asks for each level
// below as it goes) and the top (the new minimum). Reads only the buffer's
// address and room.
void Tree::PrefetchHeapSift(const KeyHeap& nb, uint32_t pos) {
  const size_t cap = nb.capacity();
  if (pos >= cap) return;  // blocked (kAbsent), or stale
  __builtin_prefetch(nb.slot(0), 1);
  __builtin_prefetch(nb.slot(pos), 1);
  if (pos > 0) {
    const uint32_t up = KeyHeap::Parent(pos);
    __builtin_prefetch(nb.slot(up), 1);
    if (up > 0) __builtin_prefetch(nb.slot(KeyHeap::Parent(up)), 1);
  }
  if (KeyHeap::FirstChild(pos) < cap) __builtin_prefetch(nb.slot(KeyHeap::FirstChild(pos)), 1);
}

// The local events check what CheckAllocate/CheckRelease check, inline;
// those build the error when a check fails. The caller has asked for the
// job's lines (PrefetchJob) ahead of the call.
Status Tree::LocalAllocate(JobId id, int64_t n, bool* escalate) {
  *escalate = false;
  if (id >= jobs_.size() || !jobs_[id].alive ||
      AllocateRule(n, jobs_[id].allocated, jobs_[id].tasks, jobs_[id].state) != TaskRule::kOk)
    return CheckAllocate(id, n);
  if (!LocalPossible()) {
    *escalate = true;
    return Status::Ok();
  }
  Scratch& sc = *shards_[queues_[jobs_[id].queue].shard];
  // The lease must stay positive: the cluster then keeps free capacity of
  // every resource the job uses, so the saturated set cannot change.
  if (!LeaveLeasePositive(sc, &task_[size_t{id} * R_], n, nullptr)) {
    *escalate = true;
    return Status::Ok();
  }
  if (!sc.active) sc.active = true;  // no write when set: the line may be shared
  ChangeAllocation(id, n, 0, sc);
  return Status::Ok();
}

Status Tree::LocalRelease(JobId id, int64_t n, bool finish, bool* escalate) {
  *escalate = false;
  if (id >= jobs_.size() || !jobs_[id].alive ||
      ReleaseRule(n, jobs_[id].allocated) != TaskRule::kOk)
    return CheckRelease(id, n, finish ? "finish" : "release");
  // Freeing a saturated resource changes the saturated set.
  if (!LocalPossible() || (jobs_[id].req & saturated_) != 0) {
    *escalate = true;
    return Status::Ok();
  }
  Scratch& sc = *shards_[queues_[jobs_[id].queue].shard];
  if (!sc.active) sc.active = true;
  ChangeAllocation(id, -n, finish ? -n : 0, sc);
  return Status::Ok();
}

// Whether `taken` (none when null) plus n tasks of shape t leave shard
// sc's lease positive in every resource the shape uses; an overflow counts
// as too much.
bool Tree::LeaveLeasePositive(const Scratch& sc, const int64_t* t, int64_t n, const int64_t* taken) const {
  for (int r = 0; r < R_; ++r) {
    int64_t need, sum;
    if (t[r] > 0 && (__builtin_mul_overflow(n, t[r], &need) ||
                     __builtin_add_overflow(taken ? taken[r] : 0, need, &sum) || sum >= sc.res[r].lease))
      return false;
  }
  return true;
}

size_t Tree::ReserveLocal(int s, const LocalOp* ops, size_t count, int64_t* reserved) {
  std::fill(reserved, reserved + R_, 0);
  if (!LocalPossible() || s < 0 || s >= kShards || !shards_[s]) return 0;
  Scratch& sc = *shards_[s];
  size_t k = 0;
  for (; k < count; ++k) {
    const LocalOp& op = ops[k];
    if (op.job >= jobs_.size()) break;  // the caller checked the ref: cannot happen
    if (!op.allocate) {
      if ((jobs_[op.job].req & saturated_) != 0) break;  // LocalRelease would escalate
      continue;
    }
    if (op.n < 1) continue;  // refused by AllocateRule: takes nothing
    const int64_t* t = &task_[size_t{op.job} * R_];
    if (!LeaveLeasePositive(sc, t, op.n, reserved)) break;
    for (int r = 0; r < R_; ++r)
      if (t[r] > 0) reserved[r] += op.n * t[r];
  }
  for (int r = 0; r < R_; ++r) sc.res[r].lease -= reserved[r];
  return k;
}

void Tree::ReturnReservation(int s, const int64_t* reserved) {
  Scratch& sc = *shards_[s];
  for (int r = 0; r < R_; ++r) sc.res[r].lease += reserved[r];
}

void Tree::BeginExclusive() {
  bool root_stale = false, any_active = false;
  Queue& root = queues_[0];
  for (int s : used_shards_) {
    Scratch& sc = *shards_[s];
    if (leases_out_ || sc.active) {  // a local release may add to a lease not handed out
      for (int r = 0; r < R_; ++r) {
        free_[r] += sc.res[r].lease;
        sc.res[r].lease = 0;
      }
    }
    if (!sc.active) continue;
    any_active = true;
    for (int r = 0; r < R_; ++r) {
      usage_total_[r] += sc.res[r].d_usage;
      root.usage[r] += sc.res[r].d_usage;
      inqueue_min_total_[r] += sc.d_inqueue_min[r];
      sc.res[r].d_usage = sc.d_inqueue_min[r] = 0;
    }
    for (int k = 0; k < 4; ++k) {
      root.jobs_by_state[k] += sc.d_state[k];
      sc.d_state[k] = 0;
    }
    if (log_touched_) touched_.insert(touched_.end(), sc.touched.begin(), sc.touched.end());
    sc.touched.clear();
    root_stale = root_stale || sc.root_stale;
    sc.root_stale = false;
    sc.active = false;
  }
  if (any_active) {
    lease_skip_ = lease_wait_ = 0;
  } else if (leases_out_) {  // handed out, none used: back off
    lease_skip_ = std::min(kMaxLeaseSkip, std::max<uint32_t>(1, 2 * lease_skip_));
    lease_wait_ = lease_skip_;
  }
  leases_out_ = false;
  if (root_stale) RebuildRoot();
}

// When the cluster is so full that every event escalates (each allocation
// needs more than a lease, each release frees a saturated resource), the
// leases come back unused every time: the back-off (tree.h) then skips the
// hand-out and the fold of most sections.
void Tree::EndExclusive() {
  if (!LocalPossible() || used_shards_.empty()) return;
  if (lease_wait_ > 0) {
    --lease_wait_;
    return;
  }
  const int64_t n = static_cast<int64_t>(used_shards_.size());
  for (int r = 0; r < R_; ++r) {
    const int64_t share = free_[r] / n;
    if (share <= 0) continue;
    for (int s : used_shards_) shards_[s]->res[r].lease = share;
    free_[r] -= share * n;
    leases_out_ = true;
  }
}

// The root's aggregates in the current view, re-summed from its children
// (whose own values are exact: shard-local events keep them so).
void Tree::RebuildRoot() {
  QueueView& v = QV(0);
  v.nb.clear();
  std::fill(v.sum_norm.begin(), v.sum_norm.end(), 0.0);
  std::fill(v.sum_blk.begin(), v.sum_blk.end(), 0.0);
  v.n_norm = v.n_blk = 0;
  for (QueueId c : queues_[0].children) {
    QV(c).heap_pos = KeyHeap::kAbsent;
    AddQueueContribution(c);
  }
  v.ops = 0;
  SetAggregate(0);
}

// U, s, key and blocked of `id` from its aggregates (no parent update).
void Tree::SetAggregate(QueueId id) {
  QueueView& v = QV(id);
  v.blocked = v.nb.empty();
  const double M = v.blocked ? 0.0 : v.nb.top().key;
  for (int r = 0; r < R_; ++r) v.U[r] = M * v.sum_norm[r] + v.sum_blk[r];
  v.s = ShareOf(v.U.data());
  v.key = v.s / queues_[id].weight;
}

}  // namespace hdrf::engine
