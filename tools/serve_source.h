// Where `hdrf serve` gets the engine it shows: the one place to switch to a
// follower (issue 15 item 1).
//
// Today a source is a read-only recovery of the store (Engine::Open with
// durability none, as hdrf queues --db): Refresh() recovers the store again
// when its files changed. The store layer refuses to open a store whose
// writer holds its RocksDB LOCK, so while a process writes the store,
// Refresh() fails with FailedPrecondition ("in use by process N") and the
// server keeps showing the last state it recovered.
//
// With followers the two bodies in serve_source.cc become:
//   Open:    engine_ = Engine::OpenFollower(FollowerOptions{db_dir})
//   Refresh: return engine_->CatchUp();   (engine_ stays the same object)
// and MetricsText of a follower carries follower_lag_events/seconds.
//
// Thread safety: engine() may be called from any thread at any time; the
// engine it returns stays valid while the caller holds it. Refresh() is
// called by one thread at a time.
#ifndef HDRF_TOOLS_SERVE_SOURCE_H_
#define HDRF_TOOLS_SERVE_SOURCE_H_

#include <memory>
#include <mutex>
#include <string>

#include "api/engine.h"

namespace hdrf::tools {

class ServeSource {
 public:
  // Fails (NotFound, a damaged store, ...) when the store cannot be read now.
  static StatusOr<std::unique_ptr<ServeSource>> Open(const std::string& db_dir);

  // Brings engine() up to date with the store.
  Status Refresh();

  // The engine to read now; never null.
  std::shared_ptr<const Engine> engine() const;

  // How the source follows the store, for people ("recovery" today).
  const char* mode() const;

 private:
  explicit ServeSource(std::string db_dir) : db_(std::move(db_dir)) {}
  // A cheap fingerprint of the store's files (names, sizes, mtimes).
  std::string Fingerprint() const;

  const std::string db_;
  std::string fingerprint_;  // of the files engine_ was recovered from; Refresh()'s thread only
  mutable std::mutex mu_;
  std::shared_ptr<const Engine> engine_;  // guarded by mu_
};

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_SOURCE_H_
