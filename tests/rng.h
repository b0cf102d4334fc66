// The tests' deterministic random numbers (SplitMix64): one generator for
// the property, storage and concurrency tests, so a seed names a stream.
#ifndef HDRF_TESTS_RNG_H_
#define HDRF_TESTS_RNG_H_

#include <cstdint>

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

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_RNG_H_
