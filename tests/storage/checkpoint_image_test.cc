// CheckpointImage (storage/checkpoint_image.h): a checkpoint written from
// the image holds exactly the records one written from a tree in the same
// state holds, for a stream of every event type (submissions to inner
// queues placed by the image's Admit included), and an engine whose
// checkpoints come from the image recovers the plan workload exactly, and
// so does an image compacted after most of its jobs were removed, and one
// that takes task events while it writes a checkpoint (on the records the
// write is about to reach included).
#include "storage/checkpoint_image.h"

#include <gtest/gtest.h>

#include "engine/event.h"
#include "engine/tree.h"
#include "hdrf/engine.h"
#include "storage/state_io.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"

namespace hdrf::storage_test {
namespace {

using storage::CheckpointImage;
using storage::Store;

// The records of the checkpoint at `seq` of `a` and of `b`, byte for byte.
void ExpectSameCheckpoint(const Store& a, const Store& b, uint64_t seq) {
  auto ha = a.Get(storage::HeaderKey(seq)), hb = b.Get(storage::HeaderKey(seq));
  ASSERT_TRUE(ha.ok()) << ha.status().ToString();
  ASSERT_TRUE(hb.ok()) << hb.status().ToString();
  EXPECT_EQ(*ha, *hb) << "checkpoint header at event " << seq;
  auto meta = a.ReadMeta();
  ASSERT_TRUE(meta.ok());
  auto header = storage::DecodeCheckpointHeader(*hb, meta->resource_names);
  ASSERT_TRUE(header.ok());
  for (uint32_t i = 0; i < header->chunk_count; ++i) {
    auto ca = a.Get(storage::ChunkKey(seq, i)), cb = b.Get(storage::ChunkKey(seq, i));
    ASSERT_TRUE(ca.ok() && cb.ok()) << "chunk " << i;
    EXPECT_EQ(*ca, *cb) << "chunk " << i << " of the checkpoint at event " << seq;
  }
}

// A tree of the test queues, two stores of its state (one for the image's
// checkpoints, one for the tree's) and an image loaded from the first.
// A submission of `tasks` tasks of one unit of `resource` each.
Event Submission(const std::string& name, const std::string& queue, int64_t tasks, const std::string& resource) {
  Event e;
  e.type = Event::Type::kSubmit;
  e.job.name = name;
  e.job.queue = queue;
  e.job.tasks = tasks;
  e.job.task = {{resource, 1}};
  return e;
}

struct ImageAndTree {
  std::unique_ptr<engine::Tree> tree;
  std::vector<std::string> names;
  std::unique_ptr<Store> from_image, from_tree;
  std::unique_ptr<CheckpointImage> image;
  storage::EventBatch batch;  // every event applied, from event 1

