// Engine::Reconcile (hdrf/reconcile.h): a store that lags the truth (it saw
// only the first part of a random history), reopened and reconciled with
// the truth's view, has the digest of a fresh engine fed the truth; the
// events are logged (a reopened store has the same state); a second
// reconcile changes nothing; the queue tree is matched when given.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/quantity.h"
#include "tests/rng.h"
#include "tests/temp_dir.h"

namespace hdrf {
namespace {

using testing::Rng;

std::vector<QueueSpec> Queues() {
  return {{.path = "root/a/x"}, {.path = "root/a/y", .weight = 2}, {.path = "root/b"}};
}
const char* kLeaves[] = {"root/a/x", "root/a/y", "root/b"};

// One random event on `e` (refusals are part of the history too).
void RandomEvent(Engine& e, Rng& rng, int* next_job) {
  std::vector<JobInfo> jobs = e.Jobs();
  const int r = static_cast<int>(rng.Uniform(0, 99));
  if (jobs.empty() || r < 15) {
    JobSpec s;
    s.name = "j" + std::to_string((*next_job)++);
    s.queue = kLeaves[rng.Uniform(0, 2)];
    s.user = rng.Chance(50) ? "alice" : "bob";
    s.tasks = rng.Uniform(1, 8);
    s.task = {{"cpu", 1000 * rng.Uniform(1, 2)}, {"memory", int64_t{1} << 30}};
    (void)e.Submit(s);
    return;
  }
  const JobInfo& j = jobs[rng.Uniform(0, static_cast<int64_t>(jobs.size()) - 1)];
  const JobRef ref{j.id, j.seq};
  const int64_t n = rng.Uniform(1, 3);
  if (r < 50) (void)e.Allocate(ref, n);
  else if (r < 70) (void)e.Release(ref, n);
  else if (r < 90) (void)e.Finish(ref, n);
  else (void)e.Remove(ref);
}

ClusterTruth TruthOf(const Engine& e, bool with_queues) {
  ClusterTruth t;
  const std::vector<std::string> names = e.ResourceNames();
  for (const JobInfo& j : e.Jobs()) {
    TruthJob tj;
    tj.name = j.name;
    tj.queue = j.queue;
    tj.user = j.user;
    for (size_t r = 0; r < names.size(); ++r)
      if (j.task[r] != 0) tj.task[names[r]] = j.task[r];
    tj.tasks = j.tasks;
    tj.running = j.allocated;
    tj.weight = j.weight;
    tj.min_available = j.min_available;
    t.jobs.push_back(tj);
  }
  if (with_queues) {
    t.queues.emplace();
    for (QueueSpec& s : e.QueueSpecs())
      if (s.path != "root") t.queues->push_back(std::move(s));
  }
  return t;
}

// A fresh engine fed the truth: its queues, its jobs, their running tasks.
std::string FreshDigest(const ResourceAmounts& cluster, const ClusterTruth& t,
                        const std::vector<QueueSpec>& queues) {
  auto f = Engine::Create(cluster, t.queues ? *t.queues : queues);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  for (const TruthJob& j : t.jobs) {
    JobSpec s{.name = j.name, .queue = j.queue, .user = j.user, .tasks = j.tasks, .task = j.task};
    auto ref = (*f)->Submit(s);
    EXPECT_TRUE(ref.ok()) << ref.status().ToString();
    if (j.running > 0) {
      EXPECT_TRUE((*f)->Allocate(*ref, j.running).ok());
    }
  }
  return (*f)->DigestHex();
}

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("hdrf_reconcile_test") {}
};

TEST(Reconcile, LaggingStoreMatchesAFreshEngineFedTheTruth) {
  const ResourceAmounts cluster{{"cpu", 40000}, {"memory", int64_t{64} << 30}};
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TempDir dir;
    EngineOptions o;
    o.db_path = dir.path + "/db";
    auto truth = Engine::Create(cluster, Queues());
    auto store = Engine::Create(cluster, Queues(), o);
    ASSERT_TRUE(truth.ok() && store.ok());
    Rng a(seed), b(seed);
    int na = 0, nb = 0;
    for (int i = 0; i < 150; ++i) {  // the history both saw
      RandomEvent(**truth, a, &na);
      RandomEvent(**store, b, &nb);
    }
    ASSERT_EQ((*truth)->DigestHex(), (*store)->DigestHex());
    for (int i = 0; i < 150; ++i) RandomEvent(**truth, a, &na);  // the store missed these
    ASSERT_TRUE((*store)->Close().ok());
    store->reset();
    auto reopened = Engine::Open(o);
    ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
    const ClusterTruth t = TruthOf(**truth, false);
    auto r = (*reopened)->Reconcile(t);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->changed());
    EXPECT_EQ((*reopened)->DigestHex(), FreshDigest(cluster, t, Queues()));
    EXPECT_EQ((*reopened)->DigestHex(), (*truth)->DigestHex());
    // Nothing left to do.
    auto again = (*reopened)->Reconcile(t);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->events, 0u);
    // The events were logged like any event.
    const std::string digest = (*reopened)->DigestHex();
    ASSERT_TRUE((*reopened)->Close().ok());
    reopened->reset();
    auto third = Engine::Open(o);
    ASSERT_TRUE(third.ok());
    EXPECT_EQ((*third)->DigestHex(), digest);
  }
}

