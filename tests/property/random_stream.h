// Random trees and event streams for the property tests. Deterministic from
// a seed (splitmix64), so a failing seed reproduces exactly.
#ifndef HDRF_TESTS_PROPERTY_RANDOM_STREAM_H_
#define HDRF_TESTS_PROPERTY_RANDOM_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/spec.h"

namespace hdrf::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }

 private:
  uint64_t s_;
};

// One random operation, described so both models can apply it.
struct RandomOp {
  enum class Kind {
    kSubmit, kRemove, kAllocate, kRelease, kFinish, kStep, kFill,
    kCapacity, kCreateQueue, kUpdateQueue, kSetState, kDeleteQueue,
  };
  Kind kind = Kind::kStep;
  JobSpec job;             // kSubmit
  std::string name;        // job name (task ops, remove) or queue path
  int64_t n = 1;
  QueueSpec queue;         // kCreateQueue, kUpdateQueue
  QueueState state = QueueState::kOpen;
  ResourceAmounts cluster; // kCapacity
  std::string ToString() const;
};

struct RandomWorld {
  ResourceAmounts cluster;
  std::vector<QueueSpec> queues;
  std::optional<double> overcommit;
};

// A random cluster (2-4 resources, small totals so that saturation,
// capabilities and guarantees are hit often) and a random valid-ish tree.
RandomWorld MakeWorld(Rng& rng);

// Generates the next operation given the names currently known.
RandomOp MakeOp(Rng& rng, const RandomWorld& world, const std::vector<std::string>& queue_paths,
                const std::vector<std::string>& job_names, int& next_job);

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_PROPERTY_RANDOM_STREAM_H_
