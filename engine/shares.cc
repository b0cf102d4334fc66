// engine::Tree: incremental Dynamic H-DRF shares (SPEC §4) and blocked-ness.
// The algorithm is described in docs/algorithm.md.
#include <algorithm>
#include <cmath>

#include "engine/tree.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

ResMask Tree::RequiredMask(const int64_t* task) const {
  ResMask m = 0;
  for (int r = 0; r < R_; ++r)
    if (task[r] > 0) m |= ResMask{1} << r;
  return m;
}

double Tree::DominantPerTask(const int64_t* task) const {
  double d = 0;
  for (int r = 0; r < R_; ++r) {
    if ((saturated_ >> r) & 1 || total_[r] <= 0) continue;
    d = std::max(d, static_cast<double>(task[r]) / static_cast<double>(total_[r]));
  }
  return d;
}

double Tree::ShareOf(const double* u) const {
  double s = 0;
  for (int r = 0; r < R_; ++r) {
    if ((saturated_ >> r) & 1 || total_[r] <= 0) continue;
    s = std::max(s, u[r] / static_cast<double>(total_[r]));
  }
  return s;
}

double Tree::JobKey(JobId id) const {
  const Job& j = jobs_[id];
  if (j.allocated == 0) return 0;
  const int64_t* t = &task_[size_t{id} * R_];
  double s = 0;
  for (int r = 0; r < R_; ++r) {
    if ((saturated_ >> r) & 1 || total_[r] <= 0) continue;
    s = std::max(s, static_cast<double>(j.allocated * t[r]) / static_cast<double>(total_[r]));
  }
  return s / j.weight;
}

