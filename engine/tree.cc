// engine::Tree (engine/tree.h): the events, each a change of the raw state
// (engine/tree_structure.cc) followed by the derived state's update
// (shares.cc) and the gate's (schedule.cc).
#include "engine/tree.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>

#include "engine/tree_internal.h"

namespace hdrf::engine {

Tree::Tree() = default;
Tree::~Tree() = default;

StatusOr<std::unique_ptr<Tree>> Tree::Create(const ResourceAmounts& cluster,
                                             const std::vector<QueueSpec>& queues,
                                             const TreeOptions& options) {
  std::unique_ptr<Tree> t(new Tree());
  HDRF_RETURN_IF_ERROR(t->Build(cluster, queues, options));
  t->RebuildAll();
  return t;
}

Status Tree::CreateQueue(const QueueSpec& q) {
  HDRF_ASSIGN_OR_RETURN(QueueId id, InsertQueue(q));
  AddQueueViews(id);
  RebuildAll();
  return Status::Ok();
}

Status Tree::UpdateQueue(const QueueSpec& q) {
  HDRF_RETURN_IF_ERROR(EditQueue(q));
  RebuildAll();
  return Status::Ok();
}

Status Tree::DeleteQueue(std::string_view path) {
  HDRF_RETURN_IF_ERROR(EraseQueue(path));
  RebuildAll();
  return Status::Ok();
}

StatusOr<JobId> Tree::Submit(const JobSpec& spec) {
  HDRF_ASSIGN_OR_RETURN(std::vector<int64_t> task, CheckJobSpec(spec));
  auto leaf_or = Admit(spec.queue);
  if (!leaf_or.ok()) return leaf_or.status().WithContext("job " + spec.name);
  QueueId leaf = *leaf_or;
  if (queues_[leaf].state != QueueState::kOpen)
    return Status::FailedPrecondition("job " + spec.name + ": queue " + queues_[leaf].path +
                                      " is " + QueueStateName(queues_[leaf].state) +
                                      " and accepts no new jobs");
  const JobId id = NewJob(spec.name, leaf, spec.user, task.data(), spec.tasks, spec.weight,
                          spec.min_available, next_seq_++, 0,
                          options_.overcommit_factor ? JobState::kPending : JobState::kInqueue);
  Job& j = jobs_[id];
  GrowViews();
  for (View& v : views_) v.jobs[id] = JobView();
  Touch(id);
  Queue& lq = queues_[leaf];
  LinkToLeaf(id);
  for (QueueId a = leaf; a != kNone; a = queues_[a].parent)
    ++queues_[a].jobs_by_state[static_cast<int>(j.state)];
  if (j.state == JobState::kInqueue) CountInqueueMin(id, +1, inqueue_min_total_.data());
  job_by_name_.Insert(JobIndex::HashName(job_names_[id]), id);
  job_by_seq_.Insert(JobIndex::HashSeq(j.seq), id);
  ++live_jobs_;
  bool limits_changed = false;
  if (lq.limits_active) {
    User& u = lq.users[j.user];
    if (u.usage.empty()) u.usage.assign(R_, 0);
    if (j.tasks > 0 && u.active_jobs++ == 0) {
      ++lq.active_users;
      limits_changed = true;
    }
  }
  AddJobContribution(id);
  MarkDirty(leaf);
  if (limits_changed) RefreshJobsIn(leaf);  // a new user changes every user's limit
  Propagate();
  // docs/spec.md §12: the gate examines a new job at once; the others wait for a
  // release (docs/semantics.md §12).
  if (j.state == JobState::kPending) {
    if (GateAdmits(id)) {
      Touch(id);
      RemoveJobContribution(id);
      SetJobState(id, JobState::kInqueue);
      AddJobContribution(id);
      MarkDirty(leaf);
      Propagate();
    } else {
      pending_.emplace(j.seq, id);
    }
  }
  return id;
}

Status Tree::Remove(JobId id) {
  HDRF_RETURN_IF_ERROR(CheckJobId(id));
  Job& j = jobs_[id];
  // The job leaves with all its tasks: release them, then unlink.
  if (j.allocated > 0 || j.tasks > 0) ChangeAllocation(id, -j.allocated, -j.tasks);
  RemoveJobContribution(id);
  QueueId leaf = j.queue;
  Queue& lq = queues_[leaf];
  for (QueueId a = leaf; a != kNone; a = queues_[a].parent)
    --queues_[a].jobs_by_state[static_cast<int>(j.state)];
  if (j.state == JobState::kInqueue) CountInqueueMin(id, -1, inqueue_min_total_.data());
  pending_.erase(j.seq);
  assert(j.holder_slot == Job::kNoSlot);  // all its tasks released above
  JobId last = lq.jobs.back();
  lq.jobs[j.slot] = last;
  jobs_[last].slot = j.slot;
  lq.jobs.pop_back();
  job_by_name_.Erase(JobIndex::HashName(job_names_[id]), id);
  job_by_seq_.Erase(JobIndex::HashSeq(j.seq), id);
  std::string().swap(job_names_[id]);
  --live_jobs_;
  if (log_touched_) {
    // Saved views still hold the job's contribution. The record keeps its
    // queue, weight and task row (only `alive` goes) so that catching a
    // view up detaches it (SwitchView), and its id is not reused until the
    // saved views are dropped (DropSavedViews frees it).
    j.alive = false;
    Touch(id);
    retired_jobs_.push_back({id, lq.shard});
  } else {
    j = Job();
    free_job_ids_[lq.shard].push_back(id);
  }
  Propagate();
  // Bounds the retired records; a later switch rebuilds its view instead.
  if (retired_jobs_.size() > live_jobs_ / 8 + 64) DropSavedViews();
  AdmitPending();
  return Status::Ok();
}

Status Tree::Allocate(JobId id, int64_t n) {
  HDRF_RETURN_IF_ERROR(CheckAllocate(id, n));
  const int r = ShortResource(n, &task_[size_t{id} * R_], free_.data(), R_);
  if (r >= 0)
    return Status::OutOfRange("job " + job_names_[id] + ": allocating " + std::to_string(n) + " tasks needs more " +
                              names_[r] + " than is free (" + FormatQuantity(names_[r], free_[r]) + ")");
  ChangeAllocation(id, n, 0);
  return Status::Ok();
}

Status Tree::Release(JobId id, int64_t n) {
  HDRF_RETURN_IF_ERROR(CheckRelease(id, n, "release"));
  ChangeAllocation(id, -n, 0);
  AdmitPending();
  return Status::Ok();
}

Status Tree::Finish(JobId id, int64_t n) {
  HDRF_RETURN_IF_ERROR(CheckRelease(id, n, "finish"));
  ChangeAllocation(id, -n, -n);
  AdmitPending();
  return Status::Ok();
}

Status Tree::SetCapacity(const ResourceAmounts& cluster) {
  std::vector<int64_t> t(R_, 0);
  if (cluster.size() != static_cast<size_t>(R_))
    return Status::InvalidArgument("capacity change must list exactly the cluster's resources");
  HDRF_ASSIGN_OR_RETURN(t, Dense(cluster, "capacity"));
  for (int r = 0; r < R_; ++r) {
    free_[r] += t[r] - total_[r];
    total_[r] = t[r];
  }
  RebuildAll();
  AdmitPending();
  return Status::Ok();
}

Status Tree::RestoreJob(const JobSpec& spec, uint64_t seq, int64_t allocated, JobState state) {
  if (FindName(spec.name) != kNone || FindSeq(seq) != kNone)
    return Status::Corruption("job " + spec.name + ": restored twice");
  HDRF_ASSIGN_OR_RETURN(QueueId leaf, FindQueue(spec.queue));
  if (!IsLeaf(leaf)) return Status::Corruption("job " + spec.name + ": queue " + spec.queue + " is not a leaf");
  auto task = Dense(spec.task, "job " + spec.name + ": task");
  if (!task.ok()) return task.status();
  return RestoreJob(spec.name, leaf, spec.user, task->data(), spec.tasks, spec.weight,
                    spec.min_available, seq, allocated, state);
}

Status Tree::RestoreJob(std::string_view name, QueueId leaf, std::string_view user,
                        const int64_t* task, int64_t tasks, double weight, int64_t min_available,
                        uint64_t seq, int64_t allocated, JobState state) {
  HDRF_ASSIGN_OR_RETURN(JobId id, RestoreJobRaw(name, leaf, user, task, tasks, weight, min_available,
                                                seq, allocated, state));
  LinkToLeaf(id);
  return Status::Ok();
}

void Tree::ReserveJobs(size_t n) {
  const size_t slack = size_t{kShards} * kJobBlock;  // partly used blocks
  jobs_.reserve(n + slack);
  job_names_.reserve(n + slack);
  task_.reserve((n + slack) * R_);
  for (View& v : views_) v.jobs.reserve(n + slack);
  job_by_name_.Reserve(n);
  job_by_seq_.Reserve(n);
}

void Tree::ApplyTaskDelta(JobId id, int64_t d_allocated, int64_t d_tasks) {
  ChangeAllocation(id, d_allocated, d_tasks);
  if (d_allocated < 0) AdmitPending();
}

}  // namespace hdrf::engine
