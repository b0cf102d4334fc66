// Random states for the plan property tests (docs/spec.md §14, §15): a random tree
// (random_stream.h's MakeWorld, gate off), jobs with gangs, a fill, random
// host events (allocate, release, finish) that leave states a fill would
// not, and late jobs that then wait. Described as data, so that the
// engine and the reference (or two copies of the reference) replay exactly
// the same events.
#ifndef HDRF_TESTS_PROPERTY_PLAN_WORLD_H_
#define HDRF_TESTS_PROPERTY_PLAN_WORLD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/spec.h"
#include "tests/property/random_stream.h"
#include "tests/reference/reference_model.h"
#include "tests/rng.h"

namespace hdrf::testing {

struct PlanWorldOp {
  enum class Kind { kSubmit, kFill, kAllocate, kRelease, kFinish };
  Kind kind = Kind::kFill;
  JobSpec job;       // kSubmit
  std::string name;  // task events
  int64_t n = 1;
  std::string ToString() const;
};

struct PlanWorld {
  RandomWorld world;  // overcommit off: every job is Inqueue at once
  std::vector<PlanWorldOp> ops;
  // Task shape of every job that ops submit, by name.
  const JobSpec* Spec(const std::string& name) const;
};

PlanWorld MakePlanWorld(Rng& rng);

// The reference model after the world's ops (refused ops are skipped, as a
// host would see them refused); nullptr when the world's tree is refused.
std::unique_ptr<ref::ReferenceModel> BuildReference(const PlanWorld& w);

// Applies one op to the reference; the status of the event (Fill: Ok).
Status ApplyPlanWorldOp(ref::ReferenceModel& m, const PlanWorldOp& op);

// The jobs of `m` that wait: Inqueue or Running with an unallocated task.
std::vector<std::string> WaitingJobs(const ref::ReferenceModel& m);

// "reclaim" | "preempt" | "both"
const char* ModeText(PlanMode m);
// A plan in one line, for failure messages.
std::string ShowPlan(const ref::RefPlan& p);

// Issue 28 item 6: right after `applied` took `entry` from its job V, V's
// own plan `back` (made at once) is a take-back when it takes from
// applied.job; a failure when it is exactly the transfer reversed (one
// entry each way, V asks for what it lost, and takes the unit J asked
// for), which §15 rules out.
enum class TakeBack { kNone, kCounted, kFailure };
TakeBack ClassifyTakeBack(const ref::RefPlan& applied, const ref::RefPlanVictim& entry, const ref::RefPlan& back);

// What a plan property test saw, printed at its end.
struct PlanCounts {
  int64_t worlds = 0, plans = 0, fits = 0, failed = 0, entries = 0, applied = 0, take_backs = 0;
  std::string Summary() const;
};

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_PROPERTY_PLAN_WORLD_H_
