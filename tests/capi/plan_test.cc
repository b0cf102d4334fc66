// The C interface's plans (hdrf/c.h "taking back: plans", docs/spec.md
// §15) and gangs (§14): a reclaim that takes one task, applied; a stale
// plan refused with HDRF_ABORTED and nothing changed; plans refused for
// removed, foreign and zero refs, bad modes and limits; a failed plan's
// shortfall; a gang submitted with min_available starting m tasks in one
// step, and a plan for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hdrf/c.h"
#include "tests/capi/c_err.h"

namespace {

using ::testing::HasSubstr;

using hdrf::testing::Digest;
using hdrf::testing::Err;
using hdrf::testing::LastSeq;

// cpu=4 over root/a and root/b (equal weights, reclaimable); "hog" in
// root/a runs 4 tasks of 1 cpu, so the cluster is full.
struct Fixture {
  hdrf_engine_t* e = nullptr;
  hdrf_job_ref_t hog{};
  Fixture() {
    Err err;
    hdrf_queue_spec_t qs[2];
    const char* paths[2] = {"root/a", "root/b"};
    for (int i = 0; i < 2; ++i) {
      hdrf_queue_spec_init(&qs[i]);
      qs[i].path = paths[i];
    }
    EXPECT_EQ(hdrf_engine_create("cpu=4,memory=16Gi", qs, 2, nullptr, &e, &err), HDRF_OK)
        << err.str();
    EXPECT_EQ(hdrf_job_submit(e, "hog", "root/a", nullptr, 4, "cpu=1", &hog, &err), HDRF_OK)
        << err.str();
    EXPECT_EQ(hdrf_job_allocate_ref(e, hog, 4, &err), HDRF_OK) << err.str();
  }
  ~Fixture() { hdrf_engine_destroy(e, nullptr); }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  hdrf_job_ref_t Submit(const char* name, int64_t tasks, int64_t min_available = 1) {
    Err err;
    hdrf_job_spec_t s;
    hdrf_job_spec_init(&s);
    s.name = name;
    s.queue = "root/b";
    s.tasks = tasks;
    s.task = "cpu=1";
    s.min_available = min_available;
    hdrf_job_ref_t r{};
    EXPECT_EQ(hdrf_job_submit_spec(e, &s, &r, &err), HDRF_OK) << err.str();
    return r;
  }
  // A plan that must be made (fitting or not).
  hdrf_plan_t* MakePlan(hdrf_job_ref_t j, int mode = HDRF_PLAN_RECLAIM, int64_t max_victims = -1) {
    Err err;
    hdrf_plan_t* plan = nullptr;
    EXPECT_EQ(hdrf_plan(e, j, mode, max_victims, &plan, &err), HDRF_OK) << err.str();
    EXPECT_NE(plan, nullptr);
    return plan;
  }
  int64_t Allocated(hdrf_job_ref_t j) {
    Err err;
    hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
    EXPECT_EQ(hdrf_job_get_ref(e, j, &info, &err), HDRF_OK) << err.str();
    return info.allocated;
  }
};

TEST(CApiPlan, ReclaimTakesOneTaskAndApplies) {
  Fixture f;
  Err err;
  const hdrf_job_ref_t want = f.Submit("want", 1);
  const std::string before = Digest(f.e);
  const uint64_t seq = LastSeq(f.e);
  hdrf_plan_t* plan = f.MakePlan(want);
  EXPECT_EQ(Digest(f.e), before);  // making a plan changes nothing
  EXPECT_EQ(LastSeq(f.e), seq);
  EXPECT_EQ(hdrf_plan_fits(plan), 1);
  EXPECT_EQ(hdrf_plan_tasks(plan), 1);
  EXPECT_EQ(hdrf_plan_mode(plan), HDRF_PLAN_RECLAIM);
  EXPECT_EQ(hdrf_plan_short_count(plan), 0u);
  hdrf_job_ref_t job{};
  const char* name = nullptr;
  ASSERT_EQ(hdrf_plan_job(plan, &job, &name, &err), HDRF_OK) << err.str();
  EXPECT_EQ(job.id, want.id);
  EXPECT_EQ(job.seq, want.seq);
  EXPECT_STREQ(name, "want");
  ASSERT_EQ(hdrf_plan_victim_count(plan), 1u);
  hdrf_job_ref_t vref{};
  const char* vname = nullptr;
  int64_t vtasks = 0;
  ASSERT_EQ(hdrf_plan_victim(plan, 0, &vref, &vname, &vtasks, &err), HDRF_OK) << err.str();
  EXPECT_EQ(vref.id, f.hog.id);
  EXPECT_EQ(vref.seq, f.hog.seq);
  EXPECT_STREQ(vname, "hog");
  EXPECT_EQ(vtasks, 1);
  // Index past the end: refused, outputs untouched.
  vtasks = 42;
  EXPECT_EQ(hdrf_plan_victim(plan, 1, &vref, &vname, &vtasks, &err), HDRF_OUT_OF_RANGE);
  EXPECT_THAT(err.str(), HasSubstr("the plan has 1"));
  EXPECT_EQ(vtasks, 42);

  ASSERT_EQ(hdrf_apply_plan(f.e, plan, &err), HDRF_OK) << err.str();
  EXPECT_EQ(LastSeq(f.e), seq + 1);  // one event
  EXPECT_EQ(f.Allocated(f.hog), 3);
  EXPECT_EQ(f.Allocated(want), 1);
  // The victim's task waits again: its task count is unchanged.
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get_ref(f.e, f.hog, &info, &err), HDRF_OK) << err.str();
  EXPECT_EQ(info.tasks, 4);

