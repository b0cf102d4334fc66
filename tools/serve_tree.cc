#include "tools/serve_tree.h"

#include <cstdlib>
#include <unordered_map>

#include "tools/tree_json.h"

namespace hdrf::tools {
namespace {

// A whole number in [lo, hi] written in plain decimal digits, or -1.
long long WholeNumber(const std::string& text, long long lo, long long hi) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  return v < lo || v > hi ? -1 : v;
}

bool InSubtree(const std::string& path, const std::string& top) {
  return path.size() >= top.size() && path.compare(0, top.size(), top) == 0 &&
         (path.size() == top.size() || path[top.size()] == '/');
}

}  // namespace

StatusOr<QueueFilter> ParseQueueFilter(const std::vector<std::string>& under, const std::string* depth,
                                       const std::string* limit) {
  QueueFilter f;
  f.under = under;
  if (depth) {
    const long long d = WholeNumber(*depth, 0, kMaxFilterDepth);
    if (d < 0)
      return Status::InvalidArgument("depth '" + *depth + "' is not a whole number in 0.." +
                                     std::to_string(kMaxFilterDepth));
    f.depth = static_cast<int>(d);
  }
  if (limit) {
    const long long l = WholeNumber(*limit, 1, static_cast<long long>(kMaxFilterLimit));
    if (l < 0)
      return Status::InvalidArgument("limit '" + *limit + "' is not a whole number in 1.." +
                                     std::to_string(kMaxFilterLimit));
    f.limit = static_cast<size_t>(l);
  }
  return f;
}

StatusOr<nlohmann::json> SubtreeJson(const TreeSnapshot& tree, const QueueFilter& filter) {
  const std::vector<QueueInfo>& qs = tree.queues;
  std::unordered_map<QueueId, size_t> index;
  std::unordered_map<std::string, size_t> by_path;
  for (size_t i = 0; i < qs.size(); ++i) {
    index[qs[i].id] = i;
    by_path[qs[i].path] = i;
  }
  std::vector<char> keep(qs.size(), 0);
  if (filter.under.empty())
    for (size_t i = 0; i < qs.size(); ++i) keep[i] = filter.depth < 0 || qs[i].depth <= filter.depth;
  for (const std::string& top : filter.under) {
    auto it = by_path.find(top);
    if (it == by_path.end()) return Status::NotFound("no queue " + top);
    const int base = qs[it->second].depth;
    for (size_t i = 0; i < qs.size(); ++i)
      if ((filter.depth < 0 || qs[i].depth - base <= filter.depth) && InSubtree(qs[i].path, top)) keep[i] = 1;
  }
  if (filter.limit > 0) {
    // The first `limit` kept children of each parent stay; the others go,
    // and so do the queues under them (a parent comes before its children
    // in the snapshot's order).
    std::vector<char> cut(qs.size(), 0);
    std::vector<size_t> parent(qs.size(), qs.size());
    for (size_t p = 0; p < qs.size(); ++p) {
      size_t kept = 0;
      for (QueueId c : qs[p].children) {
        auto it = index.find(c);
        if (it == index.end()) continue;
        parent[it->second] = p;
        if (keep[it->second] && ++kept > filter.limit) cut[it->second] = 1;
      }
    }
    for (size_t i = 0; i < qs.size(); ++i) {
      if (parent[i] < qs.size() && cut[parent[i]]) cut[i] = 1;
      if (cut[i]) keep[i] = 0;
    }
  }
  TreeSnapshot part{{}, tree.resources, tree.total};
  std::vector<const QueueInfo*> full;
  for (size_t i = 0; i < qs.size(); ++i)
    if (keep[i]) {
      part.queues.push_back(qs[i]);
      full.push_back(&qs[i]);
    }
  nlohmann::json j = TreeJson(part);
  for (size_t k = 0; k < full.size(); ++k) {
    const QueueInfo& q = *full[k];
    nlohmann::json& out = j["queues"][k];
    out["children"] = q.children.size();
    out["zero_child"] = nullptr;
    out["zero_child_empty"] = false;
    for (QueueId c : q.children) {
      auto it = index.find(c);
      if (it == index.end()) continue;
      const QueueInfo& child = qs[it->second];
      if (child.blocked || child.share != 0) continue;
      bool empty = true;
      for (int64_t u : child.usage) empty = empty && u == 0;
      out["zero_child"] = child.path;
      out["zero_child_empty"] = empty;
      break;
    }
  }
  return j;
}

}  // namespace hdrf::tools
