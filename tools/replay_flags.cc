#include "tools/replay_flags.h"

#include <unistd.h>

#include "tools/cli.h"
#include "tools/replay_plot.h"

namespace hdrf::tools {
namespace {

const char kReplayUsage[] =
    "usage: hdrf replay (--trace FILE | --from-db DIR) [--db DIR] [--durability sync|async|none]\n"
    "                   [--threads T] [--until SEQ] [--json] [--batch B] [--pipeline N]\n"
    "                   [--rate EVENTS_PER_SEC]\n"
    "                   [--warmup N] [--duration SECONDS] [--partition job|subtree]\n"
    "                   [--progress | --no-progress] [--plot FILE.svg [--plot-samples N]]\n"
    "                   [--log-retention-events N|all] [--log-retention-seconds S]\n"
    "\n"
    "Applies a trace (docs/trace.md) to a new engine and reports throughput,\n"
    "per-event latency and the state digest (docs/spec.md §9). Trace events\n"
    "are numbered from 1; a generated trace submits its N jobs as events 1..N\n"
    "(the setup, applied in order before the clock starts) and then has its\n"
    "task events.\n"
    "\n"
    "  --trace FILE        the trace to apply\n"
    "  --from-db DIR       instead of a trace: the event log of the store at DIR\n"
    "                      (read-only). Its checkpoint's jobs are submitted (setup)\n"
    "                      and their running tasks allocated (untimed, like\n"
    "                      warm-up), then the logged events after the checkpoint\n"
    "                      are the timed events. The digest on one thread is the\n"
    "                      one hdrf recover reports for DIR; \"store_last_seq\" is\n"
    "                      the store's last event. Not with --until\n"
    "  --db DIR            persist into a new store at DIR (default: memory only);\n"
    "                      stdout then carries `acked SEQ` lines, flushed, at least\n"
    "                      every 100 ms: every event up to engine sequence SEQ is\n"
    "                      durable\n"
    "  --durability D      sync (default), async or none; only with --db\n"
    HDRF_RETENTION_HELP
    "                      (only with --db)\n"
    "  --threads T         apply the events after setup/warm-up on T threads\n"
    "                      (default 1). Each job's events stay in trace order on\n"
    "                      one thread; an allocation that finds the cluster full\n"
    "                      because another thread has not released yet is refused\n"
    "                      and counted, and the releases that would undo it are\n"
    "                      skipped. With T = 1 the engine's sequence numbers are\n"
    "                      the trace's and nothing is refused.\n"
    "  --until SEQ         apply only events 1..SEQ\n"
    "  --json              the last stdout line is one JSON object:\n"
    "                      {\"events\", \"seconds\", \"events_per_sec\",\n"
    "                       \"latency_ns\": {\"p50\", \"p99\", \"p999\"}, \"digest\",\n"
    "                       \"last_seq\", \"refused\", \"batch\", ...}\n"
    "  --batch B           apply up to B events per Engine::ApplyTasks call and\n"
    "                      wait for their durability once (group commit).\n"
    "                      Default 1024 without --rate, 1 with it. Latency is\n"
    "                      then per batch; --rate is not applied when B > 1.\n"
    "                      --batch 1: one engine call per event (Allocate,\n"
    "                      Release, ...), latency per event\n"
    "  --pipeline N        with --db and batches: go on applying batches while\n"
    "                      up to N earlier ones are written and synced\n"
    "                      (Engine::ApplyTasksNoWait, then Engine::WaitDurable\n"
    "                      of the oldest once N are in flight), so that one\n"
    "                      thread's fsyncs each cover several batches. An event\n"
    "                      still counts as done only once its batch is durable:\n"
    "                      its latency runs from its batch's start to that\n"
    "                      acknowledgement. N in 1..4096; without it (or 0) each\n"
    "                      batch waits for its own durability\n"
    "  --rate R            pace the timed events to R events/s in all (token\n"
    "                      bucket, 10 ms of burst)\n"
    "  --warmup N          apply N events after setup before the clock starts\n"
    "  --duration S        stop the timed replay after S seconds\n"
    "  --partition P       how events go to threads: job (job index mod T,\n"
    "                      default) or subtree (top-level queue mod T)\n"
    "  --progress          progress bar on stderr even when it is not a terminal\n"
    "  --no-progress       no progress bar (default: shown when stderr is a TTY)\n"
    "  --plot FILE.svg     draw each top-level queue's dominant share over the\n"
    "                      run as an SVG line chart (Engine::Queues() sampled\n"
    "                      after setup, at the start of the timed phase, about\n"
    "                      every (timed events / N) events on thread 0, and at\n"
    "                      the end; time spent sampling is left out of\n"
    "                      \"seconds\" and the latencies: \"plot_seconds\")\n"
    "  --plot-samples N    samples during the timed phase (default 200)\n"
    "\n"
    "\"events\" counts the timed events (refused ones included), \"seconds\" is\n"
    "their wall time, latencies are per event in nanoseconds, \"last_seq\" is the\n"
    "engine's last sequence number (setup included). Ctrl-C stops early and\n"
    "still reports (exit 130).\n"
    "\n"
    "Exit codes: 0 done, 1 unreadable or corrupt trace or an engine error,\n"
    "2 bad usage.\n";

// An integer flag within lo..hi; `range` says what the bound is.
std::optional<int> IntFlag(const Cli& flags, const char* name, int64_t def, int64_t lo, int64_t hi,
                           const std::string& range, int64_t* out) {
  auto v = flags.GetInt(name, def);
  if (!v.ok()) return flags.Usage(v.status().message());
  if (*v < lo || *v > hi) return flags.Usage("flag --" + std::string(name) + ": " + range);
  *out = *v;
  return std::nullopt;
}

// A flag within [lo, hi] (lo > 0) when given (0 = not given).
std::optional<int> PositiveFlag(const Cli& flags, const char* name, const char* unit, double lo, double hi,
                                double* out) {
  auto v = flags.GetDouble(name, 0, lo, hi);
  if (!v.ok()) return flags.Usage(v.status().message() + " (" + unit + ")");
  *out = *v;
  return std::nullopt;
}

// Where the events come from and go to: --trace / --from-db, --db, --plot.
std::optional<int> SourceFlags(const Cli& flags, ReplayConfig* cfg) {
  if (flags.Has("trace") == flags.Has("from-db"))
    return flags.Usage(flags.Has("trace") ? "--trace and --from-db exclude each other"
                                          : "--trace FILE is required (or --from-db DIR; see --help)");
  cfg->trace = flags.Get("trace");
  cfg->from_db = flags.Get("from-db");
  if (flags.Has("trace") && cfg->trace.empty()) return flags.Usage("flag --trace: empty file name");
  if (flags.Has("from-db") && cfg->from_db.empty()) return flags.Usage("flag --from-db: empty directory name");
  if (flags.Has("from-db") && flags.Has("until"))
    return flags.Usage("--until counts trace events; it does not apply to --from-db (the whole log is replayed)");
  if (flags.Has("from-db") && flags.Has("db") && flags.Get("db") == cfg->from_db)
    return flags.Usage("--db must be a new store, not the --from-db store");
  if (flags.Has("plot")) {
    cfg->plot = flags.Get("plot");
    if (Status p = CheckPlotPath(cfg->plot); !p.ok()) return flags.Usage(p.message());
  }
  if (flags.Has("plot-samples") && !flags.Has("plot")) return flags.Usage("--plot-samples needs --plot FILE.svg");
  cfg->db = flags.Get("db");
  if (flags.Has("db") && cfg->db.empty()) return flags.Usage("flag --db: empty directory name");
  if (flags.Has("durability")) {
    auto d = ParseDurability(flags.Get("durability"));
    if (!d.ok()) return flags.Usage("flag --" + d.status().message());
    cfg->durability = *d;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> ParseReplayFlags(int argc, char** argv, ReplayConfig* cfg) {
  Cli flags("hdrf replay", kReplayUsage);
  for (const char* f : {"trace", "db", "durability", "threads", "until", "rate", "warmup", "duration", "partition",
                        "batch", "from-db", "plot", "plot-samples", "pipeline"})
    flags.Value(f);
  for (const char* f : {"json", "progress", "no-progress"}) flags.Bool(f);
  RetentionFlags(flags);
  flags.PositionalHint(" (the trace goes after --trace)");
  if (auto exit = flags.Parse(argc, argv, 2)) return exit;
  if (auto exit = ParseRetentionFlags(flags, &cfg->retention)) return exit;
  if ((flags.Has("log-retention-events") || flags.Has("log-retention-seconds")) && !flags.Has("db"))
    return flags.Usage("--log-retention-events and --log-retention-seconds need --db DIR (a store to keep the log in)");
  if (auto exit = SourceFlags(flags, cfg)) return exit;
  int64_t threads, until, warmup, batch, pipeline;
  if (auto e = IntFlag(flags, "plot-samples", 200, 1, 100000, "must be in 1..100000", &cfg->plot_samples)) return e;
  if (auto e = IntFlag(flags, "threads", 1, 1, 1024, "must be in 1..1024", &threads)) return e;
  if (auto e = IntFlag(flags, "until", INT64_MAX, 0, INT64_MAX, "must be >= 0", &until)) return e;
  if (auto e = IntFlag(flags, "warmup", 0, 0, INT64_MAX, "must be >= 0", &warmup)) return e;
  if (auto e = PositiveFlag(flags, "rate", "events per second", 1e-3, 1e12, &cfg->rate)) return e;
  // Batched unless paced: --rate paces single events.
  const int64_t default_batch = flags.Has("rate") ? 1 : kDefaultReplayBatch;
  if (auto e = IntFlag(flags, "batch", default_batch, 1, 1000000, "must be within 1..1000000", &batch)) return e;
  if (auto e = PositiveFlag(flags, "duration", "seconds", 1e-3, 1e9, &cfg->duration)) return e;
  cfg->threads = static_cast<int>(threads);
  cfg->until = flags.Has("until") ? static_cast<uint64_t>(until) : UINT64_MAX;
  cfg->warmup = static_cast<uint64_t>(warmup);
  cfg->batch = static_cast<size_t>(batch);
  if (auto e = IntFlag(flags, "pipeline", 0, 0, 4096, "must be within 0..4096", &pipeline)) return e;
  cfg->pipeline = static_cast<size_t>(pipeline);
  if (cfg->pipeline && cfg->db.empty()) return flags.Usage("--pipeline needs --db DIR (a store to make durable)");
  if (cfg->pipeline && cfg->batch < 2)
    return flags.Usage("--pipeline needs batches (--batch B with B > 1, not --rate)");
  std::string partition = flags.Get("partition", "job");
  if (partition != "job" && partition != "subtree")
    return flags.Usage("flag --partition: '" + partition + "': expected job or subtree");
  cfg->subtree = partition == "subtree";
  if (flags.Has("progress") && flags.Has("no-progress"))
    return flags.Usage("--progress and --no-progress contradict each other");
  cfg->json = flags.Has("json");
  bool tty = ::isatty(STDERR_FILENO) == 1;
  cfg->progress = flags.Has("no-progress") ? 0 : flags.Has("progress") ? (tty ? 1 : 2) : (tty ? 1 : 0);
  return std::nullopt;
}

}  // namespace hdrf::tools
