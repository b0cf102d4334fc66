// tools/human_quantity.h: three significant digits in the largest unit.
// Worked examples, then a property check over random amounts against an
// independent reading of the output (number x suffix multiplier).
#include "tools/human_quantity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "hdrf/quantity.h"
#include "tests/rng.h"

namespace hdrf::tools {
namespace {

constexpr int64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024;

TEST(HumanQuantity, WorkedExamples) {
  EXPECT_EQ(HumanQuantity("cpu", 6'390'000'000), "6.39M");           // 6.39 million cores
  EXPECT_EQ(HumanQuantity("cpu", 5'911'137'500), "5.91M");
  EXPECT_EQ(HumanQuantity("memory", 3'316'879'872 * kMi), "3.09Pi");  // issue 15: 3316879872Mi
  EXPECT_EQ(HumanQuantity("memory", static_cast<int64_t>(48.9 * kTi)), "48.9Ti");
  EXPECT_EQ(HumanQuantity("nvidia.com/gpu", 1'320'000'000), "1.32M");
  EXPECT_EQ(HumanQuantity("cpu", 64'000), "64");  // exact: no trailing zeros
  EXPECT_EQ(HumanQuantity("cpu", 1'500), "1.5");
  EXPECT_EQ(HumanQuantity("cpu", 1'234), "1.23");
  EXPECT_EQ(HumanQuantity("cpu", 1'001), "1.00");  // rounded: keeps its digits
  EXPECT_EQ(HumanQuantity("cpu", 250), "250m");
  EXPECT_EQ(HumanQuantity("cpu", 0), "0");
  EXPECT_EQ(HumanQuantity("cpu", 128'000'000), "128k");
  EXPECT_EQ(HumanQuantity("cpu", 999'999), "1.00k");  // 999.999 rounds up into the next unit
  EXPECT_EQ(HumanQuantity("cpu", 9'996), "10.0");    // 9.996 -> three digits again
  EXPECT_EQ(HumanQuantity("memory", 500 * kTi), "500Ti");
  EXPECT_EQ(HumanQuantity("memory", kTi), "1Ti");
  EXPECT_EQ(HumanQuantity("memory", kTi + 1), "1.00Ti");
  EXPECT_EQ(HumanQuantity("memory", 1023 * kGi + kGi / 2), "1.00Ti");  // 1023.5Gi rounds to 1024Gi
  EXPECT_EQ(HumanQuantity("memory", 1000 * kGi), "1000Gi");            // below 1Ti: stays in Gi
  EXPECT_EQ(HumanQuantity("memory", 512), "512");
  EXPECT_EQ(HumanQuantity("memory", 0), "0");
  EXPECT_EQ(HumanQuantity("ephemeral-storage", 10 * kGi), "10Gi");
  EXPECT_EQ(HumanQuantity("pods", 220'000'000), "220k");
  EXPECT_EQ(HumanQuantity("pods", 58'000'000), "58k");
  EXPECT_EQ(HumanQuantity("pods", 57'954'000), "58.0k");
  EXPECT_EQ(HumanQuantity("cpu", kUnlimited), "inf");
  EXPECT_EQ(HumanQuantity("cpu", -1'500), "-1.5");
  EXPECT_EQ(HumanQuantity("cpu", INT64_MAX - 1), "9.22P");
  EXPECT_EQ(HumanQuantity("memory", INT64_MAX - 1), "8.00Ei");
}

TEST(HumanQuantity, ShortNamesAndPercent) {
  EXPECT_EQ(ShortResourceName("nvidia.com/gpu"), "gpu");
  EXPECT_EQ(ShortResourceName("cpu"), "cpu");
  EXPECT_EQ(HumanPercent(0.3745), "37.5%");
  EXPECT_EQ(HumanPercent(1), "100%");
  EXPECT_EQ(HumanPercent(0.99995), "100%");
  EXPECT_EQ(HumanPercent(0.05), "5.00%");
  EXPECT_EQ(HumanPercent(0.0999999), "10.0%");
  EXPECT_EQ(HumanPercent(0.001234), "0.123%");
  EXPECT_EQ(HumanPercent(0), "0%");
  EXPECT_EQ(HumanPercent(1e-7), "<0.01%");
}

// Independent reading of "48.9Ti": mantissa 489, 1 decimal, 2^40 bytes
// per "Ti" (canonical units per suffix).
struct Reading {
  __int128 mantissa = 0;
  int decimals = 0;
  __int128 per_suffix = 1;
  int significant = 0;  // digits from the first non-zero one
  // mantissa * per_suffix / 10^decimals, compared with amount exactly.
  __int128 Scaled(int64_t amount) const {
    __int128 p = 1;
    for (int i = 0; i < decimals; ++i) p *= 10;
    return static_cast<__int128>(amount) * p;
  }
  bool Exact(int64_t amount) const { return mantissa * per_suffix == Scaled(amount); }
  // |mantissa * per_suffix - amount * 10^d| <= per_suffix / 2 (half the last digit).
  bool WithinHalfDigit(int64_t amount) const {
    __int128 diff = mantissa * per_suffix - Scaled(amount);
    if (diff < 0) diff = -diff;
    return 2 * diff <= per_suffix;
  }
};

Reading Read(const std::string& resource, const std::string& text) {
  const bool bytes = UnitOf(resource) == ResourceUnit::kBytes;
  const __int128 unit = bytes ? 1 : 1000;  // canonical per whole unit
  static const std::map<std::string, __int128> kMult = {
      {"Ki", __int128{1} << 10}, {"Mi", __int128{1} << 20}, {"Gi", __int128{1} << 30},
      {"Ti", __int128{1} << 40}, {"Pi", __int128{1} << 50}, {"Ei", __int128{1} << 60},
      {"k", 1000}, {"M", 1000000}, {"G", 1000000000}, {"T", 1000000000000}, {"P", 1000000000000000}};
  Reading r;
  size_t i = 0;
  bool frac = false, seen_nonzero = false;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      frac = true;
      continue;
    }
    r.mantissa = r.mantissa * 10 + (text[i] - '0');
    r.decimals += frac;
    seen_nonzero |= text[i] != '0';
    r.significant += seen_nonzero;
  }
  const std::string suffix = text.substr(i);
  if (suffix == "m") r.per_suffix = 1;  // milli-units
  else if (suffix.empty()) r.per_suffix = unit;
  else r.per_suffix = kMult.at(suffix) * unit;
  return r;
}

TEST(HumanQuantity, ThreeSignificantDigitsInTheLargestUnit) {
  hdrf::testing::Rng rng(15);
  for (int i = 0; i < 200000; ++i) {
    const std::string resource = (i % 3 == 0) ? "cpu" : (i % 3 == 1) ? "memory" : "nvidia.com/gpu";
    // Log-uniform amounts over the whole int64 range.
    const int bits = static_cast<int>(rng.Uniform(1, 63));
    const int64_t amount = static_cast<int64_t>(rng.Next() >> (64 - bits));
    if (amount == kUnlimited) continue;
    const std::string text = HumanQuantity(resource, amount);
    SCOPED_TRACE(resource + " " + std::to_string(amount) + " -> " + text);
    const Reading r = Read(resource, text);
    const bool bytes = UnitOf(resource) == ResourceUnit::kBytes;
    if ((bytes && amount < 1024) || (!bytes && amount < 1000)) {
      EXPECT_TRUE(r.Exact(amount));  // small amounts are exact integers
      continue;
    }
    // Rounded to its last digit: within half of it.
    EXPECT_TRUE(r.WithinHalfDigit(amount));
    // The largest unit: the number is at least 1 and below the next unit.
    __int128 p = 1;
    for (int k = 0; k < r.decimals; ++k) p *= 10;
    EXPECT_GE(r.mantissa, p);
    EXPECT_LT(r.mantissa, (bytes ? 1024 : 1000) * p);
    // Three significant digits (four for 1000..1023 of a binary unit), or
    // fewer when exact (trailing zeros dropped).
    const int want = r.mantissa >= 1000 * p ? 4 : 3;
    if (r.Exact(amount)) {
      EXPECT_LE(r.significant, want);
    } else {
      EXPECT_EQ(r.significant, want);
    }
  }
}

}  // namespace
}  // namespace hdrf::tools
