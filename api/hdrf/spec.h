// Plain descriptions of queues, jobs, scenarios and events.
//
// These are the values that configuration files parse into, that events
// carry and that the engine, the reference model (tests/reference) and the
// storage layer exchange. They hold no derived state; amounts are canonical
// integers (hdrf/quantity.h). `line` fields keep the source line a value
// came from (0 when it did not come from a file) so errors can name it.
#ifndef HDRF_SPEC_H_
#define HDRF_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/quantity.h"
#include "hdrf/status.h"

namespace hdrf {

// Values are stored on disk: never renumber.
enum class QueueState : uint8_t { kOpen = 0, kClosing = 1, kClosed = 2 };
const char* QueueStateName(QueueState s);  // "open" | "closing" | "closed"

// Values are stored on disk: never renumber.
enum class JobState : uint8_t { kPending = 0, kInqueue = 1, kRunning = 2, kUnknown = 3 };
const char* JobStateName(JobState s);  // "Pending" | "Inqueue" | ...

// Names (docs/config.md "Names"): every name that comes from input (a config,
// a scenario, a workload, an import, a trace, the C and Python interfaces)
// is checked by CheckName when it enters the engine, and readers check it
// again to name the file line. A name is 1..kMaxNameBytes bytes of
// A-Z a-z 0-9 . _ - and, by kind, also
//   queue (one segment of a path): nothing more ('/' separates segments);
//   job: / # : @        user: : @        resource: /
//   node (hdrf simulate --nodes): nothing more
// so no name holds a NUL, a control character, a blank, a comma, a quote or
// a byte of 0x80 and above.
enum class NameKind : uint8_t { kQueue, kJob, kUser, kResource, kNode };
inline constexpr size_t kMaxNameBytes = 253;
const char* NameKindName(NameKind kind);  // "queue" | "job" | "user" | "resource" | "node"
// InvalidArgument naming the kind, the name (escaped: EscapeName) and the
// first offending byte, e.g. "job name 'a,b': ',' at byte 2 is not allowed
// (job names use A-Z a-z 0-9 . _ - / # : @)".
Status CheckName(NameKind kind, std::string_view name);
// "root" or "root/" followed by queue names joined by '/'.
Status CheckQueuePath(std::string_view path);
// `text` with every byte outside 0x20..0x7e (and '\\') written as \xNN, for
// messages that show untrusted text.
std::string EscapeName(std::string_view text);
// The largest queue or job weight (docs/semantics.md §3): a weight is a
// divisor of shares, and a larger one would make a parent's share of its
// children overflow to infinity. A weight above it, NaN or infinite is
// InvalidArgument.
inline constexpr double kMaxWeight = 1e9;

struct QueueSpec {
  std::string path;            // "root/eng/prod"; "root" itself is allowed
  double weight = 1;           // below 1 is raised to 1; at most kMaxWeight
  ResourceAmounts capability;  // absent resource = unlimited
  ResourceAmounts guarantee;   // absent resource = 0
  bool reclaimable = true;
  QueueState state = QueueState::kOpen;
  int min_user_limit_percent = 100;          // 1..100, 100 = no limit
  std::optional<double> user_limit_factor;   // > 0 when set
  int line = 0;
};

struct JobSpec {
  std::string name;
  std::string queue;       // a leaf, a parent (admission, docs/spec.md §5) or "" = root
  std::string user = "default";
  int64_t tasks = 1;       // number of tasks (running + not yet allocated)
  ResourceAmounts task;    // shape of one task
  double weight = 1;       // job weight (divisor of its key), >= 1 after clamping,
                           // at most kMaxWeight
  // Gang size m (docs/spec.md §14): a job holding no task starts only with m tasks
  // at once; also the §12 enqueue gate's minimum. 0 counts as 1.
  int64_t min_available = 1;
  int line = 0;
};

// One step of a scenario (docs/spec.md §10, §15).
struct ScenarioStep {
  enum class Kind { kFill, kFinish, kRemove, kSubmit, kPlan, kEvict };
  Kind kind = Kind::kFill;
  std::string job;        // kFinish, kRemove, kPlan, kEvict
  int64_t tasks = 1;      // kFinish
  JobSpec submit;         // kSubmit
  // kPlan, kEvict: "reclaim" (default), "preempt" or "both", and the most
  // victims (unset: no limit).
  std::string mode = "reclaim";
  std::optional<int64_t> max_victims;
  int line = 0;
};

struct Scenario {
  ResourceAmounts cluster;
  std::vector<QueueSpec> queues;  // any order; unlisted parents get weight 1
  std::vector<JobSpec> jobs;      // submission order
  std::vector<ScenarioStep> steps;  // parser fills [fill] when absent
  std::optional<double> overcommit_factor;  // docs/spec.md §12 gate; unset = off
};

// A queue configuration file (forms 1-3 of docs/spec.md §3).
struct QueueConfig {
  ResourceAmounts cluster;        // empty when the file names no cluster
  std::vector<QueueSpec> queues;  // parents may be implicit
};

}  // namespace hdrf

#endif  // HDRF_SPEC_H_
