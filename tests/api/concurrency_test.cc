// Many threads on one Engine: writers apply allocate/release streams on
// disjoint job sets while readers take views and scheduling decisions. The
// final state must equal a single-threaded replay of the same per-job event
// streams, and the incremental state must agree with a full recompute.
// Runs under ThreadSanitizer in CI (suite 'concurrency').
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "api/engine.h"

namespace hdrf {
namespace {

struct Op {
  uint32_t job;
  bool allocate;
};

struct World {
  ResourceAmounts cluster{{"cpu", 1000000}, {"memory", int64_t{1} << 40}};
  std::vector<QueueSpec> queues;
  std::vector<JobSpec> jobs;
  std::vector<std::vector<Op>> per_thread;  // each job's ops stay on one thread
};

World MakeWorld(int threads, int jobs, int ops_per_thread) {
  World w;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b) {
      QueueSpec q;
      q.path = "root/a" + std::to_string(a) + "/b" + std::to_string(b);
      q.weight = 1 + a;
      w.queues.push_back(q);
    }
  uint64_t x = 12345;
  auto rnd = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int j = 0; j < jobs; ++j) {
    JobSpec s;
    s.name = "j" + std::to_string(j);
    s.queue = w.queues[rnd() % w.queues.size()].path;
    s.tasks = 8;
    s.task = {{"cpu", 100 + static_cast<int64_t>(rnd() % 400)}, {"memory", int64_t{1} << (20 + rnd() % 8)}};
    w.jobs.push_back(s);
  }
  w.per_thread.resize(threads);
  std::vector<int> alloc(jobs, 0);
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < ops_per_thread; ++i) {
      // jobs j with j % threads == t belong to thread t
      uint32_t j = static_cast<uint32_t>((rnd() % (jobs / threads)) * threads + t);
      bool up = alloc[j] == 0 || (alloc[j] < 8 && rnd() % 2);
      alloc[j] += up ? 1 : -1;
      w.per_thread[t].push_back({j, up});
    }
  }
  return w;
}

TEST(ConcurrencyTest, ParallelWritersAndReadersMatchASerialReplay) {
  const int kThreads = 4, kJobs = 400, kOps = 20000;
  World w = MakeWorld(kThreads, kJobs, kOps);
  auto eng = Engine::Create(w.cluster, w.queues);
  ASSERT_TRUE(eng.ok()) << eng.status().ToString();
  std::vector<JobRef> refs;
  for (const JobSpec& s : w.jobs) refs.push_back(*(*eng)->Submit(s));

  std::atomic<bool> done{false};
  std::atomic<int64_t> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (const Op& op : w.per_thread[t]) {
        Status s = op.allocate ? (*eng)->Allocate(refs[op.job]) : (*eng)->Release(refs[op.job]);
        if (!s.ok()) failures.fetch_add(1);
      }
    });
  std::thread reader([&] {
    while (!done.load()) {
      auto qs = (*eng)->Queues();
      // A parent never disagrees with its children: usage adds up.
      for (const QueueInfo& q : qs) {
        if (q.is_leaf) continue;
        std::vector<int64_t> sum(q.usage.size(), 0);
        for (const QueueInfo& c : qs)
          if (c.depth == q.depth + 1 && c.path.rfind(q.path + "/", 0) == 0)
            for (size_t r = 0; r < sum.size(); ++r) sum[r] += c.usage[r];
        if (sum != q.usage) failures.fetch_add(1);
      }
      (void)(*eng)->PickNext();
      (void)(*eng)->Digest();
    }
  });
  for (auto& th : pool) th.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE((*eng)->CheckInvariants().ok()) << (*eng)->CheckInvariants().ToString();

  auto serial = Engine::Create(w.cluster, w.queues);
  ASSERT_TRUE(serial.ok());
  std::vector<JobRef> srefs;
  for (const JobSpec& s : w.jobs) srefs.push_back(*(*serial)->Submit(s));
  for (int t = 0; t < kThreads; ++t)
    for (const Op& op : w.per_thread[t])
      ASSERT_TRUE((op.allocate ? (*serial)->Allocate(srefs[op.job]) : (*serial)->Release(srefs[op.job])).ok());
  EXPECT_EQ((*eng)->DigestHex(), (*serial)->DigestHex());
  EXPECT_EQ((*eng)->last_seq(), (*serial)->last_seq());
}

}  // namespace
}  // namespace hdrf
