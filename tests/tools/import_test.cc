// Trace import (api/hdrf/trace_import.h) and a store's log as a trace
// (api/hdrf/store_trace.h): CSV and JSONL give the same trace, an imported trace
// replays to the state the same events give through the API, every
// malformed line is named, and a store's checkpoint + log replays to the
// digest recovery reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/store_trace.h"
#include "hdrf/trace.h"
#include "hdrf/trace_import.h"
#include "tests/tools/trace_replay.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;

ResourceAmounts Cluster() { return {{"cpu", 32000}, {"memory", int64_t{64} << 30}, {"nvidia.com/gpu", 4000}}; }
std::vector<QueueSpec> Queues() {
  QueueSpec eng, prod, dev;
  eng.path = "root/eng";
  eng.weight = 2;
  prod.path = "root/eng/prod";
  prod.weight = 3;
  dev.path = "root/eng/dev";
  return {eng, prod, dev};
}

const char kCsv[] =
    "# exported by a platform\n"
    "event,job,queue,user,tasks,task,n,weight,capability\n"
    "queue,,root/sci,,,,,4,cpu=8\n"
    "submit,train-1,root/eng/prod,alice,4,cpu=2;memory=4Gi;nvidia.com/gpu=1,,,\n"
    "submit,\"batch-2\",root/eng/dev,bob,8,cpu=500m;memory=1Gi,,2,\n"
    "allocate,train-1,,,,,2,,\n"
    "\n"
    "allocate,\"batch-2\",,,,,5,,\n"
    "submit,sim-3,root/sci,carol,3,cpu=4,,,\n"
    "allocate,sim-3,,,,,1,,\n"
    "release,\"batch-2\",,,,,2,,\n"
    "finish,train-1,,,,,1,,\n"
    "remove,sim-3,,,,,,,\n"
    "allocate,\"batch-2\",,,,,,,\r\n"
    "submit,sim-3,root/sci,carol,1,cpu=1,,,\n";

const char kJsonl[] =
    "{\"event\": \"queue\", \"queue\": \"root/sci\", \"weight\": 4, \"capability\": {\"cpu\": \"8\"}}\n"
    "{\"event\": \"submit\", \"job\": \"train-1\", \"queue\": \"root/eng/prod\", \"user\": \"alice\", \"tasks\": 4,"
    " \"task\": {\"cpu\": 2, \"memory\": \"4Gi\", \"nvidia.com/gpu\": 1}}\n"
    "{\"event\": \"submit\", \"job\": \"batch-2\", \"queue\": \"root/eng/dev\", \"user\": \"bob\", \"tasks\": 8,"
    " \"task\": \"cpu=500m;memory=1Gi\", \"weight\": 2.0}\n"
    "{\"event\": \"allocate\", \"job\": \"train-1\", \"n\": 2, \"time\": 17}\n"
    "{\"event\": \"allocate\", \"job\": \"batch-2\", \"n\": 5}\n"
    "{\"event\": \"submit\", \"job\": \"sim-3\", \"queue\": \"root/sci\", \"user\": \"carol\", \"tasks\": 3,"
    " \"task\": {\"cpu\": \"4\"}}\n"
    "{\"event\": \"allocate\", \"job\": \"sim-3\", \"n\": 1}\n"
    "{\"event\": \"release\", \"job\": \"batch-2\", \"n\": 2}\n"
    "{\"event\": \"finish\", \"job\": \"train-1\", \"n\": 1}\n"
    "\t\n"
    "{\"event\": \"remove\", \"job\": \"sim-3\"}\n"
    "{\"event\": \"allocate\", \"job\": \"batch-2\", \"n\": null}\n"
    "{\"event\": \"submit\", \"job\": \"sim-3\", \"queue\": \"root/sci\", \"user\": \"carol\", \"task\": {\"cpu\": 1}}\n";

TraceImportOptions Base() {
  TraceImportOptions o;
  o.cluster = Cluster();
  o.queues = Queues();
  return o;
}

