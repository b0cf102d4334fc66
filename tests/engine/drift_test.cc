// Drift bound: the incremental sums stay within 1e-9 of a full recompute
// over long event streams. HDRF_DRIFT_EVENTS sets the length (default
// 200,000 in CI; the long suite runs 10,000,000 — see docs/testing.md).
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/tree.h"
#include "tests/property/random_stream.h"

namespace hdrf::engine {
namespace {

TEST(DriftTest, IncrementalSharesStayWithinBound) {
  const char* env = std::getenv("HDRF_DRIFT_EVENTS");
  const int64_t events = env ? std::strtoll(env, nullptr, 10) : 200000;
  testing::Rng rng(42);
  // Large enough that nothing saturates: the incremental sums are never
  // reset by a full rebuild, so drift has the whole stream to accumulate.
  ResourceAmounts cluster{{"cpu", 64000000}, {"memory", int64_t{1} << 50}, {"nvidia.com/gpu", 16000000}};
  std::vector<QueueSpec> queues;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b) {
      QueueSpec q;
      q.path = "root/a" + std::to_string(a) + "/b" + std::to_string(b);
      q.weight = 1 + static_cast<double>(rng.Uniform(0, 7)) / 3;  // non-integer weights
      queues.push_back(q);
    }
  auto t = Tree::Create(cluster, queues);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<JobId> jobs;
  for (int i = 0; i < 200; ++i) {
    JobSpec j;
    j.name = "j" + std::to_string(i);
    j.queue = queues[rng.Uniform(0, queues.size() - 1)].path;
    j.tasks = rng.Uniform(1, 40);
    j.weight = 1 + static_cast<double>(rng.Uniform(0, 5)) / 7;
    j.task = {{"cpu", rng.Uniform(1, 7) * 137}, {"memory", rng.Uniform(1, 9) * 123456789}};
    if (rng.Chance(30)) j.task["nvidia.com/gpu"] = rng.Uniform(1, 2) * 1000;
    auto id = (*t)->Submit(j);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    jobs.push_back(*id);
  }
  const uint64_t rebuilds_at_start = (*t)->counters().full_rebuilds;
  int64_t applied = 0;
  for (int64_t i = 0; i < events; ++i) {
    JobId j = jobs[rng.Uniform(0, jobs.size() - 1)];
    const JobInfo info = (*t)->GetJob(j);
    const bool up = info.allocated == 0 || (info.allocated < info.tasks && rng.Chance(50));
    Status s = up ? (*t)->Allocate(j, 1) : (*t)->Release(j, 1);
    applied += s.ok();
    if ((i + 1) % 100000 == 0) {
      Status inv = (*t)->CheckInvariants(1e-9);
      ASSERT_TRUE(inv.ok()) << "after " << i + 1 << " events: " << inv.ToString();
    }
  }
  Status inv = (*t)->CheckInvariants(1e-9);
  EXPECT_TRUE(inv.ok()) << inv.ToString();
  EXPECT_EQ(applied, events);
  EXPECT_EQ((*t)->counters().full_rebuilds, rebuilds_at_start);  // no reset helped
  std::printf("%lld events (%lld applied), %llu node re-sums, %llu full rebuilds\n",
              static_cast<long long>(events), static_cast<long long>(applied),
              static_cast<unsigned long long>((*t)->counters().node_rebuilds),
              static_cast<unsigned long long>((*t)->counters().full_rebuilds));
}

}  // namespace
}  // namespace hdrf::engine
