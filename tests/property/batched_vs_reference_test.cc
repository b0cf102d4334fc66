// Property test: the random streams of engine_vs_reference_test with their
// job events applied through the public Engine::ApplyTasks in random
// batches (the shard path, escalations and exclusive runs of
// docs/concurrency.md "Batches", with prefetching), against the reference
// applying the same events one by one, half the seeds with the batches
// grouped by shard. After every batch: the same number
// of refused events and the same state (CompareModels: shares, keys,
// blocked flags, allocations, the next step); steps and fills go through
// Engine::Step/Fill and must choose as the reference does.
//
// HDRF_PROPERTY_EVENTS (default 60,000 in total over all seeds) and
// HDRF_PROPERTY_SEED (run one seed) tune it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "api/facade/engine_impl.h"
#include "hdrf/engine.h"
#include "tests/property/apply_both.h"
#include "tests/property/random_stream.h"
#include "tests/property/seed_plan.h"
#include "tests/reference/reference_model.h"

namespace hdrf::testing {
namespace {

bool IsJobEvent(RandomOp::Kind k) {
  return k == RandomOp::Kind::kRemove || k == RandomOp::Kind::kAllocate ||
         k == RandomOp::Kind::kRelease || k == RandomOp::Kind::kFinish;
}

Event::Type TypeOf(RandomOp::Kind k) {
  switch (k) {
    case RandomOp::Kind::kRemove: return Event::Type::kRemove;
    case RandomOp::Kind::kAllocate: return Event::Type::kAllocate;
    case RandomOp::Kind::kRelease: return Event::Type::kRelease;
    default: return Event::Type::kFinish;
  }
}

class Run {
 public:
  Run(Engine& e, ref::ReferenceModel& m) : e_(e), m_(m) {}

  // The engine's tree with the shards folded in (an exclusive section).
  template <class F>
  auto WithTree(F&& f) {
    const engine::ConcurrentTree& ct = EngineAccess::impl(e_).ct;
    Exclusive lock(ct);
    return f(ct.tree());
  }

  // Queues a job event: the engine gets it in the next batch (the job's
  // reference looked up now, as a caller holding JobRefs would have it).
  void Add(const RandomOp& op) {
    Engine::TaskOp t;
    t.type = TypeOf(op.kind);
    t.n = op.n;
    auto ref = e_.FindJob(op.name);
    t.job = ref.ok() ? *ref : JobRef{UINT32_MAX, 0};
    ops_.push_back(t);
    if (!ApplyToReference(m_, op).ok()) ++ref_refused_;
  }

  // Applies the queued events in one ApplyTasks call.
  std::string Flush() {
    if (ops_.empty()) return "";
    size_t refused = 0;
    Status s = e_.ApplyTasks(ops_.data(), ops_.size(), nullptr, &refused);
    const size_t n = ops_.size(), want = ref_refused_;
    ops_.clear();
    ref_refused_ = 0;
    if (!s.ok()) return "ApplyTasks: " + s.ToString();
    if (refused != want)
      return "batch of " + std::to_string(n) + ": " + std::to_string(refused) +
             " refused vs ref " + std::to_string(want);
    return WithTree([&](const engine::Tree& t) { return CompareModels(t, m_, rotation_); });
  }

  // Any other operation, after the batch before it.
  std::string Apply(const RandomOp& op) {
    if (std::string d = Flush(); !d.empty()) return d;
    Status es, rs;
    switch (op.kind) {
      case RandomOp::Kind::kSubmit: {
        Engine::TaskOp t;
        t.type = Event::Type::kSubmit;
        t.spec = &op.job;
        size_t refused = 0;
        es = e_.ApplyTasks(&t, 1, nullptr, &refused);
        if (es.ok() && refused) es = Status::InvalidArgument("refused");
        rs = ApplyToReference(m_, op);
        break;
      }
      case RandomOp::Kind::kStep: {
        auto s = e_.Step();
        if (!s.ok()) return "step: " + s.status().ToString();
        auto r = m_.Step();
        const std::string en = *s ? e_.GetJob(**s)->name : "none";
        if (en != (r ? *r : "none")) return "step chose " + en + " vs ref " + (r ? *r : "none");
        break;
      }
      case RandomOp::Kind::kFill: {
        auto s = e_.Fill();
        if (!s.ok()) return "fill: " + s.status().ToString();
        const int64_t r = m_.Fill();
        if (*s != r) return "fill steps " + std::to_string(*s) + " vs ref " + std::to_string(r);
        break;
      }
      case RandomOp::Kind::kCapacity: es = e_.SetCapacity(op.cluster); break;
      case RandomOp::Kind::kCreateQueue: es = e_.CreateQueue(op.queue); break;
      case RandomOp::Kind::kUpdateQueue: es = e_.UpdateQueue(op.queue); break;
      case RandomOp::Kind::kSetState: es = e_.SetQueueState(op.name, op.state); break;
      case RandomOp::Kind::kDeleteQueue: es = e_.DeleteQueue(op.name); break;
      default: break;
    }
    if (op.kind != RandomOp::Kind::kSubmit && op.kind != RandomOp::Kind::kStep &&
        op.kind != RandomOp::Kind::kFill)
      rs = ApplyToReference(m_, op);
    if (es.ok() != rs.ok())
      return "acceptance differs: engine '" + es.ToString() + "' vs ref '" + rs.ToString() + "'";
    return WithTree([&](const engine::Tree& t) { return CompareModels(t, m_, rotation_); });
  }

