#include "hdrf/quantity.h"

#include <cctype>
#include <cstdlib>

namespace hdrf {
namespace {

using i128 = __int128;

const i128 kI64Max = std::numeric_limits<int64_t>::max();

struct Suffix {
  std::string_view text;
  int dec_exp;  // power of ten
  int bin_exp;  // power of 1024
};

constexpr Suffix kSuffixes[] = {
    {"", 0, 0},   {"c", 0, 0},   {"m", -3, 0}, {"k", 3, 0},  {"M", 6, 0},
    {"G", 9, 0},  {"T", 12, 0},  {"P", 15, 0}, {"E", 18, 0}, {"Ki", 0, 1},
    {"Mi", 0, 2}, {"Gi", 0, 3},  {"Ti", 0, 4}, {"Pi", 0, 5}, {"Ei", 0, 6},
};

Status Bad(std::string_view resource, std::string_view text, const std::string& why) {
  return Status::InvalidArgument("quantity '" + std::string(text) + "' for " +
                                 std::string(resource) + ": " + why);
}

}  // namespace

ResourceUnit UnitOf(std::string_view r) {
  if (r == "memory" || r == "ephemeral-storage" || r.rfind("hugepages-", 0) == 0)
    return ResourceUnit::kBytes;
  return ResourceUnit::kMilli;
}

bool IsKnownResourceName(std::string_view r) {
  if (r == "cpu" || r == "memory" || r == "pods" || r == "ephemeral-storage") return true;
  if (r.rfind("hugepages-", 0) == 0 && r.size() > 10) return true;
  auto slash = r.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 >= r.size()) return false;
  // domain part must contain a dot (nvidia.com), name part [A-Za-z0-9._-]
  if (r.substr(0, slash).find('.') == std::string_view::npos) return false;
  for (char c : r) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '/'))
      return false;
  }
  return r.find('/', slash + 1) == std::string_view::npos;
}

StatusOr<int64_t> ParseQuantity(std::string_view resource, std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return Bad(resource, text, "empty quantity");
  size_t i = 0;
  if (s[0] == '-') return Bad(resource, text, "negative quantities are not allowed");
  if (s[0] == '+') ++i;
  i128 mantissa = 0;
  int frac_digits = 0;
  bool any_digit = false, seen_dot = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (mantissa > kI64Max * 1000) return Bad(resource, text, "too large");
      mantissa = mantissa * 10 + (c - '0');
      if (seen_dot) ++frac_digits;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      break;
    }
  }
  if (!any_digit) return Bad(resource, text, "expected a decimal number");
  int dec_exp = -frac_digits;
  int bin_exp = 0;
  std::string_view rest = s.substr(i);
  // Decimal exponent: e3, E-2 (but a lone "E" is the exa suffix).
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E') && rest.size() > 1 &&
      (std::isdigit(static_cast<unsigned char>(rest[1])) ||
       ((rest[1] == '+' || rest[1] == '-') && rest.size() > 2))) {
    size_t j = 1;
    bool neg = false;
    if (rest[j] == '+' || rest[j] == '-') neg = rest[j++] == '-';
    int e = 0;
    for (; j < rest.size(); ++j) {
      if (!std::isdigit(static_cast<unsigned char>(rest[j])))
        return Bad(resource, text, "bad exponent");
      e = e * 10 + (rest[j] - '0');
      if (e > 100) return Bad(resource, text, "exponent out of range");
    }
    dec_exp += neg ? -e : e;
    rest = {};
  } else {
    bool found = false;
    for (const Suffix& suf : kSuffixes) {
      if (rest == suf.text) {
        dec_exp += suf.dec_exp;
        bin_exp = suf.bin_exp;
        found = true;
        break;
      }
    }
    if (!found) return Bad(resource, text, "unknown suffix '" + std::string(rest) + "'");
  }
  if (UnitOf(resource) == ResourceUnit::kMilli) dec_exp += 3;
  i128 value = mantissa;
  for (int k = 0; k < bin_exp; ++k) {
    value *= 1024;
    if (value > kI64Max * 1000000) return Bad(resource, text, "too large");
  }
  while (dec_exp > 0) {
    if (value == 0) break;
    value *= 10;
    --dec_exp;
    if (value > kI64Max) return Bad(resource, text, "too large (overflows int64)");
  }
  while (dec_exp < 0) {
    if (value % 10 != 0) {
      return Bad(resource, text,
                 UnitOf(resource) == ResourceUnit::kBytes
                     ? "finer than one byte"
                     : "finer than one milli-unit");
    }
    value /= 10;
    ++dec_exp;
  }
  if (value > kI64Max) return Bad(resource, text, "too large (overflows int64)");
  return static_cast<int64_t>(value);
}

std::string FormatQuantity(std::string_view resource, int64_t amount) {
  if (amount == kUnlimited) return "inf";
  std::string sign = amount < 0 ? "-" : "";
  uint64_t a = amount < 0 ? static_cast<uint64_t>(-(amount + 1)) + 1 : static_cast<uint64_t>(amount);
  if (UnitOf(resource) == ResourceUnit::kMilli) {
    if (a % 1000 == 0) return sign + std::to_string(a / 1000);
    return sign + std::to_string(a) + "m";
  }
  static const char* kBin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  int k = 0;
  while (a != 0 && a % 1024 == 0 && k < 6) {
    a /= 1024;
    ++k;
  }
  return sign + std::to_string(a) + kBin[k];
}

Status AddResourceQuantity(std::string_view name, std::string_view text, ResourceAmounts* out,
                           bool known_names_only) {
  const std::string n(name);
  if (known_names_only && !IsKnownResourceName(n)) return Status::InvalidArgument("unknown resource '" + n + "'");
  if (out->count(n)) return Status::InvalidArgument("resource '" + n + "' given twice");
  auto q = ParseQuantity(n, text);
  if (!q.ok()) return q.status().WithContext(n);
  out->emplace(n, *q);
  return Status::Ok();
}

StatusOr<ResourceAmounts> ParseResourceList(std::string_view text, const ResourceListOptions& o) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  ResourceAmounts out;
  if (trim(text).empty()) return out;
  for (;;) {
    const size_t sep = text.find_first_of(o.separators);
    const std::string_view item = trim(text.substr(0, sep));
    if (!item.empty() || !o.skip_empty_items) {
      const size_t eq = item.find('=');
      if (eq == std::string_view::npos)
        return Status::InvalidArgument("'" + std::string(item) + "' is not RESOURCE=QUANTITY");
      const std::string_view name = trim(item.substr(0, eq));
      if (name.empty()) return Status::InvalidArgument("'" + std::string(item) + "' has no resource name");
      HDRF_RETURN_IF_ERROR(AddResourceQuantity(name, trim(item.substr(eq + 1)), &out, o.known_names_only));
    }
    if (sep == std::string_view::npos) break;
    text.remove_prefix(sep + 1);
  }
  return out;
}

}  // namespace hdrf