  // Applies `e` to the tree and, when the tree accepts it, to the image
  // (which sees accepted events only). Whether the tree accepted it.
  bool Apply(const Event& e) {
    if (!ApplyEvent(*tree, e).ok()) return false;
    if (batch.empty()) batch.first_seq = 1;
    batch.Add(e);
    Status s = image->Apply(batch, batch.size() - 1);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return true;
  }
  // Writes the checkpoint at `seq` from the image and from the tree, and
  // compares them.
  void ExpectSameCheckpointAt(uint64_t seq) {
    EXPECT_TRUE(image->Write(*from_image, seq, {}).ok());
    EXPECT_TRUE(storage::WriteCheckpoint(*from_tree, *tree, seq, names).ok());
    ExpectSameCheckpoint(*from_image, *from_tree, seq);
    EXPECT_EQ(image->job_count(), tree->job_count());
  }
};
void MakeImageAndTree(const TempDir& dir, ImageAndTree* out) {
  auto tree = engine::Tree::Create(TestCluster(), TestQueues(), {});
  ASSERT_TRUE(tree.ok());
  out->tree = std::move(tree).value();
  const storage::MetaRecord meta = storage::MetaFor(*out->tree, std::nullopt);
  out->names = meta.resource_names;
  auto from_image = Store::Create(dir.Sub("image"), meta);
  auto from_tree = Store::Create(dir.Sub("tree"), meta);
  ASSERT_TRUE(from_image.ok() && from_tree.ok());
  out->from_image = std::move(from_image).value();
  out->from_tree = std::move(from_tree).value();
  ASSERT_TRUE(storage::WriteCheckpoint(*out->from_image, *out->tree, 0, out->names).ok());
  auto image = CheckpointImage::Load(*out->from_image, 0);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  out->image = std::move(image).value();
}

TEST(CheckpointImage, WritesWhatTheTreeWrites) {
  TempDir dir("image");
  ImageAndTree it;
  ASSERT_NO_FATAL_FAILURE(MakeImageAndTree(dir, &it));
  engine::Tree& t = *it.tree;
  const auto& names = it.names;
  uint64_t seq = 0, checkpoints = 0;
  auto apply = [&](const Event& e) -> bool {
    if (!it.Apply(e)) return false;
    ++seq;
    if (seq % 997 == 0) {
      ++checkpoints;
      it.ExpectSameCheckpointAt(seq);
    }
    return true;
  };
  for (const Event& e : MakeStream(11, {.events = 6000, .other_percent = 15})) ASSERT_TRUE(apply(e));
  // Submissions naming an inner queue (or none: the root), placed by usage
  // as Tree::Admit places them, then allocations on them.
  const std::vector<QueueSpec> qs = t.QueueSpecs();
  int extra = 0;
  for (int round = 0; round < 40; ++round)
    for (const QueueSpec& q : qs) {
      const Event e = Submission("inner-" + std::to_string(extra++), round % 5 == 0 ? "" : q.path, 3, names[0]);
      const uint64_t job_seq = t.next_seq();
      if (apply(e)) (void)apply(Event::Allocate(job_seq, 1 + round % 2));
    }
  EXPECT_GT(seq, 6000u);
  ASSERT_GT(checkpoints, 5u);
  it.ExpectSameCheckpointAt(seq);
}

// Removing most jobs compacts the image (more than 1,024 and more than half
// of its jobs removed): the survivors' names move in its name buffer, and
// its checkpoints must still be the tree's, names of every length included.
TEST(CheckpointImage, CompactionKeepsNames) {
  TempDir dir("image_compact");
  ImageAndTree it;
  ASSERT_NO_FATAL_FAILURE(MakeImageAndTree(dir, &it));
  engine::Tree& t = *it.tree;
  auto apply = [&](const Event& e) { ASSERT_TRUE(it.Apply(e)); };
  const std::string leaf = t.QueueSpecs().back().path;
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 3000; ++i) {
    const Event e = Submission("job-" + std::string(static_cast<size_t>(i % 40), 'x') + std::to_string(i), leaf, 2, it.names[0]);
    seqs.push_back(t.next_seq());
    apply(e);
  }
  for (size_t i = 0; i < seqs.size(); ++i)
    if (i % 5 != 3) apply(Event::Remove(seqs[i]));
  it.ExpectSameCheckpointAt(it.batch.last_seq());
  EXPECT_EQ(t.job_count(), 600u);
}

// More jobs than one chunk of records holds (CheckpointImage keeps them in
// chunks of 65,536), and a compaction that moves them across chunks: the
// checkpoints are still the tree's.
TEST(CheckpointImage, RecordsAcrossChunks) {
  TempDir dir("image_chunks");
  ImageAndTree it;
  ASSERT_NO_FATAL_FAILURE(MakeImageAndTree(dir, &it));
  engine::Tree& t = *it.tree;
  const std::string leaf = t.QueueSpecs().back().path;
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 80000; ++i) {
    const Event e = Submission("c" + std::to_string(i), leaf, 2, it.names[0]);
    seqs.push_back(t.next_seq());
    ASSERT_TRUE(it.Apply(e));
  }
  for (size_t i = 0; i < seqs.size(); i += 97) (void)it.Apply(Event::Allocate(seqs[i], 1));
  it.ExpectSameCheckpointAt(it.batch.last_seq());
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (i % 3 != 0) {
      ASSERT_TRUE(it.Apply(Event::Remove(seqs[i])));
    }
  }
  for (size_t i = 0; i < seqs.size(); i += 51) (void)it.Apply(Event::Allocate(seqs[i], 1));
  it.ExpectSameCheckpointAt(it.batch.last_seq());
}

