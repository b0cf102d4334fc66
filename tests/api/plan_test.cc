// Engine::Plan / ApplyPlan (docs/spec.md §15) and gangs (§14) through the
// public API: the reservation story, stale plans, bad input, recovery of an
// applied plan from the log, and a gang's first step.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "hdrf/engine.h"
#include "api/facade/plan_screen.h"

namespace hdrf {
namespace {

JobSpec Job(const std::string& name, const std::string& queue, int64_t tasks, ResourceAmounts task,
            int64_t m = 1) {
  JobSpec j;
  j.name = name;
  j.queue = queue;
  j.tasks = tasks;
  j.task = std::move(task);
  j.min_available = m;
  return j;
}

std::unique_ptr<Engine> MakeEngine(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                                   const EngineOptions& o = {}) {
  auto e = Engine::Create(cluster, queues, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

QueueSpec Q(const std::string& path, ResourceAmounts guarantee = {}) {
  QueueSpec q;
  q.path = path;
  q.guarantee = std::move(guarantee);
  return q;
}

// The queue-reservation design's example: three queues share 30 GPUs and
// hold all of them; queue4 is created with a guarantee of 10 and its job
// waits; reclaim plans take tasks back until queue4 holds its guarantee,
// one task per plan, and then stop.
TEST(PlanTest, ReservationStoryReachesTheGuaranteeAndStops) {
  const std::string gpu = "nvidia.com/gpu";
  auto e = MakeEngine({{gpu, 30000}}, {Q("root/queue1"), Q("root/queue2"), Q("root/queue3")});
  for (int i = 1; i <= 3; ++i)
    ASSERT_TRUE(e->Submit(Job("j" + std::to_string(i), "root/queue" + std::to_string(i), 20, {{gpu, 1000}})).ok());
  ASSERT_EQ(*e->Fill(), 30);
  ASSERT_TRUE(e->CreateQueue(Q("root/queue4", {{gpu, 10000}})).ok());
  auto w = e->Submit(Job("w", "root/queue4", 20, {{gpu, 1000}}));
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(*e->Fill(), 0);  // the cluster is full
  int applied = 0;
  for (;;) {
    auto p = e->Plan(*w);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    if (!p->fits) {
      EXPECT_EQ(p->short_by.at(gpu), 1000);
      EXPECT_TRUE(p->victims.empty());
      break;
    }
    ASSERT_EQ(p->victims.size(), 1u);
    EXPECT_EQ(p->victims[0].tasks, 1);
    ASSERT_TRUE(e->ApplyPlan(*p).ok());
    ASSERT_LT(++applied, 100);
  }
  EXPECT_EQ(applied, 10);
  EXPECT_EQ(e->GetJob("w")->allocated, 10);
  // The 20 tasks left are split 7/7/6 (each plan takes from the largest).
  int64_t sum = 0;
  for (int i = 1; i <= 3; ++i) {
    const int64_t a = e->GetJob("j" + std::to_string(i))->allocated;
    EXPECT_GE(a, 6);
    EXPECT_LE(a, 7);
    sum += a;
  }
  EXPECT_EQ(sum, 20);
}

TEST(PlanTest, StalePlanIsAbortedAndChangesNothing) {
  auto e = MakeEngine({{"cpu", 4000}}, {Q("root/a"), Q("root/b")});
  auto h = e->Submit(Job("h", "root/b", 4, {{"cpu", 1000}}));
  ASSERT_EQ(*e->Fill(), 4);
  auto w = e->Submit(Job("w", "root/a", 4, {{"cpu", 1000}}));
  auto p = e->Plan(*w);
  ASSERT_TRUE(p.ok() && p->fits);
  ASSERT_EQ(p->victims.size(), 1u);
  // An unrelated event between plan and apply: the plan still applies.
  auto other = e->Submit(Job("x", "root/b", 1, {{"cpu", 1000}}));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(e->ApplyPlan(*p).ok());
  // A second plan (before: d(a) = .25 < d(b) = .75; after: .5 <= .5) made
  // stale by h releasing what it holds: its entry is no longer h's unit.
  auto p2 = e->Plan(*w);
  ASSERT_TRUE(p2.ok() && p2->fits);
  ASSERT_EQ(p2->victims.size(), 1u);
  ASSERT_TRUE(e->Release(*h, 3).ok());
  const std::string digest = e->DigestHex();
  const uint64_t seq = e->last_seq();
  Status s = e->ApplyPlan(*p2);
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
  EXPECT_EQ(e->DigestHex(), digest);
  EXPECT_EQ(e->last_seq(), seq);
}

// ApplyPlan checks the plan it is given, whatever it was made as: a plan
// edited by its caller (an entry's size, an entry dropped or repeated, the
// taker changed) is refused as stale when an entry is not its job's unit or
// not permitted, or the demand would not fit, and changes nothing; the same
// plan re-targeted to a job it is valid for (the simulator gives a key's
// plan to another job of the key) applies.
TEST(PlanTest, EditedPlanIsCheckedAgain) {
  auto e = MakeEngine({{"cpu", 4000}}, {Q("root/a"), Q("root/b")});
  auto h = e->Submit(Job("h", "root/b", 4, {{"cpu", 1000}}));
  ASSERT_EQ(*e->Fill(), 4);
  auto w = e->Submit(Job("w", "root/a", 4, {{"cpu", 1000}}));
  auto w2 = e->Submit(Job("w2", "root/a", 4, {{"cpu", 1000}}));
  auto hb = e->Submit(Job("hb", "root/b", 1, {{"cpu", 1000}}));  // waits in the giver's leaf
  ASSERT_TRUE(w.ok() && w2.ok() && hb.ok());
  auto p = e->Plan(*w);
  ASSERT_TRUE(p.ok() && p->fits);
  ASSERT_EQ(p->victims.size(), 1u);
  ASSERT_EQ(p->victims[0].tasks, 1);
  const std::string digest = e->DigestHex();
  auto refused = [&](const hdrf::Plan& edited, const char* what) {
    Status s = e->ApplyPlan(edited);
    EXPECT_EQ(s.code(), StatusCode::kAborted) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find("stale plan for job"), std::string::npos) << what << ": " << s.ToString();
    EXPECT_EQ(e->DigestHex(), digest) << what;
  };
  hdrf::Plan bigger = *p;
  bigger.victims[0].tasks = 2;  // not h's unit (one task)
  refused(bigger, "an entry larger than its unit");
  hdrf::Plan none = *p;
  none.victims.clear();  // the demand does not fit without it
  refused(none, "no victims");
  hdrf::Plan demand = *p;
  demand.tasks = 2;
  refused(demand, "its demand changed");
  // h's unit four times: the first three pass the order (a at 0 below b at
  // .75, .5, .25, and a + D = .25 not above what b keeps), the fourth not
  // (b would keep 0).
  hdrf::Plan four = *p;
  for (int i = 0; i < 3; ++i) four.victims.push_back(p->victims[0]);
  refused(four, "an entry not permitted");
  hdrf::Plan zero = *p;
  zero.victims[0].tasks = 0;
  refused(zero, "an entry of no task");
  hdrf::Plan own = *p;  // a taker in the victim's leaf: preemption, not reclaim
  own.id = hb->id;
  own.seq = hb->seq;
  own.job = "hb";
  refused(own, "a taker for which the entry is preemption");
  hdrf::Plan self = *p;  // the taker as its own victim
  self.victims[0] = {w2->id, w2->seq, "w2", 1};
  self.id = w2->id;
  self.seq = w2->seq;
  refused(self, "the taker as its own victim");
  // The plan as made, re-targeted to w2 (the same demand in the same leaf):
  // valid on this state, so it applies.
  hdrf::Plan moved = *p;
  moved.id = w2->id;
  moved.seq = w2->seq;
  moved.job = "w2";
  ASSERT_TRUE(e->ApplyPlan(moved).ok());
  EXPECT_EQ(e->GetJob("w2")->allocated, 1);
  EXPECT_EQ(e->GetJob("h")->allocated, 3);
  // The original, made before it, is checked on this state: still valid
  // (a at .25 below b at .75; after, .5 and .5), so it applies; a third time
  // it is not (a at .5 is not below b at .5).
  ASSERT_TRUE(e->ApplyPlan(*p).ok());
  const std::string after = e->DigestHex();
  Status s = e->ApplyPlan(*p);
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
  EXPECT_EQ(e->DigestHex(), after);
  EXPECT_EQ(e->GetJob("h")->allocated, 2);
  (void)h;
}

TEST(PlanTest, BadInputGetsAClearErrorAndChangesNothing) {
  auto e = MakeEngine({{"cpu", 4000}}, {Q("root/a"), Q("root/b")});
  auto h = e->Submit(Job("h", "root/b", 4, {{"cpu", 1000}}));
  ASSERT_EQ(*e->Fill(), 4);
  const std::string digest = e->DigestHex();
  // Unknown (removed) job.
  auto gone = e->Submit(Job("gone", "root/a", 1, {{"cpu", 1000}}));
  ASSERT_TRUE(e->Remove(*gone).ok());
  EXPECT_EQ(e->Plan(*gone).status().code(), StatusCode::kNotFound);
  // A job with every task running.
  EXPECT_EQ(e->Plan(*h).status().code(), StatusCode::kFailedPrecondition);
  // A negative maxVictims.
  auto w = e->Submit(Job("w", "root/a", 1, {{"cpu", 1000}}));
  PlanOptions o;
  o.max_victims = -1;
  EXPECT_EQ(e->Plan(*w, o).status().code(), StatusCode::kInvalidArgument);
  // A failed plan cannot be applied.
  o.max_victims = 0;
  auto failed = e->Plan(*w, o);
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE(failed->fits);
  EXPECT_EQ(e->ApplyPlan(*failed).code(), StatusCode::kFailedPrecondition);
  // A gang larger than its job.
  auto g = e->Submit(Job("g", "root/a", 2, {{"cpu", 1000}}, 3));
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("gang larger than its job"), std::string::npos);
  EXPECT_TRUE(e->Remove(*w).ok());
  EXPECT_EQ(e->DigestHex(), digest);
}

TEST(PlanTest, GangStartsWithAllItsTasksInOneStep) {
  auto e = MakeEngine({{"cpu", 8000}}, {Q("root/a"), Q("root/b")});
  auto h = e->Submit(Job("h", "root/b", 5, {{"cpu", 1000}}));
  ASSERT_EQ(*e->Fill(), 5);
  auto g = e->Submit(Job("g", "root/a", 6, {{"cpu", 1000}}, 4));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*e->Fill(), 0);  // 3 free, the gang needs 4
  auto ex = e->Explain("g");
  ASSERT_TRUE(ex.ok());
  EXPECT_FALSE(ex->schedulable);
  ASSERT_TRUE(e->Release(*h, 1).ok());
  const uint64_t seq = e->last_seq();
  auto step = e->Step();
  ASSERT_TRUE(step.ok() && step->has_value());
  EXPECT_EQ((*step)->seq, g->seq);
  EXPECT_EQ(e->last_seq(), seq + 1);  // one event
  EXPECT_EQ(e->GetJob("g")->allocated, 4);
}

// A small deterministic generator: rnd(n) is in [0, n).
struct Rnd {
  explicit Rnd(uint64_t seed) : x(seed * 0x9E3779B97F4A7C15ull) {}
  int operator()(int n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<int>(x % static_cast<uint64_t>(n));
  }
  uint64_t x;
};

// One queue per path, each of weight 1 + rnd(weights).
std::vector<QueueSpec> RandomWeights(const std::vector<const char*>& paths, Rnd& rnd, int weights) {
  std::vector<QueueSpec> qs;
  for (const char* p : paths) {
    QueueSpec q = Q(p);
    q.weight = 1 + rnd(weights);
    qs.push_back(q);
  }
  return qs;
}

// A host's map of the queues (Engine::Queues): parents and ids by path.
struct QueueMaps {
  std::map<QueueId, QueueId> parent;
  std::map<std::string, QueueId> id_of;
  QueueId ids = 0;  // above every id
  explicit QueueMaps(const Engine& e) {
    for (const QueueInfo& q : e.Queues()) {
      for (QueueId c : q.children) parent[c] = q.id;
      id_of[q.path] = q.id;
      ids = std::max(ids, q.id + 1);
    }
  }
  // Adds n to (*counts)[q] and to each ancestor's.
  void Add(QueueId q, int64_t n, std::vector<int64_t>* counts) const {
    for (;; q = parent.at(q)) {
      (*counts)[q] += n;
      if (!parent.count(q)) break;
    }
  }
};

// Of refs' jobs with an unallocated task, a third (at random) go to *skips
// (passed over); the others are counted in *untried (their leaf and its
// ancestors) and given to each(ref, job, leaf).
template <typename Each>
void PassOverSome(const Engine& e, const std::vector<JobRef>& refs, Rnd& rnd, const QueueMaps& maps,
                  PlacementSkips* skips, std::vector<int64_t>* untried, Each each) {
  for (const JobRef& r : refs) {
    auto j = e.GetJob(r);
    EXPECT_TRUE(j.ok());
    if (!j.ok() || j->allocated >= j->tasks) continue;
    if (rnd(3) == 0) {
      skips->Add(r);
      continue;
    }
    const QueueId leaf = maps.id_of.at(j->queue);
    maps.Add(leaf, 1, untried);
    each(r, *j, leaf);
  }
}

// WaitingOrder is the order of successive FirstWaiting calls (each passing
// over the ones before), on states with ties, blocked jobs and gangs.
TEST(PlanTest, WaitingOrderIsSuccessiveFirstWaiting) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rnd rnd(seed);
    const char* leaves[] = {"root/a/x", "root/a/y", "root/b", "root/c/z"};
    auto e = MakeEngine({{"cpu", 20000}, {"memory", 20000}},
                        RandomWeights({std::begin(leaves), std::end(leaves)}, rnd, 3));
    for (int i = 0; i < 16; ++i) {
      const int64_t tasks = 1 + rnd(5);
      ResourceAmounts shape{{"cpu", 1000 * (1 + rnd(3))}};
      if (rnd(2)) shape["memory"] = 1000 * (1 + rnd(3));
      ASSERT_TRUE(e->Submit(Job("j" + std::to_string(i), leaves[rnd(4)], tasks, shape, 1 + rnd(static_cast<int>(tasks))))
                      .ok());
      if (rnd(3) == 0) (void)e->Fill();
    }
    std::vector<JobRef> order = e->WaitingOrder();
    PlacementSkips tried;
    std::vector<JobRef> one_by_one;
    while (auto j = e->FirstWaiting(&tried)) {
      one_by_one.push_back(*j);
      tried.Add(*j);
    }
    ASSERT_EQ(order.size(), one_by_one.size()) << "seed " << seed;
    for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i].seq, one_by_one[i].seq) << "seed " << seed << " at " << i;
  }
}

