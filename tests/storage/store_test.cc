// Storage: codec, round trips through a store, checkpoints and the log
// tail, reclamation and concurrency (damaged stores: damaged_store_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/codec.h"
#include "storage/journal.h"
#include "storage/state_io.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"
#include "tests/storage/store_test_util.h"

namespace hdrf {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using storage_test::Child;
using storage_test::MakeStream;
using storage_test::PrefixDigest;
using storage_test::StreamOptions;
using storage_test::TempDir;
using storage_test::TestCluster;
using storage_test::TestQueues;
namespace fs = std::filesystem;

using storage_test::ApplyAll;
using storage_test::MustCreate;
using storage_test::MustOpen;
using storage_test::Opts;

void ExpectSameJobs(const Engine& a, const Engine& b) {
  auto ja = a.Jobs(), jb = b.Jobs();
  ASSERT_EQ(ja.size(), jb.size());
  for (size_t i = 0; i < ja.size(); ++i) {
    EXPECT_EQ(ja[i].name, jb[i].name);
    EXPECT_EQ(ja[i].queue, jb[i].queue);
    EXPECT_EQ(ja[i].seq, jb[i].seq);
    EXPECT_EQ(ja[i].state, jb[i].state) << ja[i].name;
    EXPECT_EQ(ja[i].allocated, jb[i].allocated);
    EXPECT_EQ(ja[i].tasks, jb[i].tasks);
  }
  auto qa = a.Queues(), qb = b.Queues();
  ASSERT_EQ(qa.size(), qb.size());
  for (size_t i = 0; i < qa.size(); ++i) {
    EXPECT_EQ(qa[i].path, qb[i].path);
    EXPECT_EQ(qa[i].state, qb[i].state);
    EXPECT_EQ(qa[i].reclaimable, qb[i].reclaimable);
    EXPECT_EQ(qa[i].min_user_limit_percent, qb[i].min_user_limit_percent);
    EXPECT_EQ(qa[i].user_limit_factor, qb[i].user_limit_factor);
    EXPECT_EQ(qa[i].usage, qb[i].usage);
  }
  EXPECT_EQ(a.Total(), b.Total());
}

// ---------------------------------------------------------------- codec --

using storage_test::Names;

TEST(Codec, LogBatchRoundTripsEveryEventType) {
  storage::EventBatch b;
  b.first_seq = 41;
  auto stream = MakeStream(7, {.events = 600, .other_percent = 40});
  for (const Event& e : stream) b.Add(e);
  b.Add(Event::Allocate(3, int64_t{1} << 40));  // n beyond a TaskOp's int32
  storage::LogEncoder enc(Names());
  std::string v;
  ASSERT_TRUE(enc.Encode(b, 0, b.size(), &v).ok());
  storage::EventBatch back;
  Status s = storage::DecodeLogBatch(v, Names(), 41, &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(back.size(), b.size());
  std::set<Event::Type> seen;
  for (size_t i = 0; i < b.size(); ++i) {
    Event x = b.At(i), y = back.At(i);
    seen.insert(x.type);
    ASSERT_EQ(x.type, y.type) << i;
    EXPECT_EQ(x.job_seq, y.job_seq);
    if (x.type != Event::Type::kRemove && IsJobEvent(x.type)) {
      EXPECT_EQ(x.n, y.n);
    }
    EXPECT_EQ(x.job.name, y.job.name);
    EXPECT_EQ(x.job.queue, y.job.queue);
    EXPECT_EQ(x.job.user, y.job.user);
    EXPECT_EQ(x.job.task, y.job.task);
    EXPECT_EQ(x.job.tasks, y.job.tasks);
    EXPECT_EQ(x.job.weight, y.job.weight);
    EXPECT_EQ(x.job.min_available, y.job.min_available);
    EXPECT_EQ(x.queue.path, y.queue.path);
    EXPECT_EQ(x.queue.capability, y.queue.capability);
    EXPECT_EQ(x.queue.guarantee, y.queue.guarantee);
    EXPECT_EQ(x.queue.weight, y.queue.weight);
    EXPECT_EQ(x.queue.user_limit_factor, y.queue.user_limit_factor);
    EXPECT_EQ(x.queue.min_user_limit_percent, y.queue.min_user_limit_percent);
    EXPECT_EQ(x.queue.reclaimable, y.queue.reclaimable);
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.cluster, y.cluster);
  }
  EXPECT_EQ(seen.size(), 10u) << "the stream should hold every event type";
  // Task events are stored in 16 bytes each.
  storage::EventBatch tasks;
  tasks.first_seq = 1;
  for (int i = 0; i < 10000; ++i) tasks.Add(Event::Allocate(i, 1));
  ASSERT_TRUE(enc.Encode(tasks, 0, tasks.size(), &v).ok());
  EXPECT_LT(v.size(), 10000u * 16 + 200);
}

TEST(Codec, DamagedValuesAreErrorsNeverCrashes) {
  storage::EventBatch b;
  b.first_seq = 1;
  for (const Event& e : MakeStream(3, {.events = 200, .other_percent = 50})) b.Add(e);
  storage::LogEncoder enc(Names());
  std::string v;
  ASSERT_TRUE(enc.Encode(b, 0, b.size(), &v).ok());
  storage_test::Rng rng(11);
  storage::EventBatch out;
  int errors = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string d = v;
    if (trial % 3 == 0) {
      d.resize(static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(v.size()) - 1)));
    } else {
      for (int k = 0; k < 1 + trial % 4; ++k)
        d[rng.Uniform(0, static_cast<int64_t>(d.size()) - 1)] ^= static_cast<char>(1 + rng.Uniform(0, 254));
    }
    Status s = storage::DecodeLogBatch(d, Names(), 1, &out);
    if (!s.ok()) {
      ++errors;
      EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    }
  }
  EXPECT_GT(errors, 1000);
  // The wrong record kind, and a key that disagrees with the value.
  EXPECT_THAT(storage::DecodeMeta(v).status().message(), HasSubstr("holds a LogBatch record"));
  EXPECT_THAT(storage::DecodeLogBatch(v, Names(), 2, &out).message(), HasSubstr("its key says 2"));
}

