// NodePool: the nodes of `hdrf simulate --nodes FILE.csv` and best-fit
// placement of tasks on them (docs/simulate_nodes.md).
//
// A task must fit on one node: for every resource r, task[r] <= free[r] of
// that node. Among the nodes where it fits, best fit takes the one that
// leaves the fewest free units of the task's dominant resource (the r with
// the largest task[r] / total[r], the first such r in resource order), ties
// to the node listed first in the file. Amounts are canonical (docs/spec.md §2), in
// the resource order given at Load (the engine's ResourceNames()).
//
// Cost: Place/Release O(R log N); BestFit walks one resource's nodes in
// free order from the task's amount up and stops at the first that fits.
// Not thread-safe: one thread uses a pool at a time.
#ifndef HDRF_API_SIM_NODE_POOL_H_
#define HDRF_API_SIM_NODE_POOL_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/quantity.h"
#include "hdrf/status.h"

namespace hdrf::sim {

class NodePool {
 public:
  // Parses a node CSV: a header `name,<resource>,...` then one node a line,
  // each cell a quantity (docs/spec.md §2; empty = 0). `resources` is the cluster's
  // resource order; a column naming another resource is an error, a
  // resource without a column is 0 on every node. Blank lines and lines
  // starting with '#' are skipped. Errors are InvalidArgument
  // "SOURCE:LINE: ..." naming the field.
  static StatusOr<NodePool> Parse(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& resources);
  // Reads and parses the file at `path` (IoError when it cannot be read).
  static StatusOr<NodePool> Load(const std::string& path, const std::vector<std::string>& resources);

  size_t size() const { return names_.size(); }
  size_t resources() const { return R_; }
  const std::string& name(size_t node) const { return names_[node]; }
  const int64_t* capacity(size_t node) const { return &cap_[node * R_]; }
  const int64_t* free(size_t node) const { return &free_[node * R_]; }
  // Σ capacity over the nodes, per resource.
  std::vector<int64_t> Totals() const;
  // The totals that define a task's dominant resource; default Totals().
  // `total` has resources() entries.
  void SetDominanceTotals(std::vector<int64_t> total) { dom_total_ = std::move(total); }

  // The best-fit node for one task, or -1 when it fits on none.
  int BestFit(const int64_t* task) const;
  // Takes / gives back one task's resources on `node`. Place requires that
  // the task fits there; Release that the node holds that much.
  Status Place(int node, const int64_t* task);
  Status Release(int node, const int64_t* task);

 private:
  using FreeSet = std::set<std::pair<int64_t, uint32_t>>;  // (free[r], node)
  NodePool() = default;
  void Index(uint32_t node, bool insert);
  int Dominant(const int64_t* task) const;

  size_t R_ = 0;
  std::vector<std::string> names_;
  std::vector<int64_t> cap_, free_;  // node-major, R_ per node
  std::vector<int64_t> dom_total_;
  std::vector<FreeSet> by_free_;     // per resource
};

// The placement test of `hdrf simulate --nodes` for Engine::StepWhere: it
// accepts a job when its task fits on some node, and writes that best-fit
// node to *chosen; the caller then Place()s the task there for the job
// StepWhere returns. Each refusal (the engine had room, no node had) adds
// one to *refusals: a fragmentation wait. `pool` must use the engine's
// resource order and outlive the test.
PlacementFn BestFitPlacement(const NodePool& pool, int* chosen, uint64_t* refusals);

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_NODE_POOL_H_
