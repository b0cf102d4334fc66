// Engine::StepWhere / FillWhere / PlacementSkips: the contract details that
// the property test (tests/property/step_where_vs_reference_test.cc) does
// not reach: what the placement test is given, errors that change nothing,
// skip entries of removed jobs, and a concurrent run (for the TSan build).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants

namespace hdrf {
namespace {

std::unique_ptr<Engine> TwoQueues() {
  std::vector<QueueSpec> qs(2);
  qs[0].path = "root/a";
  qs[1].path = "root/b";
  auto e = Engine::Create({{"cpu", 8000}, {"nvidia.com/gpu", 4000}}, qs);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(*e);
}

JobRef Submit(Engine& e, const std::string& name, const std::string& queue, int64_t tasks,
              ResourceAmounts task) {
  JobSpec j;
  j.name = name;
  j.queue = queue;
  j.tasks = tasks;
  j.task = std::move(task);
  auto r = e.Submit(j);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

TEST(StepWhere, QueryCarriesTheJobShapeAndLeaf) {
  auto e = TwoQueues();
  const JobRef a = Submit(*e, "a1", "root/a", 2, {{"cpu", 1500}, {"nvidia.com/gpu", 1000}});
  std::vector<PlacementQuery> seen;
  std::vector<std::vector<int64_t>> shapes;
  auto r = e->StepWhere([&](const PlacementQuery& q) {
    seen.push_back(q);
    shapes.emplace_back(q.task.begin(), q.task.end());
    return true;
  });
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->id, a.id);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].job.seq, a.seq);
  const auto names = e->ResourceNames();  // cpu, nvidia.com/gpu
  ASSERT_EQ(shapes[0].size(), names.size());
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(shapes[0][i], names[i] == "cpu" ? 1500 : 1000) << names[i];
  EXPECT_EQ(e->GetJob(a)->allocated, 1);
}

TEST(StepWhere, RefusalsChangeNothingAndErrorsAllocateNothing) {
  auto e = TwoQueues();
  Submit(*e, "a1", "root/a", 3, {{"cpu", 1000}});
  Submit(*e, "b1", "root/b", 3, {{"cpu", 1000}});
  const std::string before = e->DigestHex();
  PlacementSkips skips;
  auto none = e->StepWhere([](const PlacementQuery&) { return false; }, &skips);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(skips.size(), 2u);
  EXPECT_EQ(e->DigestHex(), before);
  // Every job is in the set: not even asked again.
  int asked = 0;
  auto again = e->StepWhere([&](const PlacementQuery&) { return ++asked, true; }, &skips);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  EXPECT_EQ(asked, 0);

  EXPECT_EQ(e->StepWhere(PlacementFn()).status().code(), StatusCode::kInvalidArgument);
  auto thrown = e->StepWhere([](const PlacementQuery&) -> bool { throw std::runtime_error("boom"); });
  EXPECT_EQ(thrown.status().code(), StatusCode::kInternal);
  EXPECT_NE(thrown.status().message().find("boom"), std::string::npos);
  EXPECT_EQ(e->DigestHex(), before);
}

TEST(StepWhere, SkipEntryOfARemovedJobMatchesNoLaterJob) {
  auto e = TwoQueues();
  const JobRef a = Submit(*e, "a1", "root/a", 1, {{"cpu", 1000}});
  PlacementSkips skips;
  skips.Add(a);
  EXPECT_TRUE(skips.Contains(a));
  ASSERT_TRUE(e->Remove(a).ok());
  const JobRef b = Submit(*e, "a2", "root/a", 1, {{"cpu", 1000}});
  EXPECT_FALSE(skips.Contains(b));  // even when b reuses a's id
  auto r = e->StepWhere([](const PlacementQuery&) { return true; }, &skips);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->seq, b.seq);
}

