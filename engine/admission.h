// The admission rule of docs/spec.md §5 at one level of the tree: a job
// submitted to an inner queue goes down, level by level, to the open child of
// least dominant usage share over its weight, the first in name order among
// those within kKeyEpsilon of the least. One definition for the engine
// (TreeScheduler::Admit) and for storage's checkpoint image, which places
// submissions as the engine did without keeping a tree
// (storage/checkpoint_image.cc).
#ifndef HDRF_ENGINE_ADMISSION_H_
#define HDRF_ENGINE_ADMISSION_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/tree_structure.h"  // kKeyEpsilon

namespace hdrf::engine {

// Among children 0..n-1 (in name order): open(i) says whether child i is
// open, usage(i)[r] is its usage of resource r, weight(i) its weight;
// `total` holds the cluster's amounts (resources with 0 left out of the
// share). Returns the index of the child admission picks, or -1 when none
// is open.
template <class Open, class Usage, class Weight>
int AdmitChild(size_t n, const std::vector<int64_t>& total, Open open, Usage usage, Weight weight) {
  thread_local std::vector<std::pair<double, int>> keys;
  keys.clear();
  for (size_t i = 0; i < n; ++i) {
    if (!open(i)) continue;
    const auto& u = usage(i);
    double s = 0;
    for (size_t r = 0; r < total.size(); ++r)
      if (total[r] > 0) s = std::max(s, static_cast<double>(u[r]) / static_cast<double>(total[r]));
    keys.emplace_back(s / weight(i), static_cast<int>(i));
  }
  if (keys.empty()) return -1;
  double m = keys.front().first;
  for (const auto& [k, i] : keys) m = std::min(m, k);
  for (const auto& [k, i] : keys)
    if (k <= m + kKeyEpsilon) return i;
  return -1;  // unreachable: the least key is within kKeyEpsilon of itself
}

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_ADMISSION_H_
