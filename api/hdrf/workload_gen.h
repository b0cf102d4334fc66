// Synthetic workloads for `hdrf simulate` (docs/spec.md §13): `hdrf workload gen`.
//
//   hdrf::WorkloadGenOptions o;              // documented defaults below
//   o.jobs = 1000000;
//   auto summary = hdrf::GenerateWorkload(o, sink);   // streamed CSV
//   std::string yaml = hdrf::WorkloadConfigYaml(o, summary->cluster);
//
// The CSV has the header `name,queue,arrival,duration,user,tasks,weight,`
// followed by the resource columns (the resources of the task shapes, in
// name order); every line is a valid §13 job: unique name `j<i>`, a leaf
// queue, arrival >= 0 and duration > 0 in seconds with 3 decimals, arrivals
// in non-decreasing order, quantities in canonical form (docs/spec.md §2).
// Same options, same bytes: every random number comes from one SplitMix64
// stream seeded by `seed`, and the samplers use no library distribution.
#ifndef HDRF_API_HDRF_WORKLOAD_GEN_H_
#define HDRF_API_HDRF_WORKLOAD_GEN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf {

// A distribution of positive values, written `kind:p1[,p2]`:
//   fixed:V              always V
//   exp:MEAN             exponential with that mean
//   uniform:LO,HI        uniform on [LO, HI]
//   lognormal:MU,SIGMA   exp(MU + SIGMA·N(0,1)) (heavy-tailed)
//   pareto:ALPHA,XMIN    XMIN / U^(1/ALPHA) (heavy-tailed; mean finite when ALPHA > 1)
struct Distribution {
  enum class Kind { kFixed, kExp, kUniform, kLognormal, kPareto };
  Kind kind = Kind::kFixed;
  double a = 1, b = 0;
  static StatusOr<Distribution> Parse(std::string_view text);
  std::string ToString() const;
};

struct WorkloadGenOptions {
  uint64_t jobs = 1000;  // number of jobs. Default: 1000
  uint64_t seed = 1;     // Default: 1
  // Arrivals. kPoisson: inter-arrival times exponential with mean 1/rate.
  // kBursts: bursts arrive as a Poisson process with mean gap burst_gap
  // seconds; each brings burst_size jobs (a Distribution, rounded, >= 1),
  // spread after the burst's start by exponential offsets of mean
  // burst_spread seconds (0: all at the same instant).
  enum class Arrivals { kPoisson, kBursts };
  Arrivals arrivals = Arrivals::kPoisson;  // Default: kPoisson
  double rate = 1.0;                       // jobs per second. Default: 1
  double burst_gap = 600;                  // Default: 600 s
  Distribution burst_size{Distribution::Kind::kFixed, 100, 0};  // Default: fixed:100
  double burst_spread = 0;                 // Default: 0
  // Tasks per job: rounded to an integer in [1, max_tasks].
  // Default: lognormal:1,0.8 (mean about 3.7), max_tasks 1000.
  Distribution tasks{Distribution::Kind::kLognormal, 1.0, 0.8};
  int64_t max_tasks = 1000;
  // Task run time in seconds, rounded to ms, in [0.001, max_duration].
  // Default: lognormal:4,1.5 (median 55 s, mean about 168 s), max 7 days.
  Distribution duration{Distribution::Kind::kLognormal, 4.0, 1.5};
  double max_duration = 7 * 86400.0;
  // Task shapes, each "cpu=1,memory=4Gi" with a relative weight; a job
  // takes one shape. Default: {cpu=1,memory=2Gi: 6; cpu=4,memory=16Gi: 3;
  // cpu=8,memory=64Gi,nvidia.com/gpu=1: 1}.
  struct Shape {
    ResourceAmounts task;
    double weight = 1;
  };
  std::vector<Shape> shapes;  // empty = the default mix
  // The queue tree: `queues` leaves under a tree of the given fanout (depth
  // the smallest with fanout^depth >= queues); names root/q0/q0-1/...
  // Each job goes to a leaf with probability ∝ 1/(i+1)^queue_skew (0 =
  // uniform). Queue weights (in the config) are integers drawn uniformly
  // in [1, max_weight]. Defaults: 8 leaves, fanout 4, skew 0, max_weight 1.
  int queues = 8;
  int fanout = 4;
  double queue_skew = 0;
  int max_weight = 1;
  int users = 10;  // user u0..u<users-1>, uniform. Default: 10
};

// Parses "cpu=1,memory=4Gi[@WEIGHT]" into a shape (docs/spec.md §2 quantities;
// resource names checked with IsKnownResourceName).
StatusOr<WorkloadGenOptions::Shape> ParseWorkloadShape(std::string_view text);

struct WorkloadGenSummary {
  uint64_t jobs = 0;
  uint64_t tasks = 0;
  int64_t last_arrival_ms = 0;
  double mean_duration = 0;  // seconds, per task
  // Time-averaged demand over [0, last arrival]: Σ tasks·duration·task[r]
  // / last arrival (what the cluster must serve to keep up).
  ResourceAmounts offered;
  // A cluster for the config: `offered` / load, at least the largest task.
  ResourceAmounts cluster;
};

// Receives the CSV in chunks (about 1 MiB each, the last one shorter).
using ChunkSink = std::function<Status(std::string_view chunk)>;

// Checks `o` (InvalidArgument naming the option) and writes the workload.
// `load` (> 0) sizes the summary's cluster: 0.9 makes the offered load 90%
// of it.
StatusOr<WorkloadGenSummary> GenerateWorkload(const WorkloadGenOptions& o, const ChunkSink& sink,
                                              double load = 0.9);

// The generated queue tree (parents before children), with weights.
std::vector<QueueSpec> WorkloadQueues(const WorkloadGenOptions& o);
// The tree and `cluster` as a docs/spec.md §10 scenario (no jobs), for
// `hdrf simulate --config`.
std::string WorkloadConfigYaml(const WorkloadGenOptions& o, const ResourceAmounts& cluster);

}  // namespace hdrf

#endif  // HDRF_API_HDRF_WORKLOAD_GEN_H_
