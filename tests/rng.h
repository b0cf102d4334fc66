// The tests' deterministic random numbers (SplitMix64): one generator for
// the property, storage and concurrency tests, so a seed names a stream.
// The stream is api/sim/gen_rng.h's (the workload generator's).
#ifndef HDRF_TESTS_RNG_H_
#define HDRF_TESTS_RNG_H_

#include <cstdint>

#include "api/sim/gen_rng.h"

namespace hdrf::testing {

class Rng : public sim::GenRng {
 public:
  explicit Rng(uint64_t seed) : GenRng(seed) {}
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }
};

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_RNG_H_
