// Internal: a necessary test for Engine::Plan, for hosts that ask for many
// plans on one state (the reclaim phase of hdrf simulate, api/sim/simulate.cc).
#ifndef HDRF_API_FACADE_PLAN_SCREEN_H_
#define HDRF_API_FACADE_PLAN_SCREEN_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "hdrf/engine.h"
#include "engine/tree.h"

namespace hdrf {

// PlanMayTake's numbers for one state of the engine (per queue, the largest
// shares among its children). Clear() it whenever the engine's state may
// have changed since the last call.
class PlanScreen {
 public:
  void Clear() { ++gen_; }

 private:
  friend bool PlanMayTake(const Engine&, JobRef, const PlanOptions&, PlanScreen*);
  friend bool LeafMayTake(const Engine&, QueueId, PlanScreen*);
  std::vector<engine::Tree::ChildShares> tops_;
  uint64_t gen_ = 1;
};

// False only when engine.Plan(job, options) would give no victims (it
// fails, or the demand already fits) on the current state; true where Plan
// returns an error. Cheap where a plan needs reclaim (docs/spec.md §15, the
// transfer rule against the largest sibling share at each level of the
// job's path); with preemption it is always true.
bool PlanMayTake(const Engine& engine, JobRef job, const PlanOptions& options, PlanScreen* screen);

// The same test for every job of leaf `leaf` whose demand needs some
// resource, in mode reclaim: false only when PlanMayTake (mode reclaim) is
// false for each of them. False for an unknown queue or one not a leaf.
bool LeafMayTake(const Engine& engine, QueueId leaf, PlanScreen* screen);

// engine.WaitingOrder's first `limit` jobs (into *out) for a host that
// keeps its own count of what it passes over, as a reclaim phase does
// after each applied plan: a job is passed over when passed(its id), and
// untried[q] (indexed by QueueId, every queue) must be the number of
// waiting jobs in q's subtree not passed over. Only the subtrees the
// prefix comes from are read. Internal when an entered queue shows a count
// wrong.
Status WaitingPrefix(const Engine& engine, const std::function<bool(JobId)>& passed,
                     const std::vector<int64_t>& untried, size_t limit, std::vector<JobRef>* out);
// The first `limit` leaves that order goes through, in its order, from the
// counts alone.
void WaitingLeaves(const Engine& engine, const std::vector<int64_t>& untried, size_t limit,
                   std::vector<QueueId>* out);

}  // namespace hdrf

#endif  // HDRF_API_FACADE_PLAN_SCREEN_H_
