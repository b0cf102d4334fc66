// A refused call changes nothing (issue 26), for every event entry point of
// the C++ API: on an engine with a store, each kind of refusal a call can
// give (a bad argument, an unknown name, an overflow, too much for the
// cluster) is made, and the digest, last_seq and the store read back after
// reopening must be what they were. The C interface has its own harness
// (tests/capi/refusal_test.cc), Python tests/python/test_refusal.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "tests/temp_dir.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kBig = 9220000000000000000;  // example.com/big: near the int64 limit
constexpr int64_t kSix = 6000000000000000000;   // two of them wrap an int64
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("hdrf_refusal_test") {}
};

// One refusal: the call, the code it must give and a part of its message.
struct Refusal {
  std::string what;
  std::function<Status(Engine&)> call;
  StatusCode code;
  std::string message;
};

// An engine over a store: root/a (guarantees), root/b, root/c (closed), jobs
// "run" (2 of 4 tasks running, root/a) and "wait" (root/b).
class RefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.db_path = dir_.path + "/db";
    const ResourceAmounts cluster{
        {"cpu", 10000}, {"memory", int64_t{64} << 30}, {"example.com/big", kBig}};
    auto e = Engine::Create(cluster,
                            {{.path = "root/a", .guarantee = {{"cpu", 2000}, {"example.com/big", kSix}}},
                             {.path = "root/b"},
                             {.path = "root/c", .state = QueueState::kClosed}},
                            options_);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto run = engine_->Submit({.name = "run", .queue = "root/a", .tasks = 4, .task = {{"cpu", 1000}}});
    auto wait = engine_->Submit({.name = "wait", .queue = "root/b", .tasks = 2, .task = {{"cpu", 1000}}});
    ASSERT_TRUE(run.ok() && wait.ok());
    run_ = *run;
    wait_ = *wait;
    ASSERT_TRUE(engine_->Allocate(run_, 2).ok());
  }

  // Makes every refusal on a fresh state and checks that nothing changed,
  // in memory and in the store (closed and opened again after each).
  void ExpectRefusedAndNothingChanged(const std::vector<Refusal>& refusals) {
    for (const Refusal& r : refusals) {
      SCOPED_TRACE(r.what);
      const std::string digest = engine_->DigestHex();
      const uint64_t seq = engine_->last_seq();
      const Status s = r.call(*engine_);
      EXPECT_EQ(s.code(), r.code) << s.ToString();
      EXPECT_THAT(s.message(), HasSubstr(r.message));
      EXPECT_EQ(engine_->DigestHex(), digest);
      EXPECT_EQ(engine_->last_seq(), seq);
      ASSERT_TRUE(engine_->Close().ok());
      engine_.reset();
      auto reopened = Engine::Open(options_);
      ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
      engine_ = std::move(reopened).value();
      EXPECT_EQ(engine_->DigestHex(), digest);
      EXPECT_EQ(engine_->last_seq(), seq);
      auto run = engine_->FindJob("run");
      auto wait = engine_->FindJob("wait");
      ASSERT_TRUE(run.ok() && wait.ok());
      run_ = *run;
      wait_ = *wait;
    }
  }

  static Status Of(const StatusOr<JobRef>& r) { return r.status(); }
  static Status Of(const StatusOr<ReconcileResult>& r) { return r.status(); }

  // The truth that matches the state, to bend in each reconcile case.
  static ClusterTruth Truth() {
    return {.jobs = {{.name = "run", .queue = "root/a", .task = {{"cpu", 1000}}, .tasks = 4, .running = 2},
                     {.name = "wait", .queue = "root/b", .task = {{"cpu", 1000}}, .tasks = 2}}};
  }
  static Status Reconcile(Engine& e, const std::function<void(ClusterTruth&)>& bend) {
    ClusterTruth t = Truth();
    bend(t);
    return Of(e.Reconcile(t));
  }

  TempDir dir_;
  EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  JobRef run_, wait_;
};

