// Google Benchmark micro-benchmarks of the engine API (bench/README.md has
// the figures and the commands that produced them).
//
//   BM_Ingest/jobs/threads   allocate/release events, depth 3 x fanout 10,
//                            4 resources, nothing saturates
//   BM_IngestByTopQueue/jobs/threads  the same, each thread owning the jobs
//                            of its own top-level queues (lock shards)
//   BM_FullUseChurn/jobs     the cluster is exactly full: every release frees
//                            a resource, every allocate fills it again
//   BM_ScheduleLoop/jobs     Engine::Step (pick next + allocate)
//   BM_ReferenceIngest/jobs  the same events through the full-recompute
//                            reference of tests/reference (shares recomputed
//                            after every event)
#include <benchmark/benchmark.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "bench/bench_world.h"
#include "bench/event_stream.h"
#include "tests/reference/reference_model.h"

namespace hdrf::bench {
namespace {

constexpr int64_t kEvents = 2000000;

// One world per (jobs, full_use), built once and shared by the runs.
World& SharedWorld(int64_t jobs, bool full_use) {
  static std::map<std::pair<int64_t, bool>, std::unique_ptr<World>> worlds;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto& w = worlds[{jobs, full_use}];
  if (!w) {
    WorldOptions o;
    o.jobs = jobs;
    o.full_use = full_use;
    w = std::make_unique<World>(MakeWorld(o, kEvents));
  }
  return *w;
}

// Each thread applies the events of its jobs (bench/event_stream.h).
void RunEvents(benchmark::State& state, World& w, bool by_top_queue = false) {
  EventStream stream(w, state.threads(), state.thread_index(), by_top_queue);
  int64_t refused = 0;
  auto apply = [&](uint32_t j, int dir) {
    return dir > 0 ? w.engine->Allocate(w.jobs[j], 1) : w.engine->Release(w.jobs[j], 1);
  };
  for (auto _ : state) {
    uint32_t j;
    int dir;
    stream.Next(&j, &dir);
    if (!apply(j, dir).ok()) ++refused;
  }
  // Back to the state before the first forward pass (the timer has stopped).
  stream.Undo([&](uint32_t j, int dir) { (void)apply(j, dir); });
  state.counters["refused"] = static_cast<double>(refused);
  state.SetItemsProcessed(state.iterations());
}

void BM_Ingest(benchmark::State& state) {
  RunEvents(state, SharedWorld(state.range(0), false));
}
BENCHMARK(BM_Ingest)
    ->ArgName("jobs")
    ->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)
    ->Threads(1)->Threads(2)
    ->UseRealTime()
    ->MinTime(1.0);

// The same events, routed to threads by top-level queue (an embedder with
// one worker per group of top-level queues).
void BM_IngestByTopQueue(benchmark::State& state) {
  RunEvents(state, SharedWorld(state.range(0), false), /*by_top_queue=*/true);
}
BENCHMARK(BM_IngestByTopQueue)
    ->ArgName("jobs")
    ->Arg(1000)->Arg(100000)->Arg(1000000)
    ->Threads(1)->Threads(2)
    ->UseRealTime()
    ->MinTime(1.0);

void BM_FullUseChurn(benchmark::State& state) {
  World& w = SharedWorld(state.range(0), true);
  RunEvents(state, w);
}
BENCHMARK(BM_FullUseChurn)->ArgName("jobs")->Arg(1000)->Arg(100000)->UseRealTime()->MinTime(1.0);

void BM_ScheduleLoop(benchmark::State& state) {
  WorldOptions o;
  o.jobs = state.range(0);
  World w = MakeWorld(o, 0, /*preallocate=*/false);
  int64_t steps = 0;
  for (auto _ : state) {
    auto s = w.engine->Step();
    if (!s.ok() || !s->has_value()) {
      state.PauseTiming();  // everything placed: start over
      for (const JobRef& j : w.jobs) {
        auto info = w.engine->GetJob(j);
        if (info.ok() && info->allocated > 0) (void)w.engine->Release(j, info->allocated);
      }
      state.ResumeTiming();
      continue;
    }
    ++steps;
  }
  state.SetItemsProcessed(steps);
}
BENCHMARK(BM_ScheduleLoop)->ArgName("jobs")->Arg(1000)->Arg(100000)->UseRealTime()->MinTime(1.0);

// The full-recompute reference on the same events; every event is followed
// by the share computation the incremental engine does as part of it.
void BM_ReferenceIngest(benchmark::State& state) {
  World& w = SharedWorld(state.range(0), false);
  auto m = ref::ReferenceModel::Create(w.cluster, w.queues);
  if (!m.ok()) {
    state.SkipWithError(m.status().ToString().c_str());
    return;
  }
  for (const JobSpec& s : w.specs) {
    (void)(*m)->Submit(s);
    if (w.preallocated) (void)(*m)->Allocate(s.name, w.preallocated);
  }
  size_t i = 0;
  for (auto _ : state) {
    const JobSpec& s = w.specs[w.event_job[i]];
    Status st = w.event_dir[i] > 0 ? (*m)->Allocate(s.name, 1) : (*m)->Release(s.name, 1);
    benchmark::DoNotOptimize(st);
    benchmark::DoNotOptimize((*m)->Queues());
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReferenceIngest)->ArgName("jobs")->Arg(1000)->Arg(10000)->UseRealTime()->Iterations(200);

void BM_MemoryPerJob(benchmark::State& state) {
  for (auto _ : state) {
    const int64_t before = RssBytes(), alloc_before = AllocatedBytes();
    WorldOptions o;
    o.jobs = state.range(0);
    o.keep_specs = false;
    World w = MakeWorld(o, 0);
    const int64_t after = RssBytes(), alloc_after = AllocatedBytes();
    // rss_bytes_per_job counts pages the allocator kept after vectors grew;
    // bytes_per_job is what live engine objects hold.
    state.counters["rss_bytes_per_job"] =
        static_cast<double>(after - before) / static_cast<double>(o.jobs);
    if (alloc_before >= 0)
      state.counters["bytes_per_job"] =
          static_cast<double>(alloc_after - alloc_before) / static_cast<double>(o.jobs);
  }
}
BENCHMARK(BM_MemoryPerJob)->ArgName("jobs")->Arg(1000000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace hdrf::bench

BENCHMARK_MAIN();
