// One op, one dispatcher (hdrf/op.h): the one check of an op's type
// (JobEventType, by number and by name), Engine::Apply(Op) against the
// dedicated calls it stands behind (Allocate, Release, Finish, Remove) on
// twin engines with stores, and BatchStatus, the status hdrf_apply and
// Python's Engine.apply report for a batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/op.h"
#include "tests/temp_dir.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
using T = Event::Type;

constexpr const char* kExpected = "expected allocate (0), release (1), finish (2) or remove (4)";

TEST(JobEventType, TheFourJobEventsByNumberAndName) {
  for (T t : kJobEventTypes) {
    auto by_number = JobEventType(static_cast<int64_t>(t));
    ASSERT_TRUE(by_number.ok()) << by_number.status().ToString();
    EXPECT_EQ(*by_number, t);
    auto by_name = JobEventType(EventTypeName(t));
    ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
    EXPECT_EQ(*by_name, t);
    EXPECT_TRUE(CheckJobEvent(t).ok());
    EXPECT_TRUE(IsJobEvent(t));
  }
  EXPECT_EQ(*JobEventType(0), T::kAllocate);
  EXPECT_EQ(*JobEventType(4), T::kRemove);
  EXPECT_EQ(*JobEventType("finish"), T::kFinish);
}

TEST(JobEventType, AnythingElseIsRefusedNamingIt) {
  struct Case {
    int64_t value;
    std::string says;
  } numbers[] = {
      {3, "op type 3 (submit) is not a job event: "},
      {5, "op type 5 (create-queue) is not a job event: "},
      {9, "op type 9 (set-capacity) is not a job event: "},
      {10, "op type 10 (apply-plan) is not a job event: "},
      {11, "op type 11 is not a job event: "},
      {-1, "op type -1 is not a job event: "},
      // Above 255: not the uint8_t Event::Type it would wrap to (256 -> allocate).
      {256, "op type 256 is not a job event: "},
      {260, "op type 260 is not a job event: "},
      {std::numeric_limits<int64_t>::min(), "op type -9223372036854775808 is not"},
  };
  for (const Case& c : numbers) {
    SCOPED_TRACE(c.value);
    auto t = JobEventType(c.value);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr(c.says));
    EXPECT_THAT(t.status().message(), HasSubstr(kExpected));
  }
  for (const char* name : {"explode", "submit", "Allocate", "", "allocate "}) {
    SCOPED_TRACE(name);
    auto t = JobEventType(name);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr("op '" + std::string(name) + "' is not a job event: "));
    EXPECT_THAT(t.status().message(), HasSubstr(kExpected));
  }
  EXPECT_THAT(CheckJobEvent(T::kSetCapacity).message(), HasSubstr("op type 9 (set-capacity)"));
  EXPECT_THAT(CheckJobEvent(static_cast<T>(77)).message(), HasSubstr("op type 77 is not"));
}

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("hdrf_op_test") {}
};

