// The engine's own batched rate on a trace (issue 16 item 2): what `hdrf
// replay --threads 1` is measured against. bench/cost_history.md "Fourth pass"
// has the figures; bench/replay_gap.sh runs both and prints the ratio.
//
//   replay_bench --trace FILE [--batch B] [--until SEQ]
//
// Reads the trace (untimed), creates a memory-only engine, submits the
// trace's leading submissions in batches of B (untimed, as the replay's
// setup), then turns every later event into an Engine::TaskOp with its
// JobRef already resolved (untimed: the whole trace decoded into memory)
// and times only Engine::ApplyTasks over those ops, B per call, on this
// thread, with no per-op status. Prints one JSON line with the same
// "events", "seconds", "events_per_sec", "digest" and "last_seq" as
// `hdrf replay --json` (the digest must be the replay's), plus
// "ns_per_event". Public headers only.
//
// Under `valgrind --tool=callgrind` the counters are zeroed when the timed
// loop starts and dumped when it ends (named "ApplyTasks events=N").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HDRF_PROBE_BEGIN() CALLGRIND_ZERO_STATS
#define HDRF_PROBE_END(name)                        \
  do {                                              \
    if (RUNNING_ON_VALGRIND) CALLGRIND_DUMP_STATS_AT(name); \
  } while (0)
#else
#define HDRF_PROBE_BEGIN() ((void)0)
#define HDRF_PROBE_END(name) ((void)0)
#endif

namespace {

using Clock = std::chrono::steady_clock;

int Usage() {
  std::fprintf(stderr, "usage: replay_bench --trace FILE [--batch B] [--until SEQ]\n");
  return 2;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "replay_bench: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  size_t batch = 1024;
  uint64_t until = UINT64_MAX;  // as hdrf replay --until: events 1..SEQ only
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (i + 1 >= argc) return Usage();
    if (f == "--trace") path = argv[++i];
    else if (f == "--batch") batch = static_cast<size_t>(std::atoll(argv[++i]));
    else if (f == "--until") until = std::strtoull(argv[++i], nullptr, 10);
    else return Usage();
  }
  if (path.empty() || batch == 0) return Usage();

  const auto t_read = Clock::now();
  auto trace = hdrf::ReadTrace(path);
  if (!trace.ok()) return Fail(trace.status().ToString());
  if (trace->events.size() > until) trace->events.resize(until);
  const double read_s = std::chrono::duration<double>(Clock::now() - t_read).count();
  auto engine_or = hdrf::Engine::Create(trace->cluster, trace->queues, hdrf::EngineOptions{});
  if (!engine_or.ok()) return Fail(engine_or.status().ToString());
  std::unique_ptr<hdrf::Engine> engine = std::move(engine_or).value();

  // Setup: the leading submissions, batched as the replay does.
  const size_t setup = std::min(hdrf::TraceSetupEvents(*trace), trace->events.size());
  std::vector<hdrf::JobRef> refs(trace->jobs.size());
  std::vector<hdrf::Engine::TaskOp> ops;
  ops.reserve(batch);
  for (size_t i = 0; i < setup;) {
    ops.clear();
    for (; i < setup && ops.size() < batch; ++i) {
      const hdrf::TraceEvent& e = trace->events[i];
      hdrf::Engine::TaskOp op;
      op.type = hdrf::Event::Type::kSubmit;
      op.spec = &trace->jobs[e.job];
      op.submitted = &refs[e.job];
      ops.push_back(op);
    }
    size_t refused = 0;
    hdrf::Status s = engine->ApplyTasks(ops.data(), ops.size(), nullptr, &refused);
    if (!s.ok() || refused) return Fail("setup refused: " + s.ToString());
  }

  // The timed events, decoded into ops with their JobRefs (untimed).
  const size_t count = trace->events.size() - setup;
  ops.clear();
  ops.shrink_to_fit();
  ops.reserve(count);
  for (size_t i = setup; i < trace->events.size(); ++i) {
    const hdrf::TraceEvent& e = trace->events[i];
    if (e.type == hdrf::TraceEventType::kSubmit)
      return Fail("a submission after the setup (event " + std::to_string(i + 1) + "): not supported");
    hdrf::Engine::TaskOp op;
    op.type = hdrf::ToEventType(e.type);
    op.n = e.n;
    op.job = refs[e.job];
    ops.push_back(op);
  }
  trace->events.clear();
  trace->events.shrink_to_fit();

  size_t refused_total = 0;
  HDRF_PROBE_BEGIN();
  const auto t0 = Clock::now();
  for (size_t i = 0; i < count; i += batch) {
    size_t refused = 0;
    hdrf::Status s = engine->ApplyTasks(ops.data() + i, std::min(batch, count - i), nullptr, &refused);
    if (!s.ok()) return Fail(s.ToString());
    refused_total += refused;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  HDRF_PROBE_END(("ApplyTasks events=" + std::to_string(count)).c_str());

  const double eps = secs > 0 ? static_cast<double>(count) / secs : 0;
  std::printf(
      "{\"events\": %zu, \"seconds\": %.6f, \"events_per_sec\": %.0f, \"ns_per_event\": %.2f, "
      "\"digest\": \"%s\", \"last_seq\": %llu, \"refused\": %zu, \"jobs\": %zu, \"batch\": %zu, "
      "\"setup_events\": %zu, \"read_seconds\": %.3f}\n",
      count, secs, eps, count ? secs * 1e9 / static_cast<double>(count) : 0.0, engine->DigestHex().c_str(),
      static_cast<unsigned long long>(engine->last_seq()), refused_total, trace->jobs.size(), batch, setup, read_s);
  return 0;
}
