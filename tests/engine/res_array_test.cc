// engine::ResArray (per-resource amounts, inline up to kInline) against
// std::vector: every size from 0 to kMaxResources, inline and on the heap,
// through assign, copy, move, self-assignment and resizing between the two
// storages.
#include "engine/res_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace hdrf::engine {
namespace {

constexpr size_t kMax = 32;  // engine::kMaxResources

std::vector<int64_t> Iota(size_t n, int64_t from) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

void ExpectSame(const ResArray<int64_t>& a, const std::vector<int64_t>& v) {
  ASSERT_EQ(a.size(), v.size());
  EXPECT_EQ(a.empty(), v.empty());
  EXPECT_TRUE(a == v);
  EXPECT_EQ(a.ToVector(), v);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(a[i], v[i]) << "index " << i;
  EXPECT_EQ(a.end() - a.begin(), static_cast<ptrdiff_t>(v.size()));
}

TEST(ResArrayTest, AssignEverySize) {
  for (size_t n = 0; n <= kMax; ++n) {
    ResArray<int64_t> a;
    a.assign(n, int64_t{7});
    ExpectSame(a, std::vector<int64_t>(n, 7));
    const std::vector<int64_t> v = Iota(n, 100);
    a.assign(v.begin(), v.end());
    ExpectSame(a, v);
    // Inline storage is inside the object; heap storage is not.
    const auto* self = reinterpret_cast<const char*>(&a);
    const auto* data = reinterpret_cast<const char*>(a.data());
    const bool inside = data >= self && data < self + sizeof(a);
    if (n > 0) {
      EXPECT_EQ(inside, n <= ResArray<int64_t>::kInline) << "n = " << n;
    }
  }
}

TEST(ResArrayTest, ResizesBetweenInlineAndHeap) {
  ResArray<int64_t> a;
  for (size_t n : {size_t{3}, size_t{9}, size_t{4}, size_t{5}, size_t{0}, size_t{32}, size_t{1}}) {
    const std::vector<int64_t> v = Iota(n, static_cast<int64_t>(n) * 10);
    a.assign(v.begin(), v.end());
    ExpectSame(a, v);
  }
}

TEST(ResArrayTest, CopyAndMove) {
  for (size_t n : {size_t{0}, size_t{2}, size_t{4}, size_t{5}, size_t{32}}) {
    const std::vector<int64_t> v = Iota(n, -3);
    ResArray<int64_t> a;
    a.assign(v.begin(), v.end());

    ResArray<int64_t> copy(a);
    ExpectSame(copy, v);
    if (n > 0) {
      copy[n - 1] += 1;  // a copy owns its storage
      ExpectSame(a, v);
    }

    ResArray<int64_t> assigned;
    assigned.assign(size_t{6}, int64_t{1});
    assigned = a;
    ExpectSame(assigned, v);
    assigned = assigned;  // self-assignment keeps the contents
    ExpectSame(assigned, v);

    ResArray<int64_t> moved(std::move(assigned));
    ExpectSame(moved, v);
    EXPECT_TRUE(assigned.empty());  // NOLINT(bugprone-use-after-move): documented state

    ResArray<int64_t> move_assigned;
    move_assigned.assign(size_t{3}, int64_t{9});
    move_assigned = std::move(moved);
    ExpectSame(move_assigned, v);
    EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
  }
}

TEST(ResArrayTest, InVectorsOfNodes) {
  // Nodes live in std::vector and move when it grows (Tree::queues_).
  std::vector<ResArray<double>> nodes;
  for (size_t i = 0; i < 100; ++i) {
    nodes.emplace_back();
    nodes.back().assign(i % 7, static_cast<double>(i));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(nodes[i].size(), i % 7);
    for (double x : nodes[i]) EXPECT_EQ(x, static_cast<double>(i));
  }
}

TEST(ResArrayTest, ComparesWithVector) {
  ResArray<int64_t> a;
  a.assign(size_t{3}, int64_t{1});
  EXPECT_TRUE(a == std::vector<int64_t>({1, 1, 1}));
  EXPECT_FALSE(a == std::vector<int64_t>({1, 1}));
  EXPECT_FALSE(a == std::vector<int64_t>({1, 2, 1}));
  EXPECT_TRUE(std::vector<int64_t>({1, 1, 1}) == a);  // either order (C++20)
  EXPECT_TRUE(std::vector<int64_t>({1, 1, 0}) != a);
}

}  // namespace
}  // namespace hdrf::engine