// WaitingLeaves on wide trees (up to 14 children per queue): every limit
// gives the first leaves of WaitingOrder, and so do pieces of a walk
// (NextWaitingLeaves) with the leaves given passed over in between, on
// states with ties (equal weights, empty queues).
TEST(PlanTest, WaitingLeavesOnWideTrees) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rnd rnd(seed);
    std::vector<std::string> paths;
    for (int g = 0; g < 12; ++g)
      for (int l = 0; l <= (g * 5 + static_cast<int>(seed)) % 12; ++l)
        paths.push_back("root/g" + std::to_string(10 + g) + "/q" + std::to_string(10 + l));
    for (int l = 0; l < 2; ++l) paths.push_back("root/l" + std::to_string(l));
    std::vector<const char*> cpaths;
    for (const std::string& p : paths) cpaths.push_back(p.c_str());
    auto e = MakeEngine({{"cpu", 40000}, {"memory", 40000}}, RandomWeights(cpaths, rnd, 2));
    std::vector<JobRef> refs;
    for (int i = 0; i < 160; ++i) {
      const int64_t tasks = 1 + rnd(3);
      ResourceAmounts shape{{"cpu", 1000 * (1 + rnd(2))}};
      if (rnd(2)) shape["memory"] = 1000;
      auto r = e->Submit(Job("j" + std::to_string(i), paths[rnd(static_cast<int>(paths.size()))], tasks, shape));
      ASSERT_TRUE(r.ok());
      refs.push_back(*r);
      if (rnd(8) == 0) (void)e->Fill();
    }
    const QueueMaps maps(*e);
    const std::map<std::string, QueueId>& id_of = maps.id_of;
    std::vector<int64_t> untried(maps.ids, 0);
    PlacementSkips skips;
    PassOverSome(*e, refs, rnd, maps, &skips, &untried, [](const JobRef&, const JobInfo&, QueueId) {});
    std::vector<QueueId> expected;
    for (const JobRef& r : e->WaitingOrder(&skips)) {
      const QueueId leaf = id_of.at(e->GetJob(r)->queue);
      if (expected.empty() || expected.back() != leaf) expected.push_back(leaf);
    }
    ASSERT_GT(expected.size(), size_t{20}) << "seed " << seed;
    PlanSession session(*e);
    for (size_t limit : {size_t{1}, size_t{3}, size_t{8}, size_t{9}, size_t{15}, size_t{40}, size_t{1000}}) {
      const std::vector<QueueId> want(expected.begin(), expected.begin() + std::min(limit, expected.size()));
      std::vector<QueueId> got;
      session.WaitingLeaves(untried, limit, &got);
      EXPECT_EQ(got, want) << "seed " << seed << " limit " << limit;
    }
    // In pieces (NextWaitingLeaves), each leaf given passed over before the
    // next piece, as the reclaim phase does: the same leaves.
    for (size_t piece : {size_t{1}, size_t{3}, size_t{7}}) {
      std::vector<int64_t> left = untried;
      LeafWalk walk;
      std::vector<QueueId> all, got;
      do {
        session.NextWaitingLeaves(left, piece, &walk, &got);
        ASSERT_LE(got.size(), piece);
        for (QueueId leaf : got) {
          all.push_back(leaf);
          maps.Add(leaf, -left[leaf], &left);
        }
      } while (got.size() == piece);
      EXPECT_EQ(all, expected) << "seed " << seed << " piece " << piece;
    }
  }
}

