// Printing a queue tree like `vqueues` (used by hdrf queues and hdrf demo).
#ifndef HDRF_TOOLS_TREE_VIEW_H_
#define HDRF_TOOLS_TREE_VIEW_H_

#include <string>
#include <vector>

#include "hdrf/views.h"

namespace hdrf::tools {

struct TreeViewOptions {
  bool shares = true;        // allocation, share, key, blocked columns
  bool real_capability = true;
};

// One line per queue, name indented by depth; amounts in Kubernetes form.
std::string FormatTree(const std::vector<QueueInfo>& queues,
                       const std::vector<std::string>& resources,
                       const TreeViewOptions& options = {});

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_TREE_VIEW_H_
