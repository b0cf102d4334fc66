// hdrf simulate --reclaim (docs/spec.md §13 additions, §14, §15;
// docs/simulate.md "Reclaim and preemption"), by hand-worked examples: the
// reclaim phase after the fill, eviction of the latest started tasks, a
// gang's demand, the new outputs, and that without --reclaim nothing moves.
#include <gtest/gtest.h>

#include <fstream>

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

}  // namespace
}  // namespace hdrf
