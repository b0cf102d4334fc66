// A refused call of the C interface changes nothing (issue 26): each event
// function refused in each way it can be (a bad argument, an unknown name,
// an overflow, a bad ref, too much for the cluster) on an engine with a
// store; the digest, last_seq and the store opened again afterwards are
// what they were. The C++ API's harness is tests/api/refusal_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "hdrf/c.h"
#include "tests/capi/c_err.h"

namespace hdrf::testing {
namespace {

using ::testing::HasSubstr;

struct Refusal {
  std::string what;
  std::function<hdrf_code(hdrf_engine_t*, char**)> call;
  hdrf_code code;
  std::string message;
};

class CRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hdrf_c_refusal_XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    db_ = dir_ + "/db";
    hdrf_options_t* o = hdrf_options_create();
    Err err;
    ASSERT_EQ(hdrf_options_set_db_path(o, db_.c_str(), &err), HDRF_OK);
    hdrf_queue_spec_t q[2];
    hdrf_queue_spec_init(&q[0]);
    hdrf_queue_spec_init(&q[1]);
    q[0].path = "root/a";
    q[0].guarantee = "cpu=2,example.com/big=6000000000000000";
    q[1].path = "root/b";
    ASSERT_EQ(hdrf_engine_create("cpu=10,memory=64Gi,example.com/big=9220000000000000", q, 2, o, &e_, &err),
              HDRF_OK)
        << err.str();
    hdrf_options_destroy(o);
    ASSERT_EQ(hdrf_job_submit(e_, "run", "root/a", nullptr, 4, "cpu=1", &run_, &err), HDRF_OK) << err.str();
    ASSERT_EQ(hdrf_job_submit(e_, "wait", "root/b", nullptr, 2, "cpu=1", nullptr, &err), HDRF_OK);
    ASSERT_EQ(hdrf_job_allocate_ref(e_, run_, 2, &err), HDRF_OK);
  }
  void TearDown() override {
    hdrf_engine_destroy(e_, nullptr);
    (void)std::system(("rm -rf " + dir_).c_str());
  }

  void ExpectRefusedAndNothingChanged(const std::vector<Refusal>& refusals) {
    for (const Refusal& r : refusals) {
      SCOPED_TRACE(r.what);
      const std::string digest = Digest(e_);
      const uint64_t seq = LastSeq(e_);
      Err err;
      EXPECT_EQ(r.call(e_, &err), r.code) << err.str();
      EXPECT_THAT(err.str(), HasSubstr(r.message));
      EXPECT_EQ(Digest(e_), digest);
      EXPECT_EQ(LastSeq(e_), seq);
      ASSERT_EQ(hdrf_engine_destroy(e_, &err), HDRF_OK) << err.str();  // closes the store
      e_ = nullptr;
      ASSERT_EQ(hdrf_engine_open(db_.c_str(), nullptr, &e_, &err), HDRF_OK) << err.str();
      EXPECT_EQ(Digest(e_), digest);
      EXPECT_EQ(LastSeq(e_), seq);
      ASSERT_EQ(hdrf_job_find(e_, "run", &run_, &err), HDRF_OK);
    }
  }

  std::string dir_, db_;
  hdrf_engine_t* e_ = nullptr;
  hdrf_job_ref_t run_{};
};

