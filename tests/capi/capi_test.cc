// The C interface (api/hdrf/c.h), linked as embedders link it
// (libhdrf_c.so): results on worked cases, and every kind of bad input —
// NULL and stale handles, unknown names, wrong units, small buffers — gives
// a code and a message, never a crash, and changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hdrf/c.h"
#include "tests/capi/c_err.h"

namespace {

using ::testing::HasSubstr;

using hdrf::testing::Digest;
using hdrf::testing::Err;
using hdrf::testing::LastSeq;

// Worked example 1 of docs/spec.md §4, built by hand.
hdrf_engine_t* WorkedExample(Err& err, const hdrf_options_t* options = nullptr) {
  const char* paths[] = {"root/sci", "root/eng", "root/eng/dev", "root/eng/prod"};
  hdrf_queue_spec_t qs[4];
  for (int i = 0; i < 4; ++i) {
    hdrf_queue_spec_init(&qs[i]);
    qs[i].path = paths[i];
    qs[i].weight = 50;
  }
  hdrf_engine_t* e = nullptr;
  EXPECT_EQ(hdrf_engine_create("cpu=10,nvidia.com/gpu=10", qs, 4, options, &e, &err), HDRF_OK)
      << err.str();
  EXPECT_EQ(hdrf_job_submit(e, "sci", "root/sci", nullptr, 10, "cpu=1,nvidia.com/gpu=1", nullptr, &err), HDRF_OK);
  EXPECT_EQ(hdrf_job_submit(e, "dev", "root/eng/dev", nullptr, 10, "cpu=1", nullptr, &err), HDRF_OK);
  EXPECT_EQ(hdrf_job_submit(e, "prod", "root/eng/prod", nullptr, 10, "nvidia.com/gpu=1", nullptr, &err), HDRF_OK);
  return e;
}

int64_t Allocated(hdrf_engine_t* e, const char* job) {
  int64_t n = -1;
  Err err;
  EXPECT_EQ(hdrf_job_allocated(e, job, &n, &err), HDRF_OK) << err.str();
  return n;
}

const char kWorkedYaml[] = R"(cluster: {cpu: "10", nvidia.com/gpu: "10"}
queues:
  - {path: root/sci, weight: 50}
  - {path: root/eng, weight: 50}
  - {path: root/eng/dev, weight: 50}
  - {path: root/eng/prod, weight: 50}
jobs:
  - {name: sci, queue: root/sci, tasks: 10, task: {cpu: "1", nvidia.com/gpu: "1"}}
  - {name: dev, queue: root/eng/dev, tasks: 10, task: {cpu: "1"}}
  - {name: prod, queue: root/eng/prod, tasks: 10, task: {nvidia.com/gpu: "1"}}
)";

TEST(CApi, WorkedExampleFill) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  int64_t steps = 0;
  ASSERT_EQ(hdrf_fill(e, &steps, &err), HDRF_OK) << err.str();
  EXPECT_EQ(steps, 15);
  for (const char* j : {"sci", "dev", "prod"}) EXPECT_EQ(Allocated(e, j), 5) << j;
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get(e, "sci", &info, &err), HDRF_OK);
  EXPECT_EQ(info.tasks, 10);
  EXPECT_EQ(info.state, HDRF_JOB_RUNNING);
  EXPECT_DOUBLE_EQ(info.share, 0.5);
  EXPECT_EQ(info.seq, 1u);
  int state = -1;
  ASSERT_EQ(hdrf_job_state(e, "dev", &state, &err), HDRF_OK);
  EXPECT_STREQ(hdrf_job_state_name(state), "Running");
  EXPECT_EQ(LastSeq(e), 18u);
  uint64_t n = 0;
  EXPECT_EQ(hdrf_job_count(e, &n, &err), HDRF_OK);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(hdrf_queue_count(e, &n, &err), HDRF_OK);
  EXPECT_EQ(n, 5u);
  int64_t cpu = 0;
  ASSERT_EQ(hdrf_queue_allocated(e, "root/eng", "cpu", &cpu, &err), HDRF_OK);
  EXPECT_EQ(cpu, 5000);  // millicores
  hdrf_queue_info_t q = HDRF_QUEUE_INFO_INIT;
  ASSERT_EQ(hdrf_queue_get(e, "root/eng/dev", &q, &err), HDRF_OK) << err.str();
  EXPECT_EQ(q.weight, 50);
  EXPECT_EQ(q.is_leaf, 1);
  EXPECT_EQ(q.depth, 2);
  EXPECT_EQ(q.jobs[HDRF_JOB_RUNNING], 1);
  EXPECT_EQ(q.blocked, 1);  // cpu is saturated
  ASSERT_EQ(hdrf_queue_get(e, "root", &q, &err), HDRF_OK);
  EXPECT_EQ(q.jobs[HDRF_JOB_RUNNING], 3);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK) << err.str();
}

