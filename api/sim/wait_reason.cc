// WaitReason (api/sim/wait_reason.h).
#include "api/sim/wait_reason.h"

namespace hdrf::sim {

namespace {

// The word of `s` right after `marker` ("" when there is none).
std::string WordAfter(const std::string& s, const std::string& marker) {
  const size_t at = s.find(marker);
  if (at == std::string::npos) return "";
  const size_t from = at + marker.size();
  std::string w = s.substr(from, s.find(' ', from) - from);
  if (!w.empty() && w.back() == ',') w.pop_back();
  return w;
}

}  // namespace

std::string WaitReason(const Explanation& e, const std::vector<std::string>& names, const int64_t* task,
                       const std::vector<int64_t>& free) {
  for (const std::string& b : e.blocked_by) {
    if (b.rfind("resource ", 0) == 0) return "cluster saturated in " + WordAfter(b, "resource ");
    if (b.rfind("queue ", 0) == 0)
      return "capability of " + WordAfter(b, "queue ") + " in " + WordAfter(b, "capability in ");
    if (b.rfind("held back", 0) == 0) return "guarantees held back in " + WordAfter(b, "free ");
    if (b.rfind("user ", 0) == 0) return "user limit in " + WordAfter(b, "user limit in ");
  }
  for (size_t r = 0; r < names.size(); ++r)
    if (task[r] > free[r]) return "not enough free " + names[r];
  for (const std::string& u : e.unfit_because) {
    if (u.rfind("task needs ", 0) == 0) return "guarantees held back in " + WordAfter(u, WordAfter(u, "needs ") + " ");
    if (u.rfind("queue ", 0) == 0)
      return "capability of " + WordAfter(u, "queue ") + " in " + WordAfter(u, "capability ");
    if (u.rfind("user limit", 0) == 0) return "user limit";
  }
  return e.schedulable ? "a sibling went first" : "other";
}

}  // namespace hdrf::sim
