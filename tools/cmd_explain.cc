#include <cstdio>

#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/sim.h"
#include "tools/commands.h"
#include "tools/explain_json.h"
#include "tools/cli.h"
#include "tools/open_store.h"

namespace hdrf::tools {
namespace {

const char kHelp[] =
    "usage: hdrf explain (--scenario FILE | --db DIR) --job NAME [--json]\n"
    "\n"
    "Says why a job is or is not the next to run: its key and its siblings'\n"
    "keys at each level of its path (root first), whether it is blocked and by\n"
    "what (saturated resource, capability, held-back guarantee, user limit,\n"
    "Pending), and whether one more task fits.\n"
    "  --scenario FILE  run the scenario (docs/spec.md §10) first, then explain\n"
    "  --db DIR         explain in the state recovered from a store\n";

void PrintText(const Explanation& e) {
  std::printf("job %s in %s: key %.6f, %s, %s%s\n", e.job.c_str(), e.queue.c_str(), e.key,
              e.blocked ? "blocked" : "not blocked", e.schedulable ? "one more task fits" : "no task fits",
              e.is_next ? ", NEXT to run" : "");
  for (const std::string& r : e.blocked_by) std::printf("  blocked by: %s\n", r.c_str());
  for (const std::string& r : e.unfit_because) std::printf("  does not fit: %s\n", r.c_str());
  for (const std::string& r : e.plan) std::printf("  %s\n", r.c_str());
  for (const auto& level : e.levels) {
    std::printf("  among the children of %s:\n", level.parent.c_str());
    for (const auto& s : level.siblings)
      std::printf("    %s %-30s key %.6f%s\n", s.is_path ? "*" : " ", s.name.c_str(), s.key,
                  s.blocked ? " (blocked)" : "");
  }
}

}  // namespace

int CmdExplain(int argc, char** argv) {
  Cli flags("hdrf explain", kHelp);
  for (const char* f : {"scenario", "db", "job"}) flags.Value(f);
  flags.Bool("json");
  if (auto exit = flags.Parse(argc, argv, 2)) return *exit;
  if (flags.Has("scenario") == flags.Has("db") || !flags.Has("job"))
    return flags.Usage("give --job NAME and exactly one of --scenario FILE or --db DIR");
  std::unique_ptr<Engine> eng;
  if (flags.Has("scenario")) {
    auto sc = LoadScenarioFile(flags.Get("scenario"));
    if (!sc.ok()) {
      std::fprintf(stderr, "hdrf explain: %s\n", sc.status().message().c_str());
      return 1;
    }
    auto e = RunScenarioEngine(*sc);
    if (!e.ok()) {
      std::fprintf(stderr, "hdrf explain: %s\n", e.status().message().c_str());
      return 1;
    }
    eng = std::move(e).value();
  } else {
    auto e = OpenStoreForReading(flags.Get("db"));
    if (!e.ok()) {
      std::fprintf(stderr, "hdrf explain: %s\n", e.status().message().c_str());
      return 1;
    }
    eng = std::move(e).value();
  }
  auto ex = eng->Explain(flags.Get("job"));
  if (!ex.ok()) {
    std::fprintf(stderr, "hdrf explain: %s\n", ex.status().message().c_str());
    return 1;
  }
  if (flags.Has("json")) {
    std::printf("%s\n", ExplanationJson(*ex).c_str());
  } else {
    PrintText(*ex);
  }
  return 0;
}

}  // namespace hdrf::tools
