// Google Benchmark: the C interface against the C++ API on the same world
// and the same events (bench/event_stream.h; bench/README.md "Embedding"
// has the figures and the command).
//
//   BM_CppAllocate/jobs/by_top/threads  Engine::Allocate/Release(JobRef)
//   BM_CRef/jobs/by_top/threads   hdrf_job_allocate_ref/_release_ref
//                                 (by_top:1 routes jobs to threads by
//                                 top-level queue, as BM_IngestByTopQueue)
//   BM_CName/jobs/threads         hdrf_job_allocate/_release by name
//   BM_CApply/jobs/batch          hdrf_apply, `batch` ops a call
//   BM_CppApplyTasks/jobs/batch   Engine::ApplyTasks, `batch` ops a call
//
// Worlds: depth 3 x fanout 10 (1,000 leaves), 4 resources, nothing
// saturates, half of every job's tasks running.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/bench_world.h"
#include "bench/event_stream.h"
#include "hdrf/c.h"

namespace hdrf::bench {
namespace {

constexpr int64_t kEvents = 2000000;

// A resource list in the C interface's text form, from canonical amounts.
std::string ResourceList(const ResourceAmounts& a) {
  std::string s;
  for (const auto& [name, v] : a) {
    if (!s.empty()) s += ",";
    s += name + "=" + std::to_string(v) + (name == "memory" ? "" : "m");
  }
  return s;
}

void Check(hdrf_code c, char* err, const char* what) {
  if (c == HDRF_OK) return;
  std::fprintf(stderr, "capi_bench: %s: %s\n", what, err ? err : hdrf_code_name(c));
  std::abort();
}

// The C++ world and a C engine holding the same queues, jobs and running
// tasks; built once per job count.
struct Both {
  World w;
  hdrf_engine_t* c = nullptr;
  std::vector<hdrf_job_ref_t> refs;  // refs[j] is w.jobs[j] in the C engine
  std::vector<std::string> names;
};

Both& Shared(int64_t jobs) {
  static std::map<int64_t, std::unique_ptr<Both>> all;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto& b = all[jobs];
  if (b) return *b;
  b = std::make_unique<Both>();
  WorldOptions o;
  o.jobs = jobs;
  b->w = MakeWorld(o, kEvents);
  char* err = nullptr;
  std::vector<hdrf_queue_spec_t> qs(b->w.queues.size());
  for (size_t i = 0; i < qs.size(); ++i) {
    hdrf_queue_spec_init(&qs[i]);
    qs[i].path = b->w.queues[i].path.c_str();
    qs[i].weight = b->w.queues[i].weight;
  }
  Check(hdrf_engine_create(ResourceList(b->w.cluster).c_str(), qs.data(), qs.size(), nullptr, &b->c,
                           &err),
        err, "create");
  for (const JobSpec& s : b->w.specs) {
    hdrf_job_ref_t r;
    Check(hdrf_job_submit(b->c, s.name.c_str(), s.queue.c_str(), s.user.c_str(), s.tasks,
                          ResourceList(s.task).c_str(), &r, &err),
          err, "submit");
    if (b->w.preallocated > 0)
      Check(hdrf_job_allocate_ref(b->c, r, b->w.preallocated, &err), err, "preallocate");
    b->refs.push_back(r);
    b->names.push_back(s.name);
  }
  char digest[HDRF_DIGEST_SIZE];
  Check(hdrf_digest(b->c, digest, sizeof digest, &err), err, "digest");
  if (b->w.engine->DigestHex() != digest) {
    std::fprintf(stderr, "capi_bench: the C engine differs from the C++ one\n");
    std::abort();
  }
  hdrf_free(err);
  return *b;
}

// One event per iteration through `apply(job, dir)`. With `by_top`, each
// thread owns the jobs of every threads-th top-level queue (each lock shard
// written by one thread); without, jobs are dealt to threads round-robin.
template <typename F>
void PerCall(benchmark::State& state, const World& w, F&& apply, bool by_top = false) {
  EventStream stream(w, state.threads(), state.thread_index(), by_top);
  int64_t refused = 0;
  for (auto _ : state) {
    uint32_t j;
    int dir;
    stream.Next(&j, &dir);
    if (!apply(j, dir)) ++refused;
  }
  stream.Undo([&](uint32_t j, int dir) { (void)apply(j, dir); });
  state.counters["refused"] = static_cast<double>(refused);
  state.SetItemsProcessed(state.iterations());
}

void BM_CppAllocate(benchmark::State& state) {
  World& w = Shared(state.range(0)).w;
  PerCall(state, w, [&](uint32_t j, int dir) {
    return (dir > 0 ? w.engine->Allocate(w.jobs[j], 1) : w.engine->Release(w.jobs[j], 1)).ok();
  }, state.range(1) != 0);
}

void BM_CRef(benchmark::State& state) {
  Both& b = Shared(state.range(0));
  PerCall(state, b.w, [&](uint32_t j, int dir) {
    return (dir > 0 ? hdrf_job_allocate_ref(b.c, b.refs[j], 1, nullptr)
                    : hdrf_job_release_ref(b.c, b.refs[j], 1, nullptr)) == HDRF_OK;
  }, state.range(1) != 0);
}

void BM_CName(benchmark::State& state) {
  Both& b = Shared(state.range(0));
  PerCall(state, b.w, [&](uint32_t j, int dir) {
    const char* n = b.names[j].c_str();
    return (dir > 0 ? hdrf_job_allocate(b.c, n, 1, nullptr) : hdrf_job_release(b.c, n, 1, nullptr)) ==
           HDRF_OK;
  });
}

// `batch` events per iteration; items = events.
template <typename Op, typename Make, typename F>
void Batched(benchmark::State& state, const World& w, Make make_op, F&& apply) {
  const size_t batch = static_cast<size_t>(state.range(1));
  EventStream stream(w, state.threads(), state.thread_index());
  std::vector<Op> ops(batch);
  int64_t refused = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (Op& op : ops) {
      uint32_t j;
      int dir;
      stream.Next(&j, &dir);
      op = make_op(j, dir);
    }
    state.ResumeTiming();
    refused += apply(ops);
  }
  stream.Undo([&](uint32_t j, int dir) {
    std::vector<Op> one{make_op(j, dir)};
    (void)apply(one);
  });
  state.counters["refused"] = static_cast<double>(refused);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch));
}

