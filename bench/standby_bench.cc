// Failover benchmark (issue 15: writer death -> a warm standby accepting
// events in <= 0.5 s at 10^6 jobs), beside cold recovery of the same store,
// and the follower's lag at 10^5 events/s. bench/README.md has the figures
// and the commands.
//
//   standby_bench run DIR [--jobs N] [--rate R] [--load-seconds S] [--cold]
//       [--kill-in-checkpoint MS] [--catch-up-ms C] [--checkpoint-every K]
//       [--seed S]
//     Starts a writer process (this program, `writer`) on a new store at DIR:
//     it submits N jobs (the `hdrf trace gen` generator, depth 3, fanout 10),
//     takes a checkpoint, then applies the trace's task events at R events/s
//     (sync, group commit in batches of R/100 every 10 ms) and reports each
//     acknowledged batch with the time of its acknowledgement. This process
//     opens a follower of the store (Engine::OpenFollower, catch-up every C
//     ms, default 5), lets the load run S seconds while it samples the
//     follower's staleness every millisecond (the age of the oldest
//     acknowledged event it has not applied), SIGKILLs the writer and times
//     Engine::Promote until the first event (an Allocate) is accepted. With
//     --cold it times Engine::Open (cold recovery: newest checkpoint + log
//     tail, as after a restart) instead of the standby. With
//     --kill-in-checkpoint MS, after the S seconds it asks the writer
//     (SIGUSR1) for a checkpoint (10^6 jobs: chunks, flush, header) and
//     kills it MS ms after that checkpoint started.
//     Prints one JSON line.
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// steady_clock is CLOCK_MONOTONIC: the same clock in the writer and here.
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct Args {
  int64_t jobs = 1000000;
  double rate = 100000;
  double load_seconds = 5;
  uint64_t checkpoint_every = 1000000;
  uint64_t seed = 1;
  bool cold = false;
  int kill_in_checkpoint_ms = -1;  // -1: kill at the end of the load
  uint32_t catch_up_ms = 5;
};

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 0; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--cold") { a->cold = true; continue; }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (f == "--jobs") a->jobs = std::atoll(v);
    else if (f == "--rate") a->rate = std::atof(v);
    else if (f == "--load-seconds") a->load_seconds = std::atof(v);
    else if (f == "--checkpoint-every") a->checkpoint_every = std::strtoull(v, nullptr, 10);
    else if (f == "--seed") a->seed = std::strtoull(v, nullptr, 10);
    else if (f == "--kill-in-checkpoint") a->kill_in_checkpoint_ms = std::atoi(v);
    else if (f == "--catch-up-ms") a->catch_up_ms = static_cast<uint32_t>(std::atoi(v));
    else return false;
  }
  return a->jobs > 0 && a->rate >= 100 && a->catch_up_ms > 0;
}

void Say(const std::string& line) {
  const std::string l = line + "\n";
  (void)!write(1, l.data(), l.size());
}

std::atomic<bool> checkpoint_requested{false};
void OnUsr1(int) { checkpoint_requested = true; }

// ---- the writer process ----

int Writer(const std::string& dir, const Args& a) {
  signal(SIGUSR1, OnUsr1);
  hdrf::TraceGenOptions o;
  o.jobs = a.jobs;
  o.events = static_cast<int64_t>(a.rate * 60);  // a minute of load at most
  o.depth = 3;
  o.fanout = 10;
  o.seed = a.seed;
  auto trace = hdrf::GenerateTrace(o);
  if (!trace.ok()) return Say("error " + trace.status().ToString()), 1;
  hdrf::EngineOptions eo;
  eo.db_path = dir;
  eo.durability = hdrf::Durability::kSync;
  eo.checkpoint_every = a.checkpoint_every;
  auto engine = hdrf::Engine::Create(trace->cluster, trace->queues, eo);
  if (!engine.ok()) return Say("error " + engine.status().ToString()), 1;
  hdrf::Engine& e = **engine;
  std::vector<hdrf::JobRef> refs(trace->jobs.size());
  std::vector<hdrf::Engine::TaskOp> ops;
  auto flush = [&]() -> bool {
    uint64_t last = 0;
    size_t refused = 0;
    hdrf::Status s = e.ApplyTasks(ops.data(), ops.size(), &last, &refused);
    ops.clear();
    if (!s.ok() || refused) return Say("error apply: " + s.ToString()), false;
    return true;
  };
  const size_t setup = hdrf::TraceSetupEvents(*trace);
  for (size_t i = 0; i < setup; ++i) {
    hdrf::Engine::TaskOp op;
    op.type = hdrf::Event::Type::kSubmit;
    op.spec = &trace->jobs[trace->events[i].job];
    op.submitted = &refs[trace->events[i].job];
    ops.push_back(op);
    if (ops.size() == 8192 && !flush()) return 1;
  }
  if (!ops.empty() && !flush()) return 1;
  if (!e.Checkpoint().ok()) return Say("error checkpoint"), 1;
  Say("ready " + std::to_string(e.last_seq()));
  const size_t per_tick = static_cast<size_t>(a.rate / 100);
  const auto t0 = Clock::now();
  std::thread checkpointer;
  size_t i = setup;
  for (uint64_t tick = 1; i < trace->events.size(); ++tick) {
    if (checkpoint_requested.exchange(false) && !checkpointer.joinable()) {
      // Beside the load, as the engine's own checkpoints run.
      checkpointer = std::thread([&e] {
        Say("checkpointing " + std::to_string(NowNs()));
        hdrf::Status s = e.Checkpoint();
        Say(s.ok() ? "checkpointed " + std::to_string(NowNs()) : "error checkpoint: " + s.ToString());
      });
    }
    for (size_t k = 0; k < per_tick && i < trace->events.size(); ++k, ++i) {
      const hdrf::TraceEvent& te = trace->events[i];
      hdrf::Engine::TaskOp op;
      op.type = static_cast<hdrf::Event::Type>(te.type);
      op.job = refs[te.job];
      op.n = te.n;
      ops.push_back(op);
    }
    if (!flush()) return 1;
    Say("acked " + std::to_string(e.last_seq()) + " " + std::to_string(NowNs()));
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(10 * tick));
  }
  _exit(0);
}

