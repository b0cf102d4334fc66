// hdrf demo: README command one. Generates a realistic trace, replays it
// with sync durability into a RocksDB store in a child process, kills that
// child with SIGKILL mid-way, recovers the store, and checks the recovered
// state against an in-memory replay of the same prefix.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"
#include "tools/commands.h"
#include "tools/cli.h"
#include "tools/human_quantity.h"
#include "tools/tree_view.h"

namespace hdrf::tools {
namespace {

const char kHelp[] =
    "usage: hdrf demo [--dir DIR] [--jobs N] [--depth D] [--fanout F] [--events E]\n"
    "                 [--seed S] [--batch B] [--kill-at FRACTION] [--nodes K]\n"
    "                 [--log-retention-events N|all] [--log-retention-seconds S]\n"
    "\n"
    "The main job of README command one, on an embedded default store:\n"
    "  1. generates a trace: F^D leaf queues, N jobs, E task events, on a\n"
    "     cluster of K nodes of 64 cores, 256Gi and 110 pods, one in 8 of\n"
    "     them with 8 GPUs, plus half a task granule of each resource, so\n"
    "     that none is ever exactly used up (K = 0: a cluster sized to 0.6 x\n"
    "     the jobs' demand)\n"
    "  2. replays it with sync durability into a RocksDB store under DIR, in a\n"
    "     child process that reports every acknowledged (durable) sequence\n"
    "  3. kills the child with SIGKILL once FRACTION of the events are acked\n"
    "  4. recovers the store and checks that every acknowledged event is there\n"
    "  5. replays the recovered prefix in memory and compares the digests\n"
    "  6. shows the recovered tree (two levels) and the figures\n"
    "defaults: --dir ./hdrf-data --jobs 100000 --depth 3 --fanout 15\n"
    "          --events 10000000 --seed 1 --batch 4096 --kill-at 0.5 --nodes 2000\n"
    "\n"
    "The store keeps its whole log by default, so that `hdrf workload import\n"
    "--from-db DIR/store` sees every job (docs/simulate_import.md); the\n"
    "engine's default keeps only the log since the checkpoint before the newest:\n"
    "  --log-retention-events N   keep at least the last N events (default: all)\n"
    "  --log-retention-seconds S  keep at least the events of the last S seconds\n"
    "                      (by event time; default 0: off)\n";

// The demo cluster: `nodes` nodes of 64 cores, 256Gi and 110 pods; one in
// eight (at least one) also has 8 GPUs.
ResourceAmounts NodesCluster(int64_t nodes, int64_t* gpu_nodes) {
  *gpu_nodes = std::max<int64_t>(1, nodes / 8);
  return {{"cpu", nodes * 64 * 1000},
          {"memory", nodes * 256 * (int64_t{1} << 30)},
          {"pods", nodes * 110 * 1000},
          {"nvidia.com/gpu", *gpu_nodes * 8 * 1000}};
}

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Applies trace events [from, to) (0-based) in batches; submissions fill refs.
Status ApplyRange(Engine& eng, const Trace& tr, std::vector<JobRef>& refs, size_t from, size_t to,
                  size_t batch, int ack_fd) {
  std::vector<Engine::TaskOp> ops;
  ops.reserve(batch);
  size_t i = from;
  while (i < to) {
    ops.clear();
    const bool submits = tr.events[i].type == TraceEventType::kSubmit;
    while (i < to && ops.size() < batch && (tr.events[i].type == TraceEventType::kSubmit) == submits) {
      const TraceEvent& e = tr.events[i++];
      Engine::TaskOp op;
      op.type = ToEventType(e.type);
      op.n = e.n;
      if (submits) {
        op.spec = &tr.jobs[e.job];
        op.submitted = &refs[e.job];
      } else {
        op.job = refs[e.job];
      }
      ops.push_back(op);
    }
    uint64_t last = 0;
    size_t refused = 0;
    HDRF_RETURN_IF_ERROR(eng.ApplyTasks(ops.data(), ops.size(), &last, &refused));
    if (refused) return Status::Internal("a trace event was refused near #" + std::to_string(i));
    if (ack_fd >= 0 && write(ack_fd, &last, sizeof last) != sizeof last) return Status::IoError("ack pipe");
  }
  return Status::Ok();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "hdrf demo: %s\n", what.c_str());
  return 1;
}

struct DemoOptions {
  TraceGenOptions gen;
  int64_t batch = 4096;
  double kill_at = 0.5;
  int64_t nodes = 2000;      // 0: the generator's own cluster
  int64_t gpu_nodes = 0;
  std::filesystem::path dir;
  EngineOptions retention;  // log_retention_* only (--log-retention-events, --log-retention-seconds)
};

// The flags into *o; the exit code when done.
std::optional<int> ParseFlags(int argc, char** argv, DemoOptions* o) {
  Cli flags("hdrf demo", kHelp);
  for (const char* f : {"dir", "jobs", "depth", "fanout", "events", "seed", "batch", "kill-at", "nodes"})
    flags.Value(f);
  RetentionFlags(flags);
  flags.PositionalHint(" (see --help)");
  if (auto exit = flags.Parse(argc, argv, 2)) return exit;
  o->retention.log_retention_events = UINT64_MAX;  // the whole log, unless told otherwise
  if (auto exit = ParseRetentionFlags(flags, &o->retention)) return exit;
  auto jobs = flags.GetInt("jobs", 100000);
  auto depth = flags.GetInt("depth", 3);
  auto fanout = flags.GetInt("fanout", 15);
  auto events = flags.GetInt("events", 10000000);
  auto seed = flags.GetInt("seed", 1);
  auto batch = flags.GetInt("batch", 4096);
  auto kill_at = flags.GetDouble("kill-at", 0.5, 1e-3, 0.999);
  auto nodes = flags.GetInt("nodes", 2000);
  for (const Status& s : {jobs.status(), depth.status(), fanout.status(), events.status(), seed.status(),
                          batch.status(), kill_at.status(), nodes.status()})
    if (!s.ok()) return flags.Usage(s.message());
  if (*batch < 1 || *kill_at <= 0 || *kill_at >= 1 || *nodes < 0 || *nodes > 10000000)
    return flags.Usage("--batch must be >= 1, --kill-at within (0, 1), --nodes in 0..10^7");
  o->nodes = *nodes;
  if (*nodes > 0) o->gen.cluster = NodesCluster(*nodes, &o->gpu_nodes);
  o->gen.jobs = *jobs;
  o->gen.depth = static_cast<int>(*depth);
  o->gen.fanout = static_cast<int>(*fanout);
  o->gen.events = *events;
  o->gen.seed = static_cast<uint64_t>(*seed);
  o->batch = *batch;
  o->kill_at = *kill_at;
  o->dir = flags.Get("dir", "hdrf-data");
  return std::nullopt;
}

// The child: replays the whole trace durably, writing each acknowledged
// sequence number to `ack_fd`; never returns.
[[noreturn]] void ReplayChild(const Trace& tr, const std::filesystem::path& store, size_t batch, int ack_fd,
                              const EngineOptions& retention) {
  EngineOptions o;
  o.db_path = store.string();
  o.log_retention_events = retention.log_retention_events;
  o.log_retention_seconds = retention.log_retention_seconds;
  o.durability = Durability::kSync;
  auto eng = Engine::Create(tr.cluster, tr.queues, o);
  if (!eng.ok()) {
    std::fprintf(stderr, "hdrf demo (child): %s\n", eng.status().message().c_str());
    _exit(3);
  }
  std::vector<JobRef> refs(tr.jobs.size());
  Status s = ApplyRange(**eng, tr, refs, 0, tr.events.size(), batch, ack_fd);
  if (!s.ok()) {
    std::fprintf(stderr, "hdrf demo (child): %s\n", s.message().c_str());
    _exit(4);
  }
  _exit(0);
}

struct Killed {
  uint64_t acked = 0;  // the last sequence number the child acknowledged
  double seconds = 0;  // from fork to kill
};

// Steps 2-3: a durable replay in a child process, SIGKILLed once `kill_seq`
// events are acknowledged.
StatusOr<Killed> ReplayAndKill(const Trace& tr, const std::filesystem::path& store, size_t batch,
                               uint64_t kill_seq, const EngineOptions& retention) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return Status::IoError("pipe failed");
  auto t1 = Clock::now();
  pid_t child = fork();
  if (child < 0) return Status::IoError("fork failed");
  if (child == 0) {
    close(pipefd[0]);
    ReplayChild(tr, store, batch, pipefd[1], retention);
  }
  close(pipefd[1]);
  Killed k;
  uint64_t v = 0;
  double last_print = 0;
  const bool tty = isatty(2);
  while (read(pipefd[0], &v, sizeof v) == sizeof v) {
    k.acked = v;
    const double secs = Since(t1);
    if (tty && secs - last_print > 0.25) {
      last_print = secs;
      std::fprintf(stderr, "\r      acked %" PRIu64 " / %zu  (%.0f events/s)   ", k.acked, tr.events.size(),
                   static_cast<double>(k.acked) / secs);
    }
    if (k.acked >= kill_seq) {
      kill(child, SIGKILL);
      break;
    }
  }
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  close(pipefd[0]);
  k.seconds = Since(t1);
  if (tty) std::fprintf(stderr, "\n");
  if (!(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL))
    return Status::Internal("the replay child ended before it was killed (status " + std::to_string(wstatus) + ")");
  return k;
}

}  // namespace

