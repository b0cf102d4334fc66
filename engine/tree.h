// Tree: the HDRF queue tree with its jobs and incrementally maintained
// Dynamic H-DRF shares (docs/spec.md §3-§7, §12).
//
// Raw state: the cluster total T, queues (weight, capability, guarantee,
// state, user limits), jobs (task shape, task count, running tasks). Derived
// state, kept up to date on every event (docs/algorithm.md):
//   * per queue: usage (plain sum), the non-blocked children in a KeyHeap,
//     sum_norm = Σ_{non-blocked c, s_c>0} (w_c/s_c)·U_c and
//     sum_blk  = Σ_{blocked c} U_c, from which U = M·sum_norm + sum_blk with
//     M = the heap's minimum key; blocked = heap empty;
//   * per job: blocked flag and key s/w.
// An allocate or release touches the job, its leaf and the leaf's ancestors:
// O(depth · (R + log fanout)). Changes of blocked-ness that are not the job's
// own (a capability reached, a held-back guarantee crossed, a user limit
// reached) refresh only the jobs they concern. A change of the saturated set
// re-derives every key (every s(U) changes); see docs/algorithm.md.
//
// Thread safety. Every method is for one thread at a time ("exclusive"),
// except the shard-local task events LocalAllocate/LocalRelease:
//   * The tree is cut into kShards lock shards by top-level queue (a queue's
//     shard is its top-level ancestor's QueueId % kShards). A shard-local
//     event writes only its job, the queues of its top-level subtree, their
//     entries in the current view, and its shard's Scratch.
//   * The caller holds, for the whole local call, a shared lock that keeps
//     exclusive calls out, plus the job's shard lock (ShardOf). Local calls
//     on different shards then run in parallel; api/Engine does this with
//     base/shard_lock.h.
//   * Anything with an effect beyond the subtree (a resource filling or
//     freeing, held-back guarantees, the enqueue gate, a capacity of the
//     root, a lease too small) is not done locally: *escalate is set,
//     nothing changes, and the caller retries with the exclusive method.
//   * Root-level aggregates (the root's usage, job counts and key heap, the
//     free capacity, the touched-job log) are not written locally: each
//     shard keeps its deltas and a lease of free capacity in its Scratch.
//     An exclusive section is bracketed by BeginExclusive(), which folds all
//     of that in and re-derives the root from its children, and
//     EndExclusive(), which hands out leases again. Between the two the
//     tree is exactly as if every event had been applied serially.
// A Tree used only through exclusive methods needs neither bracket.
#ifndef HDRF_ENGINE_TREE_H_
#define HDRF_ENGINE_TREE_H_

#include <cstdint>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/huge_alloc.h"
#include "engine/job_index.h"
#include "engine/key_heap.h"
#include "hdrf/plan.h"
#include "hdrf/views.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::engine {

// The enqueue gate's running sums of min_available × task (docs/spec.md
// §12): exact for any number of jobs (2^32 terms below 2^63 each).
using GateSum = __int128;


using ResMask = uint32_t;
inline constexpr int kMaxResources = 32;
// Keys within this distance are equal (docs/spec.md §5).
inline constexpr double kKeyEpsilon = 1e-9;

struct TreeOptions {
  // docs/spec.md §12 enqueue gate; nullopt (default) = off, every job Inqueue at once.
  std::optional<double> overcommit_factor;
};

class Tree {
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
  Status SetQueueState(std::string_view path, QueueState state);
  Status DeleteQueue(std::string_view path);
  StatusOr<JobId> Submit(const JobSpec& job);
  Status Remove(JobId job);
  Status Allocate(JobId job, int64_t n);
  Status Release(JobId job, int64_t n);
  Status Finish(JobId job, int64_t n);
  Status SetCapacity(const ResourceAmounts& cluster);

