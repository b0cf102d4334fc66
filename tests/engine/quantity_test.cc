#include "hdrf/quantity.h"

#include <gtest/gtest.h>

namespace hdrf {
namespace {

int64_t Q(const char* r, const char* t) {
  auto v = ParseQuantity(r, t);
  EXPECT_TRUE(v.ok()) << r << " " << t << ": " << v.status().ToString();
  return v.ok() ? *v : -1;
}

std::string Err(const char* r, const char* t) {
  auto v = ParseQuantity(r, t);
  EXPECT_FALSE(v.ok()) << r << " " << t;
  return v.ok() ? "" : v.status().message();
}

TEST(QuantityTest, CpuIsMillicores) {
  EXPECT_EQ(Q("cpu", "2"), 2000);
  EXPECT_EQ(Q("cpu", "2c"), 2000);
  EXPECT_EQ(Q("cpu", "500m"), 500);
  EXPECT_EQ(Q("cpu", "0.5"), 500);
  EXPECT_EQ(Q("cpu", "1.25"), 1250);
  EXPECT_EQ(Q("cpu", "+3"), 3000);
  EXPECT_EQ(Q("cpu", "1k"), 1000000);
  EXPECT_EQ(Q("cpu", "0"), 0);
  EXPECT_EQ(Q("cpu", " 4 "), 4000);
}

TEST(QuantityTest, MemoryIsBytes) {
  EXPECT_EQ(Q("memory", "1Gi"), 1073741824);
  EXPECT_EQ(Q("memory", "1G"), 1000000000);
  EXPECT_EQ(Q("memory", "30Gi"), 30LL * 1073741824);
  EXPECT_EQ(Q("memory", "1.5Ki"), 1536);
  EXPECT_EQ(Q("memory", "1000m"), 1);  // m on memory: exact when whole bytes
  EXPECT_EQ(Q("memory", "128974848"), 128974848);
  EXPECT_EQ(Q("memory", "129e6"), 129000000);
  EXPECT_EQ(Q("memory", "1E"), 1000000000000000000LL);
}

TEST(QuantityTest, OtherResourcesAreMilliUnits) {
  EXPECT_EQ(Q("nvidia.com/gpu", "1"), 1000);
  EXPECT_EQ(Q("pods", "110"), 110000);
  EXPECT_EQ(Q("example.com/foo", "250m"), 250);
}

TEST(QuantityTest, ErrorsNameTheText) {
  EXPECT_NE(Err("cpu", "-1").find("'-1'"), std::string::npos);
  EXPECT_NE(Err("cpu", "-1").find("negative"), std::string::npos);
  EXPECT_NE(Err("cpu", "1x").find("unknown suffix 'x'"), std::string::npos);
  EXPECT_NE(Err("cpu", "0.5m").find("finer"), std::string::npos);
  EXPECT_NE(Err("memory", "1500m").find("finer than one byte"), std::string::npos);
  EXPECT_NE(Err("memory", "0.5").find("finer"), std::string::npos);
  EXPECT_NE(Err("cpu", "").find("empty"), std::string::npos);
  EXPECT_NE(Err("cpu", "abc").find("'abc'"), std::string::npos);
  EXPECT_NE(Err("cpu", "1..2").find("'1..2'"), std::string::npos);
  EXPECT_NE(Err("memory", "9Ei").find("too large"), std::string::npos);
  EXPECT_NE(Err("cpu", "10E").find("too large"), std::string::npos);
  EXPECT_NE(Err("memory", "99999999999999999999999").find("too large"), std::string::npos);
  Err("cpu", "1e");
  Err("cpu", "1Kib");
}

TEST(QuantityTest, FormatIsExactAndShort) {
  EXPECT_EQ(FormatQuantity("cpu", 1500), "1500m");
  EXPECT_EQ(FormatQuantity("cpu", 2000), "2");
  EXPECT_EQ(FormatQuantity("memory", 1073741824), "1Gi");
  EXPECT_EQ(FormatQuantity("memory", 1000), "1000");
  EXPECT_EQ(FormatQuantity("memory", 1536), "1536");
  EXPECT_EQ(FormatQuantity("nvidia.com/gpu", 3000), "3");
  EXPECT_EQ(FormatQuantity("cpu", kUnlimited), "inf");
  for (const char* t : {"1500m", "2", "7Gi", "3Ki", "12"}) {
    const char* r = t[0] == '7' || t[0] == '3' ? "memory" : "cpu";
    EXPECT_EQ(FormatQuantity(r, Q(r, t)), t);
  }
}

TEST(QuantityTest, KnownResourceNames) {
  EXPECT_TRUE(IsKnownResourceName("cpu"));
  EXPECT_TRUE(IsKnownResourceName("memory"));
  EXPECT_TRUE(IsKnownResourceName("nvidia.com/gpu"));
  EXPECT_TRUE(IsKnownResourceName("hugepages-2Mi"));
  EXPECT_FALSE(IsKnownResourceName("cpus"));
  EXPECT_FALSE(IsKnownResourceName("gpu"));
  EXPECT_FALSE(IsKnownResourceName("a/b/c"));
}

}  // namespace
}  // namespace hdrf