// Task events applied while a checkpoint is being written (the journal's
// checkpoint thread does this between chunks): the checkpoint still holds
// the state at its event, byte for byte the tree's at that event, and the
// image goes on to the tree's later state. Any other event is refused
// while the write runs.
TEST(CheckpointImage, TaskEventsAppliedWhileWriting) {
  TempDir dir("image_while_writing");
  ImageAndTree it;
  ASSERT_NO_FATAL_FAILURE(MakeImageAndTree(dir, &it));
  engine::Tree& t = *it.tree;
  for (const Event& e : MakeStream(12, {.events = 4000, .other_percent = 15})) ASSERT_TRUE(it.Apply(e));
  const uint64_t at = it.batch.last_seq();
  ASSERT_TRUE(storage::WriteCheckpoint(*it.from_tree, t, at, it.names).ok());
  // Later task events the tree accepts, on every job it knows (removals of
  // some), appended to the batch but not yet applied to the image.
  const size_t first_later = it.batch.size();
  for (int round = 0; round < 8; ++round)
    for (uint64_t seq = 1; seq < t.next_seq(); ++seq) {
      const Event e = round % 2 == 0         ? Event::Allocate(seq, 1)
                      : round == 7 && seq % 7 == 0 ? Event::Remove(seq)
                      : round == 5               ? Event::Finish(seq, 1)
                                                 : Event::Release(seq, 1);
      if (ApplyEvent(t, e).ok()) it.batch.Add(e);
    }
  const size_t later = it.batch.size() - first_later;
  ASSERT_GT(later, 300u);
  size_t next = first_later, calls = 0;
  bool refused_other = false;
  auto between = [&] {
    ++calls;
    if (calls == 1) {  // a submission must wait for the write
      storage::EventBatch other;
      other.first_seq = it.batch.last_seq() + 1;
      const Event e = Submission("while-writing", t.QueueSpecs().back().path, 1, it.names[0]);
      other.Add(e);
      refused_other = !it.image->Apply(other, 0).ok();
    }
    for (size_t k = 0; k < 40 && next < it.batch.size(); ++k, ++next) {
      Status s = it.image->Apply(it.batch, next);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  };
  ASSERT_TRUE(it.image->Write(*it.from_image, at, {}, between, /*every_jobs=*/3).ok());
  EXPECT_TRUE(refused_other);
  EXPECT_GT(calls, 10u);
  EXPECT_GT(next - first_later, later / 2) << "most later events applied during the write";
  ExpectSameCheckpoint(*it.from_image, *it.from_tree, at);
  for (; next < it.batch.size(); ++next) ASSERT_TRUE(it.image->Apply(it.batch, next).ok());
  it.ExpectSameCheckpointAt(it.batch.last_seq());
}

// Task events applied as the write starts a window (each `between` call)
// on the records of that very window, of the next one and of one already
// written: the copies of a window made by the call at its start are the
// ones the write must read (a write that indexed the window's copies
// before the call would read stale ones), so the checkpoint is still the
// tree's at its event.
TEST(CheckpointImage, CopiesMadeAsTheWriteReachesTheirWindow) {
  TempDir dir("image_window");
  ImageAndTree it;
  ASSERT_NO_FATAL_FAILURE(MakeImageAndTree(dir, &it));
  engine::Tree& t = *it.tree;
  std::vector<uint64_t> seqs;  // the records' order (no removals)
  for (int i = 0; i < 200; ++i) {
    const Event e = Submission("w" + std::to_string(i), t.QueueSpecs().back().path, 4, it.names[0]);
    seqs.push_back(t.next_seq());
    ASSERT_TRUE(it.Apply(e));
    if (i % 3 == 0) {
      ASSERT_TRUE(it.Apply(Event::Allocate(seqs.back(), 1)));
    }
  }
  const uint64_t at = it.batch.last_seq();
  ASSERT_TRUE(storage::WriteCheckpoint(*it.from_tree, t, at, it.names).ok());
  constexpr size_t kEvery = 4;
  size_t calls = 0, applied = 0;
  auto change = [&](size_t record) {  // an allocation, or a release where none fits
    if (record >= seqs.size()) return;
    Event e = Event::Allocate(seqs[record], 1);
    if (!ApplyEvent(t, e).ok()) {
      e = Event::Release(seqs[record], 1);
      if (!ApplyEvent(t, e).ok()) return;
    }
    it.batch.Add(e);
    Status s = it.image->Apply(it.batch, it.batch.size() - 1);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ++applied;
  };
  auto between = [&] {  // the write is at record calls · kEvery
    const size_t start = ++calls * kEvery;
    for (size_t r = start; r < start + kEvery; ++r) change(r);
    change(start + kEvery + calls % kEvery);  // in the next window
    if (start > 0) change(start - 1);         // written already
  };
  ASSERT_TRUE(it.image->Write(*it.from_image, at, {}, between, kEvery).ok());
  EXPECT_GT(calls, 40u);
  EXPECT_GT(applied, 200u);
  ExpectSameCheckpoint(*it.from_image, *it.from_tree, at);
  it.ExpectSameCheckpointAt(it.batch.last_seq());
}

// Plans (kApplyPlan) through an engine whose checkpoints come from the
// image: a checkpoint every few events, then the recovered state.
TEST(CheckpointImage, PlanWorkloadRecoversExactly) {
  TempDir dir("image_plans");
  EngineOptions o;
  o.db_path = dir.Sub("db");
  o.durability = Durability::kAsync;
  o.checkpoint_every = 37;
  o.checkpoint_events_per_job = 0;  // every 37 events, however many jobs
  auto live = Engine::Create(PlanCluster(), PlanQueues(), o);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  size_t plans = 0;
  Status s = RunPlanWorkload(**live, 3, 6, [&](const char* kind, size_t) {
    plans += std::string(kind) == "plan";
    return true;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(plans, 0u);
  ASSERT_TRUE((*live)->Checkpoint().ok());
  const uint64_t digest = (*live)->Digest();
  ASSERT_TRUE((*live)->Close().ok());
  EngineOptions ro;
  ro.db_path = o.db_path;
  auto back = Engine::Open(ro);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->recovery_stats().events_replayed, 0u);  // all from the checkpoint
  EXPECT_EQ((*back)->Digest(), digest);
}

}  // namespace
}  // namespace hdrf::storage_test
