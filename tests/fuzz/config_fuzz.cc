// libFuzzer target: YAML queue configurations (api/hdrf/config.h, docs/spec.md §3 forms
// 1-4). Any input must give a value or an error with a message, never a
// crash; a parsed configuration that names a cluster is then handed to the
// engine's validation (Tree::Create) and, when accepted, checked for the
// engine's invariants.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hdrf/config.h"
#include "engine/tree.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cfg = hdrf::ParseQueueConfig(text, "fuzz.yaml");
  if (!cfg.ok()) {
    if (cfg.status().message().empty()) hdrf::fuzz::Fail("error without a message");
    return 0;
  }
  if (!cfg->cluster.empty() && cfg->queues.size() <= 512) {
    auto tree = hdrf::engine::Tree::Create(cfg->cluster, cfg->queues);
    if (tree.ok() && !(*tree)->CheckInvariants().ok()) hdrf::fuzz::Fail("invariants after Create");
  }
  return 0;
}
