// TreeShards: the lock shards of the HDRF tree, so that task events on
// different top-level subtrees run in parallel (docs/concurrency.md): the
// shard of each queue and job, the per-shard Scratch with its lease of free
// capacity, the shard-local task events LocalAllocate/LocalRelease and
// their grouped form (ReserveLocal), and the brackets of an exclusive
// section that fold the shards' deltas in (BeginExclusive) and hand out
// leases again (EndExclusive). The third part of engine::Tree, on top of
// TreeShares (engine/tree_shares.h), whose ChangeAllocation a local event
// runs with its shard's Scratch.
//
// Thread safety. Every method of Tree is for one thread at a time
// ("exclusive": api holds `rw` exclusively), except the shard-local task
// events and what engine/tree_structure.h and engine/tree_shares.h name:
//   * The tree is cut into kShards lock shards by top-level queue (a queue's
//     shard is its top-level ancestor's QueueId % kShards). A shard-local
//     event writes only its job, the queues of its top-level subtree, their
//     entries in the current view, and its shard's Scratch.
//   * The caller holds, for the whole local call (LocalAllocate,
//     LocalRelease, ReserveLocal, ReturnReservation), a shared lock that
//     keeps exclusive calls out (`rw` shared), plus the job's shard lock
//     (ShardOf; `shards[s].mu`). Local calls on different shards then run in
//     parallel; engine::ConcurrentTree (engine/concurrent_tree.h) does this
//     with base/shard_lock.h.
//   * Anything with an effect beyond the subtree (a resource filling or
//     freeing, held-back guarantees, the enqueue gate, a capacity of the
//     root, a lease too small) is not done locally: *escalate is set,
//     nothing changes, and the caller retries with the exclusive method.
//   * Root-level aggregates (the root's usage, job counts and key heap, the
//     free capacity, the touched-job log) are not written locally: each
//     shard keeps its deltas and a lease of free capacity in its Scratch.
//     An exclusive section is bracketed by BeginExclusive(), which folds all
//     of that in and re-derives the root from its children, and
//     EndExclusive(), which hands out leases again. Between the two the
//     tree is exactly as if every event had been applied serially.
//   * ShardOf and used_shards read what changes only in exclusive sections:
//     `rw` shared suffices.
// A Tree used only through exclusive methods needs neither bracket.
//
// Invariants: between BeginExclusive and EndExclusive every lease is 0 and
// every shard's deltas are folded in; used_shards_ lists exactly the shards
// of the top-level queues, each with a Scratch (AssignShards, on every
// structure change: RebuildAll).
#ifndef HDRF_ENGINE_TREE_SHARDS_H_
#define HDRF_ENGINE_TREE_SHARDS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/tree_shares.h"

namespace hdrf::engine {

class TreeShards : public TreeShares {
 public:
  int ShardOf(JobId j) const;
  // Allocate/Release/Finish when the effect stays within the job's shard;
  // otherwise *escalate = true and nothing changes. Errors are those of the
  // exclusive methods (a refused local event changes nothing either).
  Status LocalAllocate(JobId j, int64_t n, bool* escalate);
  Status LocalRelease(JobId j, int64_t n, bool finish, bool* escalate);
  // Shard-grouped batches (Engine::ApplyTasks; docs/concurrency.md
  // "Batches"). The caller holds `rw` shared and shard s's lock, and `ops`
  // are task events of jobs of shard s in batch order. ReserveLocal returns
  // how many of them, from the first, are sure to stay local whatever the
  // other shards do (no release of a saturated resource; the allocations'
  // needs, summed, leave the lease positive) and takes what their
  // allocations need out of the lease into reserved[0..R) so that no other
  // thread's event can use it; ReturnReservation gives it back just before
  // those ops are applied (under the same lock, perhaps taken again).
  // Those ops then run locally in that order, exactly as LocalAllocate and
  // LocalRelease would run them one by one.
  struct LocalOp {
    int64_t n;
    JobId job;
    bool allocate;
  };
  size_t ReserveLocal(int s, const LocalOp* ops, size_t count, int64_t* reserved);
  void ReturnReservation(int s, const int64_t* reserved);
  void BeginExclusive();
  void EndExclusive();
  // The shards that have a top-level queue (the only ones ShardOf returns
  // for a job that can take a local event); changes only in exclusive
  // sections.
  const std::vector<int>& used_shards() const { return used_shards_; }
  // The counters of every Scratch, summed.
  Counters counters() const;

  // Forces a full rebuild of derived state (tests, recovery;
  // structure changes): the shards assigned again, the shares rebuilt.
  void RebuildAll();

 protected:
  TreeShards();
  ~TreeShards();

  // Every queue's shard: its top-level ancestor's id % kShards; each shard
  // in use gets a Scratch (RebuildAll: exclusive, leases gathered).
  void AssignShards();
  // Escalation tests of the local events.
  bool LocalPossible() const;
  bool LeaveLeasePositive(const Scratch& sc, const int64_t* t, int64_t n, const int64_t* taken) const;

  // One Scratch per lock shard (created for the shards that have a
  // top-level queue; see "Thread safety").
  std::vector<std::unique_ptr<Scratch>> shards_;
  std::vector<int> used_shards_;
  bool leases_out_ = false;  // EndExclusive handed out a lease (BeginExclusive folds)
  // Lease back-off (EndExclusive): when the leases of the last hand-out all
  // came back unused, the next `lease_skip_` hand-outs are skipped (1, 2,
  // 4, ... up to kMaxLeaseSkip); a local event resets it. Only which events
  // run locally depends on it, never a result.
  static constexpr uint32_t kMaxLeaseSkip = 64;
  uint32_t lease_skip_ = 0;  // current back-off length
  uint32_t lease_wait_ = 0;  // hand-outs still to skip
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_SHARDS_H_
