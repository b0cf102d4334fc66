// `hdrf version` and `hdrf --version` as a user runs them (the built binary,
// HDRF_BIN): both print the four fields of hdrf::GetBuildInfo, with the
// values of the library the test links, as lines and as JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "hdrf/build_info.h"
#include "hdrf/c.h"
#include "hdrf/version.h"
#include "tests/run_shell.h"

namespace {

using ::testing::HasSubstr;

std::string Bin() {
  const char* bin = std::getenv("HDRF_BIN");
  return bin ? bin : "";
}

hdrf::testing::ShellResult RunHdrf(const std::string& args) {
  return hdrf::testing::RunShell("'" + Bin() + "' " + args + " 2>/dev/null");
}

TEST(Version, TheLibraryAgreesWithItsHeaders) {
  const hdrf::BuildInfo b = hdrf::GetBuildInfo();
  EXPECT_STREQ(b.version, HDRF_VERSION_STRING);
  EXPECT_EQ(b.c_api_version, HDRF_C_API_VERSION);
  EXPECT_GE(b.store_format_version, 1u);
  ASSERT_NE(b.build_type, nullptr);
  EXPECT_STRNE(b.build_type, "");
}

// Both forms, as lines and with --json, print exactly the library's values.
TEST(Version, BothFormsPrintTheFourFields) {
  ASSERT_FALSE(Bin().empty()) << "HDRF_BIN must name the hdrf binary";
  const hdrf::BuildInfo b = hdrf::GetBuildInfo();
  const std::string c_api = std::to_string(b.c_api_version), store = std::to_string(b.store_format_version);
  const std::string lines = std::string("version ") + b.version + "\nc_api_version " + c_api +
                            "\nstore_format_version " + store + "\nbuild_type " + b.build_type + "\n";
  const std::string json = std::string("{\"version\": \"") + b.version + "\", \"c_api_version\": " + c_api +
                           ", \"store_format_version\": " + store + ", \"build_type\": \"" + b.build_type +
                           "\"}\n";
  const struct {
    const char* args;
    const std::string& want;
  } cases[] = {{"version", lines}, {"--version", lines}, {"version --json", json}, {"--version --json", json}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    hdrf::testing::ShellResult r = RunHdrf(c.args);
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out, c.want);
  }
}

TEST(Version, HelpAndBadFlags) {
  ASSERT_FALSE(Bin().empty()) << "HDRF_BIN must name the hdrf binary";
  hdrf::testing::ShellResult help = RunHdrf("version --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("store_format_version"));
  EXPECT_EQ(RunHdrf("--version --nope").code, 2);
  EXPECT_THAT(RunHdrf("--help").out, HasSubstr("--version"));
}

}  // namespace
