// Persistence glue: what EngineOptions say to the journal and to recovery
// (storage/journal.h, storage/state_io.h), and the host's event clock.
#include <chrono>

#include "api/facade/engine_impl.h"

namespace hdrf {

int64_t HostClockMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

storage::JournalOptions JournalOptionsFor(const EngineOptions& options) {
  storage::JournalOptions jo;
  jo.durability = options.durability;
  jo.checkpoint_every = options.checkpoint_every;
  jo.checkpoint_events_per_job = options.checkpoint_events_per_job;
  jo.retention = {options.log_retention_events, options.log_retention_seconds};
  jo.clock = options.event_clock ? options.event_clock : std::function<int64_t()>(HostClockMicros);
  return jo;
}

storage::LoadOptions RecoveryOptionsFor(const EngineOptions& options) {
  storage::LoadOptions lo;
  lo.overcommit_factor = options.overcommit_factor;
  lo.expected_resources = options.expected_resources;
  lo.fold_task_events = options.fold_recovery;
  return lo;
}

}  // namespace hdrf
