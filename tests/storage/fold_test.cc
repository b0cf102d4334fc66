// Recovery with folded task events (storage::Replayer with fold) against a
// sequential replay of the same log: the same refusals at the same events
// with the same messages, and the same state (digest, every job's running
// tasks, tasks and state, every queue's usage and job counts, free
// capacity), on random logs with structural events and refused events, with
// and without the docs/spec.md §12 gate, through the incremental and the bulk path;
// and through a store (Replica::Load with and without folding).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/tree.h"
#include "rocksdb/write_batch.h"
#include "storage/codec.h"
#include "storage/replica.h"
#include "storage/state_io.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using engine::Tree;
using storage::EventBatch;
using storage::Replayer;
using storage_test::Rng;
using storage_test::TempDir;
using storage_test::TestCluster;
using storage_test::TestQueues;

// `scale` multiplies the test cluster (room for many running jobs).
std::unique_ptr<Tree> NewTree(std::optional<double> gate, int64_t scale = 1) {
  engine::TreeOptions o;
  o.overcommit_factor = gate;
  ResourceAmounts c = TestCluster();
  for (auto& [r, a] : c) a *= scale;
  std::vector<QueueSpec> q = TestQueues();
  q[0].capability["cpu"] *= scale;
  return std::move(Tree::Create(c, q, o).value());
}

JobSpec Spec(int i, Rng& rng) {
  static const char* kLeaves[] = {"root/eng/dev", "root/eng/prod", "root/sci/a", "root/sci/b", ""};
  JobSpec s;
  s.name = "job-" + std::to_string(i);
  s.queue = kLeaves[rng.Uniform(0, 4)];
  s.user = "u" + std::to_string(rng.Uniform(0, 5));
  s.tasks = rng.Uniform(1, 12);
  s.task = {{"cpu", 100 * rng.Uniform(1, 20)}, {"memory", int64_t{1} << rng.Uniform(20, 30)}};
  if (rng.Chance(20)) s.task["nvidia.com/gpu"] = 1000;
  s.min_available = rng.Uniform(0, 2);
  s.weight = static_cast<double>(rng.Uniform(1, 3));
  return s;
}

// Every raw value a recovered tree must agree on.
void ExpectSameState(const Tree& a, const Tree& b, const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(a.Digest(), b.Digest());
  EXPECT_EQ(a.free(), b.free());
  EXPECT_EQ(a.total(), b.total());
  EXPECT_EQ(a.saturated(), b.saturated());
  EXPECT_EQ(a.next_seq(), b.next_seq());
  const std::vector<JobId> ja = a.JobsInSubmitOrder(), jb = b.JobsInSubmitOrder();
  ASSERT_EQ(ja.size(), jb.size());
  for (size_t i = 0; i < ja.size(); ++i) {
    const JobInfo x = a.GetJob(ja[i]), y = b.GetJob(jb[i]);
    ASSERT_EQ(x.name, y.name);
    EXPECT_EQ(x.seq, y.seq);
    EXPECT_EQ(x.allocated, y.allocated) << x.name;
    EXPECT_EQ(x.tasks, y.tasks) << x.name;
    EXPECT_EQ(x.state, y.state) << x.name;
    EXPECT_EQ(x.blocked, y.blocked) << x.name;
    EXPECT_NEAR(x.key, y.key, 1e-9 * std::max(1.0, std::fabs(x.key))) << x.name;
  }
  const std::vector<QueueId> qa = a.QueuesInPathOrder(), qb = b.QueuesInPathOrder();
  ASSERT_EQ(qa.size(), qb.size());
  for (size_t i = 0; i < qa.size(); ++i) {
    const QueueInfo x = a.GetQueue(qa[i]), y = b.GetQueue(qb[i]);
    ASSERT_EQ(x.path, y.path);
    EXPECT_EQ(x.usage, y.usage) << x.path;
    for (int s = 0; s < 4; ++s) EXPECT_EQ(x.jobs_by_state[s], y.jobs_by_state[s]) << x.path;
    EXPECT_EQ(x.blocked, y.blocked) << x.path;
  }
  EXPECT_TRUE(b.CheckInvariants().ok()) << b.CheckInvariants().ToString();
}

struct LogOptions {
  int jobs = 40;             // submitted before the log
  size_t events = 20000;
  int invalid_percent = 3;   // task events the tree refuses
  int barrier_permille = 5;  // submissions, removals, capacity and queue events
};