// WaitingLeaves and LeafOrderOf (api/facade/plan_screen.h) give the
// leaves of WaitingOrder from a host's counts of untried waiting jobs per
// queue, and each leaf's part of it from the jobs the host names (those
// holding a task and the first n by submission of those holding none, as
// the reclaim phase of hdrf simulate does), on states with ties, gangs and
// a random set of jobs passed over.
TEST(PlanTest, LeavesAndLeafOrdersAreWaitingOrder) {
  int held_after_idle = 0;  // seeds where HeldAfterIdle was checked
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Rnd rnd(seed);
    const char* leaves[] = {"root/a/x", "root/a/y", "root/b", "root/c/z", "root/c/w"};
    auto e = MakeEngine({{"cpu", 24000}, {"memory", 24000}},
                        RandomWeights({std::begin(leaves), std::end(leaves)}, rnd, 2));
    std::vector<JobRef> refs;
    for (int i = 0; i < 24; ++i) {
      const int64_t tasks = 1 + rnd(4);
      ResourceAmounts shape{{"cpu", 1000 * (1 + rnd(2))}};
      if (rnd(2)) shape["memory"] = 1000;
      auto r = e->Submit(Job("j" + std::to_string(i), leaves[rnd(5)], tasks, shape, 1 + rnd(static_cast<int>(tasks))));
      ASSERT_TRUE(r.ok());
      refs.push_back(*r);
      if (rnd(4) == 0) (void)e->Fill();
    }
    // The queues' parents, and per queue its waiting jobs not passed over;
    // per leaf, those holding a task and those holding none (by seq).
    const QueueMaps maps(*e);
    const std::map<std::string, QueueId>& id_of = maps.id_of;
    std::vector<int64_t> untried(maps.ids, 0);
    std::map<QueueId, std::vector<JobId>> holding;
    std::map<QueueId, std::map<uint64_t, JobId>> idle;
    PlacementSkips skips;
    PassOverSome(*e, refs, rnd, maps, &skips, &untried, [&](const JobRef& r, const JobInfo& j, QueueId leaf) {
      if (j.allocated > 0) {
        holding[leaf].push_back(r.id);
      } else {
        idle[leaf][r.seq] = r.id;
      }
    });
    const std::vector<JobRef> full = e->WaitingOrder(&skips);
    std::vector<QueueId> expected;  // the leaves of the full order, each once
    std::map<QueueId, std::vector<uint64_t>> part;  // per leaf, its jobs in the full order
    for (const JobRef& r : full) {
      const QueueId leaf = id_of.at(e->GetJob(r)->queue);
      if (expected.empty() || expected.back() != leaf) expected.push_back(leaf);
      part[leaf].push_back(r.seq);
    }
    std::vector<QueueId> got;
    WaitingLeaves(*e, untried, 100, &got);
    EXPECT_EQ(got, expected) << "seed " << seed;
    WaitingLeaves(*e, untried, 1, &got);
    EXPECT_EQ(got, std::vector<QueueId>(expected.begin(), expected.begin() + std::min<size_t>(1, expected.size())));
    for (QueueId leaf : expected) {
      for (size_t limit : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{30}}) {
        std::vector<JobId> named = holding[leaf];
        for (const auto& [seq, id] : idle[leaf]) {
          if (named.size() >= holding[leaf].size() + limit) break;
          named.push_back(id);
        }
        if (id_of.at(e->GetJob(refs[0])->queue) != leaf) named.push_back(refs[0].id);  // another leaf's: passed over
        std::vector<JobRef> out;
        LeafOrderOf(*e, leaf, named, limit, &out);
        const std::vector<uint64_t>& want = part[leaf];
        ASSERT_EQ(out.size(), std::min(limit, want.size())) << "seed " << seed << " leaf " << leaf;
        for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].seq, want[i]) << "seed " << seed << " at " << i;
      }
    }
    std::vector<JobRef> out;
    LeafOrderOf(*e, 0, {refs[0].id}, 5, &out);  // the root is no leaf
    EXPECT_TRUE(out.empty());
    // The shapes submitted (cpu, memory in the engine's order), weight 1:
    // where HeldAfterIdle says so, a leaf's jobs holding a task come after
    // those holding none (it does not where cpu is saturated: a job of
    // cpu alone then has the key 0).
    if (!HeldAfterIdle(*e, {1000, 0, 2000, 0, 1000, 1000, 2000, 1000}, 1.0)) continue;
    ++held_after_idle;
    for (const auto& [leaf, seqs] : part) {
      bool seen_holding = false;
      for (uint64_t seq : seqs) {
        const bool idle_job = idle[leaf].count(seq) > 0;
        EXPECT_FALSE(seen_holding && idle_job) << "seed " << seed << " leaf " << leaf;
        seen_holding = seen_holding || !idle_job;
      }
    }
  }
  EXPECT_GT(held_after_idle, 0);
}

