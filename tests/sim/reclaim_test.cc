// hdrf simulate --reclaim (docs/spec.md §13 additions, §14, §15;
// docs/simulate.md "Reclaim and preemption"), by hand-worked examples: the
// reclaim phase after the fill, eviction of the latest started tasks, a
// gang's demand, the new outputs, and that without --reclaim nothing moves.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "hdrf/simulate.h"

namespace hdrf {
namespace {

const ResourceAmounts kCluster = {{"cpu", 4000}};
const std::vector<QueueSpec> kQueues = {{.path = "root/a"}, {.path = "root/b"}};

Workload Parse(const std::string& csv) {
  auto w = ParseWorkload(csv, WorkloadFormat::kCsv, "w.csv", {"cpu"});
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : Workload{};
}

struct Want {
  int64_t first, last, end, evicted;
};

void Expect(const SimulateResult& r, const std::vector<Want>& want) {
  ASSERT_EQ(r.jobs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.jobs[i].first_start_ms, want[i].first) << "job " << i;
    EXPECT_EQ(r.jobs[i].last_start_ms, want[i].last) << "job " << i;
    EXPECT_EQ(r.jobs[i].end_ms, want[i].end) << "job " << i;
    EXPECT_EQ(r.jobs[i].evicted, want[i].evicted) << "job " << i;
  }
}

// cpu 4; h (b, 4 tasks of 100 s) at 0, w (a, 2 tasks of 10 s) at 5.
const char kTwo[] =
    "name,queue,arrival,duration,tasks,min_available,cpu\n"
    "h,root/b,0,100,4,,1\n"
    "w,root/a,5,10,2,%s,1\n";

std::string Two(const char* m) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kTwo, m);
  return buf;
}

// Without reclaim w waits for h: h ends at 100, w runs 100-110.
TEST(Reclaim, OffNothingIsEvicted) {
  auto r = Simulate(kCluster, kQueues, Parse(Two("")));
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 0, 100000, 0}, {100000, 100000, 110000, 0}});
  EXPECT_FALSE(r->reclaim);
  EXPECT_EQ(r->evicted_tasks, 0);
}

// With reclaim, by hand:
//  t=5   fill: nothing. w (a) is tried first (cpu is full: every key 0, a
//        sorts first): D = 1 cpu; before d(a) = 0 < d(b) = 1; after .25 <=
//        .75: h loses its latest started task (all started at 0), w starts
//        one task (ends 15). h is tried: before d(b) = .75 < d(a) = .25
//        fails: no plan.
//  t=15  w's task ends (1 left); fill: a (share 0) before b (.75): w's last
//        task starts (ends 25). h's plan fails as before.
//  t=25  w ends; fill: h's evicted task starts again (ends 125).
//  t=100 h's three first tasks end; t=125 its last: makespan 125.
TEST(Reclaim, OneTaskTakenBackAndRunAgain) {
  SimulateOptions o;
  o.reclaim = true;
  auto r = Simulate(kCluster, kQueues, Parse(Two("")), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 25000, 125000, 1}, {5000, 15000, 25000, 0}});
  EXPECT_EQ(r->makespan_ms, 125000);
  EXPECT_EQ(r->evicted_tasks, 1);
  EXPECT_EQ(r->plans_applied, 1);
  EXPECT_DOUBLE_EQ(r->lost_task_seconds, 5.0);
  EXPECT_EQ(r->ping_pong, 0);
  EXPECT_EQ(r->evicted_within_60s, 1);
  for (const QueueReport& q : r->queues)
    EXPECT_EQ(q.evicted_tasks, q.path == "root/a" ? 0 : 1) << q.path;
  const std::string csv = JobsCsv(Parse(Two("")), *r);
  EXPECT_NE(csv.find("name,queue,arrival,first_start,last_start,end,evicted\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("h,root/b,0.000,0.000,25.000,125.000,1\n"), std::string::npos) << csv;
}

// w is a gang of 2: its plan takes two units of h (after the first, room 1
// < 2; the second: before 0 < .75, after .5 <= .5). Both of w's tasks start
// at 5 and end at 15; h's two evicted tasks start again at 15 (end 115).
TEST(Reclaim, GangDemandTakesTwoUnitsInOnePlan) {
  SimulateOptions o;
  o.reclaim = true;
  auto r = Simulate(kCluster, kQueues, Parse(Two("2")), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 15000, 115000, 2}, {5000, 5000, 15000, 0}});
  EXPECT_EQ(r->plans_applied, 1);
  EXPECT_EQ(r->evicted_tasks, 2);
  EXPECT_DOUBLE_EQ(r->lost_task_seconds, 10.0);
}

