// Property test: the incremental engine (engine::Tree) against the
// full-recompute reference (tests/reference) on long random event streams.
// After every event: same acceptance, same blocked flags, keys within 1e-9,
// same allocations and job states, same next step.
//
// HDRF_PROPERTY_EVENTS (default 1,000,000 in total over all seeds),
// HDRF_PROPERTY_SEED and HDRF_PROPERTY_PART tune it (seed_plan.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "engine/tree.h"
#include "tests/property/apply_both.h"
#include "tests/property/random_stream.h"
#include "tests/property/seed_plan.h"
#include "tests/reference/reference_model.h"

namespace hdrf::testing {
namespace {

// Runs one seed for `events` operations. Returns "" or a failure report;
// *applied gets the events checked (0 when both models refuse the world).
std::string RunSeed(uint64_t seed, int64_t events, int64_t* applied) {
  *applied = 0;
  Rng rng(seed);
  RandomWorld w = MakeWorld(rng);
  BothModels both = CreateBoth(w);
  auto& t = both.tree;
  auto& m = both.ref;
  if (t.ok() != m.ok())
    return "seed " + std::to_string(seed) + ": create acceptance differs: " + t.status().ToString() +
           " vs " + m.status().ToString();
  if (!t.ok()) return "";  // both refused the random tree
  int next_job = 0;
  std::string prefix = "seed " + std::to_string(seed) + ": ";
  if (std::getenv("HDRF_PROPERTY_VERBOSE")) {
    std::printf("cluster:");
    for (auto& [r, v] : w.cluster) std::printf(" %s=%lld", r.c_str(), static_cast<long long>(v));
    std::printf(" overcommit=%g\n", w.overcommit.value_or(-1));
    for (auto& q : w.queues) {
      RandomOp c;
      c.kind = RandomOp::Kind::kCreateQueue;
      c.queue = q;
      std::printf("  %s\n", c.ToString().c_str());
    }
  }
  uint64_t rotation = 0;  // this seed's (CompareModels)
  if (auto d = CompareModels(**t, **m, rotation); !d.empty()) return prefix + "after create: " + d;
  for (int64_t i = 0; i < events; ++i) {
    RandomOp op = NextOp(rng, w, **t, next_job, i);
    std::string d = ApplyBoth(**t, **m, op);
    if (d.empty()) d = CompareModels(**t, **m, rotation);
    if (d.empty() && i % 64 == 0) {
      Status inv = (*t)->CheckInvariants();
      if (!inv.ok()) d = "invariants: " + inv.ToString();
    }
    if (!d.empty() && std::getenv("HDRF_PROPERTY_VERBOSE")) {
      for (const auto& q : (*m)->Queues()) {
        QueueInfo e = (*t)->GetQueue(*(*t)->FindQueue(q.name));
        std::printf("Q %-16s eng blocked=%d key=%.6f | ref blocked=%d key=%.6f usage0=%lld\n", q.name.c_str(),
                    e.blocked, e.key, q.blocked, q.key, static_cast<long long>(e.usage[0]));
      }
      for (const auto& j : (*m)->Jobs()) {
        JobInfo e = (*t)->GetJob(*(*t)->FindJob(j.name));
        std::printf("J %-5s %s user=%s tasks=%lld alloc=%lld eng blocked=%d key=%.6f state=%s | ref q=%s blocked=%d key=%.6f state=%s sched=%d\n",
                    j.name.c_str(), e.queue.c_str(), e.user.c_str(), static_cast<long long>(e.tasks),
                    static_cast<long long>(e.allocated), e.blocked, e.key, JobStateName(e.state),
                    j.queue.c_str(), j.blocked, j.key, JobStateName(j.state), j.schedulable);
      }
    }
    if (!d.empty()) return prefix + "event " + std::to_string(i) + " (" + op.ToString() + "): " + d;
  }
  *applied = events;
  return "";
}

TEST(EngineVsReference, RandomStreams) {
  const SeedPlan plan = PropertySeeds(1000000);
  ASSERT_EQ(plan.error, "");
  const int64_t per_seed = 2000;
  // Only the events of worlds the models accept count towards the total.
  int64_t done = 0, worlds = 0, refused = 0;
  for (uint64_t k = 0; done < plan.total; ++k) {
    int64_t applied = 0;
    std::string r = RunSeed(plan.Seed(k), per_seed, &applied);
    ASSERT_EQ(r, "") << "reproduce with HDRF_PROPERTY_SEED=" << plan.Seed(k);
    done += applied;
    ++worlds;
    refused += applied == 0;
    if (plan.one) break;
  }
  std::printf("checked %lld random events against the reference (%lld worlds, %lld refused by both models)\n",
              static_cast<long long>(done), static_cast<long long>(worlds), static_cast<long long>(refused));
}

}  // namespace
}  // namespace hdrf::testing
