// Unit tests of the reference model: the spec's worked examples driven
// through Step/Fill, and one test per rule of §3-§7 and docs/semantics.md.
// The enqueue gate (§12), gangs (§14) and decisions (§8) are in
// reference_gangs_test.cc; plans (§15) in reference_plans_test.cc.
#include "tests/reference/reference_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "tests/reference/reference_test_util.h"

namespace hdrf::ref {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using namespace testutil;  // NOLINT: the helpers of reference_test_util.h

// ---------------------------------------------------------------------------
// Worked examples (§4) and the DRF paper
// ---------------------------------------------------------------------------

TEST(ReferenceWorkedExamples, SciEngDevProd) {
  auto m = Make({{"cpu", 10 * kCpu}, {kGpuName, 10 * kGpu}},
                {Q("root/sci", 50), Q("root/eng", 50), Q("root/eng/dev", 50), Q("root/eng/prod", 50)});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("sci", "root/sci", 10, {{"cpu", kCpu}, {kGpuName, kGpu}}));
  MustSubmit(*m, J("dev", "root/eng/dev", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("prod", "root/eng/prod", 10, {{kGpuName, kGpu}}));
  EXPECT_EQ(CheckedFill(*m), 15);
  EXPECT_EQ(Allocated(*m, "sci"), 5);
  EXPECT_EQ(Allocated(*m, "dev"), 5);
  EXPECT_EQ(Allocated(*m, "prod"), 5);
  // Both resources are saturated: every share is 0 and every node blocked.
  for (const auto& q : m->Queues()) {
    EXPECT_TRUE(q.blocked) << q.name;
    EXPECT_EQ(q.share, 0) << q.name;
  }
}

TEST(ReferenceWorkedExamples, FiveLeavesThirtyCpuThirtyGpu) {
  auto m = Make({{"cpu", 30 * kCpu}, {kGpuName, 30 * kGpu}}, {});
  ASSERT_NE(m, nullptr);
  for (auto p : {"root/n1/n11", "root/n2/n21", "root/n3/n31", "root/n3/n32", "root/n4/n41"})
    ASSERT_TRUE(m->CreateQueue(Q(p)).code() == StatusCode::kNotFound);  // parents missing
  m = Make({{"cpu", 30 * kCpu}, {kGpuName, 30 * kGpu}},
           {Q("root/n1/n11"), Q("root/n2/n21"), Q("root/n3/n31"), Q("root/n3/n32"), Q("root/n4/n41")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j11", "root/n1/n11", 30, {{"cpu", kCpu}}));
  MustSubmit(*m, J("j21", "root/n2/n21", 30, {{"cpu", kCpu}}));
  MustSubmit(*m, J("j31", "root/n3/n31", 30, {{"cpu", kCpu}}));
  MustSubmit(*m, J("j32", "root/n3/n32", 30, {{kGpuName, kGpu}}));
  MustSubmit(*m, J("j41", "root/n4/n41", 30, {{kGpuName, kGpu}}));
  EXPECT_EQ(CheckedFill(*m), 60);
  EXPECT_EQ(Allocated(*m, "j11"), 10);
  EXPECT_EQ(Allocated(*m, "j21"), 10);
  EXPECT_EQ(Allocated(*m, "j31"), 10);
  EXPECT_EQ(Allocated(*m, "j32"), 15);
  EXPECT_EQ(Allocated(*m, "j41"), 15);
}

// Mid-way through the second example: once cpu is saturated, n3's vector
// counts its blocked cpu child as it is and its share is its GPU share.
TEST(ReferenceWorkedExamples, FiveLeavesAfterCpuSaturates) {
  auto m = Make({{"cpu", 30 * kCpu}, {kGpuName, 30 * kGpu}},
                {Q("root/n1/n11"), Q("root/n2/n21"), Q("root/n3/n31"), Q("root/n3/n32"), Q("root/n4/n41")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j11", "root/n1/n11", 30, {{"cpu", kCpu}}));
  MustSubmit(*m, J("j21", "root/n2/n21", 30, {{"cpu", kCpu}}));
  MustSubmit(*m, J("j31", "root/n3/n31", 30, {{"cpu", kCpu}}));
  MustSubmit(*m, J("j32", "root/n3/n32", 30, {{kGpuName, kGpu}}));
  MustSubmit(*m, J("j41", "root/n4/n41", 30, {{kGpuName, kGpu}}));
  // Each round is n11, n21, n31, n32, n41; after 10 rounds cpu is saturated.
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(m->Step().has_value());
  for (auto j : {"j11", "j21", "j31", "j32", "j41"}) EXPECT_EQ(Allocated(*m, j), 10) << j;
  EXPECT_TRUE(QueueView(*m, "root/n1").blocked);
  EXPECT_TRUE(QueueView(*m, "root/n3/n31").blocked);
  auto n3 = QueueView(*m, "root/n3");
  EXPECT_FALSE(n3.blocked);
  EXPECT_THAT(n3.vector, ElementsAre(10.0 * kCpu, 10.0 * kGpu));
  EXPECT_DOUBLE_EQ(n3.share, 10.0 / 30.0);  // GPU only: cpu is saturated
  EXPECT_EQ(m->PickNext(), "j32");          // tie n3 vs n4: name order
}

TEST(ReferenceWorkedExamples, DrfPaper) {
  auto m = Make({{"cpu", 9 * kCpu}, {"memory", 18 * kGi}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("A", "root/a", 100, {{"cpu", kCpu}, {"memory", 4 * kGi}}));
  MustSubmit(*m, J("B", "root/b", 100, {{"cpu", 3 * kCpu}, {"memory", 1 * kGi}}));
  EXPECT_EQ(CheckedFill(*m), 5);
  EXPECT_EQ(Allocated(*m, "A"), 3);
  EXPECT_EQ(Allocated(*m, "B"), 2);
}

// The same DRF example with both jobs in one leaf: job order is by key too.
TEST(ReferenceWorkedExamples, DrfPaperOneQueue) {
  auto m = Make({{"cpu", 9 * kCpu}, {"memory", 18 * kGi}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("A", "root/a", 100, {{"cpu", kCpu}, {"memory", 4 * kGi}}));
  MustSubmit(*m, J("B", "root/a", 100, {{"cpu", 3 * kCpu}, {"memory", 1 * kGi}}));
  m->Fill();
  EXPECT_EQ(Allocated(*m, "A"), 3);
  EXPECT_EQ(Allocated(*m, "B"), 2);
}

// ---------------------------------------------------------------------------
// Shares (§4)
// ---------------------------------------------------------------------------

TEST(ReferenceShares, NonBlockedChildrenAreRescaledToTheMinimum) {
  auto m = Make({{"cpu", 10 * kCpu}, {kGpuName, 10 * kGpu}}, {Q("root/p/c1"), Q("root/p/c2")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/p/c1", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("b", "root/p/c2", 10, {{kGpuName, kGpu}}));
  ASSERT_TRUE(m->Allocate("a", 3).ok());
  ASSERT_TRUE(m->Allocate("b", 1).ok());
  // M = min(0.3, 0.1) = 0.1: c1 is scaled to 1 cpu, c2 stays at 1 GPU.
  auto p = QueueView(*m, "root/p");
  EXPECT_FALSE(p.blocked);
  ASSERT_EQ(p.vector.size(), 2u);
  EXPECT_NEAR(p.vector[0], 1.0 * kCpu, 1e-9);
  EXPECT_NEAR(p.vector[1], 1.0 * kGpu, 1e-9);
  EXPECT_NEAR(p.share, 0.1, 1e-12);
  auto c1 = QueueView(*m, "root/p/c1");
  EXPECT_THAT(c1.vector, ElementsAre(3.0 * kCpu, 0.0));
  EXPECT_NEAR(c1.share, 0.3, 1e-12);
}

TEST(ReferenceShares, AnUnallocatedNonBlockedChildMakesMZero) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/p/c1"), Q("root/p/c2")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/p/c1", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("b", "root/p/c2", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("a", 4).ok());
  auto p = QueueView(*m, "root/p");
  EXPECT_THAT(p.vector, ElementsAre(0.0));
  EXPECT_EQ(p.share, 0);
}

TEST(ReferenceShares, BlockedChildrenCountAsTheyAre) {
  // c1 is capped at 2 cpu, so its job is blocked once it holds 2 cpu.
  auto m = Make({{"cpu", 10 * kCpu}, {kGpuName, 10 * kGpu}},
                {Q("root/p/c1", 1, {{"cpu", 2 * kCpu}}), Q("root/p/c2")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/p/c1", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("b", "root/p/c2", 10, {{kGpuName, kGpu}}));
  ASSERT_TRUE(m->Allocate("a", 2).ok());
  ASSERT_TRUE(m->Allocate("b", 1).ok());
  EXPECT_TRUE(JobView(*m, "a").blocked);
  EXPECT_FALSE(JobView(*m, "a").schedulable);
  EXPECT_TRUE(QueueView(*m, "root/p/c1").blocked);
  auto p = QueueView(*m, "root/p");
  EXPECT_FALSE(p.blocked);
  // NB = {c2}: M = 0.1, c2 stays (1 GPU); c1 blocked counts as 2 cpu.
  EXPECT_THAT(p.vector, ElementsAre(2.0 * kCpu, 1.0 * kGpu));
  EXPECT_NEAR(p.share, 0.2, 1e-12);
}

TEST(ReferenceShares, QueueWithAllChildrenBlockedIsBlocked) {
  auto m = Make({{"cpu", 10 * kCpu}, {kGpuName, 10 * kGpu}},
                {Q("root/p/c1", 1, {{"cpu", 2 * kCpu}}), Q("root/p/c2"), Q("root/other"), Q("root/empty")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/p/c1", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("b", "root/p/c2", 1, {{kGpuName, 3 * kGpu}}));  // one task only
  MustSubmit(*m, J("c", "root/other", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("a", 2).ok());
  ASSERT_TRUE(m->Allocate("b", 1).ok());
  EXPECT_TRUE(JobView(*m, "b").blocked);  // all tasks allocated
  auto p = QueueView(*m, "root/p");
  EXPECT_TRUE(p.blocked);
  EXPECT_THAT(p.vector, ElementsAre(2.0 * kCpu, 3.0 * kGpu));
  EXPECT_NEAR(p.share, 0.3, 1e-12);
  EXPECT_TRUE(QueueView(*m, "root/empty").blocked);  // no children
  EXPECT_FALSE(QueueView(*m, "root").blocked);        // "other" is not blocked
  // Root: NB = {other} (unallocated => M = 0); p counts as it is.
  EXPECT_THAT(QueueView(*m, "root").vector, ElementsAre(2.0 * kCpu, 3.0 * kGpu));
  // The blocked queue comes after the non-blocked one in queue order.
  EXPECT_GT(m->CompareQueues("root/p/c1", "root/other"), 0);
  EXPECT_LT(m->CompareQueues("root/other", "root/p/c2"), 0);
  EXPECT_EQ(m->CompareQueues("root/p/c1", "root/p/c1"), 0);
}

TEST(ReferenceShares, SaturatedResourcesLeaveTheShare) {
  auto m = Make({{"cpu", 4 * kCpu}, {"memory", 8 * kGi}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/a", 4, {{"cpu", kCpu}, {"memory", kGi}}));
  MustSubmit(*m, J("b", "root/b", 4, {{"memory", kGi}}));
  ASSERT_TRUE(m->Allocate("a", 4).ok());  // cpu saturated
  ASSERT_TRUE(m->Allocate("b", 1).ok());
  auto a = JobView(*m, "a");
  EXPECT_NEAR(a.key, 4.0 / 8.0, 1e-12);        // memory only
  EXPECT_NEAR(a.drf_share, 1.0, 1e-12);        // over all resources
  EXPECT_TRUE(a.blocked);
  EXPECT_FALSE(JobView(*m, "b").blocked);
  // Lowering the capacity below the allocation: free < 0 is saturated too.
  ASSERT_TRUE(m->SetCapacity({{"cpu", 2 * kCpu}, {"memory", 8 * kGi}}).ok());
  EXPECT_NEAR(JobView(*m, "a").key, 0.5, 1e-12);
  EXPECT_NEAR(JobView(*m, "a").drf_share, 2.0, 1e-12);
  // free[cpu] = -2 cpu < 0 = task[cpu]: b's one more task does not fit (§6
  // checks every resource), though b is not blocked (§4: required only).
  EXPECT_FALSE(JobView(*m, "b").blocked);
  EXPECT_FALSE(JobView(*m, "b").schedulable);
}

TEST(ReferenceShares, WeightsDivideKeysAndAreRaisedToOne) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a", 2), Q("root/b", 0.5), Q("root/c", 1)});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/a", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("b", "root/b", 10, {{"cpu", kCpu}}, "u", 0.25));
  MustSubmit(*m, J("c", "root/c", 10, {{"cpu", kCpu}}, "u", 4));
  ASSERT_TRUE(m->Allocate("a", 2).ok());
  ASSERT_TRUE(m->Allocate("b", 2).ok());
  ASSERT_TRUE(m->Allocate("c", 2).ok());
  EXPECT_NEAR(QueueView(*m, "root/a").key, 0.1, 1e-12);
  EXPECT_NEAR(QueueView(*m, "root/b").key, 0.2, 1e-12);  // weight 0.5 -> 1
  EXPECT_NEAR(JobView(*m, "b").key, 0.2, 1e-12);         // weight 0.25 -> 1
  EXPECT_NEAR(JobView(*m, "c").key, 0.05, 1e-12);
  EXPECT_NEAR(QueueView(*m, "root/c").key, 0.2, 1e-12);  // rescaled: M·w = 0.05·4
  m->Fill();
  // a gets twice the share of b and c: a=5 ... b=c=2.5 -> a 5 or 6, the rest.
  EXPECT_EQ(Allocated(*m, "a") + Allocated(*m, "b") + Allocated(*m, "c"), 10);
  EXPECT_GE(Allocated(*m, "a"), 4);
}

// ---------------------------------------------------------------------------
// Step order and ties (§5, semantics item 6)
// ---------------------------------------------------------------------------

TEST(ReferenceStep, EqualQueueKeysGoToTheSmallerName) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/b"), Q("root/a"), Q("root/a-b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("jb", "root/b", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("jab", "root/a-b", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("ja", "root/a", 10, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Step(), "ja");
  EXPECT_EQ(m->Step(), "jab");
  EXPECT_EQ(m->Step(), "jb");
  EXPECT_EQ(m->Step(), "ja");
  EXPECT_EQ(m->CompareQueues("root/a-b", "root/b"), 0);  // equal keys compare equal
  EXPECT_GT(m->CompareQueues("root/a", "root/b"), 0);
}

TEST(ReferenceStep, EqualJobKeysGoToTheEarlierSubmitted) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/q")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("z", "root/q", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("a", "root/q", 10, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Step(), "z");
  EXPECT_EQ(m->Step(), "a");
  EXPECT_EQ(m->Step(), "z");
}

TEST(ReferenceStep, KeysWithinEpsilonAreEqual) {
  // 3e9 cpu total: one millicore is a share of 1/3e9 < 1e-9.
  auto m = Make({{"cpu", 3'000'000'000LL}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("ja", "root/a", 10, {{"cpu", 1}}));
  MustSubmit(*m, J("jb", "root/b", 10, {{"cpu", 1}}));
  ASSERT_TRUE(m->Allocate("ja", 1).ok());
  EXPECT_EQ(m->CompareQueues("root/a", "root/b"), 0);
  EXPECT_EQ(m->PickNext(), "ja");  // larger key by < 1e-9: tie, name order
}

TEST(ReferenceStep, CompareQueuesUsesTheFirstDifferingLevel) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/x/a"), Q("root/x/b"), Q("root/y/c")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/x/a", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("b", "root/x/b", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("c", "root/y/c", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("a", 3).ok());
  ASSERT_TRUE(m->Allocate("b", 1).ok());
  ASSERT_TRUE(m->Allocate("c", 2).ok());
  // x: M = 0.1, U_x = 1 cpu + 1 cpu = 0.2; y = 0.2: equal at level 1.
  EXPECT_EQ(m->CompareQueues("root/x/a", "root/y/c"), 0);
  EXPECT_GT(m->CompareQueues("root/x/a", "root/x/b"), 0);
  EXPECT_LT(m->CompareQueues("root/x/b", "root/x/a"), 0);
  ASSERT_TRUE(m->Allocate("c", 1).ok());
  EXPECT_LT(m->CompareQueues("root/x/a", "root/y/c"), 0);
}

TEST(ReferenceStep, NoStepWithoutSchedulableJobs) {
  auto m = Make({{"cpu", 2 * kCpu}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->PickNext(), std::nullopt);
  EXPECT_EQ(m->Fill(), 0);
  MustSubmit(*m, J("j", "root/a", 5, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Fill(), 2);
  EXPECT_EQ(JobView(*m, "j").state, JobState::kRunning);
  EXPECT_TRUE(JobView(*m, "j").blocked);  // cpu saturated
}

TEST(ReferenceStep, JobsWithoutTasksAreBlocked) {
  auto m = Make({{"cpu", 2 * kCpu}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j", "root/a", 0, {{"cpu", kCpu}}));
  EXPECT_TRUE(JobView(*m, "j").blocked);
  EXPECT_FALSE(JobView(*m, "j").schedulable);
  EXPECT_TRUE(QueueView(*m, "root/a").blocked);
}

// ---------------------------------------------------------------------------
// Fit: guarantees, capability (§6)
// ---------------------------------------------------------------------------

TEST(ReferenceFit, GuaranteesOfSiblingsAreHeldBack) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a", 1, {}, {{"cpu", 6 * kCpu}}), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("jb", "root/b", 10, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Fill(), 4);
  EXPECT_EQ(Allocated(*m, "jb"), 4);
  EXPECT_TRUE(JobView(*m, "jb").blocked);  // free − held_back = 6 − 6 = 0
  EXPECT_FALSE(JobView(*m, "jb").schedulable);
  MustSubmit(*m, J("ja", "root/a", 10, {{"cpu", kCpu}}));
  EXPECT_FALSE(JobView(*m, "ja").blocked);  // nothing held back for a itself
  EXPECT_EQ(m->Fill(), 6);
  EXPECT_EQ(Allocated(*m, "ja"), 6);
}

TEST(ReferenceFit, GuaranteesOfAncestorsSiblingsAreHeldBack) {
  auto m = Make({{"cpu", 10 * kCpu}},
                {Q("root/x", 1, {}, {{"cpu", 5 * kCpu}}), Q("root/y/y1"),
                 Q("root/y/y2", 1, {}, {{"cpu", 2 * kCpu}})});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j", "root/y/y1", 10, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Fill(), 3);  // 10 − 5 (x) − 2 (y2)
  // Usage of a guaranteed queue reduces what is held back for it.
  MustSubmit(*m, J("jx", "root/x", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("jx", 2).ok());
  // free 5, held back for y1: (5−2) + 2 = 5: still nothing.
  EXPECT_FALSE(JobView(*m, "j").schedulable);
  ASSERT_TRUE(m->Allocate("jx", 4).ok());  // x over its guarantee: max(0, ·)
  // free 1, held back for y1: 2 + max(0, 5 − 6) = 2: nothing; for x only
  // y's guarantee counts (none), so jx fits in the last cpu.
  EXPECT_FALSE(JobView(*m, "j").schedulable);
  EXPECT_TRUE(JobView(*m, "jx").schedulable);
}

TEST(ReferenceFit, GuaranteeHeldBackInAnotherResourceStopsEveryJob) {
  // §6 checks task[r] <= free[r] − held_back[r] for every r, so a negative
  // margin in memory stops a cpu-only job (it is still not blocked, §4).
  auto m = Make({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}},
                {Q("root/a", 1, {}, {{"memory", 4 * kGi}}), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("mem", "root/b", 10, {{"memory", kGi}}));
  MustSubmit(*m, J("cpu", "root/b", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("mem", 6).ok());
  EXPECT_FALSE(JobView(*m, "cpu").blocked);
  EXPECT_TRUE(JobView(*m, "cpu").schedulable);  // margin 0 in memory
  ASSERT_TRUE(m->Allocate("mem", 1).ok());       // host placement, margin −1Gi
  EXPECT_FALSE(JobView(*m, "cpu").blocked);
  EXPECT_FALSE(JobView(*m, "cpu").schedulable);
}

TEST(ReferenceFit, CapabilityOnThePathBlocks) {
  auto m = Make({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}},
                {Q("root/p", 1, {{"cpu", 3 * kCpu}}), Q("root/p/c1"), Q("root/p/c2"), Q("root/q")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("c1", "root/p/c1", 10, {{"cpu", kCpu}}));
  MustSubmit(*m, J("c2", "root/p/c2", 10, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Fill(), 3);
  EXPECT_EQ(Allocated(*m, "c1") + Allocated(*m, "c2"), 3);
  EXPECT_TRUE(JobView(*m, "c1").blocked);
  EXPECT_TRUE(QueueView(*m, "root/p").blocked);
  // A memory-only job under p is not stopped by p's cpu capability.
  MustSubmit(*m, J("mem", "root/p/c1", 2, {{"memory", kGi}}));
  EXPECT_FALSE(JobView(*m, "mem").blocked);
  EXPECT_TRUE(JobView(*m, "mem").schedulable);
  EXPECT_EQ(m->Fill(), 2);
}

TEST(ReferenceFit, RealCapability) {
  auto m = Make({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}},
                {Q("root/a", 1, {{"cpu", 8 * kCpu}}, {{"cpu", 2 * kCpu}}),
                 Q("root/b", 1, {}, {{"cpu", 3 * kCpu}, {"memory", 1 * kGi}}),
                 Q("root/b/b1", 1, {{"cpu", 6 * kCpu}}), Q("root/b/b2", 1, {}, {{"cpu", 1 * kCpu}})});
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->RealCapability("root"), ElementsAre(10 * kCpu, 10 * kGi));
  EXPECT_THAT(m->RealCapability("root/a"), ElementsAre(7 * kCpu, 9 * kGi));   // min(8, 10−3)
  EXPECT_THAT(m->RealCapability("root/b"), ElementsAre(8 * kCpu, 10 * kGi));  // 10 − 2
  EXPECT_THAT(m->RealCapability("root/b/b1"), ElementsAre(6 * kCpu, 10 * kGi));
  EXPECT_THAT(m->RealCapability("root/b/b2"), ElementsAre(8 * kCpu, 10 * kGi));
  EXPECT_TRUE(m->RealCapability("root/nope").empty());
  EXPECT_THAT(m->ResourceNames(), ElementsAre("cpu", "memory"));
}

// ---------------------------------------------------------------------------
// User limits (§7, semantics item 4)
// ---------------------------------------------------------------------------

QueueSpec WithUserLimit(QueueSpec q, int percent, std::optional<double> factor = std::nullopt) {
  q.min_user_limit_percent = percent;
  q.user_limit_factor = factor;
  return q;
}

TEST(ReferenceUserLimit, PercentOfRealCapabilityShared) {
  auto m = Make({{"cpu", 10 * kCpu}}, {WithUserLimit(Q("root/q"), 50)});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("alice1", "root/q", 10, {{"cpu", kCpu}}, "alice"));
  // Alone: n = 1, limit max(5, 10) = 10.
  EXPECT_EQ(m->Fill(), 10);
  ASSERT_TRUE(m->Release("alice1", 10).ok());
  MustSubmit(*m, J("bob1", "root/q", 10, {{"cpu", kCpu}}, "bob"));
  // n = 2: limit max(5, 5) = 5 each.
  EXPECT_EQ(m->Fill(), 10);
  EXPECT_EQ(Allocated(*m, "alice1"), 5);
  EXPECT_EQ(Allocated(*m, "bob1"), 5);
}

TEST(ReferenceUserLimit, BlocksTheUserAtTheLimit) {
  auto m = Make({{"cpu", 12 * kCpu}}, {WithUserLimit(Q("root/q"), 25)});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/q", 10, {{"cpu", kCpu}}, "alice"));
  MustSubmit(*m, J("b", "root/q", 10, {{"cpu", kCpu}}, "bob"));
  MustSubmit(*m, J("c", "root/q", 10, {{"cpu", kCpu}}, "carol"));
  MustSubmit(*m, J("a2", "root/q", 10, {{"cpu", kCpu}}, "alice"));
  // limit = max(12·25/100, 12/3) = 4 cpu per user.
  EXPECT_EQ(m->Fill(), 12);
  EXPECT_EQ(Allocated(*m, "a") + Allocated(*m, "a2"), 4);
  EXPECT_EQ(Allocated(*m, "b"), 4);
  EXPECT_EQ(Allocated(*m, "c"), 4);
  // Release two of bob's: alice is blocked by her user limit, bob is not.
  ASSERT_TRUE(m->Release("b", 2).ok());
  EXPECT_TRUE(JobView(*m, "a").blocked);
  EXPECT_FALSE(JobView(*m, "b").blocked);
  EXPECT_EQ(m->Fill(), 2);
  EXPECT_EQ(Allocated(*m, "b"), 4);
}

TEST(ReferenceUserLimit, UsersWithoutTasksAreNotCounted) {
  auto m = Make({{"cpu", 10 * kCpu}}, {WithUserLimit(Q("root/q"), 20)});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/q", 10, {{"cpu", kCpu}}, "alice"));
  MustSubmit(*m, J("b", "root/q", 0, {{"cpu", kCpu}}, "bob"));
  // n = 1 (bob has no task): limit max(2, 10) = 10.
  EXPECT_EQ(m->Fill(), 10);
}

TEST(ReferenceUserLimit, GuaranteeTimesFactor) {
  auto q = WithUserLimit(Q("root/q", 1, {}, {{"cpu", 4 * kCpu}}), 100, 0.5);
  auto m = Make({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}}, {q});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/q", 10, {{"cpu", kCpu}, {"memory", kGi}}, "alice"));
  MustSubmit(*m, J("b", "root/q", 10, {{"cpu", kCpu}, {"memory", kGi}}, "bob"));
  // 4 cpu · 0.5 = 2 cpu per user; memory unlimited (not in the guarantee).
  EXPECT_EQ(m->Fill(), 4);
  EXPECT_EQ(Allocated(*m, "a"), 2);
  EXPECT_EQ(Allocated(*m, "b"), 2);
}

TEST(ReferenceUserLimit, PercentUsesTheGuaranteeWhenListed) {
  auto q = WithUserLimit(Q("root/q", 1, {}, {{"cpu", 4 * kCpu}}), 50);
  auto m = Make({{"cpu", 10 * kCpu}}, {q});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("a", "root/q", 10, {{"cpu", kCpu}}, "alice"));
  // B = 4 cpu (guarantee), n = 1: limit max(2, 4) = 4.
  EXPECT_EQ(m->Fill(), 4);
  EXPECT_TRUE(JobView(*m, "a").blocked);
}

// ---------------------------------------------------------------------------
// Admission (§5, semantics item 7)
// ---------------------------------------------------------------------------

TEST(ReferenceAdmission, DescendsToTheLeastLoadedOpenChild) {
  auto m = Make({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}},
                {Q("root/a/a1"), Q("root/a/a2"), Q("root/b", 4)});
  ASSERT_NE(m, nullptr);
  auto leaf = m->Submit(J("j1", "root/a", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/a/a1");  // tie: name order
  ASSERT_TRUE(m->Allocate("j1", 2).ok());
  leaf = m->Submit(J("j2", "root/a", 10, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/a/a2");
  // From root: a holds 0.2, b 0 -> b.
  leaf = m->Submit(J("j3", "", 10, {{"memory", kGi}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/b");
  ASSERT_TRUE(m->Allocate("j3", 6).ok());  // b: 0.6 / 4 = 0.15 < 0.2
  leaf = m->Submit(J("j4", "root", 1, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/b");
  EXPECT_EQ(JobView(*m, "j4").queue, "root/b");
}

TEST(ReferenceAdmission, SkipsClosedChildrenAndFailsWithoutOpenOnes) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a/a1"), Q("root/a/a2"), Q("root/b/b1")});
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->SetQueueState("root/a/a1", QueueState::kClosed).ok());
  auto leaf = m->Submit(J("j1", "root/a", 1, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/a/a2");
  ASSERT_TRUE(m->SetQueueState("root/a/a2", QueueState::kClosing).ok());
  const std::string before = Dump(*m);
  leaf = m->Submit(J("j2", "root/a", 1, {{"cpu", kCpu}}));
  ASSERT_FALSE(leaf.ok());
  EXPECT_THAT(leaf.status().message(), HasSubstr("no open queue under root/a"));
  // Submitting to a closing leaf directly is refused too.
  leaf = m->Submit(J("j2", "root/a/a2", 1, {{"cpu", kCpu}}));
  EXPECT_FALSE(leaf.ok());
  EXPECT_EQ(Dump(*m), before);
  // The job in the closing queue keeps being scheduled (semantics item 8).
  EXPECT_EQ(m->Fill(), 1);
  // From root: b (0) is below a (0.1).
  leaf = m->Submit(J("j3", "", 3, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/b/b1");
  ASSERT_TRUE(m->Allocate("j3", 3).ok());
  // Now a (0.1, open itself) is below b (0.3): admission descends into a and
  // does not backtrack when a has no open child.
  leaf = m->Submit(J("j4", "", 1, {{"cpu", kCpu}}));
  ASSERT_FALSE(leaf.ok());
  EXPECT_THAT(leaf.status().message(), HasSubstr("no open queue under root/a"));
}

TEST(ReferenceAdmission, RootAsALeaf) {
  auto m = Make({{"cpu", 2 * kCpu}}, {});
  ASSERT_NE(m, nullptr);
  auto leaf = m->Submit(J("j", "", 3, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();
  EXPECT_EQ(*leaf, "root");
  EXPECT_EQ(m->Fill(), 2);
  // root is now a leaf holding jobs: no queue may be created under it.
  Status st = m->CreateQueue(Q("root/a"));
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("root/a"));
}

// ---------------------------------------------------------------------------
// Tree validation (§3, semantics items 3, 8, 9)
// ---------------------------------------------------------------------------

class ReferenceValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    m_ = Make({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}},
              {Q("root/a", 1, {{"cpu", 6 * kCpu}}, {{"cpu", 4 * kCpu}}),
               Q("root/a/a1", 1, {{"cpu", 5 * kCpu}}, {{"cpu", 2 * kCpu}}), Q("root/a/a2"),
               Q("root/b", 1, {}, {{"cpu", 3 * kCpu}})});
    ASSERT_NE(m_, nullptr);
    MustSubmit(*m_, J("j", "root/a/a2", 4, {{"cpu", kCpu}}));
    ASSERT_TRUE(m_->Allocate("j", 1).ok());
  }

  // The request must be refused, name `path` and leave the state unchanged.
  void ExpectRefused(const std::function<Status()>& request, const std::string& path,
                     const std::string& rule = "") {
    const std::string before = Dump(*m_);
    Status st = request();
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr(path));
    if (!rule.empty()) {
      EXPECT_THAT(st.message(), HasSubstr(rule));
    }
    EXPECT_EQ(Dump(*m_), before);
  }

  std::unique_ptr<ReferenceModel> m_;
};

TEST_F(ReferenceValidation, ChildCapabilityAboveParent) {
  ExpectRefused([&] { return m_->CreateQueue(Q("root/a/a3", 1, {{"cpu", 7 * kCpu}})); }, "root/a/a3",
                "capability");
  // Compared with the nearest ancestor that sets the resource (a, not a2).
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/a/a1", 1, {{"cpu", 7 * kCpu}})); }, "root/a/a1",
                "capability");
  EXPECT_TRUE(m_->CreateQueue(Q("root/a/a3", 1, {{"cpu", 6 * kCpu}, {"memory", 99 * kGi}})).ok());
}

TEST_F(ReferenceValidation, ParentCapabilityBelowDescendant) {
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/a", 1, {{"cpu", 4 * kCpu}}, {{"cpu", 4 * kCpu}})); },
                "root/a/a1", "capability");
}

TEST_F(ReferenceValidation, GuaranteeAboveCapability) {
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c", 1, {{"cpu", 1 * kCpu}}, {{"cpu", 2 * kCpu}})); },
                "root/c", "guarantee");
  // The capability inherited from an ancestor counts too.
  ASSERT_TRUE(m_->CreateQueue(Q("root/c", 1, {{"memory", 2 * kGi}})).ok());
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c/d", 1, {}, {{"memory", 3 * kGi}})); }, "root/c/d",
                "guarantee");
  ASSERT_TRUE(m_->CreateQueue(Q("root/c/d", 1, {}, {{"memory", 2 * kGi}})).ok());
  // Lowering the parent's capability below the child's guarantee is refused.
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/c", 1, {{"memory", 1 * kGi}})); }, "root/c/d",
                "guarantee");
}

TEST_F(ReferenceValidation, ChildrenGuaranteesAboveParentGuarantee) {
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/a/a2", 1, {}, {{"cpu", 3 * kCpu}})); }, "root/a",
                "guarantee");
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/a", 1, {{"cpu", 6 * kCpu}}, {{"cpu", 1 * kCpu}})); },
                "root/a", "guarantee");
  EXPECT_TRUE(m_->UpdateQueue(Q("root/a/a2", 1, {}, {{"cpu", 2 * kCpu}, {"memory", kGi}})).ok());
}

TEST_F(ReferenceValidation, RootChildrenGuaranteesAboveCluster) {
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c", 1, {}, {{"cpu", 4 * kCpu}})); }, "root/c",
                "cluster");
  EXPECT_TRUE(m_->CreateQueue(Q("root/c", 1, {}, {{"cpu", 3 * kCpu}})).ok());
}

TEST_F(ReferenceValidation, CapacityChangeMayLeaveGuaranteesAboveTheTotal) {
  ASSERT_TRUE(m_->SetCapacity({{"cpu", 5 * kCpu}, {"memory", 10 * kGi}}).ok());
  // Unrelated updates still pass; raising the sum further does not.
  EXPECT_TRUE(m_->UpdateQueue(Q("root/b", 2, {}, {{"cpu", 3 * kCpu}})).ok());
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/b", 2, {}, {{"cpu", 4 * kCpu}})); }, "root/b",
                "cluster");
  // Held back: a1 2 + b 3 = 5 > free 4: nothing fits for a2.
  EXPECT_FALSE(JobView(*m_, "j").schedulable);
  EXPECT_THAT(m_->RealCapability("root/b"), ElementsAre(1 * kCpu, 10 * kGi));
}

TEST_F(ReferenceValidation, DuplicateAndMissingParent) {
  ExpectRefused([&] { return m_->CreateQueue(Q("root/a/a1")); }, "root/a/a1");
  ExpectRefused([&] { return m_->CreateQueue(Q("root")); }, "root");
  ExpectRefused([&] { return m_->CreateQueue(Q("root/x/y")); }, "root/x/y");
  ExpectRefused([&] { return m_->CreateQueue(Q("other/x")); }, "other/x");
  ExpectRefused([&] { return m_->CreateQueue(Q("root//x")); }, "root//x");
  ExpectRefused([&] { return m_->UpdateQueue(Q("root/zz")); }, "root/zz");
}

TEST_F(ReferenceValidation, NoQueueUnderALeafWithJobs) {
  ExpectRefused([&] { return m_->CreateQueue(Q("root/a/a2/x")); }, "root/a/a2/x", "jobs");
  EXPECT_TRUE(m_->CreateQueue(Q("root/a/a1/x")).ok());  // a1 holds no job
  // a1 is now a parent: jobs can be submitted to it only through admission.
  auto leaf = m_->Submit(J("k", "root/a/a1", 1, {{"cpu", kCpu}}));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(*leaf, "root/a/a1/x");
}

TEST_F(ReferenceValidation, Attributes) {
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c", std::nan(""))); }, "root/c", "weight");
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c", std::numeric_limits<double>::infinity())); },
                "root/c", "weight");
  ExpectRefused([&] { return m_->CreateQueue(WithUserLimit(Q("root/c"), 0)); }, "root/c",
                "minUserLimitPercent");
  ExpectRefused([&] { return m_->CreateQueue(WithUserLimit(Q("root/c"), 101)); }, "root/c",
                "minUserLimitPercent");
  ExpectRefused([&] { return m_->CreateQueue(WithUserLimit(Q("root/c"), 50, 0.0)); }, "root/c",
                "userLimitFactor");
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c", 1, {{"gpu", 1}})); }, "root/c", "gpu");
  ExpectRefused([&] { return m_->CreateQueue(Q("root/c", 1, {}, {{"cpu", -1}})); }, "root/c");
  EXPECT_TRUE(m_->CreateQueue(Q("root/c", 0.1)).ok());  // raised to 1
}

TEST_F(ReferenceValidation, CreateRefusesABadTree) {
  auto bad = ReferenceModel::Create({{"cpu", 10 * kCpu}},
                                    {Q("root/p/c", 1, {{"cpu", 5 * kCpu}}), Q("root/p", 1, {{"cpu", 4 * kCpu}})});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("root/p/c"));
  bad = ReferenceModel::Create({{"cpu", 10 * kCpu}}, {Q("root/a"), Q("root/a")});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("root/a"));
  bad = ReferenceModel::Create({{"cpu", 10 * kCpu}}, {Q("root/a", 1, {}, {{"cpu", 11 * kCpu}})});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("root/a"));
  bad = ReferenceModel::Create({{"cpu", 10 * kCpu}}, {Q("root", 1, {}, {{"cpu", 2 * kCpu}}),
                                                      Q("root/a", 1, {}, {{"cpu", 3 * kCpu}})});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("root"));
}

TEST(ReferenceTree, CreateInAnyOrderWithImplicitParentsAndRoot) {
  QueueSpec root = Q("root", 3, {{"cpu", 8 * kCpu}});
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/x/y/z", 2), root, Q("root/x", 5)});
  ASSERT_NE(m, nullptr);
  std::vector<std::string> names;
  for (const auto& q : m->Queues()) names.push_back(q.name);
  EXPECT_THAT(names, ElementsAre("root", "root/x", "root/x/y", "root/x/y/z"));
  EXPECT_THAT(m->RealCapability("root"), ElementsAre(10 * kCpu));  // realcap(root) = T
  // root's capability applies on every path.
  MustSubmit(*m, J("j", "", 20, {{"cpu", kCpu}}));
  EXPECT_EQ(JobView(*m, "j").queue, "root/x/y/z");
  EXPECT_EQ(m->Fill(), 8);
  // Children may not exceed root's explicit capability.
  EXPECT_FALSE(m->CreateQueue(Q("root/w", 1, {{"cpu", 9 * kCpu}})).ok());
}

TEST(ReferenceTree, QueuesAreInPathOrder) {
  auto m = Make({{"cpu", 1}}, {Q("root/a/x"), Q("root/a-b"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  std::vector<std::string> names;
  for (const auto& q : m->Queues()) names.push_back(q.name);
  EXPECT_THAT(names, ElementsAre("root", "root/a", "root/a-b", "root/a/x", "root/b"));
}

TEST(ReferenceTree, StatesCascadeAndDelete) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a/a1"), Q("root/a/a2/x"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j", "root/a/a1", 2, {{"cpu", kCpu}}));
  // Delete requires closed.
  Status st = m->DeleteQueue("root/a/a2");
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("root/a/a2"));
  EXPECT_FALSE(m->DeleteQueue("root").ok());
  EXPECT_FALSE(m->DeleteQueue("root/none").ok());
  // Closing a parent closes the subtree.
  ASSERT_TRUE(m->SetQueueState("root/a", QueueState::kClosed).ok());
  EXPECT_FALSE(m->Submit(J("k", "root/a/a2/x", 1, {{"cpu", kCpu}})).ok());
  // Opening a child of a closed parent is refused; opening the parent alone
  // leaves the children closed.
  st = m->SetQueueState("root/a/a2", QueueState::kOpen);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("root/a/a2"));
  // A subtree with jobs cannot be deleted.
  st = m->DeleteQueue("root/a");
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("root/a"));
  // A closed queue without jobs goes with its subtree.
  ASSERT_TRUE(m->DeleteQueue("root/a/a2").ok());
  std::vector<std::string> names;
  for (const auto& q : m->Queues()) names.push_back(q.name);
  EXPECT_THAT(names, ElementsAre("root", "root/a", "root/a/a1", "root/b"));
  // A new queue under a closed parent is closed too.
  ASSERT_TRUE(m->CreateQueue(Q("root/a/a3")).ok());
  EXPECT_FALSE(m->Submit(J("k", "root/a/a3", 1, {{"cpu", kCpu}})).ok());
  ASSERT_TRUE(m->SetQueueState("root/a", QueueState::kOpen).ok());
  EXPECT_FALSE(m->Submit(J("k", "root/a/a3", 1, {{"cpu", kCpu}})).ok());  // still closed
  ASSERT_TRUE(m->SetQueueState("root/a/a3", QueueState::kOpen).ok());
  EXPECT_TRUE(m->Submit(J("k", "root/a/a3", 1, {{"cpu", kCpu}})).ok());
  // Removing the jobs makes the subtree deletable once closed.
  ASSERT_TRUE(m->Remove("j").ok());
  ASSERT_TRUE(m->Remove("k").ok());
  EXPECT_FALSE(m->Remove("k").ok());
  ASSERT_TRUE(m->SetQueueState("root/a", QueueState::kClosing).ok());
  EXPECT_FALSE(m->DeleteQueue("root/a").ok());  // closing is not closed
  ASSERT_TRUE(m->SetQueueState("root/a", QueueState::kClosed).ok());
  ASSERT_TRUE(m->DeleteQueue("root/a").ok());
  names.clear();
  for (const auto& q : m->Queues()) names.push_back(q.name);
  EXPECT_THAT(names, ElementsAre("root", "root/b"));
}

// ---------------------------------------------------------------------------
// Jobs and task events (semantics items 2, 10)
// ---------------------------------------------------------------------------

TEST(ReferenceJobs, SubmissionChecks) {
  auto m = Make({{"cpu", 4 * kCpu}, {"memory", 4 * kGi}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j", "root/a", 1, {{"cpu", kCpu}}));
  EXPECT_EQ(m->Submit(J("j", "root/a", 1, {{"cpu", kCpu}})).status().code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(m->Submit(J("k", "root/a", 1, {{"cpu", 5 * kCpu}})).ok());  // > T
  EXPECT_FALSE(m->Submit(J("k", "root/a", 1, {{"nvidia.com/gpu", 1}})).ok());
  EXPECT_FALSE(m->Submit(J("k", "root/a", -1, {{"cpu", kCpu}})).ok());
  EXPECT_FALSE(m->Submit(J("k", "root/nope", 1, {{"cpu", kCpu}})).ok());
  EXPECT_FALSE(m->Submit(J("k", "root/a", 1, {{"cpu", kCpu}}, "u", std::nan(""))).ok());
  EXPECT_TRUE(m->Submit(J("k", "root/a", 1, {{"cpu", 4 * kCpu}})).ok());  // = T is fine
  EXPECT_EQ(m->Jobs().size(), 2u);
  EXPECT_EQ(m->Jobs()[0].name, "j");
  EXPECT_EQ(m->Jobs()[1].name, "k");
}

TEST(ReferenceJobs, AllocateReleaseFinish) {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/a", 1, {{"cpu", 1 * kCpu}})});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("j", "root/a", 6, {{"cpu", kCpu}}));
  EXPECT_EQ(JobView(*m, "j").state, JobState::kInqueue);
  EXPECT_FALSE(m->Allocate("j", 0).ok());
  EXPECT_FALSE(m->Allocate("nope", 1).ok());
  EXPECT_FALSE(m->Allocate("j", 5).ok());  // 5 cpu > free 4
  // Capability is not re-checked on a host allocation.
  ASSERT_TRUE(m->Allocate("j", 4).ok());
  EXPECT_EQ(JobView(*m, "j").state, JobState::kRunning);
  EXPECT_FALSE(m->Release("j", 5).ok());
  EXPECT_FALSE(m->Finish("j", 5).ok());
  EXPECT_FALSE(m->Release("j", 0).ok());
  EXPECT_FALSE(m->Finish("j", 0).ok());
  ASSERT_TRUE(m->Finish("j", 1).ok());
  EXPECT_EQ(JobView(*m, "j").tasks, 5);
  EXPECT_EQ(JobView(*m, "j").allocated, 3);
  ASSERT_TRUE(m->Release("j", 3).ok());
  EXPECT_EQ(JobView(*m, "j").tasks, 5);
  EXPECT_EQ(JobView(*m, "j").allocated, 0);
  EXPECT_EQ(JobView(*m, "j").state, JobState::kInqueue);
  EXPECT_FALSE(m->Release("j", 1).ok());
  EXPECT_FALSE(m->Finish("j", 1).ok());
  ASSERT_TRUE(m->Allocate("j", 4).ok());
  ASSERT_TRUE(m->Finish("j", 4).ok());
  EXPECT_EQ(JobView(*m, "j").tasks, 1);
  EXPECT_EQ(JobView(*m, "j").state, JobState::kInqueue);
  ASSERT_TRUE(m->Allocate("j", 1).ok());
  EXPECT_FALSE(m->Allocate("j", 1).ok());  // all tasks allocated, 3 cpu free
  EXPECT_TRUE(JobView(*m, "j").blocked);
  ASSERT_TRUE(m->Finish("j", 1).ok());
  EXPECT_EQ(JobView(*m, "j").tasks, 0);
  EXPECT_TRUE(JobView(*m, "j").blocked);
}

// ---------------------------------------------------------------------------
// Choices where the spec and docs/semantics.md are read literally
// ---------------------------------------------------------------------------

TEST(ReferenceChoices, AllocateChecksOnlyUsedResourcesAgainstFree) {
  auto m = Make({{"cpu", 4 * kCpu}, {"memory", 4 * kGi}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("mem", "root/a", 4, {{"memory", kGi}}));
  MustSubmit(*m, J("cpu", "root/a", 4, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("mem", 4).ok());
  ASSERT_TRUE(m->SetCapacity({{"cpu", 4 * kCpu}, {"memory", 2 * kGi}}).ok());
  // free[memory] = -2Gi, but the cpu task uses no memory (semantics 2).
  EXPECT_TRUE(m->Allocate("cpu", 1).ok());
  EXPECT_FALSE(m->Allocate("mem", 1).ok());  // all allocated, and no memory free
  ASSERT_TRUE(m->Release("mem", 3).ok());
  EXPECT_TRUE(m->Allocate("mem", 1).ok());
  EXPECT_FALSE(m->Allocate("mem", 2).ok());  // only 1Gi free
}

TEST(ReferenceChoices, AllocateRefusesAPendingJob) {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/a")}, 1.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j", "root/a", 8, {{"cpu", kCpu}}), 8));
  EXPECT_EQ(JobView(*m, "j").state, JobState::kPending);
  Status st = m->Allocate("j", 1);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("Pending"));
  EXPECT_EQ(JobView(*m, "j").state, JobState::kPending);
  EXPECT_EQ(Allocated(*m, "j"), 0);
}

TEST(ReferenceChoices, ListedZeroGuaranteeIsNoGuaranteeForTheFactor) {
  auto q = WithUserLimit(Q("root/q", 1, {}, {{"memory", 0}}), 100, 2.0);
  auto m = Make({{"cpu", 4 * kCpu}, {"memory", 4 * kGi}}, {q});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("cpu", "root/q", 2, {{"cpu", kCpu}}));
  MustSubmit(*m, J("mem", "root/q", 2, {{"memory", kGi}}));
  EXPECT_FALSE(JobView(*m, "cpu").blocked);
  EXPECT_FALSE(JobView(*m, "mem").blocked);  // a 0 guarantee sets no limit
  EXPECT_EQ(m->Fill(), 4);
  EXPECT_EQ(Allocated(*m, "mem"), 2);
}

TEST(ReferenceChoices, ParentListingZeroGuaranteeDoesNotBoundChildren) {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/p", 1, {}, {{"cpu", 0}})});
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->CreateQueue(Q("root/p/c", 1, {}, {{"cpu", kCpu}})).ok());
  // A parent with a real guarantee does bound them.
  ASSERT_TRUE(m->CreateQueue(Q("root/g", 1, {}, {{"cpu", kCpu}})).ok());
  Status st = m->CreateQueue(Q("root/g/c", 1, {}, {{"cpu", 2 * kCpu}}));
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("root/g"));
}

TEST(ReferenceChoices, PendingJobsWaitForTheListedEvents) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a")}, 1.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j1", "root/a", 6, {{"cpu", kCpu}}), 6));
  MustSubmit(*m, WithMin(J("j2", "root/a", 6, {{"cpu", kCpu}}), 6));
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kPending);
  ASSERT_TRUE(m->Allocate("j1", 2).ok());  // 2 + 0 + 6 <= 10 now, but no re-examination
  MustSubmit(*m, J("j3", "root/a", 1, {{"cpu", kCpu}}));  // only j3 is evaluated
  EXPECT_EQ(JobView(*m, "j3").state, JobState::kInqueue);
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kPending);
  ASSERT_TRUE(m->UpdateQueue(Q("root/a", 2)).ok());
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kPending);
  ASSERT_TRUE(m->Release("j1", 1).ok());  // 1 + 1 (j3) + 6 <= 10
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kInqueue);
}

