// A minimal JSON writer for tool output (no parsing).
#ifndef HDRF_API_JSON_H_
#define HDRF_API_JSON_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace hdrf::json {

inline std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest representation that reads back to the same double.
inline std::string Number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

inline std::string Number(int64_t v) { return std::to_string(v); }
inline std::string Number(uint64_t v) { return std::to_string(v); }

}  // namespace hdrf::json

#endif  // HDRF_API_JSON_H_
