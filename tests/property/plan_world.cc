#include "tests/property/plan_world.h"

namespace hdrf::testing {
namespace {

std::vector<std::string> Leaves(const RandomWorld& w) {
  std::vector<std::string> out;
  for (const QueueSpec& q : w.queues) {
    bool leaf = true;
    for (const QueueSpec& c : w.queues)
      if (c.path.size() > q.path.size() && c.path.compare(0, q.path.size() + 1, q.path + "/") == 0) leaf = false;
    if (leaf) out.push_back(q.path);
  }
  if (out.empty()) out.push_back("root");
  return out;
}

// A job of 1..6 tasks, a third of them gangs (minAvailable 2..tasks).
JobSpec RandomJob(Rng& rng, const RandomWorld& w, const std::vector<std::string>& leaves, int index) {
  JobSpec j;
  j.name = "j" + std::to_string(index);
  j.queue = leaves[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(leaves.size()) - 1))];
  j.user = "u" + std::to_string(rng.Uniform(0, 2));
  j.tasks = rng.Uniform(1, 6);
  j.weight = static_cast<double>(rng.Uniform(1, 3));
  j.min_available = j.tasks >= 2 && rng.Chance(33) ? rng.Uniform(2, j.tasks) : 1;
  for (const auto& [r, total] : w.cluster)
    if (rng.Chance(60)) j.task[r] = rng.Uniform(0, 3) * 500;
  return j;
}

PlanWorldOp Submit(const JobSpec& j) {
  PlanWorldOp op;
  op.kind = PlanWorldOp::Kind::kSubmit;
  op.job = j;
  return op;
}

PlanWorldOp TaskEvent(Rng& rng, const std::vector<JobSpec>& jobs) {
  PlanWorldOp op;
  const int64_t roll = rng.Uniform(1, 10);
  op.kind = roll <= 4 ? PlanWorldOp::Kind::kRelease : roll <= 8 ? PlanWorldOp::Kind::kAllocate
                                                                 : PlanWorldOp::Kind::kFinish;
  op.name = jobs[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(jobs.size()) - 1))].name;
  op.n = rng.Uniform(1, 2);
  return op;
}

}  // namespace

std::string PlanWorldOp::ToString() const {
  static const char* names[] = {"submit", "fill", "allocate", "release", "finish"};
  std::string s = names[static_cast<int>(kind)];
  if (kind == Kind::kSubmit) {
    s += " " + job.name + " to " + job.queue + " tasks " + std::to_string(job.tasks) + " m " +
         std::to_string(job.min_available) + " task{";
    for (const auto& [r, v] : job.task) s += r + ":" + std::to_string(v) + " ";
    s += "}";
  } else if (kind != Kind::kFill) {
    s += " " + name + " " + std::to_string(n);
  }
  return s;
}

const JobSpec* PlanWorld::Spec(const std::string& name) const {
  for (const PlanWorldOp& op : ops)
    if (op.kind == PlanWorldOp::Kind::kSubmit && op.job.name == name) return &op.job;
  return nullptr;
}

// A quarter of the worlds are level: one resource, weight 1 everywhere,
// every task 1 CPU, no capability, guarantee or user limit. There shares
// tie often, where a rule that lets a transfer be undone at once shows.
void MakeLevel(RandomWorld& w, Rng& rng) {
  w.cluster = {{"cpu", rng.Uniform(3, 10) * 1000}};
  for (QueueSpec& q : w.queues) {
    const std::string path = q.path;
    q = QueueSpec();
    q.path = path;
  }
}

// A fifth of the other worlds are fine: one resource of 10^9 bytes and
// every task 2·10^8 bytes plus 0 to 3, so that shares differ by one to a
// few 1e-9 (docs/spec.md §15's "within 1e-9 equal", its share test's
// epsilons); no capability, guarantee or user limit (they were in other
// resources), the weights kept.
void MakeFine(PlanWorld& w, Rng& rng) {
  w.world.cluster = {{"memory", 1000000000}};
  for (QueueSpec& q : w.world.queues) {
    QueueSpec fine;
    fine.path = q.path;
    fine.weight = q.weight;
    q = fine;
  }
  for (PlanWorldOp& op : w.ops)
    if (op.kind == PlanWorldOp::Kind::kSubmit) op.job.task = {{"memory", 200000000 + rng.Uniform(0, 3)}};
}

