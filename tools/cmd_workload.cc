// hdrf workload gen | import: docs/spec.md §13 workloads for hdrf simulate
// (api/hdrf/workload_gen.h, api/hdrf/workload_import.h; docs/tools.md).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "hdrf/config.h"
#include "hdrf/input_file.h"
#include "hdrf/workload_gen.h"
#include "hdrf/workload_import.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace hdrf::tools {
namespace {

// Writes to FILE atomically (FILE.tmp, renamed by Commit), or to stdout
// for "-".
class Output {
 public:
  explicit Output(std::string path) : path_(std::move(path)) {}
  ~Output() {
    if (f_ && f_ != stdout) {
      std::fclose(f_);
      std::remove((path_ + ".tmp").c_str());
    }
  }
  Status Open() {
    f_ = path_ == "-" ? stdout : std::fopen((path_ + ".tmp").c_str(), "wb");
    return f_ ? Status::Ok() : Status::IoError("cannot write " + path_ + ".tmp");
  }
  Status Write(std::string_view chunk) {
    if (std::fwrite(chunk.data(), 1, chunk.size(), f_) != chunk.size())
      return Status::IoError("write to " + path_ + " failed");
    return Status::Ok();
  }
  Status Commit() {
    if (f_ == stdout) return std::fflush(stdout) == 0 ? Status::Ok() : Status::IoError("write to stdout failed");
    const bool ok = std::fclose(f_) == 0;
    f_ = nullptr;
    if (!ok || std::rename((path_ + ".tmp").c_str(), path_.c_str()) != 0)
      return Status::IoError("cannot write " + path_);
    return Status::Ok();
  }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

// `text` to FILE (atomically) or stdout ("-").
Status WriteWhole(const std::string& path, const std::string& text) {
  Output out(path);
  Status s = out.Open();
  if (s.ok()) s = out.Write(text);
  if (s.ok()) s = out.Commit();
  return s;
}

// A ChunkSink that appends to *text.
ChunkSink AppendTo(std::string* text) {
  return [text](std::string_view c) {
    *text += c;
    return Status::Ok();
  };
}

int Fail(const char* cmd, const Status& s) {
  std::fprintf(stderr, "hdrf workload %s: %s\n", cmd, s.message().c_str());
  return 1;
}

// --tasks/--duration/--burst-size values: a Distribution.
CLI::Validator DistCheck() {
  return CLI::Validator(
      [](std::string& v) {
        auto d = Distribution::Parse(v);
        return d.ok() ? std::string() : d.status().message();
      },
      "DIST");
}

int RunGen(WorkloadGenOptions& o, const std::string& arrivals, const std::vector<std::string>& shape_flags,
           const std::string& tasks, const std::string& duration, const std::string& burst_size,
           const std::string& out_path, const std::string& config_out, const std::string& cluster_flag,
           double load) {
  o.arrivals = arrivals == "bursts" ? WorkloadGenOptions::Arrivals::kBursts : WorkloadGenOptions::Arrivals::kPoisson;
  o.tasks = *Distribution::Parse(tasks);
  o.duration = *Distribution::Parse(duration);
  o.burst_size = *Distribution::Parse(burst_size);
  for (const auto& s : shape_flags) {
    auto shape = ParseWorkloadShape(s);
    if (!shape.ok()) return Fail("gen", shape.status());
    o.shapes.push_back(*shape);
  }
  ResourceAmounts cluster;
  if (!cluster_flag.empty()) {
    auto c = ParseWorkloadShape(cluster_flag);
    if (!c.ok()) return Fail("gen", Status::InvalidArgument("--cluster: " + c.status().message()));
    cluster = c->task;
  }
  Output out(out_path);
  if (Status s = out.Open(); !s.ok()) return Fail("gen", s);
  auto sum = GenerateWorkload(o, [&](std::string_view chunk) { return out.Write(chunk); }, load);
  if (!sum.ok()) return Fail("gen", sum.status());
  if (Status s = out.Commit(); !s.ok()) return Fail("gen", s);
  if (cluster.empty()) cluster = sum->cluster;
  if (!config_out.empty()) {
    Output cfg(config_out);
    Status s = cfg.Open();
    if (s.ok()) s = cfg.Write(WorkloadConfigYaml(o, cluster));
    if (s.ok()) s = cfg.Commit();
    if (!s.ok()) return Fail("gen", s);
  }
  std::fprintf(stderr, "hdrf workload gen: %llu jobs, %llu tasks, last arrival %.3f s, mean task %.1f s; offered",
               static_cast<unsigned long long>(sum->jobs), static_cast<unsigned long long>(sum->tasks),
               static_cast<double>(sum->last_arrival_ms) / 1000, sum->mean_duration);
  for (const auto& [r, v] : sum->offered) std::fprintf(stderr, " %s=%s", r.c_str(), FormatQuantity(r, v).c_str());
  std::fprintf(stderr, "; cluster");
  for (const auto& [r, v] : cluster) std::fprintf(stderr, " %s=%s", r.c_str(), FormatQuantity(r, v).c_str());
  std::fprintf(stderr, "\n");
  return 0;
}

int RunImport(const std::string& from, const std::string& file, const std::string& out_path,
              const std::string& config, double open_duration) {
  if (from != "volcano") return Fail("import", Status::InvalidArgument("--from: unknown format '" + from + "' (known: volcano)"));
  VolcanoImportOptions o;
  o.open_duration = open_duration;
  if (!config.empty()) {
    auto cfg = LoadQueueConfigFile(config);
    if (!cfg.ok()) return Fail("import", cfg.status());
    for (const auto& q : cfg->queues) o.queue_paths.push_back(q.path);
  }
  auto text = ReadInputFile(file);
  if (!text.ok()) return Fail("import", text.status());
  std::string csv;
  auto sum = ImportVolcanoEvents(*text, file, o, AppendTo(&csv));
  if (!sum.ok()) return Fail("import", sum.status());
  if (Status s = WriteWhole(out_path, csv); !s.ok()) return Fail("import", s);
  for (const auto& w : sum->warnings) std::fprintf(stderr, "hdrf workload import: warning: %s\n", w.c_str());
  std::fprintf(stderr, "hdrf workload import: %llu events, %llu jobs (%llu tasks), %llu never deleted\n",
               static_cast<unsigned long long>(sum->events), static_cast<unsigned long long>(sum->jobs),
               static_cast<unsigned long long>(sum->tasks), static_cast<unsigned long long>(sum->open_ended));
  return 0;
}

// --from-db: a store's history (ImportStoreHistory).
int RunImportDb(const std::string& dir, const std::string& since, const std::string& until,
                const std::string& out_path) {
  StoreImportOptions o;
  for (auto [flag, text, slot] : {std::tuple{"--since", &since, &o.since_us}, std::tuple{"--until", &until, &o.until_us}}) {
    if (text->empty()) continue;
    auto t = ParseEventTimeMicros(*text);
    if (!t.ok()) return Fail("import", Status::InvalidArgument(std::string(flag) + ": " + t.status().message()));
    *slot = *t;
  }
  std::string csv;
  auto sum = ImportStoreHistory(dir, o, AppendTo(&csv));
  if (!sum.ok()) return Fail("import", sum.status());
  if (Status s = WriteWhole(out_path, csv); !s.ok()) return Fail("import", s);
  if (sum->events == 0) {
    std::fprintf(stderr,
                 "hdrf workload import: store %s: no event in the window (log events %llu..%llu; %llu jobs "
                 "submitted before the log's first record)\n",
                 dir.c_str(), static_cast<unsigned long long>(sum->first_seq),
                 static_cast<unsigned long long>(sum->last_seq), static_cast<unsigned long long>(sum->before_log));
    return 0;
  }
  std::fprintf(stderr,
               "hdrf workload import: store %s, %llu events from %s (arrival 0) to %s: %llu jobs (%llu tasks), "
               "%llu still running at the end (flagged); left out: %llu never started, %llu submitted before "
               "the window, %llu before the log's first record\n",
               dir.c_str(), static_cast<unsigned long long>(sum->events), FormatEventTime(sum->origin_us).c_str(),
               FormatEventTime(sum->end_us).c_str(), static_cast<unsigned long long>(sum->jobs),
               static_cast<unsigned long long>(sum->tasks), static_cast<unsigned long long>(sum->running),
               static_cast<unsigned long long>(sum->never_started), static_cast<unsigned long long>(sum->before),
               static_cast<unsigned long long>(sum->before_log));
  return 0;
}

// --shape/--cluster values: a resource list.
CLI::Validator ShapeCheck() {
  return CLI::Validator(
      [](std::string& v) {
        auto s = ParseWorkloadShape(v);
        return s.ok() ? std::string() : s.status().message();
      },
      "LIST");
}

}  // namespace

int CmdWorkload(int argc, char** argv) {
  CLI::App app("docs/spec.md §13 workloads for hdrf simulate (docs/tools.md)", "hdrf workload");
  app.require_subcommand(1);
  WorkloadGenOptions o;
  std::string arrivals = "poisson", tasks = o.tasks.ToString(), duration = o.duration.ToString(),
              burst_size = o.burst_size.ToString(), out = "-", config_out, cluster;
  std::vector<std::string> shapes;
  double load = 0.9;
  CLI::App* gen = app.add_subcommand("gen", "write a synthetic workload CSV (streamed)");
  gen->add_option("--jobs", o.jobs, "number of jobs")->capture_default_str()->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  gen->add_option("--seed", o.seed, "random seed: same flags and seed, same file")->capture_default_str();
  gen->add_option("--arrivals", arrivals, "poisson | bursts")->capture_default_str()->check(CLI::IsMember({"poisson", "bursts"}));
  gen->add_option("--rate", o.rate, "poisson: jobs per second")->capture_default_str()->check(FiniteNumber(1e-6, 1e9));
  gen->add_option("--burst-gap", o.burst_gap, "bursts: mean seconds between bursts")->capture_default_str()->check(FiniteNumber(1e-3, 1e9));
  gen->add_option("--burst-size", burst_size, "bursts: jobs per burst (a distribution)")->capture_default_str()->check(DistCheck());
  gen->add_option("--burst-spread", o.burst_spread, "bursts: mean seconds from a burst's start to a job's arrival")->capture_default_str()->check(FiniteNumber(0, 1e9));
  gen->add_option("--tasks", tasks, "tasks per job: fixed:V|exp:MEAN|uniform:LO,HI|lognormal:MU,SIGMA|pareto:ALPHA,XMIN")->capture_default_str()->check(DistCheck());
  gen->add_option("--max-tasks", o.max_tasks, "cap on tasks per job")->capture_default_str()->check(CLI::PositiveNumber);
  gen->add_option("--duration", duration, "task run time in seconds (a distribution)")->capture_default_str()->check(DistCheck());
  gen->add_option("--max-duration", o.max_duration, "cap on a task's run time, seconds")->capture_default_str()->check(FiniteNumber(1e-3, 1e9));
  gen->add_option("--shape", shapes, "a task shape 'cpu=1,memory=4Gi[@WEIGHT]' (repeat for a mix; default: a CPU/GPU mix)")->check(ShapeCheck());
  gen->add_option("--queues", o.queues, "number of leaf queues")->capture_default_str()->check(CLI::Range(1, 1000000));
  gen->add_option("--fanout", o.fanout, "children per parent queue")->capture_default_str()->check(CLI::Range(2, 1000000));
  gen->add_option("--queue-skew", o.queue_skew, "Zipf exponent of the jobs over the leaves (0 = uniform)")->capture_default_str()->check(FiniteNumber(0, 100));
  gen->add_option("--max-weight", o.max_weight, "queue weights drawn in [1, W] (in --config-out)")->capture_default_str()->check(CLI::Range(1, 1000000));
  gen->add_option("--users", o.users, "users u0..u<N-1>")->capture_default_str()->check(CLI::Range(1, 100000000));
  gen->add_option("--out", out, "the CSV file ('-' = stdout)")->capture_default_str();
  gen->add_option("--config-out", config_out, "also write the queue tree and a cluster (docs/spec.md §10 form)");
  gen->add_option("--cluster", cluster, "the cluster for --config-out, 'cpu=100,memory=1Ti' (default: sized by --load)")->check(ShapeCheck());
  gen->add_option("--load", load, "default cluster: offered load / cluster = this")->capture_default_str()->check(FiniteNumber(1e-3, 100));

  std::string from, file, import_out, import_config, from_db, since, until;
  double open_duration = 0;
  CLI::App* imp = app.add_subcommand(
      "import", "convert another simulator's input, or a store's history, to a workload CSV (docs/simulate_import.md)");
  auto* from_opt = imp->add_option("--from", from, "the input format: volcano")->check(CLI::IsMember({"volcano"}));
  imp->add_option("FILE", file, "the input file (with --from)");
  auto* db_opt = imp->add_option("--from-db", from_db, "a store DIR: its logged history (events with their times)");
  from_opt->excludes(db_opt);
  imp->add_option("--since", since, "with --from-db: events at or after T (RFC 3339, or seconds since the Unix epoch); arrival 0 = T")->needs(db_opt);
  imp->add_option("--until", until, "with --from-db: events at or before T")->needs(db_opt);
  imp->add_option("--out", import_out, "the CSV file ('-' = stdout)")->required();
  imp->add_option("--config", import_config, "map Volcano queue names to the paths of this queue config");
  imp->add_option("--open-duration", open_duration, "seconds a never-deleted group runs (default: until the file's last event)")->check(FiniteNumber(0, 1e9));

  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help: the help of the command asked
    std::fprintf(stderr, "hdrf workload: %s\n", e.what());
    return 2;
  }
  if (gen->parsed()) return RunGen(o, arrivals, shapes, tasks, duration, burst_size, out, config_out, cluster, load);
  if (!from_db.empty()) {
    if (!file.empty()) {
      std::fprintf(stderr, "hdrf workload import: --from-db reads a store, not FILE (%s)\n", file.c_str());
      return 2;
    }
    return RunImportDb(from_db, since, until, import_out);
  }
  if (from.empty() || file.empty()) {
    std::fprintf(stderr, "hdrf workload import: give --from volcano FILE or --from-db DIR\n");
    return 2;
  }
  return RunImport(from, file, import_out, import_config, open_duration);
}

}  // namespace hdrf::tools