TEST(CApi, StepAndPickNext) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  char* next = nullptr;
  ASSERT_EQ(hdrf_pick_next(e, &next, &err), HDRF_OK);
  ASSERT_NE(next, nullptr);
  std::string picked = next;
  hdrf_free(next);
  int stepped = 0;
  char* name = nullptr;
  ASSERT_EQ(hdrf_step(e, &stepped, &name, &err), HDRF_OK);
  EXPECT_EQ(stepped, 1);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(picked, name);  // ties to the first by name: root/eng before root/sci
  EXPECT_EQ(Allocated(e, name), 1);
  hdrf_free(name);
  // Optional outputs may be NULL.
  EXPECT_EQ(hdrf_step(e, nullptr, nullptr, &err), HDRF_OK);
  ASSERT_EQ(hdrf_fill(e, nullptr, &err), HDRF_OK);
  ASSERT_EQ(hdrf_pick_next(e, &next, &err), HDRF_OK);
  EXPECT_EQ(next, nullptr);
  ASSERT_EQ(hdrf_step(e, &stepped, &name, &err), HDRF_OK);
  EXPECT_EQ(stepped, 0);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApi, FromScenarioAndConfig) {
  Err err;
  hdrf_engine_t* a = nullptr;
  ASSERT_EQ(hdrf_engine_create_from_scenario(kWorkedYaml, "w1.yaml", 1, nullptr, &a, &err), HDRF_OK)
      << err.str();
  for (const char* j : {"sci", "dev", "prod"}) EXPECT_EQ(Allocated(a, j), 5);

  // The same state built by hand: same digest.
  hdrf_engine_t* b = WorkedExample(err);
  ASSERT_EQ(hdrf_fill(b, nullptr, &err), HDRF_OK);
  EXPECT_EQ(Digest(a), Digest(b));

  // Without running the steps: jobs submitted, nothing allocated.
  hdrf_engine_t* c = nullptr;
  ASSERT_EQ(hdrf_engine_create_from_scenario(kWorkedYaml, nullptr, 0, nullptr, &c, &err), HDRF_OK);
  EXPECT_EQ(Allocated(c, "sci"), 0);
  // As a queue configuration: the queues only.
  hdrf_engine_t* d = nullptr;
  ASSERT_EQ(hdrf_engine_create_from_config(kWorkedYaml, "w1.yaml", nullptr, nullptr, &d, &err), HDRF_OK)
      << err.str();
  uint64_t jobs = 9;
  EXPECT_EQ(hdrf_job_count(d, &jobs, &err), HDRF_OK);
  EXPECT_EQ(jobs, 0u);
  for (hdrf_engine_t* e : {a, b, c, d}) EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApi, ConfigFiles) {
  const char* data = std::getenv("HDRF_TEST_DATA");
  ASSERT_NE(data, nullptr);
  const std::string dir = data;
  Err err;
  hdrf_engine_t* e = nullptr;
  ASSERT_EQ(hdrf_engine_create_from_config_file((dir + "/config/hierarchical_queue.yaml").c_str(),
                                                nullptr, nullptr, &e, &err),
            HDRF_OK)
      << err.str();
  hdrf_queue_info_t q = HDRF_QUEUE_INFO_INIT;
  ASSERT_EQ(hdrf_queue_get(e, "root/eng/prod", &q, &err), HDRF_OK) << err.str();
  EXPECT_EQ(q.weight, 8);
  EXPECT_EQ(q.reclaimable, 0);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);

  // A configuration without a cluster needs one given.
  const char kNoCluster[] = "apiVersion: hdrf.io/v1\nkind: HierarchicalQueue\nmetadata: {name: x}\n"
                            "spec:\n  queues:\n    - {name: a, parent: root, weight: 2}\n";
  EXPECT_EQ(hdrf_engine_create_from_config(kNoCluster, "x.yaml", nullptr, nullptr, &e, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("no cluster"));
  EXPECT_EQ(e, nullptr);
  ASSERT_EQ(hdrf_engine_create_from_config(kNoCluster, "x.yaml", "cpu=4", nullptr, &e, &err), HDRF_OK)
      << err.str();
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);

  ASSERT_EQ(hdrf_engine_create_from_scenario_file((dir + "/scenarios/worked_example_1.yaml").c_str(),
                                                  1, nullptr, &e, &err),
            HDRF_OK)
      << err.str();
  EXPECT_EQ(Allocated(e, "prod"), 5);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);

  // Missing file, malformed YAML: codes and messages naming the source.
  EXPECT_EQ(hdrf_engine_create_from_scenario_file("/nonexistent/x.yaml", 0, nullptr, &e, &err),
            HDRF_IO_ERROR);
  EXPECT_THAT(err.str(), HasSubstr("/nonexistent/x.yaml"));
  EXPECT_EQ(hdrf_engine_create_from_scenario("cluster: {cpu: [", "bad.yaml", 0, nullptr, &e, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("bad.yaml:"));
  EXPECT_EQ(e, nullptr);
}