// SPEC §7 with exact integer comparisons where the limit is a ratio:
// usage >= max(B·p/100, B/n)  <=>  100·usage >= B·p  and  n·usage >= B.
ResMask Tree::UserExhausted(QueueId leaf, uint32_t user) const {
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

bool Tree::JobBlocked(JobId id) const {
  const Job& j = jobs_[id];
  if (j.state == JobState::kPending || j.allocated >= j.tasks) return true;
  const Queue& q = queues_[j.queue];
  ResMask m = saturated_ | q.path_cap | q.held_mask;
  if (q.limits_active) m |= UserExhausted(j.queue, j.user);
  return (j.req & m) != 0;
}

void Tree::AddJobContribution(JobId id) {
  Job& j = jobs_[id];
  Queue& q = queues_[j.queue];
  j.blocked = JobBlocked(id);
  j.key = JobKey(id);
  const int64_t* t = &task_[size_t{id} * R_];
  if (j.blocked) {
    if (j.allocated > 0) {
      for (int r = 0; r < R_; ++r) q.sum_blk[r] += static_cast<double>(j.allocated * t[r]);
      ++q.n_blk;
    }
  } else {
    q.nb.Push(j.key, id, [this](uint32_t x) -> uint32_t& { return jobs_[x].heap_pos; });
    if (j.allocated > 0) {
      double d = DominantPerTask(t);
      if (d > 0) {
        double f = j.weight / d;
        for (int r = 0; r < R_; ++r) q.sum_norm[r] += f * static_cast<double>(t[r]);
        ++q.n_norm;
      }
    }
  }
  ++q.ops;
}

void Tree::RemoveJobContribution(JobId id) {
  Job& j = jobs_[id];
  Queue& q = queues_[j.queue];
  const int64_t* t = &task_[size_t{id} * R_];
  if (j.blocked) {
    if (j.allocated > 0) {
      for (int r = 0; r < R_; ++r) q.sum_blk[r] -= static_cast<double>(j.allocated * t[r]);
      if (--q.n_blk == 0) std::fill(q.sum_blk.begin(), q.sum_blk.end(), 0.0);
    }
  } else {
    q.nb.Erase(j.heap_pos, [this](uint32_t x) -> uint32_t& { return jobs_[x].heap_pos; });
    if (j.allocated > 0) {
      double d = DominantPerTask(t);
      if (d > 0) {
        double f = j.weight / d;
        for (int r = 0; r < R_; ++r) q.sum_norm[r] -= f * static_cast<double>(t[r]);
        if (--q.n_norm == 0) std::fill(q.sum_norm.begin(), q.sum_norm.end(), 0.0);
      }
    }
  }
  j.blocked = true;  // not contributing: treat as absent
  ++q.ops;
}

void Tree::AddQueueContribution(QueueId id) {
  Queue& c = queues_[id];
  Queue& p = queues_[c.parent];
  if (c.blocked) {
    for (int r = 0; r < R_; ++r) p.sum_blk[r] += c.U[r];
    ++p.n_blk;
  } else {
    p.nb.Push(c.key, id, [this](uint32_t x) -> uint32_t& { return queues_[x].heap_pos; });
    if (c.s > 0) {
      double f = c.weight / c.s;
      for (int r = 0; r < R_; ++r) p.sum_norm[r] += f * c.U[r];
      ++p.n_norm;
    }
  }
  ++p.ops;
}

void Tree::RemoveQueueContribution(QueueId id) {
  Queue& c = queues_[id];
  Queue& p = queues_[c.parent];
  if (c.blocked) {
    for (int r = 0; r < R_; ++r) p.sum_blk[r] -= c.U[r];
    if (--p.n_blk == 0) std::fill(p.sum_blk.begin(), p.sum_blk.end(), 0.0);
  } else {
    p.nb.Erase(c.heap_pos, [this](uint32_t x) -> uint32_t& { return queues_[x].heap_pos; });
    if (c.s > 0) {
      double f = c.weight / c.s;
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
void Tree::RebuildNode(QueueId id) {
  Queue& q = queues_[id];
  std::fill(q.sum_norm.begin(), q.sum_norm.end(), 0.0);
  std::fill(q.sum_blk.begin(), q.sum_blk.end(), 0.0);
  q.n_norm = q.n_blk = 0;
  if (q.children.empty()) {
    for (JobId jid : q.jobs) {
      const Job& j = jobs_[jid];
      if (j.allocated == 0) continue;
      const int64_t* t = &task_[size_t{jid} * R_];
      if (j.blocked) {
        for (int r = 0; r < R_; ++r) q.sum_blk[r] += static_cast<double>(j.allocated * t[r]);
        ++q.n_blk;
      } else if (double d = DominantPerTask(t); d > 0) {
        double f = j.weight / d;
        for (int r = 0; r < R_; ++r) q.sum_norm[r] += f * static_cast<double>(t[r]);
        ++q.n_norm;
      }
    }
  } else {
    for (QueueId cid : q.children) {
      const Queue& c = queues_[cid];
      if (c.blocked) {
        for (int r = 0; r < R_; ++r) q.sum_blk[r] += c.U[r];
        ++q.n_blk;
      } else if (c.s > 0) {
        double f = c.weight / c.s;
        for (int r = 0; r < R_; ++r) q.sum_norm[r] += f * c.U[r];
        ++q.n_norm;
      }
    }
  }
  q.ops = 0;
  ++counters_.node_rebuilds;
}

void Tree::MarkDirty(QueueId id) {
  Queue& q = queues_[id];
  if (q.dirty) return;
  q.dirty = true;
  if (dirty_by_depth_.size() <= static_cast<size_t>(q.depth)) dirty_by_depth_.resize(q.depth + 1);
  dirty_by_depth_[q.depth].push_back(id);
}

// U = M·sum_norm + sum_blk with M the smallest non-blocked key. When the
// result differs from what the parent holds, the parent's aggregates are
// updated and the parent is marked dirty.
void Tree::RecomputeQueue(QueueId id) {
  Queue& q = queues_[id];
  const bool blocked = q.nb.empty();
  const double M = blocked ? 0.0 : q.nb.top().key;
  double U[kMaxResources];
  bool same = blocked == q.blocked;
  for (int r = 0; r < R_; ++r) {
    U[r] = M * q.sum_norm[r] + q.sum_blk[r];
    same = same && U[r] == q.U[r];
  }
  if (same) return;
  const bool has_parent = q.parent != kNone;
  if (has_parent && !blocked && !q.blocked) {
    // Stays non-blocked: move its heap entry, swap its normalised term.
    Queue& p = queues_[q.parent];
    const double s_new = ShareOf(U);
    if (q.s > 0) {
      const double f = q.weight / q.s;
      for (int r = 0; r < R_; ++r) p.sum_norm[r] -= f * q.U[r];
      --p.n_norm;
    }
    if (s_new > 0) {
      const double f = q.weight / s_new;
      for (int r = 0; r < R_; ++r) p.sum_norm[r] += f * U[r];
      ++p.n_norm;
    }
    if (p.n_norm == 0) std::fill(p.sum_norm.begin(), p.sum_norm.end(), 0.0);
    std::copy(U, U + R_, q.U.begin());
    q.s = s_new;
    q.key = s_new / q.weight;
    p.nb.Update(q.heap_pos, q.key, [this](uint32_t x) -> uint32_t& { return queues_[x].heap_pos; });
    ++p.ops;
    MarkDirty(q.parent);
    return;
  }
  if (has_parent) RemoveQueueContribution(id);
  q.blocked = blocked;
  std::copy(U, U + R_, q.U.begin());
  q.s = ShareOf(U);
  q.key = q.s / q.weight;
  if (has_parent) {
    AddQueueContribution(id);
    MarkDirty(q.parent);
  }
}

void Tree::Propagate() {
  for (int d = static_cast<int>(dirty_by_depth_.size()) - 1; d >= 0; --d) {
    auto& bucket = dirty_by_depth_[d];
    for (size_t i = 0; i < bucket.size(); ++i) {
      QueueId id = bucket[i];
      Queue& q = queues_[id];
      if (!q.alive) continue;
      q.dirty = false;
      const size_t fan = q.children.empty() ? q.jobs.size() : q.children.size();
      if (q.ops > 2 * fan + 32) RebuildNode(id);
      RecomputeQueue(id);
    }
    bucket.clear();
  }
}

void Tree::RefreshJob(JobId id) {
  Job& j = jobs_[id];
  ++counters_.job_refreshes;
  const bool blocked = JobBlocked(id);
  if (blocked == j.blocked && (blocked || JobKey(id) == j.key)) return;
  RemoveJobContribution(id);
  AddJobContribution(id);
  MarkDirty(j.queue);
}

// Re-derives path_cap for q's subtree and refreshes every job in it.
void Tree::RefreshJobsIn(QueueId top) {
  std::vector<QueueId> stack{top};
  while (!stack.empty()) {
    QueueId id = stack.back();
    stack.pop_back();
    Queue& q = queues_[id];
    q.path_cap = q.cap_reached | (q.parent == kNone ? 0 : queues_[q.parent].path_cap);
    for (QueueId c : q.children) stack.push_back(c);
    if (q.limits_active)
      for (auto& [uid, u] : q.users) u.exhausted = UserExhausted(id, uid);
    for (JobId j : q.jobs) RefreshJob(j);
  }
}

void Tree::RecountUsers(QueueId leaf) {
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

void Tree::ComputeRealCapabilities() {
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
      for (int r = 0; r < R_; ++r)
        q.realcap[r] = std::min(q.cap[r], p.realcap[r] - (gsum[r] - q.guar[r]));
      stack.push_back(c);
    }
  }
}

void Tree::UpdateSaturation() {
  ResMask m = 0;
  for (int r = 0; r < R_; ++r)
    if (free_[r] <= 0) m |= ResMask{1} << r;
  saturated_ = m;
}

void Tree::RebuildAll() {
  UpdateSaturation();
  ComputeRealCapabilities();
  // Breadth-first order: parents before children.
  std::vector<QueueId> order{0};
  for (size_t i = 0; i < order.size(); ++i)
    for (QueueId c : queues_[order[i]].children) order.push_back(c);
  max_depth_ = 0;
  for (QueueId id : order) {
    Queue& q = queues_[id];
    max_depth_ = std::max(max_depth_, q.depth);
    q.cap_reached = 0;
    for (int r = 0; r < R_; ++r)
      if (q.usage[r] >= q.cap[r]) q.cap_reached |= ResMask{1} << r;
    q.path_cap = q.cap_reached | (q.parent == kNone ? 0 : queues_[q.parent].path_cap);
    q.nb.clear();
    std::fill(q.sum_norm.begin(), q.sum_norm.end(), 0.0);
    std::fill(q.sum_blk.begin(), q.sum_blk.end(), 0.0);
    std::fill(q.U.begin(), q.U.end(), 0.0);
    q.n_norm = q.n_blk = 0;
    q.ops = 0;
    q.s = q.key = 0;
    q.blocked = true;
    q.dirty = false;
    q.heap_pos = KeyHeap::kAbsent;
    q.held_mask = 0;
    std::fill(q.held_back.begin(), q.held_back.end(), 0);
  }
  dirty_by_depth_.assign(max_depth_ + 1, {});
  if (any_guarantee_) {
    for (QueueId id : order) {
      Queue& p = queues_[id];
      std::vector<int64_t> tot(R_, 0);
      for (QueueId c : p.children)
        for (int r = 0; r < R_; ++r)
          tot[r] += std::max<int64_t>(0, queues_[c].guar[r] - queues_[c].usage[r]);
      for (QueueId c : p.children) {
        Queue& q = queues_[c];
        for (int r = 0; r < R_; ++r)
          q.held_back[r] = p.held_back[r] + tot[r] - std::max<int64_t>(0, q.guar[r] - q.usage[r]);
      }
      if (p.children.empty())
        for (int r = 0; r < R_; ++r)
          if (free_[r] - p.held_back[r] <= 0) p.held_mask |= ResMask{1} << r;
    }
  }
  for (QueueId id : order) {
    Queue& q = queues_[id];
    if (!q.children.empty()) continue;
    RecountUsers(id);
    for (JobId j : q.jobs) {
      jobs_[j].heap_pos = KeyHeap::kAbsent;
      AddJobContribution(j);
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Queue& q = queues_[*it];
    q.blocked = q.nb.empty();
    const double M = q.blocked ? 0.0 : q.nb.top().key;
    for (int r = 0; r < R_; ++r) q.U[r] = M * q.sum_norm[r] + q.sum_blk[r];
    q.s = ShareOf(q.U.data());
    q.key = q.s / q.weight;
    q.ops = 0;
    if (q.parent != kNone) AddQueueContribution(*it);
  }
  for (QueueId id : order) queues_[id].ops = 0;
  ++counters_.full_rebuilds;
}

void Tree::ChangeAllocation(JobId id, int64_t dA, int64_t dT) {
  Job& j = jobs_[id];
  const QueueId leaf = j.queue;
  Queue& lq = queues_[leaf];
  const int64_t* t = &task_[size_t{id} * R_];
  const bool was_running_nb = !j.blocked && j.allocated > 0;
  if (!was_running_nb) RemoveJobContribution(id);
  const int64_t old_tasks = j.tasks;
  j.allocated += dA;
  j.tasks += dT;
  ResMask touched = 0;
  if (dA != 0) {
    for (int r = 0; r < R_; ++r) {
      const int64_t d = dA * t[r];
      if (d == 0) continue;
      touched |= ResMask{1} << r;
      free_[r] -= d;
      usage_total_[r] += d;
      for (QueueId a = leaf; a != kNone; a = queues_[a].parent) queues_[a].usage[r] += d;
    }
  }
  if (j.state != JobState::kPending)
    SetJobState(id, j.allocated > 0 ? JobState::kRunning : JobState::kInqueue);
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
  const ResMask old_sat = saturated_;
  UpdateSaturation();
  if (saturated_ != old_sat) {
    // Every s(U) changes: re-derive everything (docs/algorithm.md).
    RebuildAll();
    return;
  }
  if (was_running_nb) {
    // A running non-blocked job's normalised term (w/d)·task does not depend
    // on its allocation: if it stays running and non-blocked only its key
    // moves in the heap.
    if (j.allocated > 0 && !JobBlocked(id)) {
      j.key = JobKey(id);
      lq.nb.Update(j.heap_pos, j.key, [this](uint32_t x) -> uint32_t& { return jobs_[x].heap_pos; });
      ++lq.ops;
    } else {
      // Take the contribution out as it was (allocation before the change).
      j.allocated -= dA;
      RemoveJobContribution(id);
      j.allocated += dA;
      AddJobContribution(id);
    }
  } else {
    AddJobContribution(id);
  }
  MarkDirty(leaf);
  // A capability reached or left refreshes the jobs below that queue.
  QueueId top_flip = kNone;
  if (touched) {
    for (QueueId a = leaf; a != kNone; a = queues_[a].parent) {
      Queue& q = queues_[a];
      ResMask reached = q.cap_reached & ~touched;
      for (int r = 0; r < R_; ++r)
        if (((touched >> r) & 1) && q.usage[r] >= q.cap[r]) reached |= ResMask{1} << r;
      if (reached != q.cap_reached) {
        q.cap_reached = reached;
        top_flip = a;
      }
    }
  }
  if (top_flip != kNone) RefreshJobsIn(top_flip);
  if (any_guarantee_ && touched) {
    // Held-back amounts and free both moved: re-derive the held masks.
    std::vector<QueueId> order{0};
    for (size_t i = 0; i < order.size(); ++i) {
      Queue& p = queues_[order[i]];
      std::vector<int64_t> tot(R_, 0);
      for (QueueId c : p.children) {
        order.push_back(c);
        for (int r = 0; r < R_; ++r)
          tot[r] += std::max<int64_t>(0, queues_[c].guar[r] - queues_[c].usage[r]);
      }
      for (QueueId c : p.children) {
        Queue& q = queues_[c];
        for (int r = 0; r < R_; ++r)
          q.held_back[r] = p.held_back[r] + tot[r] - std::max<int64_t>(0, q.guar[r] - q.usage[r]);
      }
      if (p.children.empty()) {
        ResMask m = 0;
        for (int r = 0; r < R_; ++r)
          if (free_[r] - p.held_back[r] <= 0) m |= ResMask{1} << r;
        if (m != p.held_mask) {
          p.held_mask = m;
          for (JobId x : p.jobs) RefreshJob(x);
        }
      }
    }
  }
  if (limits_changed) {
    RefreshJobsIn(leaf);
  } else if (lq.limits_active) {
    User& u = lq.users[j.user];
    ResMask m = UserExhausted(leaf, j.user);
    if (m != u.exhausted) {
      u.exhausted = m;
      for (JobId x : lq.jobs)
        if (jobs_[x].user == j.user) RefreshJob(x);
    }
  }
  Propagate();
}

}  // namespace hdrf::engine
