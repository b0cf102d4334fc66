// Workload files (docs/spec.md §13, api/hdrf/simulate.h): exact seconds, CSV and
// JSONL giving the same jobs, and bad input refused with FILE:LINE and the
// field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/formats/text_lines.h"
#include "hdrf/simulate.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::vector<std::string> kResources = {"cpu", "memory", "nvidia.com/gpu"};

StatusOr<Workload> Csv(const std::string& text) {
  return ParseWorkload(text, WorkloadFormat::kCsv, "w.csv", kResources);
}
StatusOr<Workload> Jsonl(const std::string& text) {
  return ParseWorkload(text, WorkloadFormat::kJsonl, "w.jsonl", kResources);
}

TEST(ParseSecondsToMs, ExactDecimals) {
  EXPECT_EQ(*ParseSecondsToMs("12"), 12000);
  EXPECT_EQ(*ParseSecondsToMs("0.001"), 1);
  EXPECT_EQ(*ParseSecondsToMs("0.1"), 100);  // no binary rounding: 0.1 s is 100 ms
  EXPECT_EQ(*ParseSecondsToMs("2.675"), 2675);
  EXPECT_EQ(*ParseSecondsToMs("1.2500"), 1250);  // trailing zeros are not finer than 1 ms
  EXPECT_EQ(*ParseSecondsToMs("1.5e2"), 150000);
  EXPECT_EQ(*ParseSecondsToMs("1e-3"), 1);
  EXPECT_EQ(*ParseSecondsToMs("+3"), 3000);
  EXPECT_EQ(*ParseSecondsToMs("0"), 0);
  EXPECT_EQ(*ParseSecondsToMs("1000000000000"), 1000000000000000);
}

TEST(ParseSecondsToMs, Refusals) {
  EXPECT_THAT(ParseSecondsToMs("0.0005").status().message(), HasSubstr("finer than a millisecond"));
  EXPECT_THAT(ParseSecondsToMs("1.0001").status().message(), HasSubstr("finer than a millisecond"));
  EXPECT_THAT(ParseSecondsToMs("-1").status().message(), HasSubstr("negative"));
  EXPECT_THAT(ParseSecondsToMs("abc").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseSecondsToMs("").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseSecondsToMs("1.5s").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseSecondsToMs("1e").status().message(), HasSubstr("exponent"));
  EXPECT_THAT(ParseSecondsToMs("1e13").status().message(), HasSubstr("too large"));
}

TEST(ParseWorkload, CsvFields) {
  auto w = Csv(
      "# a comment, then the header\n"
      "name,queue,arrival,duration,user,tasks,weight,cpu,memory,nvidia.com/gpu\n"
      "a,root/x,0,1.5,alice,4,2,500m,1Gi,\n"
      "\n"
      "\"b#1\",,2.25,0.001,,,,2,,1\n");
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->jobs.size(), 2u);
  const WorkloadJob& a = w->jobs[0];
  EXPECT_EQ(a.spec.name, "a");
  EXPECT_EQ(a.spec.queue, "root/x");
  EXPECT_EQ(a.arrival_ms, 0);
  EXPECT_EQ(a.duration_ms, 1500);
  EXPECT_EQ(a.spec.user, "alice");
  EXPECT_EQ(a.spec.tasks, 4);
  EXPECT_EQ(a.spec.weight, 2);
  EXPECT_EQ(a.spec.task, (ResourceAmounts{{"cpu", 500}, {"memory", 1073741824}}));
  EXPECT_EQ(a.spec.line, 3);
  const WorkloadJob& b = w->jobs[1];
  EXPECT_EQ(b.spec.name, "b#1");
  EXPECT_EQ(b.spec.queue, "");  // root: admission
  EXPECT_EQ(b.spec.user, "default");
  EXPECT_EQ(b.spec.tasks, 1);
  EXPECT_EQ(b.spec.weight, 1);
  EXPECT_EQ(b.arrival_ms, 2250);
  EXPECT_EQ(b.duration_ms, 1);
  EXPECT_EQ(b.spec.task, (ResourceAmounts{{"cpu", 2000}, {"nvidia.com/gpu", 1000}}));
  EXPECT_EQ(b.spec.line, 5);
}

