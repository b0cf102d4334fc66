// Checkpoints and recovery of an engine::Tree over a Store
// (docs/storage.md "Checkpoints", "Recovery").
#ifndef HDRF_STORAGE_STATE_IO_H_
#define HDRF_STORAGE_STATE_IO_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/event.h"
#include "hdrf/status.h"
#include "engine/tree.h"
#include "storage/codec.h"
#include "storage/store.h"

namespace hdrf::storage {

// The metadata of a new store over `tree`.
MetaRecord MetaFor(const engine::Tree& tree, std::optional<double> overcommit_factor);

// Checks what every reader needs from Meta: this build's format version and
// a sane resource list. InvalidArgument for a version this build does not
// read, Corruption for nonsense.
Status CheckMeta(const MetaRecord& meta, const std::string& path);

struct CheckpointStats {
  uint64_t jobs = 0;
  uint32_t chunks = 0;
  uint64_t bytes = 0;
};

// How much of the log a checkpoint leaves behind it (EngineOptions
// log_retention_events and log_retention_seconds, docs/storage.md "Log
// retention"). A log record is deleted only when every rule lets it go: it
// ends at or before the previous checkpoint, it ends `events` or more events
// before the checkpoint's event, and its last event is more than `seconds`
// older (by event time) than the checkpoint's event. 0 turns a rule off.
struct LogRetention {
  uint64_t events = 0;
  int64_t seconds = 0;
};

// Writes a checkpoint of `tree` as the state after event `seq`: the job
// chunks as one table file, ingested (Store::TableFile: durable, bypassing
// the memtable and the WAL), the header that commits them (synced, through
// the WAL), then deletes older checkpoints and the log records `retention`
// lets go (by default every one that ends at or before the previous
// checkpoint; docs/storage.md "Checkpoints").
inline constexpr uint32_t kJobsPerChunk = 8192;  // WriteCheckpoint's default
Status WriteCheckpoint(Store& store, const engine::Tree& tree, uint64_t seq,
                       const std::vector<std::string>& names, CheckpointStats* stats = nullptr,
                       uint32_t jobs_per_chunk = kJobsPerChunk, const LogRetention& retention = {});

// The jobs of a checkpoint in submission order: calls `add` for each (the
// fields' views need to live only during the call; `queue` indexes the
// header's queues), stopping at the first error.
using CheckpointJobs = std::function<Status(const std::function<Status(const JobFields&)>& add)>;
// WriteCheckpoint of a state given as its header (`seq`, `next_seq`,
// `capacity` and `queues` set; the counts are filled in) and its jobs.
Status WriteCheckpointOf(Store& store, CheckpointHeaderRecord header, const CheckpointJobs& jobs,
                         const std::vector<std::string>& names, CheckpointStats* stats = nullptr,
                         uint32_t jobs_per_chunk = kJobsPerChunk, const LogRetention& retention = {});

// The first log key a checkpoint at event `seq` keeps (every log record
// before it may be deleted), the checkpoint before it at `previous` (0:
// none), under `retention`.
StatusOr<uint64_t> LogKeepFrom(const Store& store, const std::vector<std::string>& names, uint64_t seq,
                               uint64_t previous, const LogRetention& retention);

// Fault injection for tests: the steps of WriteCheckpoint, after which a
// hook set here is called (tests/storage/storage_child.cc kills its own
// process there). No hook by default; set it before any checkpoint runs.
enum class CheckpointStep {
  kChunksWritten,  // chunks in a table file outside the store, not ingested
  kChunksFlushed,  // chunks ingested (a table file of the store), no header yet
  kCommitted,      // header written and synced, older records not deleted
};
void SetCheckpointHookForTesting(void (*hook)(CheckpointStep step, uint64_t seq));

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
  // "Recovery"); false applies the log one event at a time. Both give the
  // same state.
  bool fold_task_events = true;
};

struct LoadedState {
  MetaRecord meta;
  std::unique_ptr<engine::Tree> tree;
  uint64_t checkpoint_seq = 0;
  uint64_t last_seq = 0;       // last event replayed (= checkpoint_seq if none)
  uint64_t log_records = 0;    // log records read
  uint64_t events_replayed = 0;
};

// Latest checkpoint + the log after it. Reads only; every problem is an
// error naming the store and the key or event.
StatusOr<LoadedState> LoadState(const Store& store, const LoadOptions& options);

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

// Reads the log records after event `after`, in order, up to event
// `stop_at`: checks that they are contiguous (a hole is Corruption "log gap:
// event N is missing ..."), decodes each and calls fn(batch, begin, end) for
// its events [begin, end) after `after` (fn may move from `batch`). *last
// receives the last event read (`after` if none); *records (optional) is
// increased by the records read. The log part of LoadState, and what a
// follower reads after each catch-up.
Status ReadLogAfter(const Store& store, const std::vector<std::string>& names, uint64_t after,
                    uint64_t stop_at,
                    const std::function<Status(EventBatch&, size_t, size_t)>& fn,
                    uint64_t* last, uint64_t* records = nullptr);

// Applies events [begin, end) of `batch` through `replayer`; a refusal is
// Corruption naming the store `dir`, the record key and the event.
Status ReplayBatch(Replayer& replayer, const EventBatch& batch, size_t begin, size_t end,
                   const std::string& dir);

// Builds a tree holding `queues` over `cluster`, without jobs. Succeeds for
// every state the engine can reach, also those that Tree::Create's rules
// alone would refuse (a capacity shrunk below the guarantees, a parent
// capability lowered below a child's guarantee).
StatusOr<std::unique_ptr<engine::Tree>> BuildQueueTree(const ResourceAmounts& cluster,
                                                       const std::vector<QueueSpec>& queues,
                                                       std::optional<double> overcommit_factor);

// A copy of `tree`'s state (queues, jobs, counts, states, submission
// numbers), built as recovery builds a checkpoint's: the same digest, and
// every event accepted or refused alike. For what-ifs that must not touch
// the live tree (Engine::Reconcile's dry run). Internal when the copy's
// digest differs (a bug).
StatusOr<std::unique_ptr<engine::Tree>> CopyTree(const engine::Tree& tree);

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_STATE_IO_H_
