// ReferenceModel: a deliberately simple, full-recompute implementation of
// SPEC §3-§7 and §12 (queue tree rules, Dynamic H-DRF shares, scheduling
// step, fit, user limits, enqueue gate).
//
// It exists only to check the fast engine: every query recomputes everything
// from the raw state (allocations, tree, capacity) with the formulas exactly
// as the SPEC writes them. It is written for clarity, never for speed. Where
// the SPEC is silent it follows docs/semantics.md.
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

#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::ref {

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
  bool schedulable = false;    // §5: unallocated tasks and one more task fits (§6)
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
  std::optional<std::string> Step();
  // Repeats Step until none is possible; returns the number of steps.
  int64_t Fill();

  // ---- views (full recompute) ----
  std::vector<std::string> ResourceNames() const;  // sorted
  std::vector<RefNodeView> Queues() const;         // every queue, path order
  std::vector<RefJobView> Jobs() const;            // submission order
  // Queue order of §5 for two leaf queues: <0 when a comes first, 0 equal.
  int CompareQueues(const std::string& a, const std::string& b) const;
  // ---- decisions (§8): copy the state, change the copy, recompute ----
  // Preemption within a queue: result[i] says whether one task of job
  // victims[i] may be preempted for one more task of `preemptor`. A job
  // listed k times offers k tasks, whose removals add up. Unknown jobs are
  // NotFound; a Pending preemptor, or one without an unallocated task, is
  // FailedPrecondition (docs/semantics.md item 13).
  StatusOr<std::vector<bool>> Preemptable(const std::string& preemptor,
                                          const std::vector<std::string>& victims) const;
  // Reclaim across queues: each victim judged independently on a copy of
  // the state with the reclaimer's task added and the victim's removed
  // (docs/semantics.md item 13). Same errors as Preemptable.
  StatusOr<std::vector<bool>> Reclaimable(const std::string& reclaimer,
                                          const std::vector<std::string>& victims) const;

  // Real capability (§6) of a queue, per resource in name order.
  std::vector<int64_t> RealCapability(const std::string& path) const;

 private:
  ReferenceModel();
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace hdrf::ref

#endif  // HDRF_TESTS_REFERENCE_REFERENCE_MODEL_H_
