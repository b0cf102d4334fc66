// engine::TreeShares (engine/tree_shares.h): the fill bound. Each queue below the root keeps, in every
// view, a component-wise lower bound `wait_min` of the task shapes of the
// non-blocked jobs in its subtree (the only jobs a step looks at). A step
// skips a subtree in O(depth · R) when some resource of that bound exceeds
// what is available to every job there (docs/spec.md §6: free capacity, and the
// headroom under the capabilities on the path), instead of calling Fits on
// each of its jobs. The skip is exact: every job it passes over fails Fits.
//
// Maintenance (docs/algorithm.md, "Fill bound"):
//   * a job that enters its leaf's non-blocked heap lowers the bound of its
//     leaf and of every ancestor below the root, stopping at the first that
//     it does not lower (a parent's bound is never above a child's);
//   * a job that leaves the heap changes nothing: the bound stays a lower
//     bound, only a looser one;
//   * a step that searched a leaf (or a queue) and found nothing tightens
//     it: to the exact minimum of the shapes it visited (every job of the
//     heap), or to the minimum of its children's bounds.
// The root keeps no bound (shard-local events never write the root).
#include <algorithm>
#include <climits>

#include "engine/tree_shares.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

void TreeShares::LowerWaitBound(QueueId leaf, const int64_t* task) {
  for (QueueId a = leaf; a != 0 && a != kNone; a = queues_[a].parent) {
    int64_t* m = QV(a).wait_min.data();
    bool lowered = false;
    for (int r = 0; r < R_; ++r)
      if (task[r] < m[r]) {
        m[r] = task[r];
        lowered = true;
      }
    if (!lowered) return;
  }
}

bool TreeShares::WaitingMayFit(QueueId qid) const {
  if (qid == 0) return true;
  const Queue& q = queues_[qid];
  const int64_t* m = QV(qid).wait_min.data();
  const bool leaf = q.children.empty();
  for (int r = 0; r < R_; ++r) {
    // What every job below may take of r: free (less the leaf's held-back
    // guarantees) and the headroom under each capability on the path.
    int64_t avail = free_[r] - (leaf ? q.held_back[r] : 0);
    if (m[r] > avail) return false;
  }
  for (QueueId a = qid; a != kNone; a = queues_[a].parent) {
    const Queue& A = queues_[a];
    if (!A.cap_set) continue;
    for (int r = 0; r < R_; ++r)
      if (m[r] > A.cap[r] - A.usage[r]) return false;
  }
  return true;
}

void TreeShares::TightenWaitBound(QueueId qid, const int64_t* visited_min) const {
  if (qid == 0) return;
  int64_t* m = QV(qid).wait_min.data();
  if (visited_min) {
    std::copy(visited_min, visited_min + R_, m);
    return;
  }
  std::fill(m, m + R_, INT64_MAX);
  for (QueueId c : queues_[qid].children) {
    const int64_t* cm = QV(c).wait_min.data();
    for (int r = 0; r < R_; ++r) m[r] = std::min(m[r], cm[r]);
  }
}

Status TreeShares::CheckWaitBound(QueueId leaf) const {
  const KeyHeap& nb = QV(leaf).nb;
  for (uint32_t i = 0; i < nb.size(); ++i) {
    const int64_t* t = &task_[size_t{nb.at(i).id} * R_];
    for (QueueId a = leaf; a != 0 && a != kNone; a = queues_[a].parent)
      for (int r = 0; r < R_; ++r)
        if (QV(a).wait_min[r] > t[r])
          return Status::Internal("queue " + queues_[a].path + ": fill bound of " + names_[r] +
                                  " above the task of job " + job_names_[nb.at(i).id]);
  }
  return Status::Ok();
}

}  // namespace hdrf::engine
