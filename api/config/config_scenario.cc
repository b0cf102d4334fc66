// Form 4: scenarios (docs/spec.md §10, docs/config.md).
#include "api/config/yaml_fields.h"
#include "hdrf/plan.h"

namespace hdrf::config {

// ---------------------------------------------------------------------------
// Form 4: scenarios.

StatusOr<QueueSpec> ParseScenarioQueue(const Reporter& rep, const YAML::Node& node, int fallback,
                                       const ResourceScope& scope) {
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback, "", "a queue entry"));
  QueueSpec q;
  q.line = m.line();
  const Field* p = m.Get("path");
  if (p == nullptr) return rep.Error(m.line(), "", "queue entry has no path");
  HDRF_ASSIGN_OR_RETURN(q.path, GetPath(rep, *p, "queue"));
  const std::string ctx = QueueCtx(q.path);
  HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, ctx, "a queue entry", {"path", HDRF_QUEUE_FIELDS}));
  std::optional<double> weight;
  for (const Field& f : m.fields()) {
    bool handled = false;
    HDRF_RETURN_IF_ERROR(ApplyQueueField(rep, f, ctx, scope, false, &q, &weight, &handled));
  }
  return q;
}

StatusOr<JobSpec> ParseJob(const Reporter& rep, const YAML::Node& node, int fallback,
                           const ResourceScope& scope, const std::string& what) {
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback, "", what));
  JobSpec j;
  j.line = m.line();
  const Field* n = m.Get("name");
  if (n == nullptr) return rep.Error(m.line(), "", what + " has no name");
  HDRF_ASSIGN_OR_RETURN(j.name, GetString(rep, *n, "job", false));
  HDRF_RETURN_IF_ERROR(NameAt(rep, n->ValueLine(), CheckName(NameKind::kJob, j.name)));
  const std::string ctx = "job " + j.name;
  HDRF_RETURN_IF_ERROR(m.CheckKeys(rep, ctx, what,
                                   {"name", "queue", "user", "tasks", "task", "weight",
                                    "minAvailable"}));
  for (const Field& f : m.fields()) {
    if (f.key == "queue") {
      HDRF_ASSIGN_OR_RETURN(j.queue, GetString(rep, f, ctx, true));
      if (!j.queue.empty()) HDRF_RETURN_IF_ERROR(NameAt(rep, f.ValueLine(), CheckQueuePath(j.queue)));
    } else if (f.key == "user") {
      HDRF_ASSIGN_OR_RETURN(j.user, GetString(rep, f, ctx, false));
      HDRF_RETURN_IF_ERROR(NameAt(rep, f.ValueLine(), CheckName(NameKind::kUser, j.user)));
    } else if (f.key == "tasks") {
      HDRF_ASSIGN_OR_RETURN(j.tasks, GetInt(rep, f, ctx, 0, std::numeric_limits<int64_t>::max(),
                                            "a non-negative integer"));
    } else if (f.key == "task") {
      HDRF_ASSIGN_OR_RETURN(j.task, GetResources(rep, f, ctx, scope, false));
    } else if (f.key == "weight") {
      HDRF_ASSIGN_OR_RETURN(j.weight, GetNumber(rep, f, ctx));
    } else if (f.key == "minAvailable") {
      HDRF_ASSIGN_OR_RETURN(j.min_available,
                            GetInt(rep, f, ctx, 0, std::numeric_limits<int64_t>::max(),
                                   "a non-negative integer"));
    }
  }
  return j;
}

