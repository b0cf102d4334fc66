// `hdrf trace` and `hdrf replay` as a user runs them: the built binary
// (HDRF_BIN) in a temporary directory. Checks the docs/spec.md §11 contract: flags,
// exit codes, the JSON report on the last stdout line, digest determinism
// and --until.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/run_shell.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = hdrf::testing::ShellResult;
using hdrf::testing::Slurp;

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* bin = std::getenv("HDRF_BIN");
    ASSERT_NE(bin, nullptr) << "HDRF_BIN must name the hdrf binary";
    bin_ = bin;
    char tmpl[] = "/tmp/hdrf_cli_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // One small trace shared by the tests: 300 jobs, 30000 task events.
    Result r = Run("trace gen --jobs 300 --depth 2 --fanout 3 --events 30000 --seed 5 --out " + dir_ + "/a.trace");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  static Result Run(const std::string& args) { return hdrf::testing::RunCaptured("'" + bin_ + "' " + args, dir_); }
  static std::string Trace() { return dir_ + "/a.trace"; }

  static std::string bin_, dir_;
};
std::string Cli::bin_, Cli::dir_;

// The raw text of a top-level or nested JSON field ("events", "latency_ns.p99").
std::string Field(const std::string& json, const std::string& key) {
  std::string k = key, scope = json;
  if (auto dot = key.find('.'); dot != std::string::npos) {
    std::string outer = "\"" + key.substr(0, dot) + "\": {";
    auto at = json.find(outer);
    if (at == std::string::npos) return "";
    scope = json.substr(at + outer.size() - 1, json.find('}', at) - at - outer.size() + 2);
    k = key.substr(dot + 1);
  }
  std::string pat = "\"" + k + "\": ";
  auto at = scope.find(pat);
  if (at == std::string::npos) return "";
  at += pat.size();
  size_t end = at;
  if (scope[at] == '"') {
    end = scope.find('"', at + 1) + 1;
  } else {
    while (end < scope.size() && scope[end] != ',' && scope[end] != '}') ++end;
  }
  return scope.substr(at, end - at);
}
double Num(const std::string& json, const std::string& key) { return std::stod(Field(json, key)); }
std::string Str(const std::string& json, const std::string& key) {
  std::string f = Field(json, key);
  return f.size() >= 2 ? f.substr(1, f.size() - 2) : "";
}

TEST_F(Cli, TraceGenIsDeterministic) {
  std::string base = "trace gen --jobs 300 --depth 2 --fanout 3 --events 30000 --out " + dir_;
  ASSERT_EQ(Run(base + "/b.trace --seed 5").code, 0);
  EXPECT_EQ(Slurp(dir_ + "/b.trace"), Slurp(Trace()));
  ASSERT_EQ(Run(base + "/c.trace --seed 6").code, 0);
  EXPECT_NE(Slurp(dir_ + "/c.trace"), Slurp(Trace()));
  Result j = Run(base + "/d.trace --seed 5 --json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(Num(j.last_line(), "jobs"), 300);
  EXPECT_EQ(Num(j.last_line(), "events"), 30300);
  EXPECT_EQ(Num(j.last_line(), "task_events"), 30000);
  EXPECT_EQ(Num(j.last_line(), "queues"), 12);
  EXPECT_EQ(Num(j.last_line(), "leaves"), 9);
  Result info = Run("trace info " + Trace() + " --json");
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(Num(info.last_line(), "events"), 30300);
  EXPECT_EQ(Num(info.last_line(), "setup_events"), 300);
}

TEST_F(Cli, ReplayJsonIsTheLastLineWithTheContractFields) {
  Result r = Run("replay --trace " + Trace() + " --json --progress");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.lines().size(), 1u) << r.out;  // progress goes to stderr only
  const std::string j = r.last_line();
  EXPECT_THAT(j, StartsWith("{\"events\": 30000, \"seconds\": "));
  std::regex shape(
      R"(^\{"events": \d+, "seconds": [0-9.e+-]+, "events_per_sec": [0-9.e+-]+, )"
      R"("latency_ns": \{"p50": \d+, "p99": \d+, "p999": \d+\}, "digest": "[0-9a-f]{16}", "last_seq": \d+.*\}$)");
  EXPECT_TRUE(std::regex_match(j, shape)) << j;
  EXPECT_EQ(Num(j, "last_seq"), 30300);
  EXPECT_EQ(Num(j, "refused"), 0);
  EXPECT_GT(Num(j, "seconds"), 0);
  EXPECT_GT(Num(j, "events_per_sec"), 0);
  EXPECT_LE(Num(j, "latency_ns.p50"), Num(j, "latency_ns.p99"));
  EXPECT_LE(Num(j, "latency_ns.p99"), Num(j, "latency_ns.p999"));
  EXPECT_THAT(r.err, HasSubstr("events/s"));  // the progress line
}