TEST(StepWhere, FillWhereSkipsRefusedJobsForTheWholeFill) {
  auto e = TwoQueues();
  Submit(*e, "a1", "root/a", 10, {{"cpu", 1000}});
  Submit(*e, "b1", "root/b", 10, {{"cpu", 1000}});
  int asked_a = 0;
  auto n = e->FillWhere([&](const PlacementQuery& q) {
    if (q.name == "a1") return ++asked_a, false;
    return true;
  });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 8);  // b1 takes the whole cluster
  EXPECT_EQ(asked_a, 1);
  EXPECT_EQ(e->GetJob("b1")->allocated, 8);
  EXPECT_EQ(e->GetJob("a1")->allocated, 0);
}

// One thread steps with a placement test while others send task events and
// read views: the test runs under the engine's lock, so its reads of the
// engine-provided query need no locking of their own (run under TSan).
// Engine::Fill(started): the steps of Step() one after another (same jobs,
// same order, same state), under one exclusive section. Four queues, jobs
// of varied shapes and task counts, so that resources saturate (views
// switch) mid-fill; then some tasks finish and a second fill follows.
TEST(Fill, CollectingFillTakesTheStepsOfStep) {
  std::vector<QueueSpec> qs(4);
  const char* paths[] = {"root/a/x", "root/a/y", "root/b", "root/c"};
  for (int i = 0; i < 4; ++i) {
    qs[i].path = paths[i];
    qs[i].weight = 1 + i % 2;
  }
  auto make = [&]() -> std::unique_ptr<Engine> {
    auto e = Engine::Create({{"cpu", 64000}, {"nvidia.com/gpu", 8000}}, qs);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return std::move(*e);
  };
  std::unique_ptr<Engine> one = make(), all = make();
  for (int k = 0; k < 40; ++k) {
    const ResourceAmounts task = {{"cpu", 1000 * (1 + k % 5)}, {"nvidia.com/gpu", k % 3 == 0 ? 1000 : 0}};
    for (Engine* e : {one.get(), all.get()})
      Submit(*e, "j" + std::to_string(k), paths[k % 4], 1 + k % 4, task);
  }
  for (int round = 0; round < 2; ++round) {
    std::vector<JobRef> stepped, filled;
    for (;;) {
      auto s = one->Step();
      ASSERT_TRUE(s.ok());
      if (!s->has_value()) break;
      stepped.push_back(**s);
    }
    auto n = all->Fill(&filled);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, static_cast<int64_t>(filled.size()));
    ASSERT_EQ(filled.size(), stepped.size()) << "round " << round;
    ASSERT_GT(filled.size(), 5u);
    for (size_t k = 0; k < filled.size(); ++k) {
      EXPECT_EQ(filled[k].id, stepped[k].id) << "step " << k;
      EXPECT_EQ(filled[k].seq, stepped[k].seq) << "step " << k;
    }
    EXPECT_EQ(all->DigestHex(), one->DigestHex());
    EXPECT_TRUE(CheckEngineInvariants(*all).ok());
    // Free some room: the first task of every other started job finishes.
    for (size_t k = 0; k < filled.size(); k += 2)
      for (Engine* e : {one.get(), all.get()}) (void)e->Finish(filled[k], 1);
  }
  EXPECT_EQ(all->Fill(nullptr).value(), one->Fill().value());  // without the list
  EXPECT_EQ(all->DigestHex(), one->DigestHex());
}

TEST(StepWhere, ConcurrentWithTaskEventsAndViews) {
  auto e = TwoQueues();
  const JobRef a = Submit(*e, "a1", "root/a", 1000, {{"cpu", 1}});
  Submit(*e, "b1", "root/b", 1000, {{"cpu", 1}});
  std::atomic<bool> stop{false};
  std::thread events([&] {
    while (!stop) {
      if (e->Allocate(a, 1).ok()) (void)e->Release(a, 1);
      (void)e->Queues();
    }
  });
  int64_t placed = 0;
  for (int i = 0; i < 2000; ++i) {
    auto r = e->StepWhere([&](const PlacementQuery& q) { return q.name == "b1"; });
    ASSERT_TRUE(r.ok());
    if (r->has_value()) ++placed;
  }
  stop = true;
  events.join();
  EXPECT_EQ(placed, 1000);
  EXPECT_EQ(e->GetJob("b1")->allocated, 1000);
  EXPECT_TRUE(CheckEngineInvariants(*e).ok());
}

}  // namespace
}  // namespace hdrf
