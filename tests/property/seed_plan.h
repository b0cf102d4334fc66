// Which seeds a property test runs, read from the environment:
//   HDRF_PROPERTY_EVENTS=N  about N events over all seeds (each test has its
//                           own default);
//   HDRF_PROPERTY_SEED=S    only seed S (to reproduce a failure);
//   HDRF_PROPERTY_PART=K/M  part K (0-based) of M: the seeds s with
//                           (s - 1) % M == K and N / M of the events, so
//                           that the M parts together run the seeds of the
//                           whole run. tests/property/meson.build registers
//                           the long tests in parts, so that they run side
//                           by side.
// A malformed value fails the test that reads it (it does not run
// something else quietly).
#ifndef HDRF_TESTS_PROPERTY_SEED_PLAN_H_
#define HDRF_TESTS_PROPERTY_SEED_PLAN_H_

#include <cstdint>
#include <string>

namespace hdrf::testing {

// The integer value of environment variable `name`, or `def` when unset.
// Sets *error when it is set but not a whole number >= 0.
int64_t EnvInt(const char* name, int64_t def, std::string* error);

struct SeedPlan {
  uint64_t first = 1;  // the first seed
  uint64_t step = 1;   // the distance between seeds
  int64_t total = 0;   // run seeds until this many events are done
  bool one = false;    // HDRF_PROPERTY_SEED: a single seed (total = 1)
  std::string error;   // a malformed variable: what and which

  uint64_t Seed(uint64_t k) const { return first + k * step; }  // the k-th seed (from 0)
};

// The plan for a test whose default total is `default_events`.
SeedPlan PropertySeeds(int64_t default_events);

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_PROPERTY_SEED_PLAN_H_
