// The hdrf executable's jemalloc settings (tools/malloc_conf.cc) as jemalloc
// applies them: its statistics at exit (MALLOC_CONF=stats_print:true) show
// each option's value in effect, so a build where jemalloc does not see the
// executable's `malloc_conf` (the file left out, the symbol not exported)
// fails here. Built only when jemalloc is linked (tests/tools/meson.build).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/run_shell.h"

namespace {

using ::testing::HasSubstr;

std::string Bin() {
  const char* bin = std::getenv("HDRF_BIN");
  return bin ? bin : "";
}

// jemalloc's statistics printed at exit of `hdrf version`, options only
// ("J": JSON; "g": general information, the options among them; the
// letters name what to leave out: merged, arena, bin, large, mutex, extent
// and HPA statistics).
std::string ExitStats(const std::string& env) {
  return hdrf::testing::RunShell(env + " MALLOC_CONF=\"$MALLOC_CONF${MALLOC_CONF:+,}stats_print:true," +
                                 "stats_print_opts:Jmablxeh\" '" + Bin() + "' version 2>&1 >/dev/null")
      .out;
}

TEST(MallocConf, TheExecutableSetsItsOptions) {
  ASSERT_FALSE(Bin().empty()) << "HDRF_BIN must name the hdrf binary";
  const std::string stats = ExitStats("");
  EXPECT_THAT(stats, HasSubstr("\"narenas\":1,")) << stats.substr(0, 2000);
  EXPECT_THAT(stats, HasSubstr("\"dirty_decay_ms\":1000,")) << stats.substr(0, 2000);
}

// MALLOC_CONF in the environment still overrides them, option by option.
TEST(MallocConf, TheEnvironmentOverridesThem) {
  ASSERT_FALSE(Bin().empty()) << "HDRF_BIN must name the hdrf binary";
  const std::string stats = ExitStats("MALLOC_CONF=dirty_decay_ms:10000");
  EXPECT_THAT(stats, HasSubstr("\"dirty_decay_ms\":10000,")) << stats.substr(0, 2000);
  EXPECT_THAT(stats, HasSubstr("\"narenas\":1,")) << stats.substr(0, 2000);
}

}  // namespace
