// Property test: the engine's §8 decisions (engine::Tree::Preemptable,
// Tree::Reclaimable: the §15 transfer rule on the live tree, path-local)
// against the reference (tests/reference: the same rule with every share
// and usage recomputed from scratch) on random states. Each seed builds a
// random world and applies a random event stream (random_stream.h) to both
// models; after every event it asks both for a random preemptor and a
// random reclaimer against random victim lists (same queue, other queues,
// repeated victims, the actor itself) and checks that they accept or refuse
// alike and give the same answers. Each victim is judged on its own (docs/spec.md
// §8 revised): a job listed twice gets the same answer twice. A decision
// must leave the engine's state exactly as it was.
//
// HDRF_PROPERTY_EVENTS (default 1,000,000) scales it like the other
// property test: this one runs a twentieth of it as events (each with two
// decision queries). HDRF_PROPERTY_SEED and HDRF_PROPERTY_PART as
// seed_plan.h says; HDRF_PROPERTY_VERBOSE
// prints every query.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/tree.h"
#include "tests/property/apply_both.h"
#include "tests/property/random_stream.h"
#include "tests/property/seed_plan.h"
#include "tests/reference/reference_model.h"

namespace hdrf::testing {
namespace {

using engine::Tree;
using ref::ReferenceModel;

constexpr int64_t kEventsPerSeed = 400;

std::string Bits(const std::vector<bool>& v) {
  std::string s;
  for (bool b : v) s += b ? '1' : '0';
  return s;
}

// A victim list for `actor`: 1..7 jobs, half of them (when possible) from
// the actor's own leaf, with repeats.
std::vector<std::string> Victims(Rng& rng, const Tree& t, const std::vector<std::string>& jobs,
                                 const std::string& actor) {
  const std::string leaf = t.GetJob(*t.FindJob(actor)).queue;
  std::vector<std::string> same;
  for (const auto& j : jobs)
    if (t.GetJob(*t.FindJob(j)).queue == leaf) same.push_back(j);
  std::vector<std::string> out;
  const int n = static_cast<int>(rng.Uniform(1, 7));
  for (int i = 0; i < n; ++i) {
    if (!out.empty() && rng.Chance(25)) {
      out.push_back(out[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(out.size()) - 1))]);
    } else if (rng.Chance(50)) {
      out.push_back(same[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(same.size()) - 1))]);
    } else {
      out.push_back(jobs[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(jobs.size()) - 1))]);
    }
  }
  return out;
}

// Asks both models one decision; returns a mismatch description or "".
struct Counts {
  int64_t events = 0, queries = 0, allowed = 0, refused = 0, errors = 0;
  int64_t worlds_refused = 0;  // worlds both models refuse (their events not counted)
};

std::string CheckDecision(Tree& t, const ReferenceModel& m, bool reclaim, const std::string& actor,
                          const std::vector<std::string>& victims, Counts& c) {
  std::vector<JobId> ids;
  for (const auto& v : victims) ids.push_back(*t.FindJob(v));
  const JobId aid = *t.FindJob(actor);
  const uint64_t digest = t.Digest();
  auto e = reclaim ? t.Reclaimable(aid, ids) : t.Preemptable(aid, ids);
  auto r = reclaim ? m.Reclaimable(actor, victims) : m.Preemptable(actor, victims);
  std::string what = std::string(reclaim ? "Reclaimable(" : "Preemptable(") + actor + "; ";
  for (const auto& v : victims) what += v + " ";
  what += "): ";
  if (std::getenv("HDRF_PROPERTY_VERBOSE"))
    std::printf("  %s engine %s ref %s\n", what.c_str(), e.ok() ? Bits(*e).c_str() : e.status().ToString().c_str(),
                r.ok() ? Bits(*r).c_str() : r.status().ToString().c_str());
  if (t.Digest() != digest) return what + "the decision changed the engine's state";
  ++c.queries;
  if (r.ok()) {  // each victim on its own: repeats answer alike
    for (size_t i = 0; i < victims.size(); ++i)
      for (size_t k = 0; k < i; ++k)
        if (victims[i] == victims[k] && (*r)[i] != (*r)[k])
          return what + "the reference answers a repeated victim differently: " + Bits(*r);
  }
  if (!r.ok()) {
    ++c.errors;
  } else {
    for (bool b : *r) ++(b ? c.allowed : c.refused);
  }
  if (e.ok() != r.ok())
    return what + "acceptance differs: engine '" + (e.ok() ? Bits(*e) : e.status().ToString()) + "' vs ref '" +
           (r.ok() ? Bits(*r) : r.status().ToString()) + "'";
  if (!e.ok()) {
    if (e.status().code() != r.status().code())
      return what + "error codes differ: " + e.status().ToString() + " vs " + r.status().ToString();
    return "";
  }
  if (*e != *r) return what + "engine " + Bits(*e) + " vs ref " + Bits(*r);
  return "";
}

