// Pinned digests: the state digest (docs/spec.md §9) of fixed scenarios, generated
// and imported traces, and the XXH64 checksum of a generated trace's file
// image. The values were computed by the code before the hand-written XXH64,
// JSON writer and JSONL parser were replaced by libraries (issue 13); a
// change of any of them here means a store, a trace file or a tool output
// no longer matches what earlier builds wrote.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/sim.h"
#include "hdrf/trace.h"
#include "hdrf/trace_import.h"
#include "tests/tools/trace_replay.h"

namespace hdrf {
namespace {

std::string DataPath(const std::string& rel) {
  const char* d = std::getenv("HDRF_TEST_DATA");
  return std::string(d ? d : "tests/data") + "/" + rel;
}

std::string ScenarioDigest(const std::string& rel) {
  auto sc = LoadScenarioFile(DataPath(rel));
  EXPECT_TRUE(sc.ok()) << rel << ": " << sc.status().ToString();
  if (!sc.ok()) return "";
  auto res = RunScenario(*sc);
  EXPECT_TRUE(res.ok()) << rel << ": " << res.status().ToString();
  return res.ok() ? res->digest : "";
}


struct Generated {
  std::string digest;
  uint64_t image_xxh64 = 0;
  size_t image_size = 0;
};

Generated Generate(const TraceGenOptions& o) {
  Generated g;
  auto t = GenerateTrace(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return g;
  auto img = EncodeTrace(*t);
  EXPECT_TRUE(img.ok()) << img.status().ToString();
  if (!img.ok()) return g;
  g.image_xxh64 = TraceChecksum(img->data(), img->size(), 0);
  g.image_size = img->size();
  g.digest = ReplayDigest(*t);
  return g;
}

TEST(PinnedDigests, Scenarios) {
  EXPECT_EQ(ScenarioDigest("scenarios/spec_example.yaml"), "6ab9bcd33f540ad5");
  EXPECT_EQ(ScenarioDigest("scenarios/worked_example_1.yaml"), "fde7033e19bcc8db");
  EXPECT_EQ(ScenarioDigest("config/scenario_basic.yaml"), "6ab9bcd33f540ad5");
  EXPECT_EQ(ScenarioDigest("config/scenario_defaults.yaml"), "222a61e1ba4c06a4");
}

// The docs/spec.md §10 JSON line, byte for byte (number forms and separators).
TEST(PinnedDigests, SimJsonLine) {
  auto sc = LoadScenarioFile(DataPath("config/scenario_defaults.yaml"));
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  auto res = RunScenario(*sc);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(SimResultToJson(*res),
            R"({"jobs": [{"name": "j1", "queue": "root/eng/prod", "user": "default", "tasks_allocated": 1, )"
            R"("tasks": 1, "allocated": {"cpu": 1000, "nvidia.com/gpu": 1000}, "share": 0.1, "key": 0.1, )"
            R"("blocked": true, "state": "Running"}, {"name": "j2", "queue": "root/eng/prod", "user": "default", )"
            R"("tasks_allocated": 0, "tasks": 0, "allocated": {"nvidia.com/gpu": 0}, "share": 0, "key": 0, )"
            R"("blocked": true, "state": "Inqueue"}], "queues": [{"path": "root", "share": 0.1, "key": 0.1, )"
            R"("blocked": true, "allocated": {"cpu": 1000, "nvidia.com/gpu": 1000}}, {"path": "root/eng", )"
            R"("share": 0.1, "key": 0.1, "blocked": true, "allocated": {"cpu": 1000, "nvidia.com/gpu": 1000}}, )"
            R"({"path": "root/eng/prod", "share": 0.1, "key": 0.1, "blocked": true, "allocated": {"cpu": 1000, )"
            R"("nvidia.com/gpu": 1000}}, {"path": "root/sci", "share": 0, "key": 0, "blocked": true, )"
            R"("allocated": {"cpu": 0, "nvidia.com/gpu": 0}}], "steps": 1, "digest": "222a61e1ba4c06a4"})");
}

TEST(PinnedDigests, GeneratedTraces) {
  TraceGenOptions plain;
  plain.jobs = 300;
  plain.depth = 2;
  plain.fanout = 3;
  plain.events = 20000;
  plain.seed = 7;
  Generated a = Generate(plain);
  EXPECT_EQ(a.digest, "9d3b29809b86ce08");
  EXPECT_EQ(a.image_xxh64, 17107664149852997164ULL);
  EXPECT_EQ(a.image_size, 191426u);

  TraceGenOptions sat = plain;
  sat.saturate = true;
  sat.seed = 11;
  sat.depth = 3;
  sat.fanout = 2;
  // More than one checksum block (kTraceBlockEvents events each).
  sat.events = 70000;
  Generated b = Generate(sat);
  EXPECT_EQ(b.digest, "b8d66c996a2a4743");
  EXPECT_EQ(b.image_xxh64, 9607244971544682903ULL);
  EXPECT_EQ(b.image_size, 592465u);
}

TEST(PinnedDigests, ImportedJsonl) {
  TraceImportOptions o;
  o.cluster = {{"cpu", 32000}, {"memory", int64_t{64} << 30}, {"nvidia.com/gpu", 4000}};
  QueueSpec eng;
  eng.path = "root/eng";
  eng.weight = 2;
  o.queues = {eng};
  const char text[] =
      "{\"event\": \"cluster\", \"capacity\": {\"cpu\": \"40\", \"memory\": \"64Gi\", \"nvidia.com/gpu\": 4}}\n"
      "{\"event\": \"queue\", \"queue\": \"root/sci\", \"weight\": 4.5, \"capability\": {\"cpu\": \"8\"}}\n"
      "{\"event\": \"submit\", \"job\": \"t\\u0065-1\", \"queue\": \"root/eng\", \"user\": \"al\\u0069ce\","
      " \"tasks\": 4, \"task\": {\"cpu\": 2, \"memory\": \"4Gi\", \"nvidia.com/gpu\": 1}}\n"
      "{\"event\": \"submit\", \"job\": \"b\", \"queue\": \"root/sci\", \"tasks\": 6, \"task\": \"cpu=500m;memory=1Gi\"}\n"
      "{\"event\": \"allocate\", \"job\": \"t\\u0065-1\", \"n\": 3}\n"
      "{\"event\": \"allocate\", \"job\": \"b\", \"n\": 5}\n"
      "{\"event\": \"release\", \"job\": \"b\", \"n\": 2}\n"
      "{\"event\": \"finish\", \"job\": \"t\\u0065-1\", \"n\": 1}\n";
  TraceImportStats st;
  auto t = ImportTrace(text, TraceImportFormat::kJsonl, "p.jsonl", o, &st);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Pinned again when names lost "é" and '"' (issue 26: docs/config.md
  // "Names"); the \u escapes still decode to the names "te-1" and "alice".
  EXPECT_EQ(st.digest, "fd8ff0c55397b090");
  EXPECT_EQ(ReplayDigest(*t), st.digest);
  auto img = EncodeTrace(*t);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(TraceChecksum(img->data(), img->size(), 0), 380299308399349674ULL);
}

}  // namespace
}  // namespace hdrf