TEST(Reconcile, FewestEventsForEachKindOfChange) {
  auto e = Engine::Create({{"cpu", 100000}}, Queues());
  ASSERT_TRUE(e.ok());
  auto submit = [&](const std::string& name, int64_t tasks, int64_t running) {
    JobSpec s{.name = name, .queue = "root/b", .tasks = tasks, .task = {{"cpu", 1000}}};
    auto ref = (*e)->Submit(s);
    ASSERT_TRUE(ref.ok());
    if (running) {
      ASSERT_TRUE((*e)->Allocate(*ref, running).ok());
    }
  };
  submit("same", 4, 2);
  submit("gone", 4, 2);
  submit("finished", 10, 6);    // 3 finished, 1 more started: Finish(3), Allocate(1)
  submit("overfinished", 10, 1);  // 5 finished: Allocate(4), Finish(5), Allocate(2)
  submit("reshaped", 4, 1);
  ClusterTruth t;
  auto job = [](const std::string& name, int64_t tasks, int64_t running, int64_t cpu = 1000) {
    return TruthJob{.name = name, .queue = "root/b", .task = {{"cpu", cpu}}, .tasks = tasks, .running = running};
  };
  t.jobs = {job("same", 4, 2), job("finished", 7, 4), job("overfinished", 5, 2),
            job("reshaped", 4, 1, 2000), job("new", 3, 3)};
  auto r = (*e)->Reconcile(t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->jobs_removed, std::vector<std::string>{"gone"});
  EXPECT_EQ(r->jobs_submitted, std::vector<std::string>{"new"});
  EXPECT_EQ(r->jobs_resubmitted, std::vector<std::string>{"reshaped"});
  EXPECT_EQ(r->jobs_adjusted, (std::vector<std::string>{"finished", "overfinished"}));
  // gone 1, finished 2, overfinished 3, reshaped 3 (remove, submit,
  // allocate), new 2.
  EXPECT_EQ(r->events, 11u);
  EXPECT_EQ((*e)->DigestHex(), FreshDigest({{"cpu", 100000}}, t, Queues()));
}

TEST(Reconcile, QueuesAreMatchedWhenGiven) {
  auto e = Engine::Create({{"cpu", 10000}}, Queues());
  ASSERT_TRUE(e.ok());
  JobSpec s{.name = "in-stale", .queue = "root/a/y", .tasks = 2, .task = {{"cpu", 1000}}};
  ASSERT_TRUE((*e)->Submit(s).ok());
  ClusterTruth t;
  t.queues = std::vector<QueueSpec>{{.path = "root/a/x", .weight = 3},
                                    {.path = "root/b", .capability = {{"cpu", 5000}}},
                                    {.path = "root/c/z"}};
  t.jobs = {TruthJob{.name = "new", .queue = "root/c/z", .task = {{"cpu", 1000}}, .tasks = 2, .running = 1}};
  auto r = (*e)->Reconcile(t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Parents first (root/c is implied by root/c/z).
  EXPECT_EQ(r->queues_created, (std::vector<std::string>{"root/c", "root/c/z"}));
  EXPECT_EQ(r->queues_updated, (std::vector<std::string>{"root/b", "root/a/x"}));
  EXPECT_EQ(r->queues_deleted, (std::vector<std::string>{"root/a/y"}));
  EXPECT_EQ(r->jobs_removed, std::vector<std::string>{"in-stale"});
  EXPECT_EQ((*e)->DigestHex(), FreshDigest({{"cpu", 10000}}, t, {}));
  // Bad truths are refused before anything changes.
  const uint64_t seq = (*e)->last_seq();
  t.jobs.push_back(t.jobs[0]);
  EXPECT_EQ((*e)->Reconcile(t).status().code(), StatusCode::kInvalidArgument);
  t.jobs.pop_back();
  t.jobs[0].running = 5;
  EXPECT_EQ((*e)->Reconcile(t).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*e)->last_seq(), seq);
}

}  // namespace
}  // namespace hdrf
