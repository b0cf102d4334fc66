// Replica: a state rebuilt from a store's records and kept up to date from
// its log: an engine::Tree, the Replayer that applies logged events to it
// (folding runs of task events), the store's meta and the log position
// (docs/storage.md "Recovery", "Followers").
//
//   auto r = Replica::Load(store, options);  // newest checkpoint + its log
//   r->CatchUp(store, stop_at);               // the log after last_seq()
//   r->Apply(parts);                          // events read elsewhere
//   std::unique_ptr<engine::Tree> t = r->TakeTree();  // r goes on applying to t
//
// Recovery (Engine::Open, `hdrf recover`) loads one and hands its tree to
// the engine. A follower loads one, hands the tree to its engine and keeps
// the replica: each catch-up applies the events it polled through it, a
// reload is a new replica whose tree is swapped in, and promotion applies
// the tail through it, then drops it (the engine's events change the tree
// from then on). The journal's checkpoint copy of a store with the enqueue
// gate is a replica that keeps its tree. A store without the gate keeps its
// checkpoint copy as a CheckpointImage instead (storage/checkpoint_image.h):
// a checkpoint's fields, not a tree, so it is not a Replica.
//
// Thread safety: none. One thread at a time calls every method, and the
// tree changes only through the replica (also after TakeTree) while no one
// reads it (the follower: under its catch_mu_, applying inside the
// engine's exclusive section, api/facade/follower.h).
#ifndef HDRF_STORAGE_REPLICA_H_
#define HDRF_STORAGE_REPLICA_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/tree.h"
#include "hdrf/status.h"
#include "storage/codec.h"
#include "storage/state_io.h"
#include "storage/store.h"

namespace hdrf::storage {

struct LoadOptions {
  // When set, must equal the store's (docs/spec.md §12 gate); unset = the store's.
  std::optional<double> overcommit_factor;
  // When non-empty, the store's resource names must be these.
  std::vector<std::string> expected_resources;
  // Read every SST file and check its checksums before loading.
  bool verify_files = true;
  // When set, replay the log only up to this event, which it must reach
  // (a second copy of a state recovered earlier while the log grows).
  std::optional<uint64_t> stop_at;
  // Fold runs of task events per job before applying them (docs/storage.md
  // "Recovery"), in the load and every later apply; false applies the log
  // one event at a time. Both give the same state.
  bool fold_task_events = true;
};

// Applies logged events to a tree: what ApplyEvent does, without building
// an Event for task events and with jobs found by sequence number through a
// dense index (one array access instead of a hash lookup per event, the
// difference that matters when replaying 10^7 events over 10^6 jobs).
// The tree must only change through this object while it is in use.
//
// With `fold`, runs of allocate/release/finish events are folded per job
// into net changes (docs/storage.md "Recovery: folding"): each event is
// checked against the state the events before it in the log left, exactly
// as the tree would check it, and the net change of every job is applied
// when the run ends: at a barrier (any other event), at an event that
// would be refused (which is then applied on its own and returns the
// tree's error), or at Flush(). The raw state, and so the digest, equals a
// sequential replay's. Call Flush() before looking at the tree.
class Replayer {
 public:
  explicit Replayer(engine::Tree& tree, bool fold = false);
  Status Apply(const EventBatch& batch, size_t i);
  // Applies every folded change (no-op without fold).
  void Flush();
  engine::Tree& tree() { return tree_; }

  struct FoldStats {
    uint64_t folded_events = 0;   // task events taken into a run
    uint64_t runs = 0;            // runs applied
    uint64_t bulk_runs = 0;       // of which raw + one RebuildAll
    uint64_t jobs_applied = 0;    // net changes applied
  };
  const FoldStats& fold_stats() const { return stats_; }

 private:
  JobId Find(uint64_t seq) const {
    return seq < by_seq_.size() ? by_seq_[seq] : engine::kNone;
  }
  // Folds task op i into the current run; false when it must be applied on
  // its own (a barrier, or an event the tree would refuse).
  bool Fold(const LogOp& op);
  bool StartRun();
  Status ApplyOne(const EventBatch& batch, size_t i);

