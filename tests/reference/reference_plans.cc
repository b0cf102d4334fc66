// Reference model, §15 reclaim and preemption plans, literally: every state
// the pseudo-code names is a copy of the Model, and every value on it is
// recomputed from scratch (a View per question).
//
//   S = current state; plan = []
//   while D does not fit on S:
//     victim = descend from root by the largest d(subtree)/w among the
//              children whose subtree holds a permitted unit that helps ...
//     if there is none, or plan already holds maxVictims units: fail
//     remove that job's unit from S; append (job, tasks) to plan
//   for each entry of plan, last first: drop it if the others still replay
#include <algorithm>
#include <string>
#include <vector>

#include "tests/reference/reference_internal.h"

namespace hdrf::ref {
namespace detail {
namespace {

// room[r]: the largest amount of r that one more allocation in `j`'s leaf
// could take on `s` per §6: free minus held back, the capability headroom
// of every queue on the path, the user-limit headroom of j's user.
Vec Room(const Model& s, const Job& j) {
  const View v(s);
  const Vec hb = v.HeldBack(j.queue);
  const UserLimit limit = v.UserLimitOf(j.queue);
  const Vec uu = v.UserUsage(j.queue, j.user);
  Vec room(s.R());
  for (size_t r = 0; r < s.R(); ++r) {
    int64_t x = v.Free()[r] - hb[r];
    for (const auto& a : PathFromRoot(j.queue)) {
      const int64_t cap = s.Dense(s.queues.at(a).capability, kUnlimited)[r];
      if (cap != kUnlimited) x = std::min(x, cap - v.Usage(a)[r]);
    }
    const int64_t largest = limit.Largest(r);
    if (largest != kUnlimited) x = std::min(x, largest - uu[r]);
    room[r] = x;
  }
  return room;
}

// `s` with `tasks` running tasks of job `name` stopped (task count kept).
Model Without(const Model& s, const std::string& name, int64_t tasks) {
  Model out = s;
  Job* v = out.FindJob(name);
  v->allocated -= tasks;
  SettleState(*v);
  return out;
}

// What one plan computation works with: the waiting job, its demand, the mode.
struct Demand {
  std::string job;
  int64_t k = 1;
  PlanMode mode = PlanMode::kReclaim;

