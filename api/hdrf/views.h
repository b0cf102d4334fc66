// Read-only views of queues and jobs, as returned to tools and embedders.
// Vectors are indexed like Tree::resource_names() (sorted resource names).
#ifndef HDRF_VIEWS_H_
#define HDRF_VIEWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/spec.h"

namespace hdrf {
namespace engine {
using QueueId = uint32_t;
using JobId = uint32_t;
inline constexpr uint32_t kNone = UINT32_MAX;
}  // namespace engine

using engine::JobId;
using engine::QueueId;

// A read-only snapshot of one queue, for views and tools.
struct QueueInfo {
  QueueId id = engine::kNone;
  std::string path;
  std::string name;
  int depth = 0;
  double weight = 1;
  bool is_leaf = true;
  QueueState state = QueueState::kOpen;
  bool reclaimable = true;
  std::vector<int64_t> capability;  // kUnlimited where unset
  std::vector<int64_t> guarantee;
  std::vector<int64_t> usage;
  std::vector<int64_t> real_capability;
  std::vector<double> vector;       // U of §4
  double share = 0;                 // s(U)
  double key = 0;                   // s(U)/w
  bool blocked = false;
  int64_t jobs_by_state[4] = {0, 0, 0, 0};  // subtree counts, JobState order
  int min_user_limit_percent = 100;
  std::optional<double> user_limit_factor;
  std::vector<QueueId> children;
};

struct JobInfo {
  JobId id = engine::kNone;
  std::string name;
  std::string queue;  // leaf path
  std::string user;
  int64_t tasks = 0;
  int64_t allocated = 0;
  std::vector<int64_t> task;  // per resource
  double weight = 1;
  int64_t min_available = 1;
  uint64_t seq = 0;           // submission order
  JobState state = JobState::kInqueue;
  bool blocked = false;
  double key = 0;
  double drf_share = 0;       // max_r alloc[r]/T[r], all resources
};

// Why a job is or is not the next to run (Tree::Explain).
struct Explanation {
  struct Sibling {
    std::string name;  // queue path or job name
    double key = 0;
    bool blocked = false;
    bool is_path = false;  // the node on the job's own path
  };
  struct Level {
    std::string parent;             // the queue whose children compete here
    std::vector<Sibling> siblings;  // in key order (blocked last); at most 20
  };
  std::string job;
  std::string queue;
  double key = 0;
  bool blocked = false;
  bool schedulable = false;
  bool is_next = false;              // the job a step would pick now
  std::vector<std::string> blocked_by;    // reasons, e.g. "resource cpu saturated"
  std::vector<std::string> unfit_because; // why one more task (a gang's m) does not fit (§6, §14)
  // A waiting job's reclaim plan (§15), or why there is none: the
  // resources short, then per refused unit that would help the rule that
  // refused it (guarantee, not reclaimable, order).
  std::vector<std::string> plan;
  std::vector<Level> levels;         // root first, the leaf's jobs last
};

}  // namespace hdrf

#endif  // HDRF_VIEWS_H_
