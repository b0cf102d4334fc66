// Reclaim and preemption plans (docs/spec.md §15): "job J waits; which
// running tasks should stop so that J can start?"
//
//   auto plan = engine->Plan(ref, {hdrf::PlanMode::kReclaim});   // StatusOr<Plan>
//   if (plan.ok() && plan->fits && !plan->victims.empty())
//     engine->ApplyPlan(*plan);   // kAborted when stale: plan again
//
// Computing a plan changes nothing. Applying one stops each victim's tasks
// (allocation down, task count unchanged) and allocates J's demand, as one
// atomic event with one log record. ApplyPlan checks the plan again on the
// state it meets: it applies when every entry is still its job's unit and
// permitted in plan order and the demand then fits; otherwise it returns
// kAborted ("stale plan") and changes nothing.
#ifndef HDRF_PLAN_H_
#define HDRF_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdrf/spec.h"
#include "hdrf/views.h"

namespace hdrf {

// Which running tasks a plan may take (docs/spec.md §15).
enum class PlanMode : uint8_t {
  kReclaim = 0,  // units in other leaf queues (the transfer rule across queues)
  kPreempt = 1,  // units in the waiting job's own leaf
  kBoth = 2,     // either
};
// "reclaim" | "preempt" | "both"
const char* PlanModeName(PlanMode m);
bool ParsePlanMode(std::string_view text, PlanMode* out);

struct PlanOptions {
  // Default: kReclaim.
  PlanMode mode = PlanMode::kReclaim;
  // The most units a plan may take; nullopt (default) = no limit. 0 makes
  // every plan that needs a victim fail.
  std::optional<int64_t> max_victims;
};

// One entry of a plan: `tasks` running tasks of one job (its unit: one task,
// or all of a gang that holds no more than its minAvailable).
struct PlanVictim {
  JobId id = engine::kNone;
  uint64_t seq = 0;   // the job's submission sequence number (a JobRef)
  std::string name;
  int64_t tasks = 0;
};

struct Plan {
  JobId id = engine::kNone;  // the waiting job J (with `seq`, a JobRef)
  uint64_t seq = 0;
  std::string job;           // its name
  PlanMode mode = PlanMode::kReclaim;
  // True when the demand fits once the victims are stopped (an empty list:
  // it fits now).
  bool fits = false;
  // The demand k: minAvailable tasks for a job that holds none, else 1.
  int64_t tasks = 0;
  std::vector<PlanVictim> victims;  // in plan order; empty on failure
  // On failure: per resource still short, the demand minus the room, in
  // docs/spec.md §2 units (resource names as the cluster's), rounded up to a
  // whole unit. Empty when fits.
  ResourceAmounts short_by;
  // The engine's last_seq() when the plan was made (informational:
  // ApplyPlan re-checks the plan itself, not this number).
  uint64_t made_at_seq = 0;
};

}  // namespace hdrf

#endif  // HDRF_PLAN_H_
