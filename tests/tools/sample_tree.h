// A small cluster that looks like one, shared by the tree-view and serve
// tests: 100 nodes' worth of cpu and memory, 96 GPUs, three top-level
// queues with named jobs, some running, one waiting.
#ifndef HDRF_TESTS_TOOLS_SAMPLE_TREE_H_
#define HDRF_TESTS_TOOLS_SAMPLE_TREE_H_

#include <string>
#include <vector>

#include "hdrf/engine.h"

namespace hdrf::testing {

inline constexpr int64_t kSampleGi = int64_t{1} << 30;

inline ResourceAmounts SampleCluster() {
  return {{"cpu", 6400 * 1000}, {"memory", 25600 * kSampleGi}, {"nvidia.com/gpu", 96 * 1000}, {"pods", 11000 * 1000}};
}

inline std::vector<QueueSpec> SampleQueues() {
  auto q = [](std::string path, double weight) {
    QueueSpec s;
    s.path = std::move(path);
    s.weight = weight;
    return s;
  };
  std::vector<QueueSpec> out = {q("root/analytics", 2), q("root/analytics/adhoc", 1), q("root/analytics/reports", 3),
                                q("root/training", 4),  q("root/training/vision", 2), q("root/training/language", 1),
                                q("root/serving", 3)};
  out[2].capability["cpu"] = 1000 * 1000;
  out[3].guarantee["nvidia.com/gpu"] = 32 * 1000;
  return out;
}

struct SampleJob {
  const char* name;
  const char* queue;
  int64_t tasks, running;
  ResourceAmounts task;
};

inline std::vector<SampleJob> SampleJobs() {
  const int64_t c = 1000, gi = kSampleGi;
  return {{"etl-nightly", "root/analytics/adhoc", 200, 150, {{"cpu", 4 * c}, {"memory", 16 * gi}}},
          {"dashboards", "root/analytics/reports", 100, 60, {{"cpu", 2 * c}, {"memory", 8 * gi}}},
          {"resnet-50", "root/training/vision", 8, 6, {{"cpu", 32 * c}, {"memory", 256 * gi}, {"nvidia.com/gpu", 8 * c}}},
          {"bert-large", "root/training/language", 10, 5, {{"cpu", 16 * c}, {"memory", 128 * gi}, {"nvidia.com/gpu", 4 * c}}},
          {"llama-finetune", "root/training/language", 3, 0, {{"cpu", 16 * c}, {"memory", 128 * gi}, {"nvidia.com/gpu", 8 * c}}},
          {"api-gateway", "root/serving", 500, 400, {{"cpu", 1 * c}, {"memory", 2 * gi}}}};
}

// Submits SampleJobs() and allocates their running tasks.
inline Status FillSample(Engine& engine) {
  for (const SampleJob& j : SampleJobs()) {
    JobSpec spec;
    spec.name = j.name;
    spec.queue = j.queue;
    spec.tasks = j.tasks;
    spec.task = j.task;
    HDRF_ASSIGN_OR_RETURN(JobRef ref, engine.Submit(spec));
    if (j.running > 0) HDRF_RETURN_IF_ERROR(engine.Allocate(ref, j.running));
  }
  return Status::Ok();
}

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_TOOLS_SAMPLE_TREE_H_
