// api/hdrf/metrics.h: the Prometheus text exposition format 0.0.4, checked by a
// small strict parser (names, one HELP and TYPE per family before its
// samples, families contiguous, label escaping, values that parse,
// histogram buckets), the values on worked cases, and `hdrf queues
// --metrics` run as a user runs it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/metrics.h"
#include "tests/run_shell.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;
};

struct Family {
  std::string type, help;
  std::vector<Sample> samples;
};

struct Parsed {
  std::map<std::string, Family> families;
  std::vector<std::string> order;
  // The value of the sample `name` with exactly `labels`; NaN if absent.
  double Value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& [fname, f] : families)
      for (const Sample& s : f.samples)
        if (s.name == name && s.labels == labels) return s.value;
    return std::nan("");
  }
  bool Has(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& [fname, f] : families)
      for (const Sample& s : f.samples)
        if (s.name == name && s.labels == labels) return true;
    return false;
  }
};

// [a-zA-Z_:][a-zA-Z0-9_:]* (metric names; label names without ':'). Not
// std::regex: g++ 12 warns falsely (-Wmaybe-uninitialized) inside it.
bool ValidName(const std::string& s, bool colon) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}
bool ValidMetricName(const std::string& s) { return ValidName(s, true); }
bool ValidLabelName(const std::string& s) { return ValidName(s, false); }

// The family a sample name belongs to (histograms add suffixes).
std::string FamilyOf(const std::string& sample, const std::map<std::string, Family>& fams) {
  if (fams.count(sample)) return sample;
  for (const char* suf : {"_bucket", "_sum", "_count"}) {
    const std::string s(suf);
    if (sample.size() > s.size() && sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
      std::string base = sample.substr(0, sample.size() - s.size());
      auto it = fams.find(base);
      if (it != fams.end() && it->second.type == "histogram") return base;
    }
  }
  return "";
}

// Parses `text` strictly into *out; every violation is a test failure.
void ParseInto(const std::string& text, Parsed* out) {
  Parsed& p = *out;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "the last line must end with a newline";
  std::set<std::string> done;  // families whose samples are over
  std::string current;
  std::set<std::string> seen_series;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    SCOPED_TRACE("line " + std::to_string(n) + ": " + line);
    ASSERT_FALSE(line.empty()) << "empty line";
    if (line.rfind("# ", 0) == 0) {
      std::istringstream ls(line.substr(2));
      std::string kw, name;
      ls >> kw >> name;
      ASSERT_TRUE(kw == "HELP" || kw == "TYPE") << "unknown comment";
      ASSERT_TRUE(ValidMetricName(name)) << name;
      if (name != current) {
        ASSERT_EQ(done.count(name), 0u) << "family " << name << " appears twice";
        if (!current.empty()) done.insert(current);
        current = name;
      }
      Family& f = p.families[name];
      if (f.help.empty() && f.type.empty()) p.order.push_back(name);
      std::string rest;
      std::getline(ls, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (kw == "HELP") {
        EXPECT_TRUE(f.help.empty()) << "second HELP for " << name;
        EXPECT_TRUE(f.samples.empty()) << "HELP after samples";
        EXPECT_FALSE(rest.empty());
        f.help = rest;
      } else {
        EXPECT_TRUE(f.type.empty()) << "second TYPE for " << name;
        EXPECT_TRUE(f.samples.empty()) << "TYPE after samples";
        EXPECT_TRUE(rest == "counter" || rest == "gauge" || rest == "histogram" ||
                    rest == "summary" || rest == "untyped")
            << rest;
        f.type = rest;
      }
      continue;
    }
    // A sample: name[{labels}] value
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    ASSERT_TRUE(ValidMetricName(s.name)) << s.name;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        ASSERT_NE(eq, std::string::npos);
        std::string lname = line.substr(i, eq - i);
        ASSERT_TRUE(ValidLabelName(lname)) << lname;
        ASSERT_LT(eq + 1, line.size());
        ASSERT_EQ(line[eq + 1], '"');
        std::string v;
        size_t k = eq + 2;
        for (; k < line.size() && line[k] != '"'; ++k) {
          if (line[k] == '\\') {
            ASSERT_LT(k + 1, line.size());
            char c = line[++k];
            ASSERT_TRUE(c == '\\' || c == '"' || c == 'n') << "bad escape \\" << c;
            v += c == 'n' ? '\n' : c;
          } else {
            v += line[k];
          }
        }
        ASSERT_LT(k, line.size()) << "unterminated label value";
        EXPECT_EQ(s.labels.count(lname), 0u) << "label twice";
        s.labels[lname] = v;
        i = k + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      ASSERT_LT(i, line.size());
      ++i;  // '}'
    }
    ASSERT_LT(i, line.size());
    ASSERT_EQ(line[i], ' ');
    const std::string val = line.substr(i + 1);
    ASSERT_FALSE(val.empty());
    if (val == "NaN") {
      s.value = std::nan("");
    } else if (val == "+Inf") {
      s.value = INFINITY;
    } else if (val == "-Inf") {
      s.value = -INFINITY;
    } else {
      char* end = nullptr;
      s.value = std::strtod(val.c_str(), &end);
      ASSERT_EQ(*end, '\0') << "value '" << val << "' does not parse";
    }
    const std::string fam = FamilyOf(s.name, p.families);
    ASSERT_FALSE(fam.empty()) << "sample " << s.name << " has no TYPE before it";
    ASSERT_EQ(fam, current) << "sample of " << fam << " outside its family's block";
    const Family& f = p.families[fam];
    ASSERT_FALSE(f.help.empty()) << "no HELP for " << fam;
    ASSERT_FALSE(f.type.empty()) << "no TYPE for " << fam;
    std::string series = s.name;
    for (auto& [k, v] : s.labels) series += "|" + k + "=" + v;
    EXPECT_TRUE(seen_series.insert(series).second) << "duplicate series " << series;
    p.families[fam].samples.push_back(s);
  }
  for (auto& [name, f] : p.families) {
    EXPECT_FALSE(f.help.empty()) << name;
    EXPECT_FALSE(f.type.empty()) << name;
    if (f.type == "counter") {
      EXPECT_GE(name.size(), 6u);
      EXPECT_EQ(name.substr(name.size() - 6), "_total") << name;
    }
    if (f.type == "histogram") {
      double prev_le = -INFINITY, prev = 0, count = -1, inf = -1;
      for (const Sample& s : f.samples) {
        if (s.name == name + "_bucket") {
          ASSERT_EQ(s.labels.count("le"), 1u);
          const std::string& le = s.labels.at("le");
          const double b = le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr);
          EXPECT_GT(b, prev_le) << "le not increasing";
          EXPECT_GE(s.value, prev) << "buckets not cumulative";
          prev_le = b;
          prev = s.value;
          if (le == "+Inf") inf = s.value;
        } else if (s.name == name + "_count") {
          count = s.value;
        }
      }
      EXPECT_EQ(inf, count) << "+Inf bucket differs from _count in " << name;
    }
  }
}

