// The worked examples of §14 and §15 (tests/data/plans/NAME.yaml, each with
// its answer worked by hand in its comment) run through the REFERENCE
// model: the jobs after the steps and the `plans` list must equal
// NAME.expected.json, what `hdrf sim NAME.yaml` prints (docs/spec.md §10, §15).
//
// The scenario's cluster, queues and jobs are read by hdrf::ParseScenario;
// its steps (fill, finish, remove, submit, plan, evict) are read here from
// the YAML, so that this runner does not depend on the engine's scenario
// runner.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hdrf/config.h"
#include "tests/plan_examples.h"
#include "tests/reference/reference_model.h"
#include "tests/reference/reference_test_util.h"

namespace hdrf::ref {
namespace {

using nlohmann::json;

std::string ModeName(PlanMode m) {
  switch (m) {
    case PlanMode::kReclaim: return "reclaim";
    case PlanMode::kPreempt: return "preempt";
    case PlanMode::kBoth: return "both";
  }
  return "?";
}

PlanMode ModeOf(const std::string& s) {
  if (s == "preempt") return PlanMode::kPreempt;
  if (s == "both") return PlanMode::kBoth;
  EXPECT_EQ(s, "reclaim") << "unknown mode";
  return PlanMode::kReclaim;
}

// The scenario without its steps, parsed by the project's parser.
Scenario ParseWithoutSteps(YAML::Node doc, const std::string& name) {
  doc.remove("steps");
  YAML::Emitter out;
  out << doc;
  auto s = ParseScenario(out.c_str(), name);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scenario{};
}

// A `submit` step's job, parsed as the only job of a scenario on the same
// cluster.
JobSpec ParseSubmit(const YAML::Node& cluster, const YAML::Node& job, const std::string& name) {
  YAML::Node doc;
  doc["cluster"] = cluster;
  doc["jobs"].push_back(job);
  Scenario s = ParseWithoutSteps(doc, name);
  EXPECT_EQ(s.jobs.size(), 1u);
  return s.jobs.empty() ? JobSpec{} : s.jobs[0];
}

// Runs the plan or evict step `args` on `m`; returns its object of `plans`.
json PlanStep(ReferenceModel& m, const YAML::Node& args, bool evict) {
  const std::string job = args["job"].as<std::string>();
  const PlanMode mode = args["mode"] ? ModeOf(args["mode"].as<std::string>()) : PlanMode::kReclaim;
  std::optional<int64_t> max_victims;
  if (args["maxVictims"]) max_victims = args["maxVictims"].as<int64_t>();
  auto plan = m.Plan(job, mode, max_victims);
  EXPECT_TRUE(plan.ok()) << job << ": " << plan.status().ToString();
  if (!plan.ok()) return json{{"job", job}, {"error", plan.status().ToString()}};
  json victims = json::array();
  for (const auto& v : plan->victims) victims.push_back({{"job", v.job}, {"tasks", v.tasks}});
  json shortj = json::object();
  for (const auto& [r, v] : plan->short_by) shortj[r] = v;
  bool applied = false;
  if (evict && plan->fits) {
    const Status st = m.ApplyPlan(*plan);
    EXPECT_TRUE(st.ok()) << job << ": " << st.ToString();
    applied = st.ok();
  }
  return {{"job", job},          {"mode", ModeName(mode)}, {"fits", plan->fits}, {"tasks", plan->tasks},
          {"victims", victims}, {"short", shortj},        {"applied", applied}};
}

// Runs one step on `m`; plan and evict steps append to `plans`.
void RunStep(ReferenceModel& m, const YAML::Node& cluster, const YAML::Node& step, const std::string& name,
             json& plans) {
  if (step.IsScalar()) {
    ASSERT_EQ(step.as<std::string>(), "fill");
    m.Fill();
    return;
  }
  ASSERT_TRUE(step.IsMap() && step.size() == 1) << name << ": a step is `fill` or a one-key map";
  const std::string kind = step.begin()->first.as<std::string>();
  const YAML::Node args = step.begin()->second;
  if (kind == "finish") {
    const int64_t n = args["tasks"] ? args["tasks"].as<int64_t>() : 1;
    ASSERT_TRUE(m.Finish(args["job"].as<std::string>(), n).ok()) << name;
  } else if (kind == "remove") {
    ASSERT_TRUE(m.Remove(args["job"].as<std::string>()).ok()) << name;
  } else if (kind == "submit") {
    auto r = m.Submit(ParseSubmit(cluster, args, name));
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
  } else if (kind == "plan" || kind == "evict") {
    plans.push_back(PlanStep(m, args, kind == "evict"));
  } else {
    FAIL() << name << ": unknown step " << kind;
  }
}

// What `hdrf sim` prints for the scenario file `path`, run on the reference.
json RunOnReference(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const YAML::Node doc = YAML::LoadFile(path);
  const Scenario sc = ParseWithoutSteps(YAML::Clone(doc), name);
  auto made = ReferenceModel::Create(sc.cluster, sc.queues, sc.overcommit_factor);
  EXPECT_TRUE(made.ok()) << name << ": " << made.status().ToString();
  if (!made.ok()) return {};
  ReferenceModel& m = **made;
  for (const auto& j : sc.jobs) {
    auto r = m.Submit(j);
    EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
  }
  json plans = json::array();
  if (!doc["steps"]) {
    m.Fill();
  } else {
    for (const auto& step : doc["steps"]) RunStep(m, doc["cluster"], step, name, plans);
  }
  json jobs = json::array();
  for (const auto& j : m.Jobs()) jobs.push_back({{"name", j.name}, {"queue", j.queue}, {"tasks_allocated", j.allocated}});
  return {{"jobs", jobs}, {"plans", plans}};
}

TEST(ReferencePlans, WorkedExamplesMatchTheirExpectedOutput) {
  const std::vector<std::string> files = testing::PlanExampleFiles();
  ASSERT_GE(files.size(), 15u) << "tests/data/plans holds the worked examples";
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    testing::ExpectSameSimOutput(RunOnReference(path), testing::ExpectedOutput(path));
  }
}

// ---------------------------------------------------------------------------
// Plan and ApplyPlan: errors and stale plans
// ---------------------------------------------------------------------------

using namespace testutil;  // NOLINT: the helpers of reference_test_util.h

// 4 CPUs, root/a and root/b; hb (root/b) runs 4 of 4; w (root/a) waits.
std::unique_ptr<ReferenceModel> FullCluster() {
  auto m = Make({{"cpu", 4 * kCpu}}, {Q("root/a"), Q("root/b")});
  if (m == nullptr) return nullptr;
  MustSubmit(*m, J("hb", "root/b", 4, {{"cpu", kCpu}}));
  MustSubmit(*m, J("w", "root/a", 3, {{"cpu", kCpu}}));
  EXPECT_TRUE(m->Allocate("hb", 4).ok());
  return m;
}

TEST(ReferencePlanApi, Errors) {
  auto m = FullCluster();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Plan("nope", PlanMode::kReclaim).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(m->Plan("hb", PlanMode::kReclaim).status().code(), StatusCode::kFailedPrecondition);  // all running
  EXPECT_EQ(m->Plan("w", PlanMode::kReclaim, -1).status().code(), StatusCode::kInvalidArgument);
  auto failed = m->Plan("w", PlanMode::kPreempt);  // nothing in root/a
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE(failed->fits);
  EXPECT_EQ(failed->short_by, (ResourceAmounts{{"cpu", kCpu}}));
  const std::string before = Dump(*m);
  EXPECT_EQ(m->ApplyPlan(*failed).code(), StatusCode::kFailedPrecondition);
  RefPlan ghost = *m->Plan("w", PlanMode::kReclaim);
  ghost.victims[0].job = "gone";
  EXPECT_EQ(m->ApplyPlan(ghost).code(), StatusCode::kAborted);  // a victim is gone: stale
  ghost = *m->Plan("w", PlanMode::kReclaim);
  ghost.job = "gone";
  EXPECT_EQ(m->ApplyPlan(ghost).code(), StatusCode::kNotFound);
  EXPECT_EQ(Dump(*m), before);
  // A Pending job (gate on) cannot plan.
  auto g = Make({{"cpu", kCpu}}, {Q("root/a")}, 0.0);
  ASSERT_NE(g, nullptr);
  MustSubmit(*g, J("p", "root/a", 1, {{"cpu", kCpu}}));
  EXPECT_EQ(g->Plan("p", PlanMode::kBoth).status().code(), StatusCode::kFailedPrecondition);
}

// A plan is checked again on the state it meets; a stale one is Aborted and
// changes nothing.
TEST(ReferencePlanApi, StalePlansAreAborted) {
  auto m = FullCluster();
  ASSERT_NE(m, nullptr);
  const RefPlan plan = *m->Plan("w", PlanMode::kReclaim);
  ASSERT_TRUE(plan.fits);
  ASSERT_EQ(plan.victims, (std::vector<RefPlanVictim>{{"hb", 1}}));
  // hb drops to 2 of 4 (w 2): the entry is still hb's unit, but no longer
  // permitted (a is no longer below b).
  ASSERT_TRUE(m->Release("hb", 2).ok());
  ASSERT_TRUE(m->Allocate("w", 2).ok());
  std::string before = Dump(*m);
  EXPECT_EQ(m->ApplyPlan(plan).code(), StatusCode::kAborted);
  EXPECT_EQ(Dump(*m), before);
  // The job started meanwhile with a different demand: also stale.
  auto gang = Make({{"cpu", 4 * kCpu}}, {Q("root/a"), Q("root/b")});
  ASSERT_NE(gang, nullptr);
  MustSubmit(*gang, J("hb", "root/b", 4, {{"cpu", kCpu}}));
  MustSubmit(*gang, WithMin(J("g", "root/a", 3, {{"cpu", kCpu}}), 2));
  ASSERT_TRUE(gang->Allocate("hb", 4).ok());
  const RefPlan gp = *gang->Plan("g", PlanMode::kReclaim);
  ASSERT_TRUE(gp.fits);
  EXPECT_EQ(gp.tasks, 2);
  EXPECT_EQ(gp.victims, (std::vector<RefPlanVictim>{{"hb", 1}, {"hb", 1}}));
  ASSERT_TRUE(gang->Release("hb", 1).ok());
  ASSERT_TRUE(gang->Allocate("g", 1).ok());  // the host started one task
  before = Dump(*gang);
  EXPECT_EQ(gang->ApplyPlan(gp).code(), StatusCode::kAborted);
  EXPECT_EQ(Dump(*gang), before);
}

// A plan that fits at once is empty and applying it allocates the demand;
// a fresh plan applies; victims keep their task count.
TEST(ReferencePlanApi, ApplyStopsVictimsThenAllocates) {
  auto m = FullCluster();
  ASSERT_NE(m, nullptr);
  const RefPlan plan = *m->Plan("w", PlanMode::kBoth);
  ASSERT_TRUE(m->ApplyPlan(plan).ok());
  EXPECT_EQ(Allocated(*m, "hb"), 3);
  EXPECT_EQ(JobView(*m, "hb").tasks, 4);
  EXPECT_EQ(Allocated(*m, "w"), 1);
  ASSERT_TRUE(m->Release("hb", 1).ok());
  const RefPlan empty = *m->Plan("w", PlanMode::kReclaim);
  EXPECT_TRUE(empty.fits);
  EXPECT_TRUE(empty.victims.empty());
  ASSERT_TRUE(m->ApplyPlan(empty).ok());
  EXPECT_EQ(Allocated(*m, "w"), 2);
}

// room[r] under a user limit is the largest whole amount within it, so
// short rounds up. root/a: minUserLimitPercent 33, three users (n = 3),
// B = 10 CPUs: alice may hold max(3.3, 3.333...) CPUs, 3333m as a whole
// amount. al runs 6 tasks of 500m (3000m); al2 asks 1 CPU: room =
// 3333 - 3000 = 333m, short 667m (1000m - 333.33m rounded up).
// preempt: al's unit (500m) raises the room to 833m, then 1333m: two
// entries (before 0 < .3, after .1 <= .25; then .1 <= .2). With
// maxVictims 1: short 1000 - 833 = 167m.
TEST(ReferencePlanApi, UserLimitRoomIsAWholeAmount) {
  QueueSpec a = Q("root/a");
  a.min_user_limit_percent = 33;
  auto m = Make({{"cpu", 10 * kCpu}}, {a});
  ASSERT_NE(m, nullptr);
  MustSubmit(*m, J("al", "root/a", 8, {{"cpu", kCpu / 2}}, "alice"));
  MustSubmit(*m, J("bo", "root/a", 1, {{"cpu", kCpu}}, "bob"));
  MustSubmit(*m, J("ca", "root/a", 1, {{"cpu", kCpu}}, "carol"));
  MustSubmit(*m, J("al2", "root/a", 1, {{"cpu", kCpu}}, "alice"));
  ASSERT_TRUE(m->Allocate("al", 6).ok());
  auto reclaim = m->Plan("al2", PlanMode::kReclaim);
  ASSERT_TRUE(reclaim.ok());
  EXPECT_FALSE(reclaim->fits);
  EXPECT_EQ(reclaim->short_by, (ResourceAmounts{{"cpu", 667}}));
  auto preempt = m->Plan("al2", PlanMode::kPreempt);
  ASSERT_TRUE(preempt.ok());
  EXPECT_TRUE(preempt->fits);
  EXPECT_EQ(preempt->victims, (std::vector<RefPlanVictim>{{"al", 1}, {"al", 1}}));
  auto one = m->Plan("al2", PlanMode::kPreempt, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->fits);
  EXPECT_EQ(one->short_by, (ResourceAmounts{{"cpu", 167}}));
}

}  // namespace
}  // namespace hdrf::ref
