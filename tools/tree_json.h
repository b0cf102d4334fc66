// The queue tree as JSON (hdrf queues --json, hdrf serve /api/queues).
//
//   {"resources": ["cpu", "memory", ...],
//    "units": {"cpu": "millicores", "memory": "bytes", "pods": "milli-units"},
//    "cluster": {"cpu": 128000000, ...} | null, "cluster_human": {"cpu": "128k", ...} | null,
//    "queues": [{"path", "name", "parent" (null for root), "depth", "leaf",
//                "weight", "state", "reclaimable",
//                "jobs": {"Inqueue", "Pending", "Running", "Unknown"},
//                "allocated": {...}, "allocated_human": {...},
//                "usage_share" (null without a cluster), "share", "key", "blocked",
//                "capability", "capability_human", "guarantee", "guarantee_human",
//                "real_capability", "real_capability_human"}, ...]}
//
// Amounts are exact, in the canonical units of docs/spec.md §2 (as in the metrics);
// the "_human" twins are the three-digit forms of tools/human_quantity.h.
// "capability" lists only resources that have one, "guarantee" only those
// above 0, "real_capability" is left out without a cluster.
#ifndef HDRF_TOOLS_TREE_JSON_H_
#define HDRF_TOOLS_TREE_JSON_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/tree_view.h"

namespace hdrf::tools {

nlohmann::json TreeJson(const TreeSnapshot& tree);

// j.dump() that never throws: bytes that are not UTF-8 (queue and job names
// may hold any byte) become U+FFFD.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_TREE_JSON_H_
