// engine::TreeShares (engine/tree_shares.h): incremental Dynamic H-DRF
// shares (docs/spec.md §4), blocked-ness and the per-saturated-set views.
// The algorithm is described in docs/algorithm.md.
#include <algorithm>
#include <climits>
#include <cmath>

#include "engine/tree_shares.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

namespace {
// Views kept in all, the current one included (each costs one TreeShares::JobView,
// 16 bytes, per job, plus one QueueView per queue).
constexpr size_t kMaxViews = 4;
}  // namespace

auto TreeShares::JobHeapPos() {
  return [this](uint32_t x) { return RelaxedPos{&JV(x).heap_pos}; };
}

// docs/spec.md §7 with exact integer comparisons where the limit is a ratio:
// usage >= max(B·p/100, B/n)  <=>  100·usage >= B·p  and  n·usage >= B.
ResMask TreeShares::UserExhausted(QueueId leaf, uint32_t user) const {
  const Queue& q = queues_[leaf];
  if (!q.limits_active) return 0;
  auto it = q.users.find(user);
  if (it == q.users.end()) return 0;
  const std::vector<int64_t>& u = it->second.usage;
  const int64_t n = std::max<int64_t>(1, q.active_users);
  ResMask m = 0;
  for (int r = 0; r < R_; ++r) {
    const bool gset = (q.guar_set >> r) & 1;
    const __int128 B = gset ? q.guar[r] : q.realcap[r];
    bool hit = false;
    if (q.min_user_limit_percent < 100)
      hit = __int128{100} * u[r] >= B * q.min_user_limit_percent && __int128{n} * u[r] >= B;
    if (q.user_limit_factor && gset)
      hit = hit || static_cast<double>(u[r]) >= static_cast<double>(q.guar[r]) * *q.user_limit_factor;
    if (hit) m |= ResMask{1} << r;
  }
  return m;
}

// A running non-blocked job's term (w/d)·task of its leaf's sum_norm (docs/spec.md
// §4; d its dominant share per task), added or taken out; nothing when d
// is 0 (no share resource in the task).
void TreeShares::AddNormTerm(QueueView& q, double weight, const int64_t* t) {
  const double d = DominantPerTask(t);
  if (d <= 0) return;
  const double f = weight / d;
  for (int r = 0; r < R_; ++r) q.sum_norm[r] += f * static_cast<double>(t[r]);
  ++q.n_norm;
}

void TreeShares::SubtractNormTerm(QueueView& q, double weight, const int64_t* t) {
  const double d = DominantPerTask(t);
  if (d <= 0) return;
  const double f = weight / d;
  for (int r = 0; r < R_; ++r) q.sum_norm[r] -= f * static_cast<double>(t[r]);
  if (--q.n_norm == 0) std::fill(q.sum_norm.begin(), q.sum_norm.end(), 0.0);
}

// Adds job `id`'s contribution, as it is now, to its leaf in the current view.
void TreeShares::AddJobContribution(JobId id) {
  const Job& j = jobs_[id];
  JobView& v = JV(id);
  QueueView& q = QV(j.queue);
  v.blocked = JobBlocked(id);
  v.contrib_alloc = j.allocated;
  const int64_t* t = &task_[size_t{id} * R_];
  if (v.blocked) {
    if (j.allocated > 0) {
      for (int r = 0; r < R_; ++r) q.sum_blk[r] += static_cast<double>(j.allocated * t[r]);
      ++q.n_blk;
    }
  } else {
    q.nb.Push(JobKey(id), id, JobHeapPos(), FitCodeOf(t, R_));
    LowerWaitBound(j.queue, t);
    if (j.allocated > 0) AddNormTerm(q, j.weight, t);
  }
  ++q.ops;
}

// Takes out the contribution the current view holds for `id` (made with
// JobView::contrib_alloc, whatever the job's allocation is now).
void TreeShares::RemoveJobContribution(JobId id) {
  const Job& j = jobs_[id];
  JobView& v = JV(id);
  QueueView& q = QV(j.queue);
  const int64_t* t = &task_[size_t{id} * R_];
  const int64_t a = v.contrib_alloc;
  if (v.blocked) {
    if (a > 0) {
      for (int r = 0; r < R_; ++r) q.sum_blk[r] -= static_cast<double>(a * t[r]);
      if (--q.n_blk == 0) std::fill(q.sum_blk.begin(), q.sum_blk.end(), 0.0);
    }
  } else {
    q.nb.Erase(v.heap_pos, JobHeapPos());
    if (a > 0) SubtractNormTerm(q, j.weight, t);
  }
  v.blocked = true;  // detached: contributes nothing
  v.contrib_alloc = 0;
  ++q.ops;
}