TEST(TraceImport, CsvAndJsonlGiveTheSameBytes) {
  TraceImportStats cs, js;
  auto a = ImportTrace(kCsv, TraceImportFormat::kCsv, "e.csv", Base(), &cs);
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto b = ImportTrace(kJsonl, TraceImportFormat::kJsonl, "e.jsonl", Base(), &js);
  ASSERT_TRUE(b.ok()) << b.status().message();
  auto ea = EncodeTrace(*a), eb = EncodeTrace(*b);
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_EQ(*ea, *eb);
  EXPECT_EQ(a->events.size(), 11u);
  EXPECT_EQ(a->jobs.size(), 4u);  // sim-3 twice: removed, then submitted again
  EXPECT_EQ(a->queues.size(), 4u);
  EXPECT_EQ(cs.queue_lines, 1u);
  EXPECT_EQ(cs.lines, 15u);
  EXPECT_EQ(TraceSetupEvents(*a), 2u);
  EXPECT_EQ(cs.digest, js.digest);
  // The encoded trace reads back to the same trace.
  auto back = DecodeTrace(ea->data(), ea->size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->events.size(), a->events.size());
  // Issue 26 item 15: a UTF-8 byte-order mark is skipped, as by every
  // reader (before: "unknown column '\xEF\xBB\xBFevent'", invisible).
  auto bom = ImportTrace("\xEF\xBB\xBF" + std::string(kCsv), TraceImportFormat::kCsv, "e.csv", Base());
  ASSERT_TRUE(bom.ok()) << bom.status().message();
  EXPECT_EQ(*EncodeTrace(*bom), *ea);
}

// The same events, applied by hand through the API.
TEST(TraceImport, ReplayGivesTheStateOfTheSameApiCalls) {
  TraceImportStats st;
  auto t = ImportTrace(kCsv, TraceImportFormat::kCsv, "e.csv", Base(), &st);
  ASSERT_TRUE(t.ok()) << t.status().message();

  std::vector<QueueSpec> qs = Queues();
  QueueSpec sci;
  sci.path = "root/sci";
  sci.weight = 4;
  sci.capability = {{"cpu", 8000}};
  qs.push_back(sci);
  auto eng = Engine::Create(Cluster(), qs);
  ASSERT_TRUE(eng.ok()) << eng.status().message();
  Engine& e = **eng;
  auto job = [](std::string name, std::string queue, std::string user, int64_t tasks, ResourceAmounts task,
                double weight = 1) {
    JobSpec j;
    j.name = std::move(name);
    j.queue = std::move(queue);
    j.user = std::move(user);
    j.tasks = tasks;
    j.task = std::move(task);
    j.weight = weight;
    return j;
  };
  auto train = e.Submit(job("train-1", "root/eng/prod", "alice", 4,
                            {{"cpu", 2000}, {"memory", int64_t{4} << 30}, {"nvidia.com/gpu", 1000}}));
  auto batch = e.Submit(job("batch-2", "root/eng/dev", "bob", 8, {{"cpu", 500}, {"memory", int64_t{1} << 30}}, 2));
  ASSERT_TRUE(train.ok() && batch.ok());
  ASSERT_TRUE(e.Allocate(*train, 2).ok());
  ASSERT_TRUE(e.Allocate(*batch, 5).ok());
  auto sim = e.Submit(job("sim-3", "root/sci", "carol", 3, {{"cpu", 4000}}));
  ASSERT_TRUE(sim.ok());
  ASSERT_TRUE(e.Allocate(*sim, 1).ok());
  ASSERT_TRUE(e.Release(*batch, 2).ok());
  ASSERT_TRUE(e.Finish(*train, 1).ok());
  ASSERT_TRUE(e.Remove(*sim).ok());
  ASSERT_TRUE(e.Allocate(*batch, 1).ok());
  ASSERT_TRUE(e.Submit(job("sim-3", "root/sci", "carol", 1, {{"cpu", 1000}})).ok());

  EXPECT_EQ(ReplayDigest(*t), e.DigestHex());
  EXPECT_EQ(st.digest, e.DigestHex());
  // A different event stream gives a different state (the check can fail).
  ASSERT_TRUE(e.Allocate(*batch, 1).ok());
  EXPECT_NE(ReplayDigest(*t), e.DigestHex());
}

