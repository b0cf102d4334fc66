// The reclaim phase's book of waiting jobs (api/sim/simulate.cc,
// docs/simulate.md "Speed"): per try key, the waiting jobs of that key; per
// queue, its subtree's waiting jobs not tried in the current phase (the
// counts Tree::WaitingLeaves reads); which jobs were
// tried in the phase. A leaf whose keys all fail on a state is marked tried
// as a whole, in O(its keys), not job by job. Per key, its waiting jobs
// that hold no task by submission (engine seq), and per leaf those that
// hold some, so that the first untried jobs of a leaf's order are found
// without reading the leaf (LeafCandidates, FirstUntriedIdle).
//
// One thread; the simulator calls Update after every change of a job's
// waiting tasks or held tasks, so that the book always holds the jobs'
// current keys.
#ifndef HDRF_API_SIM_TRY_BOOK_H_
#define HDRF_API_SIM_TRY_BOOK_H_

#include <cstdint>
#include <functional>
#include <set>
#include <unordered_map>
#include <vector>

#include "hdrf/views.h"

namespace hdrf::sim {

// What a plan for a waiting job depends on besides the engine's state
// (Simulator::TryKeyOf): its leaf, shape, user (in a leaf with a user
// limit), demand k and, with --preempt, held tasks and weight.
struct TryKey {
  uint32_t leaf, shape, user;
  int64_t k, held;
  double weight;
  bool operator==(const TryKey&) const = default;
};
struct TryKeyHash {
  size_t operator()(const TryKey& x) const {
    size_t h = (size_t{x.leaf} << 32) ^ x.shape ^ (size_t{x.user} << 16);
    h = (h ^ static_cast<size_t>(x.k) * 0x9e3779b97f4a7c15ull) ^ static_cast<size_t>(x.held) * 1099511628211ull;
    return h ^ std::hash<double>()(x.weight);
  }
};

class TryBook {
 public:
  // The waiting jobs of one key (any order) and how many are untried; those
  // holding no task by (seq, job), with a mark: in phase mark_phase, every
  // one with a seq below mark_seq is tried (lowered when an untried one
  // joins below it).
  struct KeyJobs {
    const TryKey* key = nullptr;
    std::vector<uint32_t> jobs;
    int64_t untried = 0;
    uint64_t phase = 0;  // the phase that last tried one of them (EndPhase)
    std::set<std::pair<uint64_t, uint32_t>> idle;
    uint64_t mark_phase = 0, mark_seq = 0;
    // The host's mark, which the book never reads: the simulator's state
    // number on which this key's plan failed.
    uint64_t failed_on = 0;
  };

  // `queues` as Engine::Queues() lists them (the stats' queue indexes);
  // `jobs` the workload's job count.
  void Init(const std::vector<QueueInfo>& queues, size_t jobs);
  // Job i (of stats leaf `leaf`, engine seq `seq`) waits now with `key`,
  // holding tasks or not, or does not wait. False when it waits in a queue
  // that is not a leaf.
  bool Update(uint32_t i, uint32_t leaf, bool waiting, const TryKey& key, uint64_t seq, bool holds);
  // Tried in the current phase (a try, or its leaf marked as a whole while
  // it waited).
  bool Tried(uint32_t i) const;
  // Job i (waiting) was tried.
  void MarkTried(uint32_t i);
  // Every waiting job of `leaf` (stats index) was tried.
  void MarkLeafTried(uint32_t leaf);
  // The phase is over: no job is tried any more.
  void EndPhase();

  // Per engine QueueId: the waiting jobs of its subtree not tried.
  const std::vector<int64_t>& untried() const { return untried_; }
  // Engine leaf id <-> stats queue index.
  uint32_t StatsLeaf(QueueId engine_leaf) const { return stats_of_[engine_leaf]; }
  QueueId EngineLeaf(uint32_t leaf) const { return eng_leaf_[leaf]; }
  // The keys of `leaf` (stats index) with a waiting job (some of them may
  // have no untried one).
  const std::vector<KeyJobs*>& LeafKeys(uint32_t leaf) const { return leaf_keys_[leaf]; }
  // The key of waiting job i (null when it does not wait).
  KeyJobs* KeyOf(uint32_t i) const { return jobs_[i].key; }
  // Into *out (replaced): the untried waiting jobs of `leaf` (stats index)
  // that hold a task, and the first n untried ones that hold none, by
  // submission. WaitingOrder's key of a job holding no task is 0, so its
  // order takes those by submission among themselves, and the first n jobs
  // of the leaf's untried order are among *out (Tree::LeafOrderOf orders
  // them). Costs the jobs returned, the leaf's keys and the tried ones
  // passed over since the last call in the phase.
  void LeafCandidates(uint32_t leaf, size_t n, std::vector<uint32_t>* out);
  // The untried waiting job of key k holding no task with the smallest
  // seq, or kNoJob.
  uint32_t FirstUntriedIdle(KeyJobs* k);
  // Marks tried every waiting job of key k holding no task with a seq
  // below `seq`.
  void MarkIdleTriedBelow(KeyJobs* k, uint64_t seq);
  // Job i's engine seq (as last given to Update).
  uint64_t Seq(uint32_t i) const { return jobs_[i].seq; }
  static constexpr uint32_t kNoJob = UINT32_MAX;

 private:
  struct JobBook {
    KeyJobs* key = nullptr;  // while it waits
    uint32_t pos = 0;        // in key->jobs
    uint32_t leaf = 0;       // stats index
    bool tried = false;      // by a try (or kept when it left a leaf marked as a whole)
    uint64_t since = 0;      // when it last began to wait (clock_)
    uint64_t seq = 0;        // the engine's submission number
    bool holds = false;      // it holds a task (in its leaf's holding, else its key's idle)
    uint32_t hpos = 0;       // in its leaf's holding
  };
  // Per stats leaf: its waiting jobs holding a task (any order).
  struct LeafJobs {
    std::vector<uint32_t> holding;
  };
  // k->idle from its first job that may be untried (the mark), the mark
  // moved past the tried ones at its front.
  std::set<std::pair<uint64_t, uint32_t>>::iterator IdleFront(KeyJobs* k);
  void Leave(uint32_t i);
  void Join(uint32_t i, const TryKey& key, bool began);
  void Count(uint32_t leaf, int64_t d);
  void Touch(KeyJobs* k);

  std::vector<QueueId> eng_parent_;  // engine QueueId -> its parent (kNone: the root)
  std::vector<QueueId> eng_leaf_;    // stats index -> engine QueueId (kNone: not a leaf)
  std::vector<uint32_t> stats_of_;   // engine QueueId -> stats index
  std::vector<int64_t> untried_, waiting_;  // per engine QueueId
  std::unordered_map<TryKey, KeyJobs, TryKeyHash> keys_;
  std::vector<std::vector<KeyJobs*>> leaf_keys_;  // per stats leaf
  std::vector<LeafJobs> leaf_jobs_;               // per stats leaf
  // Per stats leaf: the phase and clock of its last MarkLeafTried; a job
  // that waited since before it (and still waits) is tried.
  std::vector<uint64_t> leaf_phase_, leaf_mark_;
  std::vector<JobBook> jobs_;
  std::vector<uint32_t> tried_now_;  // jobs with `tried` set in this phase
  std::vector<KeyJobs*> touched_;    // keys whose untried count a try changed
  uint64_t phase_ = 1, clock_ = 0;
};

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_TRY_BOOK_H_
