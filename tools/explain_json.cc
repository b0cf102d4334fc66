#include "tools/explain_json.h"

#include "api/formats/json_line.h"

namespace hdrf::tools {

std::string ExplanationJson(const Explanation& e) {
  Json levels = Json::array();
  for (const auto& level : e.levels) {
    Json siblings = Json::array();
    for (const auto& s : level.siblings)
      siblings.push_back({{"name", s.name}, {"key", s.key}, {"blocked", s.blocked}, {"on_path", s.is_path}});
    levels.push_back({{"parent", level.parent}, {"siblings", std::move(siblings)}});
  }
  return JsonLine({{"job", e.job}, {"queue", e.queue}, {"key", e.key}, {"blocked", e.blocked},
                   {"schedulable", e.schedulable}, {"next", e.is_next}, {"blocked_by", e.blocked_by},
                   {"unfit_because", e.unfit_because}, {"plan", e.plan}, {"levels", std::move(levels)}});
}

}  // namespace hdrf::tools