TEST(TraceImport, QueueAndClusterLinesReplaceTheConfiguration) {
  const char text[] =
      "{\"event\": \"cluster\", \"capacity\": {\"cpu\": 4}}\n"
      "{\"event\": \"queue\", \"queue\": \"root/eng\", \"weight\": 7, \"state\": \"open\", \"reclaimable\": false}\n"
      "{\"event\": \"submit\", \"job\": \"a\", \"queue\": \"root/eng/dev\", \"task\": {\"cpu\": 1}, \"tasks\": 5}\n"
      "{\"event\": \"allocate\", \"job\": \"a\", \"n\": 4}\n";
  auto t = ImportTrace(text, TraceImportFormat::kJsonl, "q.jsonl", Base());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->cluster, (ResourceAmounts{{"cpu", 4000}}));
  ASSERT_EQ(t->queues.size(), 3u);
  EXPECT_EQ(t->queues[0].path, "root/eng");
  EXPECT_EQ(t->queues[0].weight, 7);
  EXPECT_FALSE(t->queues[0].reclaimable);
  // Five tasks of 1 cpu do not fit in 4 cpus: the engine check names the line.
  const std::string over = std::string(text) + "{\"event\": \"allocate\", \"job\": \"a\"}\n";
  auto bad = ImportTrace(over, TraceImportFormat::kJsonl, "q.jsonl", Base());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("q.jsonl:5: allocate 1 of job 'a' is refused by the engine"));
  // ... unless the check is off.
  TraceImportOptions o = Base();
  o.check = false;
  EXPECT_TRUE(ImportTrace(over, TraceImportFormat::kJsonl, "q.jsonl", o).ok());
}

struct Bad {
  TraceImportFormat format;
  std::string text;
  std::string message;
};