TEST(Codec, KeysSortBySequence) {
  EXPECT_LT(storage::LogKey(255), storage::LogKey(256));
  EXPECT_LT(storage::LogKey(1), storage::LogKey(uint64_t{1} << 40));
  EXPECT_LT(storage::ChunkKey(7, 1), storage::ChunkKey(7, 2));
  EXPECT_LT(storage::ChunkKey(7, 999), storage::ChunkKey(8, 0));
  EXPECT_EQ(storage::KeyToString(storage::LogKey(42)), "l/seq=42");
  EXPECT_EQ(storage::KeyToString(storage::ChunkKey(7, 3)), "c/seq=7/chunk=3");
  EXPECT_EQ(storage::KeyToString(storage::HeaderKey(9)), "h/seq=9");
  uint64_t s = 0;
  EXPECT_TRUE(storage::ParseLogKey(storage::LogKey(1234567), &s));
  EXPECT_EQ(s, 1234567u);
}

// ----------------------------------------------------------- round trips --

class RoundTrip : public ::testing::TestWithParam<Durability> {};

TEST_P(RoundTrip, StateAndSequenceSurviveCloseAndOpen) {
  TempDir dir("rt");
  const std::string db = dir.Sub("db");
  auto stream = MakeStream(21, {.events = 1500, .other_percent = 15});
  uint64_t digest, last;
  {
    auto e = MustCreate(Opts(db, GetParam(), 400));
    ASSERT_TRUE(e);
    ApplyAll(*e, stream, 0, 700);
    auto steps = e->Fill();  // Step() events are logged like any other
    ASSERT_TRUE(steps.ok());
    ASSERT_TRUE(e->Checkpoint().ok());
    ResourceAmounts c = TestCluster();
    c["cpu"] = 50000;
    ASSERT_TRUE(e->SetCapacity(c).ok());
    ASSERT_TRUE(e->Close().ok());
    // A closed engine has no store any more.
    digest = e->Digest();
    last = e->last_seq();
  }
  {
    auto e = MustOpen(Opts(db, GetParam()));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->DigestHex(), DigestToHex(digest));
    EXPECT_EQ(e->last_seq(), last);
    EXPECT_TRUE(CheckEngineInvariants(*e).ok()) << CheckEngineInvariants(*e).ToString();
    EXPECT_EQ(e->durable_seq(), last);
    // Keep going on the recovered engine; sequence numbers continue.
    Event s;
    s.type = Event::Type::kSubmit;
    s.job.name = "after-restart";
    s.job.queue = "root/eng/dev";
    s.job.task = {{"cpu", 500}};
    auto ref = e->Submit(s.job);
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    EXPECT_EQ(e->last_seq(), last + 1);
    ResourceAmounts bigger = TestCluster();
    bigger["cpu"] = 1000000;  // the Fill above used everything
    ASSERT_TRUE(e->SetCapacity(bigger).ok());
    ASSERT_TRUE(e->Allocate(*ref, 1).ok());
    digest = e->Digest();
    last = e->last_seq();
    ASSERT_TRUE(e->Close().ok());
  }
  auto e = MustOpen(Opts(db, Durability::kNone));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Digest(), digest);
  EXPECT_EQ(e->last_seq(), last);
  auto j = e->GetJob("after-restart");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->allocated, 1);
}