TEST_F(Cli, DigestIsDeterministicAndUntilMatchesATruncatedTrace) {
  Result a = Run("replay --trace " + Trace() + " --threads 1 --json");
  Result b = Run("replay --trace " + Trace() + " --threads 1 --json");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(Str(a.last_line(), "digest"), Str(b.last_line(), "digest"));
  EXPECT_EQ(Str(a.last_line(), "digest").size(), 16u);

  const int K = 300 + 12345;
  Result u = Run("replay --trace " + Trace() + " --until " + std::to_string(K) + " --json");
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_EQ(Num(u.last_line(), "last_seq"), K);
  EXPECT_EQ(Num(u.last_line(), "events"), 12345);
  EXPECT_NE(Str(u.last_line(), "digest"), Str(a.last_line(), "digest"));
  Result cut = Run("trace cut --trace " + Trace() + " --until " + std::to_string(K) + " --out " + dir_ + "/k.trace");
  ASSERT_EQ(cut.code, 0) << cut.err;
  Result k = Run("replay --trace " + dir_ + "/k.trace --json");
  ASSERT_EQ(k.code, 0) << k.err;
  EXPECT_EQ(Str(k.last_line(), "digest"), Str(u.last_line(), "digest"));
  EXPECT_EQ(Num(k.last_line(), "last_seq"), K);

  // --until inside the setup submits only the first jobs.
  Result s = Run("replay --trace " + Trace() + " --until 10 --json");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(Num(s.last_line(), "last_seq"), 10);
  EXPECT_EQ(Num(s.last_line(), "events"), 0);
  // Warm-up events are applied but not timed: same final state.
  Result w = Run("replay --trace " + Trace() + " --warmup 1000 --json");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(Num(w.last_line(), "events"), 29000);
  EXPECT_EQ(Num(w.last_line(), "warmup"), 1000);
  EXPECT_EQ(Str(w.last_line(), "digest"), Str(a.last_line(), "digest"));
}

TEST_F(Cli, ReplayBatchesByDefaultAndPerCallOnRequest) {
  // Without --rate the events go through Engine::ApplyTasks in batches of
  // 1024; --batch 1 (or --rate) makes one engine call per event. Both reach
  // the same state, in the same sequence numbers.
  Result batched = Run("replay --trace " + Trace() + " --json");
  Result per_call = Run("replay --trace " + Trace() + " --batch 1 --json");
  Result paced = Run("replay --trace " + Trace() + " --until 1300 --rate 1000000 --json");
  Result odd = Run("replay --trace " + Trace() + " --batch 7 --json");
  for (const Result* r : {&batched, &per_call, &paced, &odd}) ASSERT_EQ(r->code, 0) << r->err;
  EXPECT_EQ(Num(batched.last_line(), "batch"), 1024);
  EXPECT_EQ(Num(per_call.last_line(), "batch"), 1);
  EXPECT_EQ(Num(paced.last_line(), "batch"), 1);
  EXPECT_EQ(Num(odd.last_line(), "batch"), 7);
  for (const Result* r : {&batched, &odd}) {
    EXPECT_EQ(Str(r->last_line(), "digest"), Str(per_call.last_line(), "digest"));
    EXPECT_EQ(Num(r->last_line(), "last_seq"), 30300);
    EXPECT_EQ(Num(r->last_line(), "events"), 30000);
    EXPECT_EQ(Num(r->last_line(), "refused"), 0);
  }
  EXPECT_THAT(Run("replay --trace " + Trace()).out, HasSubstr("(batches of 1024)"));
  EXPECT_THAT(Run("replay --trace " + Trace() + " --batch 1").out, HasSubstr("(one call per event)"));
}

TEST_F(Cli, ThreadsReportRefusalsAndApplyEveryEvent) {
  for (std::string partition : {"job", "subtree"}) {
    Result r = Run("replay --trace " + Trace() + " --threads 2 --partition " + partition + " --json");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string j = r.last_line();
    EXPECT_EQ(Num(j, "events"), 30000);
    EXPECT_EQ(Num(j, "threads"), 2);
    EXPECT_GE(Num(j, "refused"), 0);
    // Every event was either applied or refused (or a skipped release).
    EXPECT_EQ(Num(j, "last_seq") + Num(j, "refused") + Num(j, "skipped_releases"), 30300);
  }
  ASSERT_EQ(Run("trace gen --jobs 200 --events 20000 --saturate --out " + dir_ + "/s.trace").code, 0);
  // On a saturated cluster threads refuse allocations, batched (the
  // default) or one call per event, and skip the releases that would undo
  // them; every event is still accounted for.
  for (std::string batch : {"", " --batch 1", " --batch 16"}) {
    Result s = Run("replay --trace " + dir_ + "/s.trace --threads 2 --json" + batch);
    ASSERT_EQ(s.code, 0) << s.err;
    const std::string j = s.last_line();
    EXPECT_EQ(Num(j, "events"), 20000) << batch;
    EXPECT_EQ(Num(j, "last_seq") + Num(j, "refused") + Num(j, "skipped_releases"), 20200) << batch;
  }
  Result s1 = Run("replay --trace " + dir_ + "/s.trace --threads 1 --json");
  ASSERT_EQ(s1.code, 0) << s1.err;
  EXPECT_EQ(Num(s1.last_line(), "refused"), 0);
}