// RemoveJobContribution then AddJobContribution, for a job whose allocation
// or blocked-ness changed in place: the same sums, in the same order, with
// the same op count (so results and re-sum points are bit-identical). When
// the job is non-blocked before and after, its heap entry is updated in
// place: Erase + Push would move the heap's last entry into its slot and
// sift twice, each step a miss in a leaf heap not in cache (a job whose
// allocation goes from 0 to some or back takes this path on every such
// event).
void TreeShares::ReplaceJobContribution(JobId id) {
  JobView& v = JV(id);
  if (v.blocked || JobBlocked(id)) {
    RemoveJobContribution(id);
    AddJobContribution(id);
    return;
  }
  const Job& j = jobs_[id];
  QueueView& q = QV(j.queue);
  const int64_t* t = &task_[size_t{id} * R_];
  // The removal's arithmetic (RemoveJobContribution, non-blocked).
  if (v.contrib_alloc > 0) SubtractNormTerm(q, j.weight, t);
  ++q.ops;
  // The addition's (AddJobContribution, non-blocked), the entry kept.
  v.contrib_alloc = j.allocated;
  q.nb.Update(v.heap_pos, JobKey(id), JobHeapPos());
  LowerWaitBound(j.queue, t);
  if (j.allocated > 0) AddNormTerm(q, j.weight, t);
  ++q.ops;
}

void TreeShares::AddQueueContribution(QueueId id) {
  QueueView& c = QV(id);
  QueueView& p = QV(queues_[id].parent);
  const double w = queues_[id].weight;
  if (c.blocked) {
    for (int r = 0; r < R_; ++r) p.sum_blk[r] += c.U[r];
    ++p.n_blk;
  } else {
    p.nb.Push(c.key, id, [this](uint32_t x) -> uint32_t& { return QV(x).heap_pos; });
    if (c.s > 0) {
      double f = w / c.s;
      for (int r = 0; r < R_; ++r) p.sum_norm[r] += f * c.U[r];
      ++p.n_norm;
    }
  }
  ++p.ops;
}

void TreeShares::RemoveQueueContribution(QueueId id) {
  QueueView& c = QV(id);
  QueueView& p = QV(queues_[id].parent);
  const double w = queues_[id].weight;
  if (c.blocked) {
    for (int r = 0; r < R_; ++r) p.sum_blk[r] -= c.U[r];
    if (--p.n_blk == 0) std::fill(p.sum_blk.begin(), p.sum_blk.end(), 0.0);
  } else {
    p.nb.Erase(c.heap_pos, [this](uint32_t x) -> uint32_t& { return QV(x).heap_pos; });
    if (c.s > 0) {
      double f = w / c.s;
      for (int r = 0; r < R_; ++r) p.sum_norm[r] -= f * c.U[r];
      if (--p.n_norm == 0) std::fill(p.sum_norm.begin(), p.sum_norm.end(), 0.0);
    }
  }
  ++p.ops;
}

// Exact re-sum of a queue's aggregates from its children: bounds the drift
// of the incremental sums. Called when a queue has had more aggregate
// updates than twice its child count since its last re-sum, so its cost is
// amortised O(R) per update.
void TreeShares::RebuildNode(QueueId id, Scratch& sc) {
  const Queue& q = queues_[id];
  QueueView& v = QV(id);
  std::fill(v.sum_norm.begin(), v.sum_norm.end(), 0.0);
  std::fill(v.sum_blk.begin(), v.sum_blk.end(), 0.0);
  v.n_norm = v.n_blk = 0;
  if (q.children.empty()) {
    // A leaf of 10^3 jobs at 10^6 jobs: every job's lines are misses; ask
    // for them a few jobs ahead so that they overlap.
    constexpr size_t kAhead = 8;
    const size_t n = q.jobs.size();
    for (size_t k = 0; k < std::min(n, kAhead); ++k) PrefetchJob(q.jobs[k]);
    for (size_t k = 0; k < n; ++k) {
      if (k + kAhead < n) PrefetchJob(q.jobs[k + kAhead]);
      const JobId jid = q.jobs[k];
      const Job& j = jobs_[jid];
      const JobView& jv = JV(jid);
      if (jv.contrib_alloc == 0) continue;
      const int64_t* t = &task_[size_t{jid} * R_];
      if (jv.blocked) {
        for (int r = 0; r < R_; ++r) v.sum_blk[r] += static_cast<double>(jv.contrib_alloc * t[r]);
        ++v.n_blk;
      } else if (double d = DominantPerTask(t); d > 0) {
        double f = j.weight / d;
        for (int r = 0; r < R_; ++r) v.sum_norm[r] += f * static_cast<double>(t[r]);
        ++v.n_norm;
      }
    }
  } else {
    for (QueueId cid : q.children) {
      const QueueView& c = QV(cid);
      if (c.blocked) {
        for (int r = 0; r < R_; ++r) v.sum_blk[r] += c.U[r];
        ++v.n_blk;
      } else if (c.s > 0) {
        double f = queues_[cid].weight / c.s;
        for (int r = 0; r < R_; ++r) v.sum_norm[r] += f * c.U[r];
        ++v.n_norm;
      }
    }
  }
  v.ops = 0;
  ++sc.counters.node_rebuilds;
}

