// Unit tests of the reference model: the enqueue gate (§12), gangs (§14)
// and the §8 decisions under the §15 transfer rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/reference/reference_model.h"
#include "tests/reference/reference_test_util.h"

namespace hdrf::ref {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testutil;  // NOLINT: the helpers of reference_test_util.h

// ---------------------------------------------------------------------------
// Enqueue gate (§12, semantics items 5, 12)
// ---------------------------------------------------------------------------

TEST(ReferenceGate, OffByDefault) {
  auto m = Make({{"cpu", 1 * kCpu}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j", "root/a", 100, {{"cpu", kCpu}}), 100));
  EXPECT_EQ(JobView(*m, "j").state, JobState::kInqueue);
}

TEST(ReferenceGate, OvercommitSums) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a"), Q("root/b")}, 1.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j1", "root/a", 6, {{"cpu", kCpu}}), 6));
  EXPECT_EQ(JobView(*m, "j1").state, JobState::kInqueue);  // 0 + 0 + 6 <= 10
  MustSubmit(*m, WithMin(J("j2", "root/b", 6, {{"cpu", kCpu}}), 6));
  auto j2 = JobView(*m, "j2");
  EXPECT_EQ(j2.state, JobState::kPending);  // 0 + 6 + 6 > 10
  EXPECT_TRUE(j2.blocked);
  EXPECT_FALSE(j2.schedulable);
  EXPECT_EQ(m->Fill(), 1);  // §14: j1 is a gang of 6, started in one step
  EXPECT_EQ(Allocated(*m, "j1"), 6);
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kPending);  // 6 + 0 + 6 > 10
  ASSERT_TRUE(m->Release("j1", 2).ok());                   // 4 + 0 + 6 <= 10
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kInqueue);
  EXPECT_EQ(JobView(*m, "j1").state, JobState::kRunning);
  // b (share 0) comes first; its gang of 6 fits in the 6 free CPUs and
  // starts in one step; then nothing is free.
  EXPECT_EQ(m->Fill(), 1);
  EXPECT_EQ(Allocated(*m, "j1"), 4);
  EXPECT_EQ(Allocated(*m, "j2"), 6);
}

TEST(ReferenceGate, RealCapabilityOfTheLeaf) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a", 1, {{"cpu", 3 * kCpu}})}, 2.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j1", "root/a", 4, {{"cpu", kCpu}}), 4));
  EXPECT_EQ(JobView(*m, "j1").state, JobState::kPending);  // 4 > realcap 3
  MustSubmit(*m, WithMin(J("j2", "root/a", 4, {{"cpu", kCpu}}), 3));
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kInqueue);
  MustSubmit(*m, WithMin(J("j3", "root/a", 4, {{"cpu", kCpu}}), 1));
  EXPECT_EQ(JobView(*m, "j3").state, JobState::kPending);  // 3 (j2) + 1 > 3
}

TEST(ReferenceGate, GuaranteeLeft) {
  // The overcommit sums fail (f = 0.1), so only the guarantee admits.
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/g", 1, {}, {{"cpu", 5 * kCpu}}), Q("root/o")}, 0.1);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("g1", "root/g", 5, {{"cpu", kCpu}}), 3));
  EXPECT_EQ(JobView(*m, "g1").state, JobState::kInqueue);  // 3 <= 5 − 0 − 0
  MustSubmit(*m, WithMin(J("g2", "root/g", 5, {{"cpu", kCpu}}), 3));
  EXPECT_EQ(JobView(*m, "g2").state, JobState::kPending);  // 3 > 5 − 0 − 3
  MustSubmit(*m, WithMin(J("o1", "root/o", 5, {{"cpu", kCpu}}), 1));
  EXPECT_EQ(JobView(*m, "o1").state, JobState::kPending);  // no guarantee
  // g1 runs 2 tasks: its minimum no longer counts, its usage does.
  ASSERT_TRUE(m->Allocate("g1", 2).ok());
  EXPECT_EQ(JobView(*m, "g2").state, JobState::kPending);  // not re-examined on allocate
  ASSERT_TRUE(m->Release("g1", 1).ok());                   // 3 <= 5 − 1 − 0
  EXPECT_EQ(JobView(*m, "g2").state, JobState::kInqueue);
  EXPECT_EQ(JobView(*m, "o1").state, JobState::kPending);
  // Removal re-examines in submission order.
  ASSERT_TRUE(m->Remove("g2").ok());
  EXPECT_EQ(JobView(*m, "o1").state, JobState::kPending);
}