INSTANTIATE_TEST_SUITE_P(Durabilities, RoundTrip,
                         ::testing::Values(Durability::kSync, Durability::kAsync, Durability::kNone),
                         [](const auto& info) { return std::string(DurabilityName(info.param)); });

TEST(Store, RecoveredEngineEqualsTheLiveOne) {
  TempDir dir("eq");
  const std::string db = dir.Sub("db");
  auto stream = MakeStream(5, {.events = 3000, .other_percent = 12});
  auto live = MustCreate(Opts(db, Durability::kAsync, 700));
  ASSERT_TRUE(live);
  ApplyAll(*live, stream);
  ASSERT_TRUE(live->Flush().ok());
  auto mem = MustCreate(Opts(""));
  ApplyAll(*mem, stream);
  EXPECT_EQ(live->Digest(), mem->Digest());
  ASSERT_TRUE(live->Close().ok());
  auto back = MustOpen(Opts(db));
  ASSERT_TRUE(back);
  ExpectSameJobs(*mem, *back);
  EXPECT_EQ(back->Digest(), mem->Digest());
  // The next scheduling decision is the same.
  auto a = mem->PickNext(), b = back->PickNext();
  ASSERT_EQ(a.has_value(), b.has_value());
  if (a) {
    EXPECT_EQ(a->name, b->name);
  }
}

TEST(Store, EnqueueGateStatesSurvive) {
  TempDir dir("gate");
  const std::string db = dir.Sub("db");
  EngineOptions o = Opts(db);
  o.overcommit_factor = 1.0;
  auto e = MustCreate(o);
  ASSERT_TRUE(e);
  // Twelve gangs of 10 tasks, then a fill: the gate holds some back.
  auto submit_and_fill = [](Engine& x) {
    for (int i = 0; i < 12; ++i) {
      JobSpec j;
      j.name = "g" + std::to_string(i);
      j.queue = "root/sci/a";
      j.tasks = 10;
      j.min_available = 10;
      j.task = {{"cpu", 1000}};
      if (!x.Submit(j).ok()) return false;
    }
    return x.Fill().ok();
  };
  ASSERT_TRUE(submit_and_fill(*e));
  int pending = 0;
  for (const JobInfo& j : e->Jobs()) pending += j.state == JobState::kPending;
  EXPECT_GT(pending, 0) << "the gate should hold some jobs back";
  const uint64_t d = e->Digest();
  auto jobs = e->Jobs();
  ASSERT_TRUE(e->Close().ok());
  // A different gate than the store's is refused; unset means the store's.
  EngineOptions other = Opts(db);
  other.overcommit_factor = 2.0;
  auto bad = Engine::Open(other);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("overcommitFactor"));
  auto back = MustOpen(Opts(db));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), d);
  auto jb = back->Jobs();
  ASSERT_EQ(jb.size(), jobs.size());
  for (size_t i = 0; i < jb.size(); ++i) EXPECT_EQ(jb[i].state, jobs[i].state) << jb[i].name;
  ASSERT_TRUE(CheckEngineInvariants(*back).ok());
  // Releasing resources admits the same Pending jobs in the recovered
  // engine as in an in-memory twin that applied the same events.
  EngineOptions twin_opts;
  twin_opts.overcommit_factor = 1.0;
  auto twin = MustCreate(twin_opts);
  ASSERT_TRUE(submit_and_fill(*twin));
  ASSERT_EQ(twin->Digest(), back->Digest());
  for (Engine* x : {twin.get(), back.get()}) {
    auto r = x->FindJob("g0");
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(x->Finish(*r, 10).ok());
  }
  auto jt = twin->Jobs(), jr = back->Jobs();
  ASSERT_EQ(jt.size(), jr.size());
  for (size_t i = 0; i < jt.size(); ++i) EXPECT_EQ(jt[i].state, jr[i].state) << jt[i].name;
}