void TreeShares::MarkDirty(QueueId id, Scratch& sc) {
  QueueView& v = QV(id);
  if (v.dirty) return;
  v.dirty = true;
  const int depth = queues_[id].depth;
  auto& lists = DirtyLists(sc);
  if (lists.size() <= static_cast<size_t>(depth)) lists.resize(depth + 1);
  lists[depth].push_back(id);
}

// U = M·sum_norm + sum_blk with M the smallest non-blocked key. When the
// result differs from what the parent holds, the parent's aggregates are
// updated and true is returned: the parent must be recomputed in turn. A
// shard-local call leaves the root alone: the root is re-derived from its
// children by BeginExclusive().
bool TreeShares::RecomputeQueue(QueueId id, Scratch& sc) {
  const Queue& q = queues_[id];
  QueueView& v = QV(id);
  const bool blocked = v.nb.empty();
  const double M = blocked ? 0.0 : v.nb.top().key;
  double U[kMaxResources];
  double* const vU = v.U.data();
  {
    const double* sn = v.sum_norm.data();
    const double* sb = v.sum_blk.data();
    bool same = blocked == v.blocked;
    for (int r = 0; r < R_; ++r) {
      U[r] = M * sn[r] + sb[r];
      same = same && U[r] == vU[r];
    }
    if (same) return false;
  }
  if (sc.local && q.parent == 0) {
    v.blocked = blocked;
    std::copy(U, U + R_, vU);
    v.s = ShareOf(U);
    v.key = v.s / q.weight;
    if (!sc.root_stale) sc.root_stale = true;  // no write when set: the line may be shared
    return false;
  }
  const bool has_parent = q.parent != kNone;
  if (has_parent && !blocked && !v.blocked) {
    // Stays non-blocked: move its heap entry, swap its normalised term.
    QueueView& p = QV(q.parent);
    const double s_new = ShareOf(U);
    double* const ps = p.sum_norm.data();
    // Per resource: out with the old term, in with the new, then U.
    const bool out = v.s > 0, in = s_new > 0;
    const double f_out = out ? q.weight / v.s : 0, f_in = in ? q.weight / s_new : 0;
    for (int r = 0; r < R_; ++r) {
      if (out) ps[r] -= f_out * vU[r];
      if (in) ps[r] += f_in * U[r];
      vU[r] = U[r];
    }
    p.n_norm += int64_t{in} - int64_t{out};
    if (p.n_norm == 0) std::fill(ps, ps + R_, 0.0);
    v.s = s_new;
    v.key = s_new / q.weight;
    p.nb.Update(v.heap_pos, v.key, [this](uint32_t x) -> uint32_t& { return QV(x).heap_pos; });
    ++p.ops;
    return true;
  }
  if (has_parent) RemoveQueueContribution(id);
  v.blocked = blocked;
  std::copy(U, U + R_, vU);
  v.s = ShareOf(U);
  v.key = v.s / q.weight;
  if (has_parent) AddQueueContribution(id);
  return has_parent;
}

// Recomputes a changed queue (re-summed first when its incremental sums
// have had many updates); true when its parent must be recomputed.
inline bool TreeShares::Settle(QueueId id, Scratch& sc) {
  const Queue& q = queues_[id];
  const size_t fan = q.children.empty() ? q.jobs.size() : q.children.size();
  if (QV(id).ops > 2 * fan + 32) RebuildNode(id, sc);
  return RecomputeQueue(id, sc);
}

void TreeShares::Propagate(Scratch& sc) {
  auto& lists = DirtyLists(sc);
  for (int d = static_cast<int>(lists.size()) - 1; d >= 0; --d) {
    auto& bucket = lists[d];
    for (size_t i = 0; i < bucket.size(); ++i) {
      QueueId id = bucket[i];
      const Queue& q = queues_[id];
      if (!q.alive) continue;
      QV(id).dirty = false;
      if (Settle(id, sc)) MarkDirty(q.parent, sc);
    }
    bucket.clear();
  }
}

// When one leaf is the only changed queue (nothing is marked dirty), the
// queues Propagate would recompute are a chain: the leaf, then each parent
// as long as its child's aggregates moved. Walking it directly does the
// same operations in the same order, without the dirty lists.
void TreeShares::PropagatePath(QueueId leaf, Scratch& sc) {
  for (QueueId id = leaf; Settle(id, sc);) id = queues_[id].parent;
}