Parsed Parse(const std::string& text) {
  Parsed p;
  ParseInto(text, &p);
  return p;
}

std::unique_ptr<Engine> WorkedExample() {
  std::vector<QueueSpec> qs(4);
  const char* paths[] = {"root/sci", "root/eng", "root/eng/dev", "root/eng/prod"};
  for (int i = 0; i < 4; ++i) {
    qs[i].path = paths[i];
    qs[i].weight = 50;
  }
  auto e = Engine::Create({{"cpu", 10000}, {"nvidia.com/gpu", 10000}}, qs);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  JobSpec j;
  j.tasks = 10;
  j.name = "sci";
  j.queue = "root/sci";
  j.task = {{"cpu", 1000}, {"nvidia.com/gpu", 1000}};
  EXPECT_TRUE((*e)->Submit(j).ok());
  j.name = "dev";
  j.queue = "root/eng/dev";
  j.task = {{"cpu", 1000}};
  EXPECT_TRUE((*e)->Submit(j).ok());
  j.name = "prod";
  j.queue = "root/eng/prod";
  j.task = {{"nvidia.com/gpu", 1000}};
  EXPECT_TRUE((*e)->Submit(j).ok());
  return std::move(e).value();
}

TEST(Metrics, WorkedExample) {
  auto e = WorkedExample();
  // Two steps, then the metrics agree with the views.
  ASSERT_TRUE(e->Step().ok());
  ASSERT_TRUE(e->Step().ok());
  Parsed p = Parse(MetricsText(*e));
  EXPECT_EQ(p.families.at("hdrf_events_total").type, "counter");
  EXPECT_EQ(p.families.at("hdrf_queue_share").type, "gauge");
  EXPECT_EQ(p.Value("hdrf_events_total"), 5);
  EXPECT_EQ(p.Value("hdrf_jobs"), 3);
  EXPECT_EQ(p.Value("hdrf_queues"), 5);
  EXPECT_EQ(p.Value("hdrf_durability_lag_events"), 0);
  EXPECT_EQ(p.Value("hdrf_cluster_capacity", {{"resource", "nvidia.com/gpu"}}), 10000);
  EXPECT_FALSE(p.families.count("hdrf_event_latency_seconds"));  // none given

  const auto info = e->Queues();
  for (const QueueInfo& q : info) {
    SCOPED_TRACE(q.path);
    EXPECT_EQ(p.Value("hdrf_queue_share", {{"queue", q.path}}), q.share);
    EXPECT_EQ(p.Value("hdrf_queue_key", {{"queue", q.path}}), q.key);
    EXPECT_EQ(p.Value("hdrf_queue_weight", {{"queue", q.path}}), q.weight);
    EXPECT_EQ(p.Value("hdrf_queue_blocked", {{"queue", q.path}}), q.blocked ? 1 : 0);
    EXPECT_EQ(p.Value("hdrf_queue_allocated", {{"queue", q.path}, {"resource", "cpu"}}), q.usage[0]);
    EXPECT_EQ(p.Value("hdrf_queue_state", {{"queue", q.path}, {"state", "open"}}), 1);
    EXPECT_EQ(p.Value("hdrf_queue_state", {{"queue", q.path}, {"state", "closed"}}), 0);
    for (JobState s : {JobState::kPending, JobState::kInqueue, JobState::kRunning, JobState::kUnknown})
      EXPECT_EQ(p.Value("hdrf_queue_jobs", {{"queue", q.path}, {"state", JobStateName(s)}}),
                q.jobs_by_state[static_cast<int>(s)]);
    EXPECT_EQ(p.Value("hdrf_queue_real_capability", {{"queue", q.path}, {"resource", "cpu"}}),
              q.real_capability[0]);
    // Neither capability nor guarantee is set anywhere.
    EXPECT_FALSE(p.Has("hdrf_queue_capability", {{"queue", q.path}, {"resource", "cpu"}}));
    EXPECT_FALSE(p.Has("hdrf_queue_guarantee", {{"queue", q.path}, {"resource", "cpu"}}));
  }
  EXPECT_EQ(p.Value("hdrf_queue_jobs", {{"queue", "root"}, {"state", "Running"}}) +
                p.Value("hdrf_queue_jobs", {{"queue", "root"}, {"state", "Inqueue"}}),
            3);
  // Two tasks allocated in all.
  int64_t cpu = 0, gpu = 0;
  for (const JobInfo& j : e->Jobs()) {
    cpu += j.allocated * j.task[0];
    gpu += j.allocated * j.task[1];
  }
  EXPECT_EQ(p.Value("hdrf_queue_allocated", {{"queue", "root"}, {"resource", "cpu"}}), cpu);
  EXPECT_EQ(p.Value("hdrf_queue_allocated", {{"queue", "root"}, {"resource", "nvidia.com/gpu"}}), gpu);
  EXPECT_EQ(cpu + gpu, 2000);

  // After the fill every resource is saturated: every share is 0 (docs/spec.md §4).
  ASSERT_TRUE(e->Fill().ok());
  Parsed full = Parse(MetricsText(*e));
  EXPECT_EQ(full.Value("hdrf_queue_allocated", {{"queue", "root/eng"}, {"resource", "cpu"}}), 5000);
  EXPECT_EQ(full.Value("hdrf_queue_allocated", {{"queue", "root/eng"}, {"resource", "nvidia.com/gpu"}}),
            5000);
  EXPECT_EQ(full.Value("hdrf_queue_blocked", {{"queue", "root"}}), 1);
  EXPECT_EQ(full.Value("hdrf_events_total"), 18);
}

