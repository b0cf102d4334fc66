#include "api/formats/json_line.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hdrf {
namespace {

// Shortest "%.*g" that reads back to the same double.
void PutDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    *out += "null";
    return;
  }
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  *out += buf;
}

void PutString(const std::string& s, std::string* out) {
  *out += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

void Put(const Json& v, std::string* out) {
  switch (v.type()) {
    case Json::value_t::object: {
      *out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        if (!first) *out += ", ";
        first = false;
        PutString(key, out);
        *out += ": ";
        Put(value, out);
      }
      *out += '}';
      return;
    }
    case Json::value_t::array: {
      *out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) *out += ", ";
        Put(v[i], out);
      }
      *out += ']';
      return;
    }
    case Json::value_t::number_float:
      PutDouble(v.get<double>(), out);
      return;
    default:
      *out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
  }
}

}  // namespace

std::string JsonLine(const Json& value) {
  std::string out;
  Put(value, &out);
  return out;
}

}  // namespace hdrf
