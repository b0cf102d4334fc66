// The screens, orders and plans of api/facade/plan_screen.h: PlanSession
// holds one exclusive section for many of them; each free function is a
// session of its own.
#include "api/facade/plan_screen.h"

#include <algorithm>
#include <limits>

#include "api/facade/engine_impl.h"

namespace hdrf {

// The analysis cannot follow a lock held by a member from one call to the
// next: the lock is taken by lock_'s constructor, before t_ and last_seq_
// are read, and held until the session's destruction.
PlanSession::PlanSession(const Engine& engine) NO_THREAD_SAFETY_ANALYSIS
    : lock_(EngineAccess::impl(engine).ct),
      t_(EngineAccess::impl(engine).ct.tree()),
      last_seq_(EngineAccess::impl(engine).ct.last_seq()) {}

StatusOr<Plan> PlanSession::MakePlan(JobRef job, const PlanOptions& options) const {
  HDRF_RETURN_IF_ERROR(CheckRef(t_, job));
  HDRF_ASSIGN_OR_RETURN(engine::Tree::PlanOutcome o, t_.MakePlan(job.id, options.mode, options.max_victims));
  Plan p;
  p.id = job.id;
  p.seq = job.seq;
  p.job = t_.job_name(job.id);
  p.mode = options.mode;
  p.fits = o.fits;
  p.tasks = o.tasks;
  for (const engine::Tree::PlanEntry& e : o.victims)
    p.victims.push_back({e.job, t_.job_seq(e.job), t_.job_name(e.job), e.tasks});
  const auto& names = t_.resource_names();
  for (size_t r = 0; r < o.short_by.size(); ++r)
    if (o.short_by[r] > 0) p.short_by[names[r]] = o.short_by[r];
  p.made_at_seq = last_seq_;
  return p;
}

bool PlanSession::PlanMayTake(JobRef job, const PlanOptions& options, PlanScreen* screen) const {
  if (!CheckRef(t_, job).ok() || (options.max_victims && *options.max_victims < 0)) return true;
  return t_.PlanMayTake(job.id, options.mode, &screen->cache_);
}

bool PlanSession::LeafMayTake(QueueId leaf, PlanScreen* screen, const std::vector<int64_t>* least) const {
  if (least && least->size() != t_.resource_names().size()) return true;
  return t_.LeafMayTake(leaf, &screen->cache_, least ? least->data() : nullptr);
}

void PlanSession::WaitingLeaves(const std::vector<int64_t>& untried, size_t limit, std::vector<QueueId>* out) const {
  t_.WaitingLeaves(untried, limit, out);
}

void PlanSession::NextWaitingLeaves(const std::vector<int64_t>& untried, size_t limit, LeafWalk* walk,
                                    std::vector<QueueId>* out) const {
  t_.NextWaitingLeaves(untried, limit, walk, out);
}

void PlanSession::LeafOrderOf(QueueId leaf, const std::vector<JobId>& jobs, size_t limit,
                              std::vector<JobRef>* out) const {
  thread_local std::vector<JobId> ids;
  t_.LeafOrderOf(leaf, jobs, limit, &ids);
  out->clear();
  for (JobId j : ids) out->push_back(JobRef{j, t_.job_seq(j)});
}

bool PlanSession::HeldAfterIdle(const std::vector<int64_t>& shapes, double max_weight) const {
  return t_.HeldAfterIdle(shapes, max_weight);
}

uint64_t PlanSession::ShareResources() const { return t_.share_resources(); }

void PlanSession::Changed(PlanScreen* screen, const std::vector<QueueId>& leaves) const {
  for (QueueId q : leaves) t_.ScreenChanged(q, &screen->cache_);
}

bool PlanMayTake(const Engine& engine, JobRef job, const PlanOptions& options, PlanScreen* screen) {
  return PlanSession(engine).PlanMayTake(job, options, screen);
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
  return PlanSession(engine).LeafMayTake(leaf, screen, least);
}

void WaitingLeaves(const Engine& engine, const std::vector<int64_t>& untried, size_t limit,
                   std::vector<QueueId>* out) {
  PlanSession(engine).WaitingLeaves(untried, limit, out);
}

void LeafOrderOf(const Engine& engine, QueueId leaf, const std::vector<JobId>& jobs, size_t limit,
                 std::vector<JobRef>* out) {
  PlanSession(engine).LeafOrderOf(leaf, jobs, limit, out);
}

bool HeldAfterIdle(const Engine& engine, const std::vector<int64_t>& shapes, double max_weight) {
  return PlanSession(engine).HeldAfterIdle(shapes, max_weight);
}

uint64_t ShareResources(const Engine& engine) { return PlanSession(engine).ShareResources(); }

}  // namespace hdrf
