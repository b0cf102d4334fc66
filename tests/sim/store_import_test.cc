// A store's history as a workload (docs/simulate_import.md "A store's
// history"): `Simulate` with db_path (`hdrf simulate --db`) writes the run's
// events with their virtual times, and `ImportStoreHistory` (`hdrf workload
// import --from-db`) gives back the same workload, job by job: plain runs,
// gangs, parent-queue admission, evictions under --reclaim. Then the
// window (--since/--until), jobs still running at its end (flagged), and
// bad input: no store, a damaged store, an empty window, unparsable times.
// The command line is run as a user runs it (HDRF_BIN).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/simulate.h"
#include "hdrf/workload_import.h"
#include "tests/run_shell.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class StoreImport : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hdrf_store_import_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Sub(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

const ResourceAmounts kCluster = {{"cpu", 16000}, {"memory", int64_t{64} << 30}, {"nvidia.com/gpu", 8000}};
std::vector<QueueSpec> Queues() {
  QueueSpec a{.path = "root/a", .weight = 2}, b{.path = "root/b"}, b1{.path = "root/b/x"}, b2{.path = "root/b/y"};
  b2.guarantee = {{"nvidia.com/gpu", 2000}};
  return {a, b, b1, b2};
}

// Random jobs: arrivals and durations in whole ms, gangs, weights, users,
// leaves and parents (admission), several shapes.
std::string RandomWorkload(uint32_t seed, int jobs) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const char* queues[] = {"root/a", "root/b/x", "root/b/y", "root/b", "root"};
  const char* users[] = {"ann", "bob", "cy"};
  std::string csv = "name,queue,arrival,duration,user,tasks,weight,min_available,cpu,memory,nvidia.com/gpu\n";
  int64_t t = 0;
  for (int i = 0; i < jobs; ++i) {
    if (i > 0) t += pick(3) == 0 ? 0 : pick(4000);  // some arrive together
    const int tasks = 1 + pick(5);
    const std::string gang = pick(3) == 0 ? std::to_string(1 + pick(tasks)) : "";
    csv += "j" + std::to_string(i) + "," + queues[pick(5)] + "," + FormatMs(t) + "," + FormatMs(1 + pick(20000)) +
           "," + users[pick(3)] + "," + std::to_string(tasks) + "," + (pick(2) ? "1" : "2.5") + "," + gang + "," +
           std::to_string(1 + pick(3)) + "," + (pick(2) ? "2Gi" : "") + "," + (pick(3) == 0 ? "1" : "") + "\n";
  }
  return csv;
}

Workload Parse(const std::string& text, const std::string& name) {
  auto w = ParseWorkload(text, WorkloadFormat::kCsv, name, {"cpu", "memory", "nvidia.com/gpu"});
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : Workload{};
}

StatusOr<std::string> Import(const std::string& db, const StoreImportOptions& o = {},
                             StoreImportSummary* sum = nullptr) {
  std::string csv;
  auto s = ImportStoreHistory(db, o, [&](std::string_view c) {
    csv += c;
    return Status::Ok();
  });
  if (!s.ok()) return s.status();
  if (sum) *sum = *s;
  return csv;
}

// Every job the engine accepted comes back with the same fields; arrivals
// are shifted by `shift_ms` (the origin).
void ExpectSameJobs(const Workload& w, const SimulateResult& r, const Workload& back, int64_t shift_ms) {
  std::map<std::string, const WorkloadJob*> got;
  for (const WorkloadJob& j : back.jobs) got[j.spec.name] = &j;
  size_t accepted = 0;
  for (size_t i = 0; i < w.jobs.size(); ++i) {
    if (!r.jobs[i].refused.empty()) continue;
    ++accepted;
    const WorkloadJob& a = w.jobs[i];
    SCOPED_TRACE(a.spec.name);
    ASSERT_TRUE(got.count(a.spec.name));
    const WorkloadJob& b = *got[a.spec.name];
    EXPECT_EQ(b.arrival_ms, a.arrival_ms - shift_ms);
    EXPECT_EQ(b.duration_ms, a.duration_ms);
    EXPECT_EQ(b.spec.queue, a.spec.queue);
    EXPECT_EQ(b.spec.user, a.spec.user);
    EXPECT_EQ(b.spec.tasks, a.spec.tasks);
    EXPECT_EQ(b.spec.weight, a.spec.weight);
    EXPECT_EQ(b.spec.min_available, a.spec.min_available);
    EXPECT_EQ(b.spec.task, a.spec.task);
  }
  EXPECT_EQ(back.jobs.size(), accepted);
}