TEST_F(Cli, RateAndDurationPaceTheReplay) {
  // 2000 events at 20000/s: about 0.1 s (minus one 10 ms burst).
  Result r = Run("replay --trace " + Trace() + " --until 2300 --rate 20000 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Num(r.last_line(), "events"), 2000);
  EXPECT_GE(Num(r.last_line(), "seconds"), 0.08);
  EXPECT_LE(Num(r.last_line(), "events_per_sec"), 25000);
  Result d = Run("replay --trace " + Trace() + " --rate 10000 --duration 0.2 --json");
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_LT(Num(d.last_line(), "events"), 30000);
  EXPECT_LT(Num(d.last_line(), "seconds"), 1.0);
}

TEST_F(Cli, HumanSummary) {
  Result r = Run("replay --trace " + Trace());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("replayed  30000 events"));
  EXPECT_THAT(r.out, HasSubstr("digest    "));
  EXPECT_THAT(r.out, HasSubstr("p99.9"));
  EXPECT_EQ(r.err, "");  // stderr is not a terminal: no progress bar
}

TEST_F(Cli, HelpExitsZero) {
  for (std::string cmd : {"trace --help", "trace gen --help", "replay --help"}) {
    Result r = Run(cmd);
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr("usage: hdrf")) << cmd;
  }
}

