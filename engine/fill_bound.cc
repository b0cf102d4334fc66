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
//     it: to the exact minimum of the shapes in the leaf's heap (those its
//     fit codes passed over included), or to the minimum of its children's
//     bounds.
// The root keeps no bound (shard-local events never write the root).
//
// Fit codes (the bound per job). A job's entry in its leaf's heap carries
// in its tag (engine/key_heap.h; what would be padding) the fit code of its
// task (FitCodeOf, engine/tree_internal.h): for each of the first four
// resources a byte naming a floor of the amount, the amount with all but
// its three leading bits cleared (within a fifth of it, never above it; no
// bound for an amount <= 0). It is set when the entry is pushed (the task
// never changes; Update keeps it) and CheckWaitBound checks it. A leaf's
// search (PickInLeaf, engine/schedule.cc) takes the leaf's room (Room:
// free less held-back, and each capability's headroom on the path) and
// passes over, without reading the job, every entry one of whose floors
// exceeds its room for that resource. Exact: then the task's amount
// exceeds the room, so k·task does for every demand k >= 1 and Fits fails
// on that resource; a job whose demand is 0 (no task to start) is not
// Schedulable anyway. The answers are those of Pickable on every job, so
// the step's choice is unchanged; only jobs are read that may fit.
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

// What every job below q may take of each resource r < n: free (less the
// leaf's held-back guarantees) and the headroom under each capability on
// the path (formed in 128 bits, clamped to int64: Fits compares in 128).
void TreeShares::Room(QueueId qid, int n, int64_t* room) const {
  const Queue& q = queues_[qid];
  const bool leaf = q.children.empty();
  for (int r = 0; r < n; ++r) room[r] = free_[r] - (leaf ? q.held_back[r] : 0);
  for (QueueId a = qid; a != kNone; a = queues_[a].parent) {
    const Queue& A = queues_[a];
    if (!A.cap_set) continue;
    for (int r = 0; r < n; ++r) {
      const __int128 h = static_cast<__int128>(A.cap[r]) - A.usage[r];
      if (h < room[r]) room[r] = h < INT64_MIN ? INT64_MIN : static_cast<int64_t>(h);
    }
  }
}

bool TreeShares::WaitingMayFit(QueueId qid) const {
  if (qid == 0) return true;
  int64_t room[kMaxResources];
  Room(qid, R_, room);
  const int64_t* m = QV(qid).wait_min.data();
  for (int r = 0; r < R_; ++r)
    if (m[r] > room[r]) return false;
  return true;
}

void TreeShares::LeafFitRoom(QueueId leaf, int64_t* room) const {
  const int n = std::min(R_, kFitCodeResources);
  Room(leaf, n, room);
  std::fill(room + n, room + kFitCodeResources, INT64_MAX);
}

void TreeShares::TightenWaitBound(QueueId qid) const {
  if (qid == 0) return;
  int64_t* m = QV(qid).wait_min.data();
  std::fill(m, m + R_, INT64_MAX);
  if (queues_[qid].children.empty()) {
    const KeyHeap& nb = QV(qid).nb;
    for (uint32_t i = 0; i < nb.size(); ++i) {
      const int64_t* t = &task_[size_t{nb.at(i).id} * R_];
      for (int r = 0; r < R_; ++r) m[r] = std::min(m[r], t[r]);
    }
    return;
  }
  for (QueueId c : queues_[qid].children) {
    const int64_t* cm = QV(c).wait_min.data();
    for (int r = 0; r < R_; ++r) m[r] = std::min(m[r], cm[r]);
  }
}

Status TreeShares::CheckWaitBound(QueueId leaf) const {
  const KeyHeap& nb = QV(leaf).nb;
  for (uint32_t i = 0; i < nb.size(); ++i) {
    const int64_t* t = &task_[size_t{nb.at(i).id} * R_];
    if (nb.at(i).tag != FitCodeOf(t, R_))
      return Status::Internal("queue " + queues_[leaf].path + ": fit code of job " + job_names_[nb.at(i).id] +
                              " is not that of its task");
    for (QueueId a = leaf; a != 0 && a != kNone; a = queues_[a].parent)
      for (int r = 0; r < R_; ++r)
        if (QV(a).wait_min[r] > t[r])
          return Status::Internal("queue " + queues_[a].path + ": fill bound of " + names_[r] +
                                  " above the task of job " + job_names_[nb.at(i).id]);
  }
  return Status::Ok();
}

}  // namespace hdrf::engine
