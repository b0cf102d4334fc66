// hdrf workload gen (api/hdrf/workload_gen.h): the same seed gives the same
// bytes; every line is a valid docs/spec.md §13 job (checked field by field here);
// the samplers have the distributions they claim (means over 10^5
// samples); the queue config it writes loads and holds every job's queue.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "hdrf/config.h"
#include "hdrf/workload_gen.h"
#include "api/sim/workload_gen.h"
#include "hdrf/quantity.h"

namespace hdrf {
namespace {

std::string Generate(const WorkloadGenOptions& o, WorkloadGenSummary* sum = nullptr) {
  std::string out;
  auto s = GenerateWorkload(o, [&](std::string_view c) {
    out += c;
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (sum && s.ok()) *sum = *s;
  return out;
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  std::string x;
  while (std::getline(ss, x, ',')) f.push_back(x);
  if (!line.empty() && line.back() == ',') f.push_back("");
  return f;
}

// Seconds with at most 3 decimals -> ms; -1 when malformed.
int64_t Millis(const std::string& s) {
  const size_t dot = s.find('.');
  if (s.empty() || s.find_first_not_of("0123456789.") != std::string::npos) return -1;
  if (dot != std::string::npos && (s.size() - dot - 1 > 3 || s.size() - dot - 1 == 0)) return -1;
  std::string frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  while (frac.size() < 3) frac += '0';
  return std::stoll(s.substr(0, dot)) * 1000 + std::stoll(frac);
}

// Checks every line against docs/spec.md §13; returns "" or the first problem.
// Fills the arrivals (ms) and the queues seen.
std::string CheckCsv(const std::string& csv, std::vector<int64_t>* arrivals, std::set<std::string>* queues) {
  std::stringstream in(csv);
  std::string line;
  std::getline(in, line);
  const auto header = Split(line);
  const std::vector<std::string> fixed = {"name", "queue", "arrival", "duration", "user", "tasks", "weight"};
  if (header.size() < fixed.size() || !std::equal(fixed.begin(), fixed.end(), header.begin())) return "header " + line;
  for (size_t i = fixed.size(); i < header.size(); ++i)
    if (!IsKnownResourceName(header[i])) return "resource column " + header[i];
  std::set<std::string> names;
  int n = 1;
  int64_t prev = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto f = Split(line);
    const std::string at = "line " + std::to_string(n) + ": ";
    if (f.size() != header.size()) return at + "field count";
    if (f[0].empty() || !names.insert(f[0]).second) return at + "name " + f[0];
    if (f[1].rfind("root/", 0) != 0) return at + "queue " + f[1];
    const int64_t a = Millis(f[2]), d = Millis(f[3]);
    if (a < 0) return at + "arrival " + f[2];
    if (d <= 0) return at + "duration " + f[3];
    if (a < prev) return at + "arrivals decrease";
    prev = a;
    if (f[4].empty()) return at + "user";
    if (std::stoll(f[5]) < 1) return at + "tasks " + f[5];
    if (f[6] != "1") return at + "weight " + f[6];
    bool any = false;
    for (size_t i = fixed.size(); i < f.size(); ++i) {
      if (f[i].empty()) continue;
      auto q = ParseQuantity(header[i], f[i]);
      if (!q.ok()) return at + header[i] + " " + q.status().message();
      if (FormatQuantity(header[i], *q) != f[i]) return at + header[i] + " not canonical " + f[i];
      any = true;
    }
    if (!any) return at + "empty task";
    if (arrivals) arrivals->push_back(a);
    if (queues) queues->insert(f[1]);
  }
  return "";
}

TEST(WorkloadGen, SameSeedSameBytesOtherSeedOther) {
  WorkloadGenOptions o;
  o.jobs = 20000;
  o.seed = 7;
  const std::string a = Generate(o), b = Generate(o);
  EXPECT_EQ(a, b);
  o.seed = 8;
  EXPECT_NE(Generate(o), a);
}

TEST(WorkloadGen, EveryLineIsAValidJob) {
  WorkloadGenOptions o;
  o.jobs = 30000;
  o.queues = 13;
  o.fanout = 3;
  o.queue_skew = 1.2;
  o.tasks = *Distribution::Parse("pareto:1.2,1");
  o.duration = *Distribution::Parse("pareto:1.5,0.0004");  // many below 1 ms: clamped to 0.001
  WorkloadGenSummary sum;
  const std::string csv = Generate(o, &sum);
  std::set<std::string> queues;
  EXPECT_EQ(CheckCsv(csv, nullptr, &queues), "");
  EXPECT_EQ(sum.jobs, 30000u);
  // Every queue a job names is a leaf of the generated tree.
  std::set<std::string> leaves, parents;
  for (const auto& q : WorkloadQueues(o)) leaves.insert(q.path);
  for (const auto& q : leaves) parents.insert(q.substr(0, q.rfind('/')));
  for (const auto& q : queues) {
    EXPECT_TRUE(leaves.count(q)) << q;
    EXPECT_FALSE(parents.count(q)) << q;
  }
  EXPECT_EQ(queues.size(), 13u);  // skewed, but 30000 jobs reach all 13
}

TEST(WorkloadGen, BurstsArriveTogether) {
  WorkloadGenOptions o;
  o.jobs = 1000;
  o.arrivals = WorkloadGenOptions::Arrivals::kBursts;
  o.burst_size = *Distribution::Parse("fixed:50");
  std::vector<int64_t> arrivals;
  EXPECT_EQ(CheckCsv(Generate(o), &arrivals, nullptr), "");
  std::map<int64_t, int> per_instant;
  for (int64_t a : arrivals) ++per_instant[a];
  EXPECT_EQ(per_instant.size(), 20u);
  for (auto& [t, n] : per_instant) EXPECT_EQ(n, 50) << t;
}

TEST(WorkloadGen, PoissonInterArrivalsHaveMeanOneOverRate) {
  WorkloadGenOptions o;
  o.jobs = 100000;
  o.rate = 4;  // mean gap 0.25 s
  std::vector<int64_t> a;
  ASSERT_EQ(CheckCsv(Generate(o), &a, nullptr), "");
  const double mean = static_cast<double>(a.back()) / 1000 / static_cast<double>(a.size());
  // Standard error of the mean: 0.25/sqrt(1e5) ~ 0.0008; allow 5 of them.
  EXPECT_NEAR(mean, 0.25, 0.004);
  // Exponential: P(gap > mean) = e^-1.
  int64_t above = 0;
  for (size_t i = 1; i < a.size(); ++i) above += a[i] - a[i - 1] > 250;
  EXPECT_NEAR(static_cast<double>(above) / static_cast<double>(a.size()), std::exp(-1.0), 0.01);
}

TEST(WorkloadGen, SamplersHaveTheirMeans) {
  sim::GenRng rng(42);
  auto mean_of = [&](const char* spec) {
    const Distribution d = *Distribution::Parse(spec);
    double s = 0;
    for (int i = 0; i < 100000; ++i) s += sim::Sample(d, rng);
    return s / 100000;
  };
  EXPECT_NEAR(mean_of("exp:3"), 3.0, 0.06);
  EXPECT_NEAR(mean_of("uniform:2,4"), 3.0, 0.02);
  EXPECT_NEAR(mean_of("lognormal:1,0.5"), std::exp(1.0 + 0.125), 0.03);
  EXPECT_NEAR(mean_of("pareto:3,2"), 3.0, 0.08);  // alpha·xmin/(alpha-1)
  EXPECT_EQ(mean_of("fixed:5"), 5.0);
}

TEST(WorkloadGen, BadOptionsAreNamed) {
  for (const char* bad : {"lognormal:1", "pareto:0,1", "exp:-1", "normal:1,2", "uniform:3,2", "exp:x"})
    EXPECT_FALSE(Distribution::Parse(bad).ok()) << bad;
  EXPECT_FALSE(ParseWorkloadShape("cpus=1").ok());
  EXPECT_FALSE(ParseWorkloadShape("cpu=1x").ok());
  EXPECT_FALSE(ParseWorkloadShape("cpu=1@0").ok());
  EXPECT_EQ(ParseWorkloadShape("cpu=500m,memory=1Gi@2")->weight, 2);
  WorkloadGenOptions o;
  o.queues = 0;
  auto s = GenerateWorkload(o, [](std::string_view) { return Status::Ok(); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("queues"), std::string::npos);
}

TEST(WorkloadGen, ConfigLoadsWithTheTreeAndCluster) {
  WorkloadGenOptions o;
  o.jobs = 5000;
  o.queues = 10;
  o.fanout = 3;
  o.max_weight = 5;
  WorkloadGenSummary sum;
  Generate(o, &sum);
  auto cfg = ParseQueueConfig(WorkloadConfigYaml(o, sum.cluster), "gen.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->cluster, sum.cluster);
  const auto want = WorkloadQueues(o);
  ASSERT_EQ(cfg->queues.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(cfg->queues[i].path, want[i].path);
    EXPECT_EQ(cfg->queues[i].weight, want[i].weight);
  }
  // The cluster serves the offered load at 90% and holds the largest task.
  for (const auto& [r, v] : sum.offered) EXPECT_GE(static_cast<double>(sum.cluster.at(r)), v / 0.9) << r;
  EXPECT_GE(sum.cluster.at("nvidia.com/gpu"), 1000);
}

}  // namespace
}  // namespace hdrf
