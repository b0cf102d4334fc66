// Engine::Plan and Engine::ApplyPlan (docs/spec.md §15): the facade's side
// of engine/plan.cc. A plan is made under the exclusive section (it reads
// the whole tree; PlanSession::MakePlan, api/facade/plan_screen.cc);
// applying one is one event, re-checked and logged under the same section.
#include "api/facade/engine_impl.h"
#include "api/facade/plan_screen.h"

namespace hdrf {

StatusOr<hdrf::Plan> Engine::Plan(JobRef job, const PlanOptions& options) const {
  return PlanSession(*this).MakePlan(job, options);
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
