// Journal: the event log of a durable engine (docs/storage.md "Writing").
//
//   auto j = CreateJournal(path, tree, overcommit, options);  // or RecoverJournal
//   uint64_t seq = j->Append(event);   // numbers and queues, under one lock
//   uint64_t first = j->AppendBatch(job_events);  // a run: one lock, one clock read
//   ...                                // (the caller releases its own locks)
//   Status s = j->WaitDurable(seq);    // group commit
//
// Thread safety: every method may be called from any thread.
//   * Append() numbers the event and queues it under the journal's one lock
//     (`mu_`), and AppendBatch() a run of job events (engine/event_sink.h)
//     as consecutive numbers under one take of it, with one read of the
//     event clock for the run, so the log order is the numbering order by
//     construction. The engine calls them under the locks that order the
//     events against the state they changed (a shard's lock for a
//     shard-local task event, the exclusive lock for anything else; a
//     batch's run of up to 32 events holds its shards' locks until
//     AppendBatch returns: docs/concurrency.md "Batches"), so one shard's
//     events reach the log in the order they were applied.
//   * Writing is group commit: whoever holds the group token (`writing_`,
//     under `mu_`) takes everything queued at once, encodes it as log
//     records and writes it in one RocksDB write (synced for kSync). For
//     kSync the token is taken by the first caller of WaitDurable that finds
//     it free (it commits the group of every caller queued behind it,
//     LevelDB's DBImpl::Write), and by the writer thread when Flush(),
//     Close() or StartWrite() asks for events no caller waited for (yet);
//     for kAsync and kNone by the writer thread alone (it looks every
//     millisecond).
//   * The checkpoint thread applies written groups to its own copy of the
//     state (storage/checkpoint_image.h; a tree with the enqueue gate on)
//     and writes checkpoints from it (never touching the engine's tree or
//     locks).
// A write or checkpoint failure is sticky: health() returns it, and the
// engine refuses further events rather than diverge from what is durable.
#ifndef HDRF_STORAGE_JOURNAL_H_
#define HDRF_STORAGE_JOURNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/event.h"
#include "engine/event_sink.h"
#include "engine/tree.h"
#include "hdrf/engine.h"
#include "hdrf/status.h"
#include "storage/replica.h"
#include "storage/state_io.h"
#include "storage/store.h"

namespace hdrf::storage {

struct JournalOptions {
  // EngineOptions::durability. Default: kSync.
  Durability durability = Durability::kSync;
  // A checkpoint after this many logged events, or after
  // checkpoint_events_per_job times the jobs of the state when that is more
  // (CheckpointInterval); 0 = only on Checkpoint() and Close(). Defaults:
  // 1,000,000 and 4 (EngineOptions).
  uint64_t checkpoint_every = 1000000;
  uint32_t checkpoint_events_per_job = 4;
  // How much log a checkpoint keeps (EngineOptions::log_retention_*).
  // Default: off.
  LogRetention retention;
  // The time logged with each event (EngineOptions::event_clock), called
  // under the journal's lock once per Append, and once per AppendBatch run
  // (its events share the time). Must be set.
  std::function<int64_t()> clock;
};

// The engine's event sink (engine/event_sink.h: Append, last_seq, health),
// and the durability of what was appended.
class Journal : public engine::EventSink {
 public:
  // Append(e) numbers `e` (the event after the last one) and queues it for
  // writing; returns its sequence number. AppendBatch(events) does the same
  // for a run of job events, numbered consecutively; returns the first
  // number. Only for events that were applied. last_seq() is the number of
  // the last event appended.
  //
  // Blocks until event `seq` is durable under the configured durability
  // (at once for kAsync and kNone, unless the checkpoint copy is far
  // behind) or a write failed.
  virtual Status WaitDurable(uint64_t seq) = 0;
  // Starts making every event up to `seq` durable without waiting for it:
  // with kSync the writer thread commits the group (so that the caller
  // can go on while it is synced, and call WaitDurable later); with kAsync
  // and kNone the writer thread writes anyway, so nothing changes.
  virtual void StartWrite(uint64_t seq) = 0;
  virtual uint64_t durable_seq() const = 0;
  // health() (EventSink): not Ok once a write failed, or after Close().
  // Writes everything appended so far and waits for it.
  virtual Status Flush() = 0;
  // Writes a checkpoint of the state after the last appended event.
  virtual Status Checkpoint() = 0;
  // Flushes, checkpoints (when new events were written) and closes the
  // store. Later calls return the first one's status.
  virtual Status Close() = 0;
};

// Creates a new store at `path` holding the state of `tree` (sequence 0)
// and a journal appending to it. Fails if a store already exists there; a
// store it could not finish is removed again.
StatusOr<std::unique_ptr<Journal>> CreateJournal(const std::string& path, const engine::Tree& tree,
                                                 std::optional<double> overcommit_factor,
                                                 const JournalOptions& options);

struct RecoveredJournal {
  std::optional<Replica> state;      // the newest checkpoint + the log after it
  double seconds = 0;                // reading and rebuilding it, wall clock
  std::unique_ptr<Journal> journal;  // appending after state.last_seq
};
// Opens the store at `path` (read-only until the state is loaded, so that a
// damaged store is reported without a byte of it written) and loads it.
StatusOr<RecoveredJournal> RecoverJournal(const std::string& path, const LoadOptions& load,
                                          const JournalOptions& options);

// Continues `store` (open read-write; its newest checkpoint is at
// `checkpoint_seq`, its log ends at `last_seq`) as the journal of an engine
// holding that state (a promoted follower).
StatusOr<std::unique_ptr<Journal>> AdoptJournal(std::unique_ptr<Store> store,
                                                std::vector<std::string> names, uint64_t last_seq,
                                                uint64_t checkpoint_seq, const JournalOptions& options);

// The events a background checkpoint waits for after the previous one in a
// state of `jobs` live jobs: max(checkpoint_every, checkpoint_events_per_job
// × jobs), or 0 (none) when checkpoint_every is 0.
uint64_t CheckpointInterval(const JournalOptions& options, uint64_t jobs);

// Tests only: a planted bug. While on, kSync acknowledges an event once its
// log record is written, before the write-ahead log is synced (the write
// goes out as kAsync's does). tests/storage/power_cut_test.cc turns it on to
// show that its power cuts catch exactly this. Default off.
void SetAckBeforeSyncForTesting(bool on);

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_JOURNAL_H_