TEST(Store, StatesThatCreationRulesRefuseAreRecovered) {
  // SetCapacity below the root children's guarantees, and a parent's
  // capability lowered under a child's guarantee: reachable by events,
  // refused by Tree::Create's rules; recovery must still rebuild them.
  TempDir dir("rules");
  const std::string db = dir.Sub("db");
  auto e = MustCreate(Opts(db));
  ASSERT_TRUE(e);
  QueueSpec q;
  q.path = "root/big";
  q.guarantee = {{"cpu", 40000}};
  ASSERT_TRUE(e->CreateQueue(q).ok());
  QueueSpec c;
  c.path = "root/big/child";
  c.guarantee = {{"cpu", 30000}};
  ASSERT_TRUE(e->CreateQueue(c).ok());
  q.capability = {{"cpu", 20000}};  // below the child's guarantee
  Status u = e->UpdateQueue(q);
  ResourceAmounts cl = TestCluster();
  cl["cpu"] = 30000;  // below 8 + 40 cpu of guarantees
  ASSERT_TRUE(e->SetCapacity(cl).ok());
  JobSpec j;
  j.name = "j";
  j.queue = "root/big/child";
  j.tasks = 4;
  j.task = {{"cpu", 1000}};
  auto ref = e->Submit(j);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(e->Allocate(*ref, 2).ok());
  const uint64_t d = e->Digest();
  ASSERT_TRUE(e->Close().ok());
  auto back = MustOpen(Opts(db));
  ASSERT_TRUE(back) << "UpdateQueue was " << u.ToString();
  EXPECT_EQ(back->Digest(), d);
  EXPECT_TRUE(CheckEngineInvariants(*back).ok());
}

TEST(Store, ConcurrentSyncWritersShareWritesAndRecoverExactly) {
  TempDir dir("conc");
  const std::string db = dir.Sub("db");
  auto e = MustCreate(Opts(db, Durability::kSync, 2000));
  ASSERT_TRUE(e);
  const int T = 4;
  std::vector<std::vector<JobRef>> refs(T);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < 4; ++k) {
      JobSpec j;
      j.name = "c" + std::to_string(t) + "-" + std::to_string(k);
      j.queue = t % 2 ? "root/sci/a" : "root/eng/dev";
      j.tasks = 40;
      j.task = {{"cpu", 200}};
      auto r = e->Submit(j);
      ASSERT_TRUE(r.ok());
      refs[t].push_back(*r);
    }
  std::vector<std::thread> th;
  std::atomic<int> ok{0};
  for (int t = 0; t < T; ++t)
    th.emplace_back([&, t] {
      storage_test::Rng rng(100 + t);
      for (int i = 0; i < 600; ++i) {
        JobRef j = refs[t][rng.Uniform(0, 3)];
        Status s = rng.Chance(60) ? e->Allocate(j, 1) : e->Release(j, 1);
        if (s.ok()) {
          ++ok;
          EXPECT_GE(e->durable_seq(), j.seq);
        }
      }
    });
  for (auto& x : th) x.join();
  EXPECT_GT(ok.load(), 1000);
  EXPECT_EQ(e->durable_seq(), e->last_seq());
  const uint64_t d = e->Digest(), last = e->last_seq();
  ASSERT_TRUE(e->Close().ok());
  auto back = MustOpen(Opts(db));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), d);
  EXPECT_EQ(back->last_seq(), last);
  EXPECT_TRUE(CheckEngineInvariants(*back).ok());
}

TEST(Store, CreateRefusesAnExistingStoreAndOpenAMissingOne) {
  TempDir dir("exist");
  const std::string db = dir.Sub("db");
  {
    auto e = MustCreate(Opts(db));
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->Close().ok());
  }
  auto before = storage_test::Fingerprint(db);
  auto again = Engine::Create(TestCluster(), TestQueues(), Opts(db));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr(db));
  EXPECT_EQ(storage_test::Fingerprint(db), before);

  auto missing = Engine::Open(Opts(dir.Sub("nothing-here")));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no store at " + dir.Sub("nothing-here")));
  EXPECT_FALSE(fs::exists(dir.Sub("nothing-here")));

  // One engine at a time per store.
  auto first = MustOpen(Opts(db));
  ASSERT_TRUE(first);
  auto second = Engine::Open(Opts(db));
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr(db));
}

