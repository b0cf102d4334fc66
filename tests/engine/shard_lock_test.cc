// BigReaderLock (base/shard_lock.h): writers keep a two-field invariant
// that readers check; shard mutexes under the shared side guard per-shard
// counters. Runs under ThreadSanitizer in CI (suite 'concurrency'): a
// missing happens-before edge shows up as a data race on the plain fields.
#include "base/shard_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace hdrf::base {
namespace {

TEST(BigReaderLock, ReadersNeverSeeAHalfWrittenPair) {
  BigReaderLock rw;
  int64_t a = 0, b = 0;  // guarded by rw: a == b outside a writer
  std::atomic<int64_t> torn{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      while (!stop.load()) {
        std::shared_lock<BigReaderLock> l(rw);
        if (a != b) torn.fetch_add(1);
      }
    });
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t)
    writers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::lock_guard<BigReaderLock> l(rw);
        ++a;
        std::this_thread::yield();
        ++b;
      }
    });
  for (auto& w : writers) w.join();
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a, 4000);
  EXPECT_EQ(b, 4000);
}

TEST(BigReaderLock, ShardLocksUnderTheSharedSideAndAWriterThatSums) {
  constexpr int kShards = 4, kThreads = 4, kIters = 20000;
  BigReaderLock rw;
  SpinMutex mu[kShards];
  int64_t count[kShards] = {};  // count[s] guarded by mu[s] under rw shared, or rw exclusive
  int64_t folded = 0;           // guarded by rw exclusive
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        if (i % 1000 == 999) {  // an "escalation": fold every shard
          std::lock_guard<BigReaderLock> l(rw);
          for (int64_t& c : count) {
            folded += c;
            c = 0;
          }
          continue;
        }
        std::shared_lock<BigReaderLock> l(rw);
        const int s = (t + i) % kShards;
        std::lock_guard<SpinMutex> g(mu[s]);
        ++count[s];
      }
    });
  for (auto& th : pool) th.join();
  int64_t total = folded;
  for (int64_t c : count) total += c;
  EXPECT_EQ(total, int64_t{kThreads} * (kIters - kIters / 1000));
}

}  // namespace
}  // namespace hdrf::base
