// GenRng: SplitMix64 random numbers, the same on every platform (the
// workload generator's stream; tests/rng.h builds on it). Header-only.
#ifndef HDRF_API_SIM_GEN_RNG_H_
#define HDRF_API_SIM_GEN_RNG_H_

#include <cmath>
#include <cstdint>

namespace hdrf::sim {

// SplitMix64; doubles from the top 53 bits. The same on every platform.
class GenRng {
 public:
  explicit GenRng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform on the open interval (0, 1).
  double Open01() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal (Box-Muller, one value per two uniforms).
  double Normal() {
    const double u = Open01(), v = Open01();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  uint64_t s_;
};

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_GEN_RNG_H_
