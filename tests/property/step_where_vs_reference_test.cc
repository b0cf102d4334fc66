// Property test of the host placement entry point (Engine::StepWhere,
// FillWhere, Tree::PickNext(skip)) against the full-recompute reference.
//
// The rule: StepWhere asks the placement test about candidates in the order
// a step would choose them, until one is accepted; the job chosen is the
// reference's PickNext with every refused (and previously skipped) job left
// out. So on every random state:
//   * Tree::PickNext(skip) == ReferenceModel::PickNext(excluded) for the
//     same set of left-out jobs, along a whole chain of refusals;
//   * Engine::StepWhere asks exactly the jobs the reference order names, in
//     that order, and allocates to the accepted one; a skip set kept across
//     calls is honoured; FillWhere makes the same number of steps as the
//     reference loop, and every job ends with the same allocation.
//
// HDRF_STEP_WHERE_SEEDS (default 80) tunes the number of seeds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "engine/tree.h"
#include "tests/property/apply_both.h"
#include "tests/property/random_stream.h"
#include "tests/property/seed_plan.h"
#include "tests/reference/reference_model.h"

namespace hdrf::testing {
namespace {

using engine::Tree;
using ref::ReferenceModel;

// A placement test that refuses about `pct` percent of the questions,
// deterministically from (job, round): the engine and the reference are
// asked the same questions and must get the same answers.
bool Refuses(const std::string& job, uint64_t round, int pct) {
  uint64_t h = 1469598103934665603ull ^ round;
  for (char c : job) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  h ^= h >> 29;
  return static_cast<int>(h % 100) < pct;
}

// The chain of candidates on one state: refuse the first pick with some
// probability, then the next, ... comparing every pick.
std::string CompareChain(const Tree& t, const ReferenceModel& m, Rng& rng) {
  Tree::SkipSet skip;
  std::set<std::string> excluded;
  for (int k = 0; k < 8; ++k) {
    auto e = t.PickNext(&skip);
    auto r = m.PickNext(excluded);
    const std::string es = e ? std::string(t.job_name(*e)) : "none";
    const std::string rs = r ? *r : "none";
    if (es != rs) return "pick " + std::to_string(k) + " engine " + es + " vs ref " + rs;
    if (!e || !rng.Chance(60)) return "";
    skip[*e] = t.job_seq(*e);
    excluded.insert(es);
  }
  return "";
}

// Tree level: every state of a full random stream (queue and capacity
// events included).
// *applied gets the events checked (0 when both models refuse the world).
std::string RunTreeSeed(uint64_t seed, int events, int64_t* applied) {
  *applied = 0;
  Rng rng(seed);
  RandomWorld w = MakeWorld(rng);
  BothModels both = CreateBoth(w);
  if (both.tree.ok() != both.ref.ok()) return "seed " + std::to_string(seed) + ": create acceptance differs";
  if (!both.tree.ok()) return "";
  int next_job = 0;
  for (int i = 0; i < events; ++i) {
    RandomOp op = NextOp(rng, w, **both.tree, next_job, i);
    std::string d = ApplyBoth(**both.tree, **both.ref, op);
    if (d.empty()) d = CompareChain(**both.tree, **both.ref, rng);
    if (!d.empty()) return "seed " + std::to_string(seed) + " event " + std::to_string(i) + " (" + op.ToString() + "): " + d;
  }
  *applied = events;
  return "";
}

TEST(StepWhereVsReference, PickWithSkippedJobsFollowsTheReferenceOrder) {
  std::string error;
  const int64_t seeds = EnvInt("HDRF_STEP_WHERE_SEEDS", 80, &error);
  ASSERT_EQ(error, "");
  int64_t done = 0, refused = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
    int64_t applied = 0;
    std::string r = RunTreeSeed(seed, 300, &applied);
    ASSERT_EQ(r, "");
    done += applied;
    refused += applied == 0;
  }
  std::printf("checked %lld events over %lld worlds (%lld refused by both models)\n", static_cast<long long>(done),
              static_cast<long long>(seeds), static_cast<long long>(refused));
}

// Engine level: the reference's StepWhere, asking `can_place` in the
// reference order; `skipped` is the caller's persistent skip set (names).
std::optional<std::string> RefStepWhere(ReferenceModel& m, std::set<std::string>& skipped,
                                        uint64_t round, int pct, std::vector<std::string>& asked) {
  for (;;) {
    auto c = m.PickNext(skipped);
    if (!c) return std::nullopt;
    asked.push_back(*c);
    if (!Refuses(*c, round, pct)) {
      // §14: a job holding no task starts with its gang size m at once.
      int64_t n = 1;
      for (const auto& j : m.Jobs())
        if (j.name == *c) n = j.step_tasks;
      EXPECT_TRUE(m.Allocate(*c, n).ok());
      return c;
    }
    skipped.insert(*c);
  }
}

struct EngineRun {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ReferenceModel> ref;
  PlacementSkips skips;           // kept across calls, cleared at random
  std::set<std::string> skipped;  // its mirror in the reference
  uint64_t round = 0;
};

// One StepWhere (or FillWhere) on both; "" or the difference.
std::string PlacementStep(EngineRun& run, Rng& rng, bool fill) {
  const int pct = static_cast<int>(rng.Uniform(0, 80));
  const uint64_t round = ++run.round;
  if (rng.Chance(30)) {
    run.skips.Clear();
    run.skipped.clear();
  }
  std::vector<std::string> asked_engine, asked_ref;
  const PlacementFn can_place = [&](const PlacementQuery& q) {
    asked_engine.emplace_back(q.name);
    auto info = run.ref->Jobs();  // the query's shape and queue are the job's
    for (const auto& j : info)
      if (j.name == q.name && j.queue != q.queue) ADD_FAILURE() << "query queue " << q.queue;
    return !Refuses(std::string(q.name), round, pct);
  };
  if (fill) {
    auto n = run.engine->FillWhere(can_place, &run.skips);
    if (!n.ok()) return "FillWhere: " + n.status().ToString();
    int64_t rn = 0;
    while (RefStepWhere(*run.ref, run.skipped, round, pct, asked_ref)) ++rn;
    if (*n != rn) return "FillWhere steps " + std::to_string(*n) + " vs ref " + std::to_string(rn);
  } else {
    auto e = run.engine->StepWhere(can_place, &run.skips);
    if (!e.ok()) return "StepWhere: " + e.status().ToString();
    auto r = RefStepWhere(*run.ref, run.skipped, round, pct, asked_ref);
    std::string es = "none";
    if (*e) es = run.engine->GetJob(**e)->name;
    if (es != r.value_or("none")) return "StepWhere chose " + es + " vs ref " + r.value_or("none");
  }
  if (asked_engine != asked_ref) {
    std::string d = "asked engine [";
    for (auto& a : asked_engine) d += a + " ";
    d += "] vs ref [";
    for (auto& a : asked_ref) d += a + " ";
    return d + "]";
  }
  for (const auto& name : run.skipped)
    if (auto ref = run.engine->FindJob(name); ref.ok() && !run.skips.Contains(*ref))
      return "skip set lacks " + name;
  return "";
}

// Applies a task or job event to both; "" or the difference in acceptance.
std::string ApplyEvent(EngineRun& run, const RandomOp& op) {
  Status es, rs;
  if (op.kind == RandomOp::Kind::kSubmit) {
    es = run.engine->Submit(op.job).status();
    rs = run.ref->Submit(op.job).status();
  } else {
    auto ref = run.engine->FindJob(op.name);
    if (!ref.ok()) {
      es = ref.status();
    } else if (op.kind == RandomOp::Kind::kRemove) {
      es = run.engine->Remove(*ref);
    } else if (op.kind == RandomOp::Kind::kAllocate) {
      es = run.engine->Allocate(*ref, op.n);
    } else if (op.kind == RandomOp::Kind::kRelease) {
      es = run.engine->Release(*ref, op.n);
    } else {
      es = run.engine->Finish(*ref, op.n);
    }
    if (op.kind == RandomOp::Kind::kRemove) rs = run.ref->Remove(op.name);
    if (op.kind == RandomOp::Kind::kAllocate) rs = run.ref->Allocate(op.name, op.n);
    if (op.kind == RandomOp::Kind::kRelease) rs = run.ref->Release(op.name, op.n);
    if (op.kind == RandomOp::Kind::kFinish) rs = run.ref->Finish(op.name, op.n);
  }
  if (es.ok() != rs.ok()) return "acceptance: engine " + es.ToString() + " vs ref " + rs.ToString();
  return "";
}

std::string CompareJobs(const EngineRun& run) {
  auto ej = run.engine->Jobs();
  auto rj = run.ref->Jobs();
  if (ej.size() != rj.size()) return "job count differs";
  for (size_t i = 0; i < ej.size(); ++i)
    if (ej[i].name != rj[i].name || ej[i].allocated != rj[i].allocated || ej[i].tasks != rj[i].tasks)
      return "job " + ej[i].name + " allocation differs";
  return "";
}

// *applied gets the events checked (0 when both models refuse the world).
std::string RunEngineSeed(uint64_t seed, int events, int64_t* applied) {
  *applied = 0;
  Rng rng(seed);
  RandomWorld w = MakeWorld(rng);
  EngineOptions options;
  options.overcommit_factor = w.overcommit;
  auto e = Engine::Create(w.cluster, w.queues, options);
  auto m = ReferenceModel::Create(w.cluster, w.queues, w.overcommit);
  if (e.ok() != m.ok()) return "seed " + std::to_string(seed) + ": create acceptance differs";
  if (!e.ok()) return "";
  EngineRun run{std::move(*e), std::move(*m)};
  std::vector<std::string> paths;
  for (const auto& q : w.queues) paths.push_back(q.path);
  std::vector<std::string> names;
  int next_job = 0;
  for (int i = 0; i < events; ++i) {
    names.clear();
    for (const auto& j : run.engine->Jobs()) names.push_back(j.name);
    RandomOp op = MakeOp(rng, w, paths, names, next_job);
    std::string d;
    switch (op.kind) {
      case RandomOp::Kind::kSubmit:
      case RandomOp::Kind::kRemove:
      case RandomOp::Kind::kAllocate:
      case RandomOp::Kind::kRelease:
      case RandomOp::Kind::kFinish:
        d = ApplyEvent(run, op);
        break;
      default:  // steps, fills; queue and capacity events become steps here
        d = PlacementStep(run, rng, op.kind == RandomOp::Kind::kFill);
    }
    if (d.empty()) d = CompareJobs(run);
    if (!d.empty()) return "seed " + std::to_string(seed) + " event " + std::to_string(i) + " (" + op.ToString() + "): " + d;
  }
  *applied = events;
  return "";
}

TEST(StepWhereVsReference, EngineAsksInStepOrderAndAllocatesTheAccepted) {
  std::string error;
  const int64_t seeds = EnvInt("HDRF_STEP_WHERE_SEEDS", 80, &error);
  ASSERT_EQ(error, "");
  int64_t done = 0, refused = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(seeds); ++seed) {
    int64_t applied = 0;
    std::string r = RunEngineSeed(seed, 300, &applied);
    ASSERT_EQ(r, "");
    done += applied;
    refused += applied == 0;
  }
  std::printf("checked %lld events over %lld worlds (%lld refused by both models)\n", static_cast<long long>(done),
              static_cast<long long>(seeds), static_cast<long long>(refused));
}

}  // namespace
}  // namespace hdrf::testing