// Re-derives `id`'s blocked flag and key in the current view; when they
// (or the allocation its contribution was made with) changed, replaces its
// contribution and returns true: its leaf must be recomputed (RefreshJob
// marks it dirty).
bool TreeShares::RefreshJobEntry(JobId id, Scratch& sc) {
  Touch(id, sc);
  if (defer_refresh_) return false;  // the view is being left (ChangeAllocation)
  const Job& j = jobs_[id];
  const JobView& v = JV(id);
  const bool blocked = JobBlocked(id);
  if (blocked == v.blocked && v.contrib_alloc == j.allocated &&
      (blocked || JobKey(id) == QV(j.queue).nb.at(v.heap_pos).key))
    return false;
  if (!blocked && !v.blocked && v.contrib_alloc > 0 && j.allocated > 0) {
    // Running and non-blocked before and after: its normalised term
    // (w/d)·task does not depend on the allocation, only its key moves.
    // The sums are untouched, so this is not counted in q.ops (the drift
    // bound of RebuildNode): a re-sum of a leaf reads every job's records,
    // a cache miss each at 10^5+ jobs.
    JobView& mv = JV(id);
    mv.contrib_alloc = j.allocated;
    QueueView& q = QV(j.queue);
    q.nb.Update(mv.heap_pos, JobKey(id), JobHeapPos());
  } else {
    ReplaceJobContribution(id);
  }
  return true;
}

// Re-derives path_cap for q's subtree and refreshes every job in it.
void TreeShares::RefreshJobsIn(QueueId top, Scratch& sc) {
  std::vector<QueueId> stack{top};
  while (!stack.empty()) {
    QueueId id = stack.back();
    stack.pop_back();
    Queue& q = queues_[id];
    q.path_cap = q.cap_reached | (q.parent == kNone ? 0 : queues_[q.parent].path_cap);
    for (QueueId c : q.children) stack.push_back(c);
    if (q.limits_active)
      for (auto& [uid, u] : q.users) u.exhausted = UserExhausted(id, uid);
    sc.counters.job_refreshes += q.jobs.size();
    for (JobId j : q.jobs) RefreshJob(j, sc);
  }
}

void TreeShares::RecountUsers(QueueId leaf) {
  Queue& q = queues_[leaf];
  q.users.clear();
  q.active_users = 0;
  if (!q.limits_active) return;
  for (JobId jid : q.jobs) {
    const Job& j = jobs_[jid];
    User& u = q.users[j.user];
    if (u.usage.empty()) u.usage.assign(R_, 0);
    for (int r = 0; r < R_; ++r) u.usage[r] += j.allocated * task_[size_t{jid} * R_ + r];
    if (j.tasks > 0 && u.active_jobs++ == 0) ++q.active_users;
  }
  for (auto& [uid, u] : q.users) u.exhausted = UserExhausted(leaf, uid);
}

void TreeShares::ComputeRealCapabilities() {
  // realcap(root) = T; realcap(c) = min(cap_c, realcap(p) - Σ siblings' guarantees)
  std::vector<QueueId> stack{0};
  queues_[0].realcap = total_;
  while (!stack.empty()) {
    const Queue& p = queues_[stack.back()];
    stack.pop_back();
    std::vector<int64_t> gsum(R_, 0);
    for (QueueId c : p.children)
      for (int r = 0; r < R_; ++r) gsum[r] += queues_[c].guar[r];
    for (QueueId c : p.children) {
      Queue& q = queues_[c];
      for (int r = 0; r < R_; ++r) {
        // Clamped: after a capacity decrease realcap may go below zero, and
        // deep below it on a deep path (guarantee sums fit an int64 each).
        const __int128 rc = __int128{p.realcap[r]} - (gsum[r] - q.guar[r]);
        q.realcap[r] = std::min<int64_t>(
            q.cap[r], static_cast<int64_t>(std::max<__int128>(rc, -kUnlimited)));
      }
      stack.push_back(c);
    }
  }
}

ResMask TreeShares::SaturatedNow() const {
  ResMask m = 0;
  for (int r = 0; r < R_; ++r)
    if (free_[r] <= 0) m |= ResMask{1} << r;
  return m;
}

void TreeShares::UpdateSaturation() {
  const ResMask m = SaturatedNow();
  if (m == saturated_) return;
  saturated_ = m;
  SetShareMask();  // the totals did not change (SetCapacity rebuilds all)
}

// share_res_ and total_d_ from saturated_ and total_.
void TreeShares::SetShareResources() {
  total_d_.assign(R_, 0);
  for (int r = 0; r < R_; ++r) total_d_[r] = static_cast<double>(total_[r]);
  SetShareMask();
}

