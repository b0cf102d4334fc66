// Workload simulation (docs/spec.md §13): jobs that arrive over time run through the
// engine on a virtual clock, and the outcome is reported per job and queue.
//
//   auto cfg = hdrf::LoadQueueConfigFile("queues.yaml");          // hdrf/config.h
//   auto names = ...;                                            // cluster resources, sorted
//   auto w = hdrf::LoadWorkloadFile("jobs.csv", names);           // StatusOr<Workload>
//   auto r = hdrf::Simulate(cfg->cluster, cfg->queues, *w);       // StatusOr<SimulateResult>
//   hdrf::WriteJobsCsv(*w, *r, "jobs-out.csv");
//   std::puts(hdrf::SimulateReportJson(*w, *r).c_str());
//
// Time is kept in whole milliseconds. At each instant t at which something
// happens: (1) every task ending at t completes (a job whose last task
// completes is removed), (2) the jobs arriving at t are submitted in file
// order (a refused one is reported and never starts), (3) the engine fills
// (docs/spec.md §5), each step starting one task that ends at t + duration. The
// simulation stops when no arrival and no running task is left.
// docs/simulate.md describes the file format, the rules and every report
// field.
//
// Nothing here throws. Simulate() is a pure function of its arguments (no
// clock but wall_seconds, no randomness); it may be called from several
// threads at once, each with its own arguments.
#ifndef HDRF_API_HDRF_SIMULATE_H_
#define HDRF_API_HDRF_SIMULATE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf {

// ---- workloads ----------------------------------------------------------------

enum class WorkloadFormat { kCsv, kJsonl };

// By the file name: ".csv" -> CSV; ".jsonl", ".ndjson" -> JSONL; anything
// else is an InvalidArgument naming the path.
StatusOr<WorkloadFormat> WorkloadFormatOf(const std::string& path);

struct WorkloadJob {
  // name, queue ("" = root, admission of docs/spec.md §5), user ("default" when the
  // file gives none), tasks (>= 1), task (one task's amounts; zero amounts
  // are left out), weight, line (the source line).
  JobSpec spec;
  int64_t arrival_ms = 0;   // >= 0
  int64_t duration_ms = 1;  // > 0: each task runs this long once started
};

struct Workload {
  std::string source;              // the file name errors and reports use
  std::vector<WorkloadJob> jobs;   // file order
};

// Parses a workload (docs/spec.md §13): CSV with a header line, or JSONL with the
// same keys. Columns/keys: name, queue, arrival, duration (seconds, at most
// 3 decimals), optional user, tasks, weight, and any resource of
// `resource_names` (the cluster's), whose cell is the quantity (docs/spec.md §2) of
// one task (empty = 0). Blank lines and lines starting with '#' are
// skipped. Any error is an InvalidArgument "SOURCE:LINE: FIELD: what is
// wrong" for the first bad line; then no workload is returned.
StatusOr<Workload> ParseWorkload(std::string_view text, WorkloadFormat format,
                                 const std::string& source_name,
                                 const std::vector<std::string>& resource_names);

// Reads `path` and parses it in the format its name says.
StatusOr<Workload> LoadWorkloadFile(const std::string& path,
                                    const std::vector<std::string>& resource_names);

// Seconds with at most 3 decimals ("12", "0.25", "1.5e2") to exact
// milliseconds. Negative, malformed, finer than 1 ms or above 10^15 ms is
// an InvalidArgument saying which.
StatusOr<int64_t> ParseSecondsToMs(std::string_view text);

// ---- simulation ---------------------------------------------------------------

struct SimulateProgress {
  int64_t now_ms = 0;        // virtual time reached
  int64_t last_arrival_ms = 0;
  size_t jobs_arrived = 0;
  size_t jobs_total = 0;
};

