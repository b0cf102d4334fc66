#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/metrics.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/open_store.h"
#include "tools/queues_watch.h"
#include "tools/tree_json.h"
#include "tools/tree_view.h"

namespace hdrf::tools {
namespace {

const char kHelp[] =
    "usage: hdrf queues (--config FILE | --db DIR) [--cluster cpu=N,memory=Q,...]\n"
    "                   [--exact] [--wide] [--json | --metrics | --yaml] [--watch [SECONDS] [--count N]]\n"
    "\n"
    "Prints the queue tree like vqueues: name indented by depth, weight, state,\n"
    "job counts by state (Inqueue, Pending, Running; Unknown when a queue has\n"
    "some), allocation (one column per resource), usage share (max over\n"
    "resources of usage / cluster capacity), H-DRF dominant share and key,\n"
    "blocked; with --wide also capability, guarantee and real capability.\n"
    "Amounts are rounded to three significant digits in the largest unit (cpu\n"
    "in cores, memory in bytes: 48.9Ti, others in units: gpu 1.32M); lines fit\n"
    "120 columns.\n"
    "  --config FILE   a queue configuration (docs/spec.md §3 forms 1-4)\n"
    "  --db DIR        a store written by hdrf replay --db (recovered read-only)\n"
    "  --cluster LIST  cluster capacity for a config that has none\n"
    "  --exact         exact amounts (Kubernetes form, 5911137500m) and shares\n"
    "  --wide          every column, however wide\n"
    "  --json          the tree as one JSON object, exact amounts and human ones\n"
    "  --metrics       print Prometheus text metrics (docs/metrics.md) instead\n"
    "  --yaml          print the tree as a queue configuration instead (form 3,\n"
    "                  kind: HierarchicalQueue, and its Cluster; docs/config.md):\n"
    "                  what hdrf simulate --config and hdrf queues --config read\n"
    "                  back to the same tree. Queues and capacity only: jobs and\n"
    "                  allocations are not part of a configuration\n"
    "  --watch [S]     with --db: recover the store read-only again every S\n"
    "                  seconds (default 2) and redraw in place (ANSI clear on a\n"
    "                  terminal; otherwise frames follow one another, each after\n"
    "                  a line starting \"== hdrf queues\"). Ctrl-C stops (exit 0)\n"
    "  --count N       with --watch: stop after N refreshes\n";

// The engine's queues (their settings, not their jobs) and, when known,
// its cluster, as a configuration (FormatQueueConfig).
QueueConfig ConfigOf(const Engine& eng, bool with_cluster) {
  QueueConfig cfg;
  const std::vector<std::string> names = eng.ResourceNames();
  if (with_cluster) {
    const std::vector<int64_t> total = eng.Total();
    for (size_t r = 0; r < names.size(); ++r) cfg.cluster[names[r]] = total[r];
  }
  cfg.queues = eng.QueueSpecs();
  return cfg;
}

// Takes `--watch [SECONDS]` (the value is optional) out of argv.
// Returns false with *error set when SECONDS is malformed.
bool TakeWatch(int argc, char** argv, std::vector<char*>* rest, bool* watch, double* seconds,
               std::string* error) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i < 2 || (a != "--watch" && a.rfind("--watch=", 0) != 0)) {
      rest->push_back(argv[i]);
      continue;
    }
    *watch = true;
    std::string v;
    if (a.size() > 7) v = a.substr(8);
    else if (i + 1 < argc && argv[i + 1][0] != '-') v = argv[++i];
    else continue;
    auto s = ParseDoubleFlag("watch", v, 0.05, 86400);
    if (!s.ok()) {
      *error = s.status().message() + " (seconds)";
      return false;
    }
    *seconds = *s;
  }
  return true;
}

// The engine of --config FILE (with --cluster), or null with `*exit_code`
// set (1: the file, 2: the flag). `*have_cluster`: whether a cluster was
// given (else every resource the queues name, unbounded).
std::unique_ptr<Engine> EngineOfConfig(const Cli& flags, bool* have_cluster, int* exit_code) {
  auto cfg = LoadQueueConfigFile(flags.Get("config"));
  if (!cfg.ok()) {
    std::fprintf(stderr, "hdrf queues: %s\n", cfg.status().message().c_str());
    *exit_code = 1;
    return nullptr;
  }
  ResourceAmounts cluster = cfg->cluster;
  if (flags.Has("cluster")) {
    auto c = ParseClusterFlag(flags.Get("cluster"));
    if (!c.ok()) {
      std::fprintf(stderr, "hdrf queues: %s\n", c.status().message().c_str());
      *exit_code = 2;
      return nullptr;
    }
    cluster = *c;
  }
  if (cluster.empty()) {
    *have_cluster = false;
    for (const QueueSpec& q : cfg->queues) {
      for (auto& [r, v] : q.capability) cluster[r] = int64_t{1} << 52;
      for (auto& [r, v] : q.guarantee) cluster[r] = int64_t{1} << 52;
    }
    if (cluster.empty()) cluster["cpu"] = int64_t{1} << 52;
  }
  auto e = Engine::Create(cluster, cfg->queues);
  if (!e.ok()) {
    std::fprintf(stderr, "hdrf queues: %s: %s\n", flags.Get("config").c_str(), e.status().message().c_str());
    *exit_code = 1;
    return nullptr;
  }
  return std::move(e).value();
}