// A random log over `model` (a tree the generator keeps in step, applying
// every event it writes): mostly valid task events on random jobs, some that
// the tree refuses, and structural events. Refused events are kept in the
// log (a damaged store could hold anything); the model skips them.
EventBatch RandomLog(Tree& model, Rng& rng, const LogOptions& o, int* next_job) {
  EventBatch b;
  b.first_seq = 1;
  std::vector<uint64_t> seqs;
  for (JobId j : model.JobsInSubmitOrder()) seqs.push_back(model.job_seq(j));
  for (size_t k = 0; k < o.events; ++k) {
    Event e;
    if (rng.Uniform(1, 1000) <= o.barrier_permille || seqs.empty()) {
      switch (rng.Uniform(0, 4)) {
        case 0:
        case 1:
          e.type = Event::Type::kSubmit;
          e.job = Spec((*next_job)++, rng);
          break;
        case 2: {
          const size_t i = rng.Uniform(0, static_cast<int64_t>(seqs.size()) - 1);
          e = Event::Remove(seqs[i]);
          break;
        }
        case 3:
          e.type = Event::Type::kSetCapacity;
          e.cluster = TestCluster();
          e.cluster["cpu"] = 1000 * rng.Uniform(40, 90);
          break;
        default:
          e.type = Event::Type::kUpdateQueue;
          e.queue = TestQueues()[rng.Uniform(0, 1) ? 4 : 1];
          e.queue.weight = static_cast<double>(rng.Uniform(1, 4));
          break;
      }
    } else {
      // A job that can do something valid (a few tries), then an event on it.
      uint64_t seq = 0;
      JobInfo info;
      int64_t fits = 0;
      for (int tries = 0; tries < 8; ++tries) {
        seq = seqs[rng.Uniform(0, static_cast<int64_t>(seqs.size()) - 1)];
        info = model.GetJob(model.FindJobBySeq(seq).value());
        fits = info.state == JobState::kPending ? 0 : info.tasks - info.allocated;
        for (size_t r = 0; r < info.task.size(); ++r)
          if (info.task[r] > 0) fits = std::min(fits, model.free()[r] / info.task[r]);
        if (fits > 0 || info.allocated > 0) break;
      }
      const int64_t idle = info.tasks - info.allocated;
      if (rng.Chance(o.invalid_percent)) {
        switch (rng.Uniform(0, 4)) {
          case 0: e = Event::Allocate(seq, idle + 1); break;           // more than it has
          case 1: e = Event::Release(seq, info.allocated + 1); break;  // more than runs
          case 2: e = Event::Finish(seq, 0); break;                    // n < 1
          case 3: e = Event::Allocate(seq + 100000, 1); break;         // unknown job
          default: e = Event::Allocate(seq, fits + 1); break;          // does not fit
        }
      } else if (fits > 0 && (info.allocated == 0 || rng.Chance(55))) {
        e = Event::Allocate(seq, rng.Uniform(1, fits));
      } else if (info.allocated > 0) {
        e = rng.Chance(92) ? Event::Release(seq, rng.Uniform(1, info.allocated))
                           : Event::Finish(seq, rng.Uniform(1, info.allocated));
      } else {
        // Nothing to do for the jobs tried (finished, or the cluster is
        // full): a new job.
        e.type = Event::Type::kSubmit;
        e.job = Spec((*next_job)++, rng);
      }
    }
    b.Add(e);
    if (ApplyEvent(model, e).ok()) {
      if (e.type == Event::Type::kSubmit) seqs.push_back(model.next_seq() - 1);
      if (e.type == Event::Type::kRemove) std::erase(seqs, e.job_seq);
    }
  }
  return b;
}

// Replays `log` into two copies of `start` (sequential and folded) and
// compares every event's status and, every `check_every` events and at the
// end, the whole state. Returns how many events were refused.
size_t Compare(const std::optional<double>& gate, int64_t scale, const std::vector<JobSpec>& start,
               const EventBatch& log, size_t check_every, Replayer::FoldStats* stats) {
  auto seq_tree = NewTree(gate, scale), fold_tree = NewTree(gate, scale);
  for (const JobSpec& s : start) {
    EXPECT_EQ(seq_tree->Submit(s).ok(), fold_tree->Submit(s).ok());
  }
  Replayer seq(*seq_tree, /*fold=*/false), fold(*fold_tree, /*fold=*/true);
  size_t refused = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    const Status a = seq.Apply(log, i), b = fold.Apply(log, i);
    EXPECT_EQ(a.ok(), b.ok()) << "event " << i + 1 << ": " << a.ToString() << " vs " << b.ToString();
    EXPECT_EQ(a.ToString(), b.ToString()) << "event " << i + 1;
    if (!a.ok()) ++refused;
    if (check_every && (i + 1) % check_every == 0) {
      fold.Flush();
      ExpectSameState(*seq_tree, *fold_tree, "after event " + std::to_string(i + 1));
      if (::testing::Test::HasFatalFailure()) return refused;
    }
  }
  fold.Flush();
  ExpectSameState(*seq_tree, *fold_tree, "at the end");
  if (stats) *stats = fold.fold_stats();
  return refused;
}

