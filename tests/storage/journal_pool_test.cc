// The journal's spare batches (storage/journal.cc GiveBack, docs/storage.md
// "Writing: group commit"): a group of submissions, whose events the queue holds
// whole (480 bytes each in EventBatch::full), is freed once the checkpoint
// copy has applied it, not kept for the rest of the run. Measured as the
// bytes in use (glibc's mallinfo2: this test does not link jemalloc) that
// a durable engine holds beyond an in-memory one after the same batch of
// submissions.
#include <malloc.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using storage_test::TempDir;
using storage_test::TestCluster;
using storage_test::TestQueues;

size_t InUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Submits `n` jobs (names p<first>..) in one ApplyTasks batch: with kSync
// the caller commits everything queued as one group.
void SubmitBatch(Engine& e, int first, int n) {
  std::vector<JobSpec> specs(static_cast<size_t>(n));
  std::vector<Engine::TaskOp> ops(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    JobSpec& j = specs[static_cast<size_t>(i)];
    j.name = "p" + std::to_string(first + i);
    j.queue = "root/eng/dev";
    j.tasks = 2;
    j.task = {{"cpu", 1}};
    ops[static_cast<size_t>(i)].type = Event::Type::kSubmit;
    ops[static_cast<size_t>(i)].spec = &j;
  }
  uint64_t last = 0;
  size_t refused = 0;
  ASSERT_TRUE(e.ApplyTasks(ops.data(), ops.size(), &last, &refused).ok());
  ASSERT_EQ(refused, 0u);
}

// The bytes that submitting `n` jobs in one batch adds to the memory in use
// of an engine (after a first, small batch), once every event is applied
// to the checkpoint copy.
size_t GrowthOfOneBatch(const EngineOptions& o, int n) {
  auto e = Engine::Create(TestCluster(), TestQueues(), o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return 0;
  SubmitBatch(**e, 0, 100);
  if (!o.db_path.empty()) {
    EXPECT_TRUE((*e)->Checkpoint().ok());
  }
  const size_t before = InUse();
  SubmitBatch(**e, 100, n);
  // The checkpoint copy has applied (and given back) every batch once a
  // checkpoint at the last event is written.
  if (!o.db_path.empty()) {
    EXPECT_TRUE((*e)->Checkpoint().ok());
  }
  const size_t after = InUse();
  return after > before ? after - before : 0;
}

// Whether InUse() sees this process's allocations (not where a sanitizer's
// allocator replaces glibc's).
char* volatile g_block = nullptr;  // volatile: the allocation is not elided
bool MallinfoSeesAllocations() {
  const size_t before = InUse();
  g_block = new char[4u << 20];
  const bool seen = InUse() >= before + (4u << 20);
  delete[] g_block;
  return seen;
}

TEST(JournalPool, AGroupOfSubmissionsIsNotKeptOnceApplied) {
  if (!MallinfoSeesAllocations()) GTEST_SKIP() << "mallinfo2 does not see this build's allocations";
  constexpr int kJobs = 1 << 15;  // one group: 15 MB of Events in EventBatch::full
  TempDir dir("pool");
  EngineOptions durable;
  durable.db_path = dir.Sub("db");
  durable.durability = Durability::kSync;
  durable.checkpoint_every = 0;  // only the checkpoints asked for
  const size_t mem = GrowthOfOneBatch(EngineOptions(), kJobs);
  const size_t dur = GrowthOfOneBatch(durable, kJobs);
  // Beyond the in-memory engine's growth (13 MB): the checkpoint image (64
  // bytes a job, 2 MB), the memtable's log records, the writer's buffers
  // and the next group's batch, 17.5 MB in all; keeping the applied group's
  // batch for reuse, as the pool did before, added 15.7 MB more (33 MB).
  EXPECT_LT(dur, mem + (25u << 20)) << "in memory " << mem << " bytes, durable " << dur;
}

}  // namespace
}  // namespace hdrf
