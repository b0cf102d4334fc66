// A deliberately simple, independent implementation of docs/spec.md §13 on top of
// the full-recompute reference model (tests/reference), used to check the
// fast simulator (api/sim) job by job. It follows the spec text literally:
// every running task is its own record, every instant recomputes every
// queue's plain usage from the running tasks, and statistics are computed
// from the recorded intervals at the end. Written for clarity, not speed.
#ifndef HDRF_TESTS_SIM_REFERENCE_SIMULATOR_H_
#define HDRF_TESTS_SIM_REFERENCE_SIMULATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/simulate.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf::testing {

struct RefSimJob {
  std::string queue;  // leaf; "" when refused
  bool refused = false;
  int64_t first_start = -1, last_start = -1, end = -1;
  int64_t evicted = 0;  // with reclaim: its tasks evicted over the run
};

struct RefSimWait {
  int64_t count = 0;
  double mean = 0;  // ms
  int64_t p50 = 0, p95 = 0, p99 = 0, max = 0;
};

struct RefSimResult {
  std::vector<RefSimJob> jobs;                 // file order
  int64_t makespan = 0;
  std::map<std::string, double> utilization;   // resource -> average
  std::vector<std::string> queue_paths;        // path order
  std::map<std::string, double> usage_share_avg;
  // docs/simulate.md "fair share", recomputed from scratch on every interval
  // between instants from the jobs present (accepted, not yet removed).
  std::map<std::string, double> fair_share_avg;
  std::map<std::string, int64_t> jobs_in;      // jobs that lived in the subtree
  std::map<std::string, RefSimWait> wait;      // every queue, over its subtree
  std::map<std::string, int64_t> fragmentation_waits;  // with nodes: every queue, over its subtree
  // With reclaim (docs/spec.md §13 additions):
  int64_t evicted_tasks = 0;
  int64_t lost_task_ms = 0;       // Σ over evicted tasks of (eviction − start)
  int64_t plans_applied = 0;
  int64_t evicted_within_60s = 0; // evicted tasks that had run less than 60 s
  // Plans in which the job took from a job that had, in an earlier plan,
  // taken from it (docs/simulate.md): counted once per such plan.
  int64_t ping_pong = 0;
  std::vector<int64_t> eviction_ms;  // the instant of each applied plan
  std::map<std::string, int64_t> evicted_in;  // every queue, over its subtree
};

// The reclaim phase of docs/spec.md §13 additions (off by default).
struct RefSimOptions {
  bool reclaim = false;
  bool preempt = false;               // plans in mode both instead of reclaim
  std::optional<int64_t> reclaim_budget;
};

// One node of a host pool (docs/simulate_nodes.md), in file order.
struct RefNode {
  std::string name;
  ResourceAmounts capacity;  // absent resource = 0
};

// With `nodes` (non-null), the rule of docs/simulate_nodes.md, literally:
// steps go in fair order over the jobs not yet refused in this fill; the
// picked job's task goes to the node, in file order, that fits it and is
// left with the fewest free units of the task's dominant resource (largest
// task[r]/T[r], first in resource order); no such node: the job is refused
// for the rest of the fill and counted in fragmentation_waits of its leaf
// and every ancestor. A step that starts a gang (docs/spec.md §14, a job holding no
// task) starts its step_tasks tasks at once; with nodes they are placed one
// after another best-fit on the pool as it fills, all or none (none: the
// job is refused as above).
//
// With options.reclaim, after each instant's fill the reclaim phase of docs/spec.md
// §13 additions, literally: repeat: among the waiting jobs (admitted, with
// unallocated tasks) not yet tried at this instant take the one a step
// would serve first if everything fit (the §5 descent by smallest key,
// blocked or not, same ties, computed here from the model's keys); the
// budget check; mark it tried; its plan (ReferenceModel::Plan, mode
// reclaim or both); a plan that succeeds with victims is applied at t
// (each victim's latest started tasks stop, their ends cancelled; with
// nodes the demand must first be placeable best-fit once those tasks have
// left their nodes, docs/simulate_nodes.md "Reclaim", else the job is
// passed over), then a fill.
StatusOr<RefSimResult> ReferenceSimulate(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                                         const Workload& workload, const std::vector<RefNode>* nodes = nullptr,
                                         const RefSimOptions& options = {});

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_SIM_REFERENCE_SIMULATOR_H_
