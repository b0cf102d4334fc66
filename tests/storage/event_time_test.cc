// Event times in the log (docs/storage.md "Event times"): the codec keeps
// them and reads records without them (written before times existed) as
// unknown; an engine logs the host's clock or its own event_clock; the
// time changes no digest; a store whose records carry no
// times still opens and recovers the same state.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "hdrf/engine.h"
#include "hdrf/workload_import.h"
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

std::vector<std::string> Names() { return {"cpu", "memory", "nvidia.com/gpu"}; }

EngineOptions Opts(const std::string& db, std::function<int64_t()> clock = nullptr) {
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kAsync;
  o.event_clock = std::move(clock);
  return o;
}

// Every log record of the store at `db`, decoded, in order.
std::vector<storage::EventBatch> ReadLog(const std::string& db) {
  std::vector<storage::EventBatch> out;
  auto store = storage::Store::Open(db, storage::Store::Mode::kReadOnly);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return out;
  Status s = (*store)->ScanLog(0, [&](uint64_t first, std::string_view v) -> StatusOr<bool> {
    out.emplace_back();
    HDRF_RETURN_IF_ERROR(storage::DecodeLogBatch(v, Names(), first, &out.back()));
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(EventTime, CodecKeepsTimesAndReadsOldRecordsAsUnknown) {
  auto stream = MakeStream(9, {.events = 300, .other_percent = 40});
  storage::EventBatch b;
  b.first_seq = 5;
  for (size_t i = 0; i < stream.size(); ++i) b.Add(stream[i], 1795741200000000 + static_cast<int64_t>(i) * 7);
  storage::LogEncoder enc(Names());
  std::string v;
  ASSERT_TRUE(enc.Encode(b, 100, 250, &v).ok());
  storage::EventBatch back;
  ASSERT_TRUE(storage::DecodeLogBatch(v, Names(), 105, &back).ok());
  ASSERT_EQ(back.times.size(), 150u);
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back.TimeAt(i), b.times[100 + i]);

  // A record written before times (no `times` field): the events read the
  // same, their times are unknown.
  storage::EventBatch old = b;
  old.times.clear();
  ASSERT_TRUE(enc.Encode(old, 0, old.size(), &v).ok());
  ASSERT_TRUE(storage::DecodeLogBatch(v, Names(), 5, &back).ok());
  EXPECT_EQ(back.size(), old.size());
  EXPECT_TRUE(back.times.empty());
  EXPECT_EQ(back.TimeAt(3), 0);
  // 8 bytes more per event with times: 24 bytes a task event.
  storage::EventBatch tasks;
  tasks.first_seq = 1;
  for (int i = 0; i < 10000; ++i) tasks.Add(Event::Allocate(i, 1), i);
  ASSERT_TRUE(enc.Encode(tasks, 0, tasks.size(), &v).ok());
  EXPECT_LT(v.size(), 10000u * 24 + 200);
}

TEST(EventTime, EngineLogsItsClockAndTheDigestIgnoresIt) {
  TempDir dir("time");
  auto stream = MakeStream(4, {.events = 800, .other_percent = 15});
  std::atomic<int64_t> now{1000};
  uint64_t digest[2];
  for (int k = 0; k < 2; ++k) {
    const std::string db = dir.Sub("db" + std::to_string(k));
    auto e = Engine::Create(TestCluster(), TestQueues(),
                            Opts(db, k == 0 ? std::function<int64_t()>([&] { return now += 3; }) : nullptr));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const int64_t before = HostClockMicros();
    for (const Event& ev : stream) ASSERT_TRUE((*e)->Apply(ev).ok());
    const int64_t after = HostClockMicros();
    ASSERT_TRUE((*e)->Close().ok());
    int64_t prev = INT64_MIN;
    uint64_t n = 0;
    for (const storage::EventBatch& b : ReadLog(db)) {
      ASSERT_EQ(b.times.size(), b.size());
      for (size_t i = 0; i < b.size(); ++i, ++n) {
        const int64_t t = b.TimeAt(i);
        if (k == 0) {
          EXPECT_EQ(t, 1000 + 3 * static_cast<int64_t>(b.first_seq + i));
        } else {
          EXPECT_TRUE(t >= before && t <= after) << t;
        }
        EXPECT_GE(t, prev);
        prev = t;
      }
    }
    EXPECT_EQ(n, stream.size());
    auto back = Engine::Open(Opts(db));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    digest[k] = (*back)->Digest();
    ASSERT_TRUE((*back)->Close().ok());
  }
  EXPECT_EQ(digest[0], digest[1]);
  EXPECT_EQ(digest[0], PrefixDigest(stream, stream.size()));
}

// A store whose log records carry no times (as every store written before
// times existed; written here record by record): it opens and recovers the
// same state, a history import says why it cannot import it, and the
// events logged after it carry times.
TEST(EventTime, AStoreWithoutTimesStillOpens) {
  TempDir dir("old");
  const std::string db = dir.Sub("db");
  auto stream = MakeStream(6, {.events = 600, .other_percent = 10});
  {  // a store holding checkpoint 0 only (kNone writes nothing more)
    EngineOptions o = Opts(db);
    o.durability = Durability::kNone;
    auto e = Engine::Create(TestCluster(), TestQueues(), o);
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE((*e)->Close().ok());
  }
  {  // events 1..500 as records without times, 100 events each
    auto store = storage::Store::Open(db, storage::Store::Mode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    storage::LogEncoder enc(Names());
    storage::EventBatch b;
    b.first_seq = 1;
    for (size_t i = 0; i < 500; ++i) b.Add(stream[i]);
    rocksdb::WriteBatch wb;
    for (size_t k = 0; k < 500; k += 100) {
      std::string v;
      ASSERT_TRUE(enc.Encode(b, k, k + 100, &v).ok());
      wb.Put(storage::LogKey(1 + k), v);
    }
    ASSERT_TRUE((*store)->Write(&wb, true).ok());
    ASSERT_TRUE((*store)->Close().ok());
  }
  for (const storage::EventBatch& b : ReadLog(db)) EXPECT_TRUE(b.times.empty());
  std::string csv;
  auto imp = ImportStoreHistory(db, {}, [&](std::string_view c) {
    csv += c;
    return Status::Ok();
  });
  ASSERT_FALSE(imp.ok());
  EXPECT_EQ(imp.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(imp.status().message(), HasSubstr("holds no event times"));

  auto e = Engine::Open(Opts(db));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->recovery_stats().checkpoint_seq, 0u);
  EXPECT_EQ((*e)->last_seq(), 500u);
  EXPECT_EQ((*e)->Digest(), PrefixDigest(stream, 500));
  for (size_t i = 500; i < stream.size(); ++i) ASSERT_TRUE((*e)->Apply(stream[i]).ok());
  ASSERT_TRUE((*e)->Close().ok());
  uint64_t timed = 0, untimed = 0;
  for (const storage::EventBatch& b : ReadLog(db)) (b.times.empty() ? untimed : timed) += b.size();
  EXPECT_EQ(untimed, 500u);
  EXPECT_EQ(timed, 100u);
  auto again = Engine::Open(Opts(db));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->Digest(), PrefixDigest(stream, stream.size()));
}

}  // namespace
}  // namespace hdrf
