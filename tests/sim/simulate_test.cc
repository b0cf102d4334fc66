// hdrf simulate by hand-worked examples (docs/spec.md §13, docs/simulate.md): the
// order of completions, arrivals and fill at an instant, multi-task jobs,
// admission of a parent-queue job, refused jobs, the time averages, and the
// extra reports (waits per level and size class, starvation, Jain's index,
// why jobs waited, --compare, the timeline, the outputs' formats).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hdrf/simulate.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;

const ResourceAmounts kCluster = {{"cpu", 4000}, {"nvidia.com/gpu", 2000}};
const std::vector<QueueSpec> kQueues = {{.path = "root/a"}, {.path = "root/b"}};

Workload Parse(const std::string& csv) {
  auto w = ParseWorkload(csv, WorkloadFormat::kCsv, "w.csv", {"cpu", "nvidia.com/gpu"});
  EXPECT_TRUE(w.ok()) << w.status().message();
  return *w;
}

const QueueReport& Q(const SimulateResult& r, const std::string& path) {
  for (const QueueReport& q : r.queues)
    if (q.path == path) return q;
  ADD_FAILURE() << "no queue " << path;
  return r.queues.front();
}

// Worked by hand (cpu 4, gpu 2; a and b weight 1):
//  t=0    j1 (a, 2x cpu1) and j2 (b, 4x cpu1 gpu.5) arrive; fill alternates
//         a/b by key: j1 x2, j2 x2; cpu is full.
//  t=1.5  j3 (to root) is admitted to a (a and b both at share .5: tie ->
//         name order); it waits (needs cpu 2). j4 (unknown queue) and j5
//         (cpu 5 > cluster) are refused.
//  t=5    j2's two tasks end: 2 cpu free; b's key 0 < a's .5: j2's last two
//         tasks start (end 10).
//  t=10   everything ends; j3 starts (end 12).
// cpu allocated: 4 on [0,10), 2 on [10,12): utilization 44/48.
// gpu: 1 on [0,10): 10/24. a's share: .5 on [0,10), .5 on [10,12): .5;
// b's: max(cpu 2/4, gpu 1/2) = .5 on [0,10): 5/12.
const char kExample[] =
    "name,queue,arrival,duration,tasks,cpu,nvidia.com/gpu\n"
    "j1,root/a,0,10,2,1,\n"
    "j2,root/b,0,5,4,1,0.5\n"
    "j3,root,1.5,2,1,2,\n"
    "j4,root/zz,1.5,1,1,1,\n"
    "j5,root/a,1.5,1,1,5,\n";

TEST(Simulate, HandWorkedExample) {
  Workload w = Parse(kExample);
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_TRUE(r.ok()) << r.status().message();
  struct Want {
    const char* queue;
    int64_t first, last, end;
  } want[] = {{"root/a", 0, 0, 10000}, {"root/b", 0, 5000, 10000}, {"root/a", 10000, 10000, 12000},
              {"", -1, -1, -1},        {"", -1, -1, -1}};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(w.jobs[i].spec.name);
    EXPECT_EQ(r->jobs[i].queue, want[i].queue);
    EXPECT_EQ(r->jobs[i].first_start_ms, want[i].first);
    EXPECT_EQ(r->jobs[i].last_start_ms, want[i].last);
    EXPECT_EQ(r->jobs[i].end_ms, want[i].end);
  }
  EXPECT_THAT(r->jobs[3].refused, HasSubstr("root/zz"));
  EXPECT_THAT(r->jobs[4].refused, HasSubstr("more than the cluster"));
  EXPECT_EQ(r->makespan_ms, 12000);
  EXPECT_EQ(r->started, 3);
  EXPECT_EQ(r->unscheduled, 2);
  EXPECT_EQ(r->refused, 2);
  EXPECT_DOUBLE_EQ(r->utilization[0], 44.0 / 48);
  EXPECT_DOUBLE_EQ(r->utilization[1], 10.0 / 24);
  EXPECT_DOUBLE_EQ(Q(*r, "root/a").usage_share_avg, 0.5);
  EXPECT_DOUBLE_EQ(Q(*r, "root/b").usage_share_avg, 5.0 / 12);
  EXPECT_DOUBLE_EQ(Q(*r, "root").usage_share_avg, 44.0 / 48);
  // Waits: a {0, 8.5}, b {0}; root (every level) {0, 0, 8.5}.
  const WaitStats& a = Q(*r, "root/a").wait;
  EXPECT_EQ(a.count, 2);
  EXPECT_DOUBLE_EQ(a.mean_ms, 4250);
  EXPECT_EQ(a.p50_ms, 0);  // nearest rank: ceil(.5 * 2) = 1st
  EXPECT_EQ(a.p95_ms, 8500);
  EXPECT_EQ(a.max_ms, 8500);
  EXPECT_EQ(Q(*r, "root").wait.count, 3);
  EXPECT_EQ(Q(*r, "root").wait.p50_ms, 0);  // ceil(.5 * 3) = 2nd of {0, 0, 8500}
  EXPECT_EQ(Q(*r, "root").jobs, 3);
  EXPECT_EQ(Q(*r, "root/a").jobs, 2);
  // Sizes (tasks x dominant share): j1 .5, j2 1, j3 .5: all "large" (>= 10%).
  EXPECT_EQ(Q(*r, "root").wait_by_class[2].count, 3);
  EXPECT_EQ(Q(*r, "root").wait_by_class[0].count, 0);
  // a and b both wait on [1.5, 5): Jain over shares (.5, .5) = 1.
  EXPECT_EQ(Q(*r, "root").contended_ms, 3500);
  EXPECT_DOUBLE_EQ(Q(*r, "root").jain_avg, 1);
}