  struct Entry {
    JobId id;
    JobState state;          // when it joined the run
    uint64_t seq;
    int64_t alloc0, tasks0;  // at the start of the run
    int64_t alloc, tasks;    // after the events folded so far
    const int64_t* task;     // R amounts
  };
  engine::Tree& tree_;
  std::vector<JobId> by_seq_;  // empty when sequence numbers are too sparse
  const bool fold_;
  bool run_open_ = false;
  bool pending_seen_ = false;    // no run until the next barrier (Pending jobs)
  std::vector<Entry> run_;
  std::vector<uint32_t> slot_;   // JobId -> index in run_, or UINT32_MAX
  std::vector<int64_t> free_;    // the cluster's free amounts as the run left them
  FoldStats stats_;
};

// Events [begin, end) of a decoded log record (a follower's poll reads
// them outside its engine lock; Replica::Apply applies them inside it).
struct LogPart {
  EventBatch batch;
  size_t begin = 0, end = 0;
};

class Replica {
 public:
  // The newest checkpoint of `store` and the log after it (up to
  // options.stop_at, which the log must then reach). Reads only; every
  // problem is an error naming the store and the key or event.
  static StatusOr<Replica> Load(const Store& store, const LoadOptions& options);

  Replica(Replica&&) noexcept = default;
  Replica& operator=(Replica&&) noexcept = default;

  // Reads the log of `store` after last_seq(), up to event `stop_at` (or
  // its end), and applies it: ReadLogAfter's checks, a refused event is
  // Corruption naming the store, the record key and the event.
  Status CatchUp(const Store& store, uint64_t stop_at = UINT64_MAX);
  // Applies events [begin, end) of `batch`; the first must be event
  // last_seq() + 1 (Internal otherwise, applying nothing). A refusal is
  // Corruption as in CatchUp; *failed (optional) is then its position in
  // `batch`.
  Status Apply(const EventBatch& batch, size_t begin, size_t end, size_t* failed = nullptr);
  // Applies each part in order (one fold across them).
  Status Apply(const std::vector<LogPart>& parts);

  // After a failed CatchUp or Apply the tree holds part of the events:
  // every later one is FailedPrecondition; load a new replica instead.
  bool broken() const { return broken_; }

  // Hands the tree over; the replica goes on applying to it, so the new
  // owner keeps it alive, and changed only through the replica, while the
  // replica is used (drop the replica first to change it otherwise).
  std::unique_ptr<engine::Tree> TakeTree() { return std::move(owned_); }
  engine::Tree& tree() { return *tree_; }
  const engine::Tree& tree() const { return *tree_; }

  const MetaRecord& meta() const { return meta_; }
  uint64_t checkpoint_seq() const { return checkpoint_seq_; }
  uint64_t last_seq() const { return last_seq_; }  // last event applied (= checkpoint_seq() if none)
  uint64_t log_records() const { return log_records_; }  // log records read by Load and CatchUp
  uint64_t events_replayed() const { return events_replayed_; }  // events applied since the checkpoint
  const Replayer::FoldStats& fold_stats() const { return replayer_->fold_stats(); }

 private:
  Replica(MetaRecord meta, std::string dir, std::unique_ptr<engine::Tree> tree, uint64_t checkpoint_seq,
          bool fold);
  // Loads the checkpoint and its log; Load adds the notes on damaged files.
  static StatusOr<Replica> LoadImpl(const Store& store, const LoadOptions& options);
  // Applies events [begin, end) of `batch` (from last_seq() + 1) without
  // the final Flush.
  Status ApplyRange(const EventBatch& batch, size_t begin, size_t end, size_t* failed);
  Status Usable() const;

  MetaRecord meta_;
  std::string dir_;                      // the store's, for messages
  std::unique_ptr<engine::Tree> owned_;  // null after TakeTree
  engine::Tree* tree_;                   // owned_'s, also after TakeTree
  std::unique_ptr<Replayer> replayer_;   // over *tree_
  uint64_t checkpoint_seq_ = 0;
  uint64_t last_seq_ = 0;
  uint64_t log_records_ = 0;
  uint64_t events_replayed_ = 0;
  bool broken_ = false;
};

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_REPLICA_H_
