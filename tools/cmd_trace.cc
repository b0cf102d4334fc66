// hdrf trace gen | info | cut: synthetic traces (docs/trace.md).
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "api/formats/json_line.h"
#include "hdrf/trace.h"
#include "tools/commands.h"
#include "tools/cli.h"

namespace hdrf::tools {

namespace {

const char kTraceUsage[] =
    "usage: hdrf trace gen --jobs N --depth D --fanout F --events E --seed S --out FILE\n"
    "                      [--saturate] [--load X] [--alloc-percent P] [--users U]\n"
    "                      [--max-tasks T] [--json]\n"
    "       hdrf trace info FILE [--json]\n"
    "       hdrf trace cut --trace FILE --until SEQ --out FILE\n"
    "       hdrf trace import --from FILE.csv|FILE.jsonl [--config CLUSTER.yaml] --out FILE\n"
    "\n"
    "gen   writes a synthetic trace (docs/trace.md): a queue tree with F^D leaf\n"
    "      queues (root/q0/q3/..., weights 1..10), N jobs spread over them (users,\n"
    "      task shapes over cpu, memory, nvidia.com/gpu and pods, 1..64 tasks),\n"
    "      then E allocate/release events on random jobs that stay within each\n"
    "      job's tasks and the cluster. Trace events 1..N submit the jobs, events\n"
    "      N+1..N+E are the task events. Same flags, same bytes.\n"
    "        --jobs N         jobs (default 1000)\n"
    "        --depth D        levels below root (default 2)\n"
    "        --fanout F       children per parent queue (default 4)\n"
    "        --events E       task events (default 100000)\n"
    "        --seed S         PRNG seed (default 1)\n"
    "        --out FILE       where to write (required)\n"
    "        --saturate       cluster at full use: pods and GPUs at 0.45 x demand\n"
    "                         in whole units, so after a ramp pods stay at the\n"
    "                         limit and resources flip between saturated and\n"
    "                         free on most events (also --full-use)\n"
    "        --load X         capacity as a fraction of the jobs' summed full\n"
    "                         demand (default 0.6: cpu, memory and GPUs come\n"
    "                         close to full but never reach exactly 0 free;\n"
    "                         0.45 with --saturate)\n"
    "        --alloc-percent P  chance that an event on a partly running job\n"
    "                         allocates (default 60; without --saturate)\n"
    "        --users U        distinct users (default clamp(N/100, 4, 1000))\n"
    "        --max-tasks T    tasks per job uniform in 1..T (default 64)\n"
    "        --json           print the summary as one JSON object\n"
    "info  verifies a trace and prints what it holds.\n"
    "cut   writes the first SEQ events of a trace (same cluster, queues, jobs).\n"
    "import  converts a CSV or JSONL event file (hdrf trace import --help).\n"
    "\n"
    "Exit codes: 0 done, 1 the work failed (unreadable file, ...), 2 bad usage.\n";

int Usage(const std::string& msg) {
  std::fprintf(stderr, "hdrf trace: %s\n", msg.c_str());
  return 2;
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::string AmountsText(const ResourceAmounts& a) {
  std::string out;
  for (const auto& [name, v] : a) {
    if (!out.empty()) out += ", ";
    out += name + "=" + FormatQuantity(name, v);
  }
  return out;
}

Json AmountsJson(const ResourceAmounts& a) {
  Json out = Json::object();
  for (const auto& [name, v] : a) out[name] = v;
  return out;
}

int Gen(int argc, char** argv) {
  Cli flags("hdrf trace: gen", kTraceUsage);
  for (const char* f : {"jobs", "depth", "fanout", "events", "seed", "out", "load", "users", "max-tasks",
                        "alloc-percent"})
    flags.Value(f);
  for (const char* f : {"saturate", "full-use", "json"}) flags.Bool(f);
  if (auto exit = flags.Parse(argc, argv, 3)) return *exit;
  if (!flags.Has("out")) return Usage("gen: --out FILE is required (see --help)");
  TraceGenOptions o;
  auto get_int = [&](const char* name, int64_t def, int64_t lo, int64_t hi, int64_t* out) -> Status {
    auto v = flags.GetInt(name, def);
    if (!v.ok()) return v.status();
    if (*v < lo || *v > hi)
      return Status::InvalidArgument("flag --" + std::string(name) + ": " + std::to_string(*v) +
                                     " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    *out = *v;
    return Status::Ok();
  };
  int64_t depth, fanout, users, seed_signed, alloc_percent;
  for (Status st : {get_int("jobs", o.jobs, 0, UINT32_MAX, &o.jobs),
                    get_int("depth", o.depth, 0, 16, &depth),
                    get_int("fanout", o.fanout, 1, 1000000, &fanout),
                    get_int("events", o.events, 0, int64_t{1} << 40, &o.events),
                    get_int("users", 0, 0, 1000000000, &users),
                    get_int("alloc-percent", 0, 0, 100, &alloc_percent),
                    get_int("max-tasks", o.max_tasks, 1, kMaxTraceEventN, &o.max_tasks)}) {
    if (!st.ok()) return Usage("gen: " + st.message());
  }
  // The seed is any 64-bit value; negative numbers wrap.
  {
    auto v = flags.GetInt("seed", 1);
    if (!v.ok()) return Usage("gen: " + v.status().message());
    seed_signed = *v;
  }
  auto load = flags.GetDouble("load", 0, 1e-3, 100);
  if (!load.ok()) return Usage("gen: " + load.status().message());
  o.depth = static_cast<int>(depth);
  o.fanout = static_cast<int>(fanout);
  o.users = static_cast<int>(users);
  o.alloc_percent = static_cast<int>(alloc_percent);
  o.seed = static_cast<uint64_t>(seed_signed);
  o.load = *load;
  o.saturate = flags.Has("saturate") || flags.Has("full-use");
  const std::string out = flags.Get("out");

  auto t0 = std::chrono::steady_clock::now();
  TraceGenState st;
  auto trace = GenerateTrace(o, &st);
  if (!trace.ok()) {
    // Option combinations the generator refuses are usage errors.
    std::fprintf(stderr, "hdrf %s\n", trace.status().message().c_str());
    return trace.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  auto t1 = std::chrono::steady_clock::now();
  Status w = WriteTrace(*trace, out);
  if (!w.ok()) {
    std::fprintf(stderr, "hdrf trace gen: %s\n", w.message().c_str());
    return 1;
  }
  auto t2 = std::chrono::steady_clock::now();
  double gen_s = std::chrono::duration<double>(t1 - t0).count();
  double write_s = std::chrono::duration<double>(t2 - t1).count();
  uint64_t bytes = FileSize(out);
  const double E = static_cast<double>(std::max<int64_t>(o.events, 1));
  if (flags.Has("json")) {
    Json j = {{"out", out}, {"bytes", bytes}, {"queues", trace->queues.size()}, {"leaves", st.leaves},
              {"jobs", trace->jobs.size()}, {"events", trace->events.size()}, {"setup_events", o.jobs},
              {"task_events", o.events}, {"cluster", AmountsJson(trace->cluster)},
              {"allocates", st.allocates}, {"releases", st.releases}, {"refits", st.refits},
              {"saturated_fraction", st.saturated / E}, {"flip_fraction", st.flips / E},
              {"gen_seconds", gen_s}, {"write_seconds", write_s}};
    std::printf("%s\n", JsonLine(j).c_str());
  } else {
    std::printf("wrote %s: %llu bytes in %.2f s (generate %.2f s, write %.2f s)\n", out.c_str(),
                static_cast<unsigned long long>(bytes), gen_s + write_s, gen_s, write_s);
    std::printf("  queues   %zu (%zu leaves, depth %d, fanout %d)\n", trace->queues.size(), st.leaves,
                o.depth, o.fanout);
    std::printf("  jobs     %zu (trace events 1..%lld submit them)\n", trace->jobs.size(),
                static_cast<long long>(o.jobs));
    std::printf("  events   %lld task events (%lld allocate, %lld release; %lld allocations did not fit)\n",
                static_cast<long long>(o.events), static_cast<long long>(st.allocates),
                static_cast<long long>(st.releases), static_cast<long long>(st.refits));
    std::printf("  cluster  %s\n", AmountsText(trace->cluster).c_str());
    std::printf("  load     some resource saturated after %.1f%% of events; saturation changed on %.1f%%\n",
                100.0 * st.saturated / E, 100.0 * st.flips / E);
  }
  return 0;
}

int Info(int argc, char** argv) {
  Cli flags("hdrf trace: info", kTraceUsage);
  flags.Bool("json");
  flags.Positionals();
  if (auto exit = flags.Parse(argc, argv, 3)) return *exit;
  if (flags.positional().size() != 1) return Usage("info: expected one trace FILE (see --help)");
  const std::string path = flags.positional()[0];
  auto t0 = std::chrono::steady_clock::now();
  auto trace = ReadTrace(path);
  if (!trace.ok()) {
    std::fprintf(stderr, "hdrf trace info: %s\n", trace.status().message().c_str());
    return 1;
  }
  double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int64_t counts[5] = {0, 0, 0, 0, 0};
  for (const TraceEvent& e : trace->events) ++counts[static_cast<int>(e.type)];
  size_t setup = TraceSetupEvents(*trace);
  uint64_t bytes = FileSize(path);
  if (flags.Has("json")) {
    Json j = {{"trace", path}, {"bytes", bytes}, {"version", kTraceVersion}, {"queues", trace->queues.size()},
              {"jobs", trace->jobs.size()}, {"events", trace->events.size()}, {"setup_events", setup},
              {"allocate", counts[0]}, {"release", counts[1]}, {"finish", counts[2]}, {"submit", counts[3]},
              {"remove", counts[4]}, {"cluster", AmountsJson(trace->cluster)}, {"read_seconds", read_s}};
    std::printf("%s\n", JsonLine(j).c_str());
  } else {
    std::printf("%s: hdrf trace version %u, %llu bytes, checksums ok (read in %.2f s)\n", path.c_str(),
                kTraceVersion, static_cast<unsigned long long>(bytes), read_s);
    std::printf("  cluster  %s\n", AmountsText(trace->cluster).c_str());
    std::printf("  queues   %zu\n", trace->queues.size());
    std::printf("  jobs     %zu\n", trace->jobs.size());
    std::printf("  events   %zu (setup: events 1..%zu submit jobs)\n", trace->events.size(), setup);
    std::printf("           allocate %lld, release %lld, finish %lld, submit %lld, remove %lld\n",
                static_cast<long long>(counts[0]), static_cast<long long>(counts[1]),
                static_cast<long long>(counts[2]), static_cast<long long>(counts[3]),
                static_cast<long long>(counts[4]));
  }
  return 0;
}

int Cut(int argc, char** argv) {
  Cli flags("hdrf trace: cut", kTraceUsage);
  for (const char* f : {"trace", "until", "out"}) flags.Value(f);
  if (auto exit = flags.Parse(argc, argv, 3)) return *exit;
  if (!flags.Has("trace")) return Usage("cut: --trace FILE is required");
  if (!flags.Has("out")) return Usage("cut: --out FILE is required");
  if (!flags.Has("until")) return Usage("cut: --until SEQ is required");
  auto until = flags.GetInt("until", 0);
  if (!until.ok()) return Usage("cut: " + until.status().message());
  if (*until < 0) return Usage("cut: flag --until: must be >= 0");
  auto trace = ReadTrace(flags.Get("trace"));
  if (!trace.ok()) {
    std::fprintf(stderr, "hdrf trace cut: %s\n", trace.status().message().c_str());
    return 1;
  }
  if (static_cast<uint64_t>(*until) < trace->events.size())
    trace->events.resize(static_cast<size_t>(*until));
  Status w = WriteTrace(*trace, flags.Get("out"));
  if (!w.ok()) {
    std::fprintf(stderr, "hdrf trace cut: %s\n", w.message().c_str());
    return 1;
  }
  std::printf("wrote %s: %zu events\n", flags.Get("out").c_str(), trace->events.size());
  return 0;
}

}  // namespace

int CmdTrace(int argc, char** argv) {
  if (argc < 3) {
    std::fputs(kTraceUsage, stderr);
    return 2;
  }
  std::string sub = argv[2];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kTraceUsage, stdout);
    return 0;
  }
  if (sub == "gen") return Gen(argc, argv);
  if (sub == "info") return Info(argc, argv);
  if (sub == "cut") return Cut(argc, argv);
  if (sub == "import") return CmdTraceImport(argc, argv);
  std::fprintf(stderr, "hdrf trace: unknown subcommand '%s' (expected gen, info, cut or import)\n\n%s", sub.c_str(),
               kTraceUsage);
  return 2;
}

}  // namespace hdrf::tools
