// `hdrf simulate` as a user runs it (HDRF_BIN), on the shipped sample
// (tests/data/simulate): exit codes, the JSON report on the last stdout
// line, --jobs-out, --compare, --plot, and bad input refused with nothing
// simulated (no output file written).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/run_shell.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using Result = hdrf::testing::ShellResult;
using hdrf::testing::Slurp;

class SimulateCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* bin = std::getenv("HDRF_BIN");
    const char* data = std::getenv("HDRF_TEST_DATA");
    ASSERT_NE(bin, nullptr) << "HDRF_BIN must name the hdrf binary";
    ASSERT_NE(data, nullptr) << "HDRF_TEST_DATA must name tests/data";
    bin_ = bin;
    data_ = std::string(data) + "/simulate";
    char tmpl[] = "/tmp/hdrf_simulate_cli_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  static Result Run(const std::string& args) {
    return hdrf::testing::RunCaptured("'" + bin_ + "' simulate " + args, dir_);
  }
  static std::string Sample() { return "--config " + data_ + "/queues.yaml --workload " + data_ + "/workload.csv"; }
  static std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }
  static std::string bin_, data_, dir_;
};
std::string SimulateCli::bin_, SimulateCli::data_, SimulateCli::dir_;

TEST_F(SimulateCli, SampleJsonAndJobsOut) {
  Result r = Run(Sample() + " --json --jobs-out " + dir_ + "/jobs.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.last_line());
  EXPECT_EQ(j["jobs"], 300);
  EXPECT_EQ(j["unscheduled"], 0);
  EXPECT_GT(j["makespan"].get<double>(), 0);
  EXPECT_GT(j["utilization"]["nvidia.com/gpu"].get<double>(), 0.5);
  ASSERT_EQ(j["queues"].size(), 7u);
  EXPECT_EQ(j["queues"][0]["path"], "root");
  EXPECT_TRUE(j["queues"][2]["wait"]["p99"].is_number());
  const std::string jobs = Slurp(dir_ + "/jobs.csv");
  EXPECT_THAT(jobs, StartsWith("name,queue,arrival,first_start,last_start,end\njob-000,root/prod/batch,"));
  EXPECT_EQ(std::count(jobs.begin(), jobs.end(), '\n'), 301);
}

TEST_F(SimulateCli, TableCompareAndPlot) {
  Result r = Run(Sample() + " --compare " + data_ + "/queues_flat.yaml --plot " + dir_ + "/p.svg");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("QUEUE"));
  EXPECT_THAT(r.out, HasSubstr("    nlp"));
  EXPECT_THAT(r.out, HasSubstr("--compare"));
  EXPECT_THAT(r.out, HasSubstr(" -> "));
  const std::string svg = Slurp(dir_ + "/p.svg");
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("root/research/nlp"));
  EXPECT_THAT(svg, HasSubstr("wait-time CDF"));
  // Without --reclaim: no eviction marks.
  EXPECT_THAT(svg, Not(HasSubstr("class=\"markers\"")));
  EXPECT_THAT(svg, Not(HasSubstr("evictions (")));
}

