// TreeShares: the derived state of the HDRF tree — the incrementally
// maintained Dynamic H-DRF shares (docs/spec.md §4-§7), the saturated set,
// the blocked flags and keys, and the views that hold them, one per
// saturated set — kept up to date on every change of the raw state
// (engine/tree_structure.h). The second part of engine::Tree; the
// algorithm is docs/algorithm.md.
//
// Derived state, kept up to date on every event:
//   * per queue: usage (raw, TreeStructure), the non-blocked children in a
//     KeyHeap, sum_norm = Σ_{non-blocked c, s_c>0} (w_c/s_c)·U_c and
//     sum_blk  = Σ_{blocked c} U_c, from which U = M·sum_norm + sum_blk with
//     M = the heap's minimum key; blocked = heap empty;
//   * per job: blocked flag and key s/w.
// An allocate or release touches the job, its leaf and the leaf's ancestors:
// O(depth · (R + log fanout)). Changes of blocked-ness that are not the job's
// own (a capability reached, a held-back guarantee crossed, a user limit
// reached) refresh only the jobs they concern. A change of the saturated set
// re-derives every key (every s(U) changes); see docs/algorithm.md.
//
// Invariants (Tree::CheckInvariants recomputes them from the raw state):
//   * views_[cur_] is exact for saturated_ (= the resources with free <= 0);
//     a saved view (another saturated set) is exact up to its log_pos in the
//     touched log, and catches up from there when it becomes current again
//     (SwitchView); the log holds every job touched since the oldest saved
//     view was current.
//   * Every view has an entry for every job id and queue id in use
//     (GrowViews); a leaf heap has room for every job of its leaf
//     (LinkToLeaf), so a shard-local event never moves a heap's buffer.
//
// Thread safety: every method is for a caller that holds the tree
// exclusively, except ChangeAllocation, RefreshJob, Propagate and the other
// methods that take a Scratch: with a shard's Scratch (sc.local) they run
// in a shard-local event, under `rw` shared plus the job's shard lock
// (engine/tree_shards.h), and then write only the job, the queues of its
// top-level subtree below the root, their entries in the current view, and
// the Scratch; what the root would get goes to the Scratch. Such a call is
// made only when the saturated set cannot change (TreeShards checks it), so
// SwitchView, the saved views and the touched log proper are exclusive.
// GetQueue and GetJob are exclusive too (api/facade/engine.cc calls them in
// ConcurrentTree's exclusive section). The prefetches are the exception their comment
// states: any section, no shard lock.
#ifndef HDRF_ENGINE_TREE_SHARES_H_
#define HDRF_ENGINE_TREE_SHARES_H_

#include <cstdint>
#include <vector>

#include "engine/key_heap.h"
#include "engine/tree_structure.h"
#include "hdrf/views.h"

namespace hdrf::engine {

class TreeShares : public TreeStructure {
 public:
  ResMask saturated() const { return saturated_; }
  // A queue's or job's published view (hdrf/views.h): raw fields with the
  // derived ones of the current view.
  QueueInfo GetQueue(QueueId q) const;
  JobInfo GetJob(JobId j) const;

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

 protected:
  // Layouts: engine/tree_internal.h.
  struct JobView;
  struct QueueView;
  struct View;
  struct RelaxedPos;

  TreeShares() = default;
  ~TreeShares() = default;

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
  // A new queue's entries in every view (a reused id starts clean).
  void AddQueueViews(QueueId id);
  // shares.cc: derived state
  // Puts job j in its leaf's job list and makes room for it in every
  // view's leaf heap (local events then never move a heap's buffer).
  void LinkToLeaf(JobId j);
  void ComputeRealCapabilities();
  double DominantPerTask(const int64_t* task) const;  // d_j under saturated_
  double ShareOf(const double* u) const;               // s(U)
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
  static void PrefetchHeapSift(const KeyHeap& nb, uint32_t pos);  // tree_prefetch.cc
  // The derived state rebuilt from the raw state: every saved view
  // dropped, the current one rebuilt (RebuildView) for the saturated set
  // of the free capacity (Tree::RebuildAll calls it after a structure
  // change).
  void RebuildShares();
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
  void RecountUsers(QueueId leaf);
  // fill_bound.cc: a lower bound of the waiting task shapes per subtree, so
  // that a step skips subtrees where nothing fits.
  void LowerWaitBound(QueueId leaf, const int64_t* task);
  bool WaitingMayFit(QueueId q) const;
  // What every job below q may take of resources 0..n-1 (n <= R).
  void Room(QueueId q, int n, int64_t* room) const;
  // Room(leaf) for the fit codes: kFitCodeResources amounts (INT64_MAX
  // past R).
  void LeafFitRoom(QueueId leaf, int64_t* room) const;
  // After a search of q found nothing: a leaf's bound to the exact minimum
  // of the shapes in its heap, a queue's to the minimum of its children's.
  void TightenWaitBound(QueueId q) const;
  // The bound of every queue on the leaf's path below every task in its
  // heap, and each heap entry's tag the fit code of its job's task.
  Status CheckWaitBound(QueueId leaf) const;

  ResMask saturated_ = 0;
  // Set with saturated_ (UpdateSaturation): the resources that count in a
  // share, s(U) = max over them of U_r / T_r (not saturated, T_r > 0), and
  // T as doubles.
  ResMask share_res_ = 0;
  std::vector<double> total_d_;


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
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_SHARES_H_
