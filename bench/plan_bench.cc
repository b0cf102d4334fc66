// Reclaim plans (docs/spec.md §15; issue 28 item 8): the time of one
// Engine::Plan on a full cluster of 10^5 running jobs under 1,000 leaves
// (depth 3, fanout 10), for a waiting job whose plan takes 1 or 8 victims
// (a gang of m tasks of the running jobs' shape: m units of one task).
// Plans change nothing, so one world serves every iteration.
//   build/release/bench/plan_bench --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "hdrf/engine.h"

namespace hdrf {
namespace {

struct PlanWorld {
  std::unique_ptr<Engine> engine;
  std::vector<JobRef> waiting;  // by gang size - 1
};

PlanWorld& World(int64_t jobs) {
  static std::map<int64_t, PlanWorld> worlds;
  PlanWorld& w = worlds[jobs];
  if (w.engine) return w;
  std::vector<QueueSpec> queues;
  std::vector<std::string> leaves;
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b)
      for (int c = 0; c < 10; ++c) leaves.push_back("root/q" + std::to_string(a) + "/q" + std::to_string(b) + "/q" + std::to_string(c));
  for (const std::string& l : leaves) {
    QueueSpec q;
    q.path = l;
    queues.push_back(q);
  }
  // Every running job holds one task of (1 cpu, 1 Gi); the cluster holds
  // exactly the running tasks, so cpu and memory are full.
  const int64_t running = jobs;
  ResourceAmounts cluster{{"cpu", running * 1000}, {"memory", running * (int64_t{1} << 30)}};
  w.engine = std::move(Engine::Create(cluster, queues).value());
  Engine& e = *w.engine;
  std::vector<JobRef> refs;
  for (int64_t i = 0; i < running; ++i) {
    JobSpec s;
    s.name = "r" + std::to_string(i);
    s.queue = leaves[static_cast<size_t>(i % 999) + 1];  // leaf 0 is the waiting jobs'
    s.tasks = 2;
    s.task = {{"cpu", 1000}, {"memory", int64_t{1} << 30}};
    refs.push_back(e.Submit(s).value());
  }
  for (const JobRef& r : refs) (void)e.Allocate(r, 1);
  for (int m = 1; m <= 8; ++m) {
    JobSpec s;
    s.name = "w" + std::to_string(m);
    s.queue = leaves[0];
    s.tasks = m;
    s.min_available = m;
    s.task = {{"cpu", 1000}, {"memory", int64_t{1} << 30}};
    w.waiting.push_back(e.Submit(s).value());
  }
  return w;
}

void BM_Plan(benchmark::State& state) {
  PlanWorld& w = World(state.range(0));
  const int64_t m = state.range(1);
  const JobRef job = w.waiting[static_cast<size_t>(m - 1)];
  size_t victims = 0;
  for (auto _ : state) {
    auto p = w.engine->Plan(job);
    if (!p.ok() || !p->fits) {
      state.SkipWithError("no plan");
      return;
    }
    victims = p->victims.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["running_jobs"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Plan)->ArgsProduct({{100000}, {1, 8}})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hdrf

BENCHMARK_MAIN();