  // Applied twice: stale, and nothing changes.
  const std::string after = Digest(f.e);
  EXPECT_EQ(hdrf_apply_plan(f.e, plan, &err), HDRF_ABORTED);
  EXPECT_THAT(err.str(), HasSubstr("stale plan"));
  EXPECT_STREQ(hdrf_code_name(HDRF_ABORTED), "Aborted");
  EXPECT_EQ(Digest(f.e), after);
  EXPECT_EQ(LastSeq(f.e), seq + 1);
  // The plan is still readable after the engine changed; its name stays valid.
  EXPECT_STREQ(name, "want");
  hdrf_plan_free(plan);
}

TEST(CApiPlan, AVictimGoneMakesThePlanStale) {
  Fixture f;
  Err err;
  const hdrf_job_ref_t want = f.Submit("want", 1);
  hdrf_plan_t* plan = f.MakePlan(want, HDRF_PLAN_BOTH);
  ASSERT_EQ(hdrf_plan_victim_count(plan), 1u);
  ASSERT_EQ(hdrf_job_remove_ref(f.e, f.hog, &err), HDRF_OK) << err.str();
  const std::string before = Digest(f.e);
  const uint64_t seq = LastSeq(f.e);
  EXPECT_EQ(hdrf_apply_plan(f.e, plan, &err), HDRF_ABORTED);
  EXPECT_THAT(err.str(), HasSubstr("victim hog is gone"));
  EXPECT_EQ(Digest(f.e), before);
  EXPECT_EQ(LastSeq(f.e), seq);
  EXPECT_EQ(f.Allocated(want), 0);
  hdrf_plan_free(plan);
}