TEST(Store, CheckpointReclaimsTheLogBeforeIt) {
  TempDir dir("reclaim");
  const std::string db = dir.Sub("db");
  auto stream = MakeStream(9, {.events = 400});
  {
    auto e = MustCreate(Opts(db, Durability::kSync, /*every=*/0));
    ASSERT_TRUE(e);
    ApplyAll(*e, stream, 0, 300);
    ASSERT_TRUE(e->Checkpoint().ok());
    ApplyAll(*e, stream, 300, 340);
    ASSERT_TRUE(e->Flush().ok());
    // Look at the store while the engine holds it: kill-like exit below.
    auto info = storage::InspectStore(db);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->checkpoints, std::vector<uint64_t>{300});
    // One record per synced event; the log since the previous checkpoint
    // (the store's first, at 0) stays until the next one.
    EXPECT_EQ(info->log_records, 340u);
    ASSERT_TRUE(e->Close().ok());
  }
  auto info = storage::InspectStore(db);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->checkpoints, std::vector<uint64_t>{340});
  EXPECT_EQ(info->log_records, 40u);  // 301..340: after the previous checkpoint
  auto back = MustOpen(Opts(db, Durability::kNone));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), PrefixDigest(stream, 340));
}

// Checkpoints are table files ingested whole (docs/storage.md
// "Checkpoints"): none is left outside the store, and once a newer
// checkpoint is committed the older ones' files are dropped at once, not
// left for a compaction that may never come (an ingested file sits in the
// bottom level).
TEST(Store, CheckpointsAreIngestedAndOldOnesDropped) {
  TempDir dir("ingest");
  const std::string db = dir.Sub("db");
  auto stream = MakeStream(12, {.events = 900});
  uint64_t last = 0;
  {
    auto e = MustCreate(Opts(db, Durability::kAsync, /*every=*/0));
    ASSERT_TRUE(e);
    for (size_t at = 0; at < stream.size(); at += 300) {
      ApplyAll(*e, stream, at, at + 300);
      ASSERT_TRUE(e->Checkpoint().ok());
      EXPECT_FALSE(fs::exists(fs::path(db) / storage::Store::kTableFile));
    }
    last = e->last_seq();
    ASSERT_TRUE(e->Close().ok());
  }
  auto store = storage::Store::Open(db, storage::Store::Mode::kReadOnly);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto seqs = (*store)->CheckpointSeqs();
  ASSERT_TRUE(seqs.ok());
  ASSERT_EQ(*seqs, std::vector<uint64_t>{last});
  std::vector<rocksdb::LiveFileMetaData> files;
  (*store)->db()->GetLiveFilesMetaData(&files);
  const std::string newest = storage::ChunkPrefix(last);
  size_t chunk_files = 0;  // files of chunks only (not a flushed memtable's deletions)
  for (const auto& f : files) {
    if (f.smallestkey.rfind(storage::kChunkPrefix, 0) != 0 || f.largestkey.rfind(storage::kChunkPrefix, 0) != 0)
      continue;
    ++chunk_files;
    EXPECT_GE(f.largestkey, newest) << f.name << " at level " << f.level
                                    << " holds only chunks of older checkpoints";
  }
  EXPECT_GE(chunk_files, 1u);
  auto back = MustOpen(Opts(db, Durability::kNone));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), PrefixDigest(stream, stream.size()));
}

