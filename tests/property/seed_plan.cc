#include "tests/property/seed_plan.h"

#include <cstdlib>

namespace hdrf::testing {
namespace {

// Parses a whole number >= 0 that fills all of `s`.
bool ParseCount(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

int64_t EnvInt(const char* name, int64_t def, std::string* error) {
  const char* v = std::getenv(name);
  if (!v) return def;
  int64_t out = 0;
  if (!ParseCount(v, &out)) {
    *error = std::string(name) + "=" + v + ": expected a whole number >= 0";
    return def;
  }
  return out;
}

SeedPlan PropertySeeds(int64_t default_events) {
  SeedPlan p;
  p.total = EnvInt("HDRF_PROPERTY_EVENTS", default_events, &p.error);
  if (std::getenv("HDRF_PROPERTY_SEED")) {
    p.first = static_cast<uint64_t>(EnvInt("HDRF_PROPERTY_SEED", 1, &p.error));
    p.total = 1;
    p.one = true;
    return p;
  }
  if (const char* part = std::getenv("HDRF_PROPERTY_PART")) {
    const std::string s = part;
    const auto slash = s.find('/');
    int64_t k = 0, m = 0;
    if (slash == std::string::npos || !ParseCount(s.substr(0, slash), &k) ||
        !ParseCount(s.substr(slash + 1), &m) || m < 1 || k >= m) {
      p.error = "HDRF_PROPERTY_PART=" + s + ": expected K/M with 0 <= K < M";
      return p;
    }
    p.first = static_cast<uint64_t>(k) + 1;
    p.step = static_cast<uint64_t>(m);
    p.total /= m;
  }
  return p;
}

}  // namespace hdrf::testing
