#include "tools/tree_view.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "hdrf/metrics.h"
#include "hdrf/quantity.h"
#include "tools/human_quantity.h"

namespace hdrf::tools {
namespace {

struct Column {
  std::string head;
  bool right = true;  // numbers right-aligned, words left
  std::vector<std::string> cells;
  bool resource = false;  // an allocation column (left out first when too wide)
  size_t Width() const {
    size_t w = head.size();
    for (const auto& c : cells) w = std::max(w, c.size());
    return w;
  }
};

std::string Amount(const std::string& resource, int64_t v, bool exact) {
  return exact ? FormatQuantity(resource, v) : HumanQuantity(resource, v);
}

// "cpu=2,memory=1Gi"; entries equal to `skip` (kUnlimited capability, 0
// guarantee) are left out.
std::string Amounts(const std::vector<int64_t>& v, const std::vector<std::string>& res, int64_t skip,
                    bool exact) {
  std::string out;
  for (size_t r = 0; r < res.size() && r < v.size(); ++r) {
    if (v[r] == skip) continue;
    if (!out.empty()) out += ",";
    out += res[r] + "=" + Amount(res[r], v[r], exact);
  }
  return out.empty() ? "-" : out;
}

std::string Fraction(double v, bool exact) {
  if (exact) return FormatSampleValue(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Column headers for the resources: short names unless two would clash.
std::vector<std::string> ResourceHeads(const std::vector<std::string>& res) {
  std::map<std::string, int> seen;
  for (const auto& r : res) ++seen[ShortResourceName(r)];
  std::vector<std::string> out;
  for (const auto& r : res) out.push_back(seen[ShortResourceName(r)] > 1 ? r : ShortResourceName(r));
  return out;
}

std::vector<Column> Columns(const TreeSnapshot& t, const TreeViewOptions& o) {
  // Unknown jobs are rare (a recovered job whose queue is gone): the
  // column shows when there are some, or with `wide`.
  bool unknown = o.wide;
  for (const QueueInfo& q : t.queues) unknown |= q.jobs_by_state[static_cast<int>(JobState::kUnknown)] > 0;
  std::vector<Column> cols = {{"Name", false}, {"Weight"}, {"State", false}, {"Inqueue"}, {"Pending"}, {"Running"}};
  if (unknown) cols.push_back({"Unknown"});
  const std::vector<std::string> heads = ResourceHeads(t.resources);
  for (const auto& h : heads) cols.push_back({h, true, {}, true});
  const bool usage = !t.total.empty();
  if (usage) cols.push_back({"Usage"});
  for (const char* h : {"Share", "Key"}) cols.push_back({h});
  cols.push_back({"Blocked", false});
  if (o.wide) {
    for (const char* h : {"Capability", "Guarantee"}) cols.push_back({h, false});
    if (usage) cols.push_back({"RealCapability", false});
  }
  static constexpr JobState kStates[] = {JobState::kInqueue, JobState::kPending, JobState::kRunning,
                                         JobState::kUnknown};
  const size_t states = unknown ? 4 : 3;
  for (const QueueInfo& q : t.queues) {
    size_t c = 0;
    char w[32];
    std::snprintf(w, sizeof w, "%g", q.weight);
    cols[c++].cells.push_back(std::string(2 * static_cast<size_t>(q.depth), ' ') + q.name);
    cols[c++].cells.push_back(w);
    cols[c++].cells.push_back(QueueStateName(q.state));
    for (size_t s = 0; s < states; ++s)
      cols[c++].cells.push_back(std::to_string(q.jobs_by_state[static_cast<int>(kStates[s])]));
    for (size_t r = 0; r < t.resources.size(); ++r)
      cols[c++].cells.push_back(r < q.usage.size() ? Amount(t.resources[r], q.usage[r], o.exact) : "-");
    if (usage) {
      const double u = UsageShare(q, t.total);
      cols[c++].cells.push_back(o.exact ? FormatSampleValue(u) : HumanPercent(u));
    }
    cols[c++].cells.push_back(Fraction(q.share, o.exact));
    cols[c++].cells.push_back(Fraction(q.key, o.exact));
    cols[c++].cells.push_back(q.blocked ? "yes" : "no");
    if (o.wide) {
      cols[c++].cells.push_back(Amounts(q.capability, t.resources, kUnlimited, o.exact));
      cols[c++].cells.push_back(Amounts(q.guarantee, t.resources, 0, o.exact));
      if (usage) cols[c++].cells.push_back(Amounts(q.real_capability, t.resources, kUnlimited, o.exact));
    }
  }
  return cols;
}

size_t LineWidth(const std::vector<Column>& cols) {
  size_t w = 0;
  for (const auto& c : cols) w += c.Width() + 2;
  return cols.empty() ? 0 : w - 2;
}

// Cuts names, then leaves out resource columns, until the table fits.
// Returns the note for the columns left out ("" when none).
std::string FitWidth(std::vector<Column>* cols, size_t max_width) {
  constexpr size_t kMinName = 16;
  size_t width = LineWidth(*cols);
  Column& name = (*cols)[0];
  if (width > max_width && name.Width() > kMinName) {
    const size_t excess = width - max_width;
    const size_t keep = name.Width() > kMinName + excess ? name.Width() - excess : kMinName;
    for (auto& cell : name.cells)
      if (cell.size() > keep) cell = cell.substr(0, keep - 1) + "~";
    width = LineWidth(*cols);
  }
  std::vector<std::string> dropped;
  while (width > max_width) {
    auto last = std::find_if(cols->rbegin(), cols->rend(), [](const Column& c) { return c.resource; });
    if (last == cols->rend() || std::count_if(cols->begin(), cols->end(), [](const Column& c) { return c.resource; }) < 2)
      break;
    dropped.insert(dropped.begin(), last->head);
    cols->erase(std::next(last).base());
    width = LineWidth(*cols);
  }
  if (dropped.empty()) return "";
  std::string note = "(left out to fit " + std::to_string(max_width) + " columns: ";
  for (size_t i = 0; i < dropped.size(); ++i) note += (i ? ", " : "") + dropped[i];
  return note + "; --wide shows every column)\n";
}

}  // namespace

TreeSnapshot TakeTreeSnapshot(const Engine& engine, bool cluster_known) {
  TreeSnapshot t;
  t.queues = engine.Queues();
  t.resources = engine.ResourceNames();
  if (cluster_known) t.total = engine.Total();
  return t;
}

double UsageShare(const QueueInfo& q, const std::vector<int64_t>& total) {
  double share = 0;
  for (size_t r = 0; r < total.size() && r < q.usage.size(); ++r)
    if (total[r] > 0) share = std::max(share, static_cast<double>(q.usage[r]) / static_cast<double>(total[r]));
  return share;
}

std::string FormatTree(const TreeSnapshot& tree, const TreeViewOptions& o) {
  std::vector<Column> cols = Columns(tree, o);
  const std::string note = o.wide || o.exact ? "" : FitWidth(&cols, o.max_width);
  std::vector<size_t> width;
  for (const auto& c : cols) width.push_back(c.Width());
  std::string out;
  for (size_t row = 0; row <= tree.queues.size(); ++row) {
    std::string line;
    for (size_t c = 0; c < cols.size(); ++c) {
      const std::string& cell = row == 0 ? cols[c].head : cols[c].cells[row - 1];
      const std::string pad(width[c] - cell.size(), ' ');
      line += cols[c].right ? pad + cell : cell + (c + 1 < cols.size() ? pad : "");
      if (c + 1 < cols.size()) line += "  ";
    }
    out += line + "\n";
  }
  return out + note;
}

}  // namespace hdrf::tools