TEST(ReferenceGate, CapacityChangeAndFinishReexamine) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a")}, 1.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("big", "root/a", 12, {{"cpu", kCpu}}), 10));
  EXPECT_EQ(JobView(*m, "big").state, JobState::kInqueue);
  MustSubmit(*m, WithMin(J("p1", "root/a", 2, {{"cpu", kCpu}}), 2));
  MustSubmit(*m, WithMin(J("p2", "root/a", 2, {{"cpu", kCpu}}), 2));
  EXPECT_EQ(JobView(*m, "p1").state, JobState::kPending);
  EXPECT_EQ(m->Fill(), 1);  // §14: the gang of 10 in one step; then the cluster is full
  EXPECT_EQ(Allocated(*m, "big"), 10);
  ASSERT_TRUE(m->Finish("big", 3).ok());  // 7 + 2 <= 10: p1; then 7 + 2 + 2 > 10
  EXPECT_EQ(JobView(*m, "p1").state, JobState::kInqueue);
  EXPECT_EQ(JobView(*m, "p2").state, JobState::kPending);
  ASSERT_TRUE(m->SetCapacity({{"cpu", 11 * kCpu}}).ok());
  EXPECT_EQ(JobView(*m, "p2").state, JobState::kInqueue);
  ASSERT_TRUE(m->Release("big", 7).ok());
  EXPECT_EQ(JobView(*m, "big").state, JobState::kInqueue);  // back to Inqueue at 0
}

// ---------------------------------------------------------------------------
// Gangs (§14)
// ---------------------------------------------------------------------------

TEST(ReferenceGang, AGangLargerThanItsJobIsCappedAtItsTasks) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("g", "root/a", 3, {{"cpu", kCpu}}), 4));
  EXPECT_EQ(JobView(*m, "g").step_tasks, 3);  // m capped at the 3 tasks
  ASSERT_EQ(m->Step(), std::optional<std::string>("g"));
  EXPECT_EQ(JobView(*m, "g").allocated, 3);
  // minAvailable 0 or 1 is fine for any task count, 0 included.
  MustSubmit(*m, WithMin(J("z0", "root/a", 0, {{"cpu", kCpu}}), 0));
  MustSubmit(*m, WithMin(J("z1", "root/a", 0, {{"cpu", kCpu}}), 1));
  MustSubmit(*m, WithMin(J("g3", "root/a", 3, {{"cpu", kCpu}}), 3));
}

// 4 CPUs; h (root/b) runs 2. g (root/a, gang of 3 CPUs of 1) holds nothing:
// one task would fit (2 free) but 3 do not, so g is not schedulable and
// the fill serves h although a's share (0) is the smaller. Once 3 CPUs are
// free, one step starts g with 3 tasks; after that g grows one at a time.
TEST(ReferenceGang, StartsWithMTasksAtOnceOrNotAtAll) {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("h", "root/b", 4, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("h", 2).ok());
  MustSubmit(*m, WithMin(J("g", "root/a", 4, {{"cpu", kCpu}}), 3));
  EXPECT_FALSE(JobView(*m, "g").schedulable);
  EXPECT_EQ(JobView(*m, "g").step_tasks, 3);
  EXPECT_EQ(JobView(*m, "h").step_tasks, 1);
  EXPECT_EQ(m->PickNext(), "h");
  ASSERT_TRUE(m->Release("h", 1).ok());  // 3 free
  EXPECT_TRUE(JobView(*m, "g").schedulable);
  EXPECT_EQ(m->Step(), "g");
  EXPECT_EQ(Allocated(*m, "g"), 3);
  EXPECT_EQ(JobView(*m, "g").step_tasks, 1);
  EXPECT_EQ(m->Step(), std::nullopt);  // full
  ASSERT_TRUE(m->Remove("h").ok());
  EXPECT_EQ(m->Step(), "g");  // g holds tasks: one more
  EXPECT_EQ(Allocated(*m, "g"), 4);
}

// Every §6 inequality with m·task: a capability of 5 CPUs on root/a lets a
// gang of 3 (2 CPUs each, 6) never start, while a job of the same shape
// without a gang runs 2 tasks.
TEST(ReferenceGang, CapabilityCountsTheWholeGang) {
  auto m = Make({{"cpu", 20 * kCpu}}, {Q("root/a", 1, {{"cpu", 5 * kCpu}})});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("g", "root/a", 3, {{"cpu", 2 * kCpu}}), 3));
  MustSubmit(*m, J("s", "root/a", 3, {{"cpu", 2 * kCpu}}));
  EXPECT_EQ(CheckedFill(*m), 2);
  EXPECT_EQ(Allocated(*m, "g"), 0);
  EXPECT_EQ(Allocated(*m, "s"), 2);
}

