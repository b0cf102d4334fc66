// KeyHeap (engine/key_heap.h) against a std::set of (key, id) on random
// streams of pushes, erases and key updates: after every operation the
// positions the heap reports are where each id's entry is, the top is the
// set's minimum, VisitInOrder gives the set's order and VisitAtMost the
// set's entries up to a limit. Also the layout: the four children of an
// entry share one 64-byte line.
#include "engine/key_heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "tests/rng.h"

namespace hdrf::engine {
namespace {

using Ref = std::set<std::pair<double, uint32_t>>;

struct Model {
  KeyHeap heap;
  Ref ref;
  std::vector<uint32_t> pos;  // by id; KeyHeap::kAbsent when not in the heap
  std::map<uint32_t, double> key;

  auto Pos() {
    return [this](uint32_t id) -> uint32_t& { return pos[id]; };
  }

  // Every id's stored position points at its entry, and the sizes agree.
  ::testing::AssertionResult Consistent() const {
    if (heap.size() != ref.size()) return ::testing::AssertionFailure() << "size " << heap.size() << " vs " << ref.size();
    for (uint32_t i = 0; i < heap.size(); ++i) {
      const HeapEntry& e = heap.at(i);
      if (pos[e.id] != i) return ::testing::AssertionFailure() << "id " << e.id << " at " << i << ", pos says " << pos[e.id];
      if (i > 0 && e < heap.at(KeyHeap::Parent(i)))
        return ::testing::AssertionFailure() << "entry " << i << " below its parent";
      if (!ref.count({e.key, e.id})) return ::testing::AssertionFailure() << "id " << e.id << " not in the model";
    }
    if (!ref.empty() && (heap.top().key != ref.begin()->first || heap.top().id != ref.begin()->second))
      return ::testing::AssertionFailure() << "top differs";
    return ::testing::AssertionSuccess();
  }
};

TEST(KeyHeap, RandomOperationsMatchAnOrderedSet) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    testing::Rng rng(seed);
    Model m;
    const uint32_t ids = static_cast<uint32_t>(rng.Uniform(1, 300));
    m.pos.assign(ids, KeyHeap::kAbsent);
    // Few distinct keys in some seeds: ties broken by id.
    const int64_t keys = rng.Chance(50) ? 5 : 1000000;
    for (int step = 0; step < 3000; ++step) {
      const uint32_t id = static_cast<uint32_t>(rng.Uniform(0, ids - 1));
      const double k = static_cast<double>(rng.Uniform(0, keys)) / 7.0;
      if (m.pos[id] == KeyHeap::kAbsent) {
        m.heap.Push(k, id, m.Pos());
        m.ref.insert({k, id});
        m.key[id] = k;
      } else if (rng.Chance(30)) {
        m.heap.Erase(m.pos[id], m.Pos());
        m.ref.erase({m.key[id], id});
        ASSERT_EQ(m.pos[id], KeyHeap::kAbsent);
      } else {
        m.heap.Update(m.pos[id], k, m.Pos());
        m.ref.erase({m.key[id], id});
        m.ref.insert({k, id});
        m.key[id] = k;
      }
      ASSERT_TRUE(m.Consistent()) << "seed " << seed << " step " << step;
      if (step % 97 != 0) continue;
      // VisitInOrder, stopped after a random number of entries.
      const size_t want = static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(m.ref.size())));
      std::vector<std::pair<double, uint32_t>> seen;
      m.heap.VisitInOrder([&](const HeapEntry& e) {
        seen.emplace_back(e.key, e.id);
        return seen.size() < want;
      });
      std::vector<std::pair<double, uint32_t>> expect(m.ref.begin(), m.ref.end());
      expect.resize(std::min(expect.size(), std::max<size_t>(want, m.ref.empty() ? 0 : 1)));
      ASSERT_EQ(seen, expect) << "seed " << seed << " step " << step;
      // VisitAtMost: exactly the entries with key <= limit.
      const double limit = static_cast<double>(rng.Uniform(0, keys)) / 7.0;
      Ref at_most;
      m.heap.VisitAtMost(limit, [&](const HeapEntry& e) { EXPECT_TRUE(at_most.insert({e.key, e.id}).second); });
      Ref expect_at_most(m.ref.begin(), m.ref.upper_bound({limit, UINT32_MAX}));
      ASSERT_EQ(at_most, expect_at_most) << "seed " << seed << " step " << step;
    }
  }
}

TEST(KeyHeap, ChildrenOfAnEntryShareOneLine) {
  KeyHeap h;
  std::vector<uint32_t> pos(200, KeyHeap::kAbsent);
  auto p = [&](uint32_t id) -> uint32_t& { return pos[id]; };
  for (uint32_t id = 0; id < 200; ++id) h.Push(static_cast<double>(id), id, p);
  for (uint32_t i = 0; KeyHeap::FirstChild(i) + 3 < h.size(); ++i) {
    const auto first = reinterpret_cast<uintptr_t>(h.slot(KeyHeap::FirstChild(i)));
    EXPECT_EQ(first % 64, 0u) << "entry " << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h.slot(KeyHeap::FirstChild(i) + 3)) / 64, first / 64);
  }
}

TEST(KeyHeap, ReserveKeepsTheBufferAndClearEmpties) {
  KeyHeap h;
  std::vector<uint32_t> pos(100, KeyHeap::kAbsent);
  auto p = [&](uint32_t id) -> uint32_t& { return pos[id]; };
  h.reserve(100);
  ASSERT_GE(h.capacity(), 100u);
  const HeapEntry* before = h.slot(0);
  for (uint32_t id = 0; id < 100; ++id) h.Push(100.0 - id, id, p);
  EXPECT_EQ(h.slot(0), before);
  EXPECT_EQ(h.top().id, 99u);
  h.clear();
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.size(), 0u);
}

}  // namespace
}  // namespace hdrf::engine