// A budget of 0 applies no plan: the same as without reclaim, but the
// outputs say so.
TEST(Reclaim, ZeroBudgetAppliesNone) {
  SimulateOptions o;
  o.reclaim = true;
  o.reclaim_budget = 0;
  auto r = Simulate(kCluster, kQueues, Parse(Two("")), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 0, 100000, 0}, {100000, 100000, 110000, 0}});
  EXPECT_TRUE(r->reclaim);
  EXPECT_EQ(r->plans_applied, 0);
}

// A workload gang larger than its job is a line error.
TEST(Reclaim, MinAvailableAboveTasksIsALineError) {
  auto w = ParseWorkload("name,queue,arrival,duration,tasks,min_available,cpu\nx,root/a,0,1,2,3,1\n",
                         WorkloadFormat::kCsv, "w.csv", {"cpu"});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("w.csv:2: min_available"), std::string::npos) << w.status().message();
}

// With nodes, a plan that lists one victim job more than once: the check
// that the demand can be placed (docs/simulate_nodes.md "Reclaim") lets
// each entry's tasks leave their nodes, the latest started first, each task
// once. Nodes n0 (3 cpu) and n1 (1 cpu); h's four tasks go to n1 (best fit:
// 0 left), then n0. At 5 w's gang of 2 takes two units of h (as in
// GangDemandTakesTwoUnitsInOnePlan): h's task on n1 (started together: the
// node listed last first) and one on n0 leave; w's tasks go to n0 and n1.
// (The check used to let n1's task leave twice, which failed: w waited.)
TEST(Reclaim, VictimListedTwiceOnNodes) {
  const std::string nodes = ::testing::TempDir() + "/" + std::to_string(getpid()) + "_reclaim_nodes.csv";
  { std::ofstream(nodes) << "name,cpu\nn0,3\nn1,1\n"; }
  SimulateOptions o;
  o.reclaim = true;
  o.nodes_file = nodes;
  auto r = Simulate(kCluster, kQueues, Parse(Two("2")), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 15000, 115000, 2}, {5000, 5000, 15000, 0}});
  EXPECT_EQ(r->plans_applied, 1);
}

// An end cancelled by an eviction is no instant (docs/spec.md §13: the instants are
// when something happens), so it runs no reclaim phase of its own. cpu 4;
// in a, a1 (1 task of 5 s, weight 1) and a2 (3 tasks of 10 s, weight 4) at
// 0 fill the cluster; b1 and b2 (b, 1 task of 10 s each) arrive at 1.
//  t=1   b1 is tried first (keys 0, submitted first): a's d 1 > b's 0; its
//        victim is a1 (d/w .25 > a2's .75/4): a1's task stops (its end at 5
//        is cancelled), b1 starts (ends 11). Budget 1 reached: b2 waits.
//  t=5   nothing happens: no instant (the simulator used to process one
//        here, whose fresh budget let b2 take a task of a2 at 5).
//  t=10  a2 ends; fill: a (share 0) first: a1 starts again (ends 15), then
//        b2 (ends 20).
TEST(Reclaim, CancelledEndIsNoInstant) {
  const std::string csv =
      "name,queue,arrival,duration,tasks,weight,cpu\n"
      "a1,root/a,0,5,1,1,1\n"
      "a2,root/a,0,10,3,4,1\n"
      "b1,root/b,1,10,1,1,1\n"
      "b2,root/b,1,10,1,1,1\n";
  SimulateOptions o;
  o.reclaim = true;
  o.reclaim_budget = 1;
  auto r = Simulate(kCluster, kQueues, Parse(csv), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 10000, 15000, 1}, {0, 0, 10000, 0}, {1000, 1000, 11000, 0}, {10000, 10000, 20000, 0}});
  EXPECT_EQ(r->plans_applied, 1);
  EXPECT_EQ(r->instants, 6);  // 0, 1, 10, 11, 15, 20
}

