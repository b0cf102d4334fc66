// Opening a store for the read-only tools (queues --db, explain --db).
#ifndef HDRF_TOOLS_OPEN_STORE_H_
#define HDRF_TOOLS_OPEN_STORE_H_

#include <memory>
#include <string>

#include "hdrf/engine.h"

namespace hdrf::tools {

// Recovers the engine at `db` with durability none: nothing is written.
inline StatusOr<std::unique_ptr<Engine>> OpenStoreForReading(const std::string& db) {
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  return Engine::Open(o);
}

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_OPEN_STORE_H_
