// engine::JobIndex against std::unordered_map: random inserts, erases and
// lookups (also with colliding hashes and clusters that wrap around the end
// of the table), growth, and the memory it takes.
#include "engine/job_index.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace hdrf::engine {
namespace {

// Keys live in `keys` (indexed by id), as job records do in the tree.
struct World {
  std::vector<uint64_t> keys;
  std::vector<bool> live;
  JobIndex index;
  // `hash_bits` < 64 forces collisions: only that many bits of the hash
  // vary (the rest are zero), so many keys share tags and home slots.
  int hash_bits = 64;

  uint64_t Hash(uint64_t key) const {
    const uint64_t h = JobIndex::HashSeq(key);
    return hash_bits >= 64 ? h : (h & ((uint64_t{1} << hash_bits) - 1)) << 32;
  }
  uint32_t Find(uint64_t key) const {
    return index.Find(Hash(key), [&](uint32_t id) { return live[id] && keys[id] == key; });
  }
};

void RandomOps(int hash_bits, uint64_t seed, int ops) {
  World w;
  w.hash_bits = hash_bits;
  std::unordered_map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> free_ids;
  for (int i = 0; i < ops; ++i) {
    const int what = static_cast<int>(rng() % 10);
    const uint64_t key = rng() % 5000;
    auto it = ref.find(key);
    if (what < 5) {  // insert when absent
      if (it != ref.end()) continue;
      uint32_t id;
      if (!free_ids.empty()) {
        id = free_ids.back();
        free_ids.pop_back();
        w.keys[id] = key;
        w.live[id] = true;
      } else {
        id = static_cast<uint32_t>(w.keys.size());
        w.keys.push_back(key);
        w.live.push_back(true);
      }
      w.index.Insert(w.Hash(key), id);
      ref.emplace(key, id);
    } else if (what < 8) {  // erase when present
      if (it == ref.end()) {
        // Erasing an absent id is refused and changes nothing.
        EXPECT_FALSE(w.index.Erase(w.Hash(key), static_cast<uint32_t>(w.keys.size() + 7)));
        continue;
      }
      ASSERT_TRUE(w.index.Erase(w.Hash(key), it->second));
      w.live[it->second] = false;
      free_ids.push_back(it->second);
      ref.erase(it);
    } else {  // look up
      const uint32_t got = w.Find(key);
      const uint32_t want = it == ref.end() ? JobIndex::kEmpty : it->second;
      EXPECT_EQ(got, want) << key;
    }
    ASSERT_EQ(w.index.size(), ref.size());
  }
  // Everything present is found, everything erased is not.
  for (const auto& [key, id] : ref) ASSERT_EQ(w.Find(key), id) << key;
  for (uint64_t key = 0; key < 5000; ++key) {
    if (!ref.count(key)) {
      ASSERT_EQ(w.Find(key), JobIndex::kEmpty) << key;
    }
  }
}

TEST(JobIndex, MatchesUnorderedMapOnRandomOperations) {
  for (uint64_t seed = 1; seed <= 4; ++seed) RandomOps(64, seed, 200000);
}

TEST(JobIndex, CollidingHashesAndWrappingClusters) {
  // 3 bits of hash: at most 8 distinct tags, long clusters that wrap around
  // the end of the table, and backward-shift deletion across the wrap.
  for (uint64_t seed = 1; seed <= 3; ++seed) RandomOps(3, seed, 60000);
  // 0 bits: every key has the same tag; lookups rely on the callback.
  RandomOps(0, 9, 20000);
}

TEST(JobIndex, NameHashesDifferForNearNames) {
  // Names that differ in one character, in length or only past 8 bytes.
  const std::vector<std::string> names = {"", "a", "b", "ab", "ba", "job-1", "job-2",
                                          "job-10", "job-01", "a-long-job-name-1",
                                          "a-long-job-name-2", std::string(3, '\0')};
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = i + 1; j < names.size(); ++j)
      EXPECT_NE(JobIndex::HashName(names[i]), JobIndex::HashName(names[j]))
          << names[i] << " / " << names[j];
}

TEST(JobIndex, GrowsByDoublingAndStaysCompact) {
  JobIndex index;
  std::vector<uint64_t> keys;
  for (uint32_t i = 0; i < 1000000; ++i) {
    keys.push_back(i * 7 + 3);
    index.Insert(JobIndex::HashSeq(keys.back()), i);
  }
  EXPECT_EQ(index.size(), 1000000u);
  // At most 7/8 full after an insert: 2^21 slots of 8 bytes for 10^6 ids.
  EXPECT_EQ(index.capacity(), size_t{1} << 21);
  EXPECT_LE(index.bytes(), size_t{16} << 20);
  for (uint32_t i = 0; i < 1000000; i += 997)
    EXPECT_EQ(index.Find(JobIndex::HashSeq(keys[i]), [&](uint32_t id) { return keys[id] == keys[i]; }),
              i);
  // Reserve up front: no growth while inserting.
  JobIndex r;
  r.Reserve(1000);
  const size_t cap = r.capacity();
  for (uint32_t i = 0; i < 1000; ++i) r.Insert(JobIndex::HashSeq(i), i);
  EXPECT_EQ(r.capacity(), cap);
  r.Clear();
  EXPECT_EQ(r.size(), 0u);
  EXPECT_EQ(r.Find(JobIndex::HashSeq(1), [](uint32_t) { return true; }), JobIndex::kEmpty);
}

}  // namespace
}  // namespace hdrf::engine