void BM_CApply(benchmark::State& state) {
  Both& b = Shared(state.range(0));
  Batched<hdrf_op_t>(
      state, b.w,
      [&](uint32_t j, int dir) {
        return hdrf_op_t{b.refs[j], 1, dir > 0 ? HDRF_OP_ALLOCATE : HDRF_OP_RELEASE};
      },
      [&](std::vector<hdrf_op_t>& ops) {
        size_t applied = 0;
        (void)hdrf_apply(b.c, ops.data(), ops.size(), sizeof(hdrf_op_t), nullptr, &applied, nullptr);
        return static_cast<int64_t>(ops.size() - applied);
      });
}

void BM_CppApplyTasks(benchmark::State& state) {
  World& w = Shared(state.range(0)).w;
  Batched<Engine::TaskOp>(
      state, w,
      [&](uint32_t j, int dir) {
        Engine::TaskOp op;
        op.job = w.jobs[j];
        op.type = dir > 0 ? Event::Type::kAllocate : Event::Type::kRelease;
        return op;
      },
      [&](std::vector<Engine::TaskOp>& ops) {
        size_t refused = 0;
        (void)w.engine->ApplyTasks(ops.data(), ops.size(), nullptr, &refused);
        return static_cast<int64_t>(refused);
      });
}

BENCHMARK(BM_CppAllocate)->ArgNames({"jobs", "by_top"})->Args({100000, 0})->Args({100000, 1})
    ->Threads(1)->Threads(2)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_CRef)->ArgNames({"jobs", "by_top"})->Args({100000, 0})->Args({100000, 1})
    ->Threads(1)->Threads(2)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_CName)->ArgName("jobs")->Arg(100000)->Threads(1)->Threads(2)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_CApply)->ArgNames({"jobs", "batch"})->Args({100000, 1000})->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_CppApplyTasks)->ArgNames({"jobs", "batch"})->Args({100000, 1000})->UseRealTime()->MinTime(1.0);

}  // namespace
}  // namespace hdrf::bench

BENCHMARK_MAIN();
