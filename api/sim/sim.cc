#include "hdrf/sim.h"

#include "hdrf/engine.h"
#include "api/formats/json_line.h"

namespace hdrf {
namespace {

std::string Where(size_t index, int line, const char* what) {
  std::string s = std::string(what) + " " + std::to_string(index + 1);
  if (line > 0) s += " (line " + std::to_string(line) + ")";
  return s;
}

// A plan/evict step (docs/spec.md §15): the plan, applied by evict when it fits.
Status PlanStep(Engine& eng, const ScenarioStep& st, std::vector<SimResult::PlanStep>* plans) {
  HDRF_ASSIGN_OR_RETURN(JobRef ref, eng.FindJob(st.job));
  PlanOptions o;
  if (!ParsePlanMode(st.mode, &o.mode)) return Status::InvalidArgument("unknown plan mode '" + st.mode + "'");
  o.max_victims = st.max_victims;
  HDRF_ASSIGN_OR_RETURN(Plan p, eng.Plan(ref, o));
  SimResult::PlanStep out{std::move(p), false};
  if (st.kind == ScenarioStep::Kind::kEvict && out.plan.fits) {
    HDRF_RETURN_IF_ERROR(eng.ApplyPlan(out.plan));
    out.applied = true;
  }
  if (plans) plans->push_back(std::move(out));
  return Status::Ok();
}

StatusOr<std::unique_ptr<Engine>> RunScenarioSteps(const Scenario& sc, int64_t* fill_steps,
                                                    EngineOptions opts = {},
                                                    bool run_steps = true,
                                                    std::vector<SimResult::PlanStep>* plans = nullptr) {
  if (!opts.overcommit_factor) opts.overcommit_factor = sc.overcommit_factor;
  auto eng_or = Engine::Create(sc.cluster, sc.queues, opts);
  if (!eng_or.ok()) return eng_or.status().WithContext("scenario queues");
  Engine& eng = **eng_or;
  for (size_t i = 0; i < sc.jobs.size(); ++i) {
    auto r = eng.Submit(sc.jobs[i]);
    if (!r.ok()) return r.status().WithContext(Where(i, sc.jobs[i].line, "job"));
  }
  for (size_t i = 0; run_steps && i < sc.steps.size(); ++i) {
    const ScenarioStep& st = sc.steps[i];
    Status s;
    switch (st.kind) {
      case ScenarioStep::Kind::kFill: {
        auto n = eng.Fill();
        if (n.ok()) *fill_steps += *n;
        s = n.status();
        break;
      }
      case ScenarioStep::Kind::kFinish:
      case ScenarioStep::Kind::kRemove: {
        auto ref = eng.FindJob(st.job);
        if (!ref.ok()) {
          s = ref.status();
          break;
        }
        s = st.kind == ScenarioStep::Kind::kFinish ? eng.Finish(*ref, st.tasks) : eng.Remove(*ref);
        break;
      }
      case ScenarioStep::Kind::kSubmit:
        s = eng.Submit(st.submit).status();
        break;
      case ScenarioStep::Kind::kPlan:
      case ScenarioStep::Kind::kEvict:
        s = PlanStep(eng, st, plans);
        break;
    }
    if (!s.ok()) return s.WithContext(Where(i, st.line, "step"));
  }
  return std::move(eng_or).value();
}

}  // namespace

StatusOr<std::unique_ptr<Engine>> RunScenarioEngine(const Scenario& sc) {
  int64_t steps = 0;
  return RunScenarioSteps(sc, &steps);
}

StatusOr<std::unique_ptr<Engine>> RunScenarioEngine(const Scenario& sc,
                                                    const EngineOptions& options, bool run_steps) {
  int64_t steps = 0;
  return RunScenarioSteps(sc, &steps, options, run_steps);
}

StatusOr<SimResult> RunScenario(const Scenario& sc) {
  SimResult res;
  auto eng_or = RunScenarioSteps(sc, &res.steps, {}, true, &res.plans);
  if (!eng_or.ok()) return eng_or.status();
  Engine& eng = **eng_or;
  res.resources = eng.ResourceNames();
  res.total = eng.Total();
  res.jobs = eng.Jobs();
  res.queues = eng.Queues();
  res.digest = eng.DigestHex();
  return res;
}

std::string SimResultToJson(const SimResult& r) {
  Json jobs = Json::array();
  for (const JobInfo& j : r.jobs) {
    Json allocated = Json::object();
    for (size_t k = 0; k < r.resources.size(); ++k)
      if (j.task[k] > 0) allocated[r.resources[k]] = j.allocated * j.task[k];
    jobs.push_back({{"name", j.name}, {"queue", j.queue}, {"user", j.user}, {"tasks_allocated", j.allocated},
                    {"tasks", j.tasks}, {"allocated", std::move(allocated)}, {"share", j.drf_share},
                    {"key", j.key}, {"blocked", j.blocked}, {"state", JobStateName(j.state)}});
  }
  Json queues = Json::array();
  for (const QueueInfo& q : r.queues) {
    Json allocated = Json::object();
    for (size_t k = 0; k < r.resources.size(); ++k) allocated[r.resources[k]] = q.usage[k];
    queues.push_back({{"path", q.path}, {"share", q.share}, {"key", q.key}, {"blocked", q.blocked},
                      {"allocated", std::move(allocated)}});
  }
  Json plans = Json::array();
  for (const SimResult::PlanStep& ps : r.plans) {
    const Plan& p = ps.plan;
    Json victims = Json::array();
    for (const PlanVictim& v : p.victims) victims.push_back({{"job", v.name}, {"tasks", v.tasks}});
    Json short_by = Json::object();
    for (const auto& [res, amount] : p.short_by) short_by[res] = amount;
    plans.push_back({{"job", p.job}, {"mode", PlanModeName(p.mode)}, {"fits", p.fits}, {"tasks", p.tasks},
                     {"victims", std::move(victims)}, {"short", std::move(short_by)}, {"applied", ps.applied}});
  }
  // "plans" only for a scenario with plan or evict steps: other outputs stay
  // as they were (pinned in tests/tools/digests_test.cc).
  if (r.plans.empty())
    return JsonLine({{"jobs", std::move(jobs)}, {"queues", std::move(queues)}, {"steps", r.steps}, {"digest", r.digest}});
  return JsonLine({{"jobs", std::move(jobs)}, {"plans", std::move(plans)}, {"queues", std::move(queues)},
                   {"steps", r.steps}, {"digest", r.digest}});
}

}  // namespace hdrf
