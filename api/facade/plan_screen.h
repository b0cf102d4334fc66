// Internal: a necessary test for Engine::Plan, the order of waiting leaves
// and jobs, and PlanSession (one exclusive section for many of these), for
// hosts that ask for many plans on one state (the reclaim phase of hdrf
// simulate, api/sim/simulate.cc).
#ifndef HDRF_API_FACADE_PLAN_SCREEN_H_
#define HDRF_API_FACADE_PLAN_SCREEN_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "hdrf/engine.h"
#include "api/facade/engine_access.h"
#include "engine/concurrent_tree.h"
#include "engine/tree.h"

namespace hdrf {

// PlanMayTake's numbers for one state of the engine (per queue, the largest
// shares among its children). Clear() it whenever the engine's state may
// have changed since the last call, or, when the only changes are task
// events (allocations) of jobs of some leaves and submissions to them, name
// those leaves (PlanSession::Changed): only the numbers of their ancestors
// are computed again. Each queue's own shares are kept across Clear()
// with the numbers they were computed from, and computed again only when
// those differ (engine::Tree::ScreenCache).
class PlanScreen {
 public:
  void Clear() { ++cache_.gen; }

 private:
  friend class PlanSession;
  friend void SetTaskShapes(const Engine&, const std::vector<int64_t>&, PlanScreen*);
  engine::Tree::ScreenCache cache_;
};

// False only when engine.Plan(job, options) would give no victims (it
// fails, or the demand already fits) on the current state; true where Plan
// returns an error. Cheap where a plan needs reclaim (docs/spec.md §15, the
// transfer rule against the largest sibling share at each level of the
// job's path); with preemption it is always true.
bool PlanMayTake(const Engine& engine, JobRef job, const PlanOptions& options, PlanScreen* screen);
// Tells `screen` that every job's task, now and until it is told again, is
// one of `shapes` (one amount per resource in the engine's order, flattened):
// PlanMayTake then also bounds what a plan's units can free in each
// resource (the transfer rule keeps each giver's share from falling below
// the taker's) and says false when that is short of the demand. A shape of
// another length is ignored: the bound is off.
void SetTaskShapes(const Engine& engine, const std::vector<int64_t>& shapes, PlanScreen* screen);

// The same test for every job of leaf `leaf` whose demand needs some
// resource, in mode reclaim: false only when PlanMayTake (mode reclaim) is
// false for each of them. False for an unknown queue or one not a leaf.
// With `least` (one amount per resource in the engine's order): only for
// the jobs whose demand is at least `least` in every resource.
bool LeafMayTake(const Engine& engine, QueueId leaf, PlanScreen* screen,
                 const std::vector<int64_t>* least = nullptr);

// The first `limit` leaves engine.WaitingOrder goes through, in its order,
// for a host that keeps its own count of what it passes over, as a reclaim
// phase does after each applied plan: untried[q] (indexed by QueueId,
// every queue) must be the number of waiting jobs in q's subtree not
// passed over. Reads no job.
void WaitingLeaves(const Engine& engine, const std::vector<int64_t>& untried, size_t limit,
                   std::vector<QueueId>* out);
// engine.WaitingOrder's first `limit` jobs among `jobs` in leaf `leaf`
// (others passed over), in that order: for a host that knows which of the
// leaf's jobs can come first (engine/tree_schedule.h, Tree::LeafOrderOf).
void LeafOrderOf(const Engine& engine, QueueId leaf, const std::vector<JobId>& jobs, size_t limit,
                 std::vector<JobRef>* out);
// Whether, in each leaf's part of engine.WaitingOrder, the waiting jobs
// that hold a task come after all those that hold none (then taken by
// submission), for jobs of the task shapes `shapes` (one amount per
// resource in the engine's order, flattened) with weights at most
// `max_weight` (engine/tree_schedule.h, Tree::HeldAfterIdle). The answer
// changes only with ShareResources.
bool HeldAfterIdle(const Engine& engine, const std::vector<int64_t>& shapes, double max_weight);
// The resources that count in a share on the current state (a bit per
// resource in the engine's order).
uint64_t ShareResources(const Engine& engine);


// Where a walk of PlanSession::NextWaitingLeaves stands (a default one, or
// one Clear()ed, starts at the root).
using LeafWalk = engine::Tree::LeafWalk;

// One exclusive section of the engine for a run of the calls above, for a
// host that asks many of them on one state (a reclaim phase asks a few
// screens, orders and plans per applied plan): each free function enters
// a section of its own (the lock, the shards' counts folded in), which
// costs about as much as a screen. A session's calls give what the free
// functions (and Engine::Plan) give. Thread safety: the session holds the
// engine's exclusive lock from its construction to its destruction, so
// the thread that holds it must make no other call on the engine in
// between (the lock is not reentrant: that call would wait forever), and
// other threads wait for it; a host closes it before it changes the state
// (ApplyPlan, a fill, task events).
class PlanSession {
 public:
  explicit PlanSession(const Engine& engine);
  PlanSession(const PlanSession&) = delete;
  PlanSession& operator=(const PlanSession&) = delete;

  bool PlanMayTake(JobRef job, const PlanOptions& options, PlanScreen* screen) const;
  bool LeafMayTake(QueueId leaf, PlanScreen* screen, const std::vector<int64_t>* least = nullptr) const;
  void WaitingLeaves(const std::vector<int64_t>& untried, size_t limit, std::vector<QueueId>* out) const;
  // WaitingLeaves in pieces on one state (engine/tree_schedule.h,
  // Tree::NextWaitingLeaves): the next `limit` leaves, going on with
  // `walk`, for a host that passes over every job of the leaves it was
  // given before it asks for more. Clear() the walk when the state changes.
  void NextWaitingLeaves(const std::vector<int64_t>& untried, size_t limit, LeafWalk* walk,
                         std::vector<QueueId>* out) const;
  void LeafOrderOf(QueueId leaf, const std::vector<JobId>& jobs, size_t limit, std::vector<JobRef>* out) const;
  bool HeldAfterIdle(const std::vector<int64_t>& shapes, double max_weight) const;
  uint64_t ShareResources() const;
  // The state changed since `screen` was last used only by allocations of
  // jobs of `leaves` (tasks started, ended or evicted, plans applied) and
  // submissions to them: no queue, weight or the cluster changed. Cheaper
  // than screen->Clear(), with the same answers after it (PlanScreen).
  void Changed(PlanScreen* screen, const std::vector<QueueId>& leaves) const;
  // Engine::Plan.
  StatusOr<Plan> MakePlan(JobRef job, const PlanOptions& options) const;

 private:
  engine::ConcurrentTree::Exclusive lock_;
  // The tree and the last event's number, read once the lock is held
  // (neither changes while it is).
  const engine::Tree& t_;
  uint64_t last_seq_;
};

}  // namespace hdrf

#endif  // HDRF_API_FACADE_PLAN_SCREEN_H_