// A completion at t frees room for an arrival at the same t (completions
// come first), and the arrival's fill happens at that t.
TEST(Simulate, CompletionsBeforeArrivalsAtAnInstant) {
  Workload w = Parse(
      "name,queue,arrival,duration,cpu\n"
      "x,root/a,0,1,4\n"
      "y,root/b,1,1,4\n");
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs[1].first_start_ms, 1000);
  EXPECT_EQ(r->jobs[1].end_ms, 2000);
  EXPECT_DOUBLE_EQ(r->utilization[0], 1.0);
  EXPECT_EQ(Q(*r, "root/b").wait.max_ms, 0);
}

// b holds the cpu for 10 s; a's job arrives at 1 and waits until 10:
// a starves 9 s (waiting, nothing running), root never (b runs), and the
// engine explains the wait by the saturated cpu (1 job x 9 s).
TEST(Simulate, StarvationAndWhy) {
  Workload w = Parse(
      "name,queue,arrival,duration,tasks,cpu\n"
      "hog,root/b,0,10,4,1\n"
      "late,root/a,1,1,1,1\n");
  SimulateOptions o;
  o.explain_per_leaf = 4;
  auto r = Simulate(kCluster, kQueues, w, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Q(*r, "root/a").starved_ms, 9000);
  EXPECT_EQ(Q(*r, "root/b").starved_ms, 0);
  EXPECT_EQ(Q(*r, "root").starved_ms, 0);
  ASSERT_EQ(Q(*r, "root/a").why.size(), 1u);
  EXPECT_EQ(Q(*r, "root/a").why[0].first, "cluster saturated in cpu");
  EXPECT_DOUBLE_EQ(Q(*r, "root/a").why[0].second, 9000);
  EXPECT_EQ(Q(*r, "root").contended_ms, 0);  // b has nothing waiting
}

// a holds all 4 cpu and has more waiting from 0.5; b's job waits on [2, 10):
// contended, shares x_a = 1, x_b = 0: Jain = 1^2 / (2 * 1) = .5.
TEST(Simulate, JainIndexOfContendedSiblings) {
  Workload w = Parse(
      "name,queue,arrival,duration,tasks,cpu\n"
      "big,root/a,0,10,4,1\n"
      "more,root/a,0.5,1,1,1\n"
      "small,root/b,2,1,1,1\n");
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Q(*r, "root").contended_ms, 8000);
  EXPECT_DOUBLE_EQ(Q(*r, "root").jain_avg, 0.5);
  EXPECT_EQ(Q(*r, "root/b").starved_ms, 8000);
  EXPECT_EQ(r->jobs[2].first_start_ms, 10000);
}

