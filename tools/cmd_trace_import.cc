// hdrf trace import: a CSV or JSONL event file to a binary trace
// (api/hdrf/trace_import.h, docs/trace.md "Importing events").
#include <chrono>
#include <cstdio>
#include <string>

#include "hdrf/config.h"
#include "api/formats/json_line.h"
#include "hdrf/trace.h"
#include "hdrf/trace_import.h"
#include "tools/commands.h"
#include "tools/cli.h"

namespace hdrf::tools {

namespace {

const char kImportUsage[] =
    "usage: hdrf trace import --from FILE.csv|FILE.jsonl [--config CLUSTER.yaml] --out TRACE\n"
    "                         [--no-check] [--json]\n"
    "\n"
    "Converts an event file that a platform exported (docs/trace.md \"Importing\n"
    "events\") into a binary trace for hdrf replay. One event per line:\n"
    "submit (job, queue, user, tasks, task shape), allocate / release / finish\n"
    "(job, n), remove (job), and before the first of those optionally queue\n"
    "(path, weight, capability, ...) and cluster (capacity) lines. Trace event i\n"
    "is the i-th event line.\n"
    "  --from FILE      the events: .csv (a header line names the columns) or\n"
    "                   .jsonl / .ndjson (one JSON object per line)\n"
    "  --config FILE    the starting queue tree and cluster (docs/spec.md §3,\n"
    "                   forms 1-4); queue and cluster lines of the file add to /\n"
    "                   replace it\n"
    "  --out TRACE      where to write the trace (written atomically; nothing is\n"
    "                   written when the input has an error)\n"
    "  --no-check       do not apply the events to an in-memory engine (by\n"
    "                   default an event the engine refuses is an error naming\n"
    "                   its line, so the trace replays without refusals)\n"
    "  --json           print the summary as one JSON object\n"
    "\n"
    "Errors name FILE:LINE and what is wrong; the exit code is then 1 (2 for\n"
    "bad usage).\n";

}  // namespace

int CmdTraceImport(int argc, char** argv) {
  Cli flags("hdrf trace import", kImportUsage);
  for (const char* f : {"from", "config", "out"}) flags.Value(f);
  for (const char* f : {"no-check", "json"}) flags.Bool(f);
  flags.PositionalHint(" (the events go after --from)");
  if (auto exit = flags.Parse(argc, argv, 3)) return *exit;
  auto ImportUsage = [&](const std::string& msg) { return flags.Usage(msg); };
  if (!flags.Has("from") || flags.Get("from").empty()) return ImportUsage("--from FILE is required (see --help)");
  if (!flags.Has("out") || flags.Get("out").empty()) return ImportUsage("--out TRACE is required (see --help)");
  if (flags.Has("config") && flags.Get("config").empty()) return ImportUsage("flag --config: empty file name");
  const std::string from = flags.Get("from"), out = flags.Get("out");
  auto format = TraceImportFormatOf(from);
  if (!format.ok()) return ImportUsage("--from " + format.status().message());
  if (out == from) return ImportUsage("--out must differ from --from");

  const auto t0 = std::chrono::steady_clock::now();
  TraceImportOptions o;
  o.check = !flags.Has("no-check");
  if (flags.Has("config")) {
    auto cfg = LoadQueueConfigFile(flags.Get("config"));
    if (!cfg.ok()) {
      std::fprintf(stderr, "hdrf trace import: %s\n", cfg.status().message().c_str());
      return 1;
    }
    o.cluster = cfg->cluster;
    o.queues = cfg->queues;
  }
  TraceImportStats stats;
  auto trace = ImportTraceFile(from, o, &stats);
  if (!trace.ok()) {
    std::fprintf(stderr, "hdrf trace import: %s\n", trace.status().message().c_str());
    return 1;
  }
  Status w = WriteTrace(*trace, out);
  if (!w.ok()) {
    std::fprintf(stderr, "hdrf trace import: %s\n", w.message().c_str());
    return 1;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t setup = TraceSetupEvents(*trace);
  if (flags.Has("json")) {
    Json j = {{"from", from}, {"out", out}, {"lines", stats.lines}, {"events", stats.events},
              {"setup_events", setup}, {"jobs", trace->jobs.size()}, {"queues", trace->queues.size()},
              {"queue_lines", stats.queue_lines}, {"cluster_lines", stats.cluster_lines}, {"checked", o.check},
              {"digest", o.check ? Json(stats.digest) : Json()}, {"seconds", secs}};
    std::printf("%s\n", JsonLine(j).c_str());
  } else {
    std::printf("wrote %s: %zu events (%zu jobs; events 1..%zu are the leading submissions), %zu queues\n",
                out.c_str(), stats.events, trace->jobs.size(), setup, trace->queues.size());
    std::printf("  from     %s: %zu lines (%zu queue, %zu cluster) in %.2f s\n", from.c_str(), stats.lines,
                stats.queue_lines, stats.cluster_lines, secs);
    if (o.check) std::printf("  checked  every event applies; digest after them %s\n", stats.digest.c_str());
  }
  return 0;
}

}  // namespace hdrf::tools
