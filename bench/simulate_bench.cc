// Workload simulation benchmark (issue 14 item 5; bench/README.md has the
// figures and commands).
//
//   simulate_bench run [--jobs N] [--load L] [--leaves K] [--seed S]
//       Generates a synthetic workload in memory (Poisson arrivals, 1-7
//       tasks per job (4 on average), exponential durations, K leaves under
//       a depth-2 tree, a cluster sized for offered load L of its cpu),
//       simulates it and prints one JSON line: seconds (Simulate only, wall
//       and cpu_seconds: this process's CPU time during it),
//       jobs and tasks per second, instants, fills skipped.
//   simulate_bench gen [--jobs N] [--load L] [--leaves K] [--seed S] --out PREFIX
//       Writes the same workload as PREFIX.csv and its queues as PREFIX.yaml,
//       for timing `hdrf simulate` end to end (parsing included).
//   simulate_bench memory [--jobs N]
//       N jobs arrive at 0 behind a job that holds the whole cluster: prints
//       the allocator's bytes per waiting job while they all wait (jemalloc
//       stats.allocated, the workload itself excluded).
//   simulate_bench backlog [--waiting K] [--instants I]
//       K jobs that cannot fit wait in one leaf (cpu not saturated, so they
//       are not blocked) while I instants of small jobs come and go in
//       another: prints the cost per instant, to compare with K = 0.
//   simulate_bench nodes [--waiting K] [--instants I]
//       The same with host placement (--nodes): 10 nodes of 10 cpu; K jobs
//       of 12 cpu fit the cluster but no node, so every fill refuses them
//       (fragmentation waits) while small jobs come and go: the cost per
//       instant of a fill that passes over K refused jobs.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "hdrf/simulate.h"
#include "bench/bench_world.h"

namespace {

using hdrf::QueueSpec;
using hdrf::ResourceAmounts;
using hdrf::Workload;
using hdrf::WorkloadJob;

struct Args {
  std::string mode;
  int64_t jobs = 1000000, leaves = 100, waiting = 10000, instants = 20000;
  double load = 0.9;
  uint64_t seed = 1;
  std::string out;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  if (argc < 2) {
    std::fprintf(stderr, "usage: simulate_bench run|gen|memory|backlog [flags] (see the source)\n");
    std::exit(2);
  }
  a.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string f = argv[i], v = argv[i + 1];
    if (f == "--jobs") a.jobs = std::atoll(v.c_str());
    else if (f == "--leaves") a.leaves = std::atoll(v.c_str());
    else if (f == "--waiting") a.waiting = std::atoll(v.c_str());
    else if (f == "--instants") a.instants = std::atoll(v.c_str());
    else if (f == "--load") a.load = std::atof(v.c_str());
    else if (f == "--seed") a.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (f == "--out") a.out = v;
    else {
      std::fprintf(stderr, "simulate_bench: unknown flag %s\n", f.c_str());
      std::exit(2);
    }
  }
  return a;
}

struct Synthetic {
  ResourceAmounts cluster;
  std::vector<QueueSpec> queues;
  Workload workload;
};

// Leaves root/gI/qJ, 10 per group; mean job: 4 tasks x (2 cpu, 4 GiB), 300 s.
Synthetic Generate(const Args& a) {
  Synthetic s;
  std::mt19937_64 rng(a.seed);
  std::vector<std::string> leaves;
  for (int64_t i = 0; i < a.leaves; ++i) {
    QueueSpec q;
    q.path = "root/g" + std::to_string(i / 10) + "/q" + std::to_string(i % 10);
    q.weight = 1 + static_cast<double>(i % 3);
    s.queues.push_back(q);
    leaves.push_back(q.path);
  }
  const double mean_gap_s = 3.0;
  const double mean_cpu_s = 4 * 2.0 * 300;  // tasks x cpu x duration
  const int64_t cpus = static_cast<int64_t>(std::ceil(mean_cpu_s / mean_gap_s / a.load));
  s.cluster = {{"cpu", cpus * 1000}, {"memory", cpus * 2 * (int64_t{1} << 30)}, {"pods", cpus * 1000}};
  std::exponential_distribution<double> gap(1 / mean_gap_s), dur(1 / 300.0);
  std::uniform_int_distribution<int64_t> tasks(1, 7), leaf(0, a.leaves - 1), user(0, 9);
  std::uniform_int_distribution<int> shape(0, 2);
  double t = 0;
  s.workload.source = "synthetic";
  s.workload.jobs.reserve(a.jobs);
  for (int64_t i = 0; i < a.jobs; ++i) {
    t += gap(rng);
    WorkloadJob j;
    j.spec.name = "j" + std::to_string(i);
    j.spec.queue = leaves[leaf(rng)];
    j.spec.user = "u" + std::to_string(user(rng));
    j.spec.tasks = tasks(rng);
    const int k = shape(rng);  // 1, 2 or 3 cpu with 2 GiB per cpu: mean 2 cpu
    j.spec.task = {{"cpu", (k + 1) * 1000}, {"memory", (k + 1) * 2 * (int64_t{1} << 30)}, {"pods", 1000}};
    j.arrival_ms = static_cast<int64_t>(t * 1000);
    j.duration_ms = 1 + static_cast<int64_t>(dur(rng) * 1000);
    j.spec.line = static_cast<int>(i + 2);
    s.workload.jobs.push_back(std::move(j));
  }
  return s;
}

