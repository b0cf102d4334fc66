// Internal: EventLog, the seam between the engine API and persistence.
//
// Engine::Impl calls Enqueue() right after an event was applied, while it
// holds the lock that numbered the event (Impl::rw exclusively, or
// Impl::seq_mu under rw shared for a shard-local task event), so records
// arrive in sequence order; it calls WaitDurable() after releasing its
// locks, so that many threads' events share one write (group commit).
// Implemented in api/facade/engine_persist.cc over storage/.
#ifndef HDRF_API_EVENT_LOG_H_
#define HDRF_API_EVENT_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hdrf/engine.h"
#include "engine/event.h"
#include "engine/tree.h"

namespace hdrf::storage {
class Store;
}  // namespace hdrf::storage

namespace hdrf {

class EventLog {
 public:
  virtual ~EventLog() = default;
  // Not Ok once a write failed: the engine then refuses further events
  // rather than diverge from what is durable.
  virtual Status health() const = 0;
  // Queues event `seq` for writing. Called under the lock that numbered it
  // (see above), in increasing `seq` order, only for events that were
  // applied.
  virtual void Enqueue(uint64_t seq, const Event& e) = 0;
  // Blocks until `seq` is durable under the configured durability (returns
  // at once for kAsync and kNone) or a write failed.
  virtual Status WaitDurable(uint64_t seq) = 0;
  virtual uint64_t durable_seq() const = 0;
  // Writes everything queued and waits for it.
  virtual Status Flush() = 0;
  // Writes a checkpoint of the current state (taken without holding the
  // engine's exclusive lock for long).
  virtual Status Checkpoint() = 0;
  virtual Status Close() = 0;
};

// Creates a new store at options.db_path holding the initial state of `tree`
// (sequence 0). Fails if a store already exists there.
StatusOr<std::unique_ptr<EventLog>> CreateEventLog(const EngineOptions& options,
                                                   const engine::Tree& tree);

struct Recovered {
  std::unique_ptr<engine::Tree> tree;
  uint64_t last_seq = 0;
  std::unique_ptr<EventLog> log;  // open for appending after last_seq
  RecoveryStats stats;
};
// Opens the store at options.db_path: latest checkpoint + log tail.
StatusOr<Recovered> RecoverEventLog(const EngineOptions& options);

// Continues `store` (open read-write; its newest checkpoint is at
// `checkpoint_seq`, its log ends at `last_seq`) as the log of an engine
// holding that state: a promoted follower (Engine::Promote), and recovery.
StatusOr<std::unique_ptr<EventLog>> AdoptEventLog(const EngineOptions& options,
                                                  std::unique_ptr<storage::Store> store,
                                                  std::vector<std::string> names,
                                                  uint64_t last_seq, uint64_t checkpoint_seq);

// Tests only: a planted bug. While on, kSync acknowledges an event once its
// log record is written, before the write-ahead log is synced (the write
// goes out as kAsync's does). tests/storage/power_cut_test.cc turns it on to
// show that its power cuts catch exactly this. Default off.
void SetAckBeforeSyncForTesting(bool on);

}  // namespace hdrf

#endif  // HDRF_API_EVENT_LOG_H_