// share_res_ from saturated_ and total_.
void TreeShares::SetShareMask() {
  share_res_ = 0;
  for (int r = 0; r < R_; ++r)
    if (!((saturated_ >> r) & 1) && total_[r] > 0) share_res_ |= ResMask{1} << r;
}

// Sizes every view's arrays to the job and queue tables.
void TreeShares::GrowViews() {
  static_assert(sizeof(JobView) == 16, "a view entry must not straddle cache lines");
  if (views_.empty()) views_.emplace_back();
  for (View& v : views_) {
    if (v.jobs.size() < jobs_.size()) v.jobs.resize(jobs_.size());
    while (v.queues.size() < queues_.size()) {
      v.queues.emplace_back();
      QueueView& q = v.queues.back();
      q.sum_norm.assign(R_, 0);
      q.sum_blk.assign(R_, 0);
      q.U.assign(R_, 0);
      q.wait_min.assign(R_, INT64_MAX);
    }
  }
}

void TreeShares::LinkToLeaf(JobId id) {
  Job& j = jobs_[id];
  Queue& lq = queues_[j.queue];
  j.slot = static_cast<uint32_t>(lq.jobs.size());
  lq.jobs.push_back(id);
  SyncHolder(id);  // a restored job may hold tasks
  // Queue::min_task: a lower bound of the task shapes in each subtree (plans
  // prune with it; never raised, so removals leave it a valid bound).
  const int64_t* t = &task_[size_t{id} * R_];
  for (QueueId a = j.queue; a != kNone; a = queues_[a].parent) {
    bool lowered = false;
    for (int r = 0; r < R_; ++r)
      if (t[r] < queues_[a].min_task[r]) queues_[a].min_task[r] = t[r], lowered = true;
    if (!lowered) break;
  }
  for (View& v : views_)
    if (j.queue < v.queues.size()) v.queues[j.queue].nb.reserve(lq.jobs.size());
}

void TreeShares::DropSavedViews() {
  if (views_.size() > 1) {
    View keep = std::move(views_[cur_]);
    views_.clear();
    views_.push_back(std::move(keep));
    cur_ = 0;
  }
  touched_.clear();
  touched_base_ = 0;
  log_floor_ = 0;
  log_touched_ = false;
  views_[0].log_pos = 0;
  for (const RetiredJob& r : retired_jobs_) {  // no view holds them any more
    jobs_[r.id] = Job();
    free_job_ids_[r.shard].push_back(r.id);
  }
  retired_jobs_.clear();
}

// Called with saturated_ already set to the new set. The current view is
// exact up to log position `exact_to` (the jobs touched after it were not
// re-derived in it: ChangeAllocation defers them when it knows the set
// changes), so it is saved as it is with that position; the view of the
// new set is either caught up from the touched log (the jobs whose inputs
// changed since it was current) or built from scratch.
void TreeShares::SwitchView(uint64_t exact_to) {
  const uint64_t log_end = touched_base_ + touched_.size();
  View& old = views_[cur_];
  old.log_pos = std::min(exact_to, log_end);
  log_floor_ = old.log_pos;  // saved views have read the log up to here at most
  old.last_used = ++view_clock_;
  size_t found = views_.size();
  for (size_t i = 0; i < views_.size(); ++i)
    if (i != cur_ && views_[i].mask == saturated_) found = i;
  const uint64_t limit = live_jobs_ / 2 + 64;
  if (found < views_.size() && log_end - views_[found].log_pos <= limit) {
    cur_ = found;
    View& v = views_[cur_];
    ++main_->counters.view_switches;
    log_touched_ = false;  // the catch-up itself logs nothing (set again below)
    for (uint64_t p = v.log_pos; p < log_end; ++p) {
      JobId j = touched_[p - touched_base_];
      ++main_->counters.view_catchups;
      if (jobs_[j].alive) {
        RefreshJob(j);  // as any refresh: only what changed is redone
        continue;
      }
      // Removed since this view was current (a retired record, Remove):
      // take its contribution out of this view.
      const JobView& jv = JV(j);
      if (!jv.blocked || jv.contrib_alloc != 0) {
        RemoveJobContribution(j);
        MarkDirty(jobs_[j].queue);
      }
    }
    v.log_pos = log_end;
    v.last_used = ++view_clock_;
    Propagate();
  } else {
    if (found < views_.size()) {
      cur_ = found;  // too far behind: rebuild it in place
    } else if (views_.size() < kMaxViews) {
      views_.emplace_back();
      cur_ = views_.size() - 1;
    } else {
      size_t lru = cur_ == 0 ? 1 : 0;
      for (size_t i = 0; i < views_.size(); ++i)
        if (i != cur_ && views_[i].last_used < views_[lru].last_used) lru = i;
      cur_ = lru;
    }
    View& v = views_[cur_];
    v.mask = saturated_;
    v.jobs.clear();
    v.queues.clear();
    GrowViews();
    RebuildView();
    v.log_pos = log_end;
    v.last_used = ++view_clock_;
  }
  log_touched_ = true;
  // Trim the log to what the oldest saved view still needs; drop saved
  // views that fell too far behind to be worth catching up.
  uint64_t need = log_end;
  for (size_t i = 0; i < views_.size(); ++i) {
    if (i == cur_) continue;
    if (log_end - views_[i].log_pos > limit) views_[i].mask = ~ResMask{0};  // never matches
    else need = std::min(need, views_[i].log_pos);
  }
  if (need - touched_base_ > touched_.size() / 2) {
    touched_.erase(touched_.begin(), touched_.begin() + static_cast<ptrdiff_t>(need - touched_base_));
    touched_base_ = need;
  }
}