// ---- this process ----

// What the writer reported, read in the background.
struct WriterLines {
  std::mutex mu;
  std::vector<std::pair<uint64_t, int64_t>> acks;  // (last seq, ack time ns), guarded by mu
  std::atomic<uint64_t> last_ack{0};
  std::atomic<bool> ready{false};
  std::atomic<int64_t> checkpoint_start_ns{0}, checkpoint_done_ns{0};

  void Read(FILE* in) {
    char line[256];
    while (fgets(line, sizeof line, in)) {
      const std::string l(line);
      if (l.rfind("ready", 0) == 0) {
        ready = true;
      } else if (l.rfind("acked ", 0) == 0) {
        char* end = nullptr;
        const uint64_t seq = std::strtoull(l.c_str() + 6, &end, 10);
        const int64_t ns = std::strtoll(end, nullptr, 10);
        std::lock_guard<std::mutex> g(mu);
        acks.emplace_back(seq, ns);
        last_ack = seq;
      } else if (l.rfind("checkpointing ", 0) == 0) {
        checkpoint_start_ns = std::strtoll(l.c_str() + 14, nullptr, 10);
      } else if (l.rfind("checkpointed ", 0) == 0) {
        checkpoint_done_ns = std::strtoll(l.c_str() + 13, nullptr, 10);
      } else {
        std::fprintf(stderr, "writer: %s", line);
      }
    }
  }
  // How stale a follower that applied `applied` is at `now_ns`: the age of
  // the oldest acknowledged event it lacks (0 if none).
  double StalenessMs(uint64_t applied, int64_t now_ns) {
    std::lock_guard<std::mutex> g(mu);
    auto it = std::upper_bound(acks.begin(), acks.end(), applied,
                               [](uint64_t a, const std::pair<uint64_t, int64_t>& p) { return a < p.first; });
    return it == acks.end() ? 0.0 : static_cast<double>(now_ns - it->second) / 1e6;
  }
};

struct LagStats {
  size_t samples = 0;
  double p50 = 0, p99 = 0, max = 0;  // ms
  double cpu_percent = 0;            // this process (the follower) during the load
};

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Samples the follower's staleness every millisecond for `seconds`.
LagStats SampleLag(hdrf::Engine* follower, WriterLines& w, double seconds) {
  LagStats out;
  const auto t0 = Clock::now();
  const double cpu0 = CpuSeconds();
  std::vector<double> v;
  while (Since(t0) < seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!follower) continue;
    const uint64_t applied = follower->follower_lag().applied_seq;
    v.push_back(w.StalenessMs(applied, NowNs()));
  }
  out.cpu_percent = 100 * (CpuSeconds() - cpu0) / Since(t0);
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  out.samples = v.size();
  out.p50 = v[v.size() / 2];
  out.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  out.max = v.back();
  return out;
}

pid_t SpawnWriter(const std::string& dir, int argc, char** argv, FILE** out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<std::string> args = {"/proc/self/exe", "writer", dir};
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& s : args) cargs.push_back(s.data());
  cargs.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, cargs.data(), environ) != 0) return -1;
  close(fds[1]);
  *out = fdopen(fds[0], "r");
  return pid;
}