TEST_F(CRefusalTest, JobEvents) {
  hdrf_job_spec_t big;
  hdrf_job_spec_init(&big);
  big.name = "x";
  big.queue = "root/b";
  big.tasks = int64_t{1} << 62;
  big.task = "cpu=1";
  hdrf_job_spec_t heavy = big;
  heavy.tasks = 1;
  heavy.weight = 1e304;
  hdrf_job_spec_t nan = heavy;
  nan.weight = std::nan("");
  using E = hdrf_engine_t*;
  using P = char**;
  ExpectRefusedAndNothingChanged({
      {"bad quantity", [](E e, P err) { return hdrf_job_submit(e, "x", "root/b", nullptr, 1, "cpu=1x", nullptr, err); },
       HDRF_INVALID_ARGUMENT, "1x"},
      {"unknown queue", [](E e, P err) { return hdrf_job_submit(e, "x", "root/zz", nullptr, 1, "cpu=1", nullptr, err); },
       HDRF_NOT_FOUND, "root/zz"},
      {"unknown resource", [](E e, P err) { return hdrf_job_submit(e, "x", "root/b", nullptr, 1, "gpu=1", nullptr, err); },
       HDRF_NOT_FOUND, "gpu"},
      {"empty name", [](E e, P err) { return hdrf_job_submit(e, "", "root/b", nullptr, 1, "cpu=1", nullptr, err); },
       HDRF_INVALID_ARGUMENT, "empty name"},
      {"duplicate", [](E e, P err) { return hdrf_job_submit(e, "run", "root/b", nullptr, 1, "cpu=1", nullptr, err); },
       HDRF_ALREADY_EXISTS, "run"},
      {"tasks x task overflow", [&](E e, P err) { return hdrf_job_submit_spec(e, &big, nullptr, err); },
       HDRF_INVALID_ARGUMENT, "largest amount"},
      {"weight 1e304", [&](E e, P err) { return hdrf_job_submit_spec(e, &heavy, nullptr, err); },
       HDRF_INVALID_ARGUMENT, "largest weight"},
      {"weight NaN", [&](E e, P err) { return hdrf_job_submit_spec(e, &nan, nullptr, err); },
       HDRF_INVALID_ARGUMENT, "finite"},
      {"allocate unknown", [](E e, P err) { return hdrf_job_allocate(e, "nope", 1, err); }, HDRF_NOT_FOUND, "nope"},
      {"allocate 0", [](E e, P err) { return hdrf_job_allocate(e, "run", 0, err); }, HDRF_INVALID_ARGUMENT, "n >= 1"},
      {"allocate beyond tasks", [](E e, P err) { return hdrf_job_allocate(e, "run", 3, err); }, HDRF_OUT_OF_RANGE,
       "unallocated"},
  });
}

TEST_F(CRefusalTest, RefEvents) {
  using E = hdrf_engine_t*;
  using P = char**;
  ExpectRefusedAndNothingChanged({
      {"release beyond running", [&](E e, P err) { return hdrf_job_release_ref(e, run_, 3, err); },
       HDRF_OUT_OF_RANGE, "running"},
      {"flipped id bit", [&](E e, P err) {
         hdrf_job_ref_t r = run_;
         r.id ^= 1;
         return hdrf_job_allocate_ref(e, r, 1, err);
       },
       HDRF_NOT_FOUND, "no such job in this engine"},
      {"remove with a flipped id bit", [&](E e, P err) {
         hdrf_job_ref_t r = run_;
         r.id ^= 1;
         return hdrf_job_remove_ref(e, r, err);
       },
       HDRF_NOT_FOUND, "no such job in this engine"},
      {"foreign tag", [&](E e, P err) {
         hdrf_job_ref_t r = run_;
         r.id ^= uint64_t{1} << 40;
         return hdrf_job_finish_ref(e, r, 1, err);
       },
       HDRF_INVALID_ARGUMENT, "not made by this engine"},
      {"apply nops SIZE_MAX", [&](E e, P err) {
         hdrf_op_t op{run_, 1, HDRF_OP_ALLOCATE};
         return hdrf_apply(e, &op, SIZE_MAX, sizeof op, nullptr, nullptr, err);
       },
       HDRF_INVALID_ARGUMENT, "nops"},
      {"apply every op refused", [&](E e, P err) {
         hdrf_op_t ops[2] = {{run_, 3, HDRF_OP_ALLOCATE}, {run_, 1, 99}};
         hdrf_code results[2];
         return hdrf_apply(e, ops, 2, sizeof(hdrf_op_t), results, nullptr, err);
       },
       HDRF_OUT_OF_RANGE, "unallocated"},
  });
}

