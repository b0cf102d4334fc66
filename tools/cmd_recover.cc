// hdrf recover --db DIR [--json]: rebuilds the state from a store (docs/spec.md §11).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "api/formats/json_line.h"
#include "tools/commands.h"
#include "tools/cli.h"

namespace hdrf::tools {
namespace {

const char kHelp[] =
    "usage: hdrf recover --db DIR [--json] [--resources NAME,NAME,...]\n"
    "\n"
    "Rebuilds the state of the store at DIR from its latest checkpoint and the\n"
    "log after it, and reports it. The store is read only; a damaged store is\n"
    "reported on stderr (what is damaged and where) with exit code 1.\n"
    "  --db DIR          the store (written by an engine with a db_path,\n"
    "                    e.g. hdrf replay --db)\n"
    "  --json            print one line: {\"last_seq\": N, \"digest\": \"...\",\n"
    "                    \"queues\": Q, \"jobs\": J, \"seconds\": S}\n"
    "  --resources LIST  fail unless the store's resources are exactly these\n";

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int CmdRecover(int argc, char** argv) {
  Cli flags("hdrf recover", kHelp);
  for (const char* f : {"db", "resources"}) flags.Value(f);
  flags.Bool("json");
  if (auto exit = flags.Parse(argc, argv, 2)) return *exit;
  if (!flags.Has("db") || flags.Get("db").empty()) return flags.Usage("--db DIR is required (see --help)");
  const std::string dir = flags.Get("db");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> expected_resources;
  if (flags.Has("resources")) {
    std::vector<std::string> want = SplitComma(flags.Get("resources"));
    if (want.empty()) return flags.Usage("--resources needs at least one name");
    expected_resources = std::move(want);
  }
  EngineOptions o;
  o.db_path = dir;
  o.durability = Durability::kNone;  // recover only: nothing is written
  o.expected_resources = std::move(expected_resources);
  auto e = Engine::Open(o);
  if (!e.ok()) {
    std::fprintf(stderr, "hdrf recover: %s\n", e.status().message().c_str());
    return 1;
  }
  Engine& eng = **e;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t last = eng.last_seq();
  const std::string digest = eng.DigestHex();
  const size_t queues = eng.queue_count(), jobs = eng.job_count();
  Status c = eng.Close();
  if (!c.ok()) {
    std::fprintf(stderr, "hdrf recover: %s\n", c.message().c_str());
    return 1;
  }
  if (flags.Has("json")) {
    // Milliseconds, as the text report shows them.
    Json j = {{"last_seq", last}, {"digest", digest}, {"queues", queues}, {"jobs", jobs},
              {"seconds", std::round(seconds * 1000) / 1000}};
    std::printf("%s\n", JsonLine(j).c_str());
  } else {
    std::printf("store     %s\nlast_seq  %llu\ndigest    %s\nqueues    %zu\njobs      %zu\nseconds   %.3f\n",
                dir.c_str(), static_cast<unsigned long long>(last), digest.c_str(), queues, jobs,
                seconds);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace hdrf::tools