  // ---- scheduling (docs/spec.md §5) ----
  std::optional<JobId> PickNext() const;
  // Jobs a step passes over (Engine::StepWhere): JobId -> submission
  // sequence number; an entry counts only for the live job with that number
  // (ids are reused after a removal).
  using SkipSet = std::unordered_map<JobId, uint64_t>;
  // The job a step would pick if the jobs in `skip` were not candidates:
  // the order of §5 with them left out (their allocations still count in
  // every share and blocked flag). Null `skip` = PickNext().
  std::optional<JobId> PickNext(const SkipSet* skip) const;
  std::optional<JobId> Step();
  int64_t Fill();
  // The waiting job (admitted, with an unallocated task, not in `skip`) a
  // step would serve first if every task fit: the §5 descent by smallest
  // key, blocked or not, with §5's ties (the reclaim phase of docs/spec.md §13).
  std::optional<JobId> PickWaiting(const SkipSet* skip) const;
  // Every such job in the order successive PickWaiting calls would give
  // them, each passing over the ones before (the state unchanged): one
  // traversal instead of one descent per job.
  std::vector<JobId> WaitingOrder(const SkipSet* skip) const;
  // The first `limit` jobs of that order, for a caller that keeps its own
  // count of what it passes over (the reclaim phase of hdrf simulate): job
  // j is passed over when passed(j), and a queue q with untried[q] == 0 is
  // not entered (QueueId index; untried[q] must be the number of waiting
  // jobs in q's subtree not passed over). So the cost is that of the
  // subtrees the prefix comes from, not of every waiting job. False when a
  // queue entered shows a count wrong (*out is then not the order); *out
  // is replaced.
  bool WaitingPrefix(const std::function<bool(JobId)>& passed, const std::vector<int64_t>& untried, size_t limit,
                     std::vector<JobId>* out) const;
  // The first `limit` leaves that order goes through, in its order, by the
  // counts alone (no job is read): leaves q with untried[q] != 0. *out is
  // replaced.
  void WaitingLeaves(const std::vector<int64_t>& untried, size_t limit, std::vector<QueueId>* out) const;
  // The leaf a job submitted to `queue` would be placed in (admission).
  StatusOr<QueueId> Admit(std::string_view queue) const;

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
  // A job's gang size m: minAvailable, 0 counting as 1, capped at its
  // current task count (so 0 for a job of 0 tasks).
  int64_t GangSize(JobId j) const;
  // The tasks a step allocates to j (its demand k): GangSize when j holds
  // no task, else 1.
  int64_t StepDemand(JobId j) const;
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
  StatusOr<JobId> FindJob(std::string_view name) const;
  // Jobs by submission sequence number (stable across restarts).
  StatusOr<JobId> FindJobBySeq(uint64_t seq) const;
  uint64_t job_seq(JobId j) const;
  const std::string& job_name(JobId j) const;
  uint64_t next_seq() const { return next_seq_; }
  bool job_alive(JobId j) const;
  // j is a live job with submission sequence number `seq` (a JobRef).
  bool job_live(JobId j, uint64_t seq) const;

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
  // ApplyTaskDelta updates derived state as those events would have;
  // RestoreTasks sets raw state only (derived state stale until
  // RebuildAll()). Neither validates: the caller has checked every event.
  void ApplyTaskDelta(JobId j, int64_t d_allocated, int64_t d_tasks);
  void RestoreTasks(JobId j, int64_t allocated, int64_t tasks);
  // The rules Allocate, Release and Finish check, as functions of a job's
  // counts and state, its task shape and the free amounts. The Tree's own
  // checks are these, and so are the folding replay's, which checks each
  // event against the state its run has reached before the run is applied.
  enum class TaskRule { kOk, kBadCount, kTooFewTasks, kPending };
  static TaskRule AllocateRule(int64_t n, int64_t allocated, int64_t tasks, JobState state) {
    if (n < 1) return TaskRule::kBadCount;
    if (n > tasks - allocated) return TaskRule::kTooFewTasks;  // no overflow for a huge n
    if (state == JobState::kPending) return TaskRule::kPending;
    return TaskRule::kOk;
  }
  static TaskRule ReleaseRule(int64_t n, int64_t allocated) {
    if (n < 1) return TaskRule::kBadCount;
    if (n > allocated) return TaskRule::kTooFewTasks;
    return TaskRule::kOk;
  }
  // The first resource of which `n` tasks of shape `task` need more than
  // `free` holds (no overflow); -1 when they fit.
  static int ShortResource(int64_t n, const int64_t* task, const int64_t* free, int resources) {
    for (int r = 0; r < resources; ++r)
      if (task[r] != 0 && (n > free[r] / task[r] || n * task[r] > free[r])) return r;
    return -1;
  }
  // Raw job fields for the folding replay (j must be alive).
  int64_t job_tasks(JobId j) const;
  int64_t job_allocated(JobId j) const;
  JobState job_state(JobId j) const;
  const int64_t* job_task(JobId j) const;  // R amounts
  std::string_view job_queue_path(JobId j) const;  // its leaf
  // One past the largest JobId in use.
  size_t job_id_limit() const;
  // Restores the next submission sequence number.
  void set_next_seq(uint64_t seq) { next_seq_ = std::max(next_seq_, seq); }
  // The queues as specs (for checkpoints), in path order.
  std::vector<QueueSpec> QueueSpecs() const;
  StatusOr<QueueId> FindQueue(std::string_view path) const;
  const std::vector<std::string>& resource_names() const { return names_; }
  const TreeOptions& options() const { return options_; }
  const std::vector<int64_t>& total() const { return total_; }
  const std::vector<int64_t>& free() const { return free_; }
  ResMask saturated() const { return saturated_; }
  QueueInfo GetQueue(QueueId q) const;
  JobInfo GetJob(JobId j) const;
  // Every live queue in path order; every live job in submission order.
  std::vector<QueueId> QueuesInPathOrder() const;
  std::vector<JobId> JobsInSubmitOrder() const;
  size_t job_count() const { return live_jobs_; }
  // Entries of the name and submission-number indexes (job_count() each).
  size_t name_index_size() const { return job_by_name_.size(); }
  size_t seq_index_size() const { return job_by_seq_.size(); }
  size_t queue_count() const { return live_queues_; }
  QueueId root() const { return 0; }
  // docs/spec.md §9 state digest.
  uint64_t Digest() const;
  // Recomputes every derived value from scratch and compares it with the
  // incremental one; returns the first disagreement (for tests).
  Status CheckInvariants(double tolerance = 1e-9) const;
  // Forces a full rebuild of derived state (tests, recovery).
  void RebuildAll();

