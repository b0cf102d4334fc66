// sim::TryBook (api/sim/try_book.h) against a literal model: per job, its
// key and whether it waits and was tried in the phase; a leaf marked tried
// marks each job waiting in it then. After every random operation the
// book's per-queue untried counts, its keys' job sets and untried counts,
// and Tried() must match the model, and so must LeafCandidates (the
// untried jobs holding a task, then the first n untried ones holding none
// by seq), a key's first untried job holding none (FirstUntriedIdle) and
// MarkIdleTriedBelow.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "api/sim/try_book.h"

namespace hdrf::sim {
namespace {

// root (stats 0, engine 5) with a (1, id 7: leaves a/x 2 id 3, a/y 3 id 9)
// and b (4, id 2): engine ids deliberately not in the stats order.
std::vector<QueueInfo> Queues() {
  auto q = [](QueueId id, bool leaf, std::vector<QueueId> children) {
    QueueInfo i;
    i.id = id;
    i.is_leaf = leaf;
    i.children = std::move(children);
    return i;
  };
  return {q(5, false, {7, 2}), q(7, false, {3, 9}), q(3, true, {}), q(9, true, {}), q(2, true, {})};
}
constexpr uint32_t kLeaves[] = {2, 3, 4};
constexpr QueueId kEngineOf[] = {5, 7, 3, 9, 2};
constexpr int kParent[] = {-1, 0, 1, 1, 0};  // stats index of the parent

struct ModelJob {
  uint32_t leaf = 0;
  bool waiting = false, tried = false, holds = false;
  uint64_t seq = 0;
  TryKey key{};
};

// LeafCandidates(leaf, n) against the model.
void CheckCandidates(TryBook& book, const std::vector<ModelJob>& m, uint32_t leaf, size_t n, int step) {
  std::set<uint32_t> holding;
  std::vector<std::pair<uint64_t, uint32_t>> idle;
  for (uint32_t i = 0; i < m.size(); ++i) {
    if (!m[i].waiting || m[i].tried || m[i].leaf != leaf) continue;
    if (m[i].holds) {
      holding.insert(i);
    } else {
      idle.emplace_back(m[i].seq, i);
    }
  }
  std::sort(idle.begin(), idle.end());
  std::vector<uint32_t> out;
  book.LeafCandidates(leaf, n, &out);
  ASSERT_GE(out.size(), holding.size()) << "step " << step;
  ASSERT_EQ(std::set<uint32_t>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(holding.size())), holding)
      << "step " << step;
  std::vector<uint32_t> first;
  for (size_t k = 0; k < idle.size() && k < n; ++k) first.push_back(idle[k].second);
  ASSERT_EQ(std::vector<uint32_t>(out.begin() + static_cast<std::ptrdiff_t>(holding.size()), out.end()), first)
      << "leaf " << leaf << " n " << n << " step " << step;
}

void Check(const TryBook& book, const std::vector<ModelJob>& m, int step) {
  std::vector<int64_t> untried(5, 0);
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::set<uint32_t>, int64_t>> keys;  // (leaf, shape)
  for (uint32_t i = 0; i < m.size(); ++i) {
    if (!m[i].waiting) continue;
    ASSERT_EQ(book.Tried(i), m[i].tried) << "job " << i << " step " << step;
    auto& k = keys[{m[i].leaf, m[i].key.shape}];
    k.first.insert(i);
    if (!m[i].tried) {
      ++k.second;
      for (int q = static_cast<int>(m[i].leaf); q >= 0; q = kParent[q]) ++untried[q];
    }
  }
  for (int q = 0; q < 5; ++q) ASSERT_EQ(book.untried()[kEngineOf[q]], untried[q]) << "queue " << q << " step " << step;
  for (uint32_t leaf : kLeaves) {
    size_t present = 0;
    for (const TryBook::KeyJobs* k : book.LeafKeys(leaf)) {
      auto it = keys.find({leaf, k->key->shape});
      ASSERT_TRUE(it != keys.end()) << "step " << step;
      ASSERT_EQ(std::set<uint32_t>(k->jobs.begin(), k->jobs.end()), it->second.first) << "step " << step;
      ASSERT_EQ(k->untried, it->second.second) << "step " << step;
      ++present;
    }
    size_t expected = 0;
    for (const auto& [lk, v] : keys) expected += lk.first == leaf;
    ASSERT_EQ(present, expected) << "leaf " << leaf << " step " << step;
  }
}

TEST(TryBookTest, MatchesLiteralModel) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    constexpr uint32_t kJobs = 24;
    TryBook book;
    book.Init(Queues(), kJobs);
    std::vector<ModelJob> m(kJobs);
    for (uint32_t i = 0; i < kJobs; ++i) {
      m[i].leaf = kLeaves[rng() % 3];
      m[i].seq = (i * 7919u) % 101;  // distinct, not in job order
    }
    EXPECT_EQ(book.StatsLeaf(9), 3u);
    EXPECT_EQ(book.EngineLeaf(4), 2u);
    for (int step = 0; step < 400; ++step) {
      const uint32_t i = rng() % kJobs;
      switch (rng() % 10) {
        case 0: case 1: case 2: {  // a change of the job's tasks: waits or not, maybe another key
          const bool waiting = rng() % 4 != 0, holds = rng() % 3 == 0;
          TryKey key{m[i].leaf, static_cast<uint32_t>(rng() % 3), 0, 1, 0, 1.0};
          // A try is kept for the phase when the job stops waiting and
          // waits again; a job not waiting when its leaf was marked as a
          // whole was not marked.
          ASSERT_TRUE(book.Update(i, m[i].leaf, waiting, key, m[i].seq, holds));
          m[i].waiting = waiting;
          m[i].holds = holds;
          m[i].key = key;
          break;
        }
        case 3: case 4:  // a try
          if (m[i].waiting) {
            book.MarkTried(i);
            m[i].tried = true;
          }
          break;
        case 5: {  // a leaf as a whole
          const uint32_t leaf = kLeaves[rng() % 3];
          book.MarkLeafTried(leaf);
          for (ModelJob& j : m)
            if (j.leaf == leaf && j.waiting) j.tried = true;
          break;
        }
        case 6:
          if (rng() % 4 == 0) {
            book.EndPhase();
            for (ModelJob& j : m) j.tried = false;
          }
          break;
        case 7:  // the first jobs of a leaf's order come from these
          CheckCandidates(book, m, kLeaves[rng() % 3], rng() % 6, step);
          break;
        default: {  // a key's first untried job holding none; those below a seq tried
          const uint32_t leaf = kLeaves[rng() % 3];
          const std::vector<TryBook::KeyJobs*>& keys = book.LeafKeys(leaf);
          if (keys.empty()) break;
          TryBook::KeyJobs* k = keys[rng() % keys.size()];
          uint32_t first = TryBook::kNoJob;
          for (uint32_t j = 0; j < kJobs; ++j)
            if (m[j].waiting && !m[j].tried && !m[j].holds && m[j].leaf == leaf && m[j].key.shape == k->key->shape &&
                (first == TryBook::kNoJob || m[j].seq < m[first].seq))
              first = j;
          ASSERT_EQ(book.FirstUntriedIdle(k), first) << "step " << step;
          const uint64_t below = rng() % 110;
          book.MarkIdleTriedBelow(k, below);
          for (ModelJob& j : m)
            if (j.waiting && !j.holds && j.leaf == leaf && j.key.shape == k->key->shape && j.seq < below) j.tried = true;
          break;
        }
      }
      Check(book, m, step);
      if (HasFatalFailure()) {
        ADD_FAILURE() << "seed " << seed;
        return;
      }
    }
  }
}

TEST(TryBookTest, RefusesAWaitingJobOutsideALeaf) {
  TryBook book;
  book.Init(Queues(), 2);
  EXPECT_FALSE(book.Update(0, 1, true, TryKey{1, 0, 0, 1, 0, 1.0}, 1, false));  // stats 1 is not a leaf
  EXPECT_TRUE(book.Update(1, 1, false, TryKey{1, 0, 0, 1, 0, 1.0}, 2, false));
  EXPECT_EQ(book.untried()[5], 0);
}

}  // namespace
}  // namespace hdrf::sim