  Vec D(const Model& s) const { return s.Tasks(*s.FindJob(job), k); }
  bool Fits(const Model& s) const {
    const View v(s);
    return v.FitsTasks(*s.FindJob(job), k);
  }
  // Mode reclaim takes units in other leaves, preempt in J's leaf, both either.
  bool ModeAllows(const Model& s, const Job& v) const {
    const bool same_leaf = v.queue == s.FindJob(job)->queue;
    if (mode == PlanMode::kReclaim) return !same_leaf;
    if (mode == PlanMode::kPreempt) return same_leaf;
    return true;
  }
  // V's unit (UnitTasks tasks) is permitted on `s` by the transfer rule.
  bool UnitPermitted(const Model& s, const Job& v) const {
    const Job& j = *s.FindJob(job);
    if (v.name == job || v.allocated == 0 || !ModeAllows(s, v)) return false;
    return Permitted(s, j, D(s), v, s.Tasks(v, UnitTasks(v)), v.queue == j.queue);
  }
  // Removing V's unit raises room[r] for some r with D[r] > room[r].
  bool Helps(const Model& s, const Job& v) const {
    const Job& j = *s.FindJob(job);
    const Vec d = D(s);
    const Vec before = Room(s, j);
    const Model after_s = Without(s, v.name, UnitTasks(v));
    const Vec after = Room(after_s, *after_s.FindJob(job));
    for (size_t r = 0; r < s.R(); ++r)
      if (d[r] > before[r] && after[r] > before[r]) return true;
    return false;
  }
};

// The job whose unit the descent takes on `s`, or nullopt: at each level
// the child with the largest d(subtree)/w among those whose subtree holds a
// permitted unit that helps (ties to the name that sorts last), in the leaf
// the job with the largest d(allocation)/w (ties to the later submitted).
std::optional<size_t> DescendToVictim(const Model& s, const Demand& dm) {
  std::vector<size_t> cands;  // job indices
  for (size_t i = 0; i < s.jobs.size(); ++i)
    if (dm.UnitPermitted(s, s.jobs[i]) && dm.Helps(s, s.jobs[i])) cands.push_back(i);
  if (cands.empty()) return std::nullopt;
  const View v(s);
  auto holds = [&](const std::string& q) {
    for (size_t i : cands)
      if (InSubtree(s.jobs[i].queue, q)) return true;
    return false;
  };
  std::string q = kRoot;
  while (!s.IsLeaf(q)) {
    std::vector<std::string> children;
    for (const auto& c : s.ChildQueues(q))
      if (holds(c)) children.push_back(c);
    q = *PickMax(
        children,
        [&](const std::string& c) { return DrfShareAll(v.Usage(c), s.total) / ClampWeight(s.queues.at(c).weight); },
        [](const std::string& a, const std::string& b) { return NameOf(a) > NameOf(b); });
  }
  std::vector<size_t> in_leaf;
  for (size_t i : cands)
    if (s.jobs[i].queue == q) in_leaf.push_back(i);
  return PickMax(
      in_leaf,
      [&](size_t i) { return DrfShareAll(s.Allocation(s.jobs[i]), s.total) / ClampWeight(s.jobs[i].weight); },
      [](size_t a, size_t b) { return a > b; });
}

// Replays `entries` in order from `s`: each must still name a job whose
// unit is exactly its tasks and permitted at its point; then D must fit.
// On success `*out` (when given) is the state after the entries.
bool Replays(const Model& s, const Demand& dm, const std::vector<RefPlanVictim>& entries, Model* out) {
  Model cur = s;
  for (const auto& e : entries) {
    const Job* v = cur.FindJob(e.job);
    if (v == nullptr || v->allocated == 0 || UnitTasks(*v) != e.tasks) return false;
    if (!dm.UnitPermitted(cur, *v)) return false;
    cur = Without(cur, e.job, e.tasks);
  }
  if (!dm.Fits(cur)) return false;
  if (out != nullptr) *out = std::move(cur);
  return true;
}

// The pruning pass: each entry, last first, is dropped when the entries
// left still replay from the original state.
std::vector<RefPlanVictim> Prune(const Model& s0, const Demand& dm, std::vector<RefPlanVictim> plan) {
  for (size_t i = plan.size(); i-- > 0;) {
    std::vector<RefPlanVictim> trial = plan;
    trial.erase(trial.begin() + static_cast<std::ptrdiff_t>(i));
    if (Replays(s0, dm, trial, nullptr)) plan = std::move(trial);
  }
  return plan;
}

// short: per resource with D[r] > room[r] on `s`, D[r] − room[r].
ResourceAmounts Short(const Model& s, const Demand& dm) {
  const Vec d = dm.D(s);
  const Vec room = Room(s, *s.FindJob(dm.job));
  ResourceAmounts out;
  for (size_t r = 0; r < s.R(); ++r)
    if (d[r] > room[r]) out[s.res[r]] = d[r] - room[r];
  return out;
}

RefPlan MakePlan(const Model& s0, const Demand& dm, std::optional<int64_t> max_victims) {
  RefPlan plan;
  plan.job = dm.job;
  plan.mode = dm.mode;
  plan.tasks = dm.k;
  Model s = s0;
  while (!dm.Fits(s)) {
    const std::optional<size_t> victim = DescendToVictim(s, dm);
    const bool full = max_victims.has_value() && static_cast<int64_t>(plan.victims.size()) >= *max_victims;
    if (!victim.has_value() || full) {
      plan.victims.clear();
      plan.short_by = Short(s, dm);
      return plan;
    }
    const RefPlanVictim entry{s.jobs[*victim].name, UnitTasks(s.jobs[*victim])};
    plan.victims.push_back(entry);
    s = Without(s, entry.job, entry.tasks);
  }
  plan.fits = true;
  plan.victims = Prune(s0, dm, std::move(plan.victims));
  return plan;
}

}  // namespace
}  // namespace detail

StatusOr<RefPlan> ReferenceModel::Plan(const std::string& job, PlanMode mode,
                                       std::optional<int64_t> max_victims) const {
  const detail::Model& m = s_->m;
  HDRF_ASSIGN_OR_RETURN(const detail::Job* j, detail::Actor(m, job, "plan"));
  if (max_victims.has_value() && *max_victims < 0)
    return Status::InvalidArgument("plan for job " + job + ": maxVictims below 0");
  const detail::Demand dm{job, detail::View::StepTasks(*j), mode};
  return detail::MakePlan(m, dm, max_victims);
}

// Choices (as the engine): a plan whose job is gone is NotFound; one whose
// victim is gone, or whose job no longer waits with the same demand k (it
// is Pending, started meanwhile with k != 1, or has fewer than k
// unallocated tasks), is stale: Aborted, like an entry that no longer
// replays. Pending jobs are re-examined (§12) once, after the whole change.
Status ReferenceModel::ApplyPlan(const RefPlan& plan) {
  detail::Model& m = Mutable();
  if (!plan.fits) return Status::FailedPrecondition("plan for job " + plan.job + ": it does not fit");
  const detail::Job* j = m.FindJob(plan.job);
  if (j == nullptr) return Status::NotFound("job " + plan.job + ": does not exist");
  for (const auto& e : plan.victims)
    if (m.FindJob(e.job) == nullptr)
      return Status::Aborted("stale plan for job " + plan.job + ": victim " + e.job + " is gone");
  if (j->state == JobState::kPending || detail::View::StepTasks(*j) != plan.tasks ||
      j->allocated + plan.tasks > j->tasks)
    return Status::Aborted("stale plan: job " + plan.job + " no longer waits for " +
                           std::to_string(plan.tasks) + " tasks");
  const detail::Demand dm{plan.job, plan.tasks, plan.mode};
  detail::Model after;
  if (!detail::Replays(m, dm, plan.victims, &after))
    return Status::Aborted("stale plan for job " + plan.job + ": an entry is no longer its job's unit or "
                           "permitted, or the demand would not fit");
  detail::Job* ja = after.FindJob(plan.job);
  ja->allocated += plan.tasks;
  detail::SettleState(*ja);
  detail::ReexaminePending(after);
  m = std::move(after);
  return Status::Ok();
}

}  // namespace hdrf::ref