int CmdDemo(int argc, char** argv) {
  DemoOptions opt;
  if (auto exit = ParseFlags(argc, argv, &opt)) return *exit;
  const TraceGenOptions& g = opt.gen;
  const std::filesystem::path& dir = opt.dir;
  const std::filesystem::path store = dir / "store";

  // 1. The trace.
  auto t0 = Clock::now();
  std::printf("[1/6] generating a trace: %" PRId64 "^%d leaf queues, %" PRId64 " jobs, %" PRId64 " events (seed %" PRIu64 ")\n",
              static_cast<int64_t>(g.fanout), g.depth, g.jobs, g.events, g.seed);
  std::fflush(stdout);
  auto tr = GenerateTrace(g);
  if (!tr.ok()) return Fail(tr.status().message());
  const size_t total = tr->events.size();
  std::printf("      %zu queues, %zu jobs, %zu trace events in %.1f s\n", tr->queues.size() + 1, tr->jobs.size(),
              total, Since(t0));
  std::string capacity;
  for (const auto& [r, v] : tr->cluster) capacity += " " + ShortResourceName(r) + " " + HumanQuantity(r, v);
  if (opt.nodes > 0)
    std::printf("      cluster: %" PRId64 " nodes of 64 cores, 256Gi and 110 pods, %" PRId64
                " of them with 8 GPUs, and half a task\n      granule more of each resource so that none is ever"
                " exactly used up:%s\n",
                opt.nodes, opt.gpu_nodes, capacity.c_str());
  else
    std::printf("      cluster (0.6 x the jobs' demand):%s\n", capacity.c_str());

  // 2-3. Durable replay in a child, killed mid-way.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (std::filesystem::exists(store)) {
    std::printf("      removing the previous demo store %s\n", store.c_str());
    std::filesystem::remove_all(store, ec);
    if (ec) return Fail("cannot remove " + store.string() + ": " + ec.message());
  }
  const uint64_t kill_seq = static_cast<uint64_t>(static_cast<double>(total) * opt.kill_at);
  std::printf("[2/6] replaying with sync durability into %s (batches of %" PRId64 ", group commit)\n",
              store.c_str(), opt.batch);
  std::fflush(stdout);
  auto killed = ReplayAndKill(*tr, store, static_cast<size_t>(opt.batch), kill_seq, opt.retention);
  if (!killed.ok()) return Fail(killed.status().message());
  const uint64_t acked = killed->acked;
  const double replay_secs = killed->seconds;
  std::printf("[3/6] killed the replay with SIGKILL after %" PRIu64 " acknowledged events (%.1f s, %.0f events/s durable)\n",
              acked, replay_secs, static_cast<double>(acked) / replay_secs);

  // 4. Recovery.
  auto t2 = Clock::now();
  EngineOptions ro;
  ro.db_path = store.string();
  ro.durability = Durability::kSync;
  ro.log_retention_events = opt.retention.log_retention_events;  // its Close checkpoints too
  ro.log_retention_seconds = opt.retention.log_retention_seconds;
  auto rec = Engine::Open(ro);
  if (!rec.ok()) return Fail("recovery failed: " + rec.status().message());
  const double recover_secs = Since(t2);
  const uint64_t last = (*rec)->last_seq();
  std::fflush(stdout);
  std::printf("[4/6] recovered %s in %.2f s: last_seq %" PRIu64 ", %zu queues, %zu jobs\n", store.c_str(),
              recover_secs, last, (*rec)->queue_count(), (*rec)->job_count());
  const bool all_acked = last >= acked;
  std::printf("      every acknowledged event recovered (last_seq %" PRIu64 " >= acked %" PRIu64 "): %s\n", last, acked,
              all_acked ? "yes" : "NO");

  std::fflush(stdout);
  // 5. In-memory replay of the same prefix.
  auto t3 = Clock::now();
  auto mem = Engine::Create(tr->cluster, tr->queues, {});
  if (!mem.ok()) return Fail(mem.status().message());
  std::vector<JobRef> refs(tr->jobs.size());
  Status s = ApplyRange(**mem, *tr, refs, 0, std::min<uint64_t>(last, total), 1 << 16, -1);
  if (!s.ok()) return Fail("in-memory replay: " + s.message());
  const std::string d_rec = (*rec)->DigestHex(), d_mem = (*mem)->DigestHex();
  const bool match = d_rec == d_mem;
  std::printf("[5/6] replayed events 1..%" PRIu64 " in memory in %.1f s: digest %s, recovered %s: %s\n", last,
              Since(t3), d_mem.c_str(), d_rec.c_str(), match ? "MATCH" : "MISMATCH");

  std::fflush(stdout);
  // 6. The recovered tree, two levels.
  TreeSnapshot tree = TakeTreeSnapshot(**rec);
  std::erase_if(tree.queues, [](const QueueInfo& q) { return q.depth > 1; });
  std::printf("[6/6] the recovered tree (root and its %zu children; hdrf queues --db %s shows all):\n",
              tree.queues.size() - 1, store.c_str());
  std::fputs(FormatTree(tree).c_str(), stdout);
  std::printf("\nsummary: %" PRIu64 " events durable at %.0f events/s (sync), recovery %.2f s, digest %s\n", acked,
              static_cast<double>(acked) / replay_secs, recover_secs, match && all_acked ? "matches" : "DIFFERS");
  return match && all_acked ? 0 : 1;
}

}  // namespace hdrf::tools