TEST(Metrics, CapabilityGuaranteeAndStates) {
  std::vector<QueueSpec> qs(2);
  qs[0].path = "root/a";
  qs[0].capability = {{"cpu", 6000}};
  qs[0].guarantee = {{"cpu", 2000}, {"memory", int64_t{1} << 30}};
  qs[1].path = "root/b";
  qs[1].state = QueueState::kClosing;
  qs[1].weight = 2.5;
  auto e = Engine::Create({{"cpu", 10000}, {"memory", int64_t{8} << 30}}, qs);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Parsed p = Parse(MetricsText(**e));
  EXPECT_EQ(p.Value("hdrf_queue_capability", {{"queue", "root/a"}, {"resource", "cpu"}}), 6000);
  EXPECT_FALSE(p.Has("hdrf_queue_capability", {{"queue", "root/a"}, {"resource", "memory"}}));
  EXPECT_EQ(p.Value("hdrf_queue_guarantee", {{"queue", "root/a"}, {"resource", "memory"}}),
            double(int64_t{1} << 30));
  EXPECT_EQ(p.Value("hdrf_queue_real_capability", {{"queue", "root/b"}, {"resource", "cpu"}}), 8000);
  EXPECT_EQ(p.Value("hdrf_queue_state", {{"queue", "root/b"}, {"state", "closing"}}), 1);
  EXPECT_EQ(p.Value("hdrf_queue_state", {{"queue", "root/b"}, {"state", "open"}}), 0);
  EXPECT_EQ(p.Value("hdrf_queue_weight", {{"queue", "root/b"}}), 2.5);

  MetricsOptions mo;
  mo.cluster = false;
  Parsed q = Parse(MetricsText(**e, mo));
  EXPECT_FALSE(q.families.count("hdrf_queue_real_capability"));
  EXPECT_FALSE(q.families.count("hdrf_cluster_capacity"));
  EXPECT_TRUE(q.families.count("hdrf_queue_capability"));
}

