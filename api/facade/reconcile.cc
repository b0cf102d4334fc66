// Engine::Reconcile (hdrf/reconcile.h): the fewest ordinary events that
// make the engine hold the platform's view. Built on the public event
// calls, so every change is validated, logged and numbered like any event.
//
// Order: queues are created and updated first (so that jobs can go there);
// then every removal and every decrease of running tasks (freeing capacity);
// then stale queues are closed and deleted; then submissions and increases.
// Per kept job (engine: T tasks, A running; truth: T' <= T tasks, R'
// running), f = T - T' tasks finished while the engine was not told:
//   A >= f: Finish(f) then Allocate/Release to R'   (at most 2 events)
//   A <  f: Allocate(f - A), Finish(f), Allocate(R') (the allocations wait
//           for the second phase)
// A job with more tasks than the engine's, or another queue, user, shape,
// weight or min_available, is removed and submitted again.
//
// A refusal changes nothing: the events are first applied to a copy of the
// state in memory (no store, no log), and only when every one of them is
// accepted there are they applied to the engine, in the same order, where
// they are then accepted alike. So a bad truth (an unknown queue or
// resource, a bad spec, counts that do not fit, an overflow) is refused
// before the engine or its store changed.
#include <algorithm>
#include <map>
#include <set>

#include "api/facade/engine_impl.h"
#include "api/facade/follower.h"
#include "hdrf/engine.h"
#include "hdrf/quantity.h"
#include "storage/state_io.h"