TEST(ReferenceChoices, OvercommitProductIsAPlainDouble) {
  // 0.7 × 10000 is 7000 as a double (0.7 itself is slightly below 0.7).
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a")}, 0.7);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j", "root/a", 7, {{"cpu", kCpu}}), 7));
  EXPECT_EQ(JobView(*m, "j").state, JobState::kInqueue);
}

TEST(ReferenceChoices, NewQueueUnderAClosedParentIsClosed) {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/p/c")});
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->SetQueueState("root/p", QueueState::kClosing).ok());
  ASSERT_TRUE(m->CreateQueue(Q("root/p/d")).ok());
  EXPECT_FALSE(m->Submit(J("j", "root/p/d", 1, {{"cpu", kCpu}})).ok());
  ASSERT_TRUE(m->SetQueueState("root/p", QueueState::kOpen).ok());
  EXPECT_FALSE(m->Submit(J("j", "root/p/d", 1, {{"cpu", kCpu}})).ok());  // d is closing
  ASSERT_TRUE(m->SetQueueState("root/p/d", QueueState::kOpen).ok());
  EXPECT_TRUE(m->Submit(J("j", "root/p/d", 1, {{"cpu", kCpu}})).ok());
}

// ---------------------------------------------------------------------------
// Randomised invariants of Step/Fill from an empty allocation
// ---------------------------------------------------------------------------