// Structural change: every saved view is dropped and the current one is
// rebuilt from the raw state.
void TreeShares::RebuildShares() {
  saturated_ = SaturatedNow();
  SetShareResources();  // also when the set is the same: the totals may have changed
  GrowViews();
  DropSavedViews();
  cv().mask = saturated_;
  RebuildView();
}

// Re-derives the raw masks and the current view from scratch.
void TreeShares::RebuildView() {
  ComputeRealCapabilities();
  // Breadth-first order: parents before children.
  std::vector<QueueId> order{0};
  for (size_t i = 0; i < order.size(); ++i)
    for (QueueId c : queues_[order[i]].children) order.push_back(c);
  max_depth_ = 0;
  for (QueueId id : order) {
    Queue& q = queues_[id];
    QueueView& v = QV(id);
    max_depth_ = std::max(max_depth_, q.depth);
    q.cap_reached = 0;
    for (int r = 0; r < R_; ++r)
      if (q.usage[r] >= q.cap[r]) q.cap_reached |= ResMask{1} << r;
    q.path_cap = q.cap_reached | (q.parent == kNone ? 0 : queues_[q.parent].path_cap);
    v.nb.clear();
    std::fill(v.sum_norm.begin(), v.sum_norm.end(), 0.0);
    std::fill(v.sum_blk.begin(), v.sum_blk.end(), 0.0);
    std::fill(v.U.begin(), v.U.end(), 0.0);
    std::fill(v.wait_min.begin(), v.wait_min.end(), INT64_MAX);
    v.n_norm = v.n_blk = 0;
    v.ops = 0;
    v.s = v.key = 0;
    v.blocked = true;
    v.dirty = false;
    v.heap_pos = KeyHeap::kAbsent;
    q.held_mask = 0;
    std::fill(q.held_back.begin(), q.held_back.end(), 0);
  }
  main_->dirty_by_depth.assign(max_depth_ + 1, {});
  if (any_guarantee_) UpdateHeldBack(order, /*refresh=*/false);
  for (QueueId id : order) {
    Queue& q = queues_[id];
    if (!q.children.empty()) continue;
    RecountUsers(id);
    QV(id).nb.reserve(q.jobs.size());  // room for every job: see LinkToLeaf
    for (JobId j : q.jobs) {
      JobView& jv = JV(j);
      jv.heap_pos = KeyHeap::kAbsent;
      jv.blocked = true;
      jv.contrib_alloc = 0;
      AddJobContribution(j);
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    SetAggregate(*it);
    if (queues_[*it].parent != kNone) AddQueueContribution(*it);
  }
  for (QueueId id : order) QV(id).ops = 0;
  ++main_->counters.full_rebuilds;
}

// held_back(Q) = Σ over siblings S of Q and of Q's ancestors of
// max(0, guarantee_S − usage_S), top-down over `order` (parents first).
// With `refresh`, leaves whose held mask flipped refresh their jobs.
void TreeShares::UpdateHeldBack(const std::vector<QueueId>& order, bool refresh) {
  std::vector<int64_t> tot(R_);
  for (QueueId id : order) {
    Queue& p = queues_[id];
    std::fill(tot.begin(), tot.end(), 0);
    for (QueueId c : p.children)
      for (int r = 0; r < R_; ++r)
        tot[r] += std::max<int64_t>(0, queues_[c].guar[r] - queues_[c].usage[r]);
    for (QueueId c : p.children) {
      Queue& q = queues_[c];
      for (int r = 0; r < R_; ++r)
        q.held_back[r] = p.held_back[r] + tot[r] - std::max<int64_t>(0, q.guar[r] - q.usage[r]);
    }
    if (!p.children.empty()) continue;
    ResMask m = 0;
    for (int r = 0; r < R_; ++r)
      if (free_[r] - p.held_back[r] <= 0) m |= ResMask{1} << r;
    if (m != p.held_mask) {
      p.held_mask = m;
      if (refresh) {
        main_->counters.job_refreshes += p.jobs.size();
        for (JobId x : p.jobs) RefreshJob(x);
      }
    }
  }
}

// A shard-local call (sc.local) stops below the root: the root's share of
// the change goes to sc's deltas and lease (folded in by BeginExclusive),
// and the caller has made sure that nothing beyond the shard changes.
void TreeShares::ChangeAllocation(JobId id, int64_t dA, int64_t dT, Scratch& sc) {
  Job& j = jobs_[id];
  const QueueId leaf = j.queue;
  Queue& lq = queues_[leaf];
  const int64_t* t = &task_[size_t{id} * R_];
  const int64_t old_tasks = j.tasks;
  {
    // RefreshJob below updates the job's entry in its leaf's heap: ask for
    // its lines now (their address needs the view entry, itself a miss at
    // 10^5+ jobs unless a batch asked for it), so the misses overlap with
    // the sums along the path.
    PrefetchHeapSift(QV(leaf).nb, JV(id).heap_pos);
  }
  // An Inqueue job's enqueue-gate minimum (GangSize × task) follows its
  // task count (a folded run of task events can change the count of a job
  // that stays Inqueue).
  GateSum* const inq_total = sc.local ? sc.d_inqueue_min : inqueue_min_total_.data();
  const bool recount = dT != 0 && j.state == JobState::kInqueue;
  if (recount) CountInqueueMin(id, -1, inq_total);
  j.allocated += dA;
  j.tasks += dT;
  if (recount) CountInqueueMin(id, +1, inq_total);
  if (dA != 0) SyncHolder(id);
  // The first queue not to update here: the root for a local call.
  const QueueId stop = sc.local ? 0 : kNone;
  ResMask touched = 0;
  int64_t d[kMaxResources];  // 0 where untouched
  if (dA != 0) {
    for (int r = 0; r < R_; ++r) {
      d[r] = dA * t[r];
      if (d[r] == 0) continue;
      touched |= ResMask{1} << r;
      if (sc.local) {
        sc.res[r].lease -= d[r];
        sc.res[r].d_usage += d[r];
      } else {
        free_[r] -= d[r];
        usage_total_[r] += d[r];
      }
    }
  }
  // When the saturated set changes, the current view is left as it was
  // before the event (saved exact up to `event_pos`): the jobs this event
  // touches are only logged (RefreshJob while defer_refresh_), and the view
  // of the new set re-derives them when it catches up. A flip then costs
  // one re-derivation per job instead of one in each view, and a job that
  // flips the set back (release, then allocate) costs the old view nothing
  // when it returns (docs/algorithm.md, "Saturation changes").
  const bool flip = !sc.local && touched != 0 && SaturatedNow() != saturated_;
  uint64_t event_pos = 0;
  if (flip) {
    log_touched_ = true;
    event_pos = touched_base_ + touched_.size();
    log_floor_ = event_pos;
    defer_refresh_ = true;
  }
  Touch(id, sc);
  // Usage, and capability reached or left, per queue on the path (raw
  // masks, shared by all views): one walk up for all resources.
  QueueId top_flip = kNone;
  if (touched) {
    for (QueueId a = leaf; a != stop; a = queues_[a].parent) {
      Queue& q = queues_[a];
      int64_t* const usage = q.usage.data();
      const int64_t* const cap = q.cap.data();
      ResMask at_cap = 0;
      for (int r = 0; r < R_; ++r) {
        usage[r] += d[r];
        at_cap |= ResMask{usage[r] >= cap[r]} << r;
      }
      const ResMask reached = (q.cap_reached & ~touched) | (at_cap & touched);
      if (reached != q.cap_reached) {
        q.cap_reached = reached;
        top_flip = a;
      }
    }
  }
  if (j.state != JobState::kPending) {
    const JobState s = j.allocated > 0 ? JobState::kRunning : JobState::kInqueue;
    if (s != j.state) SetJobState(id, s, sc);
  }
  bool limits_changed = false;
  if (lq.limits_active) {
    User& u = lq.users[j.user];
    if (u.usage.empty()) u.usage.assign(R_, 0);
    for (int r = 0; r < R_; ++r) u.usage[r] += dA * t[r];
    const bool was = old_tasks > 0, is = j.tasks > 0;
    if (was != is) {
      u.active_jobs += is ? 1 : -1;
      if (u.active_jobs == (is ? 1 : 0)) {
        lq.active_users += is ? 1 : -1;
        limits_changed = true;
      }
    }
  }
  if (top_flip == kNone && !(any_guarantee_ && touched) && !lq.limits_active) {
    // The common case: no other job's blocked-ness can have changed, so
    // at most the job's own leaf changed (PropagatePath).
    if (RefreshJobEntry(id, sc)) PropagatePath(leaf, sc);
  } else {
    RefreshJob(id, sc);
    RefreshOthers(id, top_flip, touched != 0, limits_changed, sc);
    Propagate(sc);
  }
  if (!flip) return;  // a local call cannot change the saturated set
  // Every s(U) changes: the view of the new set takes over, caught up from
  // the touched log or built afresh (docs/algorithm.md).
  defer_refresh_ = false;
  UpdateSaturation();
  SwitchView(event_pos);
}

// After job `id`'s allocation changed: refreshes the other jobs whose
// blocked-ness may have changed with it (a capability reached or left at
// `top_flip` and below, held-back guarantees when usage `moved`, the user
// limits of its leaf) and marks what changed dirty.
void TreeShares::RefreshOthers(JobId id, QueueId top_flip, bool moved, bool limits_changed, Scratch& sc) {
  const Job& j = jobs_[id];
  const QueueId leaf = j.queue;
  Queue& lq = queues_[leaf];
  if (top_flip != kNone) RefreshJobsIn(top_flip, sc);
  if (any_guarantee_ && moved) {
    // Held-back amounts and free both moved: re-derive the held masks.
    std::vector<QueueId> order{0};
    for (size_t i = 0; i < order.size(); ++i)
      for (QueueId c : queues_[order[i]].children) order.push_back(c);
    UpdateHeldBack(order, /*refresh=*/true);
  }
  if (limits_changed) {
    RefreshJobsIn(leaf, sc);
  } else if (lq.limits_active) {
    User& u = lq.users[j.user];
    ResMask m = UserExhausted(leaf, j.user);
    if (m != u.exhausted) {
      u.exhausted = m;
      for (JobId x : lq.jobs)
        if (jobs_[x].user == j.user) {
          ++sc.counters.job_refreshes;
          RefreshJob(x, sc);
        }
    }
  }
}

// A new queue's entries in every view (a reused id starts clean).
void TreeShares::AddQueueViews(QueueId id) {
  GrowViews();
  for (View& v : views_) {
    v.queues[id] = QueueView();
    v.queues[id].sum_norm.assign(R_, 0);
    v.queues[id].sum_blk.assign(R_, 0);
    v.queues[id].U.assign(R_, 0);
    v.queues[id].wait_min.assign(R_, INT64_MAX);
  }
}


// The root's aggregates in the current view, re-summed from its children
// (whose own values are exact: shard-local events keep them so).
void TreeShares::RebuildRoot() {
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
void TreeShares::SetAggregate(QueueId id) {
  QueueView& v = QV(id);
  v.blocked = v.nb.empty();
  const double M = v.blocked ? 0.0 : v.nb.top().key;
  for (int r = 0; r < R_; ++r) v.U[r] = M * v.sum_norm[r] + v.sum_blk[r];
  v.s = ShareOf(v.U.data());
  v.key = v.s / queues_[id].weight;
}


QueueInfo TreeShares::GetQueue(QueueId id) const {
  const Queue& q = queues_[id];
  QueueInfo i;
  i.id = id;
  i.path = q.path;
  i.name = q.name;
  i.depth = q.depth;
  i.weight = q.weight;
  i.is_leaf = q.children.empty();
  i.state = q.state;
  i.reclaimable = q.reclaimable;
  i.capability = q.cap.ToVector();
  i.guarantee = q.guar;
  i.usage = q.usage.ToVector();
  i.real_capability = q.realcap;
  const QueueView& v = QV(id);
  i.vector = v.U.ToVector();
  i.share = v.s;
  i.key = v.key;
  i.blocked = v.blocked;
  std::copy(std::begin(q.jobs_by_state), std::end(q.jobs_by_state), i.jobs_by_state);
  i.min_user_limit_percent = q.min_user_limit_percent;
  i.user_limit_factor = q.user_limit_factor;
  i.children = q.children;
  return i;
}


JobInfo TreeShares::GetJob(JobId id) const {
  const Job& j = jobs_[id];
  JobInfo i;
  i.id = id;
  i.name = job_names_[id];
  i.queue = queues_[j.queue].path;
  i.user = user_names_[j.user];
  i.tasks = j.tasks;
  i.allocated = j.allocated;
  i.task.assign(&task_[size_t{id} * R_], &task_[size_t{id} * R_] + R_);
  i.weight = j.weight;
  i.min_available = j.min_available;
  i.seq = j.seq;
  i.state = j.state;
  i.blocked = JV(id).blocked;
  i.key = JobKey(id);
  for (int r = 0; r < R_; ++r)
    if (total_[r] > 0)
      i.drf_share = std::max(i.drf_share, static_cast<double>(j.allocated * i.task[r]) /
                                              static_cast<double>(total_[r]));
  return i;
}


}  // namespace hdrf::engine
