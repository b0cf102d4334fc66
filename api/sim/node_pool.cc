#include "api/sim/node_pool.h"

#include <limits>
#include <sstream>

#include "hdrf/input_file.h"
#include "hdrf/spec.h"

namespace hdrf::sim {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t comma = line.find(',');
    out.push_back(Trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return out;
    line.remove_prefix(comma + 1);
  }
}

Status LineError(const std::string& source, int line, const std::string& what) {
  return Status::InvalidArgument(source + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

StatusOr<NodePool> NodePool::Parse(std::string_view text, const std::string& source,
                                   const std::vector<std::string>& resources) {
  NodePool p;
  p.R_ = resources.size();
  std::vector<int> column_res;  // column i (after name) -> resource index
  std::set<std::string> names;
  bool header = false;
  int line_no = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark: skipped
  std::vector<int64_t> totals(p.R_, 0);
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> f = SplitFields(line);
    if (!header) {
      if (f[0] != "name") return LineError(source, line_no, "the header must start with 'name', found '" + EscapeName(f[0]) + "'");
      for (size_t i = 1; i < f.size(); ++i) {
        int r = -1;
        for (size_t k = 0; k < resources.size(); ++k)
          if (resources[k] == f[i]) r = static_cast<int>(k);
        if (r < 0) return LineError(source, line_no, "column '" + EscapeName(f[i]) + "' is not a resource of the cluster");
        for (int c : column_res)
          if (c == r) return LineError(source, line_no, "column '" + std::string(f[i]) + "' appears twice");
        column_res.push_back(r);
      }
      header = true;
      continue;
    }
    if (f.size() != column_res.size() + 1)
      return LineError(source, line_no, std::to_string(f.size()) + " fields, the header has " +
                                            std::to_string(column_res.size() + 1));
    // The one name check (hdrf/spec.h): node names reach reports and plots.
    if (Status s = CheckName(NameKind::kNode, f[0]); !s.ok())
      return LineError(source, line_no, "name: " + s.message());
    if (!names.insert(std::string(f[0])).second)
      return LineError(source, line_no, "name: node '" + std::string(f[0]) + "' is listed twice");
    std::vector<int64_t> cap(p.R_, 0);
    for (size_t i = 1; i < f.size(); ++i) {
      if (f[i].empty()) continue;
      const std::string& r = resources[column_res[i - 1]];
      auto q = ParseQuantity(r, f[i]);
      if (!q.ok()) return LineError(source, line_no, r + ": " + q.status().message());
      cap[column_res[i - 1]] = *q;
    }
    // The nodes' capacities add up to a cluster total: it must fit an int64.
    for (size_t r = 0; r < p.R_; ++r)
      if (__builtin_add_overflow(totals[r], cap[r], &totals[r]))
        return LineError(source, line_no, resources[r] + ": the nodes so far add up to more than " +
                                              "9223372036854775807 (the largest amount)");
    p.names_.emplace_back(f[0]);
    p.cap_.insert(p.cap_.end(), cap.begin(), cap.end());
  }
  if (!header) return LineError(source, line_no, "no header line (name,<resource>,...)");
  if (p.names_.empty()) return LineError(source, line_no, "no nodes");
  p.free_ = p.cap_;
  p.by_free_.resize(p.R_);
  for (uint32_t n = 0; n < p.names_.size(); ++n) p.Index(n, true);
  p.dom_total_ = p.Totals();
  return p;
}

StatusOr<NodePool> NodePool::Load(const std::string& path, const std::vector<std::string>& resources) {
  HDRF_ASSIGN_OR_RETURN(const std::string text, ReadInputFile(path));
  return Parse(text, path, resources);
}

std::vector<int64_t> NodePool::Totals() const {
  std::vector<int64_t> t(R_, 0);
  for (size_t n = 0; n < names_.size(); ++n)
    for (size_t r = 0; r < R_; ++r) t[r] += cap_[n * R_ + r];
  return t;
}

void NodePool::Index(uint32_t node, bool insert) {
  for (size_t r = 0; r < R_; ++r) {
    const std::pair<int64_t, uint32_t> e{free_[node * R_ + r], node};
    if (insert) {
      by_free_[r].insert(e);
    } else {
      by_free_[r].erase(e);
    }
  }
}

int NodePool::Dominant(const int64_t* task) const {
  int best = -1;
  double share = -1;
  for (size_t r = 0; r < R_; ++r) {
    if (task[r] <= 0) continue;
    const double s = dom_total_[r] > 0 ? static_cast<double>(task[r]) / static_cast<double>(dom_total_[r])
                                       : std::numeric_limits<double>::infinity();
    if (s > share) {
      share = s;
      best = static_cast<int>(r);
    }
  }
  return best;
}

int NodePool::BestFit(const int64_t* task) const {
  if (names_.empty()) return -1;
  const int d = Dominant(task);
  if (d < 0) return 0;  // an empty task fits the first node, leaving everything
  const FreeSet& s = by_free_[d];
  for (auto it = s.lower_bound({task[d], 0}); it != s.end(); ++it) {
    const int64_t* f = &free_[size_t{it->second} * R_];
    bool fits = true;
    for (size_t r = 0; r < R_ && fits; ++r) fits = task[r] <= f[r];
    if (fits) return static_cast<int>(it->second);
  }
  return -1;
}

Status NodePool::Place(int node, const int64_t* task) {
  if (node < 0 || static_cast<size_t>(node) >= names_.size())
    return Status::InvalidArgument("no node " + std::to_string(node));
  int64_t* f = &free_[size_t(node) * R_];
  for (size_t r = 0; r < R_; ++r)
    if (task[r] > f[r]) return Status::FailedPrecondition("the task does not fit on node " + names_[node]);
  Index(node, false);
  for (size_t r = 0; r < R_; ++r) f[r] -= task[r];
  Index(node, true);
  return Status::Ok();
}

Status NodePool::Release(int node, const int64_t* task) {
  if (node < 0 || static_cast<size_t>(node) >= names_.size())
    return Status::InvalidArgument("no node " + std::to_string(node));
  int64_t* f = &free_[size_t(node) * R_];
  const int64_t* c = &cap_[size_t(node) * R_];
  for (size_t r = 0; r < R_; ++r)
    if (task[r] > c[r] - f[r]) return Status::FailedPrecondition("node " + names_[node] + " does not hold that task");
  Index(node, false);
  for (size_t r = 0; r < R_; ++r) f[r] += task[r];
  Index(node, true);
  return Status::Ok();
}

PlacementFn BestFitPlacement(const NodePool& pool, int* chosen, uint64_t* refusals) {
  return [&pool, chosen, refusals](const PlacementQuery& q) {
    const int n = pool.BestFit(q.task.data());
    if (n < 0) {
      ++*refusals;
      return false;
    }
    *chosen = n;
    return true;
  };
}

}  // namespace hdrf::sim