// HeldAfterIdle is false where one task's share over the weight is within
// the ties' margin (then a job holding it ties with those holding none).
TEST(PlanTest, HeldAfterIdleNeedsAShareAboveTheTies) {
  auto e = MakeEngine({{"cpu", int64_t{4000000000000}}}, {Q("root/a")});
  EXPECT_FALSE(HeldAfterIdle(*e, {1000}, 1.0));     // 2.5e-10
  EXPECT_TRUE(HeldAfterIdle(*e, {40000000}, 1.0));  // 1e-5
  EXPECT_FALSE(HeldAfterIdle(*e, {40000000}, 1e5));
  EXPECT_FALSE(HeldAfterIdle(*e, {40000000, 1}, 1.0));  // not whole shapes
}

// The writer runs in a child that exits without closing (no final
// checkpoint): recovery must replay the plan's log record.
// A PlanScreen kept across states (Clear() after each change, as the
// reclaim phase does: it keeps each queue's own shares while their inputs
// stay the same) answers as a fresh one on every state, through usage
// changes, a new capacity and new weights; and where it says no, Plan
// finds no victims. A leaf's screen with the least demand of its waiting
// jobs says no only where each of theirs does.
TEST(PlanTest, KeptScreenAnswersAsAFreshOne) {
  int refused = 0, refused_by_leaf = 0;  // screens that said no (the test must see some)
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rnd rnd(seed);
    const char* leaves[] = {"root/a/x", "root/a/y", "root/a/v", "root/b", "root/c/z", "root/c/w"};
    const std::vector<QueueSpec> qs = RandomWeights({std::begin(leaves), std::end(leaves)}, rnd, 3);
    auto e = MakeEngine({{"cpu", 20000}, {"memory", 20000}}, qs);
    std::vector<JobRef> refs;
    PlanScreen kept;
    PlanOptions po;
    po.mode = PlanMode::kReclaim;
    for (int step = 0; step < 40; ++step) {
      switch (rnd(4)) {
        case 0:
          (void)e->SetCapacity({{"cpu", 12000 + 2000 * rnd(6)}, {"memory", 12000 + 2000 * rnd(6)}});
          break;
        case 1: {
          QueueSpec q = qs[rnd(6)];
          q.weight = 1 + rnd(3);
          ASSERT_TRUE(e->UpdateQueue(q).ok());
          break;
        }
        default: {
          const int64_t tasks = 1 + rnd(4);
          ResourceAmounts shape{{"cpu", 1000 * (1 + rnd(2))}};
          if (rnd(2)) shape["memory"] = 1000 * (1 + rnd(2));
          auto r = e->Submit(Job("j" + std::to_string(step), leaves[rnd(6)], tasks, shape));
          ASSERT_TRUE(r.ok());
          refs.push_back(*r);
          (void)e->Fill();
        }
      }
      kept.Clear();
      for (const JobRef& j : refs) {
        auto info = e->GetJob(j);
        if (!info.ok()) continue;
        PlanScreen fresh;
        const bool may = PlanMayTake(*e, j, po, &kept);
        ASSERT_EQ(may, PlanMayTake(*e, j, po, &fresh)) << "seed " << seed << " step " << step;
        auto plan = e->Plan(j, po);
        if (!may && plan.ok()) {
          ++refused;
          EXPECT_TRUE(!plan->fits || plan->victims.empty()) << "seed " << seed << " step " << step;
        }
        // Apply some plans: usage moves between queues.
        if (plan.ok() && plan->fits && !plan->victims.empty() && rnd(3) == 0) {
          ASSERT_TRUE(e->ApplyPlan(*plan).ok());
          kept.Clear();
        }
      }
      // Per leaf, the waiting jobs' demands (Plan's k times the task) and
      // their least in each resource: where the leaf's screen with it says
      // no, each of them is refused.
      std::map<std::string, std::vector<std::pair<JobRef, std::vector<int64_t>>>> waiting;
      for (const JobRef& j : refs) {
        auto info = e->GetJob(j);
        auto plan = e->Plan(j, po);
        if (!info.ok() || !plan.ok()) continue;
        std::vector<int64_t> d = info->task;
        for (int64_t& x : d) x *= plan->tasks;
        waiting[info->queue].emplace_back(j, d);
      }
      for (const QueueInfo& q : e->Queues()) {
        if (!q.is_leaf) continue;
        PlanScreen fresh;
        ASSERT_EQ(LeafMayTake(*e, q.id, &kept), LeafMayTake(*e, q.id, &fresh)) << "seed " << seed << " step " << step;
        if (waiting[q.path].empty()) continue;
        std::vector<int64_t> least(waiting[q.path][0].second.size(), INT64_MAX);
        for (const auto& [j, d] : waiting[q.path])
          for (size_t r = 0; r < d.size(); ++r) least[r] = std::min(least[r], d[r]);
        if (LeafMayTake(*e, q.id, &kept, &least)) continue;
        ++refused_by_leaf;
        for (const auto& [j, d] : waiting[q.path])
          EXPECT_FALSE(PlanMayTake(*e, j, po, &fresh)) << "seed " << seed << " step " << step;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(refused_by_leaf, 0);
}

// A PlanScreen told which leaves changed (PlanSession::Changed: those whose
// usage moved, by fills, task ends and applied plans, and those that got a
// submission), never cleared, answers as a fresh one on every state: its
// numbers for the other queues' parents stay exact. Leaves at two depths,
// so that a change reaches a grandparent.
TEST(PlanTest, ScreenToldOfChangedLeavesAnswersAsAFreshOne) {
  int refused = 0;  // screens that said no (the test must see some)
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rnd rnd(seed);
    const char* leaves[] = {"root/a/x", "root/a/y", "root/a/v", "root/b", "root/c/z", "root/c/u/p", "root/c/u/q"};
    const int n_leaves = static_cast<int>(std::size(leaves));
    auto e = MakeEngine({{"cpu", 20000}, {"memory", 20000}},
                        RandomWeights({std::begin(leaves), std::end(leaves)}, rnd, 3));
    std::vector<JobRef> refs;
    PlanScreen kept;
    PlanOptions po;
    po.mode = PlanMode::kReclaim;
    auto usage = [&] {
      std::map<QueueId, std::vector<int64_t>> u;
      for (const QueueInfo& q : e->Queues())
        if (q.is_leaf) u[q.id] = q.usage;
      return u;
    };
    std::map<QueueId, std::vector<int64_t>> before = usage();
    std::map<std::string, QueueId> id_of;
    for (const QueueInfo& q : e->Queues()) id_of[q.path] = q.id;
    for (int step = 0; step < 60; ++step) {
      std::vector<QueueId> changed;  // what the host knows
      if (rnd(3) != 0 || refs.empty()) {
        const int64_t tasks = 1 + rnd(4);
        ResourceAmounts shape{{"cpu", 1000 * (1 + rnd(2))}};
        if (rnd(2)) shape["memory"] = 1000 * (1 + rnd(2));
        const char* leaf = leaves[rnd(n_leaves)];
        auto r = e->Submit(Job("j" + std::to_string(step), leaf, tasks, shape));
        ASSERT_TRUE(r.ok());
        refs.push_back(*r);
        changed.push_back(id_of.at(leaf));
        if (rnd(2)) (void)e->Fill();
      } else {  // a running task ends
        const JobRef j = refs[rnd(static_cast<int>(refs.size()))];
        auto info = e->GetJob(j);
        if (info.ok() && info->allocated > 0) {
          Engine::TaskOp op;
          op.job = j;
          op.type = Event::Type::kFinish;
          op.n = 1;
          size_t refused_ops = 0;
          ASSERT_TRUE(e->ApplyTasks(&op, 1, nullptr, &refused_ops).ok());
        }
      }
      for (int round = 0; round < 2; ++round) {
        const std::map<QueueId, std::vector<int64_t>> now = usage();
        for (const auto& [q, u] : now)
          if (before.at(q) != u) changed.push_back(q);
        before = now;
        PlanSession(*e).Changed(&kept, changed);
        changed.clear();
        std::optional<Plan> apply;
        for (const JobRef& j : refs) {
          if (!e->GetJob(j).ok()) continue;
          PlanScreen fresh;
          const bool may = PlanMayTake(*e, j, po, &kept);
          ASSERT_EQ(may, PlanMayTake(*e, j, po, &fresh)) << "seed " << seed << " step " << step;
          refused += !may;
          auto plan = e->Plan(j, po);
          if (!apply && plan.ok() && plan->fits && !plan->victims.empty() && rnd(2) == 0) apply = *plan;
        }
        for (const QueueInfo& q : e->Queues()) {
          if (!q.is_leaf) continue;
          PlanScreen fresh;
          ASSERT_EQ(LeafMayTake(*e, q.id, &kept), LeafMayTake(*e, q.id, &fresh)) << "seed " << seed << " step " << step;
        }
        if (!apply) break;
        ASSERT_TRUE(e->ApplyPlan(*apply).ok());  // usage moves between queues: then asked again
      }
    }
  }
  EXPECT_GT(refused, 0);
}

// With the task shapes known (SetTaskShapes), PlanMayTake also bounds what
// a plan's units can free: where it says no, Plan finds no victims, on
// random contended states with a guarantee, a queue that is not
// reclaimable, a capability, a user limit, gangs, shapes that need one
// resource only and one that needs none (D = 0, within every guarantee);
// and it says no where the screen without shapes says yes.
TEST(PlanTest, ShapeBoundSaysNoOnlyWherePlanFails) {
  int refused = 0;  // by the bound alone (the test must see some)
  const std::vector<ResourceAmounts> shapes = {
      {{"cpu", 1000}}, {{"cpu", 2000}, {"memory", 1000}}, {{"cpu", 1000}, {"memory", 3000}}, {{"memory", 2000}}, {}};
  std::vector<int64_t> flat;  // in the engine's order: cpu, memory
  for (const ResourceAmounts& s : shapes)
    for (const char* r : {"cpu", "memory"}) flat.push_back(s.count(r) ? s.at(r) : 0);
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rnd rnd(seed);
    const char* leaves[] = {"root/a/x", "root/a/y", "root/a/v", "root/b", "root/c/z", "root/c/w", "root/c/u"};
    std::vector<QueueSpec> qs = RandomWeights({std::begin(leaves), std::end(leaves)}, rnd, 3);
    if (seed % 2) qs[rnd(7)].guarantee = {{"cpu", 2000 + 1000 * rnd(4)}};
    if (seed % 3) qs[rnd(7)].reclaimable = false;
    if (seed % 4) qs[rnd(7)].capability = {{"cpu", 6000}};
    if (seed % 5) qs[rnd(7)].min_user_limit_percent = 50;
    auto e = MakeEngine({{"cpu", 16000}, {"memory", 16000}}, qs);
    std::vector<JobRef> refs;
    PlanScreen kept, plain;
    SetTaskShapes(*e, flat, &kept);
    PlanOptions po;
    po.mode = PlanMode::kReclaim;
    for (int step = 0; step < 50; ++step) {
      if (rnd(8) == 0) {
        (void)e->SetCapacity({{"cpu", 12000 + 2000 * rnd(4)}, {"memory", 12000 + 2000 * rnd(4)}});
      } else {
        const int64_t tasks = 1 + rnd(5);
        JobSpec j = Job("j" + std::to_string(step), leaves[rnd(7)], tasks, shapes[rnd(5)], std::min<int64_t>(tasks, 1 + rnd(3)));
        j.user = "u" + std::to_string(rnd(3));
        auto r = e->Submit(j);
        ASSERT_TRUE(r.ok());
        refs.push_back(*r);
        (void)e->Fill();
      }
      kept.Clear();
      plain.Clear();
      for (const JobRef& j : refs) {
        if (!e->GetJob(j).ok()) continue;
        const bool may = PlanMayTake(*e, j, po, &kept);
        PlanScreen fresh;
        SetTaskShapes(*e, flat, &fresh);
        ASSERT_EQ(may, PlanMayTake(*e, j, po, &fresh)) << "seed " << seed << " step " << step;
        auto plan = e->Plan(j, po);
        if (!plan.ok()) continue;
        if (!may) {
          EXPECT_TRUE(!plan->fits || plan->victims.empty()) << "seed " << seed << " step " << step;
          refused += PlanMayTake(*e, j, po, &plain);
        }
        if (plan->fits && !plan->victims.empty() && rnd(2) == 0) {
          ASSERT_TRUE(e->ApplyPlan(*plan).ok());
          (void)e->Fill();
          kept.Clear();
          plain.Clear();
        }
      }
    }
  }
  EXPECT_GT(refused, 0);
}

