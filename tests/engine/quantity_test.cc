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

// Each item of a list gives what ParseQuantity gives for it alone.
TEST(ResourceListTest, ItemsParseLikeSingleQuantities) {
  auto a = ParseResourceList(" cpu = 500m , memory=1Gi,nvidia.com/gpu=2 ");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, (ResourceAmounts{{"cpu", Q("cpu", "500m")}, {"memory", Q("memory", "1Gi")},
                                 {"nvidia.com/gpu", Q("nvidia.com/gpu", "2")}}));
  EXPECT_TRUE(ParseResourceList("").value().empty());
  EXPECT_TRUE(ParseResourceList("  ").value().empty());
  ResourceListOptions semi;
  semi.separators = ";,";
  semi.skip_empty_items = true;
  auto b = ParseResourceList("cpu=2;;memory=1Gi,", semi);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(*b, (ResourceAmounts{{"cpu", 2000}, {"memory", int64_t{1} << 30}}));
  ResourceListOptions any;
  any.known_names_only = false;
  EXPECT_EQ(ParseResourceList("example.org/x=3,widgets=1", any).value(),
            (ResourceAmounts{{"example.org/x", 3000}, {"widgets", 1000}}));
}

TEST(ResourceListTest, ErrorsNameTheItem) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"cpu", "'cpu' is not RESOURCE=QUANTITY"}, Case{"=1", "'=1' has no resource name"},
                        Case{"cpus=4", "unknown resource 'cpus'"}, Case{"cpu=1,cpu=2", "resource 'cpu' given twice"},
                        Case{"cpu=1,,memory=1", "'' is not RESOURCE=QUANTITY"}, Case{"cpu=lots", "cpu: "},
                        Case{"cpu=-1", "cpu: "}}) {
    auto r = ParseResourceList(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.text << ": " << r.status().message();
  }
  ResourceAmounts out{{"cpu", 1}};
  EXPECT_FALSE(AddResourceQuantity("cpu", "2", &out).ok());
  EXPECT_EQ(out.at("cpu"), 1);  // unchanged
}

}  // namespace
}  // namespace hdrf
