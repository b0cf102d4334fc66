// TreeDecisions: the decisions a host scheduler asks of the HDRF tree —
// the queue and job order of §5 (CompareQueues, CompareJobs), whether one
// job's task may go to another (Preemptable, Reclaimable: docs/spec.md §8,
// by the transfer rule of §15), reclaim and preemption plans (MakePlan,
// the screens PlanMayTake and LeafMayTake, ApplyPlan: §15) and why a job
// is or is not next (Explain). The fifth part of engine::Tree, on top of
// TreeScheduler (engine/tree_schedule.h). engine/decisions.cc holds the
// orders and Explain, engine/plan.cc the plans and the transfer rule, engine/plan_screen.cc
// the screens.
//
// Invariants: every method but ApplyPlan changes nothing. A plan is
// computed on the live tree plus an overlay of the units taken so far
// (PlanState, engine/plan_internal.h), never on a copy. ApplyPlan checks the plan
// again on the current state and applies all of it or nothing.
//
// Thread safety: every method is exclusive (`rw` exclusive), the const
// ones too (Explain runs a step's search, which tightens the fill bound).
#ifndef HDRF_ENGINE_TREE_DECISIONS_H_
#define HDRF_ENGINE_TREE_DECISIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/tree_schedule.h"
#include "hdrf/plan.h"
#include "hdrf/views.h"

namespace hdrf::engine {

class TreeDecisions : public TreeScheduler {
 public:
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

  // ---- plans (docs/spec.md §15; engine/plan.cc) ----
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
  // d(child - m)/w, m the child's LeastUnitTask: the most a child's share
  // can be after giving a unit (PlanMayTake's numbers, valid while `gen`
  // is the cache's).
  struct ChildShares {
    uint64_t gen = 0;
    double first = 0, second = 0;
    QueueId first_of = kNone;
    double first_less = 0, second_less = 0;
    QueueId first_less_of = kNone;
    // The queue's own d/w and d(- m)/w as its parent's child, kept across
    // gens with what they were computed from (usage, then m,
    // and the weight): computed again only when one of those differs.
    bool own_set = false;
    double own = 0, own_less = 0, own_weight = 0;
    std::vector<int64_t> own_in;
    // The gen in which own_in was last found equal to the queue's numbers
    // (0: not since ScreenChanged named the queue or a queue below it).
    uint64_t own_gen = 0;
  };
  // PlanMayTake's numbers between calls: `gen` is changed by the caller
  // whenever the state may have changed (or, where only the allocations or
  // submissions below some queues changed, ScreenChanged marks the
  // ChildShares that read them); `total` is the cluster total the kept own
  // shares were computed with (checked once per gen).
  struct ScreenCache {
    std::vector<ChildShares> tops;  // per QueueId
    uint64_t gen = 1, total_gen = 0;
    std::vector<int64_t> total;
    // Set by the host, R x R: ratio[r * R + r2] is the largest task[r] /
    // task[r2] over the task shapes every job's task is one of (+inf where
    // one has task[r] > 0 = task[r2]). Empty: not known (no PlanMayFree).
    std::vector<double> ratio;
  };
  // A necessary test for MakePlan (docs/spec.md §15): false only when it
  // would give no victim on the current state (no plan, or D already fits).
  bool PlanMayTake(JobId j, PlanMode mode, ScreenCache* cache) const;
  // The same test for every job of `leaf` in mode reclaim whose demand
  // needs some resource (D[r] > 0 for an r): false only when PlanMayTake
  // is false for each of them. False for a queue that is not a leaf. With
  // `least` (R amounts): only for the jobs whose demand is at least `least`
  // in every resource (the test only gets harder as D grows).
  bool LeafMayTake(QueueId leaf, ScreenCache* cache, const int64_t* least = nullptr) const;
  // The numbers of `cache` that may read the allocations of the jobs below
  // queue q (usage, LeastUnitTask) or its min_task: the
  // ChildShares of q and of each of its ancestors, computed again at their
  // next use (the others stay as they are, for the caller who knows that
  // nothing else changed).
  void ScreenChanged(QueueId q, ScreenCache* cache) const;
  // Into least (R amounts): a lower bound of every task that a unit of q's
  // subtree holds (a leaf: the least of its holding jobs' tasks; else
  // min_task).
  void LeastUnitTask(QueueId q, int64_t* least) const;
  // Checks the plan (j's demand `tasks`, `victims` in order) again on the
  // current state and applies it: each victim's tasks stop (allocation
  // down, task count unchanged), then j gets `tasks` tasks. Aborted when an
  // entry is no longer its job's unit or permitted, the demand changed, or
  // it would not fit; nothing changes then. An entry in j's own leaf counts
  // as preemption, one elsewhere as reclaim (`mode` must allow it).
  Status ApplyPlan(JobId j, int64_t tasks, const std::vector<PlanEntry>& victims, PlanMode mode);

