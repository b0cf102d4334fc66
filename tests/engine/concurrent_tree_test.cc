// engine::ConcurrentTree on its own, with no storage: a recording
// engine::EventSink stands for the journal. The sink's order of Append calls
// must be a valid serial order of what the tree applied (docs/concurrency.md
// "Why local events are exact"), refusals must change nothing, and
// without a sink events are counted.
#include "engine/concurrent_tree.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/event.h"

namespace hdrf::engine {
namespace {

constexpr int64_t kCpu = 1000;  // 1 CPU in millicores

// Numbers events 1, 2, ... in the order of its Append calls and keeps them.
class RecordingSink : public EventSink {
 public:
  uint64_t Append(const Event& e) override {
    if (yield_) std::this_thread::yield();
    std::lock_guard<std::mutex> l(mu_);
    log_.push_back(e);
    return log_.size();
  }
  uint64_t AppendBatch(std::span<const JobEventRecord> events) override {
    if (yield_) std::this_thread::sleep_for(std::chrono::microseconds(20));
    std::lock_guard<std::mutex> l(mu_);
    const uint64_t first = log_.size() + 1;
    for (const JobEventRecord& e : events) log_.push_back(Event::Task(e.type, e.job_seq, e.n));
    ++batches_;
    return first;
  }
  uint64_t last_seq() const override {
    std::lock_guard<std::mutex> l(mu_);
    return log_.size();
  }
  // Take time before numbering (before taking the sink's lock): Append
  // yields the processor, AppendBatch sleeps 20 us.
  void set_yield(bool on) { yield_ = on; }
  // AppendBatch calls so far.
  size_t batches() const {
    std::lock_guard<std::mutex> l(mu_);
    return batches_;
  }
  Status health() const override {
    std::lock_guard<std::mutex> l(mu_);
    return health_;
  }
  void Fail(Status s) {
    std::lock_guard<std::mutex> l(mu_);
    health_ = std::move(s);
  }
  std::vector<Event> log() const {
    std::lock_guard<std::mutex> l(mu_);
    return log_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Event> log_;
  size_t batches_ = 0;
  Status health_;
  bool yield_ = false;  // set before the threads start
};

const std::vector<std::string> kLeaves = {"root/a/x", "root/b/x", "root/c/x", "root/d/x"};

std::unique_ptr<Tree> NewTree(int64_t cpus) {
  std::vector<QueueSpec> qs;
  for (const std::string& leaf : kLeaves) {
    QueueSpec q;
    q.path = leaf;
    qs.push_back(q);
  }
  auto t = Tree::Create({{"cpu", cpus * kCpu}}, qs);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

Event SubmitEvent(const std::string& name, const std::string& queue, int64_t tasks) {
  Event e;
  e.type = Event::Type::kSubmit;
  e.job.name = name;
  e.job.queue = queue;
  e.job.tasks = tasks;
  e.job.task = {{"cpu", kCpu}};
  e.job.user = "u";
  return e;
}

// `per_leaf` jobs of 50 tasks in each leaf, submitted through the tree.
std::vector<JobRef> SubmitJobs(ConcurrentTree& ct, int per_leaf) {
  std::vector<JobRef> refs;
  ConcurrentTree::Exclusive lock(ct);
  for (size_t l = 0; l < kLeaves.size(); ++l)
    for (int j = 0; j < per_leaf; ++j) {
      JobRef ref;
      EXPECT_TRUE(ct.Apply(SubmitEvent("j" + std::to_string(l) + "_" + std::to_string(j), kLeaves[l], 50), &ref).ok());
      refs.push_back(ref);
    }
  return refs;
}

uint64_t DigestOf(const ConcurrentTree& ct) {
  ConcurrentTree::Exclusive lock(ct);
  return ct.tree().Digest();
}

// Replays `log` in order on a fresh tree: every event must be accepted, and
// the state must be the live one.
void ExpectLogReplaysTo(const std::vector<Event>& log, int64_t cpus, uint64_t digest) {
  auto t = NewTree(cpus);
  for (size_t i = 0; i < log.size(); ++i) {
    const Status s = ApplyEvent(*t, log[i]);
    ASSERT_TRUE(s.ok()) << "logged event " << i + 1 << " refused on replay: " << s.ToString();
  }
  EXPECT_EQ(t->Digest(), digest);
  EXPECT_TRUE(t->CheckInvariants().ok()) << t->CheckInvariants().ToString();
}

// Four threads, each on its own leaf's jobs (its own shard) and now and then
// on another's, with a cluster small enough that allocations fill it and
// escalate: the log (Append order) replays to the live state.
TEST(ConcurrentTreeTest, TheSinksOrderIsASerialOrder) {
  constexpr int64_t kCpus = 300;
  RecordingSink sink;
  ConcurrentTree ct;
  ct.Init(NewTree(kCpus), 0, &sink);
  const std::vector<JobRef> refs = SubmitJobs(ct, 8);
  std::vector<std::thread> threads;
  std::atomic<int> local_ok{0};
  for (int th = 0; th < 4; ++th)
    threads.emplace_back([&, th] {
      std::mt19937_64 rng(th + 1);
      for (int i = 0; i < 20000; ++i) {
        const int leaf = rng() % 8 == 0 ? static_cast<int>(rng() % 4) : th;
        const JobRef job = refs[leaf * 8 + rng() % 8];
        const auto type = rng() % 2 ? Event::Type::kAllocate : (rng() % 4 ? Event::Type::kRelease : Event::Type::kFinish);
        uint64_t seq = 0;
        if (ct.TaskEvent(Op{type, job, 1 + static_cast<int64_t>(rng() % 3)}, &seq).ok()) {
          EXPECT_GT(seq, 0u);
          local_ok.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  for (auto& t : threads) t.join();
  const std::vector<Event> log = sink.log();
  EXPECT_EQ(log.size(), refs.size() + static_cast<size_t>(local_ok.load()));
  {
    ConcurrentTree::Exclusive lock(ct);
    EXPECT_EQ(ct.last_seq(), log.size());
    EXPECT_TRUE(ct.tree().CheckInvariants().ok()) << ct.tree().CheckInvariants().ToString();
  }
  ExpectLogReplaysTo(log, kCpus, DigestOf(ct));
}

// Logged runs (concurrent_tree_batch.cc): batches apply task events while
// two threads send single task events on the same jobs, with a cluster
// small enough that jobs run out of tasks and allocations escalate, and a
// sink that takes its time before it numbers anything (an event appended
// after the lock that ordered it was released is then overtaken: with the
// in-order path's runs, or a grouped window's shard, appended after their
// locks were released, it failed every run tried on the 2-core dev VM, 5
// and 3): the log (the order of Append and AppendBatch calls) replays to
// the live state, and the batches' events went in runs. First one batching
// thread in order (alone, so its runs hold their shards' locks until
// appended), then one in order and one grouped by shard.
TEST(ConcurrentTreeTest, BatchRunsKeepTheSinksOrderASerialOrder) {
  constexpr int64_t kCpus = 200;
  for (int batchers : {1, 2}) {
    SCOPED_TRACE(std::to_string(batchers) + " batching threads");
    RecordingSink sink;
    sink.set_yield(true);
    ConcurrentTree ct;
    ct.Init(NewTree(kCpus), 0, &sink);
    const std::vector<JobRef> refs = SubmitJobs(ct, 4);
    auto random_op = [&](std::mt19937_64& rng) {
      const JobRef job = refs[rng() % refs.size()];
      const auto type = rng() % 2 ? Event::Type::kAllocate : (rng() % 4 ? Event::Type::kRelease : Event::Type::kFinish);
      return Op{type, job, 1 + static_cast<int64_t>(rng() % 20)};
    };
    std::atomic<size_t> applied{0};
    std::vector<std::thread> threads;
    for (int th = 0; th < 2 + batchers; ++th)
      threads.emplace_back([&, th] {
        std::mt19937_64 rng(th + 11);
        if (th < 2) {  // single events
          for (int i = 0; i < 20000; ++i) {
            uint64_t seq = 0;
            if (ct.TaskEvent(random_op(rng), &seq).ok()) applied.fetch_add(1, std::memory_order_relaxed);
          }
          return;
        }
        const auto grouping = th == 2 ? EngineOptions::BatchGrouping::kNever : EngineOptions::BatchGrouping::kAlways;
        for (int b = 0; b < 200; ++b) {
          std::vector<Engine::TaskOp> ops;
          for (int i = 0; i < 200; ++i) {
            const Op op = random_op(rng);
            ops.push_back(Engine::TaskOp{op.job, op.n, op.type});
          }
          uint64_t last = 0, logged = 0;
          size_t refused = 0;
          ASSERT_TRUE(ct.ApplyTasks(ops.data(), ops.size(), grouping, &last, &refused, &logged).ok());
          applied.fetch_add(ops.size() - refused, std::memory_order_relaxed);
        }
      });
    for (auto& t : threads) t.join();
    const std::vector<Event> log = sink.log();
    EXPECT_EQ(log.size(), refs.size() + applied.load());
    EXPECT_GT(sink.batches(), 0u);
    {
      ConcurrentTree::Exclusive lock(ct);
      EXPECT_EQ(ct.last_seq(), log.size());
    }
    ExpectLogReplaysTo(log, kCpus, DigestOf(ct));
  }
}

// A batch grouped by shard (kAlways) gives the state and the statuses of the
// same batch in order (kNever), and logs a serial order too.
TEST(ConcurrentTreeTest, GroupedBatchesMatchInOrderBatches) {
  constexpr int64_t kCpus = 150;
  RecordingSink sinks[2];
  ConcurrentTree cts[2];
  std::vector<JobRef> refs[2];
  for (int k = 0; k < 2; ++k) {
    cts[k].Init(NewTree(kCpus), 0, &sinks[k]);
    refs[k] = SubmitJobs(cts[k], 8);
  }
  std::mt19937_64 rng(7);
  std::vector<Engine::TaskOp> ops[2];
  std::vector<Status> statuses[2];
  for (int i = 0; i < 5000; ++i) {
    const size_t j = rng() % refs[0].size();
    const auto type = rng() % 3 ? Event::Type::kAllocate : Event::Type::kRelease;
    const int64_t n = 1 + static_cast<int64_t>(rng() % 4);
    for (int k = 0; k < 2; ++k) ops[k].push_back(Engine::TaskOp{refs[k][j], n, type});
  }
  const EngineOptions::BatchGrouping grouping[2] = {EngineOptions::BatchGrouping::kAlways,
                                                    EngineOptions::BatchGrouping::kNever};
  size_t refused[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    statuses[k].resize(ops[k].size());
    for (size_t i = 0; i < ops[k].size(); ++i) ops[k][i].status = &statuses[k][i];
    uint64_t last = 0, logged = 0;
    ASSERT_TRUE(cts[k].ApplyTasks(ops[k].data(), ops[k].size(), grouping[k], &last, &refused[k], &logged).ok());
    EXPECT_EQ(last, sinks[k].last_seq());
    EXPECT_EQ(logged, last);
  }
  EXPECT_GT(refused[0], 0u);  // the cluster fills: some ops are refused
  EXPECT_EQ(refused[0], refused[1]);
  for (size_t i = 0; i < ops[0].size(); ++i)
    ASSERT_EQ(statuses[0][i].code(), statuses[1][i].code()) << "op " << i;
  EXPECT_EQ(DigestOf(cts[0]), DigestOf(cts[1]));
  ExpectLogReplaysTo(sinks[0].log(), kCpus, DigestOf(cts[0]));
}

// A refusal (a closed engine, a follower) or an unhealthy sink refuses
// every event with its status, and nothing changes or is logged.
TEST(ConcurrentTreeTest, RefusalsChangeNothing) {
  RecordingSink sink;
  ConcurrentTree ct;
  ct.Init(NewTree(100), 0, &sink);
  const std::vector<JobRef> refs = SubmitJobs(ct, 2);
  uint64_t seq = 0;
  ASSERT_TRUE(ct.TaskEvent(Op{Event::Type::kAllocate, refs[0], 2}, &seq).ok());
  const uint64_t digest = DigestOf(ct);
  const size_t logged = sink.log().size();
  std::vector<Engine::TaskOp> ops = {{refs[1], 1, Event::Type::kAllocate}, {refs[0], 1, Event::Type::kRelease}};
  for (int round = 0; round < 2; ++round) {
    const StatusCode want = round == 0 ? StatusCode::kFailedPrecondition : StatusCode::kIoError;
    if (round == 0) {
      ConcurrentTree::Exclusive lock(ct);
      ct.Refuse(Status::FailedPrecondition("engine is closed"));
    } else {
      {
        ConcurrentTree::Exclusive lock(ct);
        ct.Refuse(Status::Ok());
      }
      sink.Fail(Status::IoError("disk gone"));
    }
    EXPECT_EQ(ct.TaskEvent(Op{Event::Type::kAllocate, refs[1], 1}, &seq).code(), want);
    size_t refused = 0;
    uint64_t last = 0, numbered = 0;
    EXPECT_EQ(ct.ApplyTasks(ops.data(), ops.size(), EngineOptions::BatchGrouping::kNever, &last, &refused, &numbered).code(),
              want);
    EXPECT_EQ(refused, ops.size());
    {
      ConcurrentTree::Exclusive lock(ct);
      EXPECT_EQ(ct.Apply(SubmitEvent("late", kLeaves[0], 1), nullptr).code(), want);
    }
    EXPECT_EQ(DigestOf(ct), digest);
    EXPECT_EQ(sink.log().size(), logged);
  }
}

// Without a sink, shard-path events are counted per shard and folded into
// last_seq() by the next exclusive section.
TEST(ConcurrentTreeTest, WithoutASinkEventsAreCounted) {
  ConcurrentTree ct;
  ct.Init(NewTree(1000), 5, nullptr);
  const std::vector<JobRef> refs = SubmitJobs(ct, 1);
  uint64_t seq = 1;
  for (int i = 0; i < 40; ++i)
    ASSERT_TRUE(ct.TaskEvent(Op{Event::Type::kAllocate, refs[i % refs.size()], 1}, &seq).ok());
  {
    ConcurrentTree::Exclusive lock(ct);
    EXPECT_EQ(ct.last_seq(), 5 + refs.size() + 40);
  }
  std::vector<Engine::TaskOp> ops(10, Engine::TaskOp{refs[0], 1, Event::Type::kRelease});
  uint64_t last = 0, logged = 0;
  size_t refused = 0;
  ASSERT_TRUE(ct.ApplyTasks(ops.data(), ops.size(), EngineOptions::BatchGrouping::kAuto, &last, &refused, &logged).ok());
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(last, 5 + refs.size() + 50);
}

}  // namespace
}  // namespace hdrf::engine
