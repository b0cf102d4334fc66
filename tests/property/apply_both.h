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
