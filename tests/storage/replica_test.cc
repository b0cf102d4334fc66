// storage::Replica (storage/replica.h): a load continued by CatchUp reaches
// the state a full load reaches, a taken tree goes on being applied to,
// Apply refuses events that do not follow its position, and a refused
// event leaves the replica broken rather than silently part-way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "storage/replica.h"
#include "storage/state_io.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
using storage::Replica;
using storage::Store;
using storage_test::MakeStream;
using storage_test::PrefixDigest;
using storage_test::TempDir;

constexpr size_t kEvents = 3000;

class ReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage_test::StreamOptions so;
    so.events = kEvents;
    stream_ = MakeStream(7, so);
    EngineOptions o;
    o.db_path = dir_.Sub("db");
    o.durability = Durability::kAsync;
    o.checkpoint_every = 0;  // the log holds every event after checkpoint 0
    auto e = Engine::Create(storage_test::TestCluster(), storage_test::TestQueues(), o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    writer_ = std::move(e).value();
    for (const Event& ev : stream_) ASSERT_TRUE(writer_->Apply(ev).ok());
    // Left open: Close() would checkpoint the last event. A read-only
    // store reads the log from the writer's WAL.
    ASSERT_TRUE(writer_->Flush().ok());
    auto st = Store::Open(dir_.Sub("db"), Store::Mode::kReadOnly);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store_ = std::move(st).value();
  }

  Replica LoadUpTo(uint64_t stop_at) {
    storage::LoadOptions lo;
    lo.stop_at = stop_at;
    auto r = Replica::Load(*store_, lo);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }

  // The log after event `after` up to `stop_at`, as a follower's poll reads it.
  std::vector<storage::LogPart> Parts(const Replica& r, uint64_t after, uint64_t stop_at) {
    std::vector<storage::LogPart> parts;
    uint64_t last = 0;
    Status s = storage::ReadLogAfter(
        *store_, r.meta().resource_names, after, stop_at,
        [&](storage::EventBatch& b, size_t begin, size_t end) {
          parts.push_back(storage::LogPart{std::move(b), begin, end});
          return Status::Ok();
        },
        &last);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(last, stop_at);
    return parts;
  }

  void TearDown() override {
    store_.reset();
    if (writer_) {
      EXPECT_TRUE(writer_->Close().ok());
    }
  }

  TempDir dir_{"replica"};
  std::vector<Event> stream_;
  std::unique_ptr<Engine> writer_;
  std::unique_ptr<Store> store_;
};

TEST_F(ReplicaTest, CatchUpContinuesALoad) {
  Replica r = LoadUpTo(1000);
  EXPECT_EQ(r.checkpoint_seq(), 0u);
  EXPECT_EQ(r.last_seq(), 1000u);
  EXPECT_EQ(r.tree().Digest(), PrefixDigest(stream_, 1000));
  const uint64_t records = r.log_records();
  EXPECT_GT(records, 0u);

  ASSERT_TRUE(r.CatchUp(*store_, 2000).ok());
  EXPECT_EQ(r.last_seq(), 2000u);
  EXPECT_EQ(r.tree().Digest(), PrefixDigest(stream_, 2000));
  ASSERT_TRUE(r.CatchUp(*store_).ok());  // to the end of the log
  EXPECT_EQ(r.last_seq(), kEvents);
  EXPECT_EQ(r.events_replayed(), kEvents);
  EXPECT_GT(r.log_records(), records);
  EXPECT_EQ(r.tree().Digest(), PrefixDigest(stream_, kEvents));
  ASSERT_TRUE(r.CatchUp(*store_).ok());  // nothing more: no change
  EXPECT_EQ(r.last_seq(), kEvents);

  auto full = Replica::Load(*store_, storage::LoadOptions{});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->last_seq(), kEvents);
  EXPECT_EQ(full->tree().Digest(), r.tree().Digest());
}

TEST_F(ReplicaTest, TakenTreeIsStillAppliedTo) {
  Replica r = LoadUpTo(500);
  std::unique_ptr<engine::Tree> tree = r.TakeTree();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(&r.tree(), tree.get());
  ASSERT_TRUE(r.Apply(Parts(r, 500, 2500)).ok());
  EXPECT_EQ(r.last_seq(), 2500u);
  EXPECT_EQ(tree->Digest(), PrefixDigest(stream_, 2500));
  EXPECT_TRUE(tree->CheckInvariants().ok()) << tree->CheckInvariants().ToString();
}

TEST_F(ReplicaTest, ApplyStartsAtTheNextEvent) {
  Replica r = LoadUpTo(1000);
  const uint64_t before = r.tree().Digest();
  // Events 1501..2000 given to a replica at event 1000: nothing is applied.
  Status s = r.Apply(Parts(r, 1500, 2000));
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("event 1501 given to a replica at event 1000"));
  EXPECT_EQ(r.last_seq(), 1000u);
  EXPECT_EQ(r.tree().Digest(), before);
  EXPECT_FALSE(r.broken());
  // An event already applied, likewise.
  s = r.Apply(Parts(r, 999, 1000));
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  ASSERT_TRUE(r.Apply(Parts(r, 1000, 2000)).ok());
  EXPECT_EQ(r.tree().Digest(), PrefixDigest(stream_, 2000));
}

TEST_F(ReplicaTest, RefusedEventBreaksIt) {
  Replica r = LoadUpTo(1000);
  storage::EventBatch b;
  b.first_seq = 1001;
  b.Add(Event::Allocate(999999, 1));  // no such job
  size_t failed = 7;
  Status s = r.Apply(b, 0, b.size(), &failed);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("event 1001 (allocate job #999999 n=1) cannot be replayed"));
  EXPECT_EQ(failed, 0u);
  EXPECT_TRUE(r.broken());
  s = r.CatchUp(*store_);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("load it again"));
}

}  // namespace
}  // namespace hdrf