TEST(TraceImport, EveryMalformedLineIsNamed) {
  const auto C = TraceImportFormat::kCsv, J = TraceImportFormat::kJsonl;
  const std::string h = "event,job,task,n,queue\n";
  const std::string sub = "{\"event\": \"submit\", \"job\": \"a\", \"task\": {\"cpu\": 1}}\n";
  const std::vector<Bad> cases = {
      {C, "", "f: no header line"},
      {C, "evnt,job\n", "f:1: unknown column 'evnt'"},
      {C, "job,task\n", "f:1: the header has no 'event' column"},
      {C, "event,job,job\n", "f:1: column 'job' appears twice"},
      {C, h + "submit,a,cpu=1\n", "f:2: 3 fields, the header (line 1) has 5"},
      {C, h + "submit,\"a,cpu=1,,\n", "f:2: the quoted field at column 8 has no closing quote"},
      {C, h + "submit,a\"b,cpu=1,,\n", "f:2: a quote inside the unquoted field"},
      {C, h + "submit,a,cpus=1,,\n", "f:2: task: unknown resource 'cpus'"},
      {C, h + "submit,a,cpu=lots,,\n", "f:2: task: cpu:"},
      {C, h + "submit,a,cpu,,\n", "f:2: task: 'cpu' is not RESOURCE=QUANTITY"},
      {C, h + "submit,a,cpu=1;cpu=2,,\n", "f:2: task: resource 'cpu' given twice"},
      {C, h + "submit,a,,,\n", "f:2: a submit event needs the field 'task'"},
      {C, h + "submit,a,cpu=1,2,\n", "f:2: field 'n' does not apply to a submit event"},
      {C, h + "launch,a,cpu=1,,\n", "f:2: unknown event 'launch'"},
      {C, h + ",a,cpu=1,,\n", "f:2: no event"},
      {C, h + "submit,a,cpu=1,,\nallocate,a,,0,\n", "f:3: n: 0 is out of range 1..16777215"},
      {C, h + "submit,a,cpu=1,,\nallocate,a,,two,\n", "f:3: n: 'two' is not a whole number"},
      {C, h + "allocate,b,,1,\n", "f:2: unknown job 'b'"},
      {C, h + "submit,a,cpu=1,,\nsubmit,a,cpu=1,,\n", "f:3: job 'a' is already submitted (line 2)"},
      {C, h + "submit,a,cpu=1,,\nremove,a,,,\nrelease,a,,1,\n", "f:4: job 'a' was removed at line 3"},
      {C, h + "submit,a,cpu=1,,\nqueue,,,,root/x\n", "f:3: a queue event after the first job event (line 2)"},
      {C, h + "queue,,,,root/x\nqueue,,,,root/x\n", "f:3: queue root/x is defined twice (first at line 2)"},
      {C, h + "submit,a,cpu=1,,root/nowhere\n", "f:2: submit of job 'a' is refused by the engine"},
      {C, h + "submit,a b,cpu=1,,\n", "f:2: job: job name 'a b': a blank at byte 2 is not allowed"},
      {C, h + "submit,a,cpu=1,,root/x\ty\n", "f:2: queue: queue path 'root/x\\x09y': queue name 'x\\x09y'"},
      {C, h + "submit,a,cpu=1,,\nrelease,a,,1,\n", "f:3: release 1 of job 'a' is refused by the engine"},
      {J, "[1]\n", "f:1: column 1: expected a JSON object"},
      {J, "{\"event\": \"submit\" \"job\": \"a\"}\n", "f:1: column 20: expected ',' or '}'"},
      {J, "{\"event\": \"submit\", \"jbo\": \"a\"}\n", "f:1: column 21: unknown field 'jbo'"},
      {J, "{\"event\": \"submit\", \"event\": \"submit\"}\n", "f:1: column 21: field 'event' given twice"},
      {J, "{\"event\": \"submit\", \"job\": \"a}\n", "f:1: column 28: the string has no closing quote"},
      {J, "{\"event\": \"submit\", \"job\": \"a\\q\"}\n", "f:1: column 30: unknown escape"},
      {J, "{\"event\": \"submit\", \"job\": 5, \"task\": {\"cpu\": 1}}\n", "f:1: job: expected a string"},
      {J, "{\"event\": \"submit\", \"job\": \"a\", \"task\": [1]}\n", "f:1: column 41: arrays are not used"},
      {J, "{\"event\": \"submit\", \"job\": \"a\", \"task\": {\"cpu\": {}}}\n", "f:1: column 49: a nested object is not allowed here"},
      {J, "{\"event\": \"submit\", \"job\": \"a\", \"task\": {\"cpu\": 1}} x\n", "f:1: column 53: unexpected text after the object"},
      {J, "{\"event\": \"submit\", \"job\": \"a\", \"tasks\": 01, \"task\": {\"cpu\": 1}}\n",
       "f:1: column 43: expected ',' or '}'"},
      {J, sub + "{\"event\": \"allocate\", \"job\": \"a\", \"n\": 1.5}\n", "f:2: n: '1.5' is not a whole number"},
      {J, sub + "{\"event\": \"allocate\", \"job\": \"a\", \"n\": -1}\n", "f:2: n: -1 is out of range"},
      {J, sub + "{\"event\": \"finish\", \"job\": \"a\", \"n\": 1}\n", "f:2: finish 1 of job 'a' is refused"},
      {J, "{\"event\": \"queue\", \"queue\": \"root/x\", \"state\": \"shut\"}\n", "f:1: state: 'shut' is not open"},
      {J, "{\"event\": \"queue\", \"queue\": \"root/x\", \"reclaimable\": 1}\n", "f:1: reclaimable: '1' is not true"},
      {J, "{\"event\": \"queue\", \"queue\": \"root/x\", \"weight\": -2}\n", "f:1: weight: '-2' is not a number >= 0"},
      {J, "{\"event\": \"cluster\", \"capacity\": {\"cpu\": 1}}\n{\"event\": \"cluster\", \"capacity\": {\"cpu\": 1}}\n",
       "f:2: a second cluster event (the first is at line 1)"},
  };
  for (const Bad& b : cases) {
    auto t = ImportTrace(b.text, b.format, "f", Base());
    ASSERT_FALSE(t.ok()) << b.text;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << b.text;
    EXPECT_THAT(t.status().message(), HasSubstr(b.message)) << b.text;
  }
  // No cluster anywhere.
  auto none = ImportTrace(sub, TraceImportFormat::kJsonl, "f", TraceImportOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("f: no cluster capacity"));
}

