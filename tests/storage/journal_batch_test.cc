// The journal's batch append (engine::EventSink::AppendBatch, docs/storage.md
// "Writing") and the log records' bytes: a batch's events are numbered as
// one contiguous run, in order, under concurrent callers, and reach the log
// in number order; the records the writer encodes are byte for byte those
// of the format (docs/storage.md), whatever way the events were queued.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/event_sink.h"
#include "engine/tree.h"
#include "storage/codec.h"
#include "storage/journal.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using engine::JobEventRecord;
using storage_test::MakeStream;
using storage_test::TempDir;
using storage_test::TestCluster;
using storage_test::TestQueues;

std::vector<std::string> Names() { return {"cpu", "memory", "nvidia.com/gpu"}; }

uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// A batch of every kind of event (the stream's, and a plan), with times.
storage::EventBatch MixedBatch() {
  auto stream = MakeStream(11, {.events = 3000, .other_percent = 40});
  Event plan;
  plan.type = Event::Type::kApplyPlan;
  plan.job_seq = 7;
  plan.n = 3;
  plan.victims = {{2, 1}, {5, 2}};
  stream.insert(stream.begin() + 1500, plan);
  storage::EventBatch b;
  b.first_seq = 41;
  for (size_t i = 0; i < stream.size(); ++i)
    b.Add(stream[i], 1795741200000000 + static_cast<int64_t>(i) * 7);
  return b;
}

// The records' bytes are the format's: a hash of the records of a fixed
// batch, cut at several sizes, as the encoder wrote them when the store
// format was documented (docs/storage.md). A change here is a format change.
TEST(LogFormat, RecordBytesAreTheFormats) {
  const storage::EventBatch b = MixedBatch();
  storage::LogEncoder enc(Names());
  uint64_t h = 0xcbf29ce484222325ull;
  size_t bytes = 0;
  const size_t cuts[] = {1, 7, 100, 1000, 65536};
  size_t at = 0;
  for (size_t k = 0; at < b.size(); ++k) {
    const size_t end = std::min(b.size(), at + cuts[k % 5]);
    std::string v;
    ASSERT_TRUE(enc.Encode(b, at, end, &v).ok());
    h = Fnv1a(h, v);
    bytes += v.size();
    at = end;
  }
  // Computed by the encoder of fd7b106 (before the batch append).
  EXPECT_EQ(bytes, 196840u);
  EXPECT_EQ(h, 14386688598136169168ull);
}

// AddJobEvents queues what Add queues for the same job events at one time.
TEST(LogFormat, AddJobEventsQueuesWhatAddQueues) {
  const std::vector<JobEventRecord> ev = {{3, 2, Event::Type::kAllocate},
                                          {3, 1, Event::Type::kRelease},
                                          {9, 1, Event::Type::kFinish},
                                          {9, 0, Event::Type::kRemove}};
  storage::EventBatch a, b;
  a.first_seq = b.first_seq = 5;
  a.Add(Event::Task(Event::Type::kSubmit, 0, 1), 10);  // a full event first
  b.Add(Event::Task(Event::Type::kSubmit, 0, 1), 10);
  for (const JobEventRecord& e : ev) a.Add(Event::Task(e.type, e.job_seq, e.n), 77);
  b.AddJobEvents(ev, 77);
  ASSERT_EQ(a.size(), b.size());
  storage::LogEncoder enc(Names());
  std::string va, vb;
  ASSERT_TRUE(enc.Encode(a, 0, a.size(), &va).ok());
  ASSERT_TRUE(enc.Encode(b, 0, b.size(), &vb).ok());
  EXPECT_EQ(va, vb);
  EXPECT_EQ(a.times, b.times);
}

}  // namespace
}  // namespace hdrf
