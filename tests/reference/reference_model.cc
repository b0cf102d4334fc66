// ReferenceModel: see reference_model.h; the layout of its files is in
// reference_internal.h. This file: the enqueue gate (§12), the events, the
// scheduling step (§5, with §14 gangs) and the views.
#include "tests/reference/reference_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "tests/reference/reference_internal.h"

namespace hdrf::ref {
namespace detail {

// ---------------------------------------------------------------------------
// 1. Enqueue gate (§12, with §14's m)
// ---------------------------------------------------------------------------

// m × task, per resource, m the gang size of §14 (minAvailable, 0 counting
// as 1, capped at the job's task count).
std::vector<Wide> Minimum(const Job& j) {
  std::vector<Wide> v(j.task.size());
  for (size_t r = 0; r < j.task.size(); ++r) v[r] = static_cast<Wide>(GangSize(j)) * j.task[r];
  return v;
}

bool GateAdmits(const Model& m, const Job& j) {
  const View v(m);
  const size_t R = m.R();
  const std::string& leaf = j.queue;
  const std::vector<Wide> need = Minimum(j);
  const Vec guarantee = m.Dense(m.queues.at(leaf).guarantee, 0);
  const Vec& leaf_usage = v.Usage(leaf);
  const Vec& all_usage = v.Usage(kRoot);
  // Σ minimums of Inqueue jobs (admitted, no task allocated: semantics 12).
  std::vector<Wide> inq_leaf(R, 0), inq_all(R, 0);
  for (const auto& o : m.jobs) {
    if (&o == &j || o.state != JobState::kInqueue) continue;
    const std::vector<Wide> mo = Minimum(o);
    for (size_t r = 0; r < R; ++r) {
      inq_all[r] += mo[r];
      if (o.queue == leaf) inq_leaf[r] += mo[r];
    }
  }
  // (a) m fits in guarantee − usage − the other Inqueue jobs' minimums.
  bool in_guarantee = true;
  for (size_t r = 0; r < R; ++r)
    if (need[r] > static_cast<Wide>(guarantee[r]) - leaf_usage[r] - inq_leaf[r]) in_guarantee = false;
  if (in_guarantee) return true;
  // (b) Σ usage + Σ Inqueue minimums + m <= f × T, and the same sums for the
  // leaf within its real capability.
  const double f = *m.overcommit_factor;
  const Vec& rc = v.RealCap(leaf);
  for (size_t r = 0; r < R; ++r) {
    const Wide cluster_sum = static_cast<Wide>(all_usage[r]) + inq_all[r] + need[r];
    // f × T is a plain double product (f = 0.7, T = 10 cpu -> 7 cpu).
    if (static_cast<double>(cluster_sum) > f * static_cast<double>(m.total[r])) return false;
    const Wide leaf_sum = static_cast<Wide>(leaf_usage[r]) + inq_leaf[r] + need[r];
    if (leaf_sum > static_cast<Wide>(rc[r])) return false;
  }
  return true;
}

void ReexaminePending(Model& m) {
  if (!m.overcommit_factor.has_value()) return;
  for (auto& j : m.jobs)
    if (j.state == JobState::kPending && GateAdmits(m, j)) j.state = JobState::kInqueue;
}

void SettleState(Job& j) {
  if (j.allocated > 0) {
    j.state = JobState::kRunning;
  } else if (j.state == JobState::kRunning) {
    j.state = JobState::kInqueue;
  }
}

}  // namespace detail


// ---------------------------------------------------------------------------
// 2. ReferenceModel
// ---------------------------------------------------------------------------

using detail::Job;
using detail::Model;
using detail::Queue;
using detail::View;

ReferenceModel::ReferenceModel() : s_(std::make_unique<State>()) {}
ReferenceModel::~ReferenceModel() = default;

StatusOr<std::unique_ptr<ReferenceModel>> ReferenceModel::Create(
    const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
    std::optional<double> overcommit_factor) {
  std::unique_ptr<ReferenceModel> rm(new ReferenceModel());
  Model& m = rm->s_->m;
  for (const auto& [r, v] : cluster) {
    if (r.empty()) return Status::InvalidArgument("cluster: empty resource name");
    if (v < 0) return Status::InvalidArgument("cluster: " + r + " is negative");
    m.res.push_back(r);
    m.total.push_back(v);
  }
  if (overcommit_factor.has_value() &&
      !(std::isfinite(*overcommit_factor) && *overcommit_factor >= 0))
    return Status::InvalidArgument("overcommit_factor must be a finite number >= 0");
  m.overcommit_factor = overcommit_factor;
  Queue root;
  root.path = detail::kRoot;
  m.queues[root.path] = root;

  // Any order: sort by path, which puts every parent before its children.
  std::map<std::string, QueueSpec> by_path;
  for (const auto& q : queues) {
    if (!by_path.emplace(q.path, q).second)
      return Status::AlreadyExists("queue " + q.path + ": listed twice");
  }
  for (const auto& [path, spec] : by_path) {
    if (path == detail::kRoot) {
      HDRF_RETURN_IF_ERROR(detail::UpdateQueueIn(m, spec, /*with_state=*/true));
      continue;
    }
    HDRF_RETURN_IF_ERROR(detail::ValidatePath(path));
    // Unlisted parents: open, weight 1.
    for (const auto& a : detail::PathFromRoot(detail::ParentOf(path))) {
      if (m.queues.count(a)) continue;
      QueueSpec implicit;
      implicit.path = a;
      HDRF_RETURN_IF_ERROR(detail::CreateQueueIn(m, implicit));
    }
    HDRF_RETURN_IF_ERROR(detail::CreateQueueIn(m, spec));
  }
  return rm;
}

detail::Model& ReferenceModel::Mutable() {
  s_->view.reset();
  return s_->m;
}

Status ReferenceModel::CreateQueue(const QueueSpec& q) { return detail::CreateQueueIn(Mutable(), q); }

Status ReferenceModel::UpdateQueue(const QueueSpec& q) {
  return detail::UpdateQueueIn(Mutable(), q, /*with_state=*/false);
}

Status ReferenceModel::SetQueueState(const std::string& path, QueueState state) {
  Model& m = Mutable();
  if (m.FindQueue(path) == nullptr) return Status::NotFound("queue " + path + ": does not exist");
  if (state == QueueState::kOpen) {
    // Opening applies to the queue alone, refused while the parent is not open.
    const Queue* p = m.FindQueue(detail::ParentOf(path));
    if (p != nullptr && p->state != QueueState::kOpen)
      return Status::FailedPrecondition("queue " + path + ": cannot open while parent " + p->path +
                                        " is " + QueueStateName(p->state));
    m.queues[path].state = QueueState::kOpen;
    return Status::Ok();
  }
  // Closing / closed cascades to the whole subtree.
  for (auto& [p, q] : m.queues)
    if (detail::InSubtree(p, path)) q.state = state;
  return Status::Ok();
}

Status ReferenceModel::DeleteQueue(const std::string& path) {
  Model& m = Mutable();
  if (path == detail::kRoot) return Status::InvalidArgument("queue root: cannot be deleted");
  const Queue* q = m.FindQueue(path);
  if (q == nullptr) return Status::NotFound("queue " + path + ": does not exist");
  if (q->state != QueueState::kClosed)
    return Status::FailedPrecondition("queue " + path + ": only a closed queue can be deleted (it is " +
                                      QueueStateName(q->state) + ")");
  if (m.SubtreeHasJobs(path))
    return Status::FailedPrecondition("queue " + path + ": its subtree holds jobs");
  for (auto it = m.queues.begin(); it != m.queues.end();) {
    if (detail::InSubtree(it->first, path)) {
      it = m.queues.erase(it);
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

StatusOr<std::string> ReferenceModel::Submit(const JobSpec& spec) {
  Model& m = Mutable();
  const std::string& name = spec.name;
  if (name.empty()) return Status::InvalidArgument("job: empty name");
  if (m.FindJob(name) != nullptr) return Status::AlreadyExists("job " + name + ": already exists");
  if (spec.tasks < 0) return Status::InvalidArgument("job " + name + ": task count below 0");
  if (spec.min_available < 0) return Status::InvalidArgument("job " + name + ": minAvailable below 0");
  // §14: minAvailable is the gang size, capped at the job's task count.
  // Choice (as engine::Tree): any minAvailable is accepted here and capped;
  // the engine's public Submit refuses a gang larger than a job of at least
  // one task (new input), while logs written before gangs existed, where
  // minAvailable was only the gate's minimum, still replay.
  if (!std::isfinite(spec.weight))
    return Status::InvalidArgument("job " + name + ": weight must be a finite number");
  detail::Vec task(m.R(), 0);
  for (const auto& [r, v] : spec.task) {
    const int i = m.ResIndex(r);
    if (i < 0) return Status::NotFound("job " + name + ": task names unknown resource " + r);
    if (v < 0) return Status::InvalidArgument("job " + name + ": task " + r + " is negative");
    if (v > m.total[i])
      return Status::InvalidArgument("job " + name + ": task " + r + " " + std::to_string(v) +
                                     " exceeds the cluster total " + std::to_string(m.total[i]));
    task[i] = v;
  }

  std::string q = spec.queue.empty() ? std::string(detail::kRoot) : spec.queue;
  const Queue* queue = m.FindQueue(q);
  if (queue == nullptr) return Status::NotFound("job " + name + ": queue " + q + " does not exist");
  if (m.IsLeaf(q)) {
    if (queue->state != QueueState::kOpen)
      return Status::FailedPrecondition("job " + name + ": queue " + q + " is " +
                                        QueueStateName(queue->state));
  } else {
    // Admission (§5, semantics 7): descend through open children by the
    // dominant share (all resources) of the subtree's usage over its weight.
    const View v(m);
    while (!m.IsLeaf(q)) {
      std::vector<std::string> open;
      for (const auto& c : m.ChildQueues(q))
        if (m.queues.at(c).state == QueueState::kOpen) open.push_back(c);
      auto key = [&](const std::string& c) {
        return detail::DrfShareAll(v.Usage(c), m.total) / detail::ClampWeight(m.queues.at(c).weight);
      };
      auto before = [](const std::string& a, const std::string& b) {
        return detail::NameOf(a) < detail::NameOf(b);
      };
      auto pick = detail::PickMin(open, key, before);
      if (!pick.has_value())
        return Status::FailedPrecondition("job " + name + ": no open queue under " + q);
      q = *pick;
    }
  }

  Job j;
  j.name = name;
  j.queue = q;
  j.user = spec.user;
  j.tasks = spec.tasks;
  j.allocated = 0;
  j.task = task;
  j.weight = spec.weight;
  j.min_available = spec.min_available;
  j.state = m.overcommit_factor.has_value() ? JobState::kPending : JobState::kInqueue;
  m.jobs.push_back(j);
  // Choice: only the new job is evaluated at submit; the other Pending jobs
  // are re-examined after the events semantics item 12 lists (release,
  // finish, removal, capacity change), not here, nor after Allocate/Step or
  // UpdateQueue.
  if (m.overcommit_factor.has_value() && detail::GateAdmits(m, m.jobs.back()))
    m.jobs.back().state = JobState::kInqueue;
  return q;
}

Status ReferenceModel::Remove(const std::string& job) {
  Model& m = Mutable();
  for (auto it = m.jobs.begin(); it != m.jobs.end(); ++it) {
    if (it->name == job) {
      m.jobs.erase(it);
      detail::ReexaminePending(m);
      return Status::Ok();
    }
  }
  return Status::NotFound("job " + job + ": does not exist");
}

Status ReferenceModel::Allocate(const std::string& job, int64_t n) {
  Model& m = Mutable();
  Job* j = m.FindJob(job);
  if (j == nullptr) return Status::NotFound("job " + job + ": does not exist");
  if (n < 1) return Status::InvalidArgument("job " + job + ": allocate count below 1");
  if (j->allocated + n > j->tasks)
    return Status::OutOfRange("job " + job + ": allocating " + std::to_string(n) + " tasks exceeds " +
                              std::to_string(j->tasks - j->allocated) + " unallocated");
  // Semantics item 2: a Pending job (not admitted) is refused, and only the
  // resources the task uses are checked against free.
  if (j->state == JobState::kPending)
    return Status::FailedPrecondition("job " + job + ": Pending (not admitted by the enqueue gate)");
  const View v(m);
  for (size_t r = 0; r < m.R(); ++r) {
    if (j->task[r] > 0 && static_cast<detail::Wide>(n) * j->task[r] > v.Free()[r])
      return Status::FailedPrecondition("job " + job + ": " + std::to_string(n) + " tasks need more " +
                                        m.res[r] + " than is free");
  }
  j->allocated += n;
  detail::SettleState(*j);
  return Status::Ok();
}

Status ReferenceModel::Release(const std::string& job, int64_t n) {
  Model& m = Mutable();
  Job* j = m.FindJob(job);
  if (j == nullptr) return Status::NotFound("job " + job + ": does not exist");
  if (n < 1) return Status::InvalidArgument("job " + job + ": release count below 1");
  if (n > j->allocated)
    return Status::OutOfRange("job " + job + ": releasing " + std::to_string(n) + " tasks but " +
                              std::to_string(j->allocated) + " are running");
  j->allocated -= n;
  detail::SettleState(*j);
  detail::ReexaminePending(m);
  return Status::Ok();
}

Status ReferenceModel::Finish(const std::string& job, int64_t n) {
  Model& m = Mutable();
  Job* j = m.FindJob(job);
  if (j == nullptr) return Status::NotFound("job " + job + ": does not exist");
  if (n < 1) return Status::InvalidArgument("job " + job + ": finish count below 1");
  if (n > j->allocated)
    return Status::OutOfRange("job " + job + ": finishing " + std::to_string(n) + " tasks but " +
                              std::to_string(j->allocated) + " are running");
  j->allocated -= n;
  j->tasks -= n;
  detail::SettleState(*j);
  detail::ReexaminePending(m);
  return Status::Ok();
}

Status ReferenceModel::SetCapacity(const ResourceAmounts& cluster) {
  Model& m = Mutable();
  if (cluster.size() != m.res.size())
    return Status::InvalidArgument("cluster: capacity must name the same resources");
  detail::Vec total;
  for (const auto& [r, v] : cluster) {
    if (m.ResIndex(r) < 0) return Status::InvalidArgument("cluster: unknown resource " + r);
    if (v < 0) return Status::InvalidArgument("cluster: " + r + " is negative");
    total.push_back(v);
  }
  m.total = total;
  detail::ReexaminePending(m);
  return Status::Ok();
}

std::optional<std::string> ReferenceModel::PickNext() const { return PickNext({}); }

std::optional<std::string> ReferenceModel::PickNext(const std::set<std::string>& excluded) const {
  const Model& m = s_->m;
  const View& v = s_->CurrentView();
  std::string q = detail::kRoot;
  if (!v.SubtreeHasSchedulable(q, excluded)) return std::nullopt;
  // 1. Descend from root by the smallest key among the children that have a
  //    schedulable job in their subtree.
  while (!m.IsLeaf(q)) {
    std::vector<std::string> cands;
    for (const auto& c : m.ChildQueues(q))
      if (v.SubtreeHasSchedulable(c, excluded)) cands.push_back(c);
    auto pick = detail::PickMin(
        cands, [&](const std::string& c) { return v.QueueValue(c).key; },
        [](const std::string& a, const std::string& b) { return detail::NameOf(a) < detail::NameOf(b); });
    if (!pick.has_value()) return std::nullopt;  // unreachable
    q = *pick;
  }
  // 2. In the leaf, the schedulable job with the smallest key; ties to the
  //    earlier submitted (candidates are in submission order).
  std::vector<size_t> cands;
  for (size_t i = 0; i < m.jobs.size(); ++i)
    if (m.jobs[i].queue == q && v.JobSchedulable(m.jobs[i]) && !excluded.count(m.jobs[i].name))
      cands.push_back(i);
  auto pick = detail::PickMin(
      cands, [&](size_t i) { return v.JobValue(m.jobs[i]).key; },
      [](size_t a, size_t b) { return a < b; });
  if (!pick.has_value()) return std::nullopt;
  return m.jobs[*pick].name;
}

std::optional<std::string> ReferenceModel::Step() {
  auto name = PickNext();
  if (!name.has_value()) return std::nullopt;
  Job* j = Mutable().FindJob(*name);
  // §14: a job holding no task starts with its gang size m at once (one
  // step); m tasks fit (§6 with m·task), so nothing is over-allocated.
  j->allocated += View::StepTasks(*j);
  detail::SettleState(*j);
  return name;
}

int64_t ReferenceModel::Fill() {
  int64_t steps = 0;
  while (Step().has_value()) ++steps;
  return steps;
}

std::vector<std::string> ReferenceModel::ResourceNames() const { return s_->m.res; }

std::vector<RefNodeView> ReferenceModel::Queues() const {
  const Model& m = s_->m;
  const View& v = s_->CurrentView();
  std::vector<RefNodeView> out;
  for (const auto& [p, q] : m.queues) {
    const detail::NodeValue& nv = v.QueueValue(p);
    RefNodeView n;
    n.name = p;
    n.blocked = nv.blocked;
    n.share = nv.share;
    n.key = nv.key;
    n.vector = nv.u;
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<RefJobView> ReferenceModel::Jobs() const {
  const Model& m = s_->m;
  const View& v = s_->CurrentView();
  std::vector<RefJobView> out;
  for (const auto& j : m.jobs) {
    RefJobView jv;
    jv.name = j.name;
    jv.queue = j.queue;
    jv.user = j.user;
    jv.tasks = j.tasks;
    jv.allocated = j.allocated;
    jv.state = j.state;
    jv.blocked = v.JobBlocked(j);
    jv.key = v.JobValue(j).key;
    jv.drf_share = detail::DrfShareAll(m.Allocation(j), m.total);
    jv.schedulable = v.JobSchedulable(j);
    jv.step_tasks = View::StepTasks(j);
    out.push_back(std::move(jv));
  }
  return out;
}

}  // namespace hdrf::ref
