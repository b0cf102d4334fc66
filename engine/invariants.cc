// engine::Tree::CheckInvariants: recomputes every derived value from the raw
// state, without the incremental aggregates, and compares. Used by tests.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "engine/tree.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

Status Tree::CheckInvariants(double tol) const {
  std::vector<std::vector<int64_t>> usage;
  HDRF_RETURN_IF_ERROR(CheckRawSums(&usage));
  return CheckViews(usage, tol);
}

Status Tree::CheckRawSums(std::vector<std::vector<int64_t>>* usage_out) const {
  std::vector<std::vector<int64_t>>& usage = *usage_out;
  usage.assign(queues_.size(), std::vector<int64_t>(R_, 0));
  std::vector<int64_t> free = total_;
  for (JobId id = 0; id < jobs_.size(); ++id) {
    const Job& j = jobs_[id];
    if (!j.alive) continue;
    for (int r = 0; r < R_; ++r) {
      const int64_t a = j.allocated * task_[size_t{id} * R_ + r];
      free[r] -= a;
      for (QueueId q = j.queue; q != kNone; q = queues_[q].parent) usage[q][r] += a;
    }
  }
  if (free != free_) return Status::Internal("free differs from the sum of allocations");
  ResMask sat = 0;
  for (int r = 0; r < R_; ++r)
    if (free[r] <= 0) sat |= ResMask{1} << r;
  if (sat != saturated_) return Status::Internal("saturated set is stale");
  for (QueueId q = 0; q < queues_.size(); ++q)
    if (queues_[q].alive && usage[q] != queues_[q].usage)
      return Status::Internal("usage of " + queues_[q].path + " is stale");
  // Queue::min_task bounds every task shape below it (plans prune with it).
  for (JobId id = 0; id < jobs_.size(); ++id) {
    if (!jobs_[id].alive) continue;
    for (QueueId a = jobs_[id].queue; a != kNone; a = queues_[a].parent)
      for (int r = 0; r < R_; ++r)
        if (queues_[a].min_task[r] > task_[size_t{id} * R_ + r])
          return Status::Internal("min_task of " + queues_[a].path + " is above a task of job " + job_names_[id]);
  }
  // Queue::holders: exactly the live jobs with allocated > 0, each at its
  // Job::holder_slot in its own leaf's list.
  for (QueueId q = 0; q < queues_.size(); ++q) {
    const std::vector<JobId>& h = queues_[q].holders;
    if (!h.empty() && (!queues_[q].alive || !queues_[q].children.empty()))
      return Status::Internal("queue #" + std::to_string(q) + " lists holders but is not a live leaf");
    for (size_t k = 0; k < h.size(); ++k)
      if (h[k] >= jobs_.size() || !jobs_[h[k]].alive || jobs_[h[k]].queue != q || jobs_[h[k]].holder_slot != k)
        return Status::Internal("holders of " + queues_[q].path + ": entry " + std::to_string(k) +
                                " is not a job of the leaf at that slot");
  }
  for (JobId id = 0; id < jobs_.size(); ++id) {
    const Job& j = jobs_[id];
    const bool listed = j.holder_slot != Job::kNoSlot;
    if (j.alive ? listed != (j.allocated > 0) : listed)
      return Status::Internal("job #" + std::to_string(id) + (j.alive ? " " + job_names_[id] : std::string()) +
                              (listed ? ": in holders without holding a task" : ": holds tasks but is not in holders"));
    if (listed && (j.queue >= queues_.size() || j.holder_slot >= queues_[j.queue].holders.size() ||
                   queues_[j.queue].holders[j.holder_slot] != id))
      return Status::Internal("job " + job_names_[id] + ": holder_slot does not point at it");
  }
  // The enqueue gate's per-leaf sums.
  std::vector<std::vector<GateSum>> inq(queues_.size(), std::vector<GateSum>(R_, 0));
  for (JobId id = 0; id < jobs_.size(); ++id)
    if (jobs_[id].alive && jobs_[id].state == JobState::kInqueue)
      for (int r = 0; r < R_; ++r)
        inq[jobs_[id].queue][r] += GateSum{GangSize(id)} * task_[size_t{id} * R_ + r];
  for (QueueId q = 0; q < queues_.size(); ++q)
    if (queues_[q].alive && inq[q] != queues_[q].inqueue_min)
      return Status::Internal("inqueue_min of " + queues_[q].path + " is stale");
  return Status::Ok();
}

