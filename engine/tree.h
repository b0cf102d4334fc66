// Tree: the HDRF queue tree with its jobs and incrementally maintained
// Dynamic H-DRF shares (docs/spec.md §3-§7, §12-§15): the owner that
// composes the parts, each with one job and its own header, each the base
// of the next (a part calls only itself and the parts below it; the chain
// costs the event path no indirection):
//   engine/tree_structure.h  TreeStructure: raw state — queues, jobs,
//                            users, indexes, specs — its rules and lookups;
//   engine/tree_shares.h     TreeShares: the incremental shares, the
//                            saturated set, the views, GetQueue/GetJob;
//   engine/tree_shards.h     TreeShards: lock shards, leases, the
//                            shard-local task events, exclusive brackets;
//   engine/tree_schedule.h   TreeScheduler: the order of §5, Step/Fill,
//                            gangs, admission and the enqueue gate;
//   engine/tree_decisions.h  TreeDecisions: transfer decisions (§8),
//                            plans (§15), Explain.
// Tree itself keeps the events (below): each validates, changes the raw
// state through TreeStructure, and brings the parts above up to date.
// Callers use Tree only; every public method of a part is Tree's.
//
// Thread safety: every method is for one thread at a time ("exclusive":
// engine::ConcurrentTree holds its `rw_` exclusively, engine/concurrent_tree.h),
// except those each part's header names (the shard-local task events and
// lookups: engine/tree_shards.h).
#ifndef HDRF_ENGINE_TREE_H_
#define HDRF_ENGINE_TREE_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/tree_decisions.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::engine {

class Tree : public TreeDecisions {
 public:
  // Builds `root` plus `queues` (any order; missing parents are created open
  // with weight 1). Every rule of docs/spec.md §3 is checked.
  static StatusOr<std::unique_ptr<Tree>> Create(const ResourceAmounts& cluster,
                                                const std::vector<QueueSpec>& queues,
                                                const TreeOptions& options = {});
  ~Tree();
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  // ---- events: each validated; a refused event changes nothing ----
  Status CreateQueue(const QueueSpec& q);
  Status UpdateQueue(const QueueSpec& q);  // all attributes but state
  Status DeleteQueue(std::string_view path);
  StatusOr<JobId> Submit(const JobSpec& job);
  Status Remove(JobId job);
  Status Allocate(JobId job, int64_t n);
  Status Release(JobId job, int64_t n);
  Status Finish(JobId job, int64_t n);
  Status SetCapacity(const ResourceAmounts& cluster);

  // ---- recovery ----
  // Restores a job as it was, raw state only: into leaf `queue` (no
  // admission, no state check, no gate), with its sequence number, running
  // tasks and state. Derived state is stale until RebuildAll().
  Status RestoreJob(const JobSpec& spec, uint64_t seq, int64_t allocated, JobState state);
  // The same from dense fields (the bulk path of recovery): `leaf` must be a
  // live leaf, `task` holds one amount per resource.
  Status RestoreJob(std::string_view name, QueueId leaf, std::string_view user,
                    const int64_t* task, int64_t tasks, double weight, int64_t min_available,
                    uint64_t seq, int64_t allocated, JobState state);
  // Room for `n` jobs in all without reallocating (before a bulk restore;
  // EngineOptions::reserve_jobs). Covers the current saved views too.
  void ReserveJobs(size_t n);
  // Recovery of folded task events (storage::Replayer): a job's running and
  // total tasks change by (d_allocated, d_tasks), the net effect of a run of
  // allocate/release/finish events that each were valid in sequence.
  // ApplyTaskDelta updates derived state as those events would have (and
  // TreeStructure::RestoreTasks sets raw state only). It does not validate:
  // the caller has checked every event.
  void ApplyTaskDelta(JobId j, int64_t d_allocated, int64_t d_tasks);
  // Recomputes every derived value from scratch and compares it with the
  // incremental one; returns the first disagreement (for tests).
  Status CheckInvariants(double tolerance = 1e-9) const;

 private:
  Tree();

  // CheckInvariants' two halves (engine/invariants.cc): the raw sums and
  // lists (usage per queue, free, saturation, min_task, holders,
  // inqueue_min), whose usage it returns; then every view recomputed from
  // them.
  Status CheckRawSums(std::vector<std::vector<int64_t>>* usage) const;
  Status CheckViews(const std::vector<std::vector<int64_t>>& usage, double tol) const;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_H_