TEST_F(RefusalTest, Submit) {
  auto submit = [](JobSpec s) { return [s](Engine& e) { return Of(e.Submit(s)); }; };
  const ResourceAmounts cpu{{"cpu", 1000}};
  ExpectRefusedAndNothingChanged({
      {"empty name", submit({.queue = "root/b"}), StatusCode::kInvalidArgument, "empty name"},
      {"duplicate", submit({.name = "run", .queue = "root/b"}), StatusCode::kAlreadyExists, "run"},
      {"unknown queue", submit({.name = "x", .queue = "root/zz"}), StatusCode::kNotFound, "root/zz"},
      {"unknown resource", submit({.name = "x", .queue = "root/b", .task = {{"cpus", 1}}}),
       StatusCode::kNotFound, "cpus"},
      {"negative amount", submit({.name = "x", .queue = "root/b", .task = {{"cpu", -1}}}),
       StatusCode::kInvalidArgument, "negative"},
      {"negative tasks", submit({.name = "x", .queue = "root/b", .tasks = -1}), StatusCode::kInvalidArgument,
       "tasks"},
      {"task above the cluster", submit({.name = "x", .queue = "root/b", .task = {{"cpu", 20000}}}),
       StatusCode::kInvalidArgument, "more than the cluster"},
      {"tasks x task overflow",
       submit({.name = "x", .queue = "root/b", .tasks = int64_t{1} << 62, .task = cpu}),
       StatusCode::kInvalidArgument, "largest amount"},
      {"min_available x task overflow",
       submit({.name = "x", .queue = "root/b", .tasks = 2, .task = {{"example.com/big", kBig}}, .min_available = 2}),
       StatusCode::kInvalidArgument, "largest amount"},
      {"weight NaN", submit({.name = "x", .queue = "root/b", .weight = kNaN}), StatusCode::kInvalidArgument,
       "finite"},
      {"weight inf", submit({.name = "x", .queue = "root/b", .weight = kInf}), StatusCode::kInvalidArgument,
       "finite"},
      {"weight 1e304", submit({.name = "x", .queue = "root/b", .weight = 1e304}),
       StatusCode::kInvalidArgument, "largest weight"},
      {"closed queue", submit({.name = "x", .queue = "root/c"}), StatusCode::kFailedPrecondition, "closed"},
  });
}

TEST_F(RefusalTest, TaskEvents) {
  const JobRef stale{run_.id, run_.seq + 100};
  const JobRef flipped{run_.id ^ 1, run_.seq};
  ExpectRefusedAndNothingChanged({
      {"allocate 0", [&](Engine& e) { return e.Allocate(run_, 0); }, StatusCode::kInvalidArgument, "n >= 1"},
      {"allocate -5", [&](Engine& e) { return e.Allocate(run_, -5); }, StatusCode::kInvalidArgument, "n >= 1"},
      {"allocate beyond tasks", [&](Engine& e) { return e.Allocate(run_, 3); }, StatusCode::kOutOfRange,
       "unallocated"},
      {"allocate huge", [&](Engine& e) { return e.Allocate(run_, INT64_MAX); }, StatusCode::kOutOfRange,
       "unallocated"},
      {"release beyond running", [&](Engine& e) { return e.Release(run_, 3); }, StatusCode::kOutOfRange,
       "running"},
      {"finish beyond running", [&](Engine& e) { return e.Finish(wait_, 1); }, StatusCode::kOutOfRange,
       "running"},
      {"release 0", [&](Engine& e) { return e.Release(run_, 0); }, StatusCode::kInvalidArgument, "n >= 1"},
      {"stale ref", [&](Engine& e) { return e.Allocate(stale, 1); }, StatusCode::kNotFound,
       "no such job in this engine"},
      {"flipped id", [&](Engine& e) { return e.Allocate(flipped, 1); }, StatusCode::kNotFound,
       "no such job in this engine"},
      {"remove stale", [&](Engine& e) { return e.Remove(stale); }, StatusCode::kNotFound,
       "no such job in this engine"},
      {"remove flipped id", [&](Engine& e) { return e.Remove(flipped); }, StatusCode::kNotFound,
       "no such job in this engine"},
      {"finish flipped id", [&](Engine& e) { return e.Finish(flipped, 1); }, StatusCode::kNotFound,
       "no such job in this engine"},
  });
}

