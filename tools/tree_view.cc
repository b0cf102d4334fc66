#include "tools/tree_view.h"

#include <algorithm>
#include <cstdio>

#include "hdrf/quantity.h"

namespace hdrf::tools {
namespace {

// skip: kUnlimited (capability) or 0 (guarantee) entries are left out.
std::string Amounts(const std::vector<int64_t>& v, const std::vector<std::string>& res,
                    int64_t skip) {
  std::string out;
  for (size_t r = 0; r < res.size() && r < v.size(); ++r) {
    if (v[r] == skip) continue;
    if (!out.empty()) out += ",";
    out += res[r] + "=" + FormatQuantity(res[r], v[r]);
  }
  return out.empty() ? "-" : out;
}

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

}  // namespace

std::string FormatTree(const std::vector<QueueInfo>& queues, const std::vector<std::string>& res,
                       const TreeViewOptions& o) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"Name", "Weight", "State", "Inqueue", "Pending", "Running", "Unknown"};
  if (o.shares) {
    for (const char* h : {"Allocated", "Share", "Key", "Blocked"}) head.push_back(h);
  }
  for (const char* h : {"Capability", "Guarantee"}) head.push_back(h);
  if (o.real_capability) head.push_back("RealCapability");
  rows.push_back(head);
  for (const QueueInfo& q : queues) {
    char w[32];
    std::snprintf(w, sizeof w, "%g", q.weight);
    std::vector<std::string> row = {std::string(2 * q.depth, ' ') + q.name, w,
                                    QueueStateName(q.state),
                                    std::to_string(q.jobs_by_state[static_cast<int>(JobState::kInqueue)]),
                                    std::to_string(q.jobs_by_state[static_cast<int>(JobState::kPending)]),
                                    std::to_string(q.jobs_by_state[static_cast<int>(JobState::kRunning)]),
                                    std::to_string(q.jobs_by_state[static_cast<int>(JobState::kUnknown)])};
    if (o.shares) {
      row.push_back(Amounts(q.usage, res, -1));
      row.push_back(Fixed(q.share));
      row.push_back(Fixed(q.key));
      row.push_back(q.blocked ? "yes" : "no");
    }
    row.push_back(Amounts(q.capability, res, kUnlimited));
    row.push_back(Amounts(q.guarantee, res, 0));
    if (o.real_capability) row.push_back(Amounts(q.real_capability, res, kUnlimited));
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace hdrf::tools
