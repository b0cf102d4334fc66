// Checkpoints of an engine::Tree in a Store, and the reader of the log
// after one (docs/storage.md "Checkpoints", "Recovery"; the state loaded
// from them is a storage::Replica, storage/replica.h).
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

// Reads the log records after event `after`, in order, up to event
// `stop_at`: checks that they are contiguous (a hole is Corruption "log gap:
// event N is missing ..."), decodes each and calls fn(batch, begin, end) for
// its events [begin, end) after `after` (fn may move from `batch`). *last
// receives the last event read (`after` if none); *records (optional) is
// increased by the records read. The log part of a Replica's load and
// catch-up (storage/replica.h), and what a follower reads after each
// catch-up.
Status ReadLogAfter(const Store& store, const std::vector<std::string>& names, uint64_t after,
                    uint64_t stop_at,
                    const std::function<Status(EventBatch&, size_t, size_t)>& fn,
                    uint64_t* last, uint64_t* records = nullptr);

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
