// sim::PairSet (api/sim/pair_set.h) against std::unordered_set on random
// values, across several growths of its table.
#include "api/sim/pair_set.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_set>

namespace hdrf::sim {
namespace {

TEST(PairSetTest, EmptyContainsNothing) {
  PairSet s;
  EXPECT_FALSE(s.Contains(0));
  EXPECT_FALSE(s.Contains(uint64_t{7} << 32 | 3));
  EXPECT_EQ(s.size(), 0u);
}

TEST(PairSetTest, MatchesUnorderedSetOnRandomPairs) {
  std::mt19937_64 rng(11);
  PairSet s;
  std::unordered_set<uint64_t> ref;
  for (int i = 0; i < 200000; ++i) {
    // Small ranges: many repeats, and values that differ only in one half.
    const uint64_t v = (rng() % 700) << 32 | (rng() % 900);
    const uint64_t probe = (rng() % 700) << 32 | (rng() % 900);
    ASSERT_EQ(s.Contains(probe), ref.count(probe) > 0) << "at " << i;
    s.Insert(v);
    ref.insert(v);
    ASSERT_TRUE(s.Contains(v));
    ASSERT_EQ(s.size(), ref.size());
  }
  for (uint64_t v : ref) EXPECT_TRUE(s.Contains(v));
}

}  // namespace
}  // namespace hdrf::sim
