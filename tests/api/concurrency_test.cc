// Many threads on one Engine: writers apply allocate/release streams on
// disjoint job sets while readers take views and scheduling decisions. The
// final state must equal a single-threaded replay of the same per-job event
// streams, and the incremental state must agree with a full recompute.
// Runs under ThreadSanitizer in CI (suite 'concurrency').
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants, CheckNameIndex
#include "tests/rng.h"

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
  testing::Rng rng(12345);
  auto rnd = [&rng] { return rng.Next(); };
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

// A parent never disagrees with its children: usage adds up.
bool ParentsAgree(const std::vector<QueueInfo>& qs) {
  for (const QueueInfo& q : qs) {
    if (q.is_leaf) continue;
    std::vector<int64_t> sum(q.usage.size(), 0);
    for (const QueueInfo& c : qs)
      if (c.depth == q.depth + 1 && c.path.rfind(q.path + "/", 0) == 0)
        for (size_t r = 0; r < sum.size(); ++r) sum[r] += c.usage[r];
    if (sum != q.usage) return false;
  }
  return true;
}

// An engine over w's cluster and queues with all of w's jobs submitted;
// (*refs)[j] is job j's ref.
StatusOr<std::unique_ptr<Engine>> StartEngine(const World& w, std::vector<JobRef>* refs) {
  auto eng = Engine::Create(w.cluster, w.queues);
  if (!eng.ok()) return eng.status();
  for (const JobSpec& s : w.jobs) {
    auto ref = (*eng)->Submit(s);
    if (!ref.ok()) return ref.status();
    refs->push_back(*ref);
  }
  return eng;
}

TEST(ConcurrencyTest, ParallelWritersAndReadersMatchASerialReplay) {
  const int kThreads = 4, kJobs = 400, kOps = 20000;
  World w = MakeWorld(kThreads, kJobs, kOps);
  std::vector<JobRef> refs;
  auto eng = StartEngine(w, &refs);
  ASSERT_TRUE(eng.ok()) << eng.status().ToString();

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
      if (!ParentsAgree((*eng)->Queues())) failures.fetch_add(1);
      (void)(*eng)->PickNext();
      (void)(*eng)->Digest();
    }
  });
  for (auto& th : pool) th.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(CheckEngineInvariants(**eng).ok()) << CheckEngineInvariants(**eng).ToString();

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