TEST(TraceImport, FormatByFileName) {
  EXPECT_EQ(*TraceImportFormatOf("a/b.csv"), TraceImportFormat::kCsv);
  EXPECT_EQ(*TraceImportFormatOf("b.jsonl"), TraceImportFormat::kJsonl);
  EXPECT_EQ(*TraceImportFormatOf("b.ndjson"), TraceImportFormat::kJsonl);
  auto bad = TraceImportFormatOf("b.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("b.json: unknown event file type"));
  auto missing = ImportTraceFile("/nonexistent/e.csv", Base());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/e.csv"));
}

// ---- a store's log as a trace --------------------------------------------------------

// Writes a store at `dir` in a child process that exits without Close (what
// a crash leaves: the latest checkpoint and the log after it). With
// `checkpoint`, one is taken after about half of the events; with
// `queue_event`, the log also holds a queue event; with `late_submits`,
// jobs are also submitted among the task events (before and after the
// checkpoint), so that an event's sequence number and a job's submission
// number part.
// The writer of WriteStore, in a process of its own: a fresh exec of this
// test binary (WriteStore), never a bare fork, since a fork of a process
// in which RocksDB already runs background threads inherits a thread pool
// without its threads, and the checkpoint's memtable flush would wait
// forever. Exits 0 when the store is written.
[[noreturn]] void WriteStoreChild(const std::string& dir, bool checkpoint, bool queue_event, bool late_submits) {
  EngineOptions o;
  o.db_path = dir;
  o.durability = Durability::kAsync;  // Flush() below makes it durable
  o.checkpoint_every = 0;  // only the one asked for below
  auto eng = Engine::Create(Cluster(), Queues(), o);
  if (!eng.ok()) ::_exit(3);
  Engine& e = **eng;
  std::vector<JobRef> refs;
  for (int i = 0; i < 60; ++i) {
    JobSpec j;
    j.name = "j" + std::to_string(i);
    j.queue = i % 2 ? "root/eng/prod" : "root/eng/dev";
    j.user = "u" + std::to_string(i % 3);
    j.tasks = 1 + i % 5;
    j.task = {{"cpu", 100 + 10 * i}, {"memory", int64_t{1} << 24}};
    auto r = e.Submit(j);
    if (!r.ok()) ::_exit(4);
    refs.push_back(*r);
  }
  for (int k = 0; k < 3000; ++k) {
    JobRef r = refs[static_cast<size_t>(k * 7) % refs.size()];
    auto info = e.GetJob(r);
    if (!info.ok()) ::_exit(5);
    // Allocate one more task; a full job, or one that does not fit, releases.
    Status s = info->allocated < info->tasks ? e.Allocate(r, 1) : Status::OutOfRange("full");
    if (!s.ok() && info->allocated > 0) s = e.Release(r, info->allocated);
    if (!s.ok() && info->allocated > 0) ::_exit(6);
    if (k == 2000) {
      auto j1 = e.GetJob(refs[1]);
      if (j1.ok() && j1->allocated > 0 && !e.Finish(refs[1], 1).ok()) ::_exit(7);
      if (!e.Remove(refs[2]).ok()) ::_exit(8);
      refs[2] = refs[3];
    }
    if (checkpoint && k == 1500 && !e.Checkpoint().ok()) ::_exit(11);
    if (late_submits && (k == 700 || k == 1700 || k == 2600)) {
      for (int i = 0; i < 3; ++i) {
        JobSpec j;
        j.name = "late" + std::to_string(k) + "_" + std::to_string(i);
        j.queue = i % 2 ? "root/eng/prod" : "root/eng/dev";
        j.user = "u9";
        j.tasks = 2 + i;
        j.task = {{"cpu", 50}, {"memory", int64_t{1} << 20}};
        auto r = e.Submit(j);
        if (!r.ok()) ::_exit(12);
        if (!e.Allocate(*r, 1).ok()) ::_exit(13);
        refs.push_back(*r);
      }
    }
    if (queue_event && k == 2500) {
      QueueSpec q;
      q.path = "root/late";
      if (!e.CreateQueue(q).ok()) ::_exit(9);
    }
  }
  if (!e.Flush().ok()) ::_exit(10);
  ::_exit(0);  // no Close: no final checkpoint
}

// StoreTraceChild.Write runs WriteStoreChild when WriteStore execs this
// binary for it (HDRF_IMPORT_TEST_STORE set); in a normal run it is skipped.
TEST(StoreTraceChild, Write) {
  const char* dir = std::getenv("HDRF_IMPORT_TEST_STORE");
  if (dir == nullptr) GTEST_SKIP() << "runs only as WriteStore's child";
  const char* flags = std::getenv("HDRF_IMPORT_TEST_FLAGS");
  const std::string f = flags ? flags : "";
  WriteStoreChild(dir, f.find('c') != std::string::npos, f.find('q') != std::string::npos,
                  f.find('s') != std::string::npos);
}

void WriteStore(const std::string& dir, bool checkpoint, bool queue_event, bool late_submits = false) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("HDRF_IMPORT_TEST_STORE", dir.c_str(), 1);
    ::setenv("HDRF_IMPORT_TEST_FLAGS", (std::string(checkpoint ? "c" : "") + (queue_event ? "q" : "") + (late_submits ? "s" : "")).c_str(),
             1);
    ::execl("/proc/self/exe", "import_test", "--gtest_filter=StoreTraceChild.Write", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
}

std::string StoreDir(const std::string& name) {
  return ::testing::TempDir() + "/hdrf_import_test_" + std::to_string(::getpid()) + "_" + name;
}

std::pair<uint64_t, std::string> Recover(const std::string& dir) {
  EngineOptions o;
  o.db_path = dir;
  o.durability = Durability::kNone;
  auto e = Engine::Open(o);
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!e.ok()) return {0, ""};
  return {(*e)->last_seq(), (*e)->DigestHex()};
}

