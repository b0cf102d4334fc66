// Helpers shared by the reference model's unit tests.
#ifndef HDRF_TESTS_REFERENCE_REFERENCE_TEST_UTIL_H_
#define HDRF_TESTS_REFERENCE_REFERENCE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/reference/reference_model.h"

namespace hdrf::ref::testutil {

constexpr int64_t kCpu = 1000;              // 1 CPU in millicores
constexpr int64_t kGpu = 1000;              // 1 GPU in milli-units
constexpr int64_t kGi = 1024LL * 1024 * 1024;
const char kGpuName[] = "nvidia.com/gpu";

inline QueueSpec Q(const std::string& path, double weight = 1, ResourceAmounts cap = {},
            ResourceAmounts guarantee = {}) {
  QueueSpec q;
  q.path = path;
  q.weight = weight;
  q.capability = std::move(cap);
  q.guarantee = std::move(guarantee);
  return q;
}

inline JobSpec J(const std::string& name, const std::string& queue, int64_t tasks, ResourceAmounts task,
          const std::string& user = "default", double weight = 1) {
  JobSpec j;
  j.name = name;
  j.queue = queue;
  j.tasks = tasks;
  j.task = std::move(task);
  j.user = user;
  j.weight = weight;
  return j;
}

inline JobSpec WithMin(JobSpec j, int64_t min_available) {
  j.min_available = min_available;
  return j;
}

inline std::unique_ptr<ReferenceModel> Make(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                                     std::optional<double> overcommit = std::nullopt) {
  auto m = ReferenceModel::Create(cluster, queues, overcommit);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  return std::move(m).value();
}

inline void MustSubmit(ReferenceModel& m, const JobSpec& j) {
  auto r = m.Submit(j);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

inline RefJobView JobView(const ReferenceModel& m, const std::string& name) {
  for (const auto& j : m.Jobs())
    if (j.name == name) return j;
  ADD_FAILURE() << "no job " << name;
  return {};
}

inline RefNodeView QueueView(const ReferenceModel& m, const std::string& path) {
  for (const auto& q : m.Queues())
    if (q.name == path) return q;
  ADD_FAILURE() << "no queue " << path;
  return {};
}

inline int64_t Allocated(const ReferenceModel& m, const std::string& name) { return JobView(m, name).allocated; }

// A printable dump of everything observable, to check "refused = unchanged".
inline std::string Dump(const ReferenceModel& m) {
  std::ostringstream out;
  for (const auto& q : m.Queues()) {
    out << q.name << " b" << q.blocked << " s" << q.share << " k" << q.key << " rc";
    for (auto v : m.RealCapability(q.name)) out << " " << v;
    out << "\n";
  }
  for (const auto& j : m.Jobs())
    out << j.name << " " << j.queue << " " << j.user << " " << j.tasks << " " << j.allocated << " "
        << JobStateName(j.state) << " " << j.blocked << " " << j.schedulable << "\n";
  return out.str();
}

// Every job placed by PickNext must be schedulable and Step must agree.
inline int64_t CheckedFill(ReferenceModel& m) {
  int64_t steps = 0;
  while (true) {
    auto next = m.PickNext();
    auto stepped = m.Step();
    EXPECT_EQ(next, stepped);
    if (!stepped.has_value()) break;
    ++steps;
    EXPECT_LT(steps, 1000000);
    if (steps >= 1000000) break;
  }
  for (const auto& j : m.Jobs()) EXPECT_FALSE(j.schedulable) << j.name;
  return steps;
}

}  // namespace hdrf::ref::testutil

#endif  // HDRF_TESTS_REFERENCE_REFERENCE_TEST_UTIL_H_