// Waits for the store's LOCK to be released and opens it (cold recovery).
std::unique_ptr<hdrf::Engine> OpenCold(const std::string& dir) {
  hdrf::EngineOptions eo;
  eo.db_path = dir;
  for (;;) {
    auto e = hdrf::Engine::Open(eo);
    if (e.ok()) return std::move(e).value();
    if (e.status().code() != hdrf::StatusCode::kFailedPrecondition) {
      std::fprintf(stderr, "open: %s\n", e.status().ToString().c_str());
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int Run(const std::string& dir, const Args& a, int argc, char** argv) {
  FILE* in = nullptr;
  const pid_t pid = SpawnWriter(dir, argc, argv, &in);
  if (pid < 0) return 1;
  WriterLines w;
  std::thread reader([&] { w.Read(in); });
  while (!w.ready.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::unique_ptr<hdrf::Engine> standby;
  double open_s = 0;
  if (!a.cold) {
    hdrf::FollowerOptions fo;
    fo.db_path = dir;
    fo.catch_up_interval_ms = a.catch_up_ms;
    const auto t = Clock::now();
    auto f = hdrf::Engine::OpenFollower(fo);
    if (!f.ok()) return std::fprintf(stderr, "%s\n", f.status().ToString().c_str()), 1;
    open_s = Since(t);
    standby = std::move(f).value();
    // The load has gone on while the follower loaded the store: catch up
    // (to within 0.1 s of events) before measuring how stale it stays.
    for (int k = 0; k < 20 && (k == 0 || standby->follower_lag().events > a.rate / 10); ++k)
      if (hdrf::Status s = standby->CatchUp(); !s.ok())
        return std::fprintf(stderr, "catch-up: %s\n", s.ToString().c_str()), 1;
  }
  const LagStats lag = SampleLag(standby.get(), w, a.load_seconds);
  if (a.kill_in_checkpoint_ms >= 0) {
    kill(pid, SIGUSR1);
    while (w.checkpoint_start_ns.load() == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const int64_t at = w.checkpoint_start_ns.load() + int64_t{a.kill_in_checkpoint_ms} * 1000000;
    while (NowNs() < at) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const hdrf::Engine::FollowerLag before = standby ? standby->follower_lag() : hdrf::Engine::FollowerLag{};
  kill(pid, SIGKILL);
  const auto killed = Clock::now();
  const int64_t killed_ns = NowNs();
  // The kernel releases the dead writer's LOCK as its exit ends (after it
  // freed the process's memory): reaped = a little after that.
  std::atomic<double> exited{0};
  std::thread reaper([&] {
    waitpid(pid, nullptr, 0);
    exited = Since(killed);
  });
  if (standby) {
    hdrf::Status s = standby->Promote(hdrf::PromoteOptions{});
    if (!s.ok()) return std::fprintf(stderr, "promote: %s\n", s.ToString().c_str()), 1;
  } else if (!(standby = OpenCold(dir))) {
    return 1;
  }
  const double promote = Since(killed);
  // The first event the new writer accepts: a task of the job hdrf picks.
  hdrf::Status s = hdrf::Status::NotFound("no job can take a task");
  if (auto next = standby->PickNext()) {
    auto ref = standby->FindJob(next->name);
    s = ref.ok() ? standby->Allocate(*ref, 1) : ref.status();
  }
  const double failover = Since(killed);
  reaper.join();
  reader.join();
  const uint64_t acked = w.last_ack.load();
  const int64_t ck0 = w.checkpoint_start_ns.load(), ck1 = w.checkpoint_done_ns.load();
  const bool ck_done = ck1 != 0 && ck1 < killed_ns;
  std::printf("{\"mode\": \"%s\", \"jobs\": %zu, \"rate\": %.0f, \"catch_up_ms\": %u, "
              "\"kill_in_checkpoint_ms\": %d, \"checkpoint_done_before_kill\": %s, "
              "\"checkpoint_seconds\": %.3f, \"seconds_to_first_event\": %.3f, \"first_event\": \"%s\", "
              "\"last_acked\": %llu, \"took_over_at\": %llu, \"lag_before_kill_events\": %llu, "
              "\"lag_before_kill_seconds\": %.3f, \"staleness_ms\": {\"samples\": %zu, \"p50\": %.1f, "
              "\"p99\": %.1f, \"max\": %.1f}, \"follower_cpu_percent\": %.1f, "
              "\"follower_open_seconds\": %.2f, \"writer_exit_seconds\": %.3f, \"promote_seconds\": %.3f, "
              "\"reloads\": %llu}\n",
              a.cold ? "cold" : "standby", standby->job_count(), a.rate, a.catch_up_ms,
              a.kill_in_checkpoint_ms, ck_done ? "true" : "false", ck_done ? (ck1 - ck0) / 1e9 : 0.0, failover,
              s.ok() ? "accepted" : s.ToString().c_str(), static_cast<unsigned long long>(acked),
              static_cast<unsigned long long>(standby->last_seq() - 1),
              static_cast<unsigned long long>(before.events), before.seconds, lag.samples, lag.p50,
              lag.p99, lag.max, lag.cpu_percent, open_s, exited.load(), promote,
              static_cast<unsigned long long>(before.reloads));
  (void)standby->Close();
  return s.ok() && standby->last_seq() - 1 >= acked ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (argc < 3 || !ParseArgs(argc - 3, argv + 3, &a)) {
    std::fprintf(stderr,
                 "usage: standby_bench run DIR [--jobs N] [--rate R] [--load-seconds S] [--cold]\n"
                 "                     [--kill-in-checkpoint MS] [--catch-up-ms C]\n"
                 "                     [--checkpoint-every K] [--seed S]\n");
    return 2;
  }
  const std::string cmd = argv[1], dir = argv[2];
  if (cmd == "writer") return Writer(dir, a);
  if (cmd == "run") return Run(dir, a, argc - 3, argv + 3);
  return 2;
}