TEST_F(CRefusalTest, QueueAndCapacityEvents) {
  hdrf_queue_spec_t over;
  hdrf_queue_spec_init(&over);
  over.path = "root/c";
  over.guarantee = "example.com/big=6000000000000000";  // 6e18m: the sum wraps int64
  hdrf_queue_spec_t heavy;
  hdrf_queue_spec_init(&heavy);
  heavy.path = "root/b";
  heavy.weight = 1e304;
  using E = hdrf_engine_t*;
  using P = char**;
  ExpectRefusedAndNothingChanged({
      {"guarantee sum overflow", [&](E e, P err) { return hdrf_queue_create(e, &over, err); }, HDRF_INVALID_ARGUMENT,
       "largest amount"},
      {"weight 1e304", [&](E e, P err) { return hdrf_queue_update(e, &heavy, err); }, HDRF_INVALID_ARGUMENT,
       "largest weight"},
      {"bad state", [](E e, P err) { return hdrf_queue_set_state(e, "root/b", 7, err); }, HDRF_INVALID_ARGUMENT, "7"},
      {"unknown queue state", [](E e, P err) { return hdrf_queue_set_state(e, "root/zz", HDRF_QUEUE_CLOSED, err); },
       HDRF_NOT_FOUND, "root/zz"},
      {"delete open", [](E e, P err) { return hdrf_queue_delete(e, "root/b", err); }, HDRF_INVALID_ARGUMENT, "closed"},
      {"capacity typo", [](E e, P err) { return hdrf_set_capacity(e, "cpus=1", err); }, HDRF_INVALID_ARGUMENT,
       "cpus"},
      {"capacity missing", [](E e, P err) { return hdrf_set_capacity(e, "cpu=1", err); }, HDRF_INVALID_ARGUMENT,
       "exactly"},
  });
}

// Plans: a plan call changes nothing; a refused hdrf_apply_plan neither.
TEST_F(CRefusalTest, Plans) {
  using E = hdrf_engine_t*;
  using P = char**;
  ExpectRefusedAndNothingChanged({
      {"bad mode", [&](E e, P err) {
         hdrf_plan_t* plan = nullptr;
         return hdrf_plan(e, run_, 9, -1, &plan, err);
       },
       HDRF_INVALID_ARGUMENT, "9"},
      {"max_victims below -1", [&](E e, P err) {
         hdrf_plan_t* plan = nullptr;
         return hdrf_plan(e, run_, HDRF_PLAN_RECLAIM, -2, &plan, err);
       },
       HDRF_INVALID_ARGUMENT, "-2"},
      {"stale ref", [&](E e, P err) {
         hdrf_job_ref_t r = run_;
         r.seq += 100;
         hdrf_plan_t* plan = nullptr;
         return hdrf_plan(e, r, HDRF_PLAN_RECLAIM, -1, &plan, err);
       },
       HDRF_NOT_FOUND, "no such job in this engine"},
      {"apply a NULL plan", [](E e, P err) { return hdrf_apply_plan(e, nullptr, err); }, HDRF_INVALID_ARGUMENT,
       "plan"},
  });
}

// Issue 26 item 1 through C: one truth job in an unknown queue removed the
// three running jobs and logged it (last_seq 6 -> 9) before NotFound.
TEST_F(CRefusalTest, Reconcile) {
  hdrf_truth_job_t j;
  hdrf_truth_job_init(&j);
  j.name = "z";
  j.queue = "root/nowhere";
  j.task = "cpu=1";
  hdrf_truth_job_t fat = j;
  fat.queue = "root/b";
  fat.task = "cpu=5";
  fat.tasks = 3;
  fat.running = 3;
  using E = hdrf_engine_t*;
  using P = char**;
  ExpectRefusedAndNothingChanged({
      {"unknown queue", [&](E e, P err) { return hdrf_reconcile(e, &j, 1, nullptr, 0, 0, nullptr, nullptr, err); },
       HDRF_NOT_FOUND, "root/nowhere"},
      {"running more than fits", [&](E e, P err) {
         return hdrf_reconcile(e, &fat, 1, nullptr, 0, 0, nullptr, nullptr, err);
       },
       HDRF_OUT_OF_RANGE, "free"},
  });
}

}  // namespace
}  // namespace hdrf::testing
