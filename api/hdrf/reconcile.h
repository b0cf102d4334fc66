// Reconcile after restart: the platform's view of the cluster, and what
// Engine::Reconcile changed to make the engine match it.
//
// A platform that restarts its scheduler recovers hdrf's store, but the
// cluster moved on while it was down (pods finished, jobs deleted, and with
// async durability the last events may be missing). It then hands the
// engine the truth; Reconcile applies the fewest ordinary events that make
// the engine hold exactly those jobs (and, when given, those queues), each
// logged and numbered like any event.
#ifndef HDRF_RECONCILE_H_
#define HDRF_RECONCILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/spec.h"

namespace hdrf {

// One job as the platform sees it.
struct TruthJob {
  std::string name;
  std::string queue;       // its leaf queue
  std::string user = "default";
  ResourceAmounts task;    // shape of one task, canonical units
  int64_t tasks = 1;       // tasks not finished (running + waiting)
  int64_t running = 0;     // running tasks, 0..tasks
  double weight = 1;
  int64_t min_available = 1;
};

struct ClusterTruth {
  std::vector<TruthJob> jobs;  // every job; jobs the engine has beyond these are removed
  // When set, the queue tree to match (every queue but root; missing
  // parents are implied as by Engine::Create). Unset: queues are left alone.
  std::optional<std::vector<QueueSpec>> queues;
};

// What Reconcile changed, by name, and how many events it applied.
struct ReconcileResult {
  std::vector<std::string> queues_created;
  std::vector<std::string> queues_updated;  // settings or state
  std::vector<std::string> queues_deleted;
  std::vector<std::string> jobs_removed;
  std::vector<std::string> jobs_submitted;
  // Removed and submitted again: its queue, user, shape, weight or
  // min_available differ, or it has more tasks than the engine's.
  std::vector<std::string> jobs_resubmitted;
  std::vector<std::string> jobs_adjusted;   // running or finished tasks changed
  uint64_t events = 0;
  bool changed() const { return events > 0; }
};

}  // namespace hdrf

#endif  // HDRF_RECONCILE_H_
