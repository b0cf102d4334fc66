// Scenario runner (docs/spec.md §10): builds an engine from a Scenario, submits its
// jobs in order and runs its steps.
#ifndef HDRF_SIM_H_
#define HDRF_SIM_H_

#include <memory>
#include <string>
#include <vector>

#include "hdrf/plan.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf {

struct SimResult {
  std::vector<std::string> resources;  // sorted names
  std::vector<int64_t> total;
  std::vector<JobInfo> jobs;           // every job still present, submission order
  std::vector<QueueInfo> queues;       // path order
  int64_t steps = 0;                   // tasks allocated by fill steps
  std::string digest;
  // One per plan/evict step, in order (docs/spec.md §15): the plan, and whether the
  // step applied it.
  struct PlanStep {
    Plan plan;
    bool applied = false;
  };
  std::vector<PlanStep> plans;
};

class Engine;
struct EngineOptions;

// Builds the engine of `scenario`, submits its jobs and runs its steps;
// returns the engine in its final state (for explain and other queries).
StatusOr<std::unique_ptr<Engine>> RunScenarioEngine(const Scenario& scenario);
// The same with `options` for the engine (the scenario's overcommitFactor
// applies unless options set one); run_steps false only submits the jobs.
StatusOr<std::unique_ptr<Engine>> RunScenarioEngine(const Scenario& scenario,
                                                    const EngineOptions& options, bool run_steps);

// Runs `scenario`. An error names the step (1-based) or job and its source
// line: "step 3 (line 14): finish pg1: finish 5 with 2 running tasks".
StatusOr<SimResult> RunScenario(const Scenario& scenario);

// The docs/spec.md §10 JSON object: {"jobs": [...], "plans": [...], ...} on one line.
std::string SimResultToJson(const SimResult& r);

}  // namespace hdrf

#endif  // HDRF_SIM_H_