// m is capped at the job's current task count, which finish lowers: a gang
// of 4 that finished 2 of its tasks and released the other 2 restarts with
// 2 tasks at once. minAvailable 0 counts as 1.
TEST(ReferenceGang, GangSizeCappedByFinishAndZeroCountsAsOne) {
  auto m = Make({{"cpu", 3 * kCpu}}, {Q("root/a")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("g", "root/a", 4, {{"cpu", kCpu}}), 4));
  EXPECT_FALSE(JobView(*m, "g").schedulable);  // 4 CPUs do not fit in 3
  ASSERT_TRUE(m->SetCapacity({{"cpu", 4 * kCpu}}).ok());
  EXPECT_EQ(m->Step(), "g");
  EXPECT_EQ(Allocated(*m, "g"), 4);
  ASSERT_TRUE(m->Finish("g", 2).ok());
  ASSERT_TRUE(m->Release("g", 2).ok());
  ASSERT_TRUE(m->SetCapacity({{"cpu", 3 * kCpu}}).ok());
  EXPECT_EQ(m->Step(), "g");
  EXPECT_EQ(Allocated(*m, "g"), 2);
  MustSubmit(*m, WithMin(J("z", "root/a", 2, {{"cpu", kCpu}}), 0));
  EXPECT_EQ(m->Step(), "z");
  EXPECT_EQ(Allocated(*m, "z"), 1);
}

// m is capped at the task count: a job of 0 tasks has m = 0, and as an
// Inqueue job its minimum in the gate is nothing (not one task).
TEST(ReferenceGang, GateCountsAJobOfNoTaskAsNothing) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a")}, 1.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("empty", "root/a", 0, {{"cpu", kCpu}}), 1));
  EXPECT_EQ(JobView(*m, "empty").state, JobState::kInqueue);  // 0 + 0 + 0 <= 10
  MustSubmit(*m, WithMin(J("j1", "root/a", 10, {{"cpu", kCpu}}), 10));
  EXPECT_EQ(JobView(*m, "j1").state, JobState::kInqueue);  // 0 + 0 (empty's m = 0) + 10 <= 10
}

// The enqueue gate uses the same m: minAvailable 0 asks for one task.
TEST(ReferenceGang, GateCountsZeroAsOne) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a")}, 1.0);
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, WithMin(J("j1", "root/a", 10, {{"cpu", kCpu}}), 10));
  MustSubmit(*m, WithMin(J("j2", "root/a", 5, {{"cpu", kCpu}}), 0));
  EXPECT_EQ(JobView(*m, "j1").state, JobState::kInqueue);  // 0 + 0 + 10 <= 10
  EXPECT_EQ(JobView(*m, "j2").state, JobState::kPending);  // 0 + 10 + 1 > 10
}

// ---------------------------------------------------------------------------
// Decisions (§8) by the transfer rule of §15
// ---------------------------------------------------------------------------

// The simplest reclaim that the old what-if rule refused: one resource,
// all of it used by root/b. a and b have weight 1. w's 1 CPU against one
// of hb's: before d(a) = 0 < d(b) = 1; after d(a + D) = .25 <= d(b - u) =
// .75. At 2 vs 2 the taker is no longer below: refused both ways.
TEST(ReferenceDecisions, ReclaimOnAFullOneResourceCluster) {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("hb", "root/b", 4, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("hb", 4).ok());
  MustSubmit(*m, J("w", "root/a", 3, {{"cpu", kCpu}}));
  EXPECT_THAT(*m->Reclaimable("w", {"hb", "hb", "w"}), ElementsAre(true, true, false));
  ASSERT_TRUE(m->Release("hb", 1).ok());
  ASSERT_TRUE(m->Allocate("w", 1).ok());
  EXPECT_THAT(*m->Reclaimable("w", {"hb"}), ElementsAre(true));  // .5 <= .5 after
  ASSERT_TRUE(m->Release("hb", 1).ok());
  ASSERT_TRUE(m->Allocate("w", 1).ok());
  EXPECT_THAT(*m->Reclaimable("w", {"hb"}), ElementsAre(false));  // .5 < .5 is false
  EXPECT_THAT(*m->Reclaimable("hb", {"w"}), ElementsAre(false));
}

