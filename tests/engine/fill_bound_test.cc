// The fill bound (engine/fill_bound.cc): a step skips subtrees whose waiting
// task shapes cannot fit, and the skip never hides a job that fits. The
// property tests (tests/property) check the choices against the reference on
// random streams; these cases pin the skips and the bound's maintenance.
#include <gtest/gtest.h>

#include <random>

#include "engine/tree.h"
#include "engine/tree_internal.h"

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

// A job of `n` tasks of `cpu` (and `mem_gi`) submitted to `leaf`, holding
// `hold` of them.
JobId Held(Tree* t, std::string name, std::string leaf, int64_t n, int64_t cpu, int64_t hold, int64_t mem_gi = 1) {
  auto j = t->Submit(J(std::move(name), std::move(leaf), n, cpu, mem_gi));
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  if (!j.ok()) return kNone;
  EXPECT_TRUE(t->Allocate(*j, hold).ok());
  return *j;
}

// The simulator's backlog (bench/README.md "A fill where waiting jobs cannot
// fit"): big jobs wait in one leaf, small ones come and go in another.
TEST(FillBoundTest, BacklogThatCannotFitIsSkippedWhole) {
  auto t = Make(100, 1000, {"root/big", "root/small"});
  const JobId running = Held(t.get(), "running", "root/big", 1, 50, 1);
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
  ASSERT_TRUE(t->Finish(running, 1).ok());
  auto next = t->Step();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(t->GetJob(*next).name, "big0");
  EXPECT_EQ(t->Fill(), 0);  // 40 cpu left: no 60-cpu task fits
}

// A bound is a component-wise minimum: shapes that each fail on a different
// resource leave a bound that fits, and the step falls back to the jobs.
TEST(FillBoundTest, ComplementaryShapesAreSearchedAndRefused) {
  auto t = Make(100, 100, {"root/a/x", "root/a/y"});
  Held(t.get(), "hold", "root/a/x", 1, 50, 1, 50);
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
  const JobId hold = Held(t.get(), "hold", "root/a", 4, 2, 4);
  auto wait = t->Submit(J("wait", "root/b", 1, 4));
  ASSERT_TRUE(wait.ok());
  EXPECT_FALSE(t->Step().has_value());  // 2 cpu free, 4 needed
  EXPECT_GE(t->counters().fill_skips, 1u);
  ASSERT_TRUE(t->Release(hold, 1).ok());
  auto s = t->Step();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, *wait);
}

// A fit code's floors (engine/tree_internal.h) are at most the amount (a job
// passed over by its code must fail Fits), within a fifth of it, and
// ordered as the amounts are.
TEST(FitCodeTest, FloorsAreCloseLowerBounds) {
  std::vector<int64_t> amounts = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1000, 1999, 2000, 2001, 3000, kGi, 6 * kGi,
                                  INT64_MAX, INT64_MAX - 1, int64_t{1} << 62, (int64_t{1} << 62) - 1};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) amounts.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
  for (int64_t a : amounts) {
    if (a <= 0) continue;
    const int64_t f = kFitFloor[FitCodeOf(&a, 1) & 0xff];
    EXPECT_LE(f, a) << a;
    EXPECT_GT(__int128{f} * 5, __int128{a} * 4) << a;
    for (int64_t b : {a - 1, a < INT64_MAX ? a + 1 : a})  // a + 1 would overflow at INT64_MAX
      if (b > 0 && b < INT64_MAX && b != a) {
        const int64_t g = kFitFloor[FitCodeOf(&b, 1) & 0xff];
        EXPECT_EQ(b < a ? g <= f : g >= f, true) << a << " " << b;
      }
  }
  // No bound for amounts <= 0 and resources past the first four.
  const int64_t zero[6] = {0, -5, 7, 7, 7, 7};
  const uint32_t code = FitCodeOf(zero, 6);
  EXPECT_EQ(code & 0xffff, 0u);
  const int64_t room[kFitCodeResources] = {INT64_MIN, INT64_MIN, 7, 7};
  EXPECT_TRUE(CodeMayFit(code, room));
  const int64_t tight[kFitCodeResources] = {INT64_MIN, INT64_MIN, 6, 7};
  EXPECT_FALSE(CodeMayFit(code, tight));
}

// A leaf's backlog of jobs that hold no task (key 0) and cannot fit, with
// small ones among them: the pick is the earliest submitted small one
// (jobs passed over by their fit code), including one whose id is reused
// from a removed job (id order is not submission order); then, with only a partly running job fitting (key above
// 0), the walk past the key-0 jobs finds it.
TEST(FillBoundTest, BacklogPassedOverByFitCodesKeepsTheOrder) {
  auto t = Make(100, 1000, {"root/a", "root/b"});
  const JobId hold = Held(t.get(), "hold", "root/b", 1, 87, 1);
  Held(t.get(), "part", "root/a", 3, 2, 1);  // 11 cpu free
  std::vector<JobId> big;
  for (int i = 0; i < 200; ++i) {
    auto b = t->Submit(J("big" + std::to_string(i), "root/a", 1, 12 + i % 3));
    ASSERT_TRUE(b.ok());
    big.push_back(*b);
    if (i == 50 || i == 150) {
      ASSERT_TRUE(t->Submit(J("small" + std::to_string(i), "root/a", 1, 3)).ok());
    }
  }
  ASSERT_TRUE(t->Remove(big[10]).ok());
  auto late = t->Submit(J("small_late", "root/a", 1, 3));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(*late, big[10]);  // the removed job's id, below those of the others
  std::vector<std::string> picked;
  while (auto s = t->Step()) {
    picked.push_back(t->GetJob(*s).name);
    ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
  }
  // 11 cpu: the three small ones (key 0) in submission order, then part's
  // 2-cpu task (key above 0).
  EXPECT_EQ(picked, (std::vector<std::string>{"small50", "small150", "small_late", "part"}));
  ASSERT_TRUE(t->Finish(hold, 1).ok());
  ASSERT_TRUE(t->Remove(hold).ok());  // 87 cpu free
  auto s = t->Step();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(t->GetJob(*s).name, "big0");
  ASSERT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
}

}  // namespace
}  // namespace hdrf::engine
