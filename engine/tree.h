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
// api/facade holds `rw` exclusively), except those each part's header
// names (the shard-local task events and lookups: engine/tree_shards.h).
#ifndef HDRF_ENGINE_TREE_H_
#define HDRF_ENGINE_TREE_H_

#include <cstdint>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tree_schedule.h"
#include "hdrf/plan.h"
#include "hdrf/views.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::engine {


class Tree : public TreeScheduler {
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


  // ---- decisions (docs/spec.md §5, §8) ----
  // Queue order of §5 for two leaf queues: <0 when a comes first, 0 when
  // equal, >0 when b comes first.
  int CompareQueues(QueueId a, QueueId b) const;
  // Job order of §5 within a queue: DRF share over all resources / weight,
  // ties to the earlier submitted. <0 when a comes first.
  int CompareJobs(JobId a, JobId b) const;
  // docs/spec.md §8: result[i] is true when the transfer rule of §15 permits one
  // task of victims[i] to go to one task of the actor: Preemptable for
  // victims in the actor's leaf, Reclaimable for victims in other leaves
  // (a victim in the wrong place, the actor itself or a job holding no task
  // is false). Each victim is judged alone on the current state; nothing
  // is copied or changed.
  StatusOr<std::vector<bool>> Preemptable(JobId preemptor, const std::vector<JobId>& victims) const;
  StatusOr<std::vector<bool>> Reclaimable(JobId reclaimer, const std::vector<JobId>& victims) const;
  // Why `j` is or is not next: keys along its path, blocked reasons, fit.
  Explanation Explain(JobId j) const;

  // ---- gangs and plans (docs/spec.md §14, §15; engine/plan.cc) ----
  struct PlanEntry {
    JobId job = kNone;
    int64_t tasks = 0;
  };
  struct PlanOutcome {
    bool fits = false;
    int64_t tasks = 0;                // the demand k
    std::vector<PlanEntry> victims;   // plan order; empty on failure
    std::vector<int64_t> short_by;    // R amounts; 0 where not short
  };
  // docs/spec.md §15: the plan for waiting job j. Changes nothing. Errors: unknown
  // job (NotFound), j Pending or without an unallocated task
  // (FailedPrecondition), a negative max_victims (InvalidArgument).
  StatusOr<PlanOutcome> MakePlan(JobId j, PlanMode mode, std::optional<int64_t> max_victims) const;
  // Per queue, on one state, among its reclaimable children: the two
  // largest d(child)/w and the child holding the first, and the same of
  // d(child - min_task)/w, the most a child's share can be after giving a
  // unit (PlanMayTake's numbers, valid while `gen` is the caller's).
  struct ChildShares {
    uint64_t gen = 0;
    double first = 0, second = 0;
    QueueId first_of = kNone;
    double first_less = 0, second_less = 0;
    QueueId first_less_of = kNone;
  };
  // A necessary test for MakePlan (docs/spec.md §15): false only when it
  // would give no victim on the current state (no plan, or D already fits).
  // `tops` keeps per-queue numbers between calls on one state; the caller
  // changes `gen` whenever the state may have changed.
  bool PlanMayTake(JobId j, PlanMode mode, std::vector<ChildShares>* tops, uint64_t gen) const;
  // The same test for every job of `leaf` in mode reclaim whose demand
  // needs some resource (D[r] > 0 for an r): false only when PlanMayTake
  // is false for each of them. False for a queue that is not a leaf.
  bool LeafMayTake(QueueId leaf, std::vector<ChildShares>* tops, uint64_t gen) const;
  // Checks the plan (j's demand `tasks`, `victims` in order) again on the
  // current state and applies it: each victim's tasks stop (allocation
  // down, task count unchanged), then j gets `tasks` tasks. Aborted when an
  // entry is no longer its job's unit or permitted, the demand changed, or
  // it would not fit; nothing changes then. An entry in j's own leaf counts
  // as preemption, one elsewhere as reclaim (`mode` must allow it).
  Status ApplyPlan(JobId j, int64_t tasks, const std::vector<PlanEntry>& victims, PlanMode mode);

  // ---- lookups and views ----

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




  // plan.cc: the state a plan is computed on (the live tree minus the
  // units taken so far) and the transfer rule of docs/spec.md §15.
  struct PlanState;
  struct PlanCtx;
  StatusOr<PlanCtx> MakePlanCtx(JobId j, int64_t k) const;
  int64_t UnitOf(JobId v, const PlanState& s) const;
  bool Permitted(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut) const;
  enum class Rule { kOk, kOrder, kNotReclaimable, kGuarantee };
  struct RuleDetail {
    QueueId queue = kNone;  // the queue the rule names (B for kOrder)
    QueueId other = kNone;  // kOrder: A
    int resource = 0;       // kGuarantee
  };
  Rule Check(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut, RuleDetail* why) const;
  std::string Refusal(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut) const;
  void ExplainPlan(JobId j, Explanation* e) const;
  void Room(const PlanCtx& c, const PlanState& s, int64_t* room, const PlanEntry* more = nullptr) const;
  void TakeUnit(PlanState& s, JobId v, int64_t ut) const;
  // PlanMayTake and LeafMayTake: the levels of leaf's path, with D (null:
  // any D > 0 in some resource); a parent's ChildShares on this state.
  bool PathMayTake(QueueId leaf, const int64_t* D, std::vector<ChildShares>* tops, uint64_t gen) const;
  const ChildShares& SiblingShares(QueueId parent, std::vector<ChildShares>* tops, uint64_t gen) const;
  bool DemandFits(const PlanCtx& c, const PlanState& s) const;
  bool Helps(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut, const int64_t* room) const;
  std::optional<PlanEntry> FindVictim(const PlanCtx& c, const PlanState& s, QueueId q, const int64_t* room,
                                      bool any) const;
  std::optional<PlanEntry> FindVictimInLeaf(const PlanCtx& c, const PlanState& s, QueueId q,
                                            const int64_t* room, bool any) const;
  struct TakerTerms;
  bool SubtreeMayGive(const PlanCtx& c, const PlanState& s, QueueId q, const int64_t* room,
                      TakerTerms* taker) const;
  bool PlanValid(const PlanCtx& c, const std::vector<PlanEntry>& plan) const;
  StatusOr<std::vector<bool>> TransferDecisions(JobId actor, const std::vector<JobId>& victims,
                                                bool same_leaf) const;
  double PlainShare(const int64_t* y) const;  // d(Y): max_r Y[r]/T[r], every resource


  // CheckInvariants' two halves (engine/invariants.cc): the raw sums
  // (usage per queue, free, saturation, min_task, inqueue_min), whose
  // usage it returns; then every view recomputed from them.
  Status CheckRawSums(std::vector<std::vector<int64_t>>* usage) const;
  Status CheckViews(const std::vector<std::vector<int64_t>>& usage, double tol) const;


};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_H_
