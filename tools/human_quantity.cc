#include "tools/human_quantity.h"

#include <cmath>
#include <cstdio>

#include "hdrf/quantity.h"

namespace hdrf::tools {
namespace {

struct Unit {
  const char* suffix;
  int64_t canon;  // canonical amount in one of this unit
};

// Milli-unit resources (cpu, gpu, pods, ...): one unit is 1000.
constexpr Unit kSiUnits[] = {{"", 1000},
                             {"k", 1000000},
                             {"M", 1000000000},
                             {"G", 1000000000000},
                             {"T", 1000000000000000},
                             {"P", 1000000000000000000}};
// Byte resources.
constexpr Unit kBinaryUnits[] = {{"", 1},
                                 {"Ki", int64_t{1} << 10},
                                 {"Mi", int64_t{1} << 20},
                                 {"Gi", int64_t{1} << 30},
                                 {"Ti", int64_t{1} << 40},
                                 {"Pi", int64_t{1} << 50},
                                 {"Ei", int64_t{1} << 60}};

constexpr int64_t kPow10[] = {1, 10, 100};

// amount * 10^d / canon, rounded half up (amount >= 0; no overflow in 128 bits).
__int128 Scaled(__int128 amount, int d, int64_t canon) {
  return (amount * kPow10[d] * 2 + canon) / (__int128{2} * canon);
}

std::string Digits(__int128 v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v > 0);
  return s;
}

// amount >= 1 unit of units[0]: three significant digits in the largest unit
// that is at most `amount`.
std::string ThreeDigits(__int128 amount, const Unit* units, size_t n, int64_t base) {
  size_t i = 0;
  while (i + 1 < n && units[i + 1].canon <= amount) ++i;
  for (;;) {
    const __int128 whole = amount / units[i].canon;
    int d = whole >= 100 ? 0 : whole >= 10 ? 1 : 2;
    __int128 r = Scaled(amount, d, units[i].canon);
    while (d > 0 && r >= 1000) r = Scaled(amount, --d, units[i].canon);  // 9.996 -> 10.0
    if (d == 0 && r >= base && i + 1 < n) {  // 999.7 -> 1.00k, 1023.9Gi -> 1.00Ti
      ++i;
      continue;
    }
    std::string frac = Digits(r % kPow10[d] + kPow10[d]).substr(1);  // zero-padded to d digits
    if (r * units[i].canon == amount * kPow10[d]) {
      while (!frac.empty() && frac.back() == '0') frac.pop_back();  // exact: "1Ti", "1.5"
    }
    return Digits(r / kPow10[d]) + (frac.empty() ? "" : "." + frac) + units[i].suffix;
  }
}

}  // namespace

std::string HumanQuantity(std::string_view resource, int64_t amount) {
  if (amount == kUnlimited) return "inf";
  if (amount < 0) {
    if (amount == INT64_MIN) return "-" + HumanQuantity(resource, INT64_MAX);
    return "-" + HumanQuantity(resource, -amount);
  }
  if (UnitOf(resource) == ResourceUnit::kBytes) {
    if (amount < 1024) return std::to_string(amount);
    return ThreeDigits(amount, kBinaryUnits, std::size(kBinaryUnits), 1024);
  }
  if (amount == 0) return "0";
  if (amount < 1000) return std::to_string(amount) + "m";
  return ThreeDigits(amount, kSiUnits, std::size(kSiUnits), 1000);
}

std::string ShortResourceName(std::string_view resource) {
  size_t slash = resource.rfind('/');
  return std::string(slash == std::string_view::npos ? resource : resource.substr(slash + 1));
}

std::string HumanPercent(double fraction) {
  const double p = fraction * 100;
  if (std::isnan(p)) return "-";
  if (p == 0) return "0%";
  if (p < 0) return "-" + HumanPercent(-fraction);
  if (p < 0.01) return "<0.01%";
  if (std::isinf(p)) return "inf%";
  // Decimals for three significant digits, taken again after rounding
  // (9.996 -> 10.0).
  auto decimals = [](double x) { return x >= 100 ? 0 : x >= 10 ? 1 : x >= 1 ? 2 : x >= 0.1 ? 3 : 4; };
  int d = decimals(p);
  d = decimals(std::round(p * std::pow(10, d)) / std::pow(10, d));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%%", d, p);
  return buf;
}

}  // namespace hdrf::tools
