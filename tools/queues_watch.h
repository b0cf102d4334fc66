// hdrf queues --db DIR --watch [SECONDS]: the tree of a (live) store,
// redrawn in place (docs/tools.md).
#ifndef HDRF_TOOLS_QUEUES_WATCH_H_
#define HDRF_TOOLS_QUEUES_WATCH_H_

#include <cstdint>
#include <string>

#include "tools/tree_view.h"

namespace hdrf::tools {

struct WatchOptions {
  std::string db;
  double seconds = 2;   // between refreshes
  int64_t count = 0;    // refreshes, 0 = until Ctrl-C
  bool metrics = false; // Prometheus text instead of the tree
  TreeViewOptions view;  // --exact, --wide
};

// Every `seconds`: recovers the store read-only (tools/open_store.h) and
// prints the tree; on a terminal the screen is cleared first (ANSI),
// otherwise frames follow one another, each after a header line
// "== hdrf queues ...". Ctrl-C ends it after the current frame with exit
// code 0. A store that a live writer holds (its LOCK) is followed
// (Engine::OpenFollower): each frame catches up with the writer. Any other
// failure of the first refresh is an error (exit 1); a later one is shown in
// its frame and the watch goes on.
int WatchStore(const WatchOptions& options);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_QUEUES_WATCH_H_