// This process's CPU time (user + sys), seconds: the one-core figure on a
// loaded machine.
double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int Run(const Args& a) {
  Synthetic s = Generate(a);
  int64_t tasks = 0;
  for (const WorkloadJob& j : s.workload.jobs) tasks += j.spec.tasks;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  auto r = hdrf::Simulate(s.cluster, s.queues, s.workload);
  const double secs = Since(t0), cpu = CpuSeconds() - cpu0;
  if (!r.ok()) {
    std::fprintf(stderr, "simulate_bench: %s\n", r.status().message().c_str());
    return 1;
  }
  std::printf(
      "{\"jobs\": %lld, \"tasks\": %lld, \"leaves\": %lld, \"load\": %.2f, \"seconds\": %.3f, \"cpu_seconds\": %.3f, "
      "\"jobs_per_sec\": %.0f, \"tasks_per_sec\": %.0f, \"instants\": %lld, \"fills_skipped\": %lld, "
      "\"cpu_utilization\": %.3f, \"root_wait_p99_s\": %.3f, \"unscheduled\": %lld, \"rss_mib\": %.0f}\n",
      (long long)a.jobs, (long long)tasks, (long long)a.leaves, a.load, secs, cpu, a.jobs / secs, tasks / secs,
      (long long)r->instants, (long long)r->fills_skipped, r->utilization[0], r->queues[0].wait.p99_ms / 1000.0,
      (long long)r->unscheduled, hdrf::bench::RssBytes() / 1048576.0);
  return 0;
}

int Gen(const Args& a) {
  if (a.out.empty()) {
    std::fprintf(stderr, "simulate_bench gen: --out PREFIX is required\n");
    return 2;
  }
  Synthetic s = Generate(a);
  std::ofstream y(a.out + ".yaml");
  y << "cluster: {cpu: \"" << s.cluster["cpu"] << "m\", memory: \"" << s.cluster["memory"] << "\", pods: \""
    << s.cluster["pods"] << "m\"}\nqueues:\n";
  for (const QueueSpec& q : s.queues) y << "  - {path: " << q.path << ", weight: " << q.weight << "}\n";
  std::ofstream c(a.out + ".csv");
  c << "name,queue,arrival,duration,user,tasks,cpu,memory,pods\n";
  for (const WorkloadJob& j : s.workload.jobs)
    c << j.spec.name << ',' << j.spec.queue << ',' << hdrf::FormatMs(j.arrival_ms) << ','
      << hdrf::FormatMs(j.duration_ms) << ',' << j.spec.user << ',' << j.spec.tasks << ','
      << j.spec.task.at("cpu") << "m," << j.spec.task.at("memory") << ",1\n";
  return y && c ? 0 : 1;
}

int Memory(const Args& a) {
  Workload w;
  w.source = "memory";
  const ResourceAmounts cluster = {{"cpu", 1000 * 1000}, {"memory", int64_t{1} << 40}};
  std::vector<QueueSpec> queues;
  for (int i = 0; i < 100; ++i) queues.push_back({.path = "root/g" + std::to_string(i / 10) + "/q" + std::to_string(i)});
  WorkloadJob hog;
  hog.spec.name = "hog";
  hog.spec.queue = queues[0].path;
  hog.spec.task = {{"cpu", 1000 * 1000}};
  hog.duration_ms = 1000;
  w.jobs.push_back(hog);
  for (int64_t i = 0; i < a.jobs; ++i) {
    WorkloadJob j;
    j.spec.name = "j" + std::to_string(i);
    j.spec.queue = queues[i % 100].path;
    j.spec.user = "u" + std::to_string(i % 10);
    j.spec.tasks = 4;
    j.spec.task = {{"cpu", 1000}, {"memory", int64_t{1} << 30}};
    j.duration_ms = 1000;
    w.jobs.push_back(std::move(j));
  }
  hdrf::SimulateOptions o;
  o.progress_every_jobs = static_cast<size_t>(a.jobs + 1);  // once, after the instant where all arrived
  const int64_t before = hdrf::bench::AllocatedBytes();
  int64_t during = -1;
  o.progress = [&](const hdrf::SimulateProgress&) { during = hdrf::bench::AllocatedBytes(); };
  auto r = hdrf::Simulate(cluster, queues, w, o);
  if (!r.ok() || before < 0 || during < 0) {
    std::fprintf(stderr, "simulate_bench memory: %s\n", r.ok() ? "needs jemalloc" : r.status().message().c_str());
    return 1;
  }
  std::printf("{\"waiting_jobs\": %lld, \"bytes_per_waiting_job\": %.1f}\n", (long long)a.jobs,
              static_cast<double>(during - before) / static_cast<double>(a.jobs));
  return 0;
}

