// Opening a store for the read-only tools (queues --db, explain --db).
#ifndef HDRF_TOOLS_OPEN_STORE_H_
#define HDRF_TOOLS_OPEN_STORE_H_

#include <memory>
#include <string>

#include "hdrf/engine.h"

namespace hdrf::tools {

// True when Engine::Open failed only because a live writer holds the store.
inline bool HeldByWriter(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition && s.message().find("LOCK held") != std::string::npos;
}

// Recovers the engine at `db` with durability none: nothing is written.
// A store that a live writer holds (its LOCK) is opened as a follower
// instead (Engine::OpenFollower, catching up only when asked: CatchUp()),
// so the tools work while the store is being written.
inline StatusOr<std::unique_ptr<Engine>> OpenStoreForReading(const std::string& db) {
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  auto e = Engine::Open(o);
  if (e.ok() || !HeldByWriter(e.status())) return e;
  FollowerOptions f;
  f.db_path = db;
  f.catch_up_interval_ms = 0;
  return Engine::OpenFollower(f);
}

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_OPEN_STORE_H_