// Two top-level queues, `jobs` jobs of 6 tasks each, over a store at `db`.
std::unique_ptr<Engine> Twin(const std::string& db, int jobs, std::vector<JobRef>* refs) {
  EngineOptions o;
  o.db_path = db;
  o.checkpoint_every = 0;
  auto e = Engine::Create({{"cpu", 40}}, {{.path = "root/a/leaf"}, {.path = "root/b/leaf"}}, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  for (int j = 0; j < jobs; ++j) {
    auto r = (*e)->Submit({.name = "j" + std::to_string(j),
                           .queue = j % 2 ? "root/a/leaf" : "root/b/leaf",
                           .tasks = 6,
                           .task = {{"cpu", 1}}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    refs->push_back(*r);
  }
  return std::move(e).value();
}

// Random ops of every type: through Engine::Apply(Op) on one engine, the
// dedicated call on a twin, each gets the same status, and the same code
// as the op applied as an Event (Engine::Apply(Event): the exclusive path
// and ApplyEvent) on a third; the three end in the same state, in memory
// and in their stores (opened again).
TEST(EngineApplyOp, EveryTypeMatchesTheDedicatedCall) {
  TempDir dir;
  std::vector<JobRef> ra, rb, rc;
  auto a = Twin(dir.path + "/a", 12, &ra);
  auto b = Twin(dir.path + "/b", 12, &rb);
  auto c = Twin(dir.path + "/c", 12, &rc);
  std::mt19937 rng(3);
  int applied[5] = {};
  for (int i = 0; i < 3000; ++i) {
    const size_t j = rng() % ra.size();
    const int64_t n = 1 + static_cast<int64_t>(rng() % 3);
    const T type = i % 211 == 0 ? T::kRemove : kJobEventTypes[rng() % 3];
    const Status sa = a->Apply(Op{type, ra[j], n});
    Status sb;
    switch (type) {
      case T::kAllocate: sb = b->Allocate(rb[j], n); break;
      case T::kRelease: sb = b->Release(rb[j], n); break;
      case T::kFinish: sb = b->Finish(rb[j], n); break;
      default: sb = b->Remove(rb[j]);
    }
    ASSERT_EQ(sa.ToString(), sb.ToString()) << "op " << i << " " << EventTypeName(type);
    const Status sc = c->Apply(Event::Task(type, rc[j].seq, type == T::kRemove ? 0 : n));
    ASSERT_EQ(sa.code(), sc.code()) << "op " << i << " " << sa.ToString() << " / " << sc.ToString();
    if (sa.ok()) ++applied[static_cast<int>(type)];
  }
  for (T t : kJobEventTypes) EXPECT_GT(applied[static_cast<int>(t)], 0) << EventTypeName(t);
  EXPECT_EQ(a->DigestHex(), b->DigestHex());
  EXPECT_EQ(a->DigestHex(), c->DigestHex());
  EXPECT_EQ(a->last_seq(), b->last_seq());
  EXPECT_EQ(a->last_seq(), c->last_seq());
  const std::string digest = a->DigestHex();
  for (auto* e : {&a, &b, &c}) {
    ASSERT_TRUE((*e)->Close().ok());
    e->reset();
  }
  for (const char* name : {"/a", "/b", "/c"}) {
    EngineOptions o;
    o.db_path = dir.path + name;
    auto e = Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ((*e)->DigestHex(), digest) << name;
  }
}

// An op whose type is no job event, alone or in a batch, is InvalidArgument
// naming it and changes nothing; Remove ignores n.
TEST(EngineApplyOp, ATypeThatIsNoJobEventChangesNothing) {
  TempDir dir;
  std::vector<JobRef> refs;
  auto e = Twin(dir.path + "/db", 2, &refs);
  ASSERT_TRUE(e->Allocate(refs[0], 2).ok());
  const std::string digest = e->DigestHex();
  const uint64_t seq = e->last_seq();
  for (T t : {T::kSubmit, T::kSetCapacity, T::kApplyPlan, static_cast<T>(77)}) {
    SCOPED_TRACE(static_cast<int>(t));
    const Status s = e->Apply(Op{t, refs[0], 1});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("op type " + std::to_string(static_cast<int>(t))));
    EXPECT_THAT(s.message(), HasSubstr(kExpected));
    Status st;
    Engine::TaskOp op = Engine::TaskOp::Of(Op{t, refs[0], 1}, &st);
    if (t == T::kSubmit) op.type = T::kSetCapacity;  // a kSubmit TaskOp is a submission
    size_t refused = 0;
    EXPECT_TRUE(e->ApplyTasks(&op, 1, nullptr, &refused).ok());
    EXPECT_EQ(refused, 1u);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr(kExpected));
  }
  EXPECT_EQ(e->DigestHex(), digest);
  EXPECT_EQ(e->last_seq(), seq);
  ASSERT_TRUE(e->Apply(Op{T::kRemove, refs[1], 12345}).ok());
  EXPECT_EQ(e->job_count(), 1u);
  const Engine::TaskOp t = Engine::TaskOp::Of(Op::Release(refs[0], 2));
  EXPECT_EQ(t.op().type, T::kRelease);
  EXPECT_EQ(t.op().n, 2);
  EXPECT_EQ(t.op().job.seq, refs[0].seq);
}

TEST(BatchStatus, WhatABatchReports) {
  const Status ok;
  const Status gone = Status::NotFound("no such job");
  const Status disk = Status::Internal("store failed");
  // Every op applied: the batch's own status.
  EXPECT_TRUE(BatchStatus(ok, std::vector<Status>{ok, ok}).ok());
  EXPECT_TRUE(BatchStatus(ok, {}).ok());
  // Some refused: the first, naming it.
  const Status first = BatchStatus(ok, std::vector<Status>{ok, gone, Status::OutOfRange("x")});
  EXPECT_EQ(first.code(), StatusCode::kNotFound);
  EXPECT_THAT(first.message(), HasSubstr("op 1 of 3 (2 refused)"));
  EXPECT_THAT(first.message(), HasSubstr("no such job"));
  // Every op refused: the first refusal (not Ok, not a count).
  EXPECT_THAT(BatchStatus(ok, std::vector<Status>{gone}).message(), HasSubstr("op 0 of 1 (1 refused)"));
  // Applied but not made durable: the batch's error.
  EXPECT_EQ(BatchStatus(disk, std::vector<Status>{ok, gone}).code(), StatusCode::kInternal);
  // Nothing applied and the engine stopped: the first op's refusal.
  EXPECT_EQ(BatchStatus(disk, std::vector<Status>{disk, disk}).message().find("op 0 of 2"), 0u);
}

}  // namespace
}  // namespace hdrf