TEST_F(Cli, BadUsageExitsTwoWithAMessage) {
  struct Case {
    std::string args, message;
  };
  const std::string t = Trace();
  for (const Case& c : std::vector<Case>{
           {"replay --bogus", "unknown flag --bogus"},
           {"replay", "--trace FILE is required"},
           {"replay --json", "--trace FILE is required"},
           {"replay --trace", "flag --trace needs a value"},
           {"replay --trace " + t + " --threads 0", "--threads: must be in 1..1024"},
           {"replay --trace " + t + " --threads x", "'x' is not an integer"},
           {"replay --trace " + t + " --durability fast", "expected sync, async or none"},
           {"replay --trace " + t + " --until -1", "--until: must be >= 0"},
           {"replay --trace " + t + " --rate 0", "flag --rate: '0' is not a number in 0.001..1e+12"},
           {"replay --trace " + t + " --rate nan", "flag --rate: 'nan' is not a number in 0.001..1e+12"},
           {"replay --trace " + t + " --duration 1e300", "flag --duration: '1e300' is not a number in 0.001..1e+09"},
           {"replay --trace " + t + " --partition queue", "expected job or subtree"},
           {"replay --trace " + t + " --pipeline 4", "--pipeline needs --db DIR"},
           {"replay --trace " + t + " --db " + t + ".db --pipeline 4 --batch 1", "--pipeline needs batches"},
           {"replay --trace " + t + " --db " + t + ".db --pipeline -1", "--pipeline: must be within 0..4096"},
           {"replay --trace " + t + " extra", "unexpected argument 'extra'"},
           {"trace", "usage: hdrf trace gen"},
           {"trace frob", "unknown subcommand 'frob'"},
           {"trace gen --jobs 10", "--out FILE is required"},
           {"trace gen --jobs abc --out x", "'abc' is not an integer"},
           {"trace gen --depth 40 --out x", "--depth: 40 is out of range 0..16"},
           {"trace gen --fanout 1000 --depth 3 --out x", "10^7 leaf queues"},
           {"trace gen --load 0 --out x", "flag --load: '0' is not a number in 0.001..100"},
           {"trace gen --load inf --out x", "flag --load: 'inf' is not a number in 0.001..100"},
           {"trace gen --nope --out x", "unknown flag --nope"},
           {"trace info", "expected one trace FILE"},
           {"trace cut --trace " + t + " --out x", "--until SEQ is required"},
       }) {
    Result r = Run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

TEST_F(Cli, UnreadableTracesExitOne) {
  Result missing = Run("replay --trace " + dir_ + "/nope.trace --json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("trace " + dir_ + "/nope.trace: cannot open"));
  EXPECT_EQ(missing.out, "");

  std::ofstream(dir_ + "/garbage.trace") << "this is not a trace at all, just some text\n";
  Result garbage = Run("replay --trace " + dir_ + "/garbage.trace");
  EXPECT_EQ(garbage.code, 1);
  EXPECT_THAT(garbage.err, HasSubstr("bad magic at offset 0"));

  std::string bytes = Slurp(Trace());
  std::ofstream(dir_ + "/short.trace", std::ios::binary).write(bytes.data(), 5000);
  Result shorter = Run("replay --trace " + dir_ + "/short.trace");
  EXPECT_EQ(shorter.code, 1);
  EXPECT_THAT(shorter.err, HasSubstr("truncated at offset 5000"));

  bytes[bytes.size() - 100] ^= 0x20;
  std::ofstream(dir_ + "/flip.trace", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Result flipped = Run("trace info " + dir_ + "/flip.trace");
  EXPECT_EQ(flipped.code, 1);
  EXPECT_THAT(flipped.err, HasSubstr("does not match its checksum"));
}

// With a store: `acked SEQ` lines, flushed, then the JSON.
TEST_F(Cli, ReplayIntoAStoreAcksDurableEvents) {
  Result r = Run("replay --trace " + Trace() + " --db " + dir_ + "/db --durability async --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto lines = r.lines();
  ASSERT_GE(lines.size(), 2u);
  uint64_t last_ack = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    ASSERT_THAT(lines[i], StartsWith("acked ")) << lines[i];
    uint64_t seq = std::stoull(lines[i].substr(6));
    EXPECT_GE(seq, last_ack);
    last_ack = seq;
  }
  EXPECT_EQ(last_ack, 30300u);
  EXPECT_EQ(Num(lines.back(), "last_seq"), 30300);
  EXPECT_EQ(Str(lines.back(), "durability"), "async");
}

// --pipeline N: batches applied while earlier ones are synced; the same
// events acknowledged, the same state, and the store recovers it.
TEST_F(Cli, ReplayPipelinedIntoASyncStore) {
  Result plain = Run("replay --trace " + Trace() + " --db " + dir_ + "/plain --durability sync --batch 64 --json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  for (const char* n : {"1", "8"}) {
    SCOPED_TRACE(n);
    const std::string db = dir_ + "/piped-" + n;
    Result r = Run("replay --trace " + Trace() + " --db " + db + " --durability sync --batch 64 --pipeline " + n +
                   " --json");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string j = r.last_line();
    EXPECT_EQ(Num(j, "pipeline"), std::stoi(n));
    EXPECT_EQ(Num(j, "events"), 30000);
    EXPECT_EQ(Num(j, "last_seq"), 30300);
    EXPECT_GT(Num(j, "cpu_seconds"), 0);
    EXPECT_EQ(Str(j, "digest"), Str(plain.last_line(), "digest"));
    Result rec = Run("recover --db " + db + " --json");
    ASSERT_EQ(rec.code, 0) << rec.err;
    EXPECT_EQ(Str(rec.last_line(), "digest"), Str(j, "digest"));
    EXPECT_EQ(Num(rec.last_line(), "last_seq"), 30300);
  }
}

// ---- trace import, replay --plot / --from-db, queues --watch --------------------------

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

size_t CountLines(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) n += l.rfind(prefix, 0) == 0;
  return n;
}

// Runs a bash script (for background processes and signals); its exit code.
int Bash(const std::string& dir, const std::string& script) {
  const std::string path = dir + "/script.sh";
  WriteText(path, script);
  int status = std::system(("bash '" + path + "' </dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char kCluster[] =
    "apiVersion: hdrf.io/v1\nkind: HierarchicalQueue\nmetadata: {name: c}\nspec:\n  queues:\n"
    "    - {name: eng, parent: root, weight: 2}\n    - {name: prod, parent: root/eng, weight: 3}\n"
    "---\nkind: Cluster\ncapacity: {cpu: \"16\", memory: 64Gi}\n";

TEST_F(Cli, TraceImportCsvAndJsonlGiveTheSameTrace) {
  WriteText(dir_ + "/cluster.yaml", kCluster);
  WriteText(dir_ + "/ev.csv",
            "event,job,queue,user,tasks,task,n\n"
            "queue,,root/sci,,,,\n"
            "submit,a,root/eng/prod,alice,4,cpu=2;memory=4Gi,\n"
            "submit,b,root/sci,bob,3,cpu=500m,\n"
            "allocate,a,,,,,3\n"
            "allocate,b,,,,,\n"
            "release,a,,,,,2\n"
            "finish,b,,,,,1\n"
            "remove,b,,,,,\n");
  WriteText(dir_ + "/ev.jsonl",
            "{\"event\": \"queue\", \"queue\": \"root/sci\"}\n"
            "{\"event\": \"submit\", \"job\": \"a\", \"queue\": \"root/eng/prod\", \"user\": \"alice\", \"tasks\": 4, "
            "\"task\": {\"cpu\": 2, \"memory\": \"4Gi\"}}\n"
            "{\"event\": \"submit\", \"job\": \"b\", \"queue\": \"root/sci\", \"user\": \"bob\", \"tasks\": 3, "
            "\"task\": {\"cpu\": \"500m\"}}\n"
            "{\"event\": \"allocate\", \"job\": \"a\", \"n\": 3}\n"
            "{\"event\": \"allocate\", \"job\": \"b\"}\n"
            "{\"event\": \"release\", \"job\": \"a\", \"n\": 2}\n"
            "{\"event\": \"finish\", \"job\": \"b\", \"n\": 1}\n"
            "{\"event\": \"remove\", \"job\": \"b\"}\n");
  const std::string cfg = " --config " + dir_ + "/cluster.yaml";
  Result a = Run("trace import --from " + dir_ + "/ev.csv" + cfg + " --out " + dir_ + "/ev1.trace --json");
  ASSERT_EQ(a.code, 0) << a.err;
  Result b = Run("trace import --from " + dir_ + "/ev.jsonl" + cfg + " --out " + dir_ + "/ev2.trace");
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_THAT(b.out, HasSubstr("wrote " + dir_ + "/ev2.trace: 7 events"));
  const std::string t1 = Slurp(dir_ + "/ev1.trace");
  EXPECT_THAT(t1, StartsWith("HDRFTRC1"));
  EXPECT_EQ(t1, Slurp(dir_ + "/ev2.trace"));
  EXPECT_EQ(Num(a.last_line(), "events"), 7);
  EXPECT_EQ(Num(a.last_line(), "setup_events"), 2);
  // The replay of the imported trace ends where the import's check did.
  Result r = Run("replay --trace " + dir_ + "/ev1.trace --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Str(r.last_line(), "digest"), Str(a.last_line(), "digest"));
  EXPECT_EQ(Num(r.last_line(), "refused"), 0);
  EXPECT_EQ(Num(r.last_line(), "last_seq"), 7);
}

TEST_F(Cli, TraceImportRejectsBadInputAndWritesNothing) {
  WriteText(dir_ + "/cluster.yaml", kCluster);
  WriteText(dir_ + "/bad.csv", "event,job,task\nsubmit,a,cpu=1\nallocate,nobody,\n");
  WriteText(dir_ + "/bad.jsonl", "{\"event\": \"submit\", \"job\": \"a\", \"task\": {\"cpu\": 1}\n");
  WriteText(dir_ + "/cols.csv", "event,job,task\nsubmit,a\n");
  WriteText(dir_ + "/ev.txt", "event\n");
  const std::string cfg = " --config " + dir_ + "/cluster.yaml --out " + dir_ + "/none.trace";
  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"--from " + dir_ + "/bad.csv" + cfg, 1, dir_ + "/bad.csv:3: unknown job 'nobody'"},
      {"--from " + dir_ + "/bad.jsonl" + cfg, 1, dir_ + "/bad.jsonl:1: column 51: expected ',' or '}'"},
      {"--from " + dir_ + "/cols.csv" + cfg, 1, dir_ + "/cols.csv:2: 2 fields, the header (line 1) has 3"},
      {"--from " + dir_ + "/nope.csv" + cfg, 1, "nope.csv: cannot open"},
      {"--from " + dir_ + "/bad.csv --config " + dir_ + "/nope.yaml --out " + dir_ + "/none.trace", 1,
       dir_ + "/nope.yaml: cannot open"},
      {"--from " + dir_ + "/ev.txt" + cfg, 2, "unknown event file type"},
      {"--from " + dir_ + "/bad.csv", 2, "--out TRACE is required"},
      {"--out " + dir_ + "/none.trace", 2, "--from FILE is required"},
      {"--from " + dir_ + "/bad.csv --out " + dir_ + "/none.trace --frobnicate", 2, "unknown flag --frobnicate"},
  };
  for (const Case& c : cases) {
    Result r = Run("trace import " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
    EXPECT_FALSE(Exists(dir_ + "/none.trace")) << c.args;
    EXPECT_FALSE(Exists(dir_ + "/none.trace.tmp")) << c.args;
  }
}

TEST_F(Cli, ReplayPlotDrawsEveryTopLevelQueue) {
  const std::string svg_path = dir_ + "/shares.svg";
  Result r = Run("replay --trace " + Trace() + " --plot " + svg_path + " --plot-samples 20 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = Slurp(svg_path);
  EXPECT_THAT(svg, StartsWith("<?xml version=\"1.0\""));
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_THAT(svg, HasSubstr("dominant share</text>"));
  EXPECT_THAT(svg, HasSubstr("Dominant share of the top-level queues"));
  // The trace has fanout 3: three queues under root, a line and a legend entry each.
  for (const char* q : {"root/q0", "root/q1", "root/q2"})
    EXPECT_THAT(svg, HasSubstr(std::string(">") + q + "</text>")) << q;
  EXPECT_EQ(CountLines(svg, "<polyline"), 3u);
  EXPECT_THAT(svg, ::testing::Not(HasSubstr(">root/q3<")));
  EXPECT_GE(Num(r.last_line(), "plot_samples"), 12);
  EXPECT_GE(Num(r.last_line(), "plot_seconds"), 0);
  EXPECT_FALSE(Exists(svg_path + ".tmp"));
  // Sampling does not change what is replayed.
  Result plain = Run("replay --trace " + Trace() + " --json");
  EXPECT_EQ(Str(r.last_line(), "digest"), Str(plain.last_line(), "digest"));

  for (const std::string& bad : std::vector<std::string>{"--plot " + dir_ + "/nodir/p.svg", "--plot-samples 5",
                                                         "--plot " + svg_path + " --plot-samples 0", "--plot " + dir_}) {
    Result b = Run("replay --trace " + Trace() + " " + bad);
    EXPECT_EQ(b.code, 2) << bad;
    EXPECT_THAT(b.err, HasSubstr("hdrf replay: ")) << bad;
    EXPECT_EQ(b.out, "") << bad;
  }
  EXPECT_THAT(Run("replay --trace " + Trace() + " --plot " + dir_ + "/nodir/p.svg").err,
              HasSubstr("directory '" + dir_ + "/nodir' does not exist"));
}

// A store that fails mid-run (a file size limit stands in for a full disk):
// the replay stops at the first store error instead of going on, exits 1,
// and "events" counts only the timed events that were applied and
// acknowledged (issue 16 item 2).
TEST_F(Cli, ReplayStopsAtTheFirstStoreError) {
  for (const char* durability : {"sync", "async"}) {
    SCOPED_TRACE(durability);
    const std::string db = dir_ + "/full-" + durability, out = db + ".out", err = db + ".err";
    // SIGXFSZ ignored: a write past the limit fails with EFBIG instead.
    const int code = Bash(dir_, "trap '' XFSZ; ulimit -f 128\n'" + bin_ + "' replay --trace " + Trace() + " --db " +
                                    db + " --durability " + durability + " --json > '" + out + "' 2> '" + err + "'\n");
    const std::string stderr_text = Slurp(err);
    ASSERT_EQ(code, 1) << stderr_text;
    EXPECT_THAT(stderr_text, HasSubstr("the store failed; stopped after")) << stderr_text;
    Result r;
    r.out = Slurp(out);
    const std::string j = r.last_line();
    ASSERT_THAT(j, StartsWith("{")) << r.out;
    EXPECT_FALSE(Str(j, "store_error").empty()) << j;
    const double events = Num(j, "events"), applied = Num(j, "applied_events");
    const double acked = Num(j, "acknowledged_seq"), last = Num(j, "last_seq");
    if (std::string(durability) == "sync") {
      EXPECT_LT(last, 30300) << "the replay went on after the store failed";
    } else {
      // async: the replay learns of a failed write only when the log
      // writer reports it, so on a loaded machine it may have applied every
      // event by then; what it must not do is acknowledge them all.
      EXPECT_LT(acked, 30300) << "every event acknowledged by a store that failed";
    }
    EXPECT_LE(acked, last);
    EXPECT_LE(applied, last - 300);
    // The 300 submissions are the setup: the timed events acknowledged.
    EXPECT_EQ(events, std::min(applied, std::max(0.0, acked - 300))) << j;
    EXPECT_NEAR(Num(j, "events_per_sec"), events / Num(j, "seconds"), 1e-6 * events / Num(j, "seconds") + 1e-9);
    // Every acknowledged event is in the store.
    Result rec = Run("recover --db " + db + " --json");
    ASSERT_EQ(rec.code, 0) << rec.err;
    EXPECT_GE(Num(rec.last_line(), "last_seq"), acked);
  }
}

TEST_F(Cli, ReplayFromDbMatchesRecover) {
  // A store that SIGKILL left behind: its log holds every acknowledged event.
  const std::string db = dir_ + "/killed", out = dir_ + "/killed.out";
  ASSERT_EQ(Bash(dir_, "'" + bin_ + "' replay --trace " + Trace() + " --db " + db +
                           " --durability sync --rate 20000 --no-progress > '" + out + "' 2>&1 & p=$!\n"
                           "for i in $(seq 1 200); do sleep 0.05\n"
                           "  n=$(grep '^acked' '" + out + "' | tail -n1 | cut -d' ' -f2)\n"
                           "  [ \"${n:-0}\" -gt 2000 ] && break; done\n"
                           "{ kill -9 $p; wait $p; } 2>/dev/null; exit 0\n"),
            0);
  Result rec = Run("recover --db " + db + " --json");
  ASSERT_EQ(rec.code, 0) << rec.err;
  ASSERT_GT(Num(rec.last_line(), "last_seq"), 2000);
  Result rp = Run("replay --from-db " + db + " --json");
  ASSERT_EQ(rp.code, 0) << rp.err;
  EXPECT_EQ(Str(rp.last_line(), "digest"), Str(rec.last_line(), "digest"));
  EXPECT_EQ(Num(rp.last_line(), "store_last_seq"), Num(rec.last_line(), "last_seq"));
  // The timed events are the logged ones after the checkpoint.
  EXPECT_EQ(Num(rp.last_line(), "events"),
            Num(rp.last_line(), "store_last_seq") - Num(rp.last_line(), "checkpoint_seq"));
  EXPECT_GT(Num(rp.last_line(), "events"), 0);
  EXPECT_EQ(Num(rp.last_line(), "refused"), 0);
  // The store was only read: recovering again gives the same.
  Result again = Run("recover --db " + db + " --json");
  EXPECT_EQ(Str(again.last_line(), "digest"), Str(rec.last_line(), "digest"));
  EXPECT_EQ(Num(again.last_line(), "last_seq"), Num(rec.last_line(), "last_seq"));

  // A store closed cleanly (its last checkpoint holds everything).
  const std::string closed = dir_ + "/closed";
  ASSERT_EQ(Run("replay --trace " + Trace() + " --until 20000 --db " + closed + " --durability none").code, 0);
  Result rc = Run("recover --db " + closed + " --json");
  Result rpc = Run("replay --from-db " + closed + " --json --threads 1");
  ASSERT_EQ(rpc.code, 0) << rpc.err;
  EXPECT_EQ(Str(rpc.last_line(), "digest"), Str(rc.last_line(), "digest"));
  EXPECT_EQ(Num(rpc.last_line(), "store_last_seq"), 20000);

  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"--from-db " + dir_ + "/nostore", 1, "no store at " + dir_ + "/nostore"},
           {"--from-db " + db + " --trace " + Trace(), 2, "--trace and --from-db exclude each other"},
           {"--from-db " + db + " --until 5", 2, "--until counts trace events"},
           {"--from-db " + db + " --db " + db, 2, "--db must be a new store"},
           {"--from-db=", 2, "flag --from-db: empty directory name"},
       }) {
    Result r = Run("replay " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
  }
}

TEST_F(Cli, QueuesWatchRefreshesAndStopsOnCtrlC) {
  const std::string db = dir_ + "/watched";
  ASSERT_EQ(Run("replay --trace " + Trace() + " --until 5000 --db " + db + " --durability none").code, 0);
  Result w = Run("queues --db " + db + " --watch 0.05 --count 3");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_EQ(CountLines(w.out, "== hdrf queues --db " + db), 3u);
  EXPECT_EQ(CountLines(w.out, "root "), 3u);
  EXPECT_EQ(CountLines(w.out, "  q2 "), 3u);
  EXPECT_THAT(w.out, HasSubstr("refresh 3 every 0.05 s"));
  EXPECT_THAT(w.out, HasSubstr("last_seq 5000"));
  EXPECT_THAT(w.out, ::testing::Not(HasSubstr("\033[2J")));  // not a terminal: no clearing
  Result m = Run("queues --db " + db + " --watch=0.05 --count 2 --metrics");
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_EQ(CountLines(m.out, "== hdrf queues"), 2u);
  EXPECT_THAT(m.out, HasSubstr("hdrf_queue_"));

  // Ctrl-C ends the watch cleanly after a frame or more.
  const std::string out = dir_ + "/watch.out";
  EXPECT_EQ(Bash(dir_, "'" + bin_ + "' queues --db " + db + " --watch 0.05 > '" + out + "' 2>&1 & p=$!\n"
                           "sleep 0.6; kill -INT $p; wait $p\n"),
            0);
  EXPECT_GE(CountLines(Slurp(out), "== hdrf queues"), 2u);

  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"--db " + db + " --count 2", 2, "--count needs --watch"},
           {"--db " + db + " --watch abc", 2, "flag --watch: 'abc' is not a number in 0.05..86400 (seconds)"},
           {"--db " + db + " --watch 0", 2, "flag --watch: '0' is not a number in 0.05..86400 (seconds)"},
           {"--db " + db + " --watch nan", 2, "flag --watch: 'nan' is not a number in 0.05..86400 (seconds)"},
           {"--db " + db + " --watch --count 0", 2, "flag --count: must be >= 1"},
           {"--db " + db + " --watch --count x", 2, "flag --count: 'x' is not an integer"},
           {"--config " + dir_ + "/cluster.yaml --watch", 2, "--watch needs --db DIR"},
           {"--db " + dir_ + "/nostore --watch --count 1", 1, "no store at " + dir_ + "/nostore"},
       }) {
    Result r = Run("queues " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
  }
}

// hdrf workload gen / import: determinism, the config it writes, exit codes,
// and nothing written on an error.
TEST_F(Cli, WorkloadGenAndImport) {
  const std::string gen = "workload gen --jobs 2000 --queues 5 --tasks pareto:1.5,1 --out " + dir_;
  ASSERT_EQ(Run(gen + "/w1.csv --seed 3 --config-out " + dir_ + "/w.yaml").code, 0);
  ASSERT_EQ(Run(gen + "/w2.csv --seed 3").code, 0);
  ASSERT_EQ(Run(gen + "/w3.csv --seed 4").code, 0);
  EXPECT_EQ(Slurp(dir_ + "/w1.csv"), Slurp(dir_ + "/w2.csv"));
  EXPECT_NE(Slurp(dir_ + "/w1.csv"), Slurp(dir_ + "/w3.csv"));
  EXPECT_THAT(Slurp(dir_ + "/w1.csv"), StartsWith("name,queue,arrival,duration,user,tasks,weight,cpu,memory,nvidia.com/gpu\n"));
  Result q = Run("queues --config " + dir_ + "/w.yaml");
  EXPECT_EQ(q.code, 0) << q.err;
  EXPECT_THAT(q.out, HasSubstr("q1-0"));
  for (const auto& [args, code] : std::vector<std::pair<std::string, int>>{
           {"workload gen --tasks normal:1,2", 2}, {"workload gen --bogus", 2}, {"workload", 2},
           {"workload gen --shape cpus=1 --out " + dir_ + "/bad_workload.csv", 2},
           {"workload gen --out /nonexistent-dir/w.csv", 1},
           {"workload import --from kueue x --out " + dir_ + "/bad_workload.csv", 2},
           {"workload import --from volcano " + dir_ + "/none.json --out " + dir_ + "/bad_workload.csv", 1}}) {
    Result r = Run(args);
    EXPECT_EQ(r.code, code) << args << ": " << r.err;
  }
  std::ofstream(dir_ + "/ev.json") << "[\n{\"type\": \"PodCreated\", \"timestamp\": \"soon\", \"groupName\": \"a\"}]\n";
  Result bad = Run("workload import --from volcano " + dir_ + "/ev.json --out " + dir_ + "/bad_workload.csv");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr(dir_ + "/ev.json:2: event 1: timestamp: 'soon'"));
  EXPECT_EQ(Slurp(dir_ + "/bad_workload.csv"), "");  // nothing written
  EXPECT_NE(::access((dir_ + "/bad_workload.csv").c_str(), F_OK), 0);
}

}  // namespace

namespace {

// hdrf standby's checkpoint flags (issue #25): --checkpoint-events-per-job
// is in --help with its default, whole numbers within range are accepted
// (a standby of a closed store takes over at once), and a sign, an
// exponent, text or a number past the type is refused with exit 2 naming
// the flag and the range, before the store is opened. --checkpoint-every
// gets the same check (CLI11 alone let "-1" through as 2^64 - 1).
TEST_F(Cli, StandbyCheckpointFlags) {
  Result help = Run("standby --help");
  ASSERT_EQ(help.code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("--checkpoint-events-per-job UINT:INTEGER in 0..4294967295=4"));
  EXPECT_THAT(help.out, HasSubstr("--checkpoint-every UINT:INTEGER in 0..18446744073709551615=1000000"));

  const std::string db = dir_ + "/standby-flags";
  ASSERT_EQ(Run("replay --trace " + Trace() + " --until 2000 --db " + db + " --durability none").code, 0);
  for (const char* k : {"0", "4", "4294967295"}) {
    Result r = Run("standby --db " + db + " --exit-after-takeover --json --checkpoint-every 100 "
                   "--checkpoint-events-per-job " + k);
    EXPECT_EQ(r.code, 0) << k << "\n" << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"state\": \"writer\", \"last_seq\": 2000")) << k;
  }
  const std::string max32 = "0..4294967295", max64 = "0..18446744073709551615";
  struct Case {
    const char* flag;
    const char* value;
    const std::string& range;
  };
  for (const Case& c : {Case{"checkpoint-events-per-job", "-1", max32},
                        Case{"checkpoint-events-per-job", "4294967296", max32},
                        Case{"checkpoint-events-per-job", "1e3", max32},
                        Case{"checkpoint-events-per-job", "four", max32},
                        Case{"checkpoint-every", "-1", max64},
                        Case{"checkpoint-every", "18446744073709551616", max64}}) {
    Result r = Run("standby --db " + dir_ + "/no-such-store --" + c.flag + " " + c.value);
    EXPECT_EQ(r.code, 2) << c.flag << " " << c.value << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("--" + std::string(c.flag) + ": '" + c.value +
                                 "' is not a whole number in " + c.range));
  }
}

}  // namespace
