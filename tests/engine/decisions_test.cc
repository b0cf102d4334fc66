// docs/spec.md §5 comparators and §8 preemption/reclaim decisions (the transfer
// rule of §15) on worked cases.
#include <gtest/gtest.h>

#include "engine/tree.h"

namespace hdrf::engine {
namespace {

constexpr int64_t kCpu = 1000;
constexpr int64_t kGi = 1073741824;

QueueSpec Q(std::string path, bool reclaimable = true, ResourceAmounts guarantee = {}) {
  QueueSpec q;
  q.path = std::move(path);
  q.reclaimable = reclaimable;
  q.guarantee = std::move(guarantee);
  return q;
}

JobId Sub(Tree& t, std::string name, std::string queue, int64_t tasks, ResourceAmounts task,
          int64_t allocate) {
  JobSpec j;
  j.name = std::move(name);
  j.queue = std::move(queue);
  j.tasks = tasks;
  j.task = std::move(task);
  auto id = t.Submit(j);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  if (allocate > 0) {
    EXPECT_TRUE(t.Allocate(*id, allocate).ok());
  }
  return *id;
}

// docs/spec.md §8 with the transfer rule of §15: each victim alone, the actor's one
// task against the victim's one task, plain dominant shares over all
// resources divided by the jobs' weights.
TEST(DecisionsTest, PreemptableUsesTheTransferRule) {
  auto t = std::move(Tree::Create({{"cpu", 10 * kCpu}}, {Q("root/a"), Q("root/b")})).value();
  JobId big = Sub(*t, "big", "root/a", 10, {{"cpu", kCpu}}, 5);
  JobId small = Sub(*t, "small", "root/a", 10, {{"cpu", kCpu}}, 1);
  JobId mid = Sub(*t, "mid", "root/a", 10, {{"cpu", kCpu}}, 3);
  JobId other = Sub(*t, "other", "root/b", 10, {{"cpu", kCpu}}, 1);
  // small .1 < big .5 before; after small .2 <= big .4. Listed twice: judged
  // twice on the same state.
  EXPECT_EQ(*t->Preemptable(small, {big, big}), (std::vector<bool>{true, true}));
  // mid .3 < big .5 before, but after mid .4 > big .4? equal: permitted;
  // big .5 is not below small .1: refused.
  EXPECT_EQ(*t->Preemptable(mid, {big}), std::vector<bool>{true});
  EXPECT_EQ(*t->Preemptable(big, {small}), std::vector<bool>{false});
  // mid .3 < ... small .1: not below before; and after small's task mid
  // would be .4 > small 0.
  EXPECT_EQ(*t->Preemptable(mid, {small}), std::vector<bool>{false});
  // Other queues and the job itself are never victims of preemption.
  EXPECT_EQ(*t->Preemptable(small, {other, small}), (std::vector<bool>{false, false}));
  EXPECT_FALSE(t->Preemptable(999, {big}).ok());
}

class ReclaimTest : public ::testing::Test {
 protected:
  void Build(bool a_reclaimable, ResourceAmounts a_guarantee) {
    t = std::move(Tree::Create({{"cpu", 10 * kCpu}, {"memory", 100 * kGi}},
                               {Q("root/a", a_reclaimable, a_guarantee), Q("root/b")}))
            .value();
    hog = Sub(*t, "hog", "root/a", 10, {{"cpu", kCpu}, {"memory", kGi}}, 10);
    hog2 = Sub(*t, "hog2", "root/a", 2, {{"cpu", 0}, {"memory", kGi}}, 2);
    want = Sub(*t, "want", "root/b", 4, {{"cpu", kCpu}, {"memory", kGi}}, 0);
  }
  std::unique_ptr<Tree> t;
  JobId hog = 0, hog2 = 0, want = 0;
};

TEST_F(ReclaimTest, UnderServedQueueReclaimsFromOverServed) {
  Build(true, {});
  const uint64_t digest = t->Digest();
  // The transfer rule on plain dominant shares (saturated resources count):
  // b 0 < a max(10/10, 12/100) = 1 before; after, b + (1 cpu, 1 Gi) = .1 is
  // at most a minus hog's task (.9) or hog2's memory-only task (1). The
  // rule is pairwise: whether the unit frees what want needs is a plan's
  // question (§15 "helps").
  auto r = t->Reclaimable(want, {hog, hog2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<bool>{true, true}));
  EXPECT_EQ(t->Digest(), digest);  // nothing changed
  EXPECT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
  ASSERT_FALSE(t->Allocate(want, 1).ok());  // the cluster is full
  EXPECT_FALSE(t->Reclaimable(hog2, {hog}).ok());  // hog2 has no task left to place
}

TEST_F(ReclaimTest, NonReclaimableQueueIsProtected) {
  Build(false, {});
  EXPECT_EQ(*t->Reclaimable(want, {hog}), (std::vector<bool>{false}));
}

TEST_F(ReclaimTest, GuaranteeIsProtected) {
  Build(true, {{"cpu", 10 * kCpu}});
  // hog's cpu would fall below root/a's guarantee.
  EXPECT_EQ(*t->Reclaimable(want, {hog}), (std::vector<bool>{false}));
}

// docs/semantics.md item 13: the actor must have a task to place.
TEST(DecisionsTest, PreemptorNeedsATaskToPlace) {
  auto t = std::move(Tree::Create({{"cpu", 10 * kCpu}}, {Q("root/a")})).value();
  JobId full = Sub(*t, "full", "root/a", 2, {{"cpu", kCpu}}, 2);
  JobId big = Sub(*t, "big", "root/a", 8, {{"cpu", kCpu}}, 8);
  auto r = t->Preemptable(full, {big});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(t->Reclaimable(full, {big}).ok());
}

// Item 13: a non-reclaimable parent protects its subtree from outsiders,
// not its children from one another.
TEST(DecisionsTest, NonReclaimableParentGuardsOnlyAgainstOutsiders) {
  auto t = std::move(Tree::Create({{"cpu", 10 * kCpu}},
                                  {Q("root/p", false), Q("root/p/x"), Q("root/p/y"), Q("root/z")}))
               .value();
  JobId hog = Sub(*t, "hog", "root/p/y", 10, {{"cpu", kCpu}}, 8);
  JobId want = Sub(*t, "want", "root/p/x", 4, {{"cpu", kCpu}}, 0);
  JobId out = Sub(*t, "out", "root/z", 4, {{"cpu", kCpu}}, 0);
  EXPECT_EQ(*t->Reclaimable(want, {hog, hog}), (std::vector<bool>{true, true}));
  EXPECT_EQ(*t->Reclaimable(out, {hog}), std::vector<bool>{false});
}

// Item 13: a common ancestor falls below its guarantee only where the move
// lowers its usage (the victim's task holds more of the resource).
TEST(DecisionsTest, CommonAncestorGuaranteeCountsTheNetChange) {
  auto t = std::move(Tree::Create({{"cpu", 10 * kCpu}, {"memory", 10 * kGi}},
                                  {Q("root/p", true, {{"memory", 6 * kGi}}), Q("root/p/x"), Q("root/p/y")}))
               .value();
  JobId y = Sub(*t, "y", "root/p/y", 4, {{"cpu", kCpu}, {"memory", kGi}}, 4);  // p: 4 Gi of 6
  JobId cpu_only = Sub(*t, "cpu_only", "root/p/x", 2, {{"cpu", kCpu}}, 0);
  JobId same = Sub(*t, "same", "root/p/x", 2, {{"cpu", kCpu}, {"memory", kGi}}, 0);
  EXPECT_EQ(*t->Reclaimable(cpu_only, {y}), std::vector<bool>{false});  // p: 3 Gi < 6 Gi
  EXPECT_EQ(*t->Reclaimable(same, {y}), std::vector<bool>{true});       // p stays at 4 Gi
}

TEST(DecisionsTest, QueueAndJobOrder) {
  auto t = std::move(Tree::Create({{"cpu", 10 * kCpu}}, {Q("root/x/a"), Q("root/x/b"), Q("root/y")})).value();
  JobId a = Sub(*t, "a", "root/x/a", 10, {{"cpu", kCpu}}, 3);
  JobId b = Sub(*t, "b", "root/x/b", 10, {{"cpu", kCpu}}, 1);
  JobId a2 = Sub(*t, "a2", "root/x/a", 10, {{"cpu", kCpu}}, 3);
  Sub(*t, "y", "root/y", 10, {{"cpu", kCpu}}, 1);
  QueueId qa = *t->FindQueue("root/x/a"), qb = *t->FindQueue("root/x/b"), qy = *t->FindQueue("root/y");
  EXPECT_GT(t->CompareQueues(qa, qb), 0);  // a holds more
  EXPECT_LT(t->CompareQueues(qb, qa), 0);
  EXPECT_EQ(t->CompareQueues(qa, qa), 0);
  // root/x: children a (0.6) and b (0.1) rescaled to M = 0.1 give
  // U = 1 + 1 = 2 CPU, share 0.2 > root/y's 0.1.
  EXPECT_GT(t->CompareQueues(qa, qy), 0);
  EXPECT_LT(t->CompareQueues(qy, qa), 0);
  EXPECT_LT(t->CompareJobs(a, a2), 0);  // equal shares: earlier submitted first
  EXPECT_GT(t->CompareJobs(a, b), 0);
}

TEST(DecisionsTest, ExplainNamesWhatBlocks) {
  QueueSpec capped = Q("root/a");
  capped.capability = {{"cpu", 2 * kCpu}};
  auto t = std::move(Tree::Create({{"cpu", 10 * kCpu}}, {capped, Q("root/b")})).value();
  JobId j = Sub(*t, "j", "root/a", 5, {{"cpu", kCpu}}, 2);
  Sub(*t, "k", "root/b", 5, {{"cpu", kCpu}}, 0);
  Explanation e = t->Explain(j);
  EXPECT_TRUE(e.blocked);
  EXPECT_FALSE(e.schedulable);
  ASSERT_FALSE(e.blocked_by.empty());
  EXPECT_NE(e.blocked_by[0].find("queue root/a reached its capability in cpu"), std::string::npos)
      << e.blocked_by[0];
  ASSERT_EQ(e.levels.size(), 2u);
  EXPECT_EQ(e.levels[0].parent, "root");
  EXPECT_EQ(e.levels[0].siblings.size(), 2u);
  EXPECT_EQ(e.levels[0].siblings[0].name, "root/b");  // non-blocked first
  Explanation k = t->Explain(*t->FindJob("k"));
  EXPECT_TRUE(k.is_next);
  EXPECT_TRUE(k.blocked_by.empty());
}

}  // namespace
}  // namespace hdrf::engine