// Name lookups (docs/concurrency.md "Name lookups"): FindJob takes the
// engine lock shared and reads the tree's name index, beside the task
// events of every shard and while another thread submits and removes jobs
// (exclusive sections that change the index). Each lookup of a kept job
// gives its ref; a removed job is gone when Remove returns, and a ref found
// before the removal is refused by the event that uses it.
TEST(ConcurrencyTest, NameLookupsRunBesideTaskEventsAndRemovals) {
  const int kThreads = 2, kJobs = 200, kOps = 6000, kChurn = 1500;
  World w = MakeWorld(kThreads, kJobs, kOps);
  std::vector<JobRef> refs;
  auto eng = StartEngine(w, &refs);
  ASSERT_TRUE(eng.ok()) << eng.status().ToString();

  std::atomic<bool> done{false};
  std::atomic<int64_t> failures{0};
  std::vector<std::thread> pool;
  // Task threads: every event by name, looked up first, as the C
  // interface's name-based calls do.
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (const Op& op : w.per_thread[t]) {
        auto ref = (*eng)->FindJob(w.jobs[op.job].name);
        if (!ref.ok() || ref->id != refs[op.job].id || ref->seq != refs[op.job].seq) {
          failures.fetch_add(1);
          continue;
        }
        Status s = op.allocate ? (*eng)->Allocate(*ref) : (*eng)->Release(*ref);
        if (!s.ok()) failures.fetch_add(1);
      }
    });
  // Churn: submit a job, find it, remove it; gone at once.
  std::thread churn([&] {
    for (int i = 0; i < kChurn; ++i) {
      JobSpec s = w.jobs[i % kJobs];
      s.name = "tmp" + std::to_string(i % 7);
      auto sub = (*eng)->Submit(s);
      if (!sub.ok()) {
        failures.fetch_add(1);
        continue;
      }
      auto found = (*eng)->FindJob(s.name);
      if (!found.ok() || found->id != sub->id || found->seq != sub->seq) failures.fetch_add(1);
      if (!(*eng)->Remove(*sub).ok()) failures.fetch_add(1);
      if ((*eng)->FindJob(s.name).status().code() != StatusCode::kNotFound) failures.fetch_add(1);
      if (found.ok() && (*eng)->Allocate(*found).code() != StatusCode::kNotFound) failures.fetch_add(1);
    }
  });
  // A reader of names that come and go: a hit is always the live job's ref.
  std::thread reader([&] {
    while (!done.load()) {
      for (int k = 0; k < 7; ++k) {
        auto r = (*eng)->FindJob("tmp" + std::to_string(k));
        if (r.ok() && r->seq <= refs.back().seq) failures.fetch_add(1);  // not one of the churned jobs
        if (!r.ok() && r.status().code() != StatusCode::kNotFound) failures.fetch_add(1);
      }
      if ((*eng)->FindJob("ghost").ok()) failures.fetch_add(1);
    }
  });
  for (auto& th : pool) th.join();
  churn.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(CheckEngineInvariants(**eng).ok()) << CheckEngineInvariants(**eng).ToString();
  EXPECT_TRUE(CheckNameIndex(**eng).ok()) << CheckNameIndex(**eng).ToString();
  EXPECT_EQ((*eng)->Jobs().size(), size_t{kJobs});
}

// The same writers through Engine::ApplyTasks in batches (the shard path
// with prefetching, docs/concurrency.md "Batches"), with a reader.
TEST(ConcurrencyTest, ParallelBatchesMatchASerialReplay) {
  const int kThreads = 4, kJobs = 400, kOps = 20000, kBatch = 64;
  World w = MakeWorld(kThreads, kJobs, kOps);
  std::vector<JobRef> refs;
  auto eng = StartEngine(w, &refs);
  ASSERT_TRUE(eng.ok()) << eng.status().ToString();
  std::atomic<bool> done{false};
  std::atomic<int64_t> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      std::vector<Engine::TaskOp> ops;
      for (size_t i = 0; i < w.per_thread[t].size(); ++i) {
        const Op& op = w.per_thread[t][i];
        Engine::TaskOp x;
        x.job = refs[op.job];
        x.type = op.allocate ? Event::Type::kAllocate : Event::Type::kRelease;
        ops.push_back(x);
        if (ops.size() == kBatch || i + 1 == w.per_thread[t].size()) {
          size_t refused = 0;
          if (!(*eng)->ApplyTasks(ops.data(), ops.size(), nullptr, &refused).ok() || refused)
            failures.fetch_add(1);
          ops.clear();
        }
      }
    });
  std::thread reader([&] {
    while (!done.load()) {
      if (!ParentsAgree((*eng)->Queues())) failures.fetch_add(1);
      (void)(*eng)->PickNext();
    }
  });
  for (auto& th : pool) th.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(CheckEngineInvariants(**eng).ok()) << CheckEngineInvariants(**eng).ToString();
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

// The sharded path under pressure: a cluster that fills up, so events fail,
// escalate to the exclusive lock, flip the saturated set (saved views) and
// hand out leases, while others run shard-local. Each thread keeps the
// allocations its successful events made; at the end every job must hold
// exactly those, the state must agree with a full recompute, and an engine
// given the same final allocations serially must have the same digest.
// With a store, the recovered state (the log replayed in sequence order)
// must equal the live one: the log order is a valid serial order.
struct PressureResult {
  std::string digest;
  uint64_t last_seq = 0;
};

