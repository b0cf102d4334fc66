// Followers and takeover through the C interface (hdrf/c.h
// hdrf_engine_open_follower, hdrf_follower_catch_up, hdrf_follower_lag,
// hdrf_follower_promote): a writer engine of this process writes a store
// in a temporary directory; a follower of it sees the writer's events
// after a catch-up (its digest is the writer's), refuses every event with
// a code and a message and changes nothing, reports its lag, and after the
// writer closes becomes the writer, continuing its sequence numbers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/c.h"
#include "tests/capi/c_err.h"

namespace {

using ::testing::HasSubstr;

using hdrf::testing::Digest;
using hdrf::testing::Err;
using hdrf::testing::LastSeq;

// A fresh directory under /tmp, removed with the object.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/hdrf_capi_follower_XXXXXX";
    if (::mkdtemp(tmpl)) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty()) (void)std::system(("rm -rf '" + path_ + "'").c_str());
  }
  std::string Sub(const char* name) const { return path_ + "/" + name; }
  bool ok() const { return !path_.empty(); }

 private:
  std::string path_;
};

hdrf_follower_lag_t Lag(hdrf_engine_t* e) {
  hdrf_follower_lag_t lag = HDRF_FOLLOWER_LAG_INIT;
  Err err;
  EXPECT_EQ(hdrf_follower_lag(e, &lag, &err), HDRF_OK) << err.str();
  return lag;
}

// A writer over a store at `db`: two top-level queues and two jobs, one
// task of `a` running.
hdrf_engine_t* Writer(const std::string& db, Err& err) {
  hdrf_options_t* o = hdrf_options_create();
  EXPECT_EQ(hdrf_options_set_db_path(o, db.c_str(), &err), HDRF_OK);
  hdrf_queue_spec_t qs[2];
  const char* paths[] = {"root/a", "root/b"};
  for (int i = 0; i < 2; ++i) {
    hdrf_queue_spec_init(&qs[i]);
    qs[i].path = paths[i];
  }
  hdrf_engine_t* w = nullptr;
  EXPECT_EQ(hdrf_engine_create("cpu=8,memory=16Gi", qs, 2, o, &w, &err), HDRF_OK) << err.str();
  hdrf_options_destroy(o);
  EXPECT_EQ(hdrf_job_submit(w, "a", "root/a", nullptr, 4, "cpu=1", nullptr, &err), HDRF_OK);
  EXPECT_EQ(hdrf_job_submit(w, "b", "root/b", "bob", 4, "cpu=1,memory=1Gi", nullptr, &err), HDRF_OK);
  EXPECT_EQ(hdrf_job_allocate(w, "a", 1, &err), HDRF_OK) << err.str();
  return w;
}

// A follower that catches up only when asked.
hdrf_engine_t* ManualFollower(const std::string& db, Err& err) {
  hdrf_follower_options_t fo;
  hdrf_follower_options_init(&fo);
  EXPECT_EQ(fo.catch_up_interval_ms, 20u);  // the documented default
  fo.catch_up_interval_ms = 0;
  hdrf_engine_t* f = nullptr;
  EXPECT_EQ(hdrf_engine_open_follower(db.c_str(), &fo, &f, &err), HDRF_OK) << err.str();
  return f;
}

// A writer over a store in a fresh directory (destroyed at the end unless
// the test did it).
class CApiFollower : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir.ok());
    w = Writer(db, err);
    ASSERT_NE(w, nullptr);
  }
  void TearDown() override { EXPECT_EQ(hdrf_engine_destroy(w, &err), HDRF_OK) << err.str(); }

  TempDir dir;
  const std::string db = dir.Sub("db");
  Err err;
  hdrf_engine_t* w = nullptr;
};