// Preempt compares the two jobs' plain dominant shares over their weights;
// each victim on its own (a job listed twice answers twice the same).
// 10 CPUs in one leaf: p (weight 1) holds 1, v1 (weight 1) 3, v2 (weight
// 4) 4. D = 1 CPU. v1: before .1 < .3, after .2 <= .2: true. v2: before
// .1 < .4/4 = .1 is false. Another leaf's job and a job with nothing
// running are false.
TEST(ReferenceDecisions, PreemptComparesJobsOverTheirWeights) {
  auto m = Make({{"cpu", 10 * kCpu}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("p", "root/a", 5, {{"cpu", kCpu}}));
  MustSubmit(*m, J("v1", "root/a", 5, {{"cpu", kCpu}}));
  MustSubmit(*m, J("v2", "root/a", 5, {{"cpu", kCpu}}, "default", 4));
  MustSubmit(*m, J("o", "root/b", 5, {{"cpu", kCpu}}));
  MustSubmit(*m, J("idle", "root/a", 5, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("p", 1).ok());
  ASSERT_TRUE(m->Allocate("v1", 3).ok());
  ASSERT_TRUE(m->Allocate("v2", 4).ok());
  ASSERT_TRUE(m->Allocate("o", 1).ok());
  EXPECT_THAT(*m->Preemptable("p", {"v1", "v1", "v2", "o", "idle", "p"}),
              ElementsAre(true, true, false, false, false, false));
  // v1 is in p's leaf; o: d(a) = .8 is not below d(b) = .1, and a has no
  // guarantee.
  EXPECT_THAT(*m->Reclaimable("p", {"v1", "o"}), ElementsAre(false, false));
  EXPECT_EQ(m->Preemptable("nope", {"v1"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(m->Preemptable("p", {"nope"}).status().code(), StatusCode::kNotFound);
}

// Reclaim condition 1 and the guarantee clause. root/n is not reclaimable:
// it protects its subtree from root/a, not n/x from n/y. root/g holds its
// guarantee of 2 CPUs exactly: taking one would drop it below. root/q (in
// root/x, which may hold 4 CPUs) is below its guarantee of 2: it may take
// back although its share becomes the higher one.
TEST(ReferenceDecisions, ReclaimableFlagsGuaranteesAndTheGuaranteeClause) {
  auto m = Make({{"cpu", 20 * kCpu}},
                {Q("root/a"), Q("root/n"), Q("root/n/x"), Q("root/n/y"), Q("root/g", 1, {}, {{"cpu", 2 * kCpu}}),
                 Q("root/x", 1, {{"cpu", 4 * kCpu}}), Q("root/x/p", 4), Q("root/x/q", 1, {}, {{"cpu", 2 * kCpu}})});
  ASSERT_NE(m, nullptr);
  QueueSpec n = Q("root/n");
  n.reclaimable = false;
  ASSERT_TRUE(m->UpdateQueue(n).ok());
  for (const char* name : {"ja", "jy", "jq"}) {
    const std::string leaf = std::string(name) == "ja" ? "root/a" : std::string(name) == "jy" ? "root/n/y" : "root/x/q";
    MustSubmit(*m, J(name, leaf, 4, {{"cpu", kCpu}}));
  }
  MustSubmit(*m, J("hx", "root/n/x", 8, {{"cpu", kCpu}}));
  MustSubmit(*m, J("hg", "root/g", 2, {{"cpu", kCpu}}));
  MustSubmit(*m, J("hp", "root/x/p", 4, {{"cpu", kCpu}}));
  ASSERT_TRUE(m->Allocate("hx", 8).ok());
  ASSERT_TRUE(m->Allocate("hg", 2).ok());
  ASSERT_TRUE(m->Allocate("hp", 4).ok());
  // ja: hx's path below root holds root/n (not reclaimable); hg's guarantee;
  // hp: before 0 < d(x) = .2, after .05 <= .15: true.
  EXPECT_THAT(*m->Reclaimable("ja", {"hx", "hg", "hp"}), ElementsAre(false, false, true));
  // jy: below C = root/n only n/x, reclaimable: before 0 < .4, after .05 <= .35.
  EXPECT_THAT(*m->Reclaimable("jy", {"hx"}), ElementsAre(true));
  // jq against hp (C = root/x, A = q, B = p with weight 4): before 0 <
  // .2/4 = .05, after .05 <= .15/4 = .0375 is false; the guarantee clause:
  // 0 + 1 <= 2: true.
  EXPECT_THAT(*m->Reclaimable("jq", {"hp"}), ElementsAre(true));
  ASSERT_TRUE(m->Release("hp", 2).ok());
  ASSERT_TRUE(m->Allocate("jq", 2).ok());
  // q holds 2 = its guarantee: the clause no longer helps (3 > 2), and the
  // share clause fails (before .1 < .1/4 is false).
  EXPECT_THAT(*m->Reclaimable("jq", {"hp"}), ElementsAre(false));
  // hp asking back from jq: q would drop below its guarantee.
  EXPECT_THAT(*m->Reclaimable("hp", {"jq"}), ElementsAre(false));
}

}  // namespace
}  // namespace hdrf::ref
