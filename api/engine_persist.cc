// Persistence glue: placeholder until storage/ lands (issue 5).
#include "api/event_log.h"

namespace hdrf {

StatusOr<std::unique_ptr<EventLog>> CreateEventLog(const EngineOptions& options,
                                                   const engine::Tree&) {
  return Status::Unimplemented("store " + options.db_path + ": persistence is not built yet");
}

StatusOr<Recovered> RecoverEventLog(const EngineOptions& options) {
  return Status::Unimplemented("store " + options.db_path + ": persistence is not built yet");
}

}  // namespace hdrf
