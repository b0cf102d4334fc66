// Applies one random operation (random_stream.h) to both the engine and the
// reference model, for the property tests.
#ifndef HDRF_TESTS_PROPERTY_APPLY_BOTH_H_
#define HDRF_TESTS_PROPERTY_APPLY_BOTH_H_

#include <memory>
#include <string>

#include "engine/tree.h"
#include "tests/property/random_stream.h"
#include "tests/reference/reference_model.h"

namespace hdrf::testing {

// Applies `op` to both; returns a mismatch description (acceptance, step
// choice, fill count) or "".
std::string ApplyBoth(engine::Tree& t, ref::ReferenceModel& m, const RandomOp& op);

// The reference side of one operation (not kStep or kFill).
Status ApplyToReference(ref::ReferenceModel& m, const RandomOp& op);

// After an event: same queues (blocked, keys within 1e-9, vectors), jobs
// (allocation, state, blocked, key), queue order of one rotating pair of
// leaves and next step. Returns a description of the first difference or "".
// `rotation` picks the pair and moves on: the caller keeps one per seed
// (from 0), so that a seed checks the same pairs when run alone.
std::string CompareModels(const engine::Tree& t, const ref::ReferenceModel& m, uint64_t& rotation);

// Both models over the same random world (either may refuse it).
struct BothModels {
  StatusOr<std::unique_ptr<engine::Tree>> tree = Status::Internal("unset");
  StatusOr<std::unique_ptr<ref::ReferenceModel>> ref = Status::Internal("unset");
};
BothModels CreateBoth(const RandomWorld& w);

// The next random operation for the engine's current queues and jobs
// (MakeOp); printed with its index `i` when HDRF_PROPERTY_VERBOSE is set.
RandomOp NextOp(Rng& rng, const RandomWorld& w, const engine::Tree& t, int& next_job, int64_t i);

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_PROPERTY_APPLY_BOTH_H_
