// The fill bound (engine/fill_bound.cc): a step skips subtrees whose waiting
// task shapes cannot fit, and the skip never hides a job that fits. The
// property tests (tests/property) check the choices against the reference on
// random streams; these cases pin the skips and the bound's maintenance.
#include <gtest/gtest.h>

#include "engine/tree.h"

namespace hdrf::engine {
namespace {

constexpr int64_t kCpu = 1000;
constexpr int64_t kGi = 1073741824;

JobSpec J(std::string name, std::string queue, int64_t tasks, int64_t cpu, int64_t mem_gi = 1) {
  JobSpec j;
  j.name = std::move(name);
  j.queue = std::move(queue);
  j.tasks = tasks;
  j.task = {{"cpu", cpu * kCpu}, {"memory", mem_gi * kGi}};
  j.user = "u";
  return j;
}

std::unique_ptr<Tree> Make(int64_t cpu, int64_t mem_gi, const std::vector<std::string>& leaves) {
  std::vector<QueueSpec> qs;
  for (const auto& p : leaves) {
    QueueSpec q;
    q.path = p;
    qs.push_back(q);
  }
  auto t = Tree::Create({{"cpu", cpu * kCpu}, {"memory", mem_gi * kGi}}, qs);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

// The simulator's backlog (bench/README.md "A fill where waiting jobs cannot
// fit"): big jobs wait in one leaf, small ones come and go in another.
TEST(FillBoundTest, BacklogThatCannotFitIsSkippedWhole) {
  auto t = Make(100, 1000, {"root/big", "root/small"});
  auto running = t->Submit(J("running", "root/big", 1, 50));
  ASSERT_TRUE(running.ok());
  ASSERT_TRUE(t->Allocate(*running, 1).ok());
  constexpr int kWaiting = 500;
  for (int i = 0; i < kWaiting; ++i) ASSERT_TRUE(t->Submit(J("big" + std::to_string(i), "root/big", 1, 60)).ok());
  for (int round = 0; round < 50; ++round) {
    auto small = t->Submit(J("small" + std::to_string(round), "root/small", 1, 1));
    ASSERT_TRUE(small.ok());
    const uint64_t skips = t->counters().fill_skips;
    EXPECT_EQ(t->Fill(), 1);
    EXPECT_EQ(t->GetJob(*small).allocated, 1);
    // The big leaf is skipped by its bound in each of the two steps; no
    // step visits its waiting jobs.
    EXPECT_GE(t->counters().fill_skips, skips + 1);
    ASSERT_TRUE(t->Finish(*small, 1).ok());
    ASSERT_TRUE(t->Remove(*small).ok());
    ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
  }
  // Room for one big job: the earliest submitted one is picked.
  ASSERT_TRUE(t->Finish(*running, 1).ok());
  auto next = t->Step();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(t->GetJob(*next).name, "big0");
  EXPECT_EQ(t->Fill(), 0);  // 40 cpu left: no 60-cpu task fits
}

// A bound is a component-wise minimum: shapes that each fail on a different
// resource leave a bound that fits, and the step falls back to the jobs.
TEST(FillBoundTest, ComplementaryShapesAreSearchedAndRefused) {
  auto t = Make(100, 100, {"root/a/x", "root/a/y"});
  auto hold = t->Submit(J("hold", "root/a/x", 1, 50, 50));
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(t->Allocate(*hold, 1).ok());
  ASSERT_TRUE(t->Submit(J("wide", "root/a/x", 2, 60, 1)).ok());
  ASSERT_TRUE(t->Submit(J("tall", "root/a/y", 2, 1, 60)).ok());
  EXPECT_FALSE(t->Step().has_value());
  ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
  // After the searches tightened the bounds, a job that fits must lower
  // them again and be found.
  auto fits = t->Submit(J("fits", "root/a/x", 1, 10, 10));
  ASSERT_TRUE(fits.ok());
  auto s = t->Step();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, *fits);
  ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
}

// Freed capacity makes skipped jobs fit again without any change to them.
TEST(FillBoundTest, ReleasedCapacityUnskips) {
  auto t = Make(10, 100, {"root/a", "root/b"});
  auto hold = t->Submit(J("hold", "root/a", 4, 2));
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(t->Allocate(*hold, 4).ok());
  auto wait = t->Submit(J("wait", "root/b", 1, 4));
  ASSERT_TRUE(wait.ok());
  EXPECT_FALSE(t->Step().has_value());  // 2 cpu free, 4 needed
  EXPECT_GE(t->counters().fill_skips, 1u);
  ASSERT_TRUE(t->Release(*hold, 1).ok());
  auto s = t->Step();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, *wait);
}

}  // namespace
}  // namespace hdrf::engine