// Time to the guarantee (docs/simulate.md): a holds a guarantee of 1 cpu, so
// b (4 tasks of 1 cpu at 0) runs 3 of them. At 5, w (a, 1 task of 2 cpu)
// waits while a uses nothing: a is owed its guarantee.
//  - Without reclaim w starts when b's tasks end, at 100: one episode of
//    95 s.
//  - With reclaim, at 5: D = 2 cpu, room 1; a is not within its guarantee
//    (0 + 2 > 1) but d(a) = 0 < d(b) = .75 and d(a + D) = .5 <= d(b - u) =
//    .5: one task of b is taken and w starts at 5. The episode lasts no
//    longer than the instant: none.
TEST(Reclaim, TimeToGuarantee) {
  const std::vector<QueueSpec> queues = {{.path = "root/a", .guarantee = {{"cpu", 1000}}}, {.path = "root/b"}};
  const char csv[] =
      "name,queue,arrival,duration,tasks,cpu\n"
      "h,root/b,0,100,4,1\n"
      "w,root/a,5,10,1,2\n";
  for (const bool reclaim : {false, true}) {
    SimulateOptions o;
    o.reclaim = reclaim;
    auto r = Simulate(kCluster, queues, Parse(csv), o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->queues.size(), 3u);
    const QueueReport& a = r->queues[1];
    ASSERT_EQ(a.path, "root/a");
    EXPECT_TRUE(a.guaranteed);
    EXPECT_FALSE(r->queues[2].guaranteed);
    EXPECT_EQ(r->jobs[1].first_start_ms, reclaim ? 5000 : 100000);
    EXPECT_EQ(a.owed_episodes, reclaim ? 0 : 1) << reclaim;
    EXPECT_EQ(a.owed_ms, reclaim ? 0 : 95000) << reclaim;
    EXPECT_EQ(a.owed_max_ms, reclaim ? 0 : 95000) << reclaim;
  }
}

