// Internal pieces of the workload generator (api/hdrf/workload_gen.h): its
// random stream and samplers, exposed for the distribution tests.
#ifndef HDRF_API_SIM_WORKLOAD_GEN_H_
#define HDRF_API_SIM_WORKLOAD_GEN_H_

#include "hdrf/workload_gen.h"
#include "api/sim/gen_rng.h"

namespace hdrf::sim {

// One value of `d`.
double Sample(const Distribution& d, GenRng& rng);

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_WORKLOAD_GEN_H_
