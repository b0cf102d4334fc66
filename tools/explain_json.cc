#include "tools/explain_json.h"

#include "api/formats/json.h"

namespace hdrf::tools {

std::string ExplanationJson(const Explanation& e) {
  auto strings = [](const std::vector<std::string>& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + json::Quote(v[i]);
    return o + "]";
  };
  std::string o = "{\"job\": " + json::Quote(e.job) + ", \"queue\": " + json::Quote(e.queue) +
                  ", \"key\": " + json::Number(e.key) + ", \"blocked\": " + (e.blocked ? "true" : "false") +
                  ", \"schedulable\": " + (e.schedulable ? "true" : "false") +
                  ", \"next\": " + (e.is_next ? "true" : "false") + ", \"blocked_by\": " +
                  strings(e.blocked_by) + ", \"unfit_because\": " + strings(e.unfit_because) +
                  ", \"levels\": [";
  for (size_t i = 0; i < e.levels.size(); ++i) {
    o += (i ? ", " : "") + std::string("{\"parent\": ") + json::Quote(e.levels[i].parent) + ", \"siblings\": [";
    for (size_t k = 0; k < e.levels[i].siblings.size(); ++k) {
      const auto& s = e.levels[i].siblings[k];
      o += (k ? ", " : "") + std::string("{\"name\": ") + json::Quote(s.name) + ", \"key\": " +
           json::Number(s.key) + ", \"blocked\": " + (s.blocked ? "true" : "false") +
           ", \"on_path\": " + (s.is_path ? "true" : "false") + "}";
    }
    o += "]}";
  }
  return o + "]}";
}


}  // namespace hdrf::tools
