// StoreFollower: reads a store that another process is writing, through a
// RocksDB secondary instance (docs/storage.md "Followers").
//
//   auto f = StoreFollower::Open(db, secondary_dir, &initial);  // a Replica
//   auto u = f->Poll(initial->last_seq(), max_events);  // new events, or a reload
//   initial->Apply(u->parts);
//
// Poll() catches the secondary up with the writer (TryCatchUpWithPrimary,
// which reads the writer's MANIFEST and WAL tails) and reads the log after
// the event the caller has applied, with the recovery code's reader
// (ReadLogAfter). When the writer has taken a checkpoint past that event and
// deleted the log up to it, Poll() reloads the newest checkpoint plus its log
// instead (Replica::Load), never skipping events. A view torn between the
// writer's MANIFEST and WAL (a checkpoint header whose flushed chunks the
// catch-up has not seen yet) is read again after another catch-up. When
// the writer's WAL and MANIFEST files have not changed since a catch-up
// that read to the end, Poll() returns at once.
//
// Thread safety: none. One thread at a time calls every method (the engine's
// follower serializes them under its catch-up mutex).
#ifndef HDRF_STORAGE_SECONDARY_H_
#define HDRF_STORAGE_SECONDARY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/status.h"
#include "storage/codec.h"
#include "storage/replica.h"
#include "storage/store.h"

namespace hdrf::storage {

class StoreFollower {
 public:
  // Opens a secondary instance of the store at `db` with its own directory
  // `secondary_dir` (created if missing) and loads the state (newest
  // checkpoint + log) into *initial.
  static StatusOr<std::unique_ptr<StoreFollower>> Open(const std::string& db,
                                                       const std::string& secondary_dir,
                                                       std::optional<Replica>* initial);

  struct Update {
    // Events applied+1 .. applied+n in order, as whole or partial records
    // (events [begin, end) of each batch).
    using Part = LogPart;
    std::vector<Part> parts;  // Replica::Apply(parts) applies them
    uint64_t last = 0;  // the last event in `parts` (or in `reload`)
    // Set when the log after `applied` was deleted by a checkpoint: the
    // state to continue from (then `parts` is empty).
    std::optional<Replica> reload;
    // The newest event in the store as of this catch-up.
    uint64_t writer_seq = 0;
  };
  // Catches up with the writer and reads at most about `max_events` events
  // after `applied` (whole records; at least one record).
  StatusOr<Update> Poll(uint64_t applied, uint64_t max_events);

  // Loads the state afresh (newest checkpoint + log), after reopening the
  // secondary instance when `reopen` (a catch-up that failed, e.g. on a
  // file the writer deleted meanwhile).
  StatusOr<Replica> Reload(bool reopen);
  // Whether event `seq` is in the store's history as this instance sees it:
  // it is the newest checkpoint, or a log record still in the store holds
  // it (the log from there on is then whole).
  StatusOr<bool> Holds(uint64_t seq) const;
  // Closes the secondary instance (its directory is the caller's).
  void Close() {
    if (store_) (void)store_->Close();
  }
  // Promotion: reads from now on through `writer` (the same store, opened
  // read-write once the writer released it); the secondary is closed.
  void Adopt(std::unique_ptr<Store> writer);
  // Hands the store over (the follower is unusable afterwards).
  std::unique_ptr<Store> Release() { return std::move(store_); }

  const MetaRecord& meta() const { return meta_; }
  Store& store() { return *store_; }
  const std::string& path() const { return db_; }

 private:
  StoreFollower(std::string db, std::string secondary_dir, std::unique_ptr<Store> store,
                MetaRecord meta)
      : db_(std::move(db)),
        secondary_dir_(std::move(secondary_dir)),
        store_(std::move(store)),
        meta_(std::move(meta)) {}
  // The newest event the store holds: the end of its last log record, or its
  // newest checkpoint.
  StatusOr<uint64_t> NewestEvent(uint64_t newest_checkpoint) const;
  // Poll() after the catch-up: one read of the store as this instance sees it.
  StatusOr<Update> Read(uint64_t applied, uint64_t max_events);
  // Replica::Load, again after a further catch-up when the view was torn
  // (see secondary.cc, RetryOnTornView).
  StatusOr<Replica> LoadConsistent();

  std::string db_;
  std::string secondary_dir_;
  std::unique_ptr<Store> store_;
  MetaRecord meta_;
  // After a catch-up that read everything: the writer's files as they were
  // before it (WriterFilesFingerprint), where it ended and the writer's
  // newest event. While the files stay the same, Poll() skips the catch-up
  // (an idle writer costs a directory listing per poll, not a catch-up).
  struct Quiet {
    std::string fingerprint;
    uint64_t applied = 0, writer_seq = 0;
  };
  std::optional<Quiet> quiet_;
};

// The names and sizes of the WAL and MANIFEST files of the store at `db`.
std::string WriterFilesFingerprint(const std::string& db);

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_SECONDARY_H_