// With `batch` > 0 each thread sends its events in ApplyTasks batches of
// that size (planned from what it expects to hold; each op's status then
// says what it holds).
PressureResult RunUnderPressure(const EngineOptions& opts, bool guarantees, int kOps = 6000,
                                int64_t cpu = 60000, size_t batch = 0) {
  const int kThreads = 4, kJobs = 240;
  ResourceAmounts cluster{{"cpu", cpu}, {"memory", int64_t{1} << 34}};
  std::vector<QueueSpec> queues;
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 2; ++b) {
      QueueSpec q;
      q.path = "root/t" + std::to_string(a) + "/l" + std::to_string(b);
      q.weight = 1 + b;
      if (guarantees && a == 0 && b == 0) q.guarantee = {{"cpu", 5000}};
      queues.push_back(q);
    }
  testing::Rng rng(777);
  auto rnd = [&rng] { return rng.Next(); };
  std::vector<JobSpec> jobs;
  for (int j = 0; j < kJobs; ++j) {
    JobSpec s;
    s.name = "p" + std::to_string(j);
    s.queue = queues[rnd() % queues.size()].path;
    s.tasks = 6;
    s.task = {{"cpu", 100 + static_cast<int64_t>(rnd() % 5) * 100},
              {"memory", int64_t{1} << (22 + rnd() % 6)}};
    jobs.push_back(s);
  }
  auto eng = Engine::Create(cluster, queues, opts);
  EXPECT_TRUE(eng.ok()) << eng.status().ToString();
  if (!eng.ok()) return {};
  std::vector<JobRef> refs;
  for (const JobSpec& s : jobs) refs.push_back(*(*eng)->Submit(s));

  std::vector<int64_t> held(kJobs, 0);  // element j written only by thread j % kThreads
  std::atomic<int64_t> bad_views{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      testing::Rng mine(99 + t);
      std::vector<Engine::TaskOp> ops;
      std::vector<Status> statuses;
      std::vector<int> op_job;
      std::vector<int64_t> planned(kJobs, 0);  // this thread's jobs only (all hold 0 at first)
      for (int i = 0; i < kOps && batch > 0; ++i) {
        const uint64_t y = mine.Next();
        const int j = static_cast<int>((y >> 8) % (kJobs / kThreads)) * kThreads + t;
        const bool up = planned[j] == 0 || (planned[j] < 6 && (y & 1));
        planned[j] += up ? 1 : -1;
        Engine::TaskOp op;
        op.job = refs[j];
        op.type = up ? Event::Type::kAllocate : Event::Type::kRelease;
        ops.push_back(op);
        op_job.push_back(j);
        if (ops.size() < batch && i + 1 < kOps) continue;
        statuses.assign(ops.size(), Status::Ok());
        for (size_t k = 0; k < ops.size(); ++k) ops[k].status = &statuses[k];
        EXPECT_TRUE((*eng)->ApplyTasks(ops.data(), ops.size(), nullptr, nullptr).ok());
        for (size_t k = 0; k < ops.size(); ++k) {
          if (statuses[k].ok()) held[op_job[k]] += ops[k].type == Event::Type::kAllocate ? 1 : -1;
          // A refusal says what the caller did wrong or what did not fit,
          // never that the engine went wrong.
          EXPECT_NE(statuses[k].code(), StatusCode::kInternal) << statuses[k].ToString();
        }
        for (int x = t; x < kJobs; x += kThreads) planned[x] = held[x];
        ops.clear();
        op_job.clear();
      }
      for (int i = 0; i < kOps && batch == 0; ++i) {
        const uint64_t y = mine.Next();
        const int j = static_cast<int>((y >> 8) % (kJobs / kThreads)) * kThreads + t;
        const bool up = held[j] == 0 || (held[j] < 6 && (y & 1));
        if (up) {
          if ((*eng)->Allocate(refs[j]).ok()) ++held[j];
        } else if ((*eng)->Release(refs[j]).ok()) {
          --held[j];
        }
      }
    });
  std::thread reader([&] {
    while (!done.load()) {
      if (!ParentsAgree((*eng)->Queues())) bad_views.fetch_add(1);
      (void)(*eng)->PickNext();
    }
  });
  for (auto& th : pool) th.join();
  done = true;
  reader.join();
  EXPECT_EQ(bad_views.load(), 0);
  Status inv = CheckEngineInvariants(**eng);
  EXPECT_TRUE(inv.ok()) << inv.ToString();
  for (int j = 0; j < kJobs; ++j) {
    auto info = (*eng)->GetJob(refs[j]);
    EXPECT_TRUE(info.ok());
    if (info.ok()) {
      EXPECT_EQ(info->allocated, held[j]) << jobs[j].name;
    }
  }
  auto serial = Engine::Create(cluster, queues);
  EXPECT_TRUE(serial.ok());
  for (int j = 0; j < kJobs; ++j) {
    auto r = (*serial)->Submit(jobs[j]);
    EXPECT_TRUE(r.ok());
    if (r.ok() && held[j] > 0) {
      EXPECT_TRUE((*serial)->Allocate(*r, held[j]).ok());
    }
  }
  EXPECT_EQ((*eng)->DigestHex(), (*serial)->DigestHex());
  PressureResult out{(*eng)->DigestHex(), (*eng)->last_seq()};
  EXPECT_TRUE((*eng)->Close().ok());
  return out;
}