 private:
  Engine& e_;
  ref::ReferenceModel& m_;
  std::vector<Engine::TaskOp> ops_;
  size_t ref_refused_ = 0;
  uint64_t rotation_ = 0;  // CompareModels': one Run per seed
};

// Guarantees, the enqueue gate and small clusters send every event to the
// exclusive path (docs/concurrency.md). Even seeds run without the first
// two and with 8 times the capacity (tasks are drawn from the unscaled
// cluster), so that most events take the shard path: leases, escalation
// of the few that do not fit, and the fold before each comparison.
void MakeShardable(RandomWorld& w) {
  w.overcommit.reset();
  for (auto& [r, v] : w.cluster) v *= 8;
  for (QueueSpec& q : w.queues) q.guarantee.clear();
}
void MakeShardable(RandomOp& op) {
  op.queue.guarantee.clear();
  for (auto& [r, v] : op.cluster) v *= 8;
}

// Runs one seed; *applied gets the events checked (0 when both models
// refuse the world).
std::string RunSeed(uint64_t seed, int64_t events, int64_t* applied) {
  *applied = 0;
  Rng rng(seed);
  const RandomWorld w = MakeWorld(rng);
  const bool shardable = seed % 2 == 0;
  RandomWorld created = w;
  if (shardable) MakeShardable(created);
  EngineOptions o;
  o.overcommit_factor = created.overcommit;
  // Half the seeds group every batch by shard (docs/concurrency.md
  // "Batches"); the others take the default (in order on one thread).
  if (seed % 4 < 2) o.batch_grouping = EngineOptions::BatchGrouping::kAlways;
  auto e = Engine::Create(created.cluster, created.queues, o);
  auto m = ref::ReferenceModel::Create(created.cluster, created.queues, created.overcommit);
  const std::string prefix = "seed " + std::to_string(seed) + ": ";
  if (e.ok() != m.ok()) return prefix + "create acceptance differs";
  if (!e.ok()) return "";
  Run run(**e, **m);
  int next_job = 0;
  size_t batch_limit = static_cast<size_t>(rng.Uniform(1, 48));
  size_t in_batch = 0;
  for (int64_t i = 0; i < events; ++i) {
    RandomOp op = run.WithTree([&](const engine::Tree& t) { return NextOp(rng, w, t, next_job, i); });
    if (shardable) MakeShardable(op);
    std::string d;
    if (IsJobEvent(op.kind)) {
      run.Add(op);
      if (++in_batch >= batch_limit) {
        d = run.Flush();
        in_batch = 0;
        batch_limit = static_cast<size_t>(rng.Uniform(1, 48));
      }
    } else {
      d = run.Apply(op);
      in_batch = 0;
    }
    if (d.empty() && i % 64 == 0) {
      Status inv = CheckEngineInvariants(**e);
      if (!inv.ok()) d = "invariants: " + inv.ToString();
    }
    if (!d.empty()) return prefix + "event " + std::to_string(i) + " (" + op.ToString() + "): " + d;
  }
  if (!run.Flush().empty()) return prefix + "last batch differs";
  *applied = events;
  return "";
}

TEST(BatchedVsReference, RandomStreamsThroughApplyTasks) {
  const SeedPlan plan = PropertySeeds(60000);
  ASSERT_EQ(plan.error, "");
  const int64_t per_seed = 2000;
  // Only the events of worlds the models accept count towards the total.
  int64_t done = 0, worlds = 0, refused = 0;
  for (uint64_t k = 0; done < plan.total; ++k) {
    int64_t applied = 0;
    ASSERT_EQ(RunSeed(plan.Seed(k), per_seed, &applied), "") << "reproduce with HDRF_PROPERTY_SEED=" << plan.Seed(k);
    done += applied;
    ++worlds;
    refused += applied == 0;
    if (plan.one) break;
  }
  std::printf("checked %lld random events through ApplyTasks against the reference (%lld worlds, %lld refused "
              "by both models)\n",
              static_cast<long long>(done), static_cast<long long>(worlds), static_cast<long long>(refused));
}

}  // namespace
}  // namespace hdrf::testing
