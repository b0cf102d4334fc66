// The C interface's plans (hdrf/c.h "taking back: plans", docs/spec.md
// §15): hdrf_plan over Engine::Plan, the accessors of the opaque
// hdrf_plan_t, and hdrf_apply_plan over Engine::ApplyPlan.
//
// An hdrf_plan_t is heap memory owned by the caller (hdrf_plan_free). It
// copies the C++ plan and the tag of the engine that made it: applying it
// on another engine, or on a destroyed one whose slot holds a new engine,
// is refused by the tag before the engine sees its job ids.
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "api/capi/capi_internal.h"
#include "hdrf/plan.h"

using hdrf::Status;
using hdrf::StatusOr;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

struct hdrf_plan {
  hdrf::Plan plan;
  uint32_t tag = 0;                                    // EngineUse::tag of its engine
  std::vector<std::pair<std::string, int64_t>> short_by;  // plan.short_by, indexable
};

namespace {

StatusOr<hdrf::PlanMode> PlanMode(int mode) {
  switch (mode) {
    case HDRF_PLAN_RECLAIM: return hdrf::PlanMode::kReclaim;
    case HDRF_PLAN_PREEMPT: return hdrf::PlanMode::kPreempt;
    case HDRF_PLAN_BOTH: return hdrf::PlanMode::kBoth;
    default:
      return Status::InvalidArgument("plan mode " + std::to_string(mode) +
                                     " is not an HDRF_PLAN_* value");
  }
}

Status MakePlan(hdrf_engine_t* engine, hdrf_job_ref_t job, int mode, int64_t max_victims,
                hdrf_plan_t** out) {
  EngineUse u(engine, false);
  HDRF_RETURN_IF_ERROR(u.status());
  if (!out) return NullArg("plan (the output)");
  hdrf::PlanOptions o;
  HDRF_ASSIGN_OR_RETURN(o.mode, PlanMode(mode));
  if (max_victims < -1)
    return Status::InvalidArgument("max_victims " + std::to_string(max_victims) +
                                   ": give -1 (no limit) or a number >= 0");
  if (max_victims >= 0) o.max_victims = max_victims;
  HDRF_ASSIGN_OR_RETURN(hdrf::JobRef ref, DecodeJobRef(u, job));
  HDRF_ASSIGN_OR_RETURN(hdrf::Plan p, u.engine().Plan(ref, o));
  auto* plan = new (std::nothrow) hdrf_plan_t;
  if (!plan) return Status::Internal("out of memory");
  plan->tag = u.tag();
  plan->short_by.assign(p.short_by.begin(), p.short_by.end());
  plan->plan = std::move(p);
  *out = plan;
  return Status::Ok();
}

Status ApplyPlan(hdrf_engine_t* engine, const hdrf_plan_t* plan) {
  EngineUse u(engine, true);
  HDRF_RETURN_IF_ERROR(u.status());
  if (!plan) return NullArg("plan");
  if (plan->tag != u.tag())
    return Status::InvalidArgument("plan for job " + plan->plan.job +
                                   " was not made by this engine (another engine's, or one "
                                   "since destroyed)");
  return u.engine().ApplyPlan(plan->plan);
}

}  // namespace

extern "C" {

hdrf_code hdrf_plan(hdrf_engine_t* engine, hdrf_job_ref_t job, int mode, int64_t max_victims,
                    hdrf_plan_t** plan, char** errptr) {
  SetNull(plan);
  return Guard(errptr, [&] { return MakePlan(engine, job, mode, max_victims, plan); });
}

void hdrf_plan_free(hdrf_plan_t* plan) { delete plan; }

int hdrf_plan_fits(const hdrf_plan_t* plan) { return plan && plan->plan.fits ? 1 : 0; }

int64_t hdrf_plan_tasks(const hdrf_plan_t* plan) { return plan ? plan->plan.tasks : 0; }

int hdrf_plan_mode(const hdrf_plan_t* plan) {
  return plan ? static_cast<int>(plan->plan.mode) : -1;
}

hdrf_code hdrf_plan_job(const hdrf_plan_t* plan, hdrf_job_ref_t* job, const char** name,
                        char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!plan) return NullArg("plan");
    if (job) *job = EncodeJobRef(plan->tag, hdrf::JobRef{plan->plan.id, plan->plan.seq});
    if (name) *name = plan->plan.job.c_str();
    return Status::Ok();
  });
}

size_t hdrf_plan_victim_count(const hdrf_plan_t* plan) {
  return plan ? plan->plan.victims.size() : 0;
}

hdrf_code hdrf_plan_victim(const hdrf_plan_t* plan, size_t i, hdrf_job_ref_t* job,
                           const char** name, int64_t* tasks, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!plan) return NullArg("plan");
    const auto& v = plan->plan.victims;
    if (i >= v.size())
      return Status::OutOfRange("victim " + std::to_string(i) + ": the plan has " +
                                std::to_string(v.size()));
    if (job) *job = EncodeJobRef(plan->tag, hdrf::JobRef{v[i].id, v[i].seq});
    if (name) *name = v[i].name.c_str();
    if (tasks) *tasks = v[i].tasks;
    return Status::Ok();
  });
}

size_t hdrf_plan_short_count(const hdrf_plan_t* plan) { return plan ? plan->short_by.size() : 0; }

hdrf_code hdrf_plan_short(const hdrf_plan_t* plan, size_t i, const char** resource,
                          int64_t* amount, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!plan) return NullArg("plan");
    const auto& s = plan->short_by;
    if (i >= s.size())
      return Status::OutOfRange("short resource " + std::to_string(i) + ": the plan has " +
                                std::to_string(s.size()));
    if (resource) *resource = s[i].first.c_str();
    if (amount) *amount = s[i].second;
    return Status::Ok();
  });
}

hdrf_code hdrf_apply_plan(hdrf_engine_t* engine, const hdrf_plan_t* plan, char** errptr) {
  return Guard(errptr, [&] { return ApplyPlan(engine, plan); });
}

}  // extern "C"