TEST(CApi, AdmissionAndQueueEvents) {
  Err err;
  hdrf_queue_spec_t qs[2];
  hdrf_queue_spec_init(&qs[0]);
  qs[0].path = "root/a";
  qs[0].capability = "cpu=4";
  qs[0].guarantee = "cpu=2";
  hdrf_queue_spec_init(&qs[1]);
  qs[1].path = "root/b";
  hdrf_engine_t* e = nullptr;
  ASSERT_EQ(hdrf_engine_create("cpu=8,memory=8Gi", qs, 2, nullptr, &e, &err), HDRF_OK) << err.str();

  hdrf_queue_spec_t q;
  hdrf_queue_spec_init(&q);
  q.path = "root/a/x";
  q.weight = 3;
  q.capability = " cpu = 3 , memory=1Gi ";  // spaces are ignored
  ASSERT_EQ(hdrf_queue_create(e, &q, &err), HDRF_OK) << err.str();
  // To a parent: admission picks a leaf.
  hdrf_job_spec_t j;
  hdrf_job_spec_init(&j);
  j.name = "j1";
  j.queue = "root/a";
  j.tasks = 10;
  j.task = "cpu=500m";
  j.weight = 2;
  ASSERT_EQ(hdrf_job_submit_spec(e, &j, nullptr, &err), HDRF_OK) << err.str();
  char* leaf = nullptr;
  ASSERT_EQ(hdrf_job_queue(e, "j1", &leaf, &err), HDRF_OK);
  EXPECT_STREQ(leaf, "root/a/x");
  hdrf_free(leaf);
  ASSERT_EQ(hdrf_job_allocate(e, "j1", 4, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_job_release(e, "j1", 1, &err), HDRF_OK);
  ASSERT_EQ(hdrf_job_finish(e, "j1", 2, &err), HDRF_OK);
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get(e, "j1", &info, &err), HDRF_OK);
  EXPECT_EQ(info.allocated, 1);
  EXPECT_EQ(info.tasks, 8);
  EXPECT_EQ(info.weight, 2);
  // Capability 3 cpu: at most 6 tasks of 500m run.
  ASSERT_EQ(hdrf_fill(e, nullptr, &err), HDRF_OK);
  EXPECT_EQ(Allocated(e, "j1"), 6);
  // More than the cluster has free is refused (the host's placement may
  // exceed a capability, not the cluster).
  EXPECT_EQ(hdrf_job_allocate(e, "j1", 20, &err), HDRF_OUT_OF_RANGE) << err.str();

  q.weight = 5;
  ASSERT_EQ(hdrf_queue_update(e, &q, &err), HDRF_OK) << err.str();
  hdrf_queue_info_t qi = HDRF_QUEUE_INFO_INIT;
  ASSERT_EQ(hdrf_queue_get(e, "root/a/x", &qi, &err), HDRF_OK);
  EXPECT_EQ(qi.weight, 5);
  ASSERT_EQ(hdrf_queue_set_state(e, "root/a/x", HDRF_QUEUE_CLOSED, &err), HDRF_OK);
  EXPECT_EQ(hdrf_queue_delete(e, "root/a/x", &err), HDRF_INVALID_ARGUMENT) << err.str();
  EXPECT_THAT(err.str(), HasSubstr("holds 1 jobs"));
  ASSERT_EQ(hdrf_job_remove(e, "j1", &err), HDRF_OK);
  ASSERT_EQ(hdrf_queue_delete(e, "root/a/x", &err), HDRF_OK) << err.str();
  EXPECT_EQ(hdrf_queue_get(e, "root/a/x", &qi, &err), HDRF_NOT_FOUND);
  ASSERT_EQ(hdrf_set_capacity(e, "cpu=16,memory=8Gi", &err), HDRF_OK) << err.str();
  EXPECT_EQ(hdrf_set_capacity(e, "cpu=16", &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApi, GateOption) {
  Err err;
  hdrf_options_t* o = hdrf_options_create();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(hdrf_options_set_overcommit_factor(o, -1, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_EQ(hdrf_options_set_overcommit_factor(o, 1.0, &err), HDRF_OK);
  hdrf_engine_t* e = nullptr;
  ASSERT_EQ(hdrf_engine_create("cpu=2", nullptr, 0, o, &e, &err), HDRF_OK) << err.str();
  hdrf_options_destroy(o);
  ASSERT_EQ(hdrf_job_submit(e, "a", nullptr, nullptr, 2, "cpu=1", nullptr, &err), HDRF_OK) << err.str();
  hdrf_job_spec_t j;
  hdrf_job_spec_init(&j);
  j.name = "b";
  j.tasks = 2;
  j.task = "cpu=1";
  j.min_available = 2;
  ASSERT_EQ(hdrf_job_submit_spec(e, &j, nullptr, &err), HDRF_OK);
  int state = -1;
  ASSERT_EQ(hdrf_job_state(e, "a", &state, &err), HDRF_OK);
  EXPECT_EQ(state, HDRF_JOB_INQUEUE);
  ASSERT_EQ(hdrf_job_state(e, "b", &state, &err), HDRF_OK);
  // a's minimum (1 cpu) + b's (2 cpu) exceed 1.0 x 2 cpu: b waits.
  EXPECT_EQ(state, HDRF_JOB_PENDING);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

// ---- bad input ----

TEST(CApiErrors, NullHandle) {
  Err err;
  int64_t n = 0;
  uint64_t u = 0;
  char buf[HDRF_DIGEST_SIZE];
  char* s = nullptr;
  hdrf_job_info_t ji = HDRF_JOB_INFO_INIT;
  hdrf_queue_info_t qi = HDRF_QUEUE_INFO_INIT;
  hdrf_queue_spec_t qs;
  hdrf_queue_spec_init(&qs);
  qs.path = "root/x";
  std::vector<hdrf_code> codes = {
      hdrf_queue_create(nullptr, &qs, &err),
      hdrf_queue_update(nullptr, &qs, &err),
      hdrf_queue_set_state(nullptr, "root", HDRF_QUEUE_OPEN, &err),
      hdrf_queue_delete(nullptr, "root/x", &err),
      hdrf_set_capacity(nullptr, "cpu=1", &err),
      hdrf_job_submit(nullptr, "j", nullptr, nullptr, 1, "cpu=1", nullptr, &err),
      hdrf_job_remove(nullptr, "j", &err),
      hdrf_job_allocate(nullptr, "j", 1, &err),
      hdrf_job_release(nullptr, "j", 1, &err),
      hdrf_job_finish(nullptr, "j", 1, &err),
      hdrf_step(nullptr, nullptr, &s, &err),
      hdrf_fill(nullptr, &n, &err),
      hdrf_pick_next(nullptr, &s, &err),
      hdrf_job_get(nullptr, "j", &ji, &err),
      hdrf_job_allocated(nullptr, "j", &n, &err),
      hdrf_queue_get(nullptr, "root", &qi, &err),
      hdrf_queue_allocated(nullptr, "root", "cpu", &n, &err),
      hdrf_digest(nullptr, buf, sizeof buf, &err),
      hdrf_last_seq(nullptr, &u, &err),
      hdrf_durable_seq(nullptr, &u, &err),
      hdrf_job_count(nullptr, &u, &err),
      hdrf_queue_count(nullptr, &u, &err),
      hdrf_metrics(nullptr, &s, nullptr, &err),
      hdrf_flush(nullptr, &err),
      hdrf_checkpoint(nullptr, &err),
      hdrf_engine_close(nullptr, &err),
  };
  for (size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(codes[i], HDRF_INVALID_ARGUMENT) << "call " << i;
  EXPECT_THAT(err.str(), HasSubstr("NULL"));
  EXPECT_EQ(s, nullptr);
  // Without an error slot too.
  EXPECT_EQ(hdrf_fill(nullptr, nullptr, nullptr), HDRF_INVALID_ARGUMENT);
  // Destroying NULL is a no-op, like free(NULL).
  EXPECT_EQ(hdrf_engine_destroy(nullptr, &err), HDRF_OK);
  // NULL outputs and options.
  EXPECT_EQ(hdrf_engine_create("cpu=1", nullptr, 0, nullptr, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_create(nullptr, nullptr, 0, nullptr, nullptr, &err), HDRF_INVALID_ARGUMENT);
  hdrf_engine_t* e = nullptr;
  EXPECT_EQ(hdrf_engine_create("cpu=1", nullptr, 3, nullptr, &e, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_options_set_db_path(nullptr, "x", &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_options_set_durability(nullptr, HDRF_DURABILITY_SYNC, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_options_set_checkpoint_every(nullptr, 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_options_set_checkpoint_events_per_job(nullptr, 4, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("options"));
  EXPECT_EQ(hdrf_options_set_log_retention(nullptr, 1, 0, &err), HDRF_INVALID_ARGUMENT);
  {
    hdrf_options_t* o = hdrf_options_create();
    EXPECT_EQ(hdrf_options_set_log_retention(o, UINT64_MAX, 3600, &err), HDRF_OK);
    EXPECT_EQ(hdrf_options_set_log_retention(o, 0, -1, &err), HDRF_INVALID_ARGUMENT);
    hdrf_options_destroy(o);
  }
  EXPECT_EQ(hdrf_options_set_overcommit_factor(nullptr, 1, &err), HDRF_INVALID_ARGUMENT);
  hdrf_options_destroy(nullptr);
  hdrf_free(nullptr);
  hdrf_queue_spec_init(nullptr);
  hdrf_job_spec_init(nullptr);
}

TEST(CApiErrors, NullArguments) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  const std::string before = Digest(e);
  int64_t n = 0;
  uint64_t u = 0;
  hdrf_job_info_t ji = HDRF_JOB_INFO_INIT;
  hdrf_queue_info_t qi = HDRF_QUEUE_INFO_INIT;
  hdrf_queue_spec_t qs;
  hdrf_queue_spec_init(&qs);  // path NULL
  hdrf_job_spec_t js;
  hdrf_job_spec_init(&js);  // name NULL
  std::vector<hdrf_code> codes = {
      hdrf_queue_create(e, nullptr, &err),
      hdrf_queue_create(e, &qs, &err),
      hdrf_queue_update(e, &qs, &err),
      hdrf_queue_set_state(e, nullptr, HDRF_QUEUE_OPEN, &err),
      hdrf_queue_delete(e, nullptr, &err),
      hdrf_set_capacity(e, nullptr, &err),
      hdrf_job_submit(e, nullptr, nullptr, nullptr, 1, "cpu=1", nullptr, &err),
      hdrf_job_submit_spec(e, nullptr, nullptr, &err),
      hdrf_job_submit_spec(e, &js, nullptr, &err),
      hdrf_job_remove(e, nullptr, &err),
      hdrf_job_allocate(e, nullptr, 1, &err),
      hdrf_job_release(e, nullptr, 1, &err),
      hdrf_job_finish(e, nullptr, 1, &err),
      hdrf_pick_next(e, nullptr, &err),
      hdrf_job_get(e, nullptr, &ji, &err),
      hdrf_job_get(e, "sci", nullptr, &err),
      hdrf_job_allocated(e, "sci", nullptr, &err),
      hdrf_job_state(e, "sci", nullptr, &err),
      hdrf_job_queue(e, "sci", nullptr, &err),
      hdrf_queue_get(e, nullptr, &qi, &err),
      hdrf_queue_get(e, "root", nullptr, &err),
      hdrf_queue_allocated(e, "root", nullptr, &n, &err),
      hdrf_queue_allocated(e, "root", "cpu", nullptr, &err),
      hdrf_digest(e, nullptr, 17, &err),
      hdrf_last_seq(e, nullptr, &err),
      hdrf_job_count(e, nullptr, &err),
      hdrf_metrics(e, nullptr, nullptr, &err),
      hdrf_parse_quantity(nullptr, "1", &n, &err),
      hdrf_parse_quantity("cpu", nullptr, &n, &err),
      hdrf_parse_quantity("cpu", "1", nullptr, &err),
  };
  for (size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(codes[i], HDRF_INVALID_ARGUMENT) << "call " << i;
  EXPECT_THAT(err.str(), HasSubstr("NULL"));
  (void)u;
  EXPECT_EQ(Digest(e), before);
  EXPECT_EQ(LastSeq(e), 3u);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApiErrors, StaleAndForeignHandles) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
  // Destroyed: every use is refused, a second destroy too.
  int64_t n;
  EXPECT_EQ(hdrf_fill(e, &n, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("destroyed"));
  EXPECT_EQ(hdrf_job_allocated(e, "sci", &n, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_close(e, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("destroyed"));
  // A new engine never reuses a destroyed handle's address.
  hdrf_engine_t* e2 = WorkedExample(err);
  EXPECT_NE(e2, e);
  EXPECT_EQ(hdrf_fill(e, &n, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(Allocated(e2, "sci"), 0);
  EXPECT_EQ(hdrf_engine_destroy(e2, &err), HDRF_OK);
  // A pointer that is no handle is refused without being read.
  int not_an_engine = 42;
  auto* fake = reinterpret_cast<hdrf_engine_t*>(&not_an_engine);
  EXPECT_EQ(hdrf_fill(fake, &n, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("was not made by"));
  EXPECT_EQ(hdrf_engine_destroy(fake, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(not_an_engine, 42);
}

TEST(CApiErrors, UnknownNames) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  const std::string before = Digest(e);
  int64_t n;
  hdrf_job_info_t ji = HDRF_JOB_INFO_INIT;
  hdrf_queue_info_t qi = HDRF_QUEUE_INFO_INIT;
  EXPECT_EQ(hdrf_job_allocate(e, "ghost", 1, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr("ghost"));
  EXPECT_EQ(hdrf_job_release(e, "ghost", 1, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_finish(e, "ghost", 1, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_remove(e, "ghost", &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_get(e, "ghost", &ji, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_allocated(e, "ghost", &n, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_queue_get(e, "root/ghost", &qi, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr("root/ghost"));
  EXPECT_EQ(hdrf_queue_allocated(e, "root/ghost", "cpu", &n, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_queue_allocated(e, "root", "pods", &n, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr("pods"));
  EXPECT_EQ(hdrf_queue_set_state(e, "root/ghost", HDRF_QUEUE_CLOSED, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_queue_delete(e, "root/ghost", &err), HDRF_NOT_FOUND);
  hdrf_code c = hdrf_job_submit(e, "j", "root/ghost", nullptr, 1, "cpu=1", nullptr, &err);
  EXPECT_NE(c, HDRF_OK);
  EXPECT_THAT(err.str(), HasSubstr("root/ghost"));
  // A resource the cluster does not have.
  EXPECT_EQ(hdrf_job_submit(e, "j", "root/sci", nullptr, 1, "memory=1Gi", nullptr, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr("memory"));
  // Duplicates.
  EXPECT_EQ(hdrf_job_submit(e, "sci", "root/sci", nullptr, 1, "cpu=1", nullptr, &err), HDRF_ALREADY_EXISTS);
  // Out-of-range enum values.
  EXPECT_EQ(hdrf_queue_set_state(e, "root/sci", 7, &err), HDRF_INVALID_ARGUMENT);
  hdrf_queue_spec_t qs;
  hdrf_queue_spec_init(&qs);
  qs.path = "root/sci";
  qs.state = -1;
  EXPECT_EQ(hdrf_queue_update(e, &qs, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_STREQ(hdrf_code_name(HDRF_NOT_FOUND), "NotFound");
  EXPECT_STREQ(hdrf_code_name(99), "Unknown");
  EXPECT_EQ(hdrf_job_state_name(9), nullptr);
  EXPECT_STREQ(hdrf_queue_state_name(HDRF_QUEUE_CLOSING), "closing");
  EXPECT_EQ(Digest(e), before);
  EXPECT_EQ(LastSeq(e), 3u);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApiErrors, WrongUnits) {
  Err err;
  hdrf_engine_t* e = nullptr;
  struct Case {
    const char* cluster;
    const char* needle;
  };
  for (const Case& c : {Case{"cpu=1x", "1x"}, Case{"cpu=10,memory=0.5", "0.5"},
                        Case{"cpu=0.0001", "0.0001"}, Case{"cpu=-1", "-1"}, Case{"cpu", "RESOURCE=QUANTITY"},
                        Case{"cpus=4", "cpus"}, Case{"cpu=1,cpu=2", "twice"}, Case{"cpu=1,,memory=1", "RESOURCE=QUANTITY"},
                        Case{"=4", "no resource name"}, Case{"", "no resources"},
                        Case{"cpu=99999999999999999999", "99999999999999999999"}}) {
    EXPECT_EQ(hdrf_engine_create(c.cluster, nullptr, 0, nullptr, &e, &err), HDRF_INVALID_ARGUMENT)
        << c.cluster;
    EXPECT_THAT(err.str(), HasSubstr(c.needle)) << c.cluster;
    EXPECT_EQ(e, nullptr);
  }

  e = WorkedExample(err);
  const std::string before = Digest(e);
  EXPECT_EQ(hdrf_job_submit(e, "j", "root/sci", nullptr, 1, "cpu=1x", nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("1x"));
  EXPECT_THAT(err.str(), HasSubstr("job j: task"));
  EXPECT_EQ(hdrf_job_submit(e, "j", "root/sci", nullptr, 1, "nvidia.com/gpu=1m5", nullptr, &err),
            HDRF_INVALID_ARGUMENT);
  hdrf_queue_spec_t q;
  hdrf_queue_spec_init(&q);
  q.path = "root/new";
  q.capability = "cpu=2Gi,";  // trailing comma: an empty item
  EXPECT_EQ(hdrf_queue_create(e, &q, &err), HDRF_INVALID_ARGUMENT);
  q.capability = "cpu=500u";
  EXPECT_EQ(hdrf_queue_create(e, &q, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("queue root/new: capability"));
  q.capability = nullptr;
  q.guarantee = "nvidia.com/gpu=0.0001";
  EXPECT_EQ(hdrf_queue_create(e, &q, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_set_capacity(e, "cpu=10k0,nvidia.com/gpu=10", &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(Digest(e), before);
  EXPECT_EQ(LastSeq(e), 3u);

  int64_t v = 0;
  EXPECT_EQ(hdrf_parse_quantity("cpu", "500m", &v, &err), HDRF_OK);
  EXPECT_EQ(v, 500);
  EXPECT_EQ(hdrf_parse_quantity("memory", "1Gi", &v, &err), HDRF_OK);
  EXPECT_EQ(v, int64_t{1} << 30);
  EXPECT_EQ(hdrf_parse_quantity("nvidia.com/gpu", "2", &v, &err), HDRF_OK);
  EXPECT_EQ(v, 2000);
  v = 7;
  EXPECT_EQ(hdrf_parse_quantity("memory", "1m", &v, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(v, 7);  // untouched on failure
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApiErrors, BufferTooSmall) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  char small[HDRF_DIGEST_SIZE - 1];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(hdrf_digest(e, small, sizeof small, &err), HDRF_OUT_OF_RANGE);
  EXPECT_THAT(err.str(), HasSubstr("17"));
  EXPECT_EQ(small[0], '\0');
  EXPECT_EQ(small[1], 'x');  // nothing written past the first byte
  EXPECT_EQ(hdrf_digest(e, small, 0, &err), HDRF_OUT_OF_RANGE);
  char exact[HDRF_DIGEST_SIZE];
  ASSERT_EQ(hdrf_digest(e, exact, sizeof exact, &err), HDRF_OK);
  EXPECT_EQ(std::strlen(exact), 16u);
  EXPECT_EQ(std::string(exact).find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApiErrors, ErrorSlotSemantics) {
  hdrf_engine_t* e = nullptr;
  char* err = nullptr;
  // A failure stores a message; the next failure frees it and stores its own
  // (LeakSanitizer checks the free); a success leaves it alone.
  EXPECT_EQ(hdrf_engine_create("cpu=1x", nullptr, 0, nullptr, &e, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(hdrf_engine_create("gpu=1", nullptr, 0, nullptr, &e, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_NE(err, nullptr);
  EXPECT_THAT(std::string(err), HasSubstr("gpu"));
  char* kept = err;
  ASSERT_EQ(hdrf_engine_create("cpu=1", nullptr, 0, nullptr, &e, &err), HDRF_OK);
  EXPECT_EQ(err, kept);
  hdrf_free(err);
  err = nullptr;
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
  EXPECT_EQ(err, nullptr);
}

TEST(CApiErrors, RefusedEventsChangeNothing) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  ASSERT_EQ(hdrf_fill(e, nullptr, &err), HDRF_OK);
  const std::string before = Digest(e);
  const uint64_t seq = LastSeq(e);
  EXPECT_EQ(hdrf_job_allocate(e, "sci", 0, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_job_allocate(e, "sci", -3, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_NE(hdrf_job_allocate(e, "sci", 1, &err), HDRF_OK);  // cluster full
  EXPECT_NE(hdrf_job_release(e, "dev", 6, &err), HDRF_OK);   // only 5 running
  EXPECT_NE(hdrf_job_finish(e, "dev", 100, &err), HDRF_OK);
  EXPECT_NE(hdrf_queue_delete(e, "root/sci", &err), HDRF_OK);  // open, with jobs
  hdrf_queue_spec_t q;
  hdrf_queue_spec_init(&q);
  q.path = "root/eng/dev/sub";  // under a leaf holding jobs
  EXPECT_NE(hdrf_queue_create(e, &q, &err), HDRF_OK);
  q.path = "root/sci";
  q.capability = "cpu=1";  // guarantee > capability
  q.guarantee = "cpu=2";
  EXPECT_NE(hdrf_queue_update(e, &q, &err), HDRF_OK);
  q.path = "root/eng/prod";
  q.guarantee = nullptr;
  q.capability = nullptr;
  q.weight = std::nan("");
  EXPECT_EQ(hdrf_queue_update(e, &q, &err), HDRF_INVALID_ARGUMENT);
  hdrf_job_spec_t j;
  hdrf_job_spec_init(&j);
  j.name = "neg";
  j.task = "cpu=1";
  j.tasks = -1;
  EXPECT_EQ(hdrf_job_submit_spec(e, &j, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(Digest(e), before);
  EXPECT_EQ(LastSeq(e), seq);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApi, CloseThenDestroy) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  ASSERT_EQ(hdrf_engine_close(e, &err), HDRF_OK) << err.str();
  // Events refused, views still answer.
  EXPECT_EQ(hdrf_fill(e, nullptr, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_THAT(err.str(), HasSubstr("closed"));
  EXPECT_EQ(hdrf_job_submit(e, "x", nullptr, nullptr, 1, "cpu=1", nullptr, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(Allocated(e, "sci"), 0);
  EXPECT_EQ(hdrf_engine_close(e, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApi, Metrics) {
  Err err;
  hdrf_options_t* o = hdrf_options_create();
  EXPECT_EQ(hdrf_options_set_latency_sample_every(o, 3, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_EQ(hdrf_options_set_latency_sample_every(o, 1, &err), HDRF_OK) << err.str();
  hdrf_engine_t* e = WorkedExample(err, o);
  hdrf_options_destroy(o);
  ASSERT_EQ(hdrf_fill(e, nullptr, &err), HDRF_OK);
  char* text = nullptr;
  size_t len = 0;
  ASSERT_EQ(hdrf_metrics(e, &text, &len, &err), HDRF_OK) << err.str();
  ASSERT_NE(text, nullptr);
  const std::string m = text;
  hdrf_free(text);
  EXPECT_EQ(m.size(), len);
  EXPECT_THAT(m, HasSubstr("hdrf_events_total 18\n"));
  EXPECT_THAT(m, HasSubstr("hdrf_jobs 3\n"));
  EXPECT_THAT(m, HasSubstr("hdrf_queues 5\n"));
  EXPECT_THAT(m, HasSubstr("hdrf_durability_lag_events 0\n"));
  EXPECT_THAT(m, HasSubstr("hdrf_queue_allocated{queue=\"root/eng/dev\",resource=\"cpu\"} 5000\n"));
  EXPECT_THAT(m, HasSubstr("hdrf_queue_jobs{queue=\"root/sci\",state=\"Running\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("# TYPE hdrf_event_latency_seconds histogram\n"));
  // The engine's own histogram, sampling every call: the 3 submits and the
  // 15 steps of the fill.
  EXPECT_THAT(m, HasSubstr("hdrf_event_latency_seconds_count 18\n"));
  EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
}

TEST(CApi, Persistence) {
  char tmpl[] = "/tmp/hdrf_capi_test_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string db = std::string(tmpl) + "/db";
  Err err;
  hdrf_options_t* o = hdrf_options_create();
  ASSERT_EQ(hdrf_options_set_db_path(o, db.c_str(), &err), HDRF_OK);
  EXPECT_EQ(hdrf_options_set_durability(o, 42, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_EQ(hdrf_options_set_durability(o, HDRF_DURABILITY_SYNC, &err), HDRF_OK);
  ASSERT_EQ(hdrf_options_set_checkpoint_every(o, 0, &err), HDRF_OK);
  hdrf_engine_t* e = nullptr;
  hdrf_code c = hdrf_engine_create_from_scenario(kWorkedYaml, "w1.yaml", 1, o, &e, &err);
  ASSERT_EQ(c, HDRF_OK) << err.str();
  const std::string digest = Digest(e);
  const uint64_t seq = LastSeq(e);
  uint64_t durable = 0;
  ASSERT_EQ(hdrf_flush(e, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_durable_seq(e, &durable, &err), HDRF_OK);
  EXPECT_EQ(durable, seq);
  ASSERT_EQ(hdrf_checkpoint(e, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK) << err.str();

  // Recovered: same state and sequence.
  ASSERT_EQ(hdrf_engine_open(db.c_str(), o, &e, &err), HDRF_OK) << err.str();
  EXPECT_EQ(Digest(e), digest);
  EXPECT_EQ(LastSeq(e), seq);
  EXPECT_EQ(Allocated(e, "dev"), 5);
  ASSERT_EQ(hdrf_engine_close(e, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);

  // A store that is not there, an empty path.
  EXPECT_NE(hdrf_engine_open((std::string(tmpl) + "/none").c_str(), o, &e, &err), HDRF_OK);
  EXPECT_THAT(err.str(), HasSubstr("none"));
  EXPECT_EQ(e, nullptr);
  EXPECT_EQ(hdrf_engine_open("", o, &e, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_open(nullptr, o, &e, &err), HDRF_INVALID_ARGUMENT);
  hdrf_options_destroy(o);
  (void)std::system(("rm -rf '" + std::string(tmpl) + "'").c_str());
}

// hdrf_options_set_event_clock: the embedder's clock gives each logged
// event its time (docs/storage.md "Event times"); it is asked once per
// event, and NULL goes back to the host's clock.
int64_t CountingClock(void* calls) {
  return 1000000 * ++*static_cast<int64_t*>(calls);
}

TEST(CApi, EventClock) {
  char tmpl[] = "/tmp/hdrf_capi_clock_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  Err err;
  int64_t calls = 0;
  hdrf_options_t* o = hdrf_options_create();
  EXPECT_EQ(hdrf_options_set_event_clock(nullptr, CountingClock, &calls, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_EQ(hdrf_options_set_db_path(o, (std::string(tmpl) + "/db").c_str(), &err), HDRF_OK);
  ASSERT_EQ(hdrf_options_set_event_clock(o, CountingClock, &calls, &err), HDRF_OK);
  hdrf_engine_t* e = WorkedExample(err, o);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(calls, 3);  // three submissions
  ASSERT_EQ(hdrf_job_allocate(e, "dev", 2, &err), HDRF_OK) << err.str();
  EXPECT_EQ(calls, 4);
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_options_set_event_clock(o, nullptr, nullptr, &err), HDRF_OK);
  ASSERT_EQ(hdrf_engine_open((std::string(tmpl) + "/db").c_str(), o, &e, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_job_allocate(e, "dev", 1, &err), HDRF_OK) << err.str();
  EXPECT_EQ(calls, 4);
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK) << err.str();
  hdrf_options_destroy(o);
  (void)std::system(("rm -rf '" + std::string(tmpl) + "'").c_str());
}

// ---- host placement: hdrf_step_where, hdrf_fill_where, hdrf_skips_* ----

struct Host {
  std::string refuse;               // job name refused
  std::vector<std::string> asked;   // "name@queue"
  std::vector<std::string> shapes;  // "cpu=..,nvidia.com/gpu=.."
};

int Place(void* user, const char* job, const char* queue, const char* const* resources,
          const int64_t* task, size_t n) {
  Host* h = static_cast<Host*>(user);
  h->asked.push_back(std::string(job) + "@" + queue);
  std::string shape;
  for (size_t i = 0; i < n; ++i) shape += std::string(i ? "," : "") + resources[i] + "=" + std::to_string(task[i]);
  h->shapes.push_back(shape);
  return h->refuse != job;
}

TEST(CApiPlacement, StepWhereAsksTheStepChoiceFirst) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  char* next = nullptr;
  ASSERT_EQ(hdrf_pick_next(e, &next, &err), HDRF_OK);
  Host h;
  h.refuse = next;
  int stepped = 0;
  char* chosen = nullptr;
  ASSERT_EQ(hdrf_step_where(e, Place, &h, nullptr, &stepped, &chosen, &err), HDRF_OK) << err.str();
  EXPECT_EQ(stepped, 1);
  ASSERT_GE(h.asked.size(), 2u);
  EXPECT_EQ(h.asked[0].substr(0, h.asked[0].find('@')), next);  // the step's own choice, refused
  EXPECT_NE(std::string(chosen), std::string(next));
  EXPECT_EQ(h.asked.back().substr(0, h.asked.back().find('@')), chosen);
  EXPECT_EQ(std::string(next), "dev");  // all keys 0: eng before sci, dev before prod
  EXPECT_EQ(h.asked[0], "dev@root/eng/dev");
  EXPECT_EQ(h.shapes[0], "cpu=1000,nvidia.com/gpu=0");
  hdrf_free(next);
  hdrf_free(chosen);
  hdrf_engine_destroy(e, &err);
}

TEST(CApiPlacement, FillWhereWithAPersistentSkipSet) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  hdrf_skips_t* skips = hdrf_skips_create();
  ASSERT_NE(skips, nullptr);
  Host h;
  h.refuse = "sci";
  int64_t steps = -1;
  ASSERT_EQ(hdrf_fill_where(e, Place, &h, skips, &steps, &err), HDRF_OK) << err.str();
  // Without sci, dev and prod take the whole cluster.
  EXPECT_EQ(steps, 20);
  EXPECT_EQ(Allocated(e, "sci"), 0);
  EXPECT_EQ(Allocated(e, "dev"), 10);
  EXPECT_EQ(Allocated(e, "prod"), 10);
  EXPECT_EQ(hdrf_skips_size(skips), 1u);
  int sci_asked = 0;
  for (auto& a : h.asked) sci_asked += a == "sci@root/sci";
  EXPECT_EQ(sci_asked, 1);  // asked once, then skipped for the whole fill
  hdrf_skips_clear(skips);
  EXPECT_EQ(hdrf_skips_size(skips), 0u);
  hdrf_skips_destroy(skips);
  hdrf_skips_destroy(nullptr);
  hdrf_engine_destroy(e, &err);
}

TEST(CApiPlacement, BadInput) {
  Err err;
  hdrf_engine_t* e = WorkedExample(err);
  int stepped = -1;
  EXPECT_EQ(hdrf_step_where(e, nullptr, nullptr, nullptr, &stepped, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_NE(err.str().find("can_place"), std::string::npos);
  EXPECT_EQ(stepped, -1);
  EXPECT_EQ(hdrf_fill_where(nullptr, Place, nullptr, nullptr, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(Allocated(e, "sci") + Allocated(e, "dev") + Allocated(e, "prod"), 0);
  hdrf_engine_destroy(e, &err);
}

}  // namespace