std::string Numbered(const std::string& prefix, int i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

TEST(ReferenceRandom, FillRespectsCapacityCapabilityAndFit) {
  std::mt19937 rng(12345);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 20; ++round) {
    const ResourceAmounts cluster = {{"cpu", uni(4, 40) * kCpu}, {"memory", uni(4, 40) * kGi},
                                     {kGpuName, uni(0, 8) * kGpu}};
    std::vector<QueueSpec> specs;
    std::vector<std::string> leaves;
    std::map<std::string, int64_t> cpu_cap;
    for (int i = 0; i < 3; ++i) {
      const std::string p = Numbered("root/p", i);
      QueueSpec ps = Q(p, uni(1, 3));
      if (uni(0, 2) == 0) ps.capability["cpu"] = uni(2, 20) * kCpu;
      if (uni(0, 1) == 0) {  // at most a third of the cluster, within the capability
        int64_t g = uni(0, static_cast<int>(cluster.at("cpu") / kCpu / 3)) * kCpu;
        if (ps.capability.count("cpu")) g = std::min(g, ps.capability["cpu"]);
        ps.guarantee["cpu"] = g;
      }
      specs.push_back(ps);
      for (int k = 0; k < uni(1, 3); ++k) {
        const std::string l = Numbered(p + "/l", k);
        QueueSpec ls = Q(l, uni(1, 4));
        if (uni(0, 3) == 0) ls.min_user_limit_percent = uni(20, 99);
        specs.push_back(ls);
        leaves.push_back(l);
      }
    }
    auto m = Make(cluster, specs);
    ASSERT_NE(m, nullptr);
    std::map<std::string, JobSpec> jobs;
    for (int j = 0; j < 15; ++j) {
      ResourceAmounts task = {{"cpu", uni(0, 4) * 500}, {"memory", uni(0, 4) * (kGi / 2)}};
      if (cluster.at(kGpuName) > 0 && uni(0, 2) == 0) task[kGpuName] = kGpu;
      JobSpec spec = J(Numbered("j", j), leaves[uni(0, static_cast<int>(leaves.size()) - 1)],
                       uni(0, 12), task, Numbered("u", uni(0, 2)), uni(1, 3));
      auto leaf = m->Submit(spec);
      ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();
      jobs[spec.name] = spec;
    }
    int64_t steps = 0;
    while (true) {
      auto next = m->PickNext();
      if (!next.has_value()) break;
      EXPECT_TRUE(JobView(*m, *next).schedulable) << *next;
      EXPECT_EQ(m->Step(), next);
      ASSERT_LT(++steps, 10000);
    }
    for (const auto& j : m->Jobs()) {
      EXPECT_FALSE(j.schedulable) << j.name;
      EXPECT_LE(j.allocated, j.tasks);
    }
    // Σ allocations <= T; every queue within its capability.
    std::map<std::string, ResourceAmounts> usage;
    for (const auto& j : m->Jobs()) {
      for (const auto& [r, v] : jobs.at(j.name).task) {
        for (std::string q = j.queue;; q = q.substr(0, q.rfind('/'))) {
          usage[q][r] += v * j.allocated;
          if (q == "root") break;
        }
      }
    }
    for (const auto& [r, t] : cluster) EXPECT_LE(usage["root"][r], t) << r;
    for (const auto& s : specs)
      for (const auto& [r, c] : s.capability) EXPECT_LE(usage[s.path][r], c) << s.path;
  }
}

}  // namespace
}  // namespace hdrf::ref