 protected:
  TreeDecisions() = default;
  ~TreeDecisions() = default;

  // plan.cc: the state a plan is computed on (the live tree minus the
  // units taken so far) and the transfer rule of docs/spec.md §15.
  struct PlanState;
  struct PlanCtx;
  bool FillPlanCtx(JobId j, int64_t k, PlanCtx* c) const;
  StatusOr<PlanCtx> MakePlanCtx(JobId j, int64_t k) const;
  Status DemandOverflows(JobId j) const;  // MakePlanCtx's error
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
  struct RoomParts;
  void Room(const PlanCtx& c, const PlanState& s, int64_t* room, const PlanEntry* more = nullptr,
            RoomParts* parts = nullptr) const;
  void UserRoom(const PlanCtx& c, const PlanState& s, const int64_t* u, const PlanEntry* more, int64_t* room,
                RoomParts* parts) const;
  // The reclaim half of Check, in parts the victim search keeps.
  struct ReclaimSides;
  struct TakerTerms;
  ReclaimSides SidesOf(const PlanCtx& c, QueueId leaf) const;
  void TakerOf(const PlanCtx& c, const PlanState& s, QueueId a, TakerTerms* t) const;
  Rule CheckReclaim(const PlanCtx& c, const PlanState& s, QueueId leaf, const int64_t* u, const ReclaimSides& x,
                    const TakerTerms& t, double share_b, RuleDetail& d) const;
  void TakeUnit(PlanState& s, JobId v, int64_t ut) const;
  // PlanMayTake and LeafMayTake: the levels of leaf's path, with D (null:
  // any D > 0 in some resource); a parent's ChildShares on this state.
  bool PathMayTake(QueueId leaf, const int64_t* D, ScreenCache* cache) const;
  // PlanMayTake's second test (with cache.ratio): false only when no plan
  // of c's job (mode reclaim, demand c.D) can free what the demand needs
  // (engine/plan.cc).
  bool PlanMayFree(const PlanCtx& c, const ScreenCache& cache) const;
  const ChildShares& SiblingShares(QueueId parent, ScreenCache* cache) const;
  bool DemandFits(const PlanCtx& c, const PlanState& s) const;
  bool Helps(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut, const int64_t* room) const;
  // The victim descent of one plan step (engine/plan.cc): SearchVictim
  // starts a VictimSearch from root on state s with `room`.
  struct VictimSearch;
  std::optional<PlanEntry> SearchVictim(const PlanCtx& c, const PlanState& s, const int64_t* room,
                                        const RoomParts& parts) const;
  std::optional<PlanEntry> FindVictim(VictimSearch& vs, QueueId q, bool any) const;
  std::optional<PlanEntry> FindVictimBelow(VictimSearch& vs, QueueId q) const;
  std::optional<PlanEntry> FindVictimInLeaf(VictimSearch& vs, QueueId q, bool any) const;
  struct LeafTerms;
  bool LeafTermsOf(VictimSearch& vs, QueueId q, LeafTerms* lt) const;
  bool LeafUnitUsable(VictimSearch& vs, LeafTerms& lt, JobId v, int64_t ut) const;
  const TakerTerms& Taker(VictimSearch& vs, int c_depth) const;
  bool SubtreeMayGive(VictimSearch& vs, QueueId q) const;
  bool SubtreeMayGiveOnce(VictimSearch& vs, QueueId q) const;
  double SearchShare(VictimSearch& vs, QueueId q) const;
  bool PlanValid(const PlanCtx& c, const std::vector<PlanEntry>& plan) const;
  StatusOr<std::vector<bool>> TransferDecisions(JobId actor, const std::vector<JobId>& victims,
                                                bool same_leaf) const;
  double PlainShare(const int64_t* y) const;  // d(Y): max_r Y[r]/T[r], every resource
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_DECISIONS_H_
