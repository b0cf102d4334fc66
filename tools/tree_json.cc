#include "tools/tree_json.h"

#include "hdrf/quantity.h"
#include "tools/human_quantity.h"

namespace hdrf::tools {
namespace {

using nlohmann::json;

// {"cpu": amount, ...} and its human twin; entries equal to `skip` left out.
void PutAmounts(json& out, const std::string& key, const std::vector<int64_t>& v,
                const std::vector<std::string>& res, std::optional<int64_t> skip) {
  json exact = json::object(), human = json::object();
  for (size_t r = 0; r < res.size() && r < v.size(); ++r) {
    if (skip && v[r] == *skip) continue;
    exact[res[r]] = v[r];
    human[res[r]] = HumanQuantity(res[r], v[r]);
  }
  out[key] = std::move(exact);
  out[key + "_human"] = std::move(human);
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

json TreeJson(const TreeSnapshot& t) {
  json out;
  out["resources"] = t.resources;
  json units = json::object();
  for (const auto& r : t.resources)
    units[r] = UnitOf(r) == ResourceUnit::kBytes ? "bytes" : r == "cpu" ? "millicores" : "milli-units";
  out["units"] = std::move(units);
  const bool cluster = !t.total.empty();
  if (cluster) {
    PutAmounts(out, "cluster", t.total, t.resources, std::nullopt);
  } else {
    out["cluster"] = nullptr;
    out["cluster_human"] = nullptr;
  }
  json queues = json::array();
  for (const QueueInfo& q : t.queues) {
    json j;
    j["path"] = q.path;
    j["name"] = q.name;
    j["parent"] = q.depth == 0 ? json(nullptr) : json(Parent(q.path));
    j["depth"] = q.depth;
    j["leaf"] = q.is_leaf;
    j["weight"] = q.weight;
    j["state"] = QueueStateName(q.state);
    j["reclaimable"] = q.reclaimable;
    json jobs = json::object();
    for (int s = 0; s < 4; ++s) jobs[JobStateName(static_cast<JobState>(s))] = q.jobs_by_state[s];
    j["jobs"] = std::move(jobs);
    PutAmounts(j, "allocated", q.usage, t.resources, std::nullopt);
    j["usage_share"] = cluster ? json(UsageShare(q, t.total)) : json(nullptr);
    j["share"] = q.share;
    j["key"] = q.key;
    j["blocked"] = q.blocked;
    PutAmounts(j, "capability", q.capability, t.resources, kUnlimited);
    PutAmounts(j, "guarantee", q.guarantee, t.resources, 0);
    if (cluster) PutAmounts(j, "real_capability", q.real_capability, t.resources, kUnlimited);
    queues.push_back(std::move(j));
  }
  out["queues"] = std::move(queues);
  return out;
}

std::string DumpJson(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace hdrf::tools
