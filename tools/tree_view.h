// Printing a queue tree like `vqueues` (hdrf queues, hdrf demo) and the
// snapshot of it that the JSON views (hdrf queues --json, hdrf serve) share.
#ifndef HDRF_TOOLS_TREE_VIEW_H_
#define HDRF_TOOLS_TREE_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/views.h"

namespace hdrf::tools {

// What a tree view shows: the queues and the cluster they share.
struct TreeSnapshot {
  std::vector<QueueInfo> queues;       // Engine::Queues(), path order
  std::vector<std::string> resources;  // Engine::ResourceNames()
  std::vector<int64_t> total;          // cluster capacity per resource; empty: not known
};

// The engine's tree. `cluster_known` false leaves `total` empty (a queue
// configuration shown over an invented cluster).
TreeSnapshot TakeTreeSnapshot(const Engine& engine, bool cluster_known = true);

// The plain usage share of a queue: max over resources of usage / cluster
// capacity (resources with capacity 0 left out); 0 when `total` is empty.
double UsageShare(const QueueInfo& queue, const std::vector<int64_t>& total);

struct TreeViewOptions {
  // Amounts in exact Kubernetes form ("5911137500m") instead of three
  // significant digits ("5.91M"), shares and keys to full precision; no
  // width limit (nothing is cut or left out).
  bool exact = false;
  // Every column (capability, guarantee, real capability too), however wide.
  bool wide = false;
  // Without `wide` or `exact`: lines are at most this many bytes. Long names are cut
  // (ending in '~') to no less than 16 bytes, then resource columns are left
  // out from the last, with a note under the table.
  size_t max_width = 120;
};

// One line per queue, name indented by depth: weight, state, job counts by
// state (Inqueue, Pending, Running, and Unknown when a queue has some or
// with `wide`), allocation (one column per resource), usage share (when the
// cluster is known), H-DRF share and key, blocked; with `wide` capability,
// guarantee and real capability.
std::string FormatTree(const TreeSnapshot& tree, const TreeViewOptions& options = {});

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_TREE_VIEW_H_