namespace hdrf {
namespace {

std::vector<int64_t> Dense(const ResourceAmounts& a, const std::vector<std::string>& names,
                           int64_t absent) {
  std::vector<int64_t> v(names.size(), absent);
  for (size_t r = 0; r < names.size(); ++r) {
    auto it = a.find(names[r]);
    if (it != a.end()) v[r] = it->second;
  }
  return v;
}

bool SameSettings(const QueueSpec& want, const QueueInfo& have,
                  const std::vector<std::string>& names) {
  return std::max(want.weight, 1.0) == have.weight &&
         Dense(want.capability, names, kUnlimited) == have.capability &&
         Dense(want.guarantee, names, 0) == have.guarantee && want.reclaimable == have.reclaimable &&
         want.min_user_limit_percent == have.min_user_limit_percent &&
         want.user_limit_factor == have.user_limit_factor;
}

bool SameJob(const TruthJob& want, const JobInfo& have, const std::vector<std::string>& names) {
  return want.queue == have.queue && want.user == have.user &&
         Dense(want.task, names, 0) == have.task && std::max(want.weight, 1.0) == have.weight &&
         want.min_available == have.min_available && want.tasks <= have.tasks;
}

JobSpec SpecOf(const TruthJob& t) {
  JobSpec s;
  s.name = t.name;
  s.queue = t.queue;
  s.user = t.user;
  s.tasks = t.tasks;
  s.task = t.task;
  s.weight = t.weight;
  s.min_available = t.min_available;
  return s;
}

// Counts the events of `s` (when ok) and names the job in errors.
struct Tally {
  ReconcileResult* r;
  Status Do(const std::string& what, Status s) {
    if (!s.ok()) return s.WithContext("reconcile: " + what);
    ++r->events;
    return Status::Ok();
  }
};

Status ReconcileQueues(Engine& e, const std::vector<QueueSpec>& want, Tally& t,
                       std::vector<std::string>* stale) {
  const std::vector<std::string> names = e.ResourceNames();
  std::map<std::string, QueueInfo> have;
  for (QueueInfo& q : e.Queues()) have.emplace(q.path, std::move(q));
  // The given queues and their implied parents (defaults, as Engine::Create
  // makes them), parents first.
  std::map<std::string, QueueSpec> specs;
  for (const QueueSpec& q : want) {
    for (size_t p = q.path.find('/'); p != std::string::npos; p = q.path.find('/', p + 1)) {
      const std::string parent = q.path.substr(0, p);
      if (parent != "root") specs.emplace(parent, QueueSpec{.path = parent});
    }
    specs[q.path] = q;
  }
  std::set<std::string> wanted{"root"};
  std::vector<const QueueSpec*> order;
  for (const auto& [path, q] : specs) order.push_back(&q);
  std::stable_sort(order.begin(), order.end(), [](const QueueSpec* a, const QueueSpec* b) {
    return std::count(a->path.begin(), a->path.end(), '/') < std::count(b->path.begin(), b->path.end(), '/');
  });
  for (const QueueSpec* q : order) {
    wanted.insert(q->path);
    auto it = have.find(q->path);
    if (it == have.end()) {
      HDRF_RETURN_IF_ERROR(t.Do("queue " + q->path, e.CreateQueue(*q)));
      t.r->queues_created.push_back(q->path);
      continue;
    }
    bool updated = false;
    if (!SameSettings(*q, it->second, names)) {
      HDRF_RETURN_IF_ERROR(t.Do("queue " + q->path, e.UpdateQueue(*q)));
      updated = true;
    }
    if (q->state != it->second.state) {
      HDRF_RETURN_IF_ERROR(t.Do("queue " + q->path, e.SetQueueState(q->path, q->state)));
      updated = true;
    }
    if (updated) t.r->queues_updated.push_back(q->path);
  }
  // Stale queues: the topmost of each stale subtree (its subtree goes with it).
  for (const auto& [path, info] : have) {
    if (wanted.count(path)) continue;
    const std::string parent = path.substr(0, path.rfind('/'));
    if (!wanted.count(parent)) continue;
    stale->push_back(path);
  }
  return Status::Ok();
}

Status DeleteQueues(Engine& e, const std::vector<std::string>& stale, Tally& t) {
  std::map<std::string, QueueState> state;
  for (const QueueInfo& q : e.Queues()) state[q.path] = q.state;
  for (const std::string& path : stale) {
    // Every queue of the subtree must be closed before the delete.
    for (const auto& [p, s] : state) {
      if ((p == path || p.rfind(path + "/", 0) == 0) && s != QueueState::kClosed)
        HDRF_RETURN_IF_ERROR(t.Do("queue " + p, e.SetQueueState(p, QueueState::kClosed)));
    }
    HDRF_RETURN_IF_ERROR(t.Do("queue " + path, e.DeleteQueue(path)));
    t.r->queues_deleted.push_back(path);
  }
  return Status::Ok();
}

// The events that make `e` hold `truth`, applied to `e`.
StatusOr<ReconcileResult> ReconcileOn(Engine& e, const ClusterTruth& truth) {
  ReconcileResult result;
  Tally t{&result};
  std::map<std::string, const TruthJob*> want;
  for (const TruthJob& j : truth.jobs) {
    if (j.running < 0 || j.running > j.tasks)
      return Status::InvalidArgument("reconcile: job " + j.name + ": running " +
                                     std::to_string(j.running) + " is not within 0.." +
                                     std::to_string(j.tasks));
    if (!want.emplace(j.name, &j).second)
      return Status::InvalidArgument("reconcile: job " + j.name + " given twice");
  }
  std::vector<std::string> stale_queues;
  if (truth.queues) HDRF_RETURN_IF_ERROR(ReconcileQueues(e, *truth.queues, t, &stale_queues));

  const std::vector<std::string> names = e.ResourceNames();
  // Phase 1: removals and decreases.
  std::vector<const TruthJob*> submit;                    // new or resubmitted
  std::vector<std::pair<JobRef, int64_t>> allocate_later;  // increases
  std::vector<std::pair<JobRef, const TruthJob*>> finish_later;  // A < f
  std::set<std::string> seen;
  for (const JobInfo& have : e.Jobs()) {
    const JobRef ref{have.id, have.seq};
    auto it = want.find(have.name);
    if (it == want.end() || !SameJob(*it->second, have, names)) {
      HDRF_RETURN_IF_ERROR(t.Do("job " + have.name, e.Remove(ref)));
      if (it == want.end()) {
        result.jobs_removed.push_back(have.name);
      } else {
        result.jobs_resubmitted.push_back(have.name);
        submit.push_back(it->second);
        seen.insert(have.name);
      }
      continue;
    }
    seen.insert(have.name);
    const TruthJob& w = *it->second;
    const int64_t f = have.tasks - w.tasks;
    if (f == 0 && have.allocated == w.running) continue;
    result.jobs_adjusted.push_back(have.name);
    if (f > have.allocated) {
      finish_later.emplace_back(ref, &w);
      continue;
    }
    if (f > 0) HDRF_RETURN_IF_ERROR(t.Do("job " + have.name, e.Finish(ref, f)));
    const int64_t running = have.allocated - f;
    if (running > w.running) {
      HDRF_RETURN_IF_ERROR(t.Do("job " + have.name, e.Release(ref, running - w.running)));
    } else if (running < w.running) {
      allocate_later.emplace_back(ref, w.running - running);
    }
  }
  if (!stale_queues.empty()) HDRF_RETURN_IF_ERROR(DeleteQueues(e, stale_queues, t));
  // Phase 2: submissions and increases.
  for (const TruthJob& j : truth.jobs)
    if (!seen.count(j.name)) submit.push_back(&j);
  std::sort(submit.begin(), submit.end(), [](const TruthJob* a, const TruthJob* b) { return a->name < b->name; });
  for (const TruthJob* j : submit) {
    auto submitted = e.Submit(SpecOf(*j));
    if (!submitted.ok()) return submitted.status().WithContext("reconcile: job " + j->name);
    const JobRef ref = *submitted;
    ++result.events;
    if (!seen.count(j->name)) result.jobs_submitted.push_back(j->name);
    if (j->running > 0) allocate_later.emplace_back(ref, j->running);
  }
  for (const auto& [ref, w] : finish_later) {
    auto info = e.GetJob(ref);
    if (!info.ok()) return info.status().WithContext("reconcile: job " + w->name);
    const int64_t f = info->tasks - w->tasks;
    HDRF_RETURN_IF_ERROR(t.Do("job " + w->name, e.Allocate(ref, f - info->allocated)));
    HDRF_RETURN_IF_ERROR(t.Do("job " + w->name, e.Finish(ref, f)));
    if (w->running > 0) HDRF_RETURN_IF_ERROR(t.Do("job " + w->name, e.Allocate(ref, w->running)));
  }
  for (const auto& [ref, n] : allocate_later) {
    auto info = e.GetJob(ref);
    const std::string name = info.ok() ? info->name : "#" + std::to_string(ref.seq);
    HDRF_RETURN_IF_ERROR(t.Do("job " + name, e.Allocate(ref, n)));
  }
  return result;
}

}  // namespace

// A memory-only engine over `tree` (Reconcile's dry run).
std::unique_ptr<Engine> EngineAccess::Scratch(std::unique_ptr<engine::Tree> tree, uint64_t last_seq) {
  auto impl = std::make_unique<Impl>();
  impl->ct.Init(std::move(tree), last_seq, nullptr);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

StatusOr<ReconcileResult> Engine::Reconcile(const ClusterTruth& truth) {
  std::unique_ptr<Engine> scratch;
  {
    Exclusive lock(impl_->ct);
    HDRF_RETURN_IF_ERROR(impl_->ct.Writable());
    auto copy = storage::CopyTree(impl_->ct.tree());
    if (!copy.ok()) return copy.status().WithContext("reconcile");
    scratch = EngineAccess::Scratch(std::move(copy).value(), impl_->ct.last_seq());
  }
  // The dry run: every refusal the engine would give, given on the copy.
  auto dry = ReconcileOn(*scratch, truth);
  if (!dry.ok() || !dry->changed()) return dry;
  scratch.reset();
  return ReconcileOn(*this, truth);
}

}  // namespace hdrf