  // ---- lock sharding (see "Thread safety" above) ----
  static constexpr int kShards = 64;
  int ShardOf(JobId j) const;
  // Allocate/Release/Finish when the effect stays within the job's shard;
  // otherwise *escalate = true and nothing changes. Errors are those of the
  // exclusive methods (a refused local event changes nothing either).
  Status LocalAllocate(JobId j, int64_t n, bool* escalate);
  Status LocalRelease(JobId j, int64_t n, bool finish, bool* escalate);
  // Shard-grouped batches (Engine::ApplyTasks; docs/concurrency.md
  // "Batches"). The caller holds `rw` shared and shard s's lock, and `ops`
  // are task events of jobs of shard s in batch order. ReserveLocal returns
  // how many of them, from the first, are sure to stay local whatever the
  // other shards do (no release of a saturated resource; the allocations'
  // needs, summed, leave the lease positive) and takes what their
  // allocations need out of the lease into reserved[0..R) so that no other
  // thread's event can use it; ReturnReservation gives it back just before
  // those ops are applied (under the same lock, perhaps taken again).
  // Those ops then run locally in that order, exactly as LocalAllocate and
  // LocalRelease would run them one by one.
  struct LocalOp {
    int64_t n;
    JobId job;
    bool allocate;
  };
  size_t ReserveLocal(int s, const LocalOp* ops, size_t count, int64_t* reserved);
  void ReturnReservation(int s, const int64_t* reserved);
  void BeginExclusive();
  void EndExclusive();
  // The shards that have a top-level queue (the only ones ShardOf returns
  // for a job that can take a local event); changes only in exclusive
  // sections.
  const std::vector<int>& used_shards() const { return used_shards_; }
  // Batches (Engine::ApplyTasks) ask for an upcoming event's memory ahead of
  // time so that its cache misses overlap with the events before it; a
  // single event asks for its job's lines before its checks (the local
  // events do not ask again).
  // PrefetchJob: the job's record, task shape and view entry (addresses
  // from the id alone). PrefetchPath, later, when the record has arrived:
  // its leaf's nodes (stage 0), then its parent's nodes and the job's entry
  // in its leaf's heap with the entries a sift from there reads (stage 1).
  // These only read what changes in exclusive sections (the job's leaf, the
  // node arrays, the heap buffers, whose room LinkToLeaf and RebuildView
  // make) and the job's heap position (stored atomically by local events,
  // a hint that may be stale), so they may run in a shared section without
  // the shard lock; any id is allowed (nothing past the end).
  void PrefetchJob(JobId j) const;
  void PrefetchJobRecord(JobId j) const;  // PrefetchJob without the view entries
  void PrefetchPath(JobId j, int stage) const;
  void PrefetchNodes(QueueId q) const;  // the hot lines of q's two nodes

