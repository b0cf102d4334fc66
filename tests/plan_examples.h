// The worked examples of docs/spec.md §14 and §15 in tests/data/plans: NAME.yaml (a
// scenario with `plan`/`evict` steps, its answer worked by hand in its
// comment) and NAME.expected.json (what `hdrf sim NAME.yaml` prints). Used
// by the reference's runner (tests/reference/reference_plans_test.cc) and
// the engine's (tests/api/sim_plans_test.cc).
#ifndef HDRF_TESTS_PLAN_EXAMPLES_H_
#define HDRF_TESTS_PLAN_EXAMPLES_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace hdrf::testing {

inline std::string PlanExamplesDir() {
  const char* dir = std::getenv("HDRF_TEST_DATA");
  return std::string(dir == nullptr ? "tests/data" : dir) + "/plans";
}

// Every NAME.yaml, sorted.
inline std::vector<std::string> PlanExampleFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(PlanExamplesDir()))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

inline nlohmann::json LoadJsonFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// NAME.expected.json beside NAME.yaml.
inline nlohmann::json ExpectedOutput(const std::string& yaml_path) {
  return LoadJsonFile(yaml_path.substr(0, yaml_path.size() - std::string(".yaml").size()) + ".expected.json");
}

// The plans list must be equal; of the jobs, the fields the expected
// output names (name, queue, tasks_allocated), job by job.
inline void ExpectSameSimOutput(const nlohmann::json& got, const nlohmann::json& want) {
  EXPECT_EQ(got["plans"], want["plans"]) << "got " << got["plans"].dump() << "\nwant " << want["plans"].dump();
  ASSERT_EQ(got["jobs"].size(), want["jobs"].size()) << got["jobs"].dump();
  for (size_t i = 0; i < want["jobs"].size(); ++i)
    for (const auto& [key, value] : want["jobs"][i].items())
      EXPECT_EQ(got["jobs"][i][key], value) << "job " << i << " " << key;
}

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_PLAN_EXAMPLES_H_