// A job whose task uses no resource waits where memory's free less what is
// held back is below 0 (§6 holds for every resource); its demand D = 0 is
// within every queue's guarantee (§15 condition 2 reads only the r with
// D[r] > 0), so a plan may take from a queue whose share is not above its
// taker's. The screens must say "may" (they used to read "a queue without a
// guarantee takes nothing within it"): PlanMayTake, with the task shapes
// known too (PlanMayFree bounded what B gives by the share test alone).
// (LeafMayTake without a demand answers for the demands that need some
// resource only; the simulator does not use it when a task needs none.) Same state as tests/sim/reclaim_test.cc
// ZeroDemandIsWithinAnyGuarantee at 1 s: plan [om 1, om 1].
TEST(PlanTest, ZeroDemandScreensSayMay) {
  auto e = MakeEngine({{"cpu", 4000}, {"memory", 4}},
                      {Q("root/p"), Q("root/p/g", {{"memory", 2}}), Q("root/p/z"), Q("root/x")});
  ASSERT_TRUE(e->Submit(Job("pc", "root/p/z", 4, {{"cpu", 1000}})).ok());
  (void)e->Fill();
  ASSERT_TRUE(e->Submit(Job("om", "root/x", 4, {{"memory", 1}})).ok());
  (void)e->Fill();
  auto zj = e->Submit(Job("zj", "root/p/z", 1, {}));
  ASSERT_TRUE(zj.ok());
  (void)e->Fill();
  PlanOptions po;
  po.mode = PlanMode::kReclaim;
  auto plan = e->Plan(*zj, po);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->fits);
  ASSERT_EQ(plan->victims.size(), 2u);
  EXPECT_EQ(plan->victims[0].name, "om");
  EXPECT_EQ(plan->victims[1].name, "om");
  PlanScreen plain, shaped;
  const std::vector<int64_t> shapes = {1000, 0, 0, 1, 0, 0};  // cpu, memory: pc, om, zj
  SetTaskShapes(*e, shapes, &shaped);
  EXPECT_TRUE(PlanMayTake(*e, *zj, po, &plain));
  EXPECT_TRUE(PlanMayTake(*e, *zj, po, &shaped));
}