struct SimulateOptions {
  // Job size classes for the wait-by-size report: a job's size is its
  // dominant demand max_r(tasks * task[r] / T[r]); class i holds the sizes
  // below size_class_bounds[i], the last class the rest. Default: < 1%,
  // < 10%, the rest ("small", "medium", "large").
  std::vector<double> size_class_bounds = {0.01, 0.10};
  std::vector<std::string> size_class_names = {"small", "medium", "large"};
  // Why jobs waited (docs/simulate.md): after each instant's fill, up to
  // this many waiting jobs per leaf (the earliest arrived) are explained by
  // the engine (Engine::Explain) and their reasons weighted by the time to
  // the next instant. Costly on large runs. Default: 0 (off).
  int explain_per_leaf = 0;
  // Record the top-level queues' shares over time (for plots): at most
  // about this many points. Default: 0 (off).
  int timeline_points = 0;
  // Called about every progress_every_jobs arrivals. Default: none.
  std::function<void(const SimulateProgress&)> progress;
  size_t progress_every_jobs = 100000;
  // Host placement (docs/simulate_nodes.md): a node CSV (`name` plus
  // resource columns). With it a task must also fit on one node, placed
  // best-fit; a job whose next task fits the cluster but no node is skipped
  // for the rest of that instant's fill and counted as a fragmentation
  // wait of its queue. Default: "" (the cluster is one pool).
  std::string nodes_file;
  // The reclaim phase (docs/spec.md §13 additions, §15): after each
  // instant's fill, waiting jobs are tried in step order; each gets a plan
  // (mode reclaim, or both with `preempt`) that, when it succeeds and is not
  // empty, is applied at once (its victims' latest started tasks stop and
  // wait again) and followed by a fill. Default: false (nothing evicted).
  bool reclaim = false;
  bool preempt = false;
  // With reclaim: before each try, the phase ends once this many tasks were
  // evicted at the instant (a plan that crosses it is applied whole; 0
  // applies none). Default: unset (no limit).
  std::optional<int64_t> reclaim_budget;
  // Write the simulation's events into a new store in this directory
  // (`hdrf simulate --db`, docs/simulate_import.md): each logged event
  // carries its virtual time as its event time (docs/storage.md "Event
  // times": virtual ms x 1000 microseconds, the virtual clock's 0 being the
  // Unix epoch). Durability async, synced at the end; no checkpoint but the
  // one at the end, so the whole log is kept. The directory must not hold a
  // store. Default: "" (memory only).
  std::string db_path;
};

// Wait (first_start - arrival) statistics over a set of started jobs, in
// milliseconds; percentiles by nearest rank. All zero when count == 0.
struct WaitStats {
  int64_t count = 0;
  double mean_ms = 0;
  int64_t p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
};

struct JobOutcome {
  std::string queue;           // the leaf the job lived in; "" when refused
  int64_t first_start_ms = -1; // -1: never happened
  int64_t last_start_ms = -1;
  int64_t end_ms = -1;
  std::string refused;         // the engine's error when it refused the job
  int64_t evicted = 0;         // with reclaim: its tasks evicted over the run
};

struct QueueReport {
  std::string path;
  int depth = 0;
  bool is_leaf = true;
  double weight = 1;
  int64_t jobs = 0;             // accepted jobs that lived in the subtree
  int64_t started = 0;          // ... of which started
  double usage_share_avg = 0;   // time average of max_r usage[r] / T[r]
  // Time average of the queue's weighted fair share among the queues that
  // wanted more (docs/simulate.md): the root's is 1 while active; a queue's is its
  // parent's × weight / Σ weights of its active siblings (itself included)
  // while it is active (its subtree holds a job with a task waiting or
  // running), else 0.
  double fair_share_avg = 0;
  WaitStats wait;               // over the subtree's started jobs
  std::vector<WaitStats> wait_by_class;  // per size class
  // Time (ms) during which the subtree held a waiting job (a task not yet
  // started) and ran nothing.
  int64_t starved_ms = 0;
  // Parents: time-weighted Jain's index of the weight-normalised plain
  // dominant shares of the children that have waiting work, over the time
  // when at least two of them do (contended_ms; jain_avg = 0 when none).
  double jain_avg = 0;
  int64_t contended_ms = 0;
  // With nodes_file: the times a job of the subtree was skipped in a fill
  // because its task fit the cluster but no node.
  int64_t fragmentation_waits = 0;
  int64_t evicted_tasks = 0;    // with reclaim: tasks of the subtree's jobs evicted
  // Queues with a guarantee (docs/simulate.md "Time to the guarantee"): the
  // queue is owed its guarantee while its subtree has a task waiting and
  // uses less than its guarantee of some resource. Episodes: the spans of
  // time it was owed (those that lasted longer than an instant), their total
  // and the longest.
  bool guaranteed = false;
  int64_t owed_episodes = 0;
  int64_t owed_ms = 0;
  int64_t owed_max_ms = 0;
  // Leaves, with explain_per_leaf > 0: reason -> waiting job-milliseconds.
  std::vector<std::pair<std::string, double>> why;
};

