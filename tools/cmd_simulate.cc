// hdrf simulate: a workload through the engine on a virtual clock (docs/spec.md §13,
// docs/simulate.md).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hdrf/config.h"
#include "hdrf/simulate.h"
#include "tools/commands.h"
#include "tools/cli.h"
#include "tools/replay_plot.h"

namespace hdrf::tools {
namespace {

const char kAbout[] =
    "Runs a workload (CSV or JSONL: name, queue, arrival, duration, user, tasks, weight,\n"
    "one column per resource) through the engine on a virtual clock\n"
    "(docs/spec.md §13) and reports per-queue wait times, usage shares and\n"
    "utilization. docs/simulate.md.";

struct Args {
  std::string config, workload, cluster, jobs_out, compare, plot, nodes, db;
  bool json = false, no_progress = false, reclaim = false, preempt = false;
  int why = 0;
  int64_t reclaim_budget = -1;  // -1: none
};

// The cluster of a config, or --cluster.
StatusOr<ResourceAmounts> ClusterOf(const QueueConfig& cfg, const Args& a, const std::string& file) {
  if (!a.cluster.empty()) return ParseClusterFlag(a.cluster);
  if (cfg.cluster.empty())
    return Status::InvalidArgument(file + ": the configuration names no cluster; give --cluster LIST");
  return cfg.cluster;
}

// A progress bar on stderr, drawn when stderr is a terminal and the run has
// lasted a second.
class ProgressBar {
 public:
  explicit ProgressBar(bool on) : on_(on && ::isatty(2)), start_(std::chrono::steady_clock::now()) {}
  void Update(const SimulateProgress& p) {
    if (!on_) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (secs < 1) return;
    const double f = p.jobs_total ? static_cast<double>(p.jobs_arrived) / static_cast<double>(p.jobs_total) : 1;
    const int width = 30, filled = static_cast<int>(f * width);
    std::fprintf(stderr, "\r[%s%s] %5.1f%% jobs arrived, t=%.0f s, %.1f s wall", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), 100 * f, static_cast<double>(p.now_ms) / 1000, secs);
    drawn_ = true;
  }
  ~ProgressBar() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }

 private:
  bool on_, drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

StatusOr<SimulateResult> RunOne(const std::string& config_file, const Args& a, const Workload* w,
                                Workload* loaded, const SimulateOptions& so) {
  auto cfg = LoadQueueConfigFile(config_file);
  if (!cfg.ok()) return cfg.status();
  HDRF_ASSIGN_OR_RETURN(ResourceAmounts cluster, ClusterOf(*cfg, a, config_file));
  if (!w) {
    std::vector<std::string> names;
    for (const auto& [r, v] : cluster) names.push_back(r);
    HDRF_ASSIGN_OR_RETURN(*loaded, LoadWorkloadFile(a.workload, names));
    w = loaded;
  }
  auto r = Simulate(cluster, cfg->queues, *w, so);
  if (!r.ok()) return r.status().WithContext(config_file);
  return r;
}

// Shares of the top-level queues over time, then the wait CDF per leaf.
Status WritePlot(const std::string& path, const Workload& w, const SimulateResult& r, const std::string& title) {
  SharePlot shares;
  shares.set_labels("time (ms)", "dominant share (plain usage / total)");
  for (size_t k = 0; k < r.timeline.t_ms.size(); ++k)
    shares.Add(static_cast<uint64_t>(r.timeline.t_ms[k]), r.timeline.queues, r.timeline.share[k]);
  // --reclaim: a tick on the time axis at each eviction (one per plan).
  if (!r.eviction_ms.empty()) {
    std::vector<uint64_t> ticks;
    for (int64_t t : r.eviction_ms) ticks.push_back(static_cast<uint64_t>(std::max<int64_t>(t, 0)));
    shares.set_markers(std::move(ticks), "evictions (" + std::to_string(r.eviction_ms.size()) + " plans)");
  }
  std::map<std::string, std::vector<int64_t>> waits;
  for (size_t i = 0; i < r.jobs.size(); ++i)
    if (r.jobs[i].first_start_ms >= 0) waits[r.jobs[i].queue].push_back(r.jobs[i].first_start_ms - w.jobs[i].arrival_ms);
  std::vector<std::string> leaves;
  std::vector<std::tuple<int64_t, size_t, double>> points;  // wait, leaf, fraction of jobs <= wait
  for (const QueueReport& q : r.queues) {
    auto it = waits.find(q.path);
    if (!q.is_leaf || it == waits.end()) continue;
    std::vector<int64_t>& v = it->second;
    std::sort(v.begin(), v.end());
    const size_t m = std::min<size_t>(v.size(), 200);
    for (size_t k = 0; k < m; ++k) {
      const size_t idx = m == 1 ? v.size() - 1 : k * (v.size() - 1) / (m - 1);
      points.emplace_back(v[idx], leaves.size(), static_cast<double>(idx + 1) / static_cast<double>(v.size()));
    }
    leaves.push_back(q.path);
  }
  std::sort(points.begin(), points.end());
  SharePlot cdf;
  cdf.set_labels("wait (ms)", "fraction of started jobs");
  cdf.set_connect_gaps(true);
  for (const auto& [wait, leaf, frac] : points) {
    std::vector<double> ys(leaves.size(), std::nan(""));
    ys[leaf] = frac;
    cdf.Add(static_cast<uint64_t>(wait), leaves, ys);
  }
  return WriteStackedSvg(path, {shares.Svg(title + ": top-level queues' shares over time"),
                                cdf.Svg(title + ": wait-time CDF per leaf")});
}

}  // namespace

