// The worked examples of docs/spec.md §14 and §15 (tests/data/plans, each answer
// worked by hand in its comment) through the engine's scenario runner:
// hdrf::RunScenario and SimResultToJson, what `hdrf sim` prints, must equal
// NAME.expected.json. tests/reference/reference_plans_test.cc runs the same
// files through the reference model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hdrf/config.h"
#include "hdrf/sim.h"
#include "tests/plan_examples.h"

namespace hdrf::testing {
namespace {

TEST(SimPlans, WorkedExamplesMatchTheirExpectedOutput) {
  const std::vector<std::string> files = PlanExampleFiles();
  ASSERT_GE(files.size(), 15u) << "tests/data/plans holds the worked examples";
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    auto scenario = LoadScenarioFile(path);
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    auto result = RunScenario(*scenario);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ExpectSameSimOutput(nlohmann::json::parse(SimResultToJson(*result)), ExpectedOutput(path));
  }
}

}  // namespace
}  // namespace hdrf::testing