// ApplyTasksNoWait starts a batch's write and returns; WaitDurable(seq)
// acknowledges it (hdrf replay --pipeline). With kSync, what WaitDurable
// acknowledged is on disk: the store reopened holds it.
TEST(Store, ApplyTasksNoWaitThenWaitDurable) {
  TempDir dir("nowait");
  const std::string db = dir.Sub("db");
  uint64_t digest = 0, acked = 0;
  {
    auto e = MustCreate(Opts(db, Durability::kSync, /*every=*/0));
    ASSERT_TRUE(e);
    std::vector<JobRef> refs;
    for (int j = 0; j < 8; ++j) {
      JobSpec spec;
      spec.name = "job-" + std::to_string(j);
      spec.queue = "";  // admission places it in a leaf
      spec.tasks = 4;
      spec.task = {{TestCluster().begin()->first, 1}};
      auto r = e->Submit(spec);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      refs.push_back(*r);
    }
    std::vector<uint64_t> seqs;
    for (int round = 0; round < 3; ++round) {
      std::vector<Engine::TaskOp> ops;
      for (const JobRef& r : refs) ops.push_back(Engine::TaskOp::Of(Op::Allocate(r, 1)));
      uint64_t last = 0;
      size_t refused = 0;
      ASSERT_TRUE(e->ApplyTasksNoWait(ops.data(), ops.size(), &last, &refused).ok());
      EXPECT_EQ(refused, 0u);
      EXPECT_EQ(last, e->last_seq());
      seqs.push_back(last);
    }
    for (uint64_t s : seqs) {
      ASSERT_TRUE(e->WaitDurable(s).ok());
      EXPECT_GE(e->durable_seq(), s);
    }
    acked = seqs.back();
    digest = e->Digest();
    EXPECT_TRUE(e->WaitDurable(0).ok());
    ASSERT_TRUE(e->Close().ok());
  }
  auto back = MustOpen(Opts(db, Durability::kNone));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->last_seq(), acked);
  EXPECT_EQ(back->Digest(), digest);
}

TEST(Store, CheckpointPlusLogTailAfterACrash) {
  ASSERT_FALSE(storage_test::ChildPath().empty()) << "HDRF_STORAGE_CHILD not set";
  TempDir dir("tail");
  const std::string db = dir.Sub("db");
  Child c({storage_test::ChildPath(), "--db", db, "--durability", "sync", "--seed", "31", "--events",
           "1200", "--checkpoint-every", "250"});
  int st = c.Wait();
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  ASSERT_FALSE(c.lines().empty());
  EXPECT_THAT(c.lines().back(), HasSubstr("done 1200"));
  auto info = storage::InspectStore(db);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_FALSE(info->checkpoints.empty());
  EXPECT_GE(info->checkpoints.back(), 250u);
  EXPECT_GT(info->log_records, 0u) << "a tail should remain after the last checkpoint";
  auto before = storage_test::Fingerprint(db);
  auto e = MustOpen(Opts(db, Durability::kNone));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->last_seq(), 1200u);
  auto stream = MakeStream(31, {.events = 1200});
  EXPECT_EQ(e->Digest(), PrefixDigest(stream, 1200));
  EXPECT_TRUE(CheckEngineInvariants(*e).ok());
  ASSERT_TRUE(e->Close().ok());
  // Looking (durability none, no events) writes nothing.
  EXPECT_EQ(storage_test::Fingerprint(db), before);
}

TEST(Store, CheckpointsRunWhileEventsKeepComing) {
  TempDir dir("ckpt-ingest");
  const std::string db = dir.Sub("db");
  auto e = MustCreate(Opts(db, Durability::kAsync, /*every=*/20000));
  ASSERT_TRUE(e);
  std::vector<JobRef> refs;
  for (int i = 0; i < 5000; ++i) {
    JobSpec j;
    j.name = std::to_string(i);
    j.name.insert(0, 1, 'w');
    j.queue = i % 2 ? "root/sci/a" : "root/eng/dev";
    j.tasks = 4;
    j.task = {{"cpu", 1}};
    auto r = e->Submit(j);
    ASSERT_TRUE(r.ok());
    refs.push_back(*r);
  }
  std::atomic<bool> done{false};
  std::atomic<int> checkpoints{0};
  std::thread ck([&] {
    while (!done.load()) {
      EXPECT_TRUE(e->Checkpoint().ok());
      ++checkpoints;
    }
  });
  storage_test::Rng rng(3);
  for (int i = 0; i < 100000; ++i) {
    JobRef j = refs[rng.Uniform(0, 4999)];
    Status s = rng.Chance(55) ? e->Allocate(j, 1) : e->Release(j, 1);
    ASSERT_TRUE(s.ok() || s.code() == StatusCode::kOutOfRange) << s.ToString();
  }
  done = true;
  ck.join();
  EXPECT_GE(checkpoints.load(), 1);
  const uint64_t d = e->Digest(), last = e->last_seq();
  ASSERT_TRUE(e->Close().ok());
  auto back = MustOpen(Opts(db, Durability::kNone));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->Digest(), d);
  EXPECT_EQ(back->last_seq(), last);
}

