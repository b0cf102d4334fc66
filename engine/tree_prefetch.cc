// engine::TreeShares (engine/tree_shares.h): asking for a job's memory
// ahead of its event — its record, task shape and view entries, the nodes
// of its path and the lines of its leaf heap that its key update reads
// (docs/concurrency.md, "Batches").
#include "engine/tree_shares.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {

// The event path of a job reads three records at random addresses in arrays
// of (jobs) entries: the job, its task shape and its entry in the current
// view. At 10^5+ jobs each is a cache miss; the local events ask for all of
// them up front so that the misses overlap with the checks instead of
// following one another.
void TreeShares::PrefetchJobRecord(JobId id) const {
  if (id >= jobs_.size()) return;
  __builtin_prefetch(&jobs_[id]);
  __builtin_prefetch(task_.data() + size_t{id} * R_);
}

void TreeShares::PrefetchJob(JobId id) const {
  if (id >= jobs_.size()) return;
  PrefetchJobRecord(id);
  __builtin_prefetch(views_[cur_].jobs.data() + id, 1);
  // Saved views (other saturated sets): an event that flips the set
  // catches the job up in the view it switches to (SwitchView), so that
  // view's entry, and its heap entry (PrefetchPath), are read too. With one
  // view (nothing ever saturated) this costs a compare.
  for (size_t v = 0; v < views_.size(); ++v)
    if (v != cur_ && id < views_[v].jobs.size()) __builtin_prefetch(views_[v].jobs.data() + id, 1);
}

// The hot lines of queue q's raw node and of its node in the current view
// (three each, at fixed offsets: tree_internal.h).
void TreeShares::PrefetchNodes(QueueId q) const {
  const char* raw = reinterpret_cast<const char*>(&queues_[q]);
  const char* view = reinterpret_cast<const char*>(&views_[cur_].queues[q]);
  for (int line = 0; line < 3; ++line) {
    __builtin_prefetch(raw + 64 * line, 1);
    __builtin_prefetch(view + 64 * line, 1);
  }
}

// Stage 0: the leaf's nodes; stage 1 (when the leaf's raw node has
// arrived): its parent's, and the lines of the leaf heap that the job's key
// update reads (PrefetchHeapSift). Job::queue, Queue::parent and the node
// arrays change only in exclusive sections, and so does a leaf heap's buffer
// (it has room for all the leaf's jobs: local events never move it); the
// heap position is a relaxed atomic read of a value local events store
// atomically, stale if another thread has since moved the entry (then a
// wasted prefetch).
void TreeShares::PrefetchPath(JobId id, int stage) const {
  if (id >= jobs_.size()) return;
  const QueueId q = jobs_[id].queue;
  if (q >= queues_.size()) return;
  if (stage == 0) {
    PrefetchNodes(q);
    return;
  }
  const QueueId parent = queues_[q].parent;
  if (parent != kNone) PrefetchNodes(parent);
  if (id >= views_[cur_].jobs.size()) return;
  PrefetchHeapSift(views_[cur_].queues[q].nb, __atomic_load_n(&views_[cur_].jobs[id].heap_pos, __ATOMIC_RELAXED));
  // A saved view (PrefetchJob): only the job's heap entry, which a
  // catch-up reads first; its neighbours are likely in cache by then.
  for (size_t v = 0; v < views_.size(); ++v) {
    if (v == cur_) continue;
    const View& view = views_[v];
    if (id >= view.jobs.size() || q >= view.queues.size()) continue;
    const KeyHeap& nb = view.queues[q].nb;
    const uint32_t pos = view.jobs[id].heap_pos;  // saved views change only in exclusive sections
    if (pos < nb.capacity()) __builtin_prefetch(nb.slot(pos), 1);
  }
}

// The lines of heap `nb` that updating entry `pos`'s key reads: the entry,
// its parent and grandparent (a lower key sifts up), its children (one
// line; a higher key sifts down, and KeyHeap::SiftDown asks for each level
// below as it goes) and the top (the new minimum). Reads only the buffer's
// address and room.
void TreeShares::PrefetchHeapSift(const KeyHeap& nb, uint32_t pos) {
  const size_t cap = nb.capacity();
  if (pos >= cap) return;  // blocked (kAbsent), or stale
  __builtin_prefetch(nb.slot(0), 1);
  __builtin_prefetch(nb.slot(pos), 1);
  if (pos > 0) {
    const uint32_t up = KeyHeap::Parent(pos);
    __builtin_prefetch(nb.slot(up), 1);
    if (up > 0) __builtin_prefetch(nb.slot(KeyHeap::Parent(up)), 1);
  }
  if (KeyHeap::FirstChild(pos) < cap) __builtin_prefetch(nb.slot(KeyHeap::FirstChild(pos)), 1);
}

}  // namespace hdrf::engine