TEST_F(RefusalTest, Queues) {
  auto create = [](QueueSpec q) { return [q](Engine& e) { return e.CreateQueue(q); }; };
  auto update = [](QueueSpec q) { return [q](Engine& e) { return e.UpdateQueue(q); }; };
  ExpectRefusedAndNothingChanged({
      {"create existing", create({.path = "root/a"}), StatusCode::kAlreadyExists, "root/a"},
      {"create without parent", create({.path = "root/x/y"}), StatusCode::kNotFound, "root/x"},
      {"create bad path", create({.path = "rot/x"}), StatusCode::kInvalidArgument, "root/"},
      {"create empty name", create({.path = "root//x"}), StatusCode::kInvalidArgument, "empty queue name"},
      {"create weight NaN", create({.path = "root/x", .weight = kNaN}), StatusCode::kInvalidArgument, "finite"},
      {"create weight 1e304", create({.path = "root/x", .weight = 1e304}), StatusCode::kInvalidArgument,
       "largest weight"},
      {"create unknown resource", create({.path = "root/x", .capability = {{"gpu", 1}}}),
       StatusCode::kNotFound, "gpu"},
      {"create guarantee sum overflow",
       create({.path = "root/x", .guarantee = {{"example.com/big", kSix}}}), StatusCode::kInvalidArgument,
       "largest amount"},
      {"create guarantee above cluster", create({.path = "root/x", .guarantee = {{"cpu", 9000}}}),
       StatusCode::kInvalidArgument, "more than the cluster"},
      {"create under a leaf with jobs", create({.path = "root/a/x"}), StatusCode::kInvalidArgument,
       "holds jobs"},
      {"create user limit NaN", create({.path = "root/x", .user_limit_factor = kNaN}),
       StatusCode::kInvalidArgument, "userLimitFactor"},
      {"update unknown", update({.path = "root/zz"}), StatusCode::kNotFound, "root/zz"},
      {"update weight inf", update({.path = "root/b", .weight = kInf}), StatusCode::kInvalidArgument,
       "finite"},
      {"update guarantee sum overflow", update({.path = "root/b", .guarantee = {{"example.com/big", kSix}}}),
       StatusCode::kInvalidArgument, "largest amount"},
      {"update min user limit 0", update({.path = "root/b", .min_user_limit_percent = 0}),
       StatusCode::kInvalidArgument, "minUserLimitPercent"},
      {"state unknown", [](Engine& e) { return e.SetQueueState("root/zz", QueueState::kClosed); },
       StatusCode::kNotFound, "root/zz"},
      {"delete root", [](Engine& e) { return e.DeleteQueue("root"); }, StatusCode::kInvalidArgument, "root"},
      {"delete open", [](Engine& e) { return e.DeleteQueue("root/b"); }, StatusCode::kInvalidArgument,
       "closed"},
      {"delete unknown", [](Engine& e) { return e.DeleteQueue("root/zz"); }, StatusCode::kNotFound, "root/zz"},
  });
}

TEST_F(RefusalTest, Capacity) {
  auto set = [](ResourceAmounts c) { return [c](Engine& e) { return e.SetCapacity(c); }; };
  ExpectRefusedAndNothingChanged({
      {"missing resource", set({{"cpu", 1}}), StatusCode::kInvalidArgument, "exactly"},
      {"unknown resource", set({{"cpu", 1}, {"memory", 1}, {"gpu", 1}}), StatusCode::kNotFound, "gpu"},
      {"negative", set({{"cpu", -1}, {"memory", 1}, {"example.com/big", 1}}), StatusCode::kInvalidArgument,
       "negative"},
  });
}