// --reclaim --plot: a tick on the shares chart's time axis per eviction
// instant (one path of "M x,y v-10" segments, one per pixel column) and the
// legend entry "evictions (N plans)", N = plans_applied of the report.
TEST_F(SimulateCli, PlotMarksEvictionsWithReclaim) {
  Result r = Run(Sample() + " --reclaim --json --plot " + dir_ + "/r.svg");
  ASSERT_EQ(r.code, 0) << r.err;
  const int64_t plans = nlohmann::json::parse(r.last_line())["plans_applied"].get<int64_t>();
  ASSERT_GT(plans, 0) << "the sample should need plans with --reclaim";
  const std::string svg = Slurp(dir_ + "/r.svg");
  const std::string legend = "evictions (" + std::to_string(plans) + " plans)";
  EXPECT_THAT(svg, HasSubstr("<title>" + legend + "</title>"));
  EXPECT_THAT(svg, HasSubstr(">" + legend + "</text>"));
  // The marks: in the first chart (shares over time), not the CDF.
  const size_t marks = svg.find("<g class=\"markers\">"), cdf = svg.find("wait-time CDF");
  ASSERT_NE(marks, std::string::npos);
  EXPECT_LT(marks, cdf);
  EXPECT_EQ(svg.find("<g class=\"markers\">", marks + 1), std::string::npos) << "marks in one chart only";
  const size_t d = svg.find("d=\"M", marks), end = svg.find('"', d + 3);
  ASSERT_NE(d, std::string::npos);
  const std::string path = svg.substr(d + 3, end - d - 3);
  const auto ticks = std::count(path.begin(), path.end(), 'M');
  EXPECT_GT(ticks, 1);
  EXPECT_LE(ticks, plans);
  EXPECT_EQ(std::count(path.begin(), path.end(), 'v'), ticks);
}

TEST_F(SimulateCli, ClusterFlagReplacesTheConfigs) {
  Result r = Run(Sample() + " --json --cluster cpu=2048,memory=16Ti,nvidia.com/gpu=256");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.last_line());
  EXPECT_LT(j["utilization"]["nvidia.com/gpu"].get<double>(), 0.5);
  Result bad = Run(Sample() + " --cluster gpus=1");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("unknown resource 'gpus'"));
}

TEST_F(SimulateCli, BadWorkloadSimulatesNothing) {
  const std::string w = Write("bad.csv", "name,queue,arrival,duration,cpu\na,root/prod/batch,1,1,1\nb,root/prod/batch,1.0005,1,1\n");
  Result r = Run("--config " + data_ + "/queues.yaml --workload " + w + " --jobs-out " + dir_ + "/never.csv --json");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:3: arrival:"));
  EXPECT_EQ(r.out, "");
  EXPECT_NE(::access((dir_ + "/never.csv").c_str(), F_OK), 0);
  const std::string col = Write("col.csv", "name,queue,arrival,duration,gpu\n");
  EXPECT_THAT(Run("--config " + data_ + "/queues.yaml --workload " + col).err, HasSubstr("unknown field 'gpu'"));
}

TEST_F(SimulateCli, RefusedJobsAreNamedAndTheRunGoesOn) {
  const std::string w = Write("ref.csv", "name,queue,arrival,duration,cpu\na,root/nope,0,1,1\nb,root/prod/batch,0,1,1\n");
  Result r = Run("--config " + data_ + "/queues.yaml --workload " + w + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("ref.csv:2: job a refused"));
  EXPECT_THAT(r.err, HasSubstr("root/nope"));
  auto j = nlohmann::json::parse(r.last_line());
  EXPECT_EQ(j["unscheduled"], 1);
  EXPECT_EQ(j["refused"], 1);
}

TEST_F(SimulateCli, UsageErrors) {
  EXPECT_EQ(Run("--config " + data_ + "/queues.yaml").code, 2);
  EXPECT_EQ(Run(Sample() + " --no-such-flag").code, 2);
  EXPECT_EQ(Run(Sample() + " --plot /nonexistent/dir/p.svg").code, 2);
  EXPECT_EQ(Run("--help").code, 0);
  EXPECT_EQ(Run("--config /nonexistent.yaml --workload " + data_ + "/workload.csv").code, 1);
}

// A budget that is not a whole number of tasks is refused by name, in a
// line that reads (not CLI11's range of doubles), and nothing runs.
TEST_F(SimulateCli, BadReclaimBudgetIsNamed) {
  for (const std::string bad : {"-1", "abc", "1.5", "1e3"}) {
    const auto r = Run(Sample() + " --reclaim --json --reclaim-budget " + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--reclaim-budget"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'" + bad + "' is not a whole number"), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 200u) << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
  EXPECT_EQ(Run(Sample() + " --reclaim --json --reclaim-budget 0").code, 0);
}

}  // namespace