TEST(StoreTrace, CheckpointAndLogReplayToTheRecoveredDigest) {
  for (int variant = 0; variant < 4; ++variant) {
    const bool checkpoint = variant & 1, late = variant & 2;
    const std::string dir = StoreDir(std::string(checkpoint ? "ckpt" : "log") + (late ? "_late" : ""));
    // `late`: submissions among the task events, so that an event's
    // sequence number is not its job's submission number.
    WriteStore(dir, checkpoint, /*queue_event=*/false, late);
    auto st = ReadStoreTrace(dir);
    ASSERT_TRUE(st.ok()) << st.status().message();
    auto [last, digest] = Recover(dir);
    EXPECT_EQ(st->last_seq, last);
    EXPECT_GE(st->last_seq, 2000u);
    EXPECT_EQ(ReplayDigest(st->trace), digest) << "checkpoint " << checkpoint << ", late submissions " << late;
    // The trace: the checkpoint rebuilt, then exactly the logged events.
    EXPECT_EQ(st->trace.events.size() - st->base_events, st->last_seq - st->checkpoint_seq);
    if (!checkpoint) {
      EXPECT_EQ(st->checkpoint_seq, 0u);
      EXPECT_EQ(st->base_events, 0u);
    } else {
      EXPECT_GT(st->checkpoint_seq, 0u);
      EXPECT_GT(st->base_events, st->base_submits);
    }
    // Fewer events give another digest: the comparison can fail.
    Trace shorter = st->trace;
    shorter.events.pop_back();
    EXPECT_NE(ReplayDigest(shorter), digest);
    (void)std::system(("rm -rf '" + dir + "'").c_str());
  }
}

TEST(StoreTrace, QueueEventsInTheLogAreNamed) {
  const std::string dir = StoreDir("q");
  WriteStore(dir, /*checkpoint=*/true, /*queue_event=*/true);
  auto st = ReadStoreTrace(dir);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.status().message(), HasSubstr("store " + dir));
  EXPECT_THAT(st.status().message(), HasSubstr("replays job and task events only"));
  (void)std::system(("rm -rf '" + dir + "'").c_str());
  auto none = ReadStoreTrace(dir);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no store at"));
}

}  // namespace
}  // namespace hdrf