TEST(ConcurrencyTest, ShardedEventsUnderPressureMatchTheirSuccesses) {
  // Always full; then about as much demand as capacity, so that the
  // saturated set flips often and local events run in between.
  RunUnderPressure(EngineOptions(), /*guarantees=*/false, 6000, 60000);
  RunUnderPressure(EngineOptions(), /*guarantees=*/false, 20000, 200000);
}

// The same through batches, grouped by shard (docs/concurrency.md
// "Batches"): windows end before ops that might escalate, which then run
// in order; every status must agree with the final state.
TEST(ConcurrencyTest, ShardGroupedBatchesUnderPressureMatchTheirStatuses) {
  EngineOptions o;
  o.batch_grouping = EngineOptions::BatchGrouping::kAlways;
  RunUnderPressure(o, /*guarantees=*/false, 6000, 60000, /*batch=*/48);
  RunUnderPressure(o, /*guarantees=*/false, 20000, 200000, /*batch=*/200);
  RunUnderPressure(EngineOptions(), /*guarantees=*/false, 20000, 200000, /*batch=*/200);
}

TEST(ConcurrencyTest, GuaranteesTakeTheExclusivePathAndStayExact) {
  RunUnderPressure(EngineOptions(), /*guarantees=*/true);
}

// Leases (docs/concurrency.md "Exclusive sections"): with less free
// capacity than shards in use no lease is handed out, yet a release of a
// resource that is not saturated still runs locally and adds to its
// shard's lease; the next exclusive section must return it to the pool.
// Then the back-off: while every event escalates (the cluster is full),
// hand-outs are skipped, and local events resume when room comes back.
// Each phase is checked against a full recompute and a serial engine that
// saw the same events.
TEST(ConcurrencyTest, LeasesComeBackWhenNoneWasHandedOutAndAfterBackOff) {
  const ResourceAmounts cluster{{"cpu", 10}, {"nvidia.com/gpu", 3}};
  std::vector<QueueSpec> queues;
  for (int q = 0; q < 3; ++q) {
    QueueSpec s;
    s.path = "root/q" + std::to_string(q);
    queues.push_back(s);
  }
  auto job = [](int q, int64_t cpu, int64_t gpu) {
    JobSpec s;
    s.name = "j" + std::to_string(q) + "_" + std::to_string(cpu) + "_" + std::to_string(gpu);
    s.queue = "root/q" + std::to_string(q);
    s.tasks = 10;
    s.task = {{"cpu", cpu}, {"nvidia.com/gpu", gpu}};
    return s;
  };
  const std::vector<JobSpec> jobs{job(0, 1, 0), job(1, 1, 1), job(2, 1, 0)};
  auto eng = Engine::Create(cluster, queues);
  auto serial = Engine::Create(cluster, queues);
  ASSERT_TRUE(eng.ok() && serial.ok());
  std::vector<JobRef> refs, srefs;
  for (const JobSpec& s : jobs) {
    refs.push_back(*(*eng)->Submit(s));
    srefs.push_back(*(*serial)->Submit(s));
  }
  auto both = [&](bool allocate, int j, int64_t n) {
    Status a = allocate ? (*eng)->Allocate(refs[j], n) : (*eng)->Release(refs[j], n);
    Status b = allocate ? (*serial)->Allocate(srefs[j], n) : (*serial)->Release(srefs[j], n);
    EXPECT_EQ(a.ok(), b.ok()) << a.ToString() << " / " << b.ToString();
    return a.ok();
  };
  auto check = [&](const char* phase) {
    Status inv = CheckEngineInvariants(**eng);
    EXPECT_TRUE(inv.ok()) << phase << ": " << inv.ToString();
    EXPECT_EQ((*eng)->DigestHex(), (*serial)->DigestHex()) << phase;
  };
  // cpu 8 of 10 used, gpu 1 of 3: free cpu 2 and gpu 2 are each less than
  // the 3 shards in use, so no lease is handed out.
  ASSERT_TRUE(both(true, 0, 7));
  ASSERT_TRUE(both(true, 1, 1));
  ASSERT_TRUE(both(false, 0, 2));  // local: cpu is not saturated
  check("release without a lease");
  ASSERT_TRUE(both(true, 2, 4));  // needs the released cpu: 4 of the 4 free
  check("the released cpu is free again");
  // Full (cpu 10 of 10): every release frees a saturated resource and
  // every allocation needs more than a lease, so all of them escalate.
  for (int i = 0; i < 300; ++i) {
    const int j = i % 3;
    ASSERT_TRUE(both(false, j, 1));
    ASSERT_TRUE(both(true, j, 1));
  }
  check("full-use churn");
  // Room again: releases and allocations run locally with new leases.
  ASSERT_TRUE(both(false, 0, 5));
  ASSERT_TRUE(both(false, 2, 3));
  for (int i = 0; i < 200; ++i) {
    const int j = i % 3 == 1 ? 0 : i % 3;
    ASSERT_TRUE(both(true, j, 1));
    ASSERT_TRUE(both(false, j, 1));
  }
  check("room again");
  EXPECT_FALSE(both(true, 0, 9));  // 9 more cpu than free: refused alike
  check("refused");
}

TEST(ConcurrencyTest, TheLogOrderOfShardedEventsRecoversTheLiveState) {
  for (Durability d : {Durability::kAsync, Durability::kSync}) {
    char tmpl[] = "/tmp/hdrf-sharded-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    EngineOptions o;
    o.db_path = std::string(tmpl) + "/db";
    o.durability = d;
    o.checkpoint_every = 5000;  // checkpoints taken while events run
    o.checkpoint_events_per_job = 0;  // every 5000 events, however many jobs
    // kSync pays an fsync per group of events: fewer of them.
    PressureResult live = RunUnderPressure(o, /*guarantees=*/false, d == Durability::kSync ? 600 : 6000, 200000);
    auto rec = Engine::Open(o);
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    EXPECT_EQ((*rec)->DigestHex(), live.digest) << DurabilityName(d);
    EXPECT_EQ((*rec)->last_seq(), live.last_seq) << DurabilityName(d);
    EXPECT_TRUE((*rec)->Close().ok());
    std::filesystem::remove_all(tmpl);
  }
}

}  // namespace
}  // namespace hdrf
