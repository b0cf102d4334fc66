// FormatQueueConfig (hdrf/config.h): a queue tree as a form 3 configuration.
#include <charconv>
#include <string>

#include "hdrf/config.h"
#include "hdrf/quantity.h"

namespace hdrf {
namespace {

std::string Number(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::to_string(v);
}

// Names and quantities are quoted: a queue named 123, true or null stays a
// string (docs/config.md "Names" keeps quotes and backslashes out of them).
std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

std::string Amounts(const ResourceAmounts& a) {
  std::string out = "{";
  for (const auto& [r, v] : a) {
    if (out.size() > 1) out += ", ";
    out += Quoted(r) + ": " + Quoted(FormatQuantity(r, v));
  }
  return out + "}";
}

// The fields of `q` that differ from a new queue's (docs/config.md form 3).
std::string Fields(const QueueSpec& q) {
  const QueueSpec d;
  std::string out;
  if (q.weight != d.weight) out += ", weight: " + Number(q.weight);
  if (!q.capability.empty()) out += ", capability: " + Amounts(q.capability);
  if (!q.guarantee.empty()) out += ", guarantee: " + Amounts(q.guarantee);
  if (q.reclaimable != d.reclaimable) out += std::string(", reclaimable: ") + (q.reclaimable ? "true" : "false");
  if (q.state != d.state) out += std::string(", state: ") + QueueStateName(q.state);
  if (q.min_user_limit_percent != d.min_user_limit_percent)
    out += ", minUserLimitPercent: " + std::to_string(q.min_user_limit_percent);
  if (q.user_limit_factor) out += ", userLimitFactor: " + Number(*q.user_limit_factor);
  return out;
}

}  // namespace

std::string FormatQueueConfig(const QueueConfig& cfg, const std::string& name, const std::string& comment) {
  std::string out;
  if (!comment.empty()) {
    size_t at = 0;
    while (at <= comment.size()) {
      const size_t nl = comment.find('\n', at);
      out += "# " + comment.substr(at, nl == std::string::npos ? std::string::npos : nl - at) + "\n";
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
  }
  out += "apiVersion: hdrf.io/v1\nkind: HierarchicalQueue\nmetadata:\n  name: " + Quoted(name) + "\nspec:\n  queues:";
  size_t listed = 0;
  for (const QueueSpec& q : cfg.queues) {
    if (q.path == "root") {
      const std::string f = Fields(q);
      if (f.empty()) continue;
      out += "\n    - {name: \"root\"" + f + "}";
    } else {
      const size_t slash = q.path.rfind('/');
      out += "\n    - {name: " + Quoted(q.path.substr(slash + 1)) + ", parent: " + Quoted(q.path.substr(0, slash)) +
             Fields(q) + "}";
    }
    ++listed;
  }
  if (listed == 0) out += " []";
  out += "\n";
  if (!cfg.cluster.empty()) out += "---\nkind: Cluster\ncapacity: " + Amounts(cfg.cluster) + "\n";
  return out;
}

}  // namespace hdrf
