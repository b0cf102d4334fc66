// The power-loss harness (issue 26, docs/testing.md "Power cuts"): an
// engine with a store on FaultFs (tests/storage/fault_fs.h) applies random
// events, the power goes off at a random file-system operation (or while it
// is idle), unsynced writes are dropped, and the store is recovered and
// checked against a reference engine that applied the same events in
// memory:
//   * sync: every acknowledged event survives; the recovered state is the
//     reference's after exactly the recovered number of events, which is at
//     least the acknowledged count and at most the issued count;
//   * async: the same, with "acknowledged" the last event a successful
//     Engine::Flush() covered: a tail may be lost, never a gap;
//   * the newest checkpoint, loaded alone, is the reference's state at its
//     sequence number, and every table file passes its checksums.
// A store lives through several cuts (recover, go on, cut again); some
// cuts fall during a checkpoint and some during the recovery itself.
#ifndef HDRF_TESTS_STORAGE_POWER_CUT_H_
#define HDRF_TESTS_STORAGE_POWER_CUT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hdrf/engine.h"

namespace hdrf::storage_test {

struct PowerCutOptions {
  uint64_t seed = 1;
  uint64_t cuts = 200;         // in all, over as many stores as needed
  uint64_t cuts_per_store = 8;
  Durability durability = Durability::kSync;
  bool plans = false;          // the plan workload (storage_util.h) instead of the stream
  bool verbose = false;        // a line per cut on stderr
};

struct PowerCutResult {
  uint64_t cuts = 0;
  uint64_t stores = 0;
  uint64_t cuts_in_checkpoint = 0;  // while a checkpoint flushed or committed
  uint64_t cuts_in_recovery = 0;    // while Engine::Open ran
  uint64_t cuts_idle = 0;           // no armed operation reached: cut between events
  std::map<std::string, uint64_t> cut_at_op;  // operation the cut stopped -> count
  uint64_t events_acked = 0;        // acknowledged (sync) or flushed (async) events in all
  uint64_t events_lost = 0;         // issued, not recovered (never acknowledged ones)
  uint64_t recovered_unacked = 0;   // recovered beyond the acknowledged point
  uint64_t bytes_dropped = 0;
  uint64_t names_undone = 0;
  uint64_t plans_applied = 0;
  uint64_t failures = 0;
  std::vector<std::string> messages;  // the first failures, each naming seed and cut
};

PowerCutResult RunPowerCuts(const PowerCutOptions& options);

}  // namespace hdrf::storage_test

#endif  // HDRF_TESTS_STORAGE_POWER_CUT_H_