TEST(ParseWorkload, JsonlSameAsCsv) {
  auto c = Csv("name,queue,arrival,duration,tasks,cpu,memory\nj1,root/a,0.5,10,3,0.5,2Gi\nj2,root,1,0.25,,,\n");
  auto j = Jsonl(
      "{\"name\": \"j1\", \"queue\": \"root/a\", \"arrival\": 0.5, \"duration\": \"10\", \"tasks\": 3, "
      "\"cpu\": 0.5, \"memory\": \"2Gi\"}\n"
      "{\"name\": \"j2\", \"queue\": \"root\", \"arrival\": 1, \"duration\": 0.25, \"user\": null}\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(j.ok()) << j.status().message();
  ASSERT_EQ(c->jobs.size(), j->jobs.size());
  for (size_t i = 0; i < c->jobs.size(); ++i) {
    EXPECT_EQ(c->jobs[i].spec.name, j->jobs[i].spec.name);
    EXPECT_EQ(c->jobs[i].spec.queue, j->jobs[i].spec.queue);
    EXPECT_EQ(c->jobs[i].spec.tasks, j->jobs[i].spec.tasks);
    EXPECT_EQ(c->jobs[i].spec.task, j->jobs[i].spec.task);
    EXPECT_EQ(c->jobs[i].arrival_ms, j->jobs[i].arrival_ms);
    EXPECT_EQ(c->jobs[i].duration_ms, j->jobs[i].duration_ms);
    EXPECT_EQ(c->jobs[i].spec.line, j->jobs[i].spec.line + 1);  // the CSV header line
  }
}

// Each bad file: the error starts with FILE:LINE and names the field.
TEST(ParseWorkload, BadCsvNamesLineAndField) {
  const std::string h = "name,queue,arrival,duration,tasks,weight,cpu\n";
  struct Case {
    std::string text, prefix, what;
  } cases[] = {
      {h + "a,root/x,0.0005,1,1,1,1\n", "w.csv:2: arrival: ", "finer than a millisecond"},
      {h + "a,root/x,-1,1,1,1,1\n", "w.csv:2: arrival: ", "negative"},
      {h + "a,root/x,1,0,1,1,1\n", "w.csv:2: duration: ", "not above 0"},
      {h + "a,root/x,1,0.0001,1,1,1\n", "w.csv:2: duration: ", "finer than a millisecond"},
      {h + "a,root/x,1,1,0,1,1\n", "w.csv:2: tasks: ", "integer >= 1"},
      {h + "a,root/x,1,1,2.5,1,1\n", "w.csv:2: tasks: ", "integer >= 1"},
      {h + "a,root/x,1,1,1,heavy,1\n", "w.csv:2: weight: ", "finite number"},
      {h + "a,root/x,1,1,1,1,1x\n", "w.csv:2: cpu: ", "1x"},
      {h + "a,root/x,1,1,1,1,-1\n", "w.csv:2: cpu: ", "-1"},
      {h + "a,root/x,1,1,1,1,1\nb,root/x,1,1\n", "w.csv:3: ", "4 fields, the header (line 1) has 7"},
      {h + "a,root/x,1,1,1,1,1\na,root/y,2,1,1,1,1\n", "w.csv:3: name: ", "already used at line 2"},
      {h + ",root/x,1,1,1,1,1\n", "w.csv:2: name: ", "missing"},
      {h + "a,root/x,,1,1,1,1\n", "w.csv:2: arrival: ", "missing"},
      {"name,queue,arrival,duration,gpu\n", "w.csv:1: header: ", "unknown field 'gpu'"},
      {"name,queue,arrival\n", "w.csv:1: header: ", "no 'duration' column"},
      {"name,queue,arrival,duration,cpu,cpu\n", "w.csv:1: header: ", "appears twice"},
      {h + "\"a,root/x,1,1,1,1,1\n", "w.csv:2: ", "no closing quote"},
      // Names outside docs/config.md "Names" (issue 26 item 9).
      {h + "\"a b\",root/x,1,1,1,1,1\n", "w.csv:2: name: ", "job name 'a b': a blank at byte 2"},
      {h + "a\x1b[0m,root/x,1,1,1,1,1\n", "w.csv:2: name: ", "job name 'a\\x1b[0m': byte 0x1b at byte 2"},
      {h + "a,root/x y,1,1,1,1,1\n", "w.csv:2: queue: ", "queue name 'x y': a blank"},
      {"name,queue,arrival,duration,user\na,root,1,1,b\xc3\xa9\n", "w.csv:2: user: ", "user name 'b\\xc3\\xa9'"},
      {"# only a comment\n", "w.csv: ", "no header"},
  };
  for (const Case& c : cases) {
    auto w = Csv(c.text);
    ASSERT_FALSE(w.ok()) << c.text;
    EXPECT_THAT(w.status().message(), StartsWith(c.prefix)) << c.text;
    EXPECT_THAT(w.status().message(), HasSubstr(c.what)) << c.text;
  }
}

TEST(ParseWorkload, BadJsonlNamesLineAndField) {
  const std::string ok = "{\"name\": \"a\", \"queue\": \"root\", \"arrival\": 0, \"duration\": 1}\n";
  struct Case {
    std::string text, prefix, what;
  } cases[] = {
      {ok + "{\"name\": \"b\", \"arrival\": 0.1234, \"duration\": 1}\n", "w.jsonl:2: arrival: ", "finer"},
      {ok + "{\"name\": \"b\", \"arrival\": 0, \"duration\": 1, \"gpus\": 1}\n", "w.jsonl:2: ", "unknown field 'gpus'"},
      {ok + "{\"name\": \"b\", \"arrival\": 0, \"duration\": 1, \"cpu\": {\"x\": 1}}\n", "w.jsonl:2: ", "nested"},
      {ok + "{\"name\": \"b\", \"arrival\": 0, \"duration\": true}\n", "w.jsonl:2: ", "boolean"},
      {ok + "{\"name\": \"b\", \"arrival\": 0,\n", "w.jsonl:2: ", "not a JSON object"},
      {ok + "[1, 2]\n", "w.jsonl:2: ", "arrays"},
      {ok + "{\"name\": \"b\", \"name\": \"c\", \"arrival\": 0, \"duration\": 1}\n", "w.jsonl:2: ", "given twice"},
      {ok + "{\"name\": \"b\", \"arrival\": 0}\n", "w.jsonl:2: duration: ", "missing"},
      {ok + ok, "w.jsonl:2: name: ", "already used at line 1"},
      {ok + "{\"name\": \"b\\u0000c\", \"arrival\": 0, \"duration\": 1}\n", "w.jsonl:2: name: ",
       "job name 'b\\x00c': byte 0x00 at byte 2 is not allowed"},
  };
  for (const Case& c : cases) {
    auto w = Jsonl(c.text);
    ASSERT_FALSE(w.ok()) << c.text;
    EXPECT_THAT(w.status().message(), StartsWith(c.prefix)) << c.text;
    EXPECT_THAT(w.status().message(), HasSubstr(c.what)) << c.text;
  }
}

// What a writer quotes with text::CsvField (the Volcano importer) the reader
// gives back as it was: commas, quotes, a leading '#' (issue 26 item 7),
// blanks at the ends; and a byte-order mark is skipped (item 15).
TEST(ParseWorkload, QuotedFieldsAndByteOrderMark) {
  for (const std::string name : {"#a", "a#2", "ns/g", "x@y:z"}) {
    const std::string line = text::CsvField(name) + ",root,1,1\n";
    auto w = Csv("\xEF\xBB\xBFname,queue,arrival,duration\n" + line);
    ASSERT_TRUE(w.ok()) << line << ": " << w.status().message();
    ASSERT_EQ(w->jobs.size(), 1u) << line;
    EXPECT_EQ(w->jobs[0].spec.name, name);
  }
  for (const std::string cell : {"a,b", "say \"hi\"", " pad ", "#c", "\tt", "plain"}) {
    std::vector<std::string> cells;
    ASSERT_FALSE(text::SplitCsv(text::CsvField(cell) + ",x", &cells).has_value()) << cell;
    EXPECT_EQ(cells, (std::vector<std::string>{cell, "x"}));
  }
  EXPECT_EQ(text::CsvField("#c"), "\"#c\"");
  EXPECT_EQ(text::CsvField("plain"), "plain");
}

TEST(WorkloadFormatOf, ByExtension) {
  EXPECT_EQ(*WorkloadFormatOf("a.csv"), WorkloadFormat::kCsv);
  EXPECT_EQ(*WorkloadFormatOf("a.jsonl"), WorkloadFormat::kJsonl);
  EXPECT_EQ(*WorkloadFormatOf("a.ndjson"), WorkloadFormat::kJsonl);
  EXPECT_THAT(WorkloadFormatOf("a.txt").status().message(), HasSubstr("a.txt"));
  EXPECT_THAT(LoadWorkloadFile("/nonexistent/w.csv", kResources).status().message(), HasSubstr("/nonexistent/w.csv"));
}

}  // namespace
}  // namespace hdrf