// The budget rule (docs/spec.md §13 additions), the order of tries and the
// eviction of the latest started tasks, by hand. cpu 4, leaves a, b, c.
//  t=0   e (c, 2 tasks of 10 s) and h (b, 4 tasks of 100 s) arrive; fill
//        (keys 0: b sorts first, then alternately): h 2, e 2; full.
//  t=10  e ends; fill: h's last 2 tasks start (h: 2 started at 0, 2 at 10).
//  t=20  g (a, gang of 2, 5 s) and g2 (c, 1 task of 5 s) arrive; fill:
//        nothing. cpu is saturated, so every §4 key is 0: among the waiting
//        jobs a sorts first: g is tried. D = 2 cpu: h's units one task each:
//        before d(a) = 0 < d(b) = 1, .75; after d(a + D) = .5 <= .75, .5:
//        [h 1, h 1], applied whole: the two tasks started at 10 stop (10 s
//        lost each), g's 2 start (end 25).
//        - budget 1 or 2: 2 tasks already evicted at 20: the phase ends, g2
//          is not tried. t=25: g ends; fill: c (0) before b (.5): g2 starts
//          (end 30), then h 1 (end 125); h's plan fails (before .75 < .25
//          is false). t=30: g2 ends; h's last starts (end 130). Makespan
//          130; 2 evicted, 20 s lost.
//        - no budget, or 3: next try b before c (keys 0, name order): h's
//          plan: g's unit (the whole gang) fails before (.5 < .5 is false).
//          g2: D = 1: h's unit (one of the two started at 0): before 0 <
//          .5, after .25 <= .25: applied (20 s lost); g2 starts (end 25).
//          t=25: g and g2 end; h's 3 waiting tasks start (end 125).
//          Makespan 125; 3 evicted, 40 s lost (50 s had the tasks started
//          at 0 gone first).
TEST(Reclaim, BudgetCrossedByOnePlanEndsThePhase) {
  const std::vector<QueueSpec> queues = {{.path = "root/a"}, {.path = "root/b"}, {.path = "root/c"}};
  const char csv[] =
      "name,queue,arrival,duration,tasks,min_available,cpu\n"
      "e,root/c,0,10,2,,1\n"
      "h,root/b,0,100,4,,1\n"
      "g,root/a,20,5,2,2,1\n"
      "g2,root/c,20,5,1,,1\n";
  for (const std::optional<int64_t> budget : {std::optional<int64_t>(), std::optional<int64_t>(1),
                                              std::optional<int64_t>(2), std::optional<int64_t>(3)}) {
    SCOPED_TRACE(budget ? std::to_string(*budget) : "no budget");
    SimulateOptions o;
    o.reclaim = true;
    o.reclaim_budget = budget;
    auto r = Simulate(kCluster, queues, Parse(csv), o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const bool crossed = budget && *budget <= 2;
    if (crossed) {
      Expect(*r, {{0, 0, 10000, 0}, {0, 30000, 130000, 2}, {20000, 20000, 25000, 0}, {25000, 25000, 30000, 0}});
    } else {
      Expect(*r, {{0, 0, 10000, 0}, {0, 25000, 125000, 3}, {20000, 20000, 25000, 0}, {20000, 20000, 25000, 0}});
    }
    EXPECT_EQ(r->makespan_ms, crossed ? 130000 : 125000);
    EXPECT_EQ(r->plans_applied, crossed ? 1 : 2);
    EXPECT_EQ(r->evicted_tasks, crossed ? 2 : 3);
    EXPECT_DOUBLE_EQ(r->lost_task_seconds, crossed ? 20.0 : 40.0);
    EXPECT_EQ(r->evicted_within_60s, crossed ? 2 : 3);
    EXPECT_EQ(r->ping_pong, 0);
    ASSERT_EQ(r->queues.size(), 4u);
    EXPECT_EQ(r->queues[0].evicted_tasks, crossed ? 2 : 3);  // root
    EXPECT_EQ(r->queues[1].evicted_tasks, 0);                // root/a
    EXPECT_EQ(r->queues[2].evicted_tasks, crossed ? 2 : 3);  // root/b
    EXPECT_EQ(r->queues[3].evicted_tasks, 0);                // root/c
  }
}

// A gang's m is capped at its task count, which completions lower (§14):
// an evicted gang remnant starts again alone. cpu 3, leaves a, b, c.
//  t=0   g (a, 3 tasks, m 2, 10 s) and x (b, 1 task, 5 s): a first: g's
//        gang of 2 (end 10), then x (end 5); full.
//  t=5   x ends; g's third task starts (end 15).
//  t=10  g's first two end: g has 1 task, running, m = min(2, 1) = 1. y (a,
//        2 tasks, weight 4, 100 s) arrives and starts both (end 110).
//  t=12  w (c, 1 task, 1 s) arrives; fill: nothing. w's plan: only a gives;
//        in a, g's d 1/3 > y's (2/3)/4: g's unit, all it holds (1 <= m):
//        before 0 < 1, after 1/3 <= 2/3: applied; g's task (started at 5)
//        stops, 7 s lost; w starts (end 13). g's plan (demand m = 1) fails:
//        before d(a) 2/3 < d(c) 1/3 is false.
//  t=13  w ends; g's demand is 1 task (not 2: it has only 1): it starts
//        (end 23). An uncapped m of 2 would never fit its 1-task job.
TEST(Reclaim, GangCappedByCompletionsStartsAgainAlone) {
  const ResourceAmounts cluster = {{"cpu", 3000}};
  const std::vector<QueueSpec> queues = {{.path = "root/a"}, {.path = "root/b"}, {.path = "root/c"}};
  const char csv[] =
      "name,queue,arrival,duration,tasks,min_available,weight,cpu\n"
      "g,root/a,0,10,3,2,,1\n"
      "x,root/b,0,5,1,,,1\n"
      "y,root/a,10,100,2,,4,1\n"
      "w,root/c,12,1,1,,,1\n";
  SimulateOptions o;
  o.reclaim = true;
  auto r = Simulate(cluster, queues, Parse(csv), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Expect(*r, {{0, 13000, 23000, 1}, {0, 0, 5000, 0}, {10000, 10000, 110000, 0}, {12000, 12000, 13000, 0}});
  EXPECT_EQ(r->makespan_ms, 110000);
  EXPECT_EQ(r->plans_applied, 1);
  EXPECT_DOUBLE_EQ(r->lost_task_seconds, 7.0);
}

// A job whose task uses no resource at all still fits only where §6 holds
// for every resource: 0 <= free[r] - held_back[r]. Its demand D is 0, so
// the guarantee clause of §15 condition 2 ("usage_A[r] + D[r] <=
// guarantee_A[r] for every r with D[r] > 0") holds for any A, with or
// without a guarantee. cpu 4, memory 4 bytes; root/p/g is guaranteed 2
// bytes, which are held back from its sibling root/p/z but not from root/x
// (a cousin of g: p has no guarantee).
//  t=0    pc (p/z, 4 tasks of 1 cpu, 100 s) starts all 4: cpu full.
//  t=0.5  om (x, 4 tasks of 1 byte, 100 s) starts all 4 (nothing is held
//         back from x): memory full.
//  t=1    zj (p/z, 1 task of nothing, 10 s): memory's free 0 less g's 2
//         held back is -2 < 0: it does not fit. Its plan: om's units raise
//         memory's room. C = root, A = p, B = x: the share test fails
//         (before: d(p) = 1 < d(x) = 1 is false), the guarantee clause
//         holds (no r with D[r] > 0): permitted. Room -2 -> -1 -> 0:
//         [om 1, om 1]; two of om's tasks stop (0.5 s lost each), zj starts
//         (ends 11). The fill then starts om's two again (x holds back
//         nothing): they end at 101.
//  Without --reclaim zj waits until om's tasks end at 100.5.
// (The screen before a plan, PlanMayFree, used to bound what x could give
// by the share test alone, as if p could take nothing within a guarantee
// it does not have: zj's key failed at 1, and zj took om's tasks at 100.)
TEST(Reclaim, ZeroDemandIsWithinAnyGuarantee) {
  const ResourceAmounts cluster = {{"cpu", 4000}, {"memory", 4}};
  const std::vector<QueueSpec> queues = {{.path = "root/p"},
                                         {.path = "root/p/g", .guarantee = {{"memory", 2}}},
                                         {.path = "root/p/z"},
                                         {.path = "root/x"}};
  const char csv[] =
      "name,queue,arrival,duration,tasks,cpu,memory\n"
      "pc,root/p/z,0,100,4,1,\n"
      "om,root/x,0.5,100,4,,1\n"
      "zj,root/p/z,1,10,1,,\n";
  auto w = ParseWorkload(csv, WorkloadFormat::kCsv, "w.csv", {"cpu", "memory"});
  ASSERT_TRUE(w.ok()) << w.status().message();
  for (const bool reclaim : {false, true}) {
    SCOPED_TRACE(reclaim ? "reclaim" : "no reclaim");
    SimulateOptions o;
    o.reclaim = reclaim;
    auto r = Simulate(cluster, queues, *w, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (reclaim) {
      Expect(*r, {{0, 0, 100000, 0}, {500, 1000, 101000, 2}, {1000, 1000, 11000, 0}});
      EXPECT_EQ(r->plans_applied, 1);
      EXPECT_DOUBLE_EQ(r->lost_task_seconds, 1.0);
    } else {
      Expect(*r, {{0, 0, 100000, 0}, {500, 500, 100500, 0}, {100500, 100500, 110500, 0}});
    }
  }
}

// --preempt (mode both): a unit in the waiting job's own leaf is judged with
// A = the waiting job and B = the victim, with the jobs' weights. cpu 4; h
// (a, 4 tasks of 100 s) at 0 fills it; w (a, 2 tasks of 10 s) at 5.
//  - --reclaim alone: no other leaf holds a unit: w starts at 100.
//  - --preempt, h of weight 1: before d(w) = 0 < d(h) = 1; after d(w + D)
//    = .25 <= d(h - unit) = .75: [h 1]; w starts one task at 5 (end 15).
//    h, evicted and untried, is tried: before .75 < .25 is false. At 15 w's
//    last task starts (its key 0 before h's .75); at 25 h's evicted task
//    starts again (end 125).
//  - --preempt, h of weight 4: after .25 <= (3/4)/4 = .1875 is false: no
//    plan; as without --preempt.
TEST(Reclaim, PreemptInsideOneLeafByJobWeights) {
  for (const int h_weight : {1, 4}) {
    for (const bool preempt : {false, true}) {
      SCOPED_TRACE("h weight " + std::to_string(h_weight) + (preempt ? " preempt" : ""));
      const std::string csv = "name,queue,arrival,duration,tasks,weight,cpu\nh,root/a,0,100,4," +
                              std::to_string(h_weight) + ",1\nw,root/a,5,10,2,1,1\n";
      SimulateOptions o;
      o.reclaim = true;
      o.preempt = preempt;
      auto r = Simulate(kCluster, kQueues, Parse(csv), o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      if (preempt && h_weight == 1) {
        Expect(*r, {{0, 25000, 125000, 1}, {5000, 15000, 25000, 0}});
        EXPECT_EQ(r->plans_applied, 1);
        EXPECT_DOUBLE_EQ(r->lost_task_seconds, 5.0);
      } else {
        Expect(*r, {{0, 0, 100000, 0}, {100000, 100000, 110000, 0}});
        EXPECT_EQ(r->plans_applied, 0);
      }
    }
  }
}

}  // namespace
}  // namespace hdrf