TEST(PlanTest, AppliedPlanIsRecoveredFromTheLog) {
  const auto dir = std::filesystem::temp_directory_path() / ("hdrf_plan_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EngineOptions o;
  o.db_path = (dir / "db").string();
  const std::string out = (dir / "digest").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto e = Engine::Create({{"cpu", 8000}, {"memory", 8000}}, {Q("root/a"), Q("root/b")}, o);
    if (!e.ok()) ::_exit(2);
    if (!(*e)->Submit(Job("h", "root/b", 8, {{"cpu", 1000}, {"memory", 1000}})).ok()) ::_exit(3);
    if (!(*e)->Submit(Job("g", "root/b", 2, {{"cpu", 1000}}, 2)).ok()) ::_exit(3);
    if (!(*e)->Fill().ok()) ::_exit(4);
    auto w = (*e)->Submit(Job("w", "root/a", 3, {{"cpu", 1000}}, 3));
    if (!w.ok()) ::_exit(5);
    auto p = (*e)->Plan(*w);
    if (!p.ok() || !p->fits || p->victims.empty() || !(*e)->ApplyPlan(*p).ok()) ::_exit(6);
    if ((*e)->GetJob("w")->allocated != 3 || !(*e)->Flush().ok()) ::_exit(7);
    std::FILE* f = std::fopen(out.c_str(), "w");
    if (!f) ::_exit(8);
    std::fprintf(f, "%s %llu\n", (*e)->DigestHex().c_str(), static_cast<unsigned long long>((*e)->last_seq()));
    std::fclose(f);
    ::_exit(0);  // no Close(), no destructor
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  char digest[32] = {};
  unsigned long long seq = 0;
  std::FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fscanf(f, "%31s %llu", digest, &seq), 2);
  std::fclose(f);
  auto r = Engine::Open(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->DigestHex(), digest);
  EXPECT_EQ((*r)->last_seq(), seq);
  EXPECT_EQ((*r)->GetJob("w")->allocated, 3);
  EXPECT_GT((*r)->recovery_stats().events_replayed, 0u);  // the plan came from the log
  ASSERT_TRUE((*r)->Close().ok());
  r->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hdrf
