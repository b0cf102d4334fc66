// libFuzzer target: scenarios (docs/spec.md §10, api/hdrf/config.h ParseScenario) and,
// for small ones, the scenario runner (api/hdrf/sim.h) and its JSON output.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hdrf/config.h"
#include "hdrf/sim.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Keeps one run short: a fill allocates one task per step.
bool SmallEnough(const hdrf::Scenario& s) {
  if (s.jobs.size() > 64 || s.queues.size() > 64 || s.steps.size() > 64) return false;
  int64_t tasks = 0;
  for (const auto& j : s.jobs) tasks += j.tasks > 0 ? std::min<int64_t>(j.tasks, 1 << 20) : 0;
  for (const auto& st : s.steps)
    if (st.kind == hdrf::ScenarioStep::Kind::kSubmit)
      tasks += st.submit.tasks > 0 ? std::min<int64_t>(st.submit.tasks, 1 << 20) : 0;
  return tasks <= 4096;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto sc = hdrf::ParseScenario(text, "fuzz.yaml");
  if (!sc.ok()) {
    if (sc.status().message().empty()) hdrf::fuzz::Fail("error without a message");
    return 0;
  }
  if (!SmallEnough(*sc)) return 0;
  auto result = hdrf::RunScenario(*sc);
  if (result.ok()) {
    std::string json = hdrf::SimResultToJson(*result);
    if (json.empty()) hdrf::fuzz::Fail("empty JSON");
  } else if (result.status().message().empty()) {
    hdrf::fuzz::Fail("run error without a message");
  }
  return 0;
}