int CmdSimulate(int argc, char** argv) {
  CLI::App app(kAbout, "hdrf simulate");
  Args a;
  app.add_option("--config", a.config, "queue configuration (docs/spec.md §3 forms 1-4; a scenario's jobs/steps ignored)")
      ->required();
  app.add_option("--workload", a.workload, "workload FILE.csv or FILE.jsonl (docs/spec.md §13)")->required();
  app.add_option("--cluster", a.cluster, "cluster capacity LIST, e.g. cpu=100,memory=1Ti (replaces the config's)");
  app.add_option("--jobs-out", a.jobs_out, "write name,queue,arrival,first_start,last_start,end per job");
  app.add_flag("--json", a.json, "print the report as one JSON line (the last stdout line)");
  app.add_option("--compare", a.compare, "also run under OTHER.yaml and print per-queue deltas");
  app.add_option("--plot", a.plot, "write an SVG: top-level shares over time (with --reclaim: eviction ticks) and wait CDF per leaf");
  app.add_option("--why", a.why, "explain up to N waiting jobs per leaf at every instant (costly)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--nodes", a.nodes, "node CSV (name + resource columns): tasks placed best-fit on one node");
  app.add_option("--db", a.db,
                 "also write the run's events into a new store in DIR, each with its virtual time "
                 "(docs/simulate_import.md; not the --compare run)");
  app.add_flag("--no-progress", a.no_progress, "no progress bar on stderr");
  app.add_flag("--reclaim", a.reclaim,
               "after each instant's fill, try waiting jobs in step order and apply their reclaim plans "
               "(docs/spec.md §13, §15)");
  app.add_flag("--preempt", a.preempt, "with --reclaim: plans may also preempt inside a job's own queue (mode both)");
  app.add_option("--reclaim-budget", a.reclaim_budget,
                 "with --reclaim: stop an instant's reclaim phase once N tasks were evicted in it")
      ->check(WholeNumber(INT64_MAX));
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "hdrf simulate: %s\n", e.what());
    return 2;
  }
  if (!a.plot.empty()) {
    if (Status s = CheckPlotPath(a.plot); !s.ok()) {
      std::fprintf(stderr, "hdrf simulate: %s\n", s.message().c_str());
      return 2;
    }
  }
  if ((a.preempt || a.reclaim_budget >= 0) && !a.reclaim) {
    std::fprintf(stderr, "hdrf simulate: --preempt and --reclaim-budget need --reclaim\n");
    return 2;
  }
  SimulateOptions so;
  so.explain_per_leaf = a.why;
  so.reclaim = a.reclaim;
  so.preempt = a.preempt;
  if (a.reclaim_budget >= 0) so.reclaim_budget = a.reclaim_budget;
  so.nodes_file = a.nodes;
  so.timeline_points = a.plot.empty() ? 0 : 600;
  ProgressBar bar(!a.no_progress);
  so.progress = [&](const SimulateProgress& p) { bar.Update(p); };
  so.progress_every_jobs = 20000;
  Workload w;
  so.db_path = a.db;
  auto r = RunOne(a.config, a, nullptr, &w, so);
  so.db_path.clear();  // --compare runs in memory
  if (!r.ok()) {
    std::fprintf(stderr, "hdrf simulate: %s\n", r.status().message().c_str());
    return 1;
  }
  size_t shown = 0;
  for (size_t i = 0; i < r->jobs.size(); ++i)
    if (!r->jobs[i].refused.empty() && shown++ < 10)
      std::fprintf(stderr, "hdrf simulate: %s:%d: job %s refused: %s\n", w.source.c_str(), w.jobs[i].spec.line,
                   w.jobs[i].spec.name.c_str(), r->jobs[i].refused.c_str());
  if (r->refused > 10) std::fprintf(stderr, "hdrf simulate: ... %lld jobs refused in all\n", (long long)r->refused);
  if (!a.jobs_out.empty()) {
    if (Status s = WriteJobsCsv(w, *r, a.jobs_out); !s.ok()) {
      std::fprintf(stderr, "hdrf simulate: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::optional<SimulateResult> other;
  if (!a.compare.empty()) {
    auto b = RunOne(a.compare, a, &w, nullptr, so);
    if (!b.ok()) {
      std::fprintf(stderr, "hdrf simulate: --compare: %s\n", b.status().message().c_str());
      return 1;
    }
    other = std::move(*b);
  }
  if (!a.plot.empty()) {
    if (Status s = WritePlot(a.plot, w, *r, a.workload); !s.ok()) {
      std::fprintf(stderr, "hdrf simulate: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (a.json) {
    std::printf("%s\n", other ? SimulateCompareJson(w, *r, *other, a.compare).c_str()
                              : SimulateReportJson(w, *r).c_str());
  } else {
    std::fputs(SimulateReportTable(*r).c_str(), stdout);
    if (other) std::printf("\n--compare %s -> %s\n%s", a.config.c_str(), a.compare.c_str(),
                           SimulateCompareTable(*r, *other).c_str());
  }
  return 0;
}

}  // namespace hdrf::tools
