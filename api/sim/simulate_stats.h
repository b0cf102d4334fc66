// Internal: the per-queue statistics of the workload simulator
// (api/sim/simulate.cc; report fields in docs/simulate.md).
//
// Every time-weighted value is integrated lazily: Change() first brings the
// integrals of the queues on the leaf's path up to t, then applies the
// change, so an event costs O(depth * R). Not thread-safe (one simulation).
#ifndef HDRF_API_SIM_SIMULATE_STATS_H_
#define HDRF_API_SIM_SIMULATE_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hdrf/simulate.h"
#include "hdrf/views.h"

namespace hdrf::sim {

inline constexpr uint32_t kNoQueue = UINT32_MAX;

// Wait statistics of a set of waits (ms); sorts `waits`.
WaitStats ComputeWaitStats(std::vector<int64_t>& waits);

class QueueStats {
 public:
  // `queues` in path order (Engine::Queues()); `total` per resource.
  QueueStats(const std::vector<QueueInfo>& queues, const std::vector<int64_t>& total,
             const SimulateOptions& options);

  // The index of the leaf queue at `path`, or kNoQueue (unknown or a parent).
  uint32_t LeafOf(std::string_view path) const;
  size_t queue_count() const { return q_.size(); }
  bool is_leaf(uint32_t q) const { return q_[q].leaf; }
  // The expected time span, for the timeline's sample spacing.
  void SetSpan(int64_t span_ms);
  int64_t waiting_jobs(uint32_t q) const { return q_[q].waiting_jobs; }

  void Refuse(uint32_t job, std::string error) { refused_.emplace(job, std::move(error)); }
  // An accepted job of `tasks` tasks entered `leaf` at t.
  void Submitted(uint32_t leaf, int64_t t, int64_t tasks);
  // At t, on the path of `leaf`: running tasks change by d_run (usage by
  // d_run * shape), waiting tasks by d_wait_tasks, waiting jobs by
  // d_wait_jobs.
  void Change(uint32_t leaf, int64_t t, const int64_t* shape, int64_t d_run, int64_t d_wait_tasks,
              int64_t d_wait_jobs);

  // Instants: BeginInstant(t) closes the previous instant's why-tally
  // interval; EndInstant(t) samples the timeline.
  void BeginInstant(int64_t t);
  void EndInstant(int64_t t);
  // A waiting job of `leaf` held back for `reason` after the fill at this
  // instant, standing for `jobs` waiting jobs.
  void AddWhy(uint32_t leaf, const std::string& reason, double jobs);
  // A job of `leaf` fit the cluster but no node (simulate --nodes).
  void FragmentationWait(uint32_t leaf) {
    for (uint32_t a = leaf; a != kNoQueue; a = q_[a].parent) ++q_[a].fragmentation_waits;
  }

  // Integrates up to `makespan` and writes the reports: res->queues,
  // res->jobs[i].queue/.refused (times must be in res->jobs already),
  // started/unscheduled/refused, utilization, timeline.
  void Finish(int64_t makespan, const Workload& w, const std::vector<uint32_t>& leaf_of_job,
              SimulateResult* res);

 private:
  struct Q {
    uint32_t parent = kNoQueue;
    int depth = 0;
    bool leaf = true;
    double weight = 1;
    std::string path;
    std::vector<uint32_t> children;
    int64_t running = 0, waiting_tasks = 0, waiting_jobs = 0, jobs = 0;
    double share = 0, x = 0;  // plain dominant share, share / weight
    int64_t last_t = 0;
    long double share_int = 0;  // ∫ share dt (ms)
    int64_t starved = 0;
    // Children with waiting work: count, Σx, Σx² (Jain's index).
    int64_t n_wait = 0;
    long double s1 = 0, s2 = 0;
    long double jain_int = 0;
    int64_t contended = 0;
    int64_t fragmentation_waits = 0;
    // Fair share (docs/simulate.md): ratio = weight / Σ weights of the
    // parent's active children while active, else 0 (the root: 1 while
    // active), constant since fair_t; fair_int = ∫ fair share dt up to
    // fair_t, fair_mark = the parent's fair_int at fair_t.
    double ratio = 0;
    long double fair_int = 0, fair_mark = 0;
    int64_t fair_t = 0;
    // Owed its guarantee (QueueReport::guaranteed): since owed_since.
    bool guaranteed = false, owed = false;
    int64_t owed_since = 0, owed_episodes = 0, owed_ms = 0, owed_max_ms = 0;
  };
  // Active: the subtree holds a job (a task waiting or running).
  static bool Active(const Q& q) { return q.waiting_tasks > 0 || q.running > 0; }
  void SyncFair(uint32_t q, int64_t t);
  void ActiveFlipped(uint32_t q, int64_t t);
  void Integrate(uint32_t q, int64_t t);
  double Jain(uint32_t q);
  void ResumChildren(uint32_t q);
  void UpdateOwed(uint32_t q, int64_t t);
  void EndOwed(Q& q, int64_t t);

  int R_;
  std::vector<int64_t> total_;
  std::vector<Q> q_;
  std::vector<int64_t> usage_;           // q_.size() x R_
  std::vector<int64_t> guar_;            // q_.size() x R_: the guarantees (0: none)
  std::vector<__int128> alloc_int_;      // root: ∫ usage[r] dt
  std::unordered_map<std::string, uint32_t> by_path_;
  std::map<uint32_t, std::string> refused_;
  const SimulateOptions& o_;
  // why jobs waited: per leaf, reason -> job-ms; the last instant's samples
  std::vector<std::map<std::string, double>> why_;
  struct Pending {
    uint32_t leaf;
    std::string reason;
    double jobs;
  };
  std::vector<Pending> pending_why_;
  int64_t last_instant_ = 0;
  // timeline
  std::vector<uint32_t> top_;
  int64_t next_sample_ = 0, sample_every_ = 1;
  Timeline timeline_;
};

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_SIMULATE_STATS_H_