  // Counters for benchmarks and docs.
  struct Counters {
    uint64_t full_rebuilds = 0;   // new saturated sets, structure changes
    uint64_t node_rebuilds = 0;   // periodic exact re-sums (drift bound)
    uint64_t job_refreshes = 0;   // jobs re-evaluated for blocked-ness by
                                  // another's event (capability, user
                                  // limit, held-back guarantee), not the
                                  // event's own job (a write per event to
                                  // a line of the shard's Scratch)
    uint64_t view_switches = 0;   // saturated set changed to a cached view
    uint64_t view_catchups = 0;   // jobs replayed into a view on a switch
    uint64_t fill_skips = 0;      // subtrees a step skipped by the fill bound
  };
  Counters counters() const;  // summed over the shards

 private:
  struct Queue;
  struct Job;
  struct User;
  struct JobView;
  struct QueueView;
  struct View;
  struct Scratch;
  struct RelaxedPos;
  Tree();

  // The current view (derived state for the current saturated set).
  View& cv();
  JobView& JV(JobId j);
  const JobView& JV(JobId j) const;
  QueueView& QV(QueueId q);
  const QueueView& QV(QueueId q) const;
  // Views of other saturated sets are dropped on structural changes.
  void DropSavedViews();
  void GrowViews();
  // The saturated set changed to saturated_: switch to (or build) its view.
  // The current view is exact up to touched-log position `exact_to`.
  void SwitchView(uint64_t exact_to);
  // Records that `j`'s derived state may differ from what saved views hold.
  void Touch(JobId j, Scratch& sc);
  void Touch(JobId j) { Touch(j, *main_); }

  // tree.cc: structure and validation
  Status ValidateQueue(const QueueSpec& q, QueueId self, QueueId parent) const;
  StatusOr<QueueSpec> Normalize(const QueueSpec& q) const;
  StatusOr<std::vector<int64_t>> Dense(const ResourceAmounts& a, const std::string& what) const;
  QueueId AddQueueNode(const QueueSpec& q, QueueId parent);
  JobId NewJob(std::string_view name, QueueId leaf, std::string_view user, const int64_t* task,
               int64_t tasks, double weight, int64_t min_available, uint64_t seq,
               int64_t allocated, JobState state);
  // Puts job j in its leaf's job list and makes room for it in every
  // view's leaf heap (local events then never move a heap's buffer).
  void LinkToLeaf(JobId j);
  JobId FindName(std::string_view name) const;  // kNone when absent
  JobId FindSeq(uint64_t seq) const;            // kNone when absent
  void ComputeRealCapabilities();
  bool IsLeaf(QueueId q) const;
  int64_t SubtreeJobs(QueueId q) const;
  Status CheckJobId(JobId j) const;  // inline (tree_internal.h)
  static Status UnknownJob(JobId j);  // CheckJobId's error, out of line
  uint32_t UserId(const std::string& user);

