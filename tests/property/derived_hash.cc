// derived_hash: a hash of every derived value the engine computes over
// random event streams, bit for bit, to check that a change meant to be
// arithmetic-neutral (layout, inlining, a different walk over the same
// operations) gives bit-identical shares. Not a test (there is nothing to
// compare with in one build): build it before and after the change and
// compare the lines it prints (docs/testing.md, "Bit-identical derived
// values").
//
// Usage: derived_hash [WORLDS [OPS]]   (default 300 worlds x 3000 ops)
// Worlds and streams come from tests/property/random_stream (seeds
// 1000 + w). Odd worlds apply their task events through the shard-local
// methods (LocalAllocate/LocalRelease between EndExclusive and
// BeginExclusive, the exclusive method when they escalate); every third
// world gets three extra resources that no job uses (R > 4: the heap
// storage of engine::ResArray). After every operation the hash takes in
// whether it was accepted, every queue's share, key, blocked flag and
// vector, and every job's key, blocked flag and allocation; a step's or
// fill's result too. Prints one line per world and a total line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/tree.h"
#include "tests/property/random_stream.h"

namespace hdrf {
namespace {

// A 64-bit word mixer (bits in, order-sensitive); not a state digest.
struct Mix {
  uint64_t h = 0x243F6A8885A308D3ull;
  void Word(uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  void F64(double d) {
    uint64_t w;
    std::memcpy(&w, &d, sizeof w);
    Word(w);
  }
  void I64(int64_t v) { Word(static_cast<uint64_t>(v)); }
};

void HashDerived(const engine::Tree& t, Mix& f) {
  for (QueueId q : t.QueuesInPathOrder()) {
    const QueueInfo i = t.GetQueue(q);
    f.F64(i.share);
    f.F64(i.key);
    f.I64(i.blocked);
    for (double u : i.vector) f.F64(u);
  }
  for (JobId j : t.JobsInSubmitOrder()) {
    const JobInfo i = t.GetJob(j);
    f.F64(i.key);
    f.I64(i.blocked);
    f.I64(i.allocated);
  }
}

using Kind = testing::RandomOp::Kind;

// A task event through the shard-local methods; the exclusive method when
// it escalates.
Status ApplyLocal(engine::Tree& t, JobId j, const testing::RandomOp& op, Mix& f) {
  t.EndExclusive();
  bool escalate = false;
  Status s = op.kind == Kind::kAllocate ? t.LocalAllocate(j, op.n, &escalate)
                                        : t.LocalRelease(j, op.n, op.kind == Kind::kFinish, &escalate);
  t.BeginExclusive();
  f.I64(escalate);
  if (!s.ok() || !escalate) return s;
  if (op.kind == Kind::kAllocate) return t.Allocate(j, op.n);
  return op.kind == Kind::kRelease ? t.Release(j, op.n) : t.Finish(j, op.n);
}

Status Apply(engine::Tree& t, const testing::RandomOp& op, bool local, Mix& f) {
  const bool task = op.kind == Kind::kAllocate || op.kind == Kind::kRelease || op.kind == Kind::kFinish;
  if (task || op.kind == Kind::kRemove) {
    auto j = t.FindJob(op.name);
    if (!j.ok()) return j.status();
    if (op.kind == Kind::kRemove) return t.Remove(*j);
    if (local) return ApplyLocal(t, *j, op, f);
    if (op.kind == Kind::kAllocate) return t.Allocate(*j, op.n);
    return op.kind == Kind::kRelease ? t.Release(*j, op.n) : t.Finish(*j, op.n);
  }
  switch (op.kind) {
    case Kind::kSubmit: return t.Submit(op.job).status();
    case Kind::kStep: {
      auto j = t.Step();
      f.I64(j ? static_cast<int64_t>(*j) : -1);
      return Status::Ok();
    }
    case Kind::kFill: f.I64(t.Fill()); return Status::Ok();
    case Kind::kCapacity: return t.SetCapacity(op.cluster);
    case Kind::kCreateQueue: return t.CreateQueue(op.queue);
    case Kind::kUpdateQueue: return t.UpdateQueue(op.queue);
    case Kind::kSetState: return t.SetQueueState(op.name, op.state);
    case Kind::kDeleteQueue: return t.DeleteQueue(op.name);
    default: return Status::Internal("unhandled op");
  }
}

int Main(int argc, char** argv) {
  const int worlds = argc > 1 ? std::atoi(argv[1]) : 300;
  const int ops = argc > 2 ? std::atoi(argv[2]) : 3000;
  Mix total;
  int64_t applied = 0;
  for (int w = 0; w < worlds; ++w) {
    testing::Rng rng(1000 + w);
    testing::RandomWorld world = testing::MakeWorld(rng);
    if (w % 3 == 2) {
      world.cluster["x1"] = 1000;
      world.cluster["x2"] = 7;
      world.cluster["zz"] = 5;
    }
    engine::TreeOptions options;
    options.overcommit_factor = world.overcommit;
    auto tree = engine::Tree::Create(world.cluster, world.queues, options);
    if (!tree.ok()) continue;
    engine::Tree& t = **tree;
    int next_job = 0;
    for (int i = 0; i < ops; ++i) {
      std::vector<std::string> queues, jobs;
      for (QueueId q : t.QueuesInPathOrder()) queues.push_back(t.GetQueue(q).path);
      for (JobId j : t.JobsInSubmitOrder()) jobs.push_back(t.GetJob(j).name);
      const testing::RandomOp op = testing::MakeOp(rng, world, queues, jobs, next_job);
      const Status s = Apply(t, op, w % 2 == 1, total);
      applied += s.ok();
      total.I64(s.ok());
      HashDerived(t, total);
    }
    Mix end;
    HashDerived(t, end);
    std::printf("world %d %016llx\n", w, static_cast<unsigned long long>(end.h));
  }
  std::printf("applied %lld hash %016llx\n", static_cast<long long>(applied),
              static_cast<unsigned long long>(total.h));
  return 0;
}

}  // namespace
}  // namespace hdrf

int main(int argc, char** argv) { return hdrf::Main(argc, argv); }