Status Tree::CheckViews(const std::vector<std::vector<int64_t>>& usage, double tol) const {
  ResMask sat = saturated_;  // equal to the sums' (CheckRawSums)
  const std::vector<int64_t>& free = free_;
  // held_back(Q) from its definition.
  auto held_back = [&](QueueId leaf) {
    std::vector<int64_t> hb(R_, 0);
    for (QueueId a = leaf; queues_[a].parent != kNone; a = queues_[a].parent)
      for (QueueId s : queues_[queues_[a].parent].children)
        if (s != a)
          for (int r = 0; r < R_; ++r)
            hb[r] += std::max<int64_t>(0, queues_[s].guar[r] - usage[s][r]);
    return hb;
  };

  struct Val {
    std::vector<double> U;
    double s = 0;
    bool blocked = true;
  };
  auto share = [&](const std::vector<double>& u) {
    double s = 0;
    for (int r = 0; r < R_; ++r)
      if (!((sat >> r) & 1) && total_[r] > 0) s = std::max(s, u[r] / static_cast<double>(total_[r]));
    return s;
  };
  std::string err;
  std::function<Val(QueueId)> eval = [&](QueueId qid) -> Val {
    const Queue& q = queues_[qid];
    std::vector<std::pair<Val, double>> kids;  // value, weight
    if (q.children.empty()) {
      std::vector<int64_t> hb = held_back(qid);
      ResMask capmask = 0;
      for (QueueId a = qid; a != kNone; a = queues_[a].parent)
        for (int r = 0; r < R_; ++r)
          if (usage[a][r] >= queues_[a].cap[r]) capmask |= ResMask{1} << r;
      for (JobId jid : q.jobs) {
        const Job& j = jobs_[jid];
        const int64_t* t = &task_[size_t{jid} * R_];
        ResMask m = sat | capmask;
        for (int r = 0; r < R_; ++r)
          if (free[r] - hb[r] <= 0) m |= ResMask{1} << r;
        if (q.limits_active) m |= UserExhausted(qid, j.user);
        Val v;
        v.blocked = j.state == JobState::kPending || j.allocated >= j.tasks || (j.req & m) != 0;
        v.U.resize(R_);
        for (int r = 0; r < R_; ++r) v.U[r] = static_cast<double>(j.allocated * t[r]);
        v.s = share(v.U);
        const JobView& jv = JV(jid);
        if (v.blocked != jv.blocked && err.empty()) err = "job " + job_names_[jid] + ": blocked flag is stale";
        if (jv.contrib_alloc != j.allocated && err.empty()) err = "job " + job_names_[jid] + ": contribution is stale";
        // A non-blocked job's key lives in its leaf's heap entry.
        const KeyHeap& nb = QV(qid).nb;
        if (!v.blocked && (jv.heap_pos >= nb.size() || nb.at(jv.heap_pos).id != jid) && err.empty())
          err = "job " + job_names_[jid] + ": heap entry is stale";
        const double key = jv.heap_pos < nb.size() ? nb.at(jv.heap_pos).key : JobKey(jid);
        if (!v.blocked && std::abs(v.s / j.weight - key) > tol && err.empty())
          err = "job " + job_names_[jid] + ": key " + std::to_string(key) + " != " + std::to_string(v.s / j.weight);
        kids.emplace_back(std::move(v), j.weight);
      }
      if (Status b = CheckWaitBound(qid); !b.ok() && err.empty()) err = b.message();
      // The batch prefetcher reads the heap's buffer without the shard lock:
      // a local event's push must never move it (Tree::LinkToLeaf).
      if (QV(qid).nb.capacity() < q.jobs.size() && err.empty())
        err = "queue " + q.path + ": leaf heap has room for fewer than its jobs";
    } else {
      for (QueueId c : q.children) kids.emplace_back(eval(c), queues_[c].weight);
    }
    Val out;
    out.U.assign(R_, 0);
    double M = INFINITY;
    for (auto& [v, w] : kids)
      if (!v.blocked) M = std::min(M, v.s / w);
    out.blocked = std::isinf(M);
    for (auto& [v, w] : kids) {
      if (v.blocked) {
        for (int r = 0; r < R_; ++r) out.U[r] += v.U[r];
      } else if (v.s > 0) {
        for (int r = 0; r < R_; ++r) out.U[r] += M * w / v.s * v.U[r];
      }
    }
    out.s = share(out.U);
    const QueueView& qv = QV(qid);
    if (out.blocked != qv.blocked && err.empty()) err = "queue " + q.path + ": blocked flag is stale";
    for (int r = 0; r < R_ && err.empty(); ++r)
      // Relative to the cluster's total as well: U is in the resource's
      // units (memory in bytes, ~1e11), and the incremental sums that
      // cancel to a true 0 keep rounding noise of that magnitude times
      // 2^-52 (power_cut_test met 1e-7 bytes against 0); what matters is the
      // share, U / total, which the key check below holds to `tol`.
      if (std::abs(out.U[r] - qv.U[r]) >
          tol * std::max({1.0, std::abs(out.U[r]), static_cast<double>(total_[r])}))
        err = "queue " + q.path + ": U[" + names_[r] + "] " + std::to_string(qv.U[r]) +
              " != " + std::to_string(out.U[r]);
    if (std::abs(out.s / q.weight - qv.key) > tol && err.empty())
      err = "queue " + q.path + ": key is stale";
    return out;
  };
  eval(0);
  if (!err.empty()) return Status::Internal(err);
  return Status::Ok();
}

}  // namespace hdrf::engine
