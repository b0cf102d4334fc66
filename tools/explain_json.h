// Engine::Explain as JSON (hdrf explain --json, hdrf serve
// /api/jobs/NAME/explain):
//   {"job", "queue", "key", "blocked", "schedulable", "next", "blocked_by": [...],
//    "unfit_because": [...], "plan": [...], "levels": [{"parent", "siblings":
//    [{"name", "key", "blocked", "on_path"}]}]}
#ifndef HDRF_TOOLS_EXPLAIN_JSON_H_
#define HDRF_TOOLS_EXPLAIN_JSON_H_

#include <string>

#include "hdrf/views.h"

namespace hdrf::tools {

std::string ExplanationJson(const Explanation& e);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_EXPLAIN_JSON_H_
