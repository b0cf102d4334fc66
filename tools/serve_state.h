// What `hdrf serve` serves, apart from HTTP: the source it reads the store
// through, a bounded history of the top-level queues' shares, and the
// bodies of its endpoints (docs/tools.md "hdrf serve").
//
// Thread safety: every method may be called from any thread; Tick() from
// one thread at a time (the refresher).
#ifndef HDRF_TOOLS_SERVE_STATE_H_
#define HDRF_TOOLS_SERVE_STATE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "hdrf/status.h"
#include "tools/serve_source.h"
#include "tools/serve_tree.h"

namespace hdrf::tools {

class ServeState {
 public:
  // `history`: samples kept (the oldest are dropped), at least 2.
  ServeState(std::unique_ptr<ServeSource> source, std::string db, size_t history);

  // Refreshes the source and records a history sample. A failed refresh is
  // kept (refresh_error in /api/queues) and the last state stays shown.
  void Tick();

  // GET /metrics: MetricsText of the engine plus hdrf_serve_* gauges.
  std::string Metrics() const;
  // GET /api/queues: SubtreeJson (the queues `filter` selects) plus "db",
  // "source", "last_seq", "job_count", "queue_count", "time_ms",
  // "refreshed_ms", "refresh_error". NotFound for an unknown `under`.
  StatusOr<nlohmann::json> Queues(const QueueFilter& filter = {}) const;
  // GET /api/history: {"capacity", "samples": [{"time_ms", "last_seq",
  // "queues": {"root/a": {"usage_share", "share"}, ...}}, ...]} oldest
  // first; only the samples taken after `since_ms`.
  nlohmann::json History(int64_t since_ms = -1) const;
  // GET /api/jobs/NAME/explain: {status, JSON body}; 404 for an unknown job.
  std::pair<int, std::string> Explain(std::string_view job) const;

 private:
  struct Sample {
    int64_t time_ms = 0;
    uint64_t last_seq = 0;
    std::vector<std::pair<std::string, std::pair<double, double>>> queues;  // path, (usage, share)
  };

  const std::unique_ptr<ServeSource> source_;
  const std::string db_;
  const size_t capacity_;
  mutable base::Mutex mu_;
  std::deque<Sample> samples_ GUARDED_BY(mu_);
  int64_t refreshed_ms_ GUARDED_BY(mu_) = 0;  // last successful refresh (or the open)
  std::string refresh_error_ GUARDED_BY(mu_);  // "" after a successful refresh
};

// Milliseconds since the Unix epoch.
int64_t NowMs();

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_STATE_H_