TEST_F(StoreImport, SimulatedStoreImportsBackJobByJob) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (bool reclaim : {false, true}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (reclaim ? " --reclaim" : ""));
      Workload w = Parse(RandomWorkload(seed, 150), "w.csv");
      const std::string db = Sub("s" + std::to_string(seed) + (reclaim ? "r" : ""));
      SimulateOptions o;
      o.db_path = db;
      o.reclaim = reclaim;
      o.preempt = reclaim && seed == 3;
      auto r = Simulate(kCluster, Queues(), w, o);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->started, static_cast<int64_t>(w.jobs.size()) - r->refused);
      if (reclaim && seed == 1) {
        EXPECT_GT(r->evicted_tasks, 0) << "the case should evict";
      }
      // The same run without a store gives the same result.
      auto mem = Simulate(kCluster, Queues(), w, {.reclaim = o.reclaim, .preempt = o.preempt});
      ASSERT_TRUE(mem.ok());
      EXPECT_EQ(mem->makespan_ms, r->makespan_ms);
      StoreImportSummary sum;
      auto csv = Import(db, {.since_us = 0}, &sum);
      ASSERT_TRUE(csv.ok()) << csv.status().message();
      EXPECT_EQ(sum.running, 0u);
      EXPECT_EQ(sum.never_started, 0u);
      EXPECT_EQ(sum.end_us, r->makespan_ms * 1000);
      ExpectSameJobs(w, *r, Parse(*csv, "back.csv"), 0);
    }
  }
}

