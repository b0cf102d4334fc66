#include <cstdio>
#include <cstring>

#include "hdrf/config.h"
#include "hdrf/sim.h"
#include "tools/commands.h"
#include "tools/flags.h"

namespace hdrf::tools {

int CmdSim(int argc, char** argv) {
  Flags flags({}, {"help"});
  Status s = flags.Parse(argc, argv, 2);
  if (flags.Has("help")) {
    std::puts(
        "usage: hdrf sim FILE\n\n"
        "Runs the scenario in FILE (SPEC §10): submits its jobs in order, runs its\n"
        "steps (default: fill) and prints one JSON object on stdout:\n"
        "  {\"jobs\": [{\"name\", \"queue\", \"tasks_allocated\", \"allocated\", \"share\", ...}],\n"
        "   \"queues\": [...], \"steps\": N, \"digest\": \"...\"}\n"
        "Errors name the line and the step; the exit code is then 1.");
    return 0;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "hdrf sim: %s\n", s.message().c_str());
    return 2;
  }
  if (flags.positional().size() != 1) {
    std::fprintf(stderr, "hdrf sim: expected one scenario FILE (see --help)\n");
    return 2;
  }
  const std::string& file = flags.positional()[0];
  auto sc = LoadScenarioFile(file);
  if (!sc.ok()) {
    std::fprintf(stderr, "hdrf sim: %s\n", sc.status().message().c_str());
    return 1;
  }
  auto res = RunScenario(*sc);
  if (!res.ok()) {
    std::fprintf(stderr, "hdrf sim: %s: %s\n", file.c_str(), res.status().message().c_str());
    return 1;
  }
  std::printf("%s\n", SimResultToJson(*res).c_str());
  return 0;
}

}  // namespace hdrf::tools
