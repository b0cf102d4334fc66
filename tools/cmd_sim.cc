#include <cstdio>
#include <cstring>

#include "hdrf/config.h"
#include "hdrf/sim.h"
#include "tools/commands.h"
#include "tools/cli.h"

namespace hdrf::tools {

int CmdSim(int argc, char** argv) {
  Cli cli("hdrf sim",
          "usage: hdrf sim FILE\n\n"
          "Runs the scenario in FILE (docs/spec.md §10): submits its jobs in order,\n"
          "runs its steps (default: fill) and prints one JSON object on stdout:\n"
          "  {\"jobs\": [{\"name\", \"queue\", \"tasks_allocated\", \"allocated\", \"share\", ...}],\n"
          "   \"queues\": [...], \"steps\": N, \"digest\": \"...\"}\n"
          "Errors name the line and the step; the exit code is then 1.\n");
  cli.Positionals();
  if (auto exit = cli.Parse(argc, argv, 2)) return *exit;
  if (cli.positional().size() != 1) return cli.Usage("expected one scenario FILE (see --help)");
  const std::string& file = cli.positional()[0];
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
