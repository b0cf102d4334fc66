// Random trees and event streams for the property tests. Deterministic from
// a seed (splitmix64), so a failing seed reproduces exactly.
#ifndef HDRF_TESTS_PROPERTY_RANDOM_STREAM_H_
#define HDRF_TESTS_PROPERTY_RANDOM_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hdrf/spec.h"
#include "tests/rng.h"

namespace hdrf::testing {

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