// Fair share (docs/simulate.md), by hand. kExample: a and b hold jobs on
// [0,10) (j1, j2), then only a (j3 until 12): a = (.5·10 + 1·2)/12,
// b = .5·10/12; root 1 throughout.
TEST(Simulate, FairShareOfTheQueuesThatWantedMore) {
  auto r = Simulate(kCluster, kQueues, Parse(kExample));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(Q(*r, "root").fair_share_avg, 1);
  EXPECT_DOUBLE_EQ(Q(*r, "root/a").fair_share_avg, 7.0 / 12);
  EXPECT_DOUBLE_EQ(Q(*r, "root/b").fair_share_avg, 5.0 / 12);
  // Nested and weighted: p (x weight 1, y weight 3) and z, all weight 1;
  // every job starts at once. x on [0,4), y on [2,6), z on [0,8):
  // [0,2) p .5 (x .5), z .5; [2,4) p .5 (x .125, y .375), z .5;
  // [4,6) p .5 (y .5), z .5; [6,8) z 1.
  const std::vector<QueueSpec> tree = {{.path = "root/p/x"}, {.path = "root/p/y", .weight = 3}, {.path = "root/z"}};
  auto n = Simulate(kCluster, tree,
                    Parse("name,queue,arrival,duration,cpu\njx,root/p/x,0,4,1\njy,root/p/y,2,4,1\njz,root/z,0,8,1\n"));
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_DOUBLE_EQ(Q(*n, "root/p").fair_share_avg, 3.0 / 8);
  EXPECT_DOUBLE_EQ(Q(*n, "root/z").fair_share_avg, 5.0 / 8);
  EXPECT_DOUBLE_EQ(Q(*n, "root/p/x").fair_share_avg, 1.25 / 8);
  EXPECT_DOUBLE_EQ(Q(*n, "root/p/y").fair_share_avg, 1.75 / 8);
  // A job that waits counts as wanting more: z's second job cannot start
  // (cpu 4 of 4 held by z until 8) and waits until 8, keeping z active
  // until 9 while p ended at 6: z .5 on [0,6), 1 on [6,9).
  auto w = Simulate(kCluster, tree,
                    Parse("name,queue,arrival,duration,cpu\njx,root/p/x,0,6,0\njz,root/z,0,8,4\nkz,root/z,1,1,1\n"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->jobs[2].first_start_ms, 8000);
  EXPECT_DOUBLE_EQ(Q(*w, "root/z").fair_share_avg, (0.5 * 6 + 3) / 9);
  EXPECT_DOUBLE_EQ(Q(*w, "root/p").fair_share_avg, 0.5 * 6 / 9);
}

TEST(Simulate, EmptyWorkloadHasMakespanZero) {
  Workload w = Parse("name,queue,arrival,duration\n");
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->makespan_ms, 0);
  EXPECT_EQ(r->utilization, (std::vector<double>{0, 0}));
  EXPECT_EQ(Q(*r, "root/a").wait.count, 0);
  EXPECT_EQ(Q(*r, "root/a").usage_share_avg, 0);
}

TEST(Simulate, BadQueuesAreAnError) {
  std::vector<QueueSpec> bad = {{.path = "root/a", .capability = {{"cpu", 1000}}},
                                {.path = "root/a/x", .capability = {{"cpu", 2000}}}};
  auto r = Simulate(kCluster, bad, Parse("name,queue,arrival,duration\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("root/a/x"));
}

// The per-job record keeps task counts in 32 bits: a larger job is refused
// with its line, and nothing is simulated.
TEST(Simulate, TasksAboveTheRecordsRangeAreAnError) {
  Workload w = Parse("name,queue,arrival,duration,tasks,cpu\nj1,root/a,0,1,1,1\nj2,root/a,0,1,4294967296,1\n");
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("w.csv:3: tasks: 4294967296 is above"));
  // The largest kept is accepted; a capability of 0 keeps it waiting (not refused).
  w.jobs[1].spec.tasks = 4294967295;
  w.jobs[1].spec.queue = "root/b";
  const std::vector<QueueSpec> capped = {{.path = "root/a"}, {.path = "root/b", .capability = {{"cpu", 0}}}};
  auto ok = Simulate(kCluster, capped, w);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->jobs[1].refused, "");
  EXPECT_EQ(ok->jobs[1].first_start_ms, -1);
}

