// Engine::Plan and Engine::ApplyPlan (docs/spec.md §15): the facade's side
// of engine/plan.cc. A plan is made under the exclusive section (it reads
// the whole tree); applying one is one event, re-checked and logged under
// the same section.
#include "api/facade/engine_impl.h"
#include "api/facade/plan_screen.h"

#include <algorithm>
#include <limits>

namespace hdrf {

StatusOr<hdrf::Plan> Engine::Plan(JobRef job, const PlanOptions& options) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_RETURN_IF_ERROR(CheckRef(t, job));
  HDRF_ASSIGN_OR_RETURN(engine::Tree::PlanOutcome o, t.MakePlan(job.id, options.mode, options.max_victims));
  hdrf::Plan p;
  p.id = job.id;
  p.seq = job.seq;
  p.job = t.job_name(job.id);
  p.mode = options.mode;
  p.fits = o.fits;
  p.tasks = o.tasks;
  for (const engine::Tree::PlanEntry& e : o.victims)
    p.victims.push_back({e.job, t.job_seq(e.job), t.job_name(e.job), e.tasks});
  const auto& names = t.resource_names();
  for (size_t r = 0; r < o.short_by.size(); ++r)
    if (o.short_by[r] > 0) p.short_by[names[r]] = o.short_by[r];
  p.made_at_seq = impl_->ct.last_seq();
  return p;
}

bool PlanMayTake(const Engine& engine, JobRef job, const PlanOptions& options, PlanScreen* screen) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  const engine::Tree& t = impl.ct.tree();
  if (!CheckRef(t, job).ok() || (options.max_victims && *options.max_victims < 0)) return true;
  return t.PlanMayTake(job.id, options.mode, &screen->cache_);
}

void SetTaskShapes(const Engine& engine, const std::vector<int64_t>& shapes, PlanScreen* screen) {
  const size_t R = engine.ResourceNames().size();
  std::vector<double>& ratio = screen->cache_.ratio;
  ratio.clear();
  if (R == 0 || shapes.size() % R != 0) return;
  ratio.assign(R * R, 0);
  for (size_t at = 0; at < shapes.size(); at += R)
    for (size_t r = 0; r < R; ++r) {
      if (shapes[at + r] <= 0) continue;
      for (size_t r2 = 0; r2 < R; ++r2) {
        const double x = shapes[at + r2] > 0 ? static_cast<double>(shapes[at + r]) / static_cast<double>(shapes[at + r2])
                                             : std::numeric_limits<double>::infinity();
        ratio[r * R + r2] = std::max(ratio[r * R + r2], x);
      }
    }
}

bool LeafMayTake(const Engine& engine, QueueId leaf, PlanScreen* screen, const std::vector<int64_t>* least) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  const engine::Tree& t = impl.ct.tree();
  if (least && least->size() != t.resource_names().size()) return true;
  return t.LeafMayTake(leaf, &screen->cache_, least ? least->data() : nullptr);
}

std::optional<JobRef> Engine::FirstWaiting(const PlacementSkips* skip) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  std::optional<JobId> j = t.PickWaiting(skip ? &skip->jobs_ : nullptr);
  if (!j) return std::nullopt;
  return JobRef{*j, t.job_seq(*j)};
}

std::vector<JobRef> Engine::WaitingOrder(const PlacementSkips* skip) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  std::vector<JobRef> out;
  for (JobId j : t.WaitingOrder(skip ? &skip->jobs_ : nullptr)) out.push_back(JobRef{j, t.job_seq(j)});
  return out;
}

void WaitingLeaves(const Engine& engine, const std::vector<int64_t>& untried, size_t limit,
                   std::vector<QueueId>* out) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  impl.ct.tree().WaitingLeaves(untried, limit, out);
}

void LeafOrderOf(const Engine& engine, QueueId leaf, const std::vector<JobId>& jobs, size_t limit,
                 std::vector<JobRef>* out) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  const engine::Tree& t = impl.ct.tree();
  thread_local std::vector<JobId> ids;
  t.LeafOrderOf(leaf, jobs, limit, &ids);
  out->clear();
  for (JobId j : ids) out->push_back(JobRef{j, t.job_seq(j)});
}

bool HeldAfterIdle(const Engine& engine, const std::vector<int64_t>& shapes, double max_weight) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  return impl.ct.tree().HeldAfterIdle(shapes, max_weight);
}

uint64_t ShareResources(const Engine& engine) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  return impl.ct.tree().share_resources();
}

Status Engine::ApplyPlan(const hdrf::Plan& plan) {
  if (!plan.fits)
    return Status::FailedPrecondition("plan for job " + plan.job + " found no victims that let it start");
  EventTimer timer(*impl_);
  uint64_t seq;
  {
    Exclusive lock(impl_->ct);
    HDRF_RETURN_IF_ERROR(impl_->ct.Writable());
    engine::Tree& t = impl_->ct.tree();
    HDRF_RETURN_IF_ERROR(CheckRef(t, JobRef{plan.id, plan.seq}));
    Event e;
    e.type = Event::Type::kApplyPlan;
    e.job_seq = plan.seq;
    e.n = plan.tasks;
    // One buffer per thread: the entries cost no allocation per plan.
    thread_local std::vector<engine::Tree::PlanEntry> victims;
    victims.clear();
    e.victims.reserve(plan.victims.size());
    for (const PlanVictim& v : plan.victims) {
      if (!CheckRef(t, JobRef{v.id, v.seq}).ok())
        return Status::Aborted("stale plan for job " + plan.job + ": victim " + v.name + " is gone");
      victims.push_back({v.id, v.tasks});
      e.victims.push_back({v.seq, v.tasks});
    }
    HDRF_RETURN_IF_ERROR(t.ApplyPlan(plan.id, plan.tasks, victims, plan.mode));
    seq = impl_->ct.Record(e);
  }
  if (impl_->journal) HDRF_RETURN_IF_ERROR(impl_->journal->WaitDurable(seq));
  return timer.Done(Status::Ok());
}

}  // namespace hdrf