// The sample of docs/simulate.md: its first job arrives at 5.084 s, so
// without --since arrival 0 is that first submission.
TEST_F(StoreImport, SampleRoundTripsAndTheOriginIsTheFirstEvent) {
  const char* data = std::getenv("HDRF_TEST_DATA");
  ASSERT_NE(data, nullptr);
  auto cfg = LoadQueueConfigFile(std::string(data) + "/simulate/queues.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  auto w = LoadWorkloadFile(std::string(data) + "/simulate/workload.csv", {"cpu", "memory", "nvidia.com/gpu"});
  ASSERT_TRUE(w.ok()) << w.status().message();
  SimulateOptions o;
  o.db_path = Sub("sample");
  auto r = Simulate(cfg->cluster, cfg->queues, *w, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  StoreImportSummary sum;
  auto csv = Import(o.db_path, {}, &sum);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_EQ(sum.origin_us, 5084000);
  ExpectSameJobs(*w, *r, Parse(*csv, "back.csv"), 5084);
  // Simulating the import gives the same waits as the original.
  auto again = Simulate(cfg->cluster, cfg->queues, Parse(*csv, "back.csv"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->makespan_ms, r->makespan_ms - 5084);
  EXPECT_EQ(again->queues.size(), r->queues.size());
  for (size_t q = 0; q < r->queues.size(); ++q) EXPECT_EQ(again->queues[q].wait.mean_ms, r->queues[q].wait.mean_ms);
}

// By hand (cpu 2): a (root/p, 2 tasks of 10 s) and b (root/q, 1 task of
// 4 s) arrive at 0; the fill gives a one task (keys tie at 0: name order),
// then b (q's key 0 < p's). At 4 b ends and a's second task starts (ends
// 14); at 10 a's first ends; c (root/q, 5 s) arrives at 12 and starts.
TEST_F(StoreImport, WindowCutsAndFlagsJobsStillRunning) {
  const ResourceAmounts cluster = {{"cpu", 2000}};
  const std::vector<QueueSpec> queues = {{.path = "root/p", .weight = 2}, {.path = "root/q"}};
  auto w = ParseWorkload("name,queue,arrival,duration,tasks,cpu\n"
                         "a,root/p,0,10,2,1\nb,root/q,0,4,1,1\nc,root/q,12,5,1,1\n",
                         WorkloadFormat::kCsv, "w.csv", {"cpu"});
  ASSERT_TRUE(w.ok()) << w.status().message();
  SimulateOptions o;
  o.db_path = Sub("hand");
  auto r = Simulate(cluster, queues, *w, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs[0].first_start_ms, 0);
  ASSERT_EQ(r->jobs[0].last_start_ms, 4000);
  ASSERT_EQ(r->jobs[1].first_start_ms, 0);
  ASSERT_EQ(r->jobs[2].first_start_ms, 12000);

  // Until 12 s: a's first task ran 10 s, its second still runs (flagged,
  // the duration from the ended task); b ran 4 s; c started at 12 and runs
  // (observed 0 s so far: at least 1 ms).
  StoreImportSummary sum;
  auto csv = Import(o.db_path, {.since_us = 0, .until_us = 12000000}, &sum);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_EQ(*csv,
            "name,queue,arrival,duration,user,tasks,weight,min_available,cpu\n"
            "# running at the end of the log (1 of 2 tasks): duration from its ended tasks\n"
            "a,root/p,0.000,10.000,default,2,1,1,1\n"
            "b,root/q,0.000,4.000,default,1,1,1,1\n"
            "# running at the end of the log (1 of 1 tasks): duration = the time observed so far\n"
            "c,root/q,12.000,0.001,default,1,1,1,1\n");
  EXPECT_EQ(sum.running, 2u);
  EXPECT_EQ(sum.jobs, 3u);
  EXPECT_EQ(sum.end_us, 12000000);

  // Until 11 s: c is not submitted yet; a's second task observed 7 s.
  csv = Import(o.db_path, {.until_us = 11000000}, &sum);
  ASSERT_TRUE(csv.ok());
  EXPECT_THAT(*csv, HasSubstr("a,root/p,0.000,10.000,"));
  EXPECT_THAT(*csv, ::testing::Not(HasSubstr("\nc,")));
  EXPECT_EQ(sum.end_us, 10000000);

  // Since 1 s: a and b were submitted before the window: left out, and so
  // are their later events; c's arrival counts from the window's start.
  csv = Import(o.db_path, {.since_us = 1000000}, &sum);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(*csv, "name,queue,arrival,duration,user,tasks,weight,min_available,cpu\nc,root/q,11.000,5.000,default,1,1,1,1\n");
  EXPECT_EQ(sum.before, 2u);
  EXPECT_EQ(sum.origin_us, 1000000);

  // A window with nothing in it: a header only.
  csv = Import(o.db_path, {.since_us = 100000000}, &sum);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(sum.events, 0u);
  EXPECT_EQ(sum.jobs, 0u);
}

TEST_F(StoreImport, BadInputIsAClearError) {
  auto none = Import(Sub("missing"));
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no store at " + Sub("missing")));

  fs::create_directories(Sub("junk"));
  std::ofstream(Sub("junk/CURRENT")) << "garbage";
  auto junk = Import(Sub("junk"));
  ASSERT_FALSE(junk.ok());
  EXPECT_THAT(junk.status().message(), HasSubstr(Sub("junk")));

  // A damaged table file: the checksum pass names it.
  auto w = ParseWorkload("name,queue,arrival,duration,cpu\na,root/a,0,1,1\n", WorkloadFormat::kCsv, "w.csv", {"cpu"});
  ASSERT_TRUE(w.ok());
  const std::string db = Sub("damaged");
  ASSERT_TRUE(Simulate({{"cpu", 1000}}, {{.path = "root/a"}}, *w, {.db_path = db}).ok());
  bool flipped = false;
  for (const auto& f : fs::directory_iterator(db)) {
    if (f.path().extension() != ".sst") continue;
    std::fstream io(f.path(), std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(fs::file_size(f.path()) / 3));
    io.put('\x5a').put('\xa5').put('\x5a');
    flipped = true;
  }
  ASSERT_TRUE(flipped);
  auto damaged = Import(db);
  ASSERT_FALSE(damaged.ok());
  EXPECT_THAT(damaged.status().message(), HasSubstr(".sst"));

  // A store that exists already is not overwritten by a simulation.
  auto again = Simulate({{"cpu", 1000}}, {{.path = "root/a"}}, *w, {.db_path = db});
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr(db));

  auto empty = Import(db, {.since_us = 5000000, .until_us = 1000000});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(),
              HasSubstr("--since 1970-01-01T00:00:05Z is after --until 1970-01-01T00:00:01Z"));

  EXPECT_EQ(*ParseEventTimeMicros("2026-11-27T01:00:00.25Z"), 1795741200250000);
  EXPECT_EQ(*ParseEventTimeMicros("1795741200.000001"), 1795741200000001);
  EXPECT_EQ(*ParseEventTimeMicros("12"), 12000000);
  for (const char* bad : {"", "yesterday", "12.0000001", "2026-13-01T00:00:00Z", "-5", "1e3"}) {
    auto t = ParseEventTimeMicros(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("neither an RFC 3339 time"));
  }
  EXPECT_EQ(FormatEventTime(1795741200250000), "2026-11-27T01:00:00.250000Z");
  EXPECT_EQ(FormatEventTime(0), "1970-01-01T00:00:00Z");
}

// A store written past several checkpoints (EngineOptions
// log_retention_*, docs/storage.md "Log retention"): 5 rounds, each 100 s
// of event time, of 8 jobs submitted, run and finished, a checkpoint after
// each. Returns the import of the whole log.
StatusOr<std::string> ImportRounds(const std::string& db, uint64_t keep_events, int64_t keep_seconds,
                                   StoreImportSummary* sum) {
  int64_t now_us = 1795741200000000;
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kAsync;
  o.checkpoint_every = 0;
  o.log_retention_events = keep_events;
  o.log_retention_seconds = keep_seconds;
  o.event_clock = [&] { return now_us; };
  {
    auto e = Engine::Create({{"cpu", 64000}}, {{.path = "root/a"}, {.path = "root/b"}}, o);
    if (!e.ok()) return e.status();
    for (int round = 0; round < 5; ++round) {
      std::vector<JobRef> refs;
      for (int i = 0; i < 8; ++i) {
        now_us += 1000000;
        auto r = (*e)->Submit({.name = "r" + std::to_string(round) + "j" + std::to_string(i),
                               .queue = i % 2 ? "root/a" : "root/b", .tasks = 2, .task = {{"cpu", 1000}}});
        if (!r.ok()) return r.status();
        HDRF_RETURN_IF_ERROR((*e)->Allocate(*r, 2));
        refs.push_back(*r);
      }
      now_us += 50000000;
      for (JobRef r : refs) HDRF_RETURN_IF_ERROR((*e)->Finish(r, 2));
      now_us += 42000000;  // 100 s a round
      HDRF_RETURN_IF_ERROR((*e)->Checkpoint());
    }
    HDRF_RETURN_IF_ERROR((*e)->Close());
  }
  return Import(db, {}, sum);
}

TEST_F(StoreImport, RetentionKeepsTheHistoryBeforeTheNewestCheckpoint) {
  StoreImportSummary sum;
  // Off (the default): the log from the checkpoint before the newest on;
  // the summary counts the jobs cut.
  auto off = ImportRounds(Sub("off"), 0, 0, &sum);
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_LT(sum.jobs, 40u);
  EXPECT_EQ(sum.jobs + sum.before_log, 40u);
  EXPECT_GT(sum.before_log, 0u);
  // Every event kept: every job, from the first.
  auto all = ImportRounds(Sub("all"), UINT64_MAX, 0, &sum);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(sum.jobs, 40u);
  EXPECT_EQ(sum.before_log, 0u);
  EXPECT_EQ(sum.first_seq, 1u);
  auto w = Parse(*all, "all.csv");
  ASSERT_EQ(w.jobs.size(), 40u);
  EXPECT_EQ(w.jobs[0].spec.name, "r0j0");
  EXPECT_EQ(w.jobs[0].duration_ms, 57000);  // submitted at 1 s, finished at 58 s
  EXPECT_EQ(w.jobs[39].arrival_ms, 400000 + 7000);
  // By events: a round is 24 events (8 submissions, 8 allocations, 8
  // finishes), 120 in all; the last 60 reach back into round 2 (events
  // 49..72, its submissions among 49..64). Records go whole, so round 2
  // keeps 2 to 8 of its jobs.
  ASSERT_TRUE(ImportRounds(Sub("events"), 60, 0, &sum).ok());
  EXPECT_GE(sum.jobs, 18u);
  EXPECT_LE(sum.jobs, 24u);
  EXPECT_EQ(sum.jobs + sum.before_log, 40u);
  // By time: the last checkpoint's event is round 4's last finish, at
  // 458 s; 280 s before it is 178 s: round 1 ended at 158 s, round 2's
  // first submission came at 201 s. Rounds 2..4 stay.
  ASSERT_TRUE(ImportRounds(Sub("seconds"), 0, 280, &sum).ok());
  EXPECT_EQ(sum.jobs, 24u);
  EXPECT_EQ(sum.before_log, 16u);
  // A negative time is refused, naming the option.
  EngineOptions bad;
  bad.db_path = Sub("bad");
  bad.log_retention_seconds = -1;
  auto e = Engine::Create({{"cpu", 1000}}, {{.path = "root/a"}}, bad);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("log_retention_seconds"));
}

