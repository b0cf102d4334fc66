// Recovery benchmark (issue 5: 10^6 jobs plus a 10^7-event log tail in
// <= 5 s). bench/README.md has the figures and the commands.
//
//   recovery_bench write DIR [--jobs N] [--events E] [--depth D] [--fanout F] [--seed S]
//       Generates a trace (api/hdrf/trace.h, the `hdrf trace gen` generator),
//       creates a store at DIR (async, no periodic checkpoints), submits the
//       N jobs, takes a checkpoint, applies the E task events in batches,
//       makes them durable and exits without closing the engine (_exit: no
//       final checkpoint, as after a SIGKILL). The store then holds a
//       checkpoint of N jobs and a log tail of E events. Prints one JSON
//       line with the in-memory digest.
//   recovery_bench recover DIR [--sequential] [--repeat K]
//       Times Engine::Open (durability none, read-only) K times and prints
//       one JSON line per run: seconds, digest, last_seq. --sequential
//       replays the log one event at a time (no folding), for comparison.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Usage() {
  std::fprintf(stderr,
               "usage: recovery_bench write DIR [--jobs N] [--events E] [--depth D] "
               "[--fanout F] [--seed S]\n"
               "       recovery_bench recover DIR [--sequential] [--repeat K]\n");
  return 2;
}

int Write(const std::string& dir, int argc, char** argv) {
  hdrf::TraceGenOptions o;
  o.jobs = 1000000;
  o.events = 10000000;
  o.depth = 3;
  o.fanout = 10;
  for (int i = 0; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (f == "--jobs") o.jobs = v;
    else if (f == "--events") o.events = v;
    else if (f == "--depth") o.depth = static_cast<int>(v);
    else if (f == "--fanout") o.fanout = static_cast<int>(v);
    else if (f == "--seed") o.seed = static_cast<uint64_t>(v);
    else return Usage();
  }
  auto t0 = Clock::now();
  auto trace = hdrf::GenerateTrace(o);
  if (!trace.ok()) {
    std::fprintf(stderr, "%s\n", trace.status().ToString().c_str());
    return 1;
  }
  const double gen_s = Since(t0);
  hdrf::EngineOptions eo;
  eo.db_path = dir;
  eo.durability = hdrf::Durability::kAsync;
  eo.checkpoint_every = 0;
  auto engine = hdrf::Engine::Create(trace->cluster, trace->queues, eo);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    return 1;
  }
  hdrf::Engine& e = **engine;
  std::vector<hdrf::JobRef> refs(trace->jobs.size());
  std::vector<hdrf::Engine::TaskOp> ops;
  constexpr size_t kBatch = 4096;
  auto flush_ops = [&]() -> bool {
    if (ops.empty()) return true;
    uint64_t last = 0;
    size_t refused = 0;
    hdrf::Status s = e.ApplyTasks(ops.data(), ops.size(), &last, &refused);
    ops.clear();
    if (!s.ok() || refused) {
      std::fprintf(stderr, "apply: %s (%zu refused)\n", s.ToString().c_str(), refused);
      return false;
    }
    return true;
  };
  t0 = Clock::now();
  const size_t setup = hdrf::TraceSetupEvents(*trace);
  for (size_t i = 0; i < trace->events.size(); ++i) {
    if (i == setup) {
      if (!flush_ops()) return 1;
      // The checkpoint of the N jobs: everything after it is the log tail.
      if (hdrf::Status s = e.Checkpoint(); !s.ok()) {
        std::fprintf(stderr, "checkpoint: %s\n", s.ToString().c_str());
        return 1;
      }
    }
    const hdrf::TraceEvent& te = trace->events[i];
    hdrf::Engine::TaskOp op;
    op.type = static_cast<hdrf::Event::Type>(te.type);
    if (te.type == hdrf::TraceEventType::kSubmit) {
      op.spec = &trace->jobs[te.job];
      op.submitted = &refs[te.job];
    } else {
      op.job = refs[te.job];
      op.n = te.n;
    }
    ops.push_back(op);
    // Submissions go one batch at a time so that their JobRefs are known
    // before a task event names them.
    if (ops.size() >= kBatch || (te.type == hdrf::TraceEventType::kSubmit &&
                                 i + 1 < trace->events.size() &&
                                 trace->events[i + 1].type != hdrf::TraceEventType::kSubmit))
      if (!flush_ops()) return 1;
  }
  if (!flush_ops()) return 1;
  if (hdrf::Status s = e.Flush(); !s.ok()) {
    std::fprintf(stderr, "flush: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("{\"jobs\": %lld, \"events\": %lld, \"last_seq\": %llu, \"digest\": \"%s\", "
              "\"gen_seconds\": %.2f, \"write_seconds\": %.2f}\n",
              static_cast<long long>(o.jobs), static_cast<long long>(o.events),
              static_cast<unsigned long long>(e.last_seq()), e.DigestHex().c_str(), gen_s,
              Since(t0));
  std::fflush(stdout);
  // As after a SIGKILL: no Close, so no final checkpoint; the log tail stays.
  _exit(0);
}

int Recover(const std::string& dir, int argc, char** argv) {
  bool sequential = false;
  int repeat = 1;
  for (int i = 0; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--sequential") sequential = true;
    else if (f == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else return Usage();
  }
  for (int k = 0; k < repeat; ++k) {
    hdrf::EngineOptions o;
    o.db_path = dir;
    o.durability = hdrf::Durability::kNone;  // reads only
    o.fold_recovery = !sequential;
    auto e = hdrf::Engine::Open(o);
    if (!e.ok()) {
      std::fprintf(stderr, "%s\n", e.status().ToString().c_str());
      return 1;
    }
    const hdrf::RecoveryStats r = (*e)->recovery_stats();
    std::printf("{\"seconds\": %.3f, \"digest\": \"%s\", \"last_seq\": %llu, \"jobs\": %zu, "
                "\"events_replayed\": %llu, \"mode\": \"%s\"}\n",
                r.seconds, (*e)->DigestHex().c_str(),
                static_cast<unsigned long long>((*e)->last_seq()), (*e)->job_count(),
                static_cast<unsigned long long>(r.events_replayed),
                sequential ? "sequential" : "fold");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string cmd = argv[1], dir = argv[2];
  if (cmd == "write") return Write(dir, argc - 3, argv + 3);
  if (cmd == "recover") return Recover(dir, argc - 3, argv + 3);
  return Usage();
}
