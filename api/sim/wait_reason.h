// Why a waiting job waits, in the words of hdrf simulate's reports
// (SimulateOptions::explain_per_leaf, docs/simulate.md), from the engine's
// explanation of it.
#ifndef HDRF_API_SIM_WAIT_REASON_H_
#define HDRF_API_SIM_WAIT_REASON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hdrf/views.h"

namespace hdrf::sim {

// One reason per explained job, from the engine's explanation (the texts
// of engine/decisions.cc): the first blocked reason (docs/spec.md §4), else
// the first reason one more task does not fit (docs/spec.md §6), else (a
// job that could run) a sibling went first. `names` are the resources in
// the engine's order, `task` the job's task and `free` the free amounts in
// that order.
std::string WaitReason(const Explanation& e, const std::vector<std::string>& names, const int64_t* task,
                       const std::vector<int64_t>& free);

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_WAIT_REASON_H_
