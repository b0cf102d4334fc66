// The part of the queue tree that /api/queues of `hdrf serve` answers with
// (issue 27 item 3: a page that fetches only the levels a person opened),
// and what the page needs to explain the Share and Key columns
// (docs/tools.md "hdrf serve").
#ifndef HDRF_TOOLS_SERVE_TREE_H_
#define HDRF_TOOLS_SERVE_TREE_H_

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdrf/status.h"
#include "tools/tree_view.h"

namespace hdrf::tools {

// ?under=PATH (repeatable)&depth=N&limit=K of /api/queues.
struct QueueFilter {
  std::vector<std::string> under;  // subtrees to answer; empty: the tree from root
  int depth = -1;                  // levels below each PATH (0: PATH alone); -1: all
  size_t limit = 0;                // child queues of one parent answered at most (path order); 0: all
};

inline constexpr int kMaxFilterDepth = 1000;
inline constexpr size_t kMaxFilterLimit = 1000000;

// TreeJson of the queues `filter` selects, in the snapshot's order, each
// with two more fields: "children" (how many child queues it has, answered
// or not) and "zero_child" (null, or the first non-blocked child queue whose
// share is 0: under Dynamic H-DRF it makes this queue's M, and with it the
// rescaled shares of all its non-blocked children, 0) with
// "zero_child_empty" (that child holds nothing). NotFound {"no queue PATH"}
// for an `under` that is not in the tree.
StatusOr<nlohmann::json> SubtreeJson(const TreeSnapshot& tree, const QueueFilter& filter);

// Parses the query of /api/queues; the error (InvalidArgument) names the
// parameter and the text.
StatusOr<QueueFilter> ParseQueueFilter(const std::vector<std::string>& under, const std::string* depth,
                                       const std::string* limit);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_TREE_H_
