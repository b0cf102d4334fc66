// TreeScheduler: the scheduling of the HDRF tree (docs/spec.md §5, §6,
// §12-§14) — the order of §5 (the descent from the root by smallest key,
// ties as §5 says), the fit of §6, a step and a fill, the steps that pass
// over a skip set (Engine::StepWhere), the waiting order of the reclaim
// phase, gangs (a step's demand, §14), admission of a submitted job to its
// leaf, and the enqueue gate (§12). The fourth part of engine::Tree, on top
// of TreeShards (engine/tree_shards.h); it reads the shares and views of
// TreeShares and the fill bound (engine/fill_bound.cc) and changes the
// state only through TreeShares::ChangeAllocation (Step, AdmitPending).
//
// Invariants: PickNext returns a job that is admitted, has an unallocated
// task, is not blocked and whose step demand fits (Schedulable), or none;
// Step allocates StepDemand tasks to PickNext's job; AdmitPending examines
// every Pending job once, in submission order, and admits each that the
// gate lets in at its turn.
//
// Thread safety: every method is exclusive (`rw` exclusive). The searches
// are const but tighten the fill bound (QueueView::wait_min, mutable),
// so two of them may not run at once either.
#ifndef HDRF_ENGINE_TREE_SCHEDULE_H_
#define HDRF_ENGINE_TREE_SCHEDULE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tree_shards.h"

namespace hdrf::engine {

class TreeScheduler : public TreeShards {
 public:
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
  // The first `limit` leaves that order goes through, in its order, for a
  // caller that keeps its own count of the jobs it passes over (the reclaim
  // phase of hdrf simulate): untried[q] (QueueId index) must be the number
  // of waiting jobs in q's subtree not passed over; a queue with
  // untried[q] == 0 is not entered, and no job is read. *out is replaced.
  void WaitingLeaves(const std::vector<int64_t>& untried, size_t limit, std::vector<QueueId>* out) const;
  // WaitingLeaves in pieces on one state: each call gives the next `limit`
  // leaves of the order into *out (replaced), going on with `walk` (a
  // default one, or one Clear()ed, starts at the root). Before each call
  // the caller passes over every job of the leaves it was given (their
  // untried counts are 0), so a call gives what WaitingLeaves would give
  // then, without walking again the queues walked before. Clear the walk
  // whenever the state changes.
  struct LeafWalk {
    struct Item {
      double key;
      uint32_t tie;  // rank of its name among its siblings
      QueueId q;
    };
    // A queue being walked: its children with a waiting job when it was
    // entered, sorted by key; used[i]: picked, or found without an untried
    // job; first: none before it is unused.
    struct Frame {
      std::vector<Item> items;
      std::vector<bool> used;
      size_t first = 0;
    };
    std::vector<Frame> frames;  // kept, with their buffers
    size_t depth = 0;           // frames in use
    bool begun = false;
    void Clear() {
      depth = 0;
      begun = false;
    }
  };
  void NextWaitingLeaves(const std::vector<int64_t>& untried, size_t limit, LeafWalk* walk,
                         std::vector<QueueId>* out) const;
  // The first `limit` jobs of that order among `jobs` in leaf `leaf` (the
  // others, and any job not waiting in that leaf, are passed over): the
  // order the leaf's descent takes them in. For a host that knows which
  // jobs can come first (the reclaim phase of hdrf simulate: those holding
  // a task, whose keys it cannot know, and the first `limit` by submission
  // of those holding none, whose keys are all 0), so that a prefix costs
  // those jobs, not the leaf. *out is replaced (empty for a queue that is
  // not a leaf).
  void LeafOrderOf(QueueId leaf, const std::vector<JobId>& jobs, size_t limit, std::vector<JobId>* out) const;
  // Whether, in every leaf's part of that order, the waiting jobs holding a
  // task come after all those holding none (whose keys are 0) on the
  // current state, for jobs of the task shapes `shapes` (R amounts each,
  // flattened) with weights at most `max_weight`: true when one task of
  // each shape, over that weight, gives a key above kKeyEpsilon (a job's
  // key only grows with its tasks). Depends on the state only through
  // share_resources().
  bool HeldAfterIdle(const std::vector<int64_t>& shapes, double max_weight) const;
  // The resources that count in a share now (not saturated, total > 0).
  uint64_t share_resources() const { return share_res_; }
  // The leaf a job submitted to `queue` would be placed in (admission).
  StatusOr<QueueId> Admit(std::string_view queue) const;
  // ---- gangs (docs/spec.md §14) ----
  // The tasks a step allocates to j (its demand k): GangSize when j holds
  // no task, else 1.
  int64_t StepDemand(JobId j) const;

 protected:
  TreeScheduler() = default;
  ~TreeScheduler() = default;

  // docs/spec.md §6 (with §14): k more tasks of j fit.
  bool Fits(JobId j, int64_t k) const;
  bool Fits(JobId j) const { return Fits(j, StepDemand(j)); }
  bool Schedulable(JobId j) const;
  // Schedulable and not in `skip` (null: Schedulable).
  bool Pickable(JobId j, const SkipSet* skip) const;
  std::optional<JobId> PickIn(QueueId q, const SkipSet* skip) const;
  // PickIn's search of a leaf (engine/schedule.cc), and its tie rule: from
  // `first`, the earliest submitted Pickable job whose key is within
  // kKeyEpsilon of first's (jobs whose fit code exceeds `room` fail).
  std::optional<JobId> PickInLeaf(QueueId leaf, const SkipSet* skip) const;
  JobId EarliestTie(QueueId leaf, const HeapEntry& first, const int64_t* room, const SkipSet* skip) const;
  std::optional<JobId> WaitingIn(QueueId q, const SkipSet* skip) const;
  struct WaitingWalk;  // WaitingOrder's and LeafOrderOf's arguments
  // NextWaitingLeaves: enters queue q (its children with an untried job).
  void EnterWalk(QueueId q, const std::vector<int64_t>& untried, LeafWalk* walk) const;
  void WaitingOrderIn(QueueId q, WaitingWalk& walk, std::vector<JobId>* out) const;
  // docs/spec.md §12: admits the Pending jobs the gate lets in, in
  // submission order (after an event that frees capacity).
  void AdmitPending();
  bool GateAdmits(JobId j) const;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_SCHEDULE_H_
