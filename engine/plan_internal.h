// engine/plan.cc and engine/plan_screen.cc: what a plan computation keeps
// (docs/spec.md §15): the overlay of units taken (PlanState), the waiting job and its
// demand (PlanCtx), and the plain dominant share. Internal to engine/.
#ifndef HDRF_ENGINE_PLAN_INTERNAL_H_
#define HDRF_ENGINE_PLAN_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/tree_decisions.h"
#include "engine/tree_internal.h"

namespace hdrf {
namespace engine {

// docs/spec.md §15: shares within this distance are equal.
inline constexpr double kPlanEps = 1e-9;

// What a plan has taken so far, over the live tree: per job the tasks
// taken, per queue the usage taken (R amounts per entry of dq, kept apart
// from the ids so that a lookup scans a few contiguous ids), and the free
// amounts given back.
struct TreeDecisions::PlanState {
  explicit PlanState(int r) : R(r) {}
  // Empty again for R resources, the buffers kept (a reused state costs
  // no allocation).
  void Reset(int r) {
    R = r;
    taken.clear();
    dq.clear();
    dq_d.clear();
    dfree.fill(0);
    dq_bits = 0;
  }
  int R;
  std::vector<std::pair<JobId, int64_t>> taken;  // job -> tasks taken
  std::vector<QueueId> dq;
  std::vector<int64_t> dq_d;                     // usage taken, R per entry of dq
  std::array<int64_t, kMaxResources> dfree{};    // free given back

  int64_t Taken(JobId v) const {
    for (const auto& [j, n] : taken)
      if (j == v) return n;
    return 0;
  }
  uint64_t dq_bits = 0;  // bit q % 64 of every queue in dq: most lookups miss
  const int64_t* Usage(QueueId q) const {  // null: nothing taken under q
    if (!((dq_bits >> (q % 64)) & 1)) return nullptr;
    for (size_t i = 0; i < dq.size(); ++i)
      if (dq[i] == q) return &dq_d[i * R];
    return nullptr;
  }
  int64_t* UsageToChange(QueueId q) {
    if (const int64_t* d = Usage(q)) return const_cast<int64_t*>(d);
    dq_bits |= uint64_t{1} << (q % 64);
    dq.push_back(q);
    dq_d.resize(dq_d.size() + R, 0);
    return &dq_d[dq_d.size() - R];
  }
};

// The waiting job J and its demand D = k·task_J.
struct TreeDecisions::PlanCtx {
  JobId j = kNone;
  QueueId leaf = kNone;
  int64_t k = 0;
  PlanMode mode = PlanMode::kReclaim;
  std::array<int64_t, kMaxResources> D{};
  std::vector<QueueId> path;  // J's leaf up to root
  int leaf_depth = 0;
  bool OnPath(const TreeDecisions& t, QueueId q) const {
    const int d = t.queues_[q].depth;
    return d <= leaf_depth && path[leaf_depth - d] == q;
  }
};

// Usage of queue q on the plan's state.
inline int64_t UsageOn(const int64_t* live, const int64_t* taken, int r) {
  return live[r] - (taken ? taken[r] : 0);
}

inline double TreeDecisions::PlainShare(const int64_t* y) const {
  double s = 0;
  for (int r = 0; r < R_; ++r)
    if (total_[r] > 0) s = std::max(s, static_cast<double>(y[r]) / static_cast<double>(total_[r]));
  return s;
}

}  // namespace engine
}  // namespace hdrf

#endif  // HDRF_ENGINE_PLAN_INTERNAL_H_