class FoldTest : public ::testing::TestWithParam<int> {};

TEST_P(FoldTest, RandomLogsGiveTheStateOfASequentialReplay) {
  const int variant = GetParam();
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " variant " + std::to_string(variant));
    Rng rng(seed * 7919 + variant);
    // Variants: 0 plain; 1 with the enqueue gate; 2 many barriers; 3 no
    // refusals and long runs over many jobs (the bulk path).
    const std::optional<double> gate = variant == 1 ? std::optional<double>(1.0) : std::nullopt;
    LogOptions o;
    if (variant == 2) o.barrier_permille = 150;
    if (variant == 3) {
      o.jobs = 1300;
      o.events = 12000;
      o.invalid_percent = 0;
      o.barrier_permille = 0;
    }
    const int64_t scale = variant == 3 ? 100 : 1;
    auto model = NewTree(gate, scale);
    std::vector<JobSpec> start;
    int next_job = 0;
    for (int i = 0; i < o.jobs; ++i) {
      start.push_back(Spec(next_job++, rng));
      (void)model->Submit(start.back());
    }
    const EventBatch log = RandomLog(*model, rng, o, &next_job);
    Replayer::FoldStats stats;
    const size_t refused = Compare(gate, scale, start, log, variant == 3 ? 0 : 997, &stats);
    if (HasFatalFailure()) return;
    if (variant == 3) {
      EXPECT_EQ(refused, 0u);
      EXPECT_GE(stats.bulk_runs, 1u);
    } else {
      EXPECT_GT(refused, 0u);
    }
    if (variant == 0 || variant == 3) {
      EXPECT_GT(stats.folded_events, log.size() / 2);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, FoldTest, ::testing::Values(0, 1, 2, 3));

// Through a store: a checkpoint plus a log tail, loaded with and without
// folding; a tail holding a refused event fails both ways with one message.
TEST(FoldStore, ReplicaLoadFoldsToTheSequentialState) {
  for (int refusal = 0; refusal < 2; ++refusal) {
    TempDir dir("fold");
    Rng rng(42 + refusal);
    auto tree = NewTree(std::nullopt);
    int next_job = 0;
    for (int i = 0; i < 300; ++i) (void)tree->Submit(Spec(next_job++, rng));
    storage::MetaRecord meta = storage::MetaFor(*tree, std::nullopt);
    auto store = storage::Store::Create(dir.Sub("db"), meta);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const uint64_t S = tree->next_seq() - 1;
    ASSERT_TRUE(storage::WriteCheckpoint(**store, *tree, S, meta.resource_names).ok());
    LogOptions o;
    o.events = 20000;
    o.invalid_percent = 0;
    o.barrier_permille = 1;
    EventBatch log = RandomLog(*tree, rng, o, &next_job);
    if (refusal) log.ops[15000] = storage::LogOp{log.ops[15000].job_seq, 1 << 20, storage::kNoFull,
                                                 Event::Type::kAllocate};
    log.first_seq = S + 1;
    storage::LogEncoder enc(meta.resource_names);
    rocksdb::WriteBatch wb;
    std::string value;
    for (size_t i = 0; i < log.size(); i += 4096) {
      ASSERT_TRUE(enc.Encode(log, i, std::min(log.size(), i + 4096), &value).ok());
      wb.Put(storage::LogKey(log.first_seq + i), value);
    }
    ASSERT_TRUE((*store)->Write(&wb, true).ok());
    ASSERT_TRUE((*store)->Close().ok());

    auto ro = storage::Store::Open(dir.Sub("db"), storage::Store::Mode::kReadOnly);
    ASSERT_TRUE(ro.ok());
    storage::LoadOptions seq_opts, fold_opts;
    seq_opts.fold_task_events = false;
    auto a = storage::Replica::Load(**ro, seq_opts);
    auto b = storage::Replica::Load(**ro, fold_opts);
    ASSERT_EQ(a.ok(), b.ok());
    if (refusal) {
      ASSERT_FALSE(a.ok());
      EXPECT_EQ(a.status().ToString(), b.status().ToString());
      EXPECT_THAT(a.status().ToString(), ::testing::HasSubstr("cannot be replayed"));
      continue;
    }
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->last_seq(), S + log.size());
    EXPECT_EQ(b->last_seq(), a->last_seq());
    EXPECT_EQ(b->events_replayed(), a->events_replayed());
    ExpectSameState(a->tree(), b->tree(), "loaded");
    EXPECT_EQ(a->tree().Digest(), tree->Digest());
  }
}

}  // namespace
}  // namespace hdrf