// Issue 26 item 1: a refused reconcile changed the store (it removed the
// running jobs and logged it before it met the bad truth job).
TEST_F(RefusalTest, Reconcile) {
  using T = ClusterTruth;
  auto rec = [](std::function<void(T&)> bend) { return [bend](Engine& e) { return Reconcile(e, bend); }; };
  ExpectRefusedAndNothingChanged({
      {"unknown queue", rec([](T& t) {
         t.jobs = {{.name = "z", .queue = "root/nowhere", .task = {{"cpu", 1}}}};
       }),
       StatusCode::kNotFound, "root/nowhere"},
      {"empty job", rec([](T& t) { t.jobs.push_back({}); }), StatusCode::kInvalidArgument, "empty name"},
      {"running above tasks", rec([](T& t) { t.jobs[0].running = 5; }), StatusCode::kInvalidArgument,
       "running 5"},
      {"given twice", rec([](T& t) { t.jobs.push_back(t.jobs[1]); }), StatusCode::kInvalidArgument, "twice"},
      {"unknown resource", rec([](T& t) { t.jobs[1].task = {{"gpu", 1}}; }), StatusCode::kNotFound, "gpu"},
      // More running tasks than the cluster holds: a new job, and a job
      // resubmitted (its shape changed) — both were applied before.
      {"new job too big", rec([](T& t) {
         t.jobs.push_back({.name = "new", .queue = "root/b", .task = {{"cpu", 5000}}, .tasks = 3, .running = 3});
       }),
       StatusCode::kOutOfRange, "free"},
      {"resubmitted too big", rec([](T& t) { t.jobs[0].task = {{"cpu", 6000}}; }), StatusCode::kOutOfRange,
       "free"},
      {"overflow", rec([](T& t) { t.jobs[1].tasks = int64_t{1} << 62; }), StatusCode::kInvalidArgument,
       "largest amount"},
      {"weight 1e304", rec([](T& t) { t.jobs[1].weight = 1e304; }), StatusCode::kInvalidArgument,
       "largest weight"},
      {"bad queue tree", rec([](T& t) { t.queues = std::vector<QueueSpec>{{.path = "root/a", .weight = kNaN}}; }),
       StatusCode::kInvalidArgument, "finite"},
  });
  // A good truth still reconciles (the dry run does not stand in the way).
  ClusterTruth t = Truth();
  t.jobs[0].running = 4;
  auto r = engine_->Reconcile(t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->events, 1u);
  EXPECT_EQ(engine_->GetJob("run")->allocated, 4);
}

TEST_F(RefusalTest, ApplyTasksWithEveryOpRefused) {
  const JobRef stale{run_.id, run_.seq + 100};
  ExpectRefusedAndNothingChanged({
      {"batch", [&](Engine& e) {
         Status st[3];
         const Engine::TaskOp ops[] = {{.job = run_, .n = 3, .status = &st[0]},
                                       {.job = run_, .n = 0, .type = Event::Type::kRelease, .status = &st[1]},
                                       {.job = stale, .type = Event::Type::kRemove, .status = &st[2]}};
         size_t refused = 0;
         uint64_t last = 1;
         // Each op is refused on its own (the batch itself is accepted).
         EXPECT_TRUE(e.ApplyTasks(ops, 3, &last, &refused).ok());
         EXPECT_EQ(refused, 3u);
         EXPECT_EQ(st[1].code(), StatusCode::kInvalidArgument);
         EXPECT_EQ(st[2].code(), StatusCode::kNotFound);
         return st[0];
       },
       StatusCode::kOutOfRange, "unallocated"},
  });
}

TEST_F(RefusalTest, ApplyEvent) {
  Event bad_type = Event::Allocate(run_.seq, 1);
  bad_type.type = static_cast<Event::Type>(77);
  ExpectRefusedAndNothingChanged({
      {"unknown seq", [&](Engine& e) { return e.Apply(Event::Allocate(run_.seq + 100, 1)); },
       StatusCode::kNotFound, "unknown job"},
      {"bad type", [&](Engine& e) { return e.Apply(bad_type); }, StatusCode::kInvalidArgument, "77"},
  });
}