PlanWorld MakePlanWorld(Rng& rng) {
  PlanWorld w;
  w.world = MakeWorld(rng);
  w.world.overcommit.reset();
  const bool level = rng.Chance(25);
  if (level) MakeLevel(w.world, rng);
  const std::vector<std::string> leaves = Leaves(w.world);
  std::vector<JobSpec> jobs;
  const int early = static_cast<int>(rng.Uniform(2, 7));
  const int late = static_cast<int>(rng.Uniform(1, 4));
  for (int i = 0; i < early + late; ++i) {
    jobs.push_back(RandomJob(rng, w.world, leaves, i));
    if (level) {
      jobs.back().task = {{"cpu", 1000}};
      jobs.back().weight = 1;
    }
  }
  for (int i = 0; i < early; ++i) w.ops.push_back(Submit(jobs[static_cast<size_t>(i)]));
  w.ops.push_back(PlanWorldOp{});  // fill
  const int events = static_cast<int>(rng.Uniform(0, 6));
  for (int i = 0; i < events; ++i) w.ops.push_back(TaskEvent(rng, jobs));
  for (int i = early; i < early + late; ++i) w.ops.push_back(Submit(jobs[static_cast<size_t>(i)]));
  if (rng.Chance(50)) w.ops.push_back(PlanWorldOp{});  // a fill that may start some late jobs
  if (!level && rng.Chance(20)) MakeFine(w, rng);
  return w;
}

Status ApplyPlanWorldOp(ref::ReferenceModel& m, const PlanWorldOp& op) {
  switch (op.kind) {
    case PlanWorldOp::Kind::kSubmit: return m.Submit(op.job).status();
    case PlanWorldOp::Kind::kFill: m.Fill(); return Status::Ok();
    case PlanWorldOp::Kind::kAllocate: return m.Allocate(op.name, op.n);
    case PlanWorldOp::Kind::kRelease: return m.Release(op.name, op.n);
    case PlanWorldOp::Kind::kFinish: return m.Finish(op.name, op.n);
  }
  return Status::Ok();
}

std::unique_ptr<ref::ReferenceModel> BuildReference(const PlanWorld& w) {
  auto m = ref::ReferenceModel::Create(w.world.cluster, w.world.queues, std::nullopt);
  if (!m.ok()) return nullptr;
  for (const PlanWorldOp& op : w.ops) (void)ApplyPlanWorldOp(**m, op);
  return std::move(m).value();
}

std::vector<std::string> WaitingJobs(const ref::ReferenceModel& m) {
  std::vector<std::string> out;
  for (const auto& j : m.Jobs())
    if ((j.state == JobState::kInqueue || j.state == JobState::kRunning) && j.allocated < j.tasks)
      out.push_back(j.name);
  return out;
}

const char* ModeText(PlanMode m) {
  return m == PlanMode::kReclaim ? "reclaim" : m == PlanMode::kPreempt ? "preempt" : "both";
}

std::string ShowPlan(const ref::RefPlan& p) {
  std::string s = p.job + " " + ModeText(p.mode) + (p.fits ? " fits k=" : " fails k=") + std::to_string(p.tasks) + " [";
  for (const auto& v : p.victims) s += v.job + ":" + std::to_string(v.tasks) + " ";
  s += "] short{";
  for (const auto& [r, v] : p.short_by) s += r + ":" + std::to_string(v) + " ";
  return s + "}";
}

TakeBack ClassifyTakeBack(const ref::RefPlan& applied, const ref::RefPlanVictim& entry, const ref::RefPlan& back) {
  if (!back.fits) return TakeBack::kNone;
  bool takes = false;
  for (const auto& v : back.victims) takes = takes || v.job == applied.job;
  if (!takes) return TakeBack::kNone;
  const bool reversed = applied.victims.size() == 1 && back.victims.size() == 1 && back.tasks == entry.tasks &&
                        back.victims[0].tasks == applied.tasks;
  return reversed ? TakeBack::kFailure : TakeBack::kCounted;
}

std::string PlanCounts::Summary() const {
  auto n = [](int64_t v) { return std::to_string(v); };
  return n(worlds) + " worlds, " + n(plans) + " plans (" + n(fits) + " fit, " + n(failed) + " failed, " +
         n(entries) + " entries), " + n(applied) + " applied, " + n(take_backs) +
         " take-backs (gangs or several entries)";
}

}  // namespace hdrf::testing