// The cadence rule (docs/storage.md "Checkpoints"): a background checkpoint
// waits for max(checkpoint_every, checkpoint_events_per_job x live jobs)
// events after the previous one.
TEST(Store, CheckpointIntervalScalesWithTheJobs) {
  storage::JournalOptions o;
  o.checkpoint_every = 1000;
  o.checkpoint_events_per_job = 4;
  EXPECT_EQ(storage::CheckpointInterval(o, 0), 1000u);
  EXPECT_EQ(storage::CheckpointInterval(o, 250), 1000u);
  EXPECT_EQ(storage::CheckpointInterval(o, 251), 1004u);
  EXPECT_EQ(storage::CheckpointInterval(o, 1000000), 4000000u);
  EXPECT_EQ(storage::CheckpointInterval(o, UINT64_MAX / 2), UINT64_MAX);  // saturates
  o.checkpoint_events_per_job = 0;
  EXPECT_EQ(storage::CheckpointInterval(o, 1000000), 1000u);
  o.checkpoint_every = 0;  // only on request, whatever the jobs
  o.checkpoint_events_per_job = 4;
  EXPECT_EQ(storage::CheckpointInterval(o, 1000000), 0u);
  EXPECT_EQ(EngineOptions().checkpoint_events_per_job, 4u);
  EXPECT_EQ(PromoteOptions().checkpoint_events_per_job, 4u);
}

// Where the background checkpoints of a store fall: 200 jobs, then task
// events to event 1200, with checkpoint_every = 100. kSync from one thread
// writes one log record per event and the checkpoint thread looks after
// each, so with k = 4 the one background checkpoint is at event 800 (4 x 200
// jobs) and Close's at 1200 keeps the log after 800: 400 records. With k = 0
// they fall every 100 events, the last at 1200: the log after 1100 stays.
TEST(Store, BackgroundCheckpointsWaitForEventsPerJob) {
  for (uint32_t k : {4u, 0u}) {
    SCOPED_TRACE("checkpoint_events_per_job " + std::to_string(k));
    TempDir dir("cadence");
    const std::string db = dir.Sub("db");
    EngineOptions o = Opts(db, Durability::kSync, /*every=*/100);
    o.checkpoint_events_per_job = k;
    auto e = MustCreate(o);
    ASSERT_TRUE(e);
    std::vector<JobRef> refs;
    for (int i = 0; i < 200; ++i) {
      JobSpec j;
      j.name = "c" + std::to_string(i);
      j.queue = "root/eng/dev";
      j.tasks = 2;
      j.task = {{"cpu", 1}};
      auto r = e->Submit(j);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      refs.push_back(*r);
    }
    for (int i = 0; e->last_seq() < 1200; ++i) {
      const JobRef& j = refs[static_cast<size_t>(i / 2) % refs.size()];
      ASSERT_TRUE((i % 2 == 0 ? e->Allocate(j, 1) : e->Release(j, 1)).ok());
    }
    const uint64_t digest = e->Digest();
    ASSERT_TRUE(e->Close().ok());
    auto info = storage::InspectStore(db);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->checkpoints, std::vector<uint64_t>{1200});
    EXPECT_EQ(info->log_records, k == 4 ? 400u : 100u);
    auto back = MustOpen(Opts(db, Durability::kNone));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->Digest(), digest);
  }
}

TEST(Store, AStoreInUseByAnotherProcessIsRefused) {
  TempDir dir("inuse");
  const std::string db = dir.Sub("db");
  Child c({storage_test::ChildPath(), "--db", db, "--durability", "sync", "--events", "10",
           "--hold-ms", "20000"});
  while (c.lines().empty() || c.lines().back().rfind("done", 0) != 0)
    ASSERT_TRUE(c.Poll(100)) << "child exited early";
  for (Durability d : {Durability::kSync, Durability::kNone}) {
    auto e = Engine::Open(Opts(db, d));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(e.status().message(), HasSubstr("in use by process " + std::to_string(c.pid())));
  }
}

}  // namespace
}  // namespace hdrf
