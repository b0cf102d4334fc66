// hdrf replay's flags (tools/cmd_replay.cc): its usage text and the
// parsing and checking of its flags into a ReplayConfig.
#ifndef HDRF_TOOLS_REPLAY_FLAGS_H_
#define HDRF_TOOLS_REPLAY_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "hdrf/engine.h"

namespace hdrf::tools {

// Events per Engine::ApplyTasks call without --rate: the batch path
// prefetches the memory of the events ahead, so that their cache misses
// overlap.
inline constexpr int64_t kDefaultReplayBatch = 1024;

// What the flags ask for.
struct ReplayConfig {
  std::string trace;
  std::string db;
  Durability durability = Durability::kSync;
  int threads = 1;
  uint64_t until = UINT64_MAX;
  bool json = false;
  double rate = 0;
  uint64_t warmup = 0;
  double duration = 0;
  bool subtree = false;
  int progress = 0;
  std::string from_db;  // --from-db: the store whose log is replayed
  std::string plot;     // --plot FILE.svg
  int64_t plot_samples = 200;
  EngineOptions retention;  // --log-retention-events, --log-retention-seconds (log_retention_* only)
  size_t batch = 1;     // --batch: events per Engine::ApplyTasks call
  size_t pipeline = 0;  // --pipeline N: batches applied while older ones are made durable
};

// Parses and checks the flags into *cfg; the exit code when done (--help,
// bad usage), nullopt to go on.
std::optional<int> ParseReplayFlags(int argc, char** argv, ReplayConfig* cfg);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_REPLAY_FLAGS_H_