TEST(CApiPlan, RefusedPlansAndApplies) {
  Fixture f;
  Fixture other;
  Err err;
  const hdrf_job_ref_t want = f.Submit("want", 1);
  const hdrf_job_ref_t gone = f.Submit("gone", 1);
  ASSERT_EQ(hdrf_job_remove_ref(f.e, gone, &err), HDRF_OK) << err.str();
  const std::string before = Digest(f.e);
  const uint64_t seq = LastSeq(f.e);
  hdrf_plan_t* plan = reinterpret_cast<hdrf_plan_t*>(&err);  // overwritten with NULL
  EXPECT_EQ(hdrf_plan(f.e, gone, HDRF_PLAN_RECLAIM, -1, &plan, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr("no such job in this engine"));
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(hdrf_plan(f.e, hdrf_job_ref_t{0, 0}, HDRF_PLAN_RECLAIM, -1, &plan, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("empty"));
  EXPECT_EQ(hdrf_plan(other.e, want, HDRF_PLAN_RECLAIM, -1, &plan, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("not made by this engine"));
  EXPECT_EQ(hdrf_plan(f.e, want, 7, -1, &plan, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("HDRF_PLAN_*"));
  EXPECT_EQ(hdrf_plan(f.e, want, HDRF_PLAN_RECLAIM, -2, &plan, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("max_victims -2"));
  EXPECT_EQ(hdrf_plan(f.e, want, HDRF_PLAN_RECLAIM, -1, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_plan(nullptr, want, HDRF_PLAN_RECLAIM, -1, &plan, &err), HDRF_INVALID_ARGUMENT);
  // A job with no unallocated task has nothing to plan for.
  EXPECT_EQ(hdrf_plan(f.e, f.hog, HDRF_PLAN_RECLAIM, -1, &plan, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(plan, nullptr);

  // A plan of one engine on another: refused by the tag.
  plan = f.MakePlan(want);
  const std::string other_before = Digest(other.e);
  EXPECT_EQ(hdrf_apply_plan(other.e, plan, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("not made by this engine"));
  EXPECT_EQ(Digest(other.e), other_before);
  EXPECT_EQ(hdrf_apply_plan(f.e, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_apply_plan(nullptr, plan, &err), HDRF_INVALID_ARGUMENT);
  hdrf_plan_free(plan);
  EXPECT_EQ(Digest(f.e), before);
  EXPECT_EQ(LastSeq(f.e), seq);

  // NULL plans: values are 0, calls refuse, free is a no-op.
  EXPECT_EQ(hdrf_plan_fits(nullptr), 0);
  EXPECT_EQ(hdrf_plan_tasks(nullptr), 0);
  EXPECT_EQ(hdrf_plan_mode(nullptr), -1);
  EXPECT_EQ(hdrf_plan_victim_count(nullptr), 0u);
  EXPECT_EQ(hdrf_plan_short_count(nullptr), 0u);
  EXPECT_EQ(hdrf_plan_victim(nullptr, 0, nullptr, nullptr, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_plan_short(nullptr, 0, nullptr, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_plan_job(nullptr, nullptr, nullptr, &err), HDRF_INVALID_ARGUMENT);
  hdrf_plan_free(nullptr);
}

TEST(CApiPlan, AFailedPlanSaysWhatIsShort) {
  Fixture f;
  Err err;
  const hdrf_job_ref_t want = f.Submit("want", 1);
  // max_victims 0: a plan that needs a victim fails (HDRF_OK, fits 0).
  hdrf_plan_t* plan = f.MakePlan(want, HDRF_PLAN_RECLAIM, 0);
  EXPECT_EQ(hdrf_plan_fits(plan), 0);
  EXPECT_EQ(hdrf_plan_victim_count(plan), 0u);
  ASSERT_EQ(hdrf_plan_short_count(plan), 1u);
  const char* resource = nullptr;
  int64_t amount = 0;
  ASSERT_EQ(hdrf_plan_short(plan, 0, &resource, &amount, &err), HDRF_OK) << err.str();
  EXPECT_STREQ(resource, "cpu");
  EXPECT_EQ(amount, 1000);  // millicores
  EXPECT_EQ(hdrf_plan_short(plan, 1, &resource, &amount, &err), HDRF_OUT_OF_RANGE);
  const std::string before = Digest(f.e);
  EXPECT_EQ(hdrf_apply_plan(f.e, plan, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(Digest(f.e), before);
  hdrf_plan_free(plan);
  // Preempt looks only in want's own leaf, where nothing runs.
  plan = f.MakePlan(want, HDRF_PLAN_PREEMPT);
  EXPECT_EQ(hdrf_plan_fits(plan), 0);
  hdrf_plan_free(plan);
}

// A gang of m = 3: its first step starts 3 tasks in one event, and a plan
// for a gang demands m tasks.
TEST(CApiPlan, GangsStartWithMinAvailableTasks) {
  Fixture f;
  Err err;
  ASSERT_EQ(hdrf_job_finish_ref(f.e, f.hog, 4, &err), HDRF_OK) << err.str();  // all free
  const hdrf_job_ref_t gang = f.Submit("gang", 4, 3);
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get_ref(f.e, gang, &info, &err), HDRF_OK) << err.str();
  EXPECT_EQ(info.min_available, 3);
  const uint64_t seq = LastSeq(f.e);
  int stepped = 0;
  hdrf_job_ref_t job{};
  ASSERT_EQ(hdrf_step_ref(f.e, &stepped, &job, &err), HDRF_OK) << err.str();
  EXPECT_EQ(stepped, 1);
  EXPECT_EQ(job.seq, gang.seq);
  EXPECT_EQ(LastSeq(f.e), seq + 1);
  EXPECT_EQ(f.Allocated(gang), 3);
  int64_t steps = 0;
  ASSERT_EQ(hdrf_fill(f.e, &steps, &err), HDRF_OK) << err.str();
  EXPECT_EQ(steps, 1);  // the fourth task, one at a time now
  EXPECT_EQ(f.Allocated(gang), 4);
}

TEST(CApiPlan, APlanForAGangTakesItsMTasks) {
  Fixture f;
  Err err;
  const hdrf_job_ref_t gang = f.Submit("gang", 2, 2);
  hdrf_plan_t* plan = f.MakePlan(gang);
  EXPECT_EQ(hdrf_plan_fits(plan), 1);
  EXPECT_EQ(hdrf_plan_tasks(plan), 2);
  int64_t taken = 0;
  for (size_t i = 0; i < hdrf_plan_victim_count(plan); ++i) {
    const char* name = nullptr;
    int64_t tasks = 0;
    ASSERT_EQ(hdrf_plan_victim(plan, i, nullptr, &name, &tasks, &err), HDRF_OK) << err.str();
    EXPECT_STREQ(name, "hog");
    taken += tasks;
  }
  EXPECT_EQ(taken, 2);
  ASSERT_EQ(hdrf_apply_plan(f.e, plan, &err), HDRF_OK) << err.str();
  EXPECT_EQ(f.Allocated(gang), 2);
  EXPECT_EQ(f.Allocated(f.hog), 2);
  hdrf_plan_free(plan);
}

}  // namespace
