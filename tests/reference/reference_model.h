// ReferenceModel: a deliberately simple, full-recompute implementation of
// docs/spec.md §3-§8, §12, §14 and §15 (queue tree rules, Dynamic H-DRF shares,
// scheduling step, fit, user limits, decisions, enqueue gate, gangs,
// reclaim and preemption plans).
//
// It exists only to check the fast engine: every query recomputes everything
// from the raw state (allocations, tree, capacity) with the formulas exactly
// as the spec writes them. It is written for clarity, never for speed. Where
// the spec is silent it follows docs/semantics.md.
//
// Not thread-safe. Every mutating call either succeeds completely or returns
// an error and changes nothing.
#ifndef HDRF_TESTS_REFERENCE_REFERENCE_MODEL_H_
#define HDRF_TESTS_REFERENCE_REFERENCE_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/plan.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::ref {

namespace detail {
struct Model;
}  // namespace detail

// Derived values of one node (queue or job) under the current state.
struct RefNodeView {
  std::string name;            // queue path ("root/a/b") or job name
  bool blocked = false;        // §4
  double share = 0;            // s(U), §4 (non-saturated resources only)
  double key = 0;              // s(U) / weight
  std::vector<double> vector;  // U, one entry per cluster resource in name order
};

struct RefJobView {
  std::string name;
  std::string queue;           // leaf path
  std::string user;
  int64_t tasks = 0;
  int64_t allocated = 0;       // running tasks
  JobState state = JobState::kInqueue;
  bool blocked = false;
  double key = 0;              // §4 key
  double drf_share = 0;        // max_r alloc[r]/T[r] over all r with T[r] > 0
  bool schedulable = false;    // §5: unallocated tasks and step_tasks more fit (§6)
  int64_t step_tasks = 1;      // §14: the tasks a step gives it: m while it holds none, else 1
};

// One entry of a plan (§15): `tasks` running tasks of job `job` (its unit).
struct RefPlanVictim {
  std::string job;
  int64_t tasks = 0;
  bool operator==(const RefPlanVictim&) const = default;
};

// A plan (§15) for job `job`.
struct RefPlan {
  std::string job;
  PlanMode mode = PlanMode::kReclaim;
  bool fits = false;
  int64_t tasks = 0;                   // the demand k
  std::vector<RefPlanVictim> victims;  // plan order; empty on failure
  ResourceAmounts short_by;            // on failure: D[r] − room[r] > 0, §2 units
};

class ReferenceModel {
 public:
  // Creates the tree: `root` plus the queues (any order; unlisted parents are
  // created open with weight 1). Every §3 validation rule applies.
  static StatusOr<std::unique_ptr<ReferenceModel>> Create(
      const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
      std::optional<double> overcommit_factor = std::nullopt);
  ~ReferenceModel();

  // ---- events (each validated; refused = unchanged) ----
  Status CreateQueue(const QueueSpec& q);  // parent must exist
  // Replaces weight, capability, guarantee, reclaimable and user limits of an
  // existing queue with those of `q` (q.state ignored).
  Status UpdateQueue(const QueueSpec& q);
  Status SetQueueState(const std::string& path, QueueState state);
  Status DeleteQueue(const std::string& path);
  // Returns the leaf the job was placed in (admission when `queue` is a parent).
  // minAvailable (§14 gang size) above the task count is InvalidArgument.
  StatusOr<std::string> Submit(const JobSpec& job);
  Status Remove(const std::string& job);
  Status Allocate(const std::string& job, int64_t n);  // docs/semantics.md §2
  Status Release(const std::string& job, int64_t n);
  Status Finish(const std::string& job, int64_t n);
  Status SetCapacity(const ResourceAmounts& cluster);  // same resource names

  // ---- scheduling (§5) ----
  // The job one step would allocate a task to, or nullopt when none can.
  std::optional<std::string> PickNext() const;
  // The same with the jobs named in `excluded` not candidates (a host's
  // placement test refused them): their allocations still count.
  std::optional<std::string> PickNext(const std::set<std::string>& excluded) const;
  // One step; returns the job name, or nullopt when nothing is schedulable.
  // A job holding no task gets its gang size m (§14) in this one step.
  std::optional<std::string> Step();
  // Repeats Step until none is possible; returns the number of steps.
  int64_t Fill();

  // ---- views (full recompute) ----
  std::vector<std::string> ResourceNames() const;  // sorted
  std::vector<RefNodeView> Queues() const;         // every queue, path order
  std::vector<RefJobView> Jobs() const;            // submission order
  // Queue order of §5 for two leaf queues: <0 when a comes first, 0 equal.
  int CompareQueues(const std::string& a, const std::string& b) const;
  // ---- decisions (§8): the §15 transfer rule per victim ----
  // Preemption within a queue: result[i] says whether one task of job
  // victims[i] may go to one more task of `preemptor` (the transfer rule of
  // §15 in its preempt form: the two jobs' plain dominant shares over their
  // weights). Each victim is judged on its own: a job listed twice gets the
  // same answer twice. A victim that is the preemptor, holds no running
  // task or lives in another leaf is false. Unknown jobs are NotFound; a
  // Pending preemptor, or one without an unallocated task, is
  // FailedPrecondition.
  StatusOr<std::vector<bool>> Preemptable(const std::string& preemptor,
                                          const std::vector<std::string>& victims) const;
  // Reclaim across leaves: the same with the reclaim form of the rule (the
  // children of the lowest common ancestor compared; reclaimable flags and
  // guarantees checked; the guarantee clause). A victim in the reclaimer's
  // own leaf is false. Same errors as Preemptable.
  StatusOr<std::vector<bool>> Reclaimable(const std::string& reclaimer,
                                          const std::vector<std::string>& victims) const;

  // ---- plans (§15) ----
  // The plan for `job`, computed literally as §15's pseudo-code on copies of
  // the state; changes nothing. NotFound for an unknown job;
  // FailedPrecondition when it is Pending or has no unallocated task;
  // InvalidArgument for a negative max_victims. A plan that cannot be found
  // is not an error: fits = false, no victims, `short_by` says what is
  // missing.
  StatusOr<RefPlan> Plan(const std::string& job, PlanMode mode,
                         std::optional<int64_t> max_victims = std::nullopt) const;
  // Applies a plan made by Plan: checked again on the current state (every
  // entry still its job's unit and permitted in plan order, then the demand
  // fits; the job still waits with the same demand), else Aborted and
  // nothing changes. Then each victim's tasks stop (allocation down, task
  // count unchanged) and the job's `tasks` are allocated. A plan with
  // fits = false is FailedPrecondition; one whose job is gone is NotFound,
  // one whose victim is gone Aborted.
  Status ApplyPlan(const RefPlan& plan);

  // Real capability (§6) of a queue, per resource in name order.
  std::vector<int64_t> RealCapability(const std::string& path) const;

 private:
  ReferenceModel();
  struct State;
  // The state for an event to change: drops the cached derived values.
  detail::Model& Mutable();
  std::unique_ptr<State> s_;
};

}  // namespace hdrf::ref

#endif  // HDRF_TESTS_REFERENCE_REFERENCE_MODEL_H_