TEST(Metrics, LabelValuesAreEscaped) {
  // Queue names cannot hold quotes, backslashes or newlines (docs/config.md
  // "Names": the engine refuses them, and the message shows them escaped),
  // so the label escaping is checked on the function itself.
  std::vector<QueueSpec> qs(1);
  qs[0].path = "root/we\"ird\\name\nx";
  auto e = Engine::Create({{"cpu", 4000}}, qs);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(),
              HasSubstr("queue name 'we\"ird\\x5cname\\x0ax': '\"' at byte 3 is not allowed"));

  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeLabelValue("plain/path-1.2"), "plain/path-1.2");
}

TEST(Metrics, SampleValues) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(1e-6), "1e-06");
  EXPECT_EQ(FormatSampleValue(2.5), "2.5");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatSampleValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatSampleValue(-INFINITY), "-Inf");
  const double third = 1.0 / 3;
  EXPECT_EQ(std::strtod(FormatSampleValue(third).c_str(), nullptr), third);
}

// ---- hdrf queues --metrics ----

using CmdResult = testing::ShellResult;

CmdResult RunHdrf(const std::string& args) {
  const char* bin = std::getenv("HDRF_BIN");
  if (!bin) {
    ADD_FAILURE() << "HDRF_BIN must name the hdrf binary";
    return {};
  }
  return testing::RunShell("'" + std::string(bin) + "' " + args + " 2>/dev/null");
}

TEST(QueuesMetricsCommand, ConfigWithCluster) {
  const char* data = std::getenv("HDRF_TEST_DATA");
  ASSERT_NE(data, nullptr);
  CmdResult r = RunHdrf("queues --config '" + std::string(data) + "/config/hierarchical_queue.yaml' --metrics");
  ASSERT_EQ(r.code, 0) << r.out;
  Parsed p = Parse(r.out);
  EXPECT_EQ(p.Value("hdrf_queue_capability", {{"queue", "root/eng/prod"}, {"resource", "cpu"}}), 20000);
  EXPECT_EQ(p.Value("hdrf_queue_guarantee", {{"queue", "root/eng/prod"}, {"resource", "cpu"}}), 4000);
  EXPECT_EQ(p.Value("hdrf_queue_weight", {{"queue", "root/eng/prod"}}), 8);
  EXPECT_EQ(p.Value("hdrf_queue_state", {{"queue", "root/sci"}, {"state", "closed"}}), 1);
  EXPECT_EQ(p.Value("hdrf_cluster_capacity", {{"resource", "cpu"}}), 30000);
  EXPECT_TRUE(p.Has("hdrf_queue_real_capability", {{"queue", "root/sci"}, {"resource", "nvidia.com/gpu"}}));
  EXPECT_EQ(p.Value("hdrf_jobs"), 0);
  // Without --metrics: the tree, not metrics.
  CmdResult tree = RunHdrf("queues --config '" + std::string(data) + "/config/hierarchical_queue.yaml'");
  ASSERT_EQ(tree.code, 0);
  EXPECT_THAT(tree.out, Not(HasSubstr("# TYPE")));
}

TEST(QueuesMetricsCommand, ConfigWithoutCluster) {
  char path[] = "/tmp/hdrf_metrics_test_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string yaml =
      "kind: HierarchicalQueue\nmetadata: {name: x}\nspec:\n  queues:\n"
      "    - {name: a, parent: root, weight: 3, capability: {cpu: 4}}\n";
  ASSERT_EQ(::write(fd, yaml.data(), yaml.size()), static_cast<ssize_t>(yaml.size()));
  ::close(fd);
  CmdResult r = RunHdrf(std::string("queues --config ") + path + " --metrics");
  ::unlink(path);
  ASSERT_EQ(r.code, 0) << r.out;
  Parsed p = Parse(r.out);
  EXPECT_EQ(p.Value("hdrf_queue_weight", {{"queue", "root/a"}}), 3);
  EXPECT_EQ(p.Value("hdrf_queue_capability", {{"queue", "root/a"}, {"resource", "cpu"}}), 4000);
  // The cluster is invented for display: not exported.
  EXPECT_FALSE(p.families.count("hdrf_cluster_capacity"));
  EXPECT_FALSE(p.families.count("hdrf_queue_real_capability"));
}

}  // namespace
}  // namespace hdrf
