// Where `hdrf serve` gets the engine it shows: the one place to switch to a
// follower (issue 15 item 1).
//
// A source is a follower of the store (Engine::OpenFollower,
// docs/storage.md "Followers"): a RocksDB secondary instance that catches up
// with the writer in the background, so the server shows a store while a
// platform or `hdrf replay --db` writes it, and its metrics carry
// hdrf_follower_lag_events/seconds. Refresh() forces a catch-up now.

// Thread safety: engine() may be called from any thread at any time; the
// engine it returns stays valid while the caller holds it. Refresh() is
// called by one thread at a time.
#ifndef HDRF_TOOLS_SERVE_SOURCE_H_
#define HDRF_TOOLS_SERVE_SOURCE_H_

#include <memory>
#include <string>

#include "hdrf/engine.h"

namespace hdrf::tools {

class ServeSource {
 public:
  // Fails (NotFound, a damaged store, ...) when the store cannot be read now:
  // unless a live writer holds it, the store is first recovered as `hdrf
  // recover` recovers it, and refused with the same error.
  static StatusOr<std::unique_ptr<ServeSource>> Open(const std::string& db_dir);

  // Brings engine() up to date with the store.
  Status Refresh();

  // The engine to read now; never null.
  std::shared_ptr<const Engine> engine() const;

  // How the source follows the store, for people ("follower").
  const char* mode() const;

 private:
  explicit ServeSource(std::shared_ptr<Engine> e) : engine_(std::move(e)) {}

  // A follower: thread-safe itself; the pointer never changes.
  const std::shared_ptr<Engine> engine_;
};

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_SOURCE_H_
