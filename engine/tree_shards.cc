// engine::TreeShards (engine/tree_shards.h): lock sharding by top-level
// subtree (docs/concurrency.md). Shard-local task events, the fold of the
// shards' deltas into the root at the start of an exclusive section, and
// the leases of free capacity handed out at its end.
#include "engine/tree_shards.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

// Local events are possible only when no rule couples the subtrees beyond
// the saturated set: held-back guarantees and the enqueue gate read the free
// capacity of the whole cluster; a root capability reads the root's usage.
// A root without children (jobs in the root itself) has no shards.
inline bool TreeShards::LocalPossible() const {
  return !any_guarantee_ && !options_.overcommit_factor && queues_[0].cap_set == 0 &&
         !used_shards_.empty();
}

TreeShards::TreeShards() = default;
TreeShards::~TreeShards() = default;

// Structure changes: the shards assigned again, then the shares rebuilt.
void TreeShards::RebuildAll() {
  AssignShards();
  RebuildShares();
}


int TreeShards::ShardOf(JobId j) const { return static_cast<int>(queues_[jobs_[j].queue].shard); }

TreeShards::Counters TreeShards::counters() const {
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

void TreeShards::AssignShards() {
  std::vector<QueueId> order{0};  // breadth-first: parents before children
  for (size_t i = 0; i < order.size(); ++i)
    for (QueueId c : queues_[order[i]].children) order.push_back(c);
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

// The local events check what CheckAllocate/CheckRelease check, inline;
// those build the error when a check fails. The caller has asked for the
// job's lines (PrefetchJob) ahead of the call.
Status TreeShards::LocalAllocate(JobId id, int64_t n, bool* escalate) {
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

Status TreeShards::LocalRelease(JobId id, int64_t n, bool finish, bool* escalate) {
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
bool TreeShards::LeaveLeasePositive(const Scratch& sc, const int64_t* t, int64_t n, const int64_t* taken) const {
  for (int r = 0; r < R_; ++r) {
    int64_t need, sum;
    if (t[r] > 0 && (__builtin_mul_overflow(n, t[r], &need) ||
                     __builtin_add_overflow(taken ? taken[r] : 0, need, &sum) || sum >= sc.res[r].lease))
      return false;
  }
  return true;
}

size_t TreeShards::ReserveLocal(int s, const LocalOp* ops, size_t count, int64_t* reserved) {
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

void TreeShards::ReturnReservation(int s, const int64_t* reserved) {
  Scratch& sc = *shards_[s];
  for (int r = 0; r < R_; ++r) sc.res[r].lease += reserved[r];
}

void TreeShards::BeginExclusive() {
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
// leases come back unused every time: the back-off (tree_shards.h) then skips the
// hand-out and the fold of most sections.
void TreeShards::EndExclusive() {
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

}  // namespace hdrf::engine
