// Failover benchmark (issue 15: writer death -> a warm standby accepting
// events in <= 0.5 s at 10^6 jobs), beside cold recovery of the same store.
// bench/README.md has the figures and the commands.
//
//   standby_bench run DIR [--jobs N] [--rate R] [--load-seconds S] [--cold]
//       [--checkpoint-every K] [--seed S]
//     Starts a writer process (this program, `writer`) on a new store at DIR:
//     it submits N jobs (the `hdrf trace gen` generator, depth 3, fanout 10),
//     takes a checkpoint, then applies the trace's task events at R events/s
//     (sync, group commit in batches of R/100 every 10 ms) and reports each
//     acknowledged batch. This process opens a follower of the store
//     (Engine::OpenFollower), lets the load run S seconds, SIGKILLs the
//     writer and times Engine::Promote until the first event (an Allocate)
//     is accepted. With --cold it times Engine::Open (cold recovery: newest
//     checkpoint + log tail, as after a restart) instead of the standby.
//     Prints one JSON line.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Args {
  int64_t jobs = 1000000;
  double rate = 100000;
  double load_seconds = 5;
  uint64_t checkpoint_every = 1000000;
  uint64_t seed = 1;
  bool cold = false;
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
    else return false;
  }
  return true;
}

void Say(const std::string& line) {
  const std::string l = line + "\n";
  (void)!write(1, l.data(), l.size());
}

int Writer(const std::string& dir, const Args& a) {
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
  size_t i = setup;
  for (uint64_t tick = 1; i < trace->events.size(); ++tick) {
    for (size_t k = 0; k < per_tick && i < trace->events.size(); ++k, ++i) {
      const hdrf::TraceEvent& te = trace->events[i];
      hdrf::Engine::TaskOp op;
      op.type = static_cast<hdrf::Event::Type>(te.type);
      op.job = refs[te.job];
      op.n = te.n;
      ops.push_back(op);
    }
    if (!flush()) return 1;
    Say("acked " + std::to_string(e.last_seq()));
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(10 * tick));
  }
  _exit(0);
}

int Run(const std::string& dir, const Args& a, int argc, char** argv) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
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
  if (posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, cargs.data(), environ) != 0) return 1;
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  uint64_t acked = 0;
  char line[256];
  // Reads the writer's lines in the background (the last acknowledged seq).
  std::atomic<uint64_t> last_ack{0};
  std::atomic<bool> ready{false};
  std::thread reader([&] {
    while (fgets(line, sizeof line, in)) {
      std::string l(line);
      if (l.rfind("ready", 0) == 0) ready = true;
      else if (l.rfind("acked ", 0) == 0) last_ack = std::strtoull(l.c_str() + 6, nullptr, 10);
      else std::fprintf(stderr, "writer: %s", line);
    }
  });
  while (!ready.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::unique_ptr<hdrf::Engine> standby;
  double open_s = 0;
  if (!a.cold) {
    hdrf::FollowerOptions fo;
    fo.db_path = dir;
    const auto t = Clock::now();
    auto f = hdrf::Engine::OpenFollower(fo);
    if (!f.ok()) return std::fprintf(stderr, "%s\n", f.status().ToString().c_str()), 1;
    open_s = Since(t);
    standby = std::move(f).value();
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(a.load_seconds));
  const hdrf::Engine::FollowerLag lag = standby ? standby->follower_lag() : hdrf::Engine::FollowerLag{};
  kill(pid, SIGKILL);
  const auto killed = Clock::now();
  hdrf::PromoteOptions po;
  if (standby) {
    hdrf::Status s = standby->Promote(po);
    if (!s.ok()) return std::fprintf(stderr, "promote: %s\n", s.ToString().c_str()), 1;
  } else {
    hdrf::EngineOptions eo;
    eo.db_path = dir;
    for (;;) {  // until the kernel released the dead writer's LOCK
      auto e = hdrf::Engine::Open(eo);
      if (e.ok()) {
        standby = std::move(e).value();
        break;
      }
      if (e.status().code() != hdrf::StatusCode::kFailedPrecondition)
        return std::fprintf(stderr, "open: %s\n", e.status().ToString().c_str()), 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const double promote = Since(killed);
  // The first event the new writer accepts: a task of the job hdrf picks.
  hdrf::Status s = hdrf::Status::NotFound("no job can take a task");
  if (auto next = standby->PickNext()) {
    auto ref = standby->FindJob(next->name);
    s = ref.ok() ? standby->Allocate(*ref, 1) : ref.status();
  }
  const double failover = Since(killed);
  waitpid(pid, nullptr, 0);
  reader.join();
  acked = last_ack.load();
  std::printf("{\"mode\": \"%s\", \"jobs\": %zu, \"rate\": %.0f, \"seconds_to_first_event\": %.3f, "
              "\"first_event\": \"%s\", \"last_acked\": %llu, \"took_over_at\": %llu, "
              "\"lag_before_kill_events\": %llu, \"lag_before_kill_seconds\": %.3f, "
              "\"follower_open_seconds\": %.2f, \"promote_seconds\": %.3f, \"reloads\": %llu}\n",
              a.cold ? "cold" : "standby", standby->job_count(), a.rate, failover,
              s.ok() ? "accepted" : s.ToString().c_str(), static_cast<unsigned long long>(acked),
              static_cast<unsigned long long>(standby->last_seq() - 1),
              static_cast<unsigned long long>(lag.events), lag.seconds, open_s, promote,
              static_cast<unsigned long long>(lag.reloads));
  (void)standby->Close();
  return s.ok() && standby->last_seq() - 1 >= acked ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (argc < 3 || !ParseArgs(argc - 3, argv + 3, &a)) {
    std::fprintf(stderr,
                 "usage: standby_bench run DIR [--jobs N] [--rate R] [--load-seconds S] [--cold]\n"
                 "                     [--checkpoint-every K] [--seed S]\n");
    return 2;
  }
  const std::string cmd = argv[1], dir = argv[2];
  if (cmd == "writer") return Writer(dir, a);
  if (cmd == "run") return Run(dir, a, argc - 3, argv + 3);
  return 2;
}