  // shares.cc: derived state
  ResMask RequiredMask(const int64_t* task) const;
  double DominantPerTask(const int64_t* task) const;  // d_j under saturated_
  double ShareOf(const double* u) const;               // s(U)
  ResMask QueueExhausted(QueueId leaf) const;           // held-back + capability bits
  ResMask UserExhausted(QueueId leaf, uint32_t user) const;
  bool JobBlocked(JobId j) const;
  QueueId JobLeaf(JobId j) const;
  double JobKey(JobId j) const;
  auto JobHeapPos();  // KeyHeap `pos` of the leaf heaps (shares.cc)
  void AddJobContribution(JobId j);
  void RemoveJobContribution(JobId j);
  void ReplaceJobContribution(JobId j);  // Remove + Add, heap entry kept in place
  void AddNormTerm(QueueView& q, double weight, const int64_t* task);
  void SubtractNormTerm(QueueView& q, double weight, const int64_t* task);
  void AddQueueContribution(QueueId q);
  void RemoveQueueContribution(QueueId q);
  bool RecomputeQueue(QueueId q, Scratch& sc);  // true: the parent must follow
  bool Settle(QueueId q, Scratch& sc);          // RecomputeQueue, re-summed when due
  bool RefreshJobEntry(JobId j, Scratch& sc);   // re-derive blocked/key, update leaf
  void RefreshJob(JobId j, Scratch& sc) {       // ... and mark the leaf dirty
    if (RefreshJobEntry(j, sc)) MarkDirty(JobLeaf(j), sc);
  }
  void RefreshJob(JobId j) { RefreshJob(j, *main_); }
  void RefreshJobsIn(QueueId q, Scratch& sc);  // every job in q's subtree
  void RefreshJobsIn(QueueId q) { RefreshJobsIn(q, *main_); }
  void MarkDirty(QueueId q, Scratch& sc);
  static std::vector<std::vector<QueueId>>& DirtyLists(Scratch& sc);
  void MarkDirty(QueueId q) { MarkDirty(q, *main_); }
  void Propagate(Scratch& sc);              // dirty queues bottom-up
  void PropagatePath(QueueId leaf, Scratch& sc);  // when only `leaf` changed
  void Propagate() { Propagate(*main_); }
  void RebuildNode(QueueId q, Scratch& sc); // exact re-sum from children
  void RebuildRoot();                       // the root's view from its children
  void SetAggregate(QueueId q);             // U, s, key, blocked from the sums
  void AssignShards(const std::vector<QueueId>& parents_first);
  // Checks of Allocate/Release/Finish other than free capacity.
  Status CheckAllocate(JobId j, int64_t n) const;
  Status CheckRelease(JobId j, int64_t n, const char* verb) const;
  // Escalation tests of the local events (tree_shards.cc).
  bool LocalPossible() const;
  static void PrefetchHeapSift(const KeyHeap& nb, uint32_t pos);  // tree_shards.cc
  void RebuildView();                       // the current view from scratch
  void UpdateHeldBack(const std::vector<QueueId>& order, bool refresh);
  void ChangeAllocation(JobId j, int64_t delta_alloc, int64_t delta_tasks, Scratch& sc);
  void RefreshOthers(JobId j, QueueId top_flip, bool moved, bool limits_changed, Scratch& sc);
  void ChangeAllocation(JobId j, int64_t delta_alloc, int64_t delta_tasks) {
    ChangeAllocation(j, delta_alloc, delta_tasks, *main_);
  }
  ResMask SaturatedNow() const;  // the resources with free <= 0
  void UpdateSaturation();
  void SetShareResources();
  void SetShareMask();
  bool LeaveLeasePositive(const Scratch& sc, const int64_t* t, int64_t n, const int64_t* taken) const;
  void RecountUsers(QueueId leaf);

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

  // schedule.cc
  // docs/spec.md §6 (with §14): k more tasks of j fit.
  bool Fits(JobId j, int64_t k) const;
  bool Fits(JobId j) const { return Fits(j, StepDemand(j)); }
  bool Schedulable(JobId j) const;
  // Schedulable and not in `skip` (null: Schedulable).
  bool Pickable(JobId j, const SkipSet* skip) const;
  std::optional<JobId> PickIn(QueueId q, const SkipSet* skip) const;
  std::optional<JobId> WaitingIn(QueueId q, const SkipSet* skip) const;
  struct WaitingWalk;  // WaitingOrder's and WaitingPrefix's arguments
  void WaitingOrderIn(QueueId q, WaitingWalk& walk, std::vector<JobId>* out) const;
  void AdmitPending();
  bool GateAdmits(JobId j) const;
  void SetJobState(JobId j, JobState s, Scratch& sc);
  void SetJobState(JobId j, JobState s) { SetJobState(j, s, *main_); }
  // Adds (sign +1) or takes (-1) job j's min_available × task to its leaf's
  // Queue::inqueue_min and to `total` (inqueue_min_total_ or a shard's delta).
  // The sums are 128-bit: each term fits int64 (Submit checks
  // min_available × task), but a sum over many jobs need not (issue 26).
  void CountInqueueMin(JobId j, int sign, GateSum* total);

  // fill_bound.cc: a lower bound of the waiting task shapes per subtree, so
  // that a step skips subtrees where nothing fits.
  void LowerWaitBound(QueueId leaf, const int64_t* task);
  bool WaitingMayFit(QueueId q) const;
  // After a search of q found nothing: the exact minimum of the shapes
  // visited in a leaf (R amounts), or nullptr for the minimum of q's
  // children's bounds.
  void TightenWaitBound(QueueId q, const int64_t* visited_min) const;
  Status CheckWaitBound(QueueId leaf) const;
  // CheckInvariants' two halves (engine/invariants.cc): the raw sums
  // (usage per queue, free, saturation, min_task, inqueue_min), whose
  // usage it returns; then every view recomputed from them.
  Status CheckRawSums(std::vector<std::vector<int64_t>>* usage) const;
  Status CheckViews(const std::vector<std::vector<int64_t>>& usage, double tol) const;

