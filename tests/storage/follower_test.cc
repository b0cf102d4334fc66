// Followers (issue 15): Engine::OpenFollower over a store another engine is
// writing; events refused, views equal to the writer's after a catch-up,
// checkpoints and log deletion while following, the lag bound under load,
// and promotion after the writer closed the store (also after a catch-up
// that failed part-way).
#include <cstdlib>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants, CheckNameIndex
#include "hdrf/metrics.h"
#include "rocksdb/write_batch.h"
#include "storage/codec.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
using storage_test::MakeStream;
using storage_test::PrefixDigest;
using storage_test::TempDir;
using storage_test::TestCluster;
using storage_test::TestQueues;
using Clock = std::chrono::steady_clock;

// kAsync keeps the tests fast (no fsync per event); Flush() before looking.
std::unique_ptr<Engine> Writer(const std::string& db, Durability d = Durability::kAsync,
                               uint64_t checkpoint_every = 1000000) {
  EngineOptions o;
  o.db_path = db;
  o.durability = d;
  o.checkpoint_every = checkpoint_every;
  o.checkpoint_events_per_job = 0;  // the cadence asked for, however many jobs
  auto e = Engine::Create(TestCluster(), TestQueues(), o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

std::unique_ptr<Engine> Follow(const std::string& db, uint32_t interval_ms = 0) {
  FollowerOptions o;
  o.db_path = db;
  o.catch_up_interval_ms = interval_ms;
  auto f = Engine::OpenFollower(o);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(f).value() : nullptr;
}

void ApplyRange(Engine& e, const std::vector<Event>& s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) ASSERT_TRUE(e.Apply(s[i]).ok()) << "event " << i;
}

// Everything a reader sees, compared field by field.
void ExpectSameViews(const Engine& a, const Engine& b) {
  EXPECT_EQ(a.last_seq(), b.last_seq());
  EXPECT_EQ(a.Digest(), b.Digest());
  const auto qa = a.Queues(), qb = b.Queues();
  ASSERT_EQ(qa.size(), qb.size());
  for (size_t i = 0; i < qa.size(); ++i) {
    EXPECT_EQ(qa[i].path, qb[i].path);
    EXPECT_EQ(qa[i].usage, qb[i].usage) << qa[i].path;
    EXPECT_EQ(qa[i].blocked, qb[i].blocked) << qa[i].path;
    EXPECT_NEAR(qa[i].key, qb[i].key, 1e-9) << qa[i].path;
  }
  const auto ja = a.Jobs(), jb = b.Jobs();
  ASSERT_EQ(ja.size(), jb.size());
  for (size_t i = 0; i < ja.size(); ++i) {
    EXPECT_EQ(ja[i].name, jb[i].name);
    EXPECT_EQ(ja[i].allocated, jb[i].allocated) << ja[i].name;
    EXPECT_EQ(ja[i].state, jb[i].state) << ja[i].name;
  }
  const auto pa = a.PickNext(), pb = b.PickNext();
  EXPECT_EQ(pa.has_value(), pb.has_value());
  if (pa && pb) {
    EXPECT_EQ(pa->name, pb->name);
  }
}

TEST(Follower, RefusesEveryEventAndServesViews) {
  TempDir dir("fol-refuse");
  const std::string db = dir.Sub("db");
  auto w = Writer(db);
  ASSERT_TRUE(w);
  const auto stream = MakeStream(7, {.events = 300});
  ApplyRange(*w, stream, 0, stream.size());
  ASSERT_TRUE(w->Flush().ok());
  auto f = Follow(db);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->is_follower());
  EXPECT_FALSE(w->is_follower());
  const std::string msg = "engine is a read-only follower of " + db;
  auto refused = [&](const Status& s) {
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(msg));
  };
  const uint64_t digest = f->Digest(), last = f->last_seq();
  JobSpec j;
  j.name = "new";
  j.queue = "root/eng/dev";
  j.user = "u";
  j.tasks = 1;
  j.task = {{"cpu", 100}};
  refused(f->Submit(j).status());
  const auto jobs = f->Jobs();
  ASSERT_FALSE(jobs.empty());
  auto ref = f->FindJob(jobs.front().name);
  ASSERT_TRUE(ref.ok());
  refused(f->Allocate(*ref, 1));
  refused(f->Release(*ref, 1));
  refused(f->Finish(*ref, 1));
  refused(f->Remove(*ref));
  refused(f->Step().status());
  refused(f->Fill().status());
  QueueSpec q;
  q.path = "root/x";
  refused(f->CreateQueue(q));
  refused(f->UpdateQueue(TestQueues()[0]));
  refused(f->SetQueueState("root/eng", QueueState::kClosed));
  refused(f->DeleteQueue("root/sci/a"));
  refused(f->SetCapacity(TestCluster()));
  refused(f->Apply(stream[0]));
  Engine::TaskOp op;
  op.job = *ref;
  size_t bad = 0;
  refused(f->ApplyTasks(&op, 1, nullptr, &bad));
  EXPECT_EQ(f->Digest(), digest) << "a refused event changed the follower";
  EXPECT_EQ(f->last_seq(), last);
  // Views, decisions, Explain and metrics work.
  EXPECT_TRUE(f->Explain(jobs.front().name).ok());
  EXPECT_TRUE(CheckEngineInvariants(*f).ok());
  const std::string m = MetricsText(*f);
  EXPECT_THAT(m, HasSubstr("hdrf_follower_lag_events 0\n"));
  EXPECT_THAT(m, HasSubstr("hdrf_follower_lag_seconds "));
  EXPECT_THAT(MetricsText(*w), ::testing::Not(HasSubstr("hdrf_follower_lag")));
  // Not a follower: CatchUp and Promote say so; lag is zeros.
  EXPECT_EQ(w->CatchUp().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->Promote().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->follower_lag().applied_seq, 0u);
  // A follower of nothing.
  FollowerOptions none;
  none.db_path = dir.Sub("nothing");
  EXPECT_EQ(Engine::OpenFollower(none).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Engine::OpenFollower(FollowerOptions{}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Follower, ViewsMatchTheWritersAfterEachCatchUp) {
  TempDir dir("fol-views");
  const std::string db = dir.Sub("db");
  auto w = Writer(db, Durability::kAsync);
  ASSERT_TRUE(w);
  const auto stream = MakeStream(11, {.events = 4000, .other_percent = 15});
  ApplyRange(*w, stream, 0, 100);
  ASSERT_TRUE(w->Flush().ok());
  auto f = Follow(db);
  ASSERT_TRUE(f);
  ExpectSameViews(*w, *f);
  for (size_t from = 100; from < stream.size(); from += 650) {
    const size_t to = std::min(stream.size(), from + 650);
    ApplyRange(*w, stream, from, to);
    ASSERT_TRUE(w->Flush().ok());
    ASSERT_TRUE(f->CatchUp().ok());
    ExpectSameViews(*w, *f);
    EXPECT_EQ(f->Digest(), PrefixDigest(stream, to));
    const auto lag = f->follower_lag();
    EXPECT_EQ(lag.events, 0u);
    EXPECT_EQ(lag.applied_seq, w->last_seq());
    EXPECT_EQ(lag.writer_seq, w->last_seq());
    EXPECT_EQ(lag.reloads, 0u);
    EXPECT_TRUE(CheckEngineInvariants(*f).ok());
    EXPECT_TRUE(CheckNameIndex(*f).ok()) << CheckNameIndex(*f).ToString();
  }
}

TEST(Follower, ReloadsWhenTheWriterDeletedTheLogItNeeded) {
  TempDir dir("fol-ckpt");
  const std::string db = dir.Sub("db");
  // Checkpoints every 500 events delete the log behind the checkpoint
  // before them.
  auto w = Writer(db, Durability::kAsync, 500);
  ASSERT_TRUE(w);
  const auto stream = MakeStream(12, {.events = 6060});
  ApplyRange(*w, stream, 0, 200);
  ASSERT_TRUE(w->Flush().ok());
  auto f = Follow(db);
  ASSERT_TRUE(f);
  size_t at = 200;
  uint64_t reloads = 0;
  for (size_t step : {100, 3000, 40, 1500, 1160}) {
    const size_t to = std::min(stream.size(), at + step);
    ApplyRange(*w, stream, at, to);
    at = to;
    ASSERT_TRUE(w->Flush().ok());
    if (step > 1000) {
      // Two checkpoints past the follower: the second deletes the log up to
      // the first (a checkpoint keeps the log since the one before it).
      ASSERT_TRUE(w->Checkpoint().ok());
      ApplyRange(*w, stream, at, at + 20);
      at += 20;
      ASSERT_TRUE(w->Flush().ok());
      ASSERT_TRUE(w->Checkpoint().ok());
    } else if (step == 40) {
      ASSERT_TRUE(w->Checkpoint().ok());  // one checkpoint past the follower
    }
    ASSERT_TRUE(f->CatchUp().ok());
    EXPECT_EQ(f->last_seq(), w->last_seq());
    EXPECT_EQ(f->Digest(), PrefixDigest(stream, at)) << "after " << at << " events";
    EXPECT_TRUE(CheckEngineInvariants(*f).ok());
    EXPECT_TRUE(CheckNameIndex(*f).ok()) << CheckNameIndex(*f).ToString();
    if (step > 1000) {
      EXPECT_GT(f->follower_lag().reloads, reloads) << "the log it needed was deleted";
    } else if (step == 40) {
      EXPECT_EQ(f->follower_lag().reloads, reloads) << "the log since the previous checkpoint is kept";
    }
    reloads = f->follower_lag().reloads;
  }
  // And the background thread does the same on its own.
  auto g = Follow(db, 5);
  ASSERT_TRUE(g);
  const auto more = MakeStream(12, {.events = 9000});
  ApplyRange(*w, more, stream.size(), more.size());
  ASSERT_TRUE(w->Checkpoint().ok());
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (g->last_seq() < w->last_seq() && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(g->Digest(), PrefixDigest(more, more.size()));
  // Whether g had to reload depends on how far it fell behind the writer
  // (a 5 ms poll may keep up): the reload itself is checked above.
}

// The writer applies about 10^5 events/s (async); every event it
// acknowledged more than the bound ago must be applied on the follower.
// The bound is 100 ms on a quiet machine (the figure in bench/README.md,
// printed by this test's "[ info ]" line); under a loaded CI machine it is
// HDRF_FOLLOWER_LAG_MS (default 2000 ms), which still fails a follower that
// stops catching up or falls ever further behind.
TEST(Follower, StaysWithinTheLagBoundOfTheWriterAt1e5EventsPerSecond) {
  const char* env = std::getenv("HDRF_FOLLOWER_LAG_MS");
  const int64_t bound_ns = (env ? std::atoll(env) : 2000) * 1'000'000;
  TempDir dir("fol-lag");
  const std::string db = dir.Sub("db");
  auto w = Writer(db, Durability::kAsync, 200000);
  ASSERT_TRUE(w);
  std::vector<JobRef> jobs;
  for (int k = 0; k < 64; ++k) {
    JobSpec j;
    j.name = "j" + std::to_string(k);
    j.queue = k % 2 ? "root/sci/a" : "root/eng/dev";
    j.user = "u" + std::to_string(k % 5);
    j.tasks = 1000;
    j.task = {{"cpu", 10}};
    auto r = w->Submit(j);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    jobs.push_back(*r);
  }
  auto f = Follow(db, FollowerOptions{}.catch_up_interval_ms);  // the default period
  ASSERT_TRUE(f);
  constexpr double kRate = 1e5;
  constexpr auto kRun = std::chrono::milliseconds(2500);
  // ack_ns[i]: when event base+i was acknowledged (ns since start).
  std::vector<std::atomic<int64_t>> ack_ns(400000);
  const uint64_t base = w->last_seq() + 1;
  std::atomic<uint64_t> acked{0};  // events acknowledged so far
  std::atomic<bool> stop{false};
  const auto t0 = Clock::now();
  auto since = [&] { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count(); };
  std::thread writer([&] {
    uint64_t i = 0;
    while (!stop.load() && i < ack_ns.size()) {
      // Paced: event i is due at i / kRate seconds.
      while (static_cast<double>(since()) < static_cast<double>(i) * 1e9 / kRate)
        std::this_thread::yield();
      JobRef j = jobs[i % jobs.size()];
      Status s = (i / jobs.size()) % 2 == 0 ? w->Allocate(j, 1) : w->Release(j, 1);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ack_ns[i].store(since(), std::memory_order_release);
      acked.store(++i, std::memory_order_release);
    }
  });
  // Sample: the follower's applied event against the writer's acks.
  int64_t worst_ns = 0;
  uint64_t samples = 0, late = 0;
  while (Clock::now() - t0 < kRun) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const int64_t now = since();
    const uint64_t n = acked.load(std::memory_order_acquire);
    const uint64_t applied = f->follower_lag().applied_seq;
    // The oldest acknowledged event not yet applied: how stale the follower is.
    if (applied + 1 >= base && applied + 1 - base < n) {
      const int64_t age = now - ack_ns[applied + 1 - base].load(std::memory_order_acquire);
      worst_ns = std::max(worst_ns, age);
      late += age > bound_ns;
    }
    ++samples;
  }
  stop = true;
  writer.join();
  const double rate = static_cast<double>(acked.load()) / std::chrono::duration<double>(kRun).count();
  std::printf("[ info ] %.0f events/s, %llu samples, worst staleness %.1f ms, %llu over %lld ms\n", rate,
              static_cast<unsigned long long>(samples), worst_ns / 1e6, static_cast<unsigned long long>(late),
              static_cast<long long>(bound_ns / 1'000'000));
  EXPECT_EQ(late, 0u) << "worst staleness " << worst_ns / 1e6 << " ms";
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_TRUE(f->CatchUp().ok());
  EXPECT_EQ(f->Digest(), w->Digest());
}

TEST(Follower, PromotedAfterTheWriterClosesTakesEventsAndPersistsThem) {
  TempDir dir("fol-promote");
  const std::string db = dir.Sub("db");
  auto w = Writer(db, Durability::kAsync, 700);
  ASSERT_TRUE(w);
  const auto stream = MakeStream(13, {.events = 3000});
  ApplyRange(*w, stream, 0, 1000);
  ASSERT_TRUE(w->Flush().ok());
  auto f = Follow(db, 10);
  ASSERT_TRUE(f);
  ApplyRange(*w, stream, 1000, 2000);
  // Held by a writer (in this process): not promoted within the wait.
  Status held = f->Promote({.wait_ms = 30});
  EXPECT_EQ(held.code(), StatusCode::kFailedPrecondition) << held.ToString();
  EXPECT_THAT(held.message(), HasSubstr("still held"));
  EXPECT_TRUE(f->is_follower());
  // Names resolve on the follower (its jobs came through catch-up) ...
  ASSERT_TRUE(f->CatchUp().ok());
  const std::vector<JobInfo> jobs = w->Jobs();
  ASSERT_FALSE(jobs.empty());
  for (const JobInfo& j : jobs) {
    auto ref = f->FindJob(j.name);
    ASSERT_TRUE(ref.ok()) << j.name << ": " << ref.status().ToString();
    EXPECT_EQ(ref->seq, w->FindJob(j.name)->seq) << j.name;
  }
  ASSERT_TRUE(w->Close().ok());
  w.reset();
  ASSERT_TRUE(f->Promote({.wait_ms = 5000, .durability = Durability::kAsync}).ok());
  EXPECT_FALSE(f->is_follower());
  // ... and after the promotion, through the writer's name index.
  for (const JobInfo& j : jobs) EXPECT_TRUE(f->FindJob(j.name).ok()) << j.name;
  EXPECT_EQ(f->last_seq(), 2000u);
  EXPECT_EQ(f->Digest(), PrefixDigest(stream, 2000));
  EXPECT_EQ(f->follower_lag().applied_seq, 0u);
  ApplyRange(*f, stream, 2000, 3000);
  EXPECT_EQ(f->Promote().code(), StatusCode::kFailedPrecondition);
  const uint64_t d = f->Digest();
  ASSERT_TRUE(f->Close().ok());
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  auto r = Engine::Open(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->last_seq(), 3000u);
  EXPECT_EQ((*r)->Digest(), d);
  EXPECT_EQ(d, PrefixDigest(stream, 3000));
}

// Writes events first_seq.. as one log record into the closed store at
// `db` (the writer's own form: tests/storage/damaged_store_test.cc edits
// stores the same way).
void PutLogRecord(const std::string& db, uint64_t first_seq, const std::vector<Event>& events) {
  auto st = storage::Store::Open(db, storage::Store::Mode::kReadWrite);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  auto meta = (*st)->ReadMeta();
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  storage::EventBatch b;
  b.first_seq = first_seq;
  for (const Event& e : events) b.Add(e);
  storage::LogEncoder enc(meta->resource_names);
  std::string v;
  ASSERT_TRUE(enc.Encode(b, 0, b.size(), &v).ok());
  rocksdb::WriteBatch wb;
  wb.Put(storage::LogKey(first_seq), v);
  ASSERT_TRUE((*st)->Write(&wb, true).ok());
  ASSERT_TRUE((*st)->Close().ok());
}

// A catch-up that fails part-way leaves part of its round applied; the
// promotion after it rebuilds the state from the store rather than go on
// from that part (Follower::TakeOver, need_reload_).
TEST(Follower, PromotionAfterAFailedCatchUpReloads) {
  TempDir dir("fol-failed-catch-up");
  const std::string db = dir.Sub("db");
  const auto stream = MakeStream(29, {.events = 1200});
  {
    auto w = Writer(db);
    ASSERT_TRUE(w);
    ApplyRange(*w, stream, 0, 1000);
    ASSERT_TRUE(w->Close().ok());
  }
  auto f = Follow(db);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->CatchUp().ok());
  ASSERT_EQ(f->last_seq(), 1000u);
  // Events 1001..1100 as the writer would log them, then a record that
  // cannot be replayed (a job that never existed): one catch-up round
  // applies the first and fails on the second.
  PutLogRecord(db, 1001, {stream.begin() + 1000, stream.begin() + 1100});
  PutLogRecord(db, 1101, {Event::Allocate(999999, 1)});
  Status failed = f->CatchUp();
  ASSERT_FALSE(failed.ok()) << "the follower applied an event for a job that never existed";
  EXPECT_THAT(failed.message(), HasSubstr("event 1101"));
  // The bad record mended (the writer's log as it should have been).
  PutLogRecord(db, 1101, {stream.begin() + 1100, stream.end()});
  Status p = f->Promote({.wait_ms = 5000, .durability = Durability::kAsync});
  ASSERT_TRUE(p.ok()) << p.ToString();
  EXPECT_EQ(f->last_seq(), 1200u);
  EXPECT_EQ(f->Digest(), PrefixDigest(stream, 1200));
  EXPECT_TRUE(CheckEngineInvariants(*f).ok());
  ASSERT_TRUE(f->Close().ok());
}

}  // namespace
}  // namespace hdrf