// `hdrf simulate --db` and `hdrf workload import --from-db` as a user runs
// them: the flow of docs/simulate_import.md, and the errors' exit codes.
TEST_F(StoreImport, CommandLine) {
  const char* bin = std::getenv("HDRF_BIN");
  const char* data = std::getenv("HDRF_TEST_DATA");
  if (!bin || !data) GTEST_SKIP() << "HDRF_BIN and HDRF_TEST_DATA name the hdrf binary and tests/data";
  const std::string hdrf = std::string("'") + bin + "'";
  const std::string sample = std::string(data) + "/simulate";
  auto run = [&](const std::string& args) { return testing::RunCaptured(hdrf + " " + args, dir_); };
  auto r = run("simulate --config " + sample + "/queues.yaml --workload " + sample + "/workload.csv --db " +
               Sub("db") + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("workload import --from-db " + Sub("db") + " --since 0 --out " + Sub("back.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("300 jobs"));
  EXPECT_THAT(r.err, HasSubstr("from 1970-01-01T00:00:00Z (arrival 0)"));
  auto w = LoadWorkloadFile(sample + "/workload.csv", {"cpu", "memory", "nvidia.com/gpu"});
  auto back = LoadWorkloadFile(Sub("back.csv"), {"cpu", "memory", "nvidia.com/gpu"});
  ASSERT_TRUE(w.ok() && back.ok());
  ASSERT_EQ(back->jobs.size(), w->jobs.size());
  r = run("simulate --config " + sample + "/queues.yaml --workload " + Sub("back.csv") + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  // The store's tree as a configuration (`hdrf queues --db --yaml`): the
  // queues and cluster of the file that wrote it, and the same simulation.
  r = run("queues --db " + Sub("db") + " --yaml");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ofstream(Sub("current.yaml")) << r.out;
  auto exported = LoadQueueConfigFile(Sub("current.yaml"));
  auto original = LoadQueueConfigFile(sample + "/queues.yaml");
  ASSERT_TRUE(exported.ok()) << exported.status().message() << "\n" << r.out;
  ASSERT_TRUE(original.ok());
  EXPECT_EQ(exported->cluster, original->cluster);
  ASSERT_EQ(exported->queues.size(), original->queues.size()) << r.out;
  std::map<std::string, const QueueSpec*> by_path;  // the store lists them in path order
  for (const QueueSpec& q : exported->queues) by_path[q.path] = &q;
  for (const QueueSpec& x : original->queues) {
    ASSERT_TRUE(by_path.count(x.path)) << x.path;
    const QueueSpec& y = *by_path[x.path];
    EXPECT_EQ(y.weight, x.weight) << x.path;
    EXPECT_EQ(y.capability, x.capability) << x.path;
    EXPECT_EQ(y.guarantee, x.guarantee) << x.path;
    EXPECT_EQ(y.min_user_limit_percent, x.min_user_limit_percent) << x.path;
  }
  auto sim_exported = run("simulate --config " + Sub("current.yaml") + " --workload " + Sub("back.csv"));
  auto sim_original = run("simulate --config " + sample + "/queues.yaml --workload " + Sub("back.csv"));
  ASSERT_EQ(sim_exported.code, 0) << sim_exported.err;
  EXPECT_EQ(sim_exported.out, sim_original.out);

  struct Bad {
    std::string args, phrase;
    int code;
  } bad[] = {
      {"workload import --from-db " + Sub("nothing") + " --out " + Sub("x.csv"), "no store at " + Sub("nothing"), 1},
      {"workload import --from-db " + Sub("db") + " --since soon --out " + Sub("x.csv"), "--since: 'soon' is neither", 1},
      {"workload import --from-db " + Sub("db") + " --since 10 --until 5 --out " + Sub("x.csv"), "is after --until", 1},
      {"workload import --from-db " + Sub("db") + " --from volcano --out " + Sub("x.csv"), "excludes", 2},
      {"workload import --since 5 --out " + Sub("x.csv"), "requires --from-db", 2},
      {"queues --db " + Sub("db") + " --yaml --json", "--yaml does not go with --json", 2},
      {"workload import --out " + Sub("x.csv"), "give --from volcano FILE or --from-db DIR", 2},
      {"simulate --config " + sample + "/queues.yaml --workload " + sample + "/workload.csv --db " + Sub("db"),
       Sub("db"), 1},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.args);
    r = run(b.args);
    EXPECT_EQ(r.code, b.code) << r.err;
    EXPECT_THAT(r.err, HasSubstr(b.phrase));
  }
  EXPECT_FALSE(fs::exists(Sub("x.csv")));
}

}  // namespace
}  // namespace hdrf