TEST_F(CApiFollower, SeesTheWritersEventsAfterCatchUp) {
  hdrf_engine_t* f = ManualFollower(db, err);
  ASSERT_NE(f, nullptr);
  // It starts from what the store holds.
  EXPECT_EQ(LastSeq(f), LastSeq(w));
  EXPECT_EQ(Digest(f), Digest(w));

  // More events: the follower sees none of them until it catches up.
  const std::string before = Digest(f);
  ASSERT_EQ(hdrf_job_submit(w, "c", "root/b", nullptr, 2, "cpu=2", nullptr, &err), HDRF_OK);
  ASSERT_EQ(hdrf_job_allocate(w, "b", 3, &err), HDRF_OK);
  int64_t steps = 0;
  ASSERT_EQ(hdrf_fill(w, &steps, &err), HDRF_OK);
  ASSERT_GT(steps, 0);
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  EXPECT_EQ(hdrf_job_get(f, "c", &info, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(Digest(f), before);
  // Its staleness grows while it does not catch up.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  hdrf_follower_lag_t lag = Lag(f);
  EXPECT_EQ(lag.is_follower, 1);
  EXPECT_GE(lag.seconds, 0.03);
  EXPECT_EQ(lag.applied_seq, LastSeq(f));

  const auto caught_up = std::chrono::steady_clock::now();
  ASSERT_EQ(hdrf_follower_catch_up(f, &err), HDRF_OK) << err.str();
  EXPECT_EQ(LastSeq(f), LastSeq(w));
  EXPECT_EQ(Digest(f), Digest(w));
  ASSERT_EQ(hdrf_job_get(f, "c", &info, &err), HDRF_OK) << err.str();
  int64_t running = -1;
  ASSERT_EQ(hdrf_job_allocated(w, "c", &running, &err), HDRF_OK);
  EXPECT_EQ(info.allocated, running);
  lag = Lag(f);
  EXPECT_EQ(lag.events, 0u);
  EXPECT_EQ(lag.applied_seq, LastSeq(w));
  EXPECT_EQ(lag.writer_seq, LastSeq(w));
  // Counted from the start of that catch-up.
  EXPECT_LE(lag.seconds,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - caught_up).count());
  // Views, explain and metrics work on a follower.
  char* json = nullptr;
  ASSERT_EQ(hdrf_explain(f, "a", &json, &err), HDRF_OK) << err.str();
  EXPECT_THAT(json, HasSubstr("\"queue\":\"root/a\""));
  hdrf_free(json);
  char* text = nullptr;
  ASSERT_EQ(hdrf_metrics(f, &text, nullptr, &err), HDRF_OK) << err.str();
  EXPECT_THAT(text, HasSubstr("hdrf_follower_lag_events 0\n"));
  EXPECT_THAT(text, HasSubstr("hdrf_follower_lag_seconds "));
  hdrf_free(text);

  // A writer is no follower: zeros, and no catch-up.
  lag = Lag(w);
  EXPECT_EQ(lag.is_follower, 0);
  EXPECT_EQ(lag.applied_seq, 0u);
  EXPECT_EQ(hdrf_follower_catch_up(w, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_THAT(err.str(), HasSubstr("not a follower"));
  EXPECT_EQ(hdrf_follower_promote(w, 0, nullptr, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_THAT(err.str(), HasSubstr("not a follower"));

  EXPECT_EQ(hdrf_engine_destroy(f, &err), HDRF_OK) << err.str();
}

TEST_F(CApiFollower, FollowsInTheBackground) {
  hdrf_engine_t* f = nullptr;
  ASSERT_EQ(hdrf_engine_open_follower(db.c_str(), nullptr, &f, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_job_allocate(w, "b", 2, &err), HDRF_OK);
  const uint64_t target = LastSeq(w);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (LastSeq(f) < target && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(LastSeq(f), target);
  EXPECT_EQ(Digest(f), Digest(w));
  EXPECT_EQ(hdrf_engine_destroy(f, &err), HDRF_OK) << err.str();
}

int PlaceAll(void*, const char*, const char*, const char* const*, const int64_t*, size_t) {
  return 1;
}

TEST_F(CApiFollower, RefusesEveryEventAndChangesNothing) {
  hdrf_engine_t* f = ManualFollower(db, err);
  ASSERT_NE(f, nullptr);
  const std::string digest = Digest(f);
  const uint64_t seq = LastSeq(f);
  hdrf_job_ref_t a{0, 0};
  ASSERT_EQ(hdrf_job_find(f, "a", &a, &err), HDRF_OK) << err.str();
  hdrf_queue_spec_t q;
  hdrf_queue_spec_init(&q);
  q.path = "root/c";
  hdrf_queue_spec_t qa;
  hdrf_queue_spec_init(&qa);
  qa.path = "root/a";
  qa.weight = 3;
  hdrf_op_t op{a, 1, HDRF_OP_ALLOCATE};
  hdrf_code result = HDRF_OK;
  hdrf_truth_job_t truth;
  hdrf_truth_job_init(&truth);
  truth.name = "a";
  truth.queue = "root/a";
  truth.task = "cpu=1";
  truth.tasks = 4;
  int stepped = -1;
  int64_t steps = -1;
  char* name = nullptr;
  // A plan is made on a follower (it changes nothing), not applied.
  hdrf_plan_t* plan = nullptr;
  ASSERT_EQ(hdrf_plan(f, a, HDRF_PLAN_RECLAIM, -1, &plan, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_plan_fits(plan), 1);
  const std::vector<std::pair<const char*, std::function<hdrf_code()>>> events = {
      {"submit", [&] { return hdrf_job_submit(f, "x", "root/a", nullptr, 1, "cpu=1", nullptr, &err); }},
      {"remove", [&] { return hdrf_job_remove(f, "a", &err); }},
      {"allocate", [&] { return hdrf_job_allocate(f, "a", 1, &err); }},
      {"release", [&] { return hdrf_job_release(f, "a", 1, &err); }},
      {"finish", [&] { return hdrf_job_finish(f, "a", 1, &err); }},
      {"allocate_ref", [&] { return hdrf_job_allocate_ref(f, a, 1, &err); }},
      {"release_ref", [&] { return hdrf_job_release_ref(f, a, 1, &err); }},
      {"finish_ref", [&] { return hdrf_job_finish_ref(f, a, 1, &err); }},
      {"remove_ref", [&] { return hdrf_job_remove_ref(f, a, &err); }},
      {"apply", [&] { return hdrf_apply(f, &op, 1, sizeof op, &result, nullptr, &err); }},
      {"apply_plan", [&] { return hdrf_apply_plan(f, plan, &err); }},
      {"queue_create", [&] { return hdrf_queue_create(f, &q, &err); }},
      {"queue_update", [&] { return hdrf_queue_update(f, &qa, &err); }},
      {"queue_set_state", [&] { return hdrf_queue_set_state(f, "root/b", HDRF_QUEUE_CLOSED, &err); }},
      {"queue_delete", [&] { return hdrf_queue_delete(f, "root/b", &err); }},
      {"set_capacity", [&] { return hdrf_set_capacity(f, "cpu=16,memory=16Gi", &err); }},
      {"step", [&] { return hdrf_step(f, &stepped, &name, &err); }},
      {"step_ref", [&] { return hdrf_step_ref(f, &stepped, &a, &err); }},
      {"fill", [&] { return hdrf_fill(f, &steps, &err); }},
      {"step_where", [&] { return hdrf_step_where(f, PlaceAll, nullptr, nullptr, &stepped, &name, &err); }},
      {"fill_where", [&] { return hdrf_fill_where(f, PlaceAll, nullptr, nullptr, &steps, &err); }},
      {"reconcile", [&] { return hdrf_reconcile(f, &truth, 1, nullptr, 0, 0, nullptr, nullptr, &err); }},
  };
  for (const auto& [what, call] : events) {
    EXPECT_EQ(call(), HDRF_FAILED_PRECONDITION) << what;
    EXPECT_THAT(err.str(), HasSubstr("read-only follower of " + db)) << what;
  }
  hdrf_plan_free(plan);
  EXPECT_EQ(result, HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(Digest(f), digest);
  EXPECT_EQ(LastSeq(f), seq);
  // Nothing reached the store either: the writer and a catch-up agree.
  ASSERT_EQ(hdrf_follower_catch_up(f, &err), HDRF_OK) << err.str();
  EXPECT_EQ(Digest(f), Digest(w));
  EXPECT_EQ(LastSeq(w), seq);
  EXPECT_EQ(hdrf_engine_destroy(f, &err), HDRF_OK) << err.str();
}

TEST_F(CApiFollower, PromoteAfterTheWriterCloses) {
  hdrf_engine_t* f = ManualFollower(db, err);
  ASSERT_NE(f, nullptr);
  // The writer holds the store: not promoted, still a follower.
  EXPECT_EQ(hdrf_follower_promote(f, 0, nullptr, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_THAT(err.str(), HasSubstr("still held"));
  EXPECT_THAT(err.str(), HasSubstr("not promoted"));
  EXPECT_EQ(Lag(f).is_follower, 1);
  EXPECT_EQ(hdrf_job_allocate(f, "a", 1, &err), HDRF_FAILED_PRECONDITION);

  // Events the follower has not caught up with, then the writer closes.
  ASSERT_EQ(hdrf_job_allocate(w, "b", 2, &err), HDRF_OK);
  ASSERT_EQ(hdrf_job_finish(w, "a", 1, &err), HDRF_OK);
  const std::string final_digest = Digest(w);
  const uint64_t final_seq = LastSeq(w);
  ASSERT_EQ(hdrf_engine_close(w, &err), HDRF_OK) << err.str();

  hdrf_options_t* o = hdrf_options_create();
  ASSERT_EQ(hdrf_options_set_durability(o, HDRF_DURABILITY_SYNC, &err), HDRF_OK);
  EXPECT_EQ(hdrf_follower_promote(f, -2, o, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_EQ(hdrf_follower_promote(f, 10000, o, &err), HDRF_OK) << err.str();
  hdrf_options_destroy(o);
  // The writer's state, nothing lost; now a writer.
  EXPECT_EQ(Digest(f), final_digest);
  EXPECT_EQ(LastSeq(f), final_seq);
  EXPECT_EQ(Lag(f).is_follower, 0);
  EXPECT_EQ(hdrf_follower_catch_up(f, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(hdrf_follower_promote(f, 0, nullptr, &err), HDRF_FAILED_PRECONDITION);
  // Events are accepted and continue the sequence; name lookups work.
  ASSERT_EQ(hdrf_job_allocate(f, "a", 1, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_job_submit(f, "d", "root/a", nullptr, 1, "cpu=1", nullptr, &err), HDRF_OK);
  EXPECT_EQ(LastSeq(f), final_seq + 2);
  const std::string promoted = Digest(f);
  ASSERT_EQ(hdrf_engine_destroy(f, &err), HDRF_OK) << err.str();

  // The promoted engine logged its events: a recovery has its state.
  hdrf_engine_t* r = nullptr;
  ASSERT_EQ(hdrf_engine_open(db.c_str(), nullptr, &r, &err), HDRF_OK) << err.str();
  EXPECT_EQ(Digest(r), promoted);
  EXPECT_EQ(LastSeq(r), final_seq + 2);
  EXPECT_EQ(hdrf_engine_destroy(r, &err), HDRF_OK);
}

// The checkpoint cadence (hdrf_options_set_checkpoint_every 100 and
// hdrf_options_set_checkpoint_events_per_job k, docs/storage.md
// "Checkpoints") as a follower sees it. The writer `w` submits 200 jobs; a
// follower opened then catches up once, after 1,000 more task events. It
// reloads the newest checkpoint only when the writer deleted log it had not
// read, which takes two background checkpoints after it opened: with k = 4
// there is at most one (the interval is 4 x 200 = 800 events), with k = 0
// one every 100 events. Returns the follower's reloads.
uint64_t ReloadsAfterTheCadence(hdrf_engine_t* w, const std::string& db) {
  Err err;
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(hdrf_job_submit(w, ("j" + std::to_string(i)).c_str(), "root/a", nullptr, 2, "cpu=1",
                              nullptr, &err),
              HDRF_OK)
        << err.str();
  hdrf_engine_t* f = ManualFollower(db, err);
  if (!f) return UINT64_MAX;
  const uint64_t end = LastSeq(w) + 1000;
  for (int i = 0; LastSeq(w) < end; ++i) {
    const std::string job = "j" + std::to_string(i / 2 % 200);
    EXPECT_EQ(i % 2 == 0 ? hdrf_job_allocate(w, job.c_str(), 1, &err)
                         : hdrf_job_release(w, job.c_str(), 1, &err),
              HDRF_OK)
        << err.str();
  }
  EXPECT_EQ(hdrf_follower_catch_up(f, &err), HDRF_OK) << err.str();
  EXPECT_EQ(Digest(f), Digest(w));
  const uint64_t reloads = Lag(f).reloads;
  EXPECT_EQ(hdrf_engine_destroy(f, &err), HDRF_OK) << err.str();
  return reloads;
}

hdrf_options_t* CadenceOptions(uint32_t k) {
  Err err;
  hdrf_options_t* o = hdrf_options_create();
  EXPECT_EQ(hdrf_options_set_checkpoint_every(o, 100, &err), HDRF_OK);
  EXPECT_EQ(hdrf_options_set_checkpoint_events_per_job(o, k, &err), HDRF_OK) << err.str();
  return o;
}

// A writer of a new store at `db` with CadenceOptions(k): made by
// hdrf_engine_create, or a follower promoted with them after a writer with
// the default options closed.
hdrf_engine_t* CadenceWriter(const std::string& db, uint32_t k, bool promoted, Err& err) {
  hdrf_options_t* o = CadenceOptions(k);
  hdrf_engine_t* w = nullptr;
  if (promoted) {
    hdrf_engine_t* old = Writer(db, err);
    w = ManualFollower(db, err);
    EXPECT_EQ(hdrf_engine_destroy(old, &err), HDRF_OK) << err.str();
    EXPECT_EQ(hdrf_follower_promote(w, 10000, o, &err), HDRF_OK) << err.str();
  } else {
    EXPECT_EQ(hdrf_options_set_db_path(o, db.c_str(), &err), HDRF_OK);
    hdrf_queue_spec_t q;
    hdrf_queue_spec_init(&q);
    q.path = "root/a";
    EXPECT_EQ(hdrf_engine_create("cpu=8", &q, 1, o, &w, &err), HDRF_OK) << err.str();
  }
  hdrf_options_destroy(o);
  return w;
}

// hdrf_options_set_checkpoint_events_per_job reaches a new writer and a
// promoted one.
TEST(CApiCheckpointCadence, EventsPerJobReachesTheWriter) {
  for (bool promoted : {false, true}) {
    for (uint32_t k : {4u, 0u}) {
      SCOPED_TRACE("checkpoint_events_per_job " + std::to_string(k) + (promoted ? ", promoted" : ""));
      TempDir dir;
      ASSERT_TRUE(dir.ok());
      const std::string db = dir.Sub("db");
      Err err;
      hdrf_engine_t* w = CadenceWriter(db, k, promoted, err);
      ASSERT_NE(w, nullptr);
      const uint64_t reloads = ReloadsAfterTheCadence(w, db);
      EXPECT_EQ(hdrf_engine_destroy(w, &err), HDRF_OK) << err.str();
      if (k == 4) {
        EXPECT_EQ(reloads, 0u);
      } else {
        EXPECT_GE(reloads, 1u);
      }
    }
  }
}

TEST(CApiFollowerInput, BadInputGetsACodeAndAMessage) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Err err;
  hdrf_engine_t* f = reinterpret_cast<hdrf_engine_t*>(&err);  // not NULL: must be reset
  EXPECT_EQ(hdrf_engine_open_follower(nullptr, nullptr, &f, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("db_path is NULL"));
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(hdrf_engine_open_follower("", nullptr, &f, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_open_follower(dir.Sub("db").c_str(), nullptr, nullptr, &err),
            HDRF_INVALID_ARGUMENT);
  // No store there: an error naming it, and nothing created.
  const std::string none = dir.Sub("none");
  hdrf_follower_options_t fo;
  hdrf_follower_options_init(&fo);
  const std::string secondary = dir.Sub("secondary");
  fo.secondary_path = secondary.c_str();
  EXPECT_EQ(hdrf_engine_open_follower(none.c_str(), &fo, &f, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr(none));
  EXPECT_EQ(f, nullptr);
  EXPECT_NE(::access(none.c_str(), F_OK), 0);
  EXPECT_NE(::access(secondary.c_str(), F_OK), 0);
  EXPECT_EQ(hdrf_engine_open_follower(none.c_str(), nullptr, &f, &err), HDRF_NOT_FOUND);
  // Versioned structs that were not initialised.
  fo.struct_size = 0;
  EXPECT_EQ(hdrf_engine_open_follower(none.c_str(), &fo, &f, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("hdrf_follower_options.struct_size is 0"));
  hdrf_engine_t* e = nullptr;
  ASSERT_EQ(hdrf_engine_create("cpu=1", nullptr, 0, nullptr, &e, &err), HDRF_OK);
  hdrf_follower_lag_t lag;
  lag.struct_size = 0;
  EXPECT_EQ(hdrf_follower_lag(e, &lag, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("hdrf_follower_lag.struct_size is 0"));
  EXPECT_EQ(hdrf_follower_lag(e, nullptr, &err), HDRF_INVALID_ARGUMENT);
  // Handles: NULL and destroyed.
  EXPECT_EQ(hdrf_follower_catch_up(nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_follower_promote(nullptr, 0, nullptr, &err), HDRF_INVALID_ARGUMENT);
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
  hdrf_follower_lag_init(&lag);
  EXPECT_EQ(hdrf_follower_lag(e, &lag, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_follower_catch_up(e, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_follower_promote(e, 0, nullptr, &err), HDRF_INVALID_ARGUMENT);
  hdrf_follower_options_init(nullptr);  // ignored
  hdrf_follower_lag_init(nullptr);
}

}  // namespace