// Engine::Create: what it refuses makes no store (issue 26 items 2, 8).
TEST(RefusedCreate, MakesNoStore) {
  const ResourceAmounts big{{"example.com/big", kBig}};
  struct Case {
    std::string what;
    ResourceAmounts cluster;
    std::vector<QueueSpec> queues;
    std::string message;
  } cases[] = {
      // Item 2: Python took these names, C and the tools refused them; an
      // empty one made a store that recovery refused.
      {"empty resource name", {{"", 5}, {"cpu", 1000}}, {}, "empty resource name"},
      {"cpus", {{"cpus", 5}}, {}, "unknown resource 'cpus'"},
      {"a/b/c", {{"a/b/c", 5}, {"cpu", 1000}}, {}, "unknown resource 'a/b/c'"},
      // Item 8: two guarantees of 6e18m on a 9.22e18m cluster wrapped.
      {"guarantee sum", big,
       {{.path = "root/a", .guarantee = {{"example.com/big", kSix}}},
        {.path = "root/b", .guarantee = {{"example.com/big", kSix}}}},
       "largest amount"},
      {"guarantee sum under a parent", big,
       {{.path = "root/p", .guarantee = {{"example.com/big", kBig}}},
        {.path = "root/p/a", .guarantee = {{"example.com/big", kSix}}},
        {.path = "root/p/b", .guarantee = {{"example.com/big", kSix}}}},
       "largest amount"},
      {"weight 1e304", big, {{.path = "root/a", .weight = 1e304}}, "largest weight"},
      {"weight -inf", big, {{.path = "root/a", .weight = -kInf}}, "finite"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir dir;
    EngineOptions o;
    o.db_path = dir.path + "/db";
    auto e = Engine::Create(c.cluster, c.queues, o);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(e.status().message(), HasSubstr(c.message));
    EXPECT_NE(::access(o.db_path.c_str(), F_OK), 0) << "a store was made";
  }
  // The largest weight itself is fine, and shares stay finite.
  auto e = Engine::Create(big, {{.path = "root/a", .weight = kMaxWeight}, {.path = "root/b"}});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_TRUE((*e)->Submit({.name = "j", .queue = "root/a", .tasks = 2, .task = {{"example.com/big", 1000}}}).ok());
  ASSERT_TRUE((*e)->Fill().ok());
  for (const QueueInfo& q : (*e)->Queues()) EXPECT_TRUE(std::isfinite(q.share)) << q.path;
}

// Plans (Engine::Plan / ApplyPlan, hdrf/plan.h): refused plans change
// nothing either. New kinds of plan refusal go here.
TEST_F(RefusalTest, Plans) {
  auto apply = [](hdrf::Plan p) { return [p](Engine& e) { return e.ApplyPlan(p); }; };
  hdrf::Plan unfit{.id = wait_.id, .seq = wait_.seq, .job = "wait", .fits = false, .tasks = 1};
  hdrf::Plan gone = unfit;
  gone.seq += 100;
  gone.fits = true;
  hdrf::Plan stale = unfit;
  stale.fits = true;
  stale.victims = {{.id = run_.id, .seq = run_.seq + 100, .name = "run", .tasks = 1}};
  ExpectRefusedAndNothingChanged({
      {"plan with max_victims < 0", [&](Engine& e) { return e.Plan(wait_, {.max_victims = -1}).status(); },
       StatusCode::kInvalidArgument, "maxVictims"},
      {"plan of a stale ref", [&](Engine& e) { return e.Plan(JobRef{wait_.id, wait_.seq + 100}).status(); },
       StatusCode::kNotFound, "no such job in this engine"},
      {"apply a plan that does not fit", apply(unfit), StatusCode::kFailedPrecondition, "wait"},
      {"apply a plan of a removed job", apply(gone), StatusCode::kNotFound, ""},
      {"apply a stale plan", apply(stale), StatusCode::kAborted, "stale plan"},
  });
}

}  // namespace
}  // namespace hdrf
