// engine::ConcurrentTree: the sections, records and the shard path of a
// single task event (the batches are in concurrent_tree_batch.cc).
#include "engine/concurrent_tree.h"

#include <string>

#include "base/mutex.h"
#include "engine/event.h"

namespace hdrf::engine {

Status CheckRef(const Tree& t, JobRef j) {
  if (!t.job_live(j.id, j.seq))
    return Status::NotFound("job ref #" + std::to_string(j.seq) + "/" + std::to_string(j.id) +
                            ": no such job in this engine (removed, or not a ref it handed out)");
  return Status::Ok();
}

void ConcurrentTree::Init(std::unique_ptr<Tree> tree, uint64_t last_seq, EventSink* sink) {
  base::LockGuard<base::BigReaderLock> unshared(rw_);  // no other thread yet: for the analysis
  tree_ = std::move(tree);
  last_seq_ = last_seq;
  sink_ = sink;
}

std::unique_ptr<Tree> ConcurrentTree::Swap(std::unique_ptr<Tree> tree, uint64_t last_seq) {
  std::unique_ptr<Tree> old = std::move(tree_);
  tree_ = std::move(tree);
  last_seq_ = last_seq;
  return old;
}

void ConcurrentTree::SyncLastSeq() {
  if (sink_) {
    last_seq_ = sink_->last_seq();
    return;
  }
  // Local events happen only on the shards in use (Tree::ShardOf of a
  // job), and that set changes only in exclusive sections.
  for (int s : tree_->used_shards()) {
    last_seq_ += shards_[s].events;
    shards_[s].events = 0;
  }
}

Status ConcurrentTree::Writable() const {
  if (!refusal_.ok()) return refusal_;
  if (sink_) return sink_->health();
  return Status::Ok();
}

Status ConcurrentTree::Apply(const Event& e, JobRef* submitted) {
  HDRF_RETURN_IF_ERROR(Writable());
  Tree& t = *tree_;
  if (e.type == Event::Type::kSubmit) {
    auto id = t.Submit(e.job);
    if (!id.ok()) return id.status();
    if (submitted) *submitted = JobRef{*id, t.job_seq(*id)};
  } else if (e.type == Event::Type::kRemove) {
    HDRF_ASSIGN_OR_RETURN(JobId id, t.FindJobBySeq(e.job_seq));
    HDRF_RETURN_IF_ERROR(t.Remove(id));
  } else {
    HDRF_RETURN_IF_ERROR(ApplyEvent(t, e));
  }
  Record(e);
  return Status::Ok();
}

// Task events on a JobRef: the fast path used by replay and embedders (see
// "Thread safety" in the header).
Status ConcurrentTree::TaskEvent(const Op& op, uint64_t* seq) {
  const JobRef job = op.job;
  bool escalate = false;
  {
    base::SharedLockGuard<base::BigReaderLock> shared(rw_);
    Tree& t = *tree_;
    // The job's lines, then its leaf's, then their buffers and heap entry,
    // each as soon as its address is known, so that the misses of one
    // stage come together (PrefetchAhead does the same for batches).
    t.PrefetchJob(job.id);
    HDRF_RETURN_IF_ERROR(CheckRef(t, job));
    t.PrefetchPath(job.id, 0);
    HDRF_RETURN_IF_ERROR(Writable());
    const int s = t.ShardOf(job.id);
    t.PrefetchPath(job.id, 1);
    base::LockGuard<base::SpinLock> lock(shards_[s].mu);
    HDRF_RETURN_IF_ERROR(op.type == Event::Type::kAllocate
                             ? t.LocalAllocate(job.id, op.n, &escalate)
                             : t.LocalRelease(job.id, op.n, op.type == Event::Type::kFinish, &escalate));
    if (!escalate) {
      if (!sink_) {
        ++shards_[s].events;
        *seq = 0;
        return Status::Ok();
      }
      *seq = sink_->Append(Event::Task(op.type, job.seq, op.n));  // under the shard's lock
      return Status::Ok();
    }
  }
  Exclusive lock(*this);
  HDRF_RETURN_IF_ERROR(CheckRef(*tree_, job));
  HDRF_RETURN_IF_ERROR(Writable());
  HDRF_RETURN_IF_ERROR(ApplyJobEvent(*tree_, op));
  *seq = RecordJob(op.type, job.seq, op.n);
  return Status::Ok();
}

}  // namespace hdrf::engine