StatusOr<ScenarioStep> ParseStep(const Reporter& rep, const YAML::Node& node, int fallback,
                                 size_t index, const ResourceScope& scope) {
  const std::string ctx = "step " + std::to_string(index);
  const char* kExpected = "expected fill, or a map with one key finish, remove, submit, plan or evict";
  ScenarioStep step;
  step.line = rep.LineOf(node, fallback);
  if (node.IsScalar()) {
    if (node.Scalar() == "fill") return step;
    return rep.Error(step.line, ctx, "unknown step '" + node.Scalar() + "' (" + kExpected + ")");
  }
  if (!node.IsMap()) {
    return rep.Error(step.line, ctx, "a step must be fill or a map, got " + Describe(node) +
                                         " (" + kExpected + ")");
  }
  HDRF_ASSIGN_OR_RETURN(MapView m, MapView::Make(rep, node, fallback, ctx, "a step"));
  if (m.fields().size() != 1) {
    return rep.Error(m.line(), ctx,
                     "a step map has exactly one key, got " + std::to_string(m.fields().size()) +
                         " (" + kExpected + ")");
  }
  const Field& f = m.fields()[0];
  step.line = f.line;
  if (f.key == "finish" || f.key == "remove") {
    step.kind = f.key == "finish" ? ScenarioStep::Kind::kFinish : ScenarioStep::Kind::kRemove;
    HDRF_ASSIGN_OR_RETURN(MapView b, MapView::Make(rep, f.value, f.line, ctx, f.key));
    if (f.key == "finish") {
      HDRF_RETURN_IF_ERROR(b.CheckKeys(rep, ctx, "finish", {"job", "tasks"}));
    } else {
      HDRF_RETURN_IF_ERROR(b.CheckKeys(rep, ctx, "remove", {"job"}));
    }
    const Field* job = b.Get("job");
    if (job == nullptr) return rep.Error(b.line(), ctx, f.key + " needs a job");
    HDRF_ASSIGN_OR_RETURN(step.job, GetString(rep, *job, ctx, false));
    if (const Field* t = b.Get("tasks")) {
      HDRF_ASSIGN_OR_RETURN(step.tasks, GetInt(rep, *t, ctx, 1, std::numeric_limits<int64_t>::max(),
                                               "a positive integer"));
    }
    return step;
  }
  if (f.key == "submit") {
    step.kind = ScenarioStep::Kind::kSubmit;
    HDRF_ASSIGN_OR_RETURN(step.submit, ParseJob(rep, f.value, f.line, scope, "submit"));
    return step;
  }
  if (f.key == "plan" || f.key == "evict") {
    step.kind = f.key == "plan" ? ScenarioStep::Kind::kPlan : ScenarioStep::Kind::kEvict;
    HDRF_ASSIGN_OR_RETURN(MapView b, MapView::Make(rep, f.value, f.line, ctx, f.key));
    HDRF_RETURN_IF_ERROR(b.CheckKeys(rep, ctx, f.key, {"job", "mode", "maxVictims"}));
    const Field* job = b.Get("job");
    if (job == nullptr) return rep.Error(b.line(), ctx, f.key + " needs a job");
    HDRF_ASSIGN_OR_RETURN(step.job, GetString(rep, *job, ctx, false));
    if (const Field* mode = b.Get("mode")) {
      HDRF_ASSIGN_OR_RETURN(step.mode, GetString(rep, *mode, ctx, false));
      PlanMode parsed;
      if (!ParsePlanMode(step.mode, &parsed))
        return rep.Error(mode->ValueLine(), ctx,
                         "mode '" + step.mode + "' must be reclaim, preempt or both");
    }
    if (const Field* mv = b.Get("maxVictims")) {
      HDRF_ASSIGN_OR_RETURN(step.max_victims, GetInt(rep, *mv, ctx, 0, std::numeric_limits<int64_t>::max(),
                                                     "a non-negative integer"));
    }
    return step;
  }
  if (f.key == "fill") {
    return rep.Error(f.line, ctx, "fill takes no arguments: write '- fill'");
  }
  return rep.Error(f.line, ctx, "unknown step '" + f.key + "' (" + kExpected + ")");
}

StatusOr<Scenario> ParseScenarioDoc(const Reporter& rep, const MapView& top) {
  HDRF_RETURN_IF_ERROR(top.CheckKeys(rep, "", "a scenario",
                                     {"cluster", "queues", "jobs", "steps", "overcommitFactor"}));
  Scenario sc;
  const Field* cluster = top.Get("cluster");
  if (cluster == nullptr) {
    return rep.Error(top.line(), "", "scenario has no cluster (required key 'cluster')");
  }
  HDRF_ASSIGN_OR_RETURN(sc.cluster, GetCluster(rep, *cluster));
  const ResourceScope scope{&sc.cluster};

  if (const Field* qs = top.Get("queues"); qs && !qs->value.IsNull()) {
    if (!qs->value.IsSequence()) {
      return rep.Error(qs->ValueLine(), "", "queues must be a list, got " + Describe(qs->value));
    }
    std::map<std::string, int> seen;
    for (const YAML::Node& e : qs->value) {
      HDRF_ASSIGN_OR_RETURN(QueueSpec q, ParseScenarioQueue(rep, e, qs->line, scope));
      auto [pos, inserted] = seen.emplace(q.path, q.line);
      if (!inserted) {
        return rep.Error(q.line, "", "duplicate queue " + q.path + " (first defined at line " +
                                         std::to_string(pos->second) + ")");
      }
      sc.queues.push_back(std::move(q));
    }
  }
  if (const Field* js = top.Get("jobs"); js && !js->value.IsNull()) {
    if (!js->value.IsSequence()) {
      return rep.Error(js->ValueLine(), "", "jobs must be a list, got " + Describe(js->value));
    }
    std::map<std::string, int> seen;
    for (const YAML::Node& e : js->value) {
      HDRF_ASSIGN_OR_RETURN(JobSpec j, ParseJob(rep, e, js->line, scope, "a job entry"));
      auto [pos, inserted] = seen.emplace(j.name, j.line);
      if (!inserted) {
        return rep.Error(j.line, "", "duplicate job " + j.name + " (first defined at line " +
                                         std::to_string(pos->second) + ")");
      }
      sc.jobs.push_back(std::move(j));
    }
  }
  const Field* steps = top.Get("steps");
  if (steps == nullptr || steps->value.IsNull()) {
    ScenarioStep fill;
    fill.line = steps ? steps->line : 0;
    sc.steps.push_back(fill);
  } else {
    if (!steps->value.IsSequence()) {
      return rep.Error(steps->ValueLine(), "", "steps must be a list, got " + Describe(steps->value));
    }
    size_t index = 0;
    for (const YAML::Node& e : steps->value) {
      HDRF_ASSIGN_OR_RETURN(ScenarioStep s, ParseStep(rep, e, steps->line, ++index, scope));
      sc.steps.push_back(std::move(s));
    }
  }
  if (const Field* oc = top.Get("overcommitFactor"); oc && !oc->value.IsNull()) {
    HDRF_ASSIGN_OR_RETURN(double v, GetNumber(rep, *oc, ""));
    if (!(v > 0)) {
      return rep.Error(oc->ValueLine(), "",
                       "overcommitFactor must be a number above 0, got " + Describe(oc->value));
    }
    sc.overcommit_factor = v;
  }
  return sc;
}


}  // namespace hdrf::config