// Shares of the top-level queues over time (timeline_points > 0).
struct Timeline {
  std::vector<std::string> queues;         // top-level queue paths
  std::vector<int64_t> t_ms;               // sample instants
  std::vector<std::vector<double>> share;  // [sample][queue] plain dominant share
};

struct SimulateResult {
  std::vector<std::string> resources;  // sorted
  std::vector<int64_t> total;          // per resource
  std::vector<JobOutcome> jobs;        // workload (file) order
  int64_t started = 0;                 // jobs that started
  int64_t unscheduled = 0;             // jobs that never started (refused included)
  int64_t refused = 0;
  int64_t makespan_ms = 0;             // the last instant at which something happened
  std::vector<double> utilization;     // per resource, time average of allocated / T
  std::vector<QueueReport> queues;     // every queue, path order
  std::vector<std::string> size_classes;
  Timeline timeline;
  int64_t instants = 0;                // instants simulated
  int64_t steps = 0;                   // tasks started
  int64_t fills_skipped = 0;           // instants where no waiting task could fit
  int64_t nodes = 0;                   // with nodes_file: the nodes of the pool
  // With reclaim (docs/simulate.md "Reclaim"):
  bool reclaim = false;
  int64_t evicted_tasks = 0;
  double lost_task_seconds = 0;        // Σ over evicted tasks of (eviction - start)
  int64_t plans_applied = 0;
  int64_t ping_pong = 0;               // plans of a job X taking from a job that took from X before
  int64_t evicted_within_60s = 0;      // evicted tasks that had run less than 60 s
  std::vector<int64_t> eviction_ms;    // the instants of evictions (one per applied plan), for plots
  double wall_seconds = 0;
};

// Runs `workload` on an engine built from `cluster` and `queues` (docs/spec.md §3
// rules). Errors: the queues or cluster are refused by the engine, or the
// workload names a resource the cluster lacks. A job the engine refuses is
// not an error: it is reported in JobOutcome::refused.
StatusOr<SimulateResult> Simulate(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                                  const Workload& workload, const SimulateOptions& options = {});

// ---- outputs --------------------------------------------------------------------

// Milliseconds as seconds with 3 decimals ("12.500"); "" for -1.
std::string FormatMs(int64_t ms);

// The --jobs-out CSV: header name,queue,arrival,first_start,last_start,end,
// one row per workload job in file order.
std::string JobsCsv(const Workload& workload, const SimulateResult& result);
Status WriteJobsCsv(const Workload& workload, const SimulateResult& result, const std::string& path);

// The --json report: one line, docs/spec.md §13 fields plus the extras of
// docs/simulate.md.
std::string SimulateReportJson(const Workload& workload, const SimulateResult& result);

// --compare: the report of `a` with a "compare" object: `b`'s summary and,
// per queue (union of both trees), [a, b] pairs of jobs, usage_share_avg
// and wait. The table: one row per queue, "A -> B (delta)" cells.
std::string SimulateCompareJson(const Workload& workload, const SimulateResult& a, const SimulateResult& b,
                                const std::string& other_name);
std::string SimulateCompareTable(const SimulateResult& a, const SimulateResult& b);

// A per-queue table for people (path, jobs, share, wait percentiles).
std::string SimulateReportTable(const SimulateResult& result);

}  // namespace hdrf

#endif  // HDRF_API_HDRF_SIMULATE_H_