// The last start is kept as its distance from the first; a distance of
// 2^32 ms or more goes to a side table. cpu 4, one job of 5 tasks of 1 cpu,
// 5,000,000 s each: four start at 0, the fifth at 5e9 ms (> 2^32) and ends
// at 1e10 ms.
TEST(Simulate, LastStartFarAfterTheFirst) {
  Workload w = Parse("name,queue,arrival,duration,tasks,cpu\nj1,root/a,0,5000000,5,1\n");
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->jobs[0].first_start_ms, 0);
  EXPECT_EQ(r->jobs[0].last_start_ms, 5000000000);
  EXPECT_EQ(r->jobs[0].end_ms, 10000000000);
  EXPECT_EQ(r->makespan_ms, 10000000000);
}

TEST(SimulateOutputs, JobsCsvAndJson) {
  Workload w = Parse(kExample);
  auto r = Simulate(kCluster, kQueues, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(JobsCsv(w, *r),
            "name,queue,arrival,first_start,last_start,end\n"
            "j1,root/a,0.000,0.000,0.000,10.000\n"
            "j2,root/b,0.000,0.000,5.000,10.000\n"
            "j3,root/a,1.500,10.000,10.000,12.000\n"
            "j4,,1.500,,,\n"
            "j5,,1.500,,,\n");
  auto j = nlohmann::json::parse(SimulateReportJson(w, *r));
  EXPECT_EQ(j["jobs"], 5);
  EXPECT_EQ(j["unscheduled"], 2);
  EXPECT_EQ(j["makespan"], 12.0);
  EXPECT_DOUBLE_EQ(j["utilization"]["cpu"].get<double>(), 44.0 / 48);
  ASSERT_EQ(j["queues"].size(), 3u);
  EXPECT_EQ(j["queues"][0]["path"], "root");
  EXPECT_EQ(j["queues"][1]["path"], "root/a");
  EXPECT_EQ(j["queues"][1]["jobs"], 2);
  EXPECT_DOUBLE_EQ(j["queues"][1]["usage_share_avg"].get<double>(), 0.5);
  EXPECT_EQ(j["queues"][1]["wait"]["p95"], 8.5);
  EXPECT_EQ(j["queues"][1]["wait"]["mean"], 4.25);
  EXPECT_TRUE(j["queues"][1]["wait_by_size"]["small"]["p50"].is_null());
  EXPECT_TRUE(j["wall_seconds"].is_number());
  EXPECT_EQ(j["refusals"].size(), 2u);
  EXPECT_EQ(FormatMs(1), "0.001");
  EXPECT_EQ(FormatMs(-1), "");
}

TEST(SimulateOutputs, CompareAndTimeline) {
  Workload w = Parse(kExample);
  SimulateOptions o;
  o.timeline_points = 100;
  auto a = Simulate(kCluster, kQueues, w, o);
  std::vector<QueueSpec> other = {{.path = "root/a", .weight = 3}, {.path = "root/b"}, {.path = "root/c"}};
  auto b = Simulate(kCluster, other, w, o);
  ASSERT_TRUE(a.ok() && b.ok());
  auto j = nlohmann::json::parse(SimulateCompareJson(w, *a, *b, "other.yaml"));
  EXPECT_EQ(j["compare"]["config"], "other.yaml");
  ASSERT_EQ(j["compare"]["queues"].size(), 4u);  // root, a, b, then c (only in b)
  EXPECT_EQ(j["compare"]["queues"][3]["path"], "root/c");
  EXPECT_TRUE(j["compare"]["queues"][3]["jobs"][0].is_null());
  EXPECT_EQ(j["compare"]["queues"][1]["jobs"][0], 2);
  const std::string table = SimulateCompareTable(*a, *b);
  EXPECT_THAT(table, HasSubstr("2 -> "));
  EXPECT_THAT(table, HasSubstr("makespan 12.000 -> "));
  ASSERT_FALSE(a->timeline.t_ms.empty());
  EXPECT_EQ(a->timeline.queues, (std::vector<std::string>{"root/a", "root/b"}));
  EXPECT_EQ(a->timeline.t_ms.back(), a->makespan_ms);
  EXPECT_DOUBLE_EQ(a->timeline.share[0][0], 0.5);  // t=0: a holds 2 of 4 cpu
}

}  // namespace
}  // namespace hdrf