  std::vector<std::string> names_;
  int R_ = 0;
  std::vector<int64_t> total_;
  std::vector<int64_t> free_;
  ResMask saturated_ = 0;
  // Set with saturated_ (UpdateSaturation): the resources that count in a
  // share, s(U) = max over them of U_r / T_r (not saturated, T_r > 0), and
  // T as doubles.
  ResMask share_res_ = 0;
  std::vector<double> total_d_;
  TreeOptions options_;
  bool any_guarantee_ = false;

  std::vector<Queue> queues_;
  std::vector<QueueId> free_queue_ids_;
  std::unordered_map<std::string, QueueId> queue_by_path_;
  size_t live_queues_ = 0;

  std::vector<Job, HugeAlloc<Job>> jobs_;      // hot: one 64-byte line per job
  std::vector<std::string> job_names_;          // cold: indexed like jobs_
  std::vector<int64_t, HugeAlloc<int64_t>> task_;  // jobs_.size() x R_
  // Job ids are handed out in blocks of kJobBlock per lock shard, so that
  // the job records, task shapes and view entries of different shards never
  // share a cache line (threads on different shards would bounce them).
  static constexpr uint32_t kJobBlock = 16;
  std::vector<std::vector<JobId>> free_job_ids_ = std::vector<std::vector<JobId>>(kShards);
  // Removed jobs whose contributions saved views may still hold (Remove):
  // their records keep queue, weight and task row, and their ids are not
  // reused, until DropSavedViews frees them.
  struct RetiredJob {
    JobId id;
    uint32_t shard;
  };
  std::vector<RetiredJob> retired_jobs_;
  std::vector<JobId> block_next_ = std::vector<JobId>(kShards, kNone);  // next id of a shard's block
  JobIndex job_by_name_;  // name -> id, keyed through jobs_ (engine/job_index.h)
  JobIndex job_by_seq_;   // submission sequence number -> id
  size_t live_jobs_ = 0;
  uint64_t next_seq_ = 1;

  std::vector<std::string> user_names_;
  std::unordered_map<std::string, uint32_t> user_by_name_;
  uint32_t last_user_ = 0;  // NewJob: the previous job's user (bulk restores repeat users)

  // §12 gate: Pending jobs by submission sequence, and the global sums.
  std::map<uint64_t, JobId> pending_;
  std::vector<GateSum> inqueue_min_total_;
  std::vector<int64_t> usage_total_;

  // Views by saturated set (docs/algorithm.md); views_[cur_] is exact.
  std::vector<View> views_;
  size_t cur_ = 0;
  uint64_t view_clock_ = 0;
  // Jobs touched since the oldest saved view was current; entry i has the
  // absolute position touched_base_ + i.
  std::vector<JobId> touched_;
  uint64_t touched_base_ = 0;
  bool log_touched_ = false;  // true while saved views exist
  // The largest log position a saved view was saved at: a job touched
  // again may share the log's last entry only if that entry is not below
  // it (Touch).
  uint64_t log_floor_ = 0;
  // While an event that changes the saturated set runs: RefreshJob only
  // logs the job (ChangeAllocation; exclusive sections only).
  bool defer_refresh_ = false;
  bool bulk_ = false;         // Create: one rebuild at the end

  int max_depth_ = 0;
  // The exclusive path's scratch, and one per lock shard (created for the
  // shards that have a top-level queue; see "Thread safety").
  std::unique_ptr<Scratch> main_;
  std::vector<std::unique_ptr<Scratch>> shards_;
  std::vector<int> used_shards_;
  bool leases_out_ = false;  // EndExclusive handed out a lease (BeginExclusive folds)
  // Lease back-off (EndExclusive): when the leases of the last hand-out all
  // came back unused, the next `lease_skip_` hand-outs are skipped (1, 2,
  // 4, ... up to kMaxLeaseSkip); a local event resets it. Only which events
  // run locally depends on it, never a result.
  static constexpr uint32_t kMaxLeaseSkip = 64;
  uint32_t lease_skip_ = 0;  // current back-off length
  uint32_t lease_wait_ = 0;  // hand-outs still to skip
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_H_