// One small job (1 cpu, 0.5 s) arriving every second, `instants` of them in
// root/small: each arrival is an instant with a fill (nodes and backlog modes).
void AddSmallArrivals(int64_t instants, Workload* w) {
  for (int64_t i = 0; i < instants; ++i) {
    WorkloadJob j;
    j.spec.name = "small" + std::to_string(i);
    j.spec.queue = "root/small";
    j.spec.task = {{"cpu", 1000}};
    j.arrival_ms = 1000 * (i + 1);
    j.duration_ms = 500;
    w->jobs.push_back(std::move(j));
  }
}

int Nodes(const Args& a) {
  char path[] = "/tmp/simulate_bench_nodes_XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return 1;
  ::close(fd);
  {
    std::ofstream f(path);
    f << "name,cpu\n";
    for (int n = 0; n < 10; ++n) f << "n" << n << ",10\n";
  }
  Workload w;
  w.source = "nodes";
  const ResourceAmounts cluster = {{"cpu", 100 * 1000}};
  std::vector<QueueSpec> queues = {{.path = "root/big"}, {.path = "root/small"}};
  for (int64_t i = 0; i < a.waiting; ++i) {
    WorkloadJob j;
    j.spec.name = "big" + std::to_string(i);
    j.spec.queue = "root/big";
    j.spec.task = {{"cpu", 12 * 1000}};
    j.duration_ms = 1000;
    w.jobs.push_back(std::move(j));
  }
  AddSmallArrivals(a.instants, &w);
  hdrf::SimulateOptions o;
  o.nodes_file = path;
  const double cpu0 = CpuSeconds();
  auto r = hdrf::Simulate(cluster, queues, w, o);
  const double cpu = CpuSeconds() - cpu0;
  std::remove(path);
  if (!r.ok()) {
    std::fprintf(stderr, "simulate_bench nodes: %s\n", r.status().message().c_str());
    return 1;
  }
  std::printf("{\"waiting\": %lld, \"instants\": %lld, \"cpu_seconds\": %.3f, \"cpu_us_per_instant\": %.2f, "
              "\"fragmentation_waits\": %lld}\n",
              (long long)a.waiting, (long long)r->instants, cpu, 1e6 * cpu / static_cast<double>(r->instants),
              (long long)r->queues[0].fragmentation_waits);
  return 0;
}

int Backlog(const Args& a) {
  Workload w;
  w.source = "backlog";
  const ResourceAmounts cluster = {{"cpu", 100 * 1000}};
  std::vector<QueueSpec> queues = {{.path = "root/big"}, {.path = "root/small"}};
  WorkloadJob holder;  // keeps 50 cpu busy so that no big job fits, without saturating cpu
  holder.spec.name = "holder";
  holder.spec.queue = "root/small";
  holder.spec.task = {{"cpu", 50 * 1000}};
  holder.duration_ms = 1000 * (a.instants + 10);
  w.jobs.push_back(holder);
  for (int64_t i = 0; i < a.waiting; ++i) {
    WorkloadJob j;
    j.spec.name = "big" + std::to_string(i);
    j.spec.queue = "root/big";
    j.spec.task = {{"cpu", 60 * 1000}};
    j.arrival_ms = 1;  // after the holder has started: none of them ever fits
    j.duration_ms = 1000;
    w.jobs.push_back(std::move(j));
  }
  AddSmallArrivals(a.instants, &w);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = hdrf::Simulate(cluster, queues, w);
  const double secs = Since(t0);
  if (!r.ok()) return 1;
  std::printf("{\"waiting\": %lld, \"instants\": %lld, \"seconds\": %.3f, \"us_per_instant\": %.2f, "
              "\"fills_skipped\": %lld}\n",
              (long long)a.waiting, (long long)r->instants, secs, 1e6 * secs / static_cast<double>(r->instants),
              (long long)r->fills_skipped);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = ParseArgs(argc, argv);
  if (a.mode == "run") return Run(a);
  if (a.mode == "gen") return Gen(a);
  if (a.mode == "memory") return Memory(a);
  if (a.mode == "backlog") return Backlog(a);
  if (a.mode == "nodes") return Nodes(a);
  std::fprintf(stderr, "simulate_bench: unknown mode %s\n", a.mode.c_str());
  return 2;
}