std::string Vec(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// The state that decisions depend on, for a failure report.
void Dump(const Tree& t) {
  for (QueueId q : t.QueuesInPathOrder()) {
    QueueInfo i = t.GetQueue(q);
    std::printf("Q %-14s recl=%d blocked=%d key=%.6f guar=%s usage=%s\n", i.path.c_str(), i.reclaimable,
                i.blocked, i.key, Vec(i.guarantee).c_str(), Vec(i.usage).c_str());
  }
  for (JobId j : t.JobsInSubmitOrder()) {
    JobInfo i = t.GetJob(j);
    std::printf("J %-5s %-14s %s alloc=%lld/%lld task=%s share=%.6f\n", i.name.c_str(), i.queue.c_str(),
                JobStateName(i.state), static_cast<long long>(i.allocated), static_cast<long long>(i.tasks),
                Vec(i.task).c_str(), i.drf_share);
  }
}

std::string RunSeed(uint64_t seed, int64_t events, Counts& c) {
  Rng rng(seed);
  RandomWorld w = MakeWorld(rng);
  BothModels both = CreateBoth(w);
  auto& t = both.tree;
  auto& m = both.ref;
  const std::string prefix = "seed " + std::to_string(seed) + ": ";
  if (t.ok() != m.ok()) return prefix + "create acceptance differs";
  if (!t.ok()) {
    ++c.worlds_refused;
    return "";
  }
  int next_job = 0;
  for (int64_t i = 0; i < events; ++i) {
    RandomOp op = NextOp(rng, w, **t, next_job, i);
    std::string d = ApplyBoth(**t, **m, op);
    if (!d.empty()) return prefix + "event " + std::to_string(i) + ": " + d;
    ++c.events;
    std::vector<std::string> jobs;
    for (JobId j : (*t)->JobsInSubmitOrder()) jobs.push_back((*t)->GetJob(j).name);
    if (jobs.empty()) continue;
    for (bool reclaim : {false, true}) {
      // Mostly actors with a task to place; sometimes any job (errors).
      std::vector<std::string> actors;
      for (const auto& j : jobs) {
        JobInfo info = (*t)->GetJob(*(*t)->FindJob(j));
        if (info.allocated < info.tasks && info.state != JobState::kPending) actors.push_back(j);
      }
      if (actors.empty() || rng.Chance(10)) actors = jobs;
      const std::string actor = actors[static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(actors.size()) - 1))];
      const std::vector<std::string> victims = Victims(rng, **t, jobs, actor);
      d = CheckDecision(**t, **m, reclaim, actor, victims, c);
      if (!d.empty() && std::getenv("HDRF_PROPERTY_VERBOSE")) Dump(**t);
      if (!d.empty()) return prefix + "after event " + std::to_string(i) + " (" + op.ToString() + "): " + d;
    }
    if (i % 64 == 0) {
      Status inv = (*t)->CheckInvariants();
      if (!inv.ok()) return prefix + "invariants after event " + std::to_string(i) + ": " + inv.ToString();
    }
  }
  return "";
}

TEST(DecisionsVsReference, RandomStates) {
  const SeedPlan plan = PropertySeeds(1000000);
  ASSERT_EQ(plan.error, "");
  Counts c;
  if (plan.one) {  // one seed need not see both answers: no counts checked
    EXPECT_EQ(RunSeed(plan.first, kEventsPerSeed, c), "");
    return;
  }
  // Only the events of worlds the models accept count (c.events).
  const int64_t total = plan.total / 20;
  int64_t worlds = 0;
  for (uint64_t k = 0; c.events < total; ++k, ++worlds)
    ASSERT_EQ(RunSeed(plan.Seed(k), kEventsPerSeed, c), "") << "reproduce with HDRF_PROPERTY_SEED=" << plan.Seed(k);
  std::printf("%lld events (%lld worlds, %lld refused by both models), %lld decision queries: %lld victims "
              "allowed, %lld refused, %lld queries refused\n",
              static_cast<long long>(c.events), static_cast<long long>(worlds),
              static_cast<long long>(c.worlds_refused), static_cast<long long>(c.queries),
              static_cast<long long>(c.allowed), static_cast<long long>(c.refused),
              static_cast<long long>(c.errors));
  // The test must exercise both answers.
  EXPECT_GT(c.allowed, 0);
  EXPECT_GT(c.refused, 0);
}

}  // namespace
}  // namespace hdrf::testing