// The engine of --db DIR, read only; null with `*exit_code` 1.
std::unique_ptr<Engine> EngineOfStore(const std::string& db, int* exit_code) {
  auto e = OpenStoreForReading(db);
  if (!e.ok()) {
    std::fprintf(stderr, "hdrf queues: %s\n", e.status().message().c_str());
    *exit_code = 1;
    return nullptr;
  }
  return std::move(e).value();
}

}  // namespace

int CmdQueues(int argc, char** argv) {
  std::vector<char*> args;
  bool watch = false;
  double seconds = 2;
  std::string watch_error;
  if (!TakeWatch(argc, argv, &args, &watch, &seconds, &watch_error)) {
    std::fprintf(stderr, "hdrf queues: %s\n", watch_error.c_str());
    return 2;
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  Cli flags("hdrf queues", kHelp);
  for (const char* f : {"config", "db", "cluster", "count"}) flags.Value(f);
  for (const char* f : {"metrics", "json", "exact", "wide", "yaml"}) flags.Bool(f);
  if (auto exit = flags.Parse(argc, argv, 2)) return *exit;
  if (flags.Has("config") == flags.Has("db")) return flags.Usage("give exactly one of --config FILE or --db DIR");
  if (flags.Has("yaml") && (flags.Has("json") || flags.Has("metrics") || watch))
    return flags.Usage(std::string("--yaml does not go with ") +
                       (watch ? "--watch" : flags.Has("json") ? "--json" : "--metrics"));
  if (flags.Has("json") && (flags.Has("metrics") || watch)) {
    std::fprintf(stderr, "hdrf queues: --json does not go with %s\n", watch ? "--watch" : "--metrics");
    return 2;
  }
  TreeViewOptions tv;
  tv.exact = flags.Has("exact");
  tv.wide = flags.Has("wide");
  if (watch || flags.Has("count")) {
    auto count = flags.GetInt("count", 0);
    const char* bad = !watch                   ? "--count needs --watch"
                      : !flags.Has("db")       ? "--watch needs --db DIR (a configuration does not change)"
                      : flags.Has("cluster")   ? "--cluster does not apply to --db"
                      : !count.ok()            ? nullptr
                      : (*count < 0)           ? "flag --count: must be >= 1"
                      : (flags.Has("count") && *count == 0) ? "flag --count: must be >= 1"
                                                            : "";
    if (bad == nullptr || *bad) {
      std::fprintf(stderr, "hdrf queues: %s\n", bad ? bad : count.status().message().c_str());
      return 2;
    }
    WatchOptions wo;
    wo.db = flags.Get("db");
    wo.seconds = seconds;
    wo.count = *count;
    wo.metrics = flags.Has("metrics");
    wo.view = tv;
    return WatchStore(wo);
  }
  bool have_cluster = true;
  int exit_code = 0;
  std::unique_ptr<Engine> eng = flags.Has("config") ? EngineOfConfig(flags, &have_cluster, &exit_code)
                                                    : EngineOfStore(flags.Get("db"), &exit_code);
  if (!eng) return exit_code;
  if (flags.Has("yaml")) {
    const std::string from = flags.Has("db") ? "store " + flags.Get("db") + " at event " + std::to_string(eng->last_seq())
                                             : flags.Get("config");
    std::fputs(FormatQueueConfig(ConfigOf(*eng, have_cluster), "hdrf",
                                 "The queue tree of " + from + " (hdrf queues --yaml): queues and capacity;\n"
                                 "jobs and allocations are not part of a configuration.")
                   .c_str(),
               stdout);
    return 0;
  }
  if (flags.Has("metrics")) {
    MetricsOptions mo;
    mo.cluster = have_cluster;
    std::fputs(MetricsText(*eng, mo).c_str(), stdout);
    return 0;
  }
  const TreeSnapshot tree = TakeTreeSnapshot(*eng, have_cluster);
  if (flags.Has("json")) {
    std::printf("%s\n", DumpJson(TreeJson(tree)).c_str());
    return 0;
  }
  std::fputs(FormatTree(tree, tv).c_str(), stdout);
  return 0;
}

}  // namespace hdrf::tools
