// hdrf sim on scenarios with bad content: an error that names the step (or
// job) and its line, never a crash; and the worked examples.
#include <gtest/gtest.h>

#include "hdrf/config.h"
#include "hdrf/sim.h"

namespace hdrf {
namespace {

const char kHead[] =
    "cluster: {cpu: \"4\", memory: \"4Gi\"}\n"
    "queues:\n"
    "  - {path: root/a}\n"
    "  - {path: root/b, state: closed}\n"
    "jobs:\n"
    "  - {name: j, queue: root/a, tasks: 4, task: {cpu: \"1\"}}\n";

std::string RunError(const std::string& steps) {
  auto sc = ParseScenario(std::string(kHead) + steps, "s.yaml");
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  if (!sc.ok()) return "";
  auto r = RunScenario(*sc);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(SimTest, UnknownJobInAStepNamesTheStep) {
  std::string m = RunError("steps:\n  - fill\n  - finish: {job: nope}\n");
  EXPECT_NE(m.find("step 2 (line 9)"), std::string::npos) << m;
  EXPECT_NE(m.find("nope"), std::string::npos) << m;
}

TEST(SimTest, FinishingMoreThanRunsNamesTheStep) {
  std::string m = RunError("steps:\n  - finish: {job: j, tasks: 2}\n");
  EXPECT_NE(m.find("step 1 (line 8)"), std::string::npos) << m;
  EXPECT_NE(m.find("running"), std::string::npos) << m;
}

TEST(SimTest, SubmitToAClosedQueueNamesTheStep) {
  std::string m = RunError("steps:\n  - fill\n  - submit: {name: k, queue: root/b, task: {cpu: \"1\"}}\n");
  EXPECT_NE(m.find("step 2 (line 9)"), std::string::npos) << m;
  EXPECT_NE(m.find("closed"), std::string::npos) << m;
}

TEST(SimTest, TaskLargerThanTheClusterNamesTheStep) {
  std::string m = RunError("steps:\n  - submit: {name: big, queue: root/a, task: {cpu: \"5\"}}\n");
  EXPECT_NE(m.find("step 1 (line 8)"), std::string::npos) << m;
  EXPECT_NE(m.find("more than the cluster"), std::string::npos) << m;
}

TEST(SimTest, BadJobNamesTheJob) {
  auto sc = ParseScenario(
      "cluster: {cpu: \"4\"}\nqueues: [{path: root/a}]\njobs:\n"
      "  - {name: x, queue: root/zz, task: {cpu: \"1\"}}\n",
      "s.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  auto r = RunScenario(*sc);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job 1 (line 4)"), std::string::npos) << r.status().message();
}

int64_t Tasks(const SimResult& r, const std::string& job) {
  for (const JobInfo& j : r.jobs)
    if (j.name == job) return j.allocated;
  return -1;
}

TEST(SimTest, WorkedExamplesThroughTheScenarioFormat) {
  auto sc = ParseScenario(
      "cluster: {cpu: \"30\", nvidia.com/gpu: \"30\"}\n"
      "jobs:\n"
      "  - {name: n11, queue: root/n1/n11, tasks: 30, task: {cpu: \"1\"}}\n"
      "  - {name: n21, queue: root/n2/n21, tasks: 30, task: {cpu: \"1\"}}\n"
      "  - {name: n31, queue: root/n3/n31, tasks: 30, task: {cpu: \"1\"}}\n"
      "  - {name: n32, queue: root/n3/n32, tasks: 30, task: {nvidia.com/gpu: \"1\"}}\n"
      "  - {name: n41, queue: root/n4/n41, tasks: 30, task: {nvidia.com/gpu: \"1\"}}\n"
      "queues:\n"
      "  - {path: root/n1/n11}\n  - {path: root/n2/n21}\n  - {path: root/n3/n31}\n"
      "  - {path: root/n3/n32}\n  - {path: root/n4/n41}\n",
      "w2.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  auto r = RunScenario(*sc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Tasks(*r, "n11"), 10);
  EXPECT_EQ(Tasks(*r, "n21"), 10);
  EXPECT_EQ(Tasks(*r, "n31"), 10);
  EXPECT_EQ(Tasks(*r, "n32"), 15);
  EXPECT_EQ(Tasks(*r, "n41"), 15);
  auto drf = ParseScenario(
      "cluster: {cpu: \"9\", memory: \"18Gi\"}\nqueues: [{path: root/a}, {path: root/b}]\njobs:\n"
      "  - {name: A, queue: root/a, tasks: 100, task: {cpu: \"1\", memory: \"4Gi\"}}\n"
      "  - {name: B, queue: root/b, tasks: 100, task: {cpu: \"3\", memory: \"1Gi\"}}\n",
      "drf.yaml");
  ASSERT_TRUE(drf.ok());
  auto d = RunScenario(*drf);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Tasks(*d, "A"), 3);
  EXPECT_EQ(Tasks(*d, "B"), 2);
  std::string json = SimResultToJson(*d);
  EXPECT_EQ(json.rfind("{\"jobs\": [{\"name\": \"A\", \"queue\": \"root/a\"", 0), 0u) << json;
  EXPECT_NE(json.find("\"tasks_allocated\": 3, \"tasks\": 100, \"allocated\": {\"cpu\": 3000, \"memory\": 12884901888}"),
            std::string::npos) << json;
}

}  // namespace
}  // namespace hdrf
