// EngineOptions::reserve_jobs: room made up front changes no result (the
// same events give the same digest and views as an engine without it, also
// past the reserved count), and an impossible count is refused.
#include <gtest/gtest.h>

#include <string>

#include "hdrf/engine.h"

namespace hdrf {
namespace {

uint64_t RunEvents(uint64_t reserve) {
  EngineOptions o;
  o.reserve_jobs = reserve;
  QueueSpec a, b;
  a.path = "root/a";
  b.path = "root/b";
  auto e = Engine::Create({{"cpu", 40000}, {"memory", int64_t{1} << 36}}, {a, b}, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return 0;
  Engine& eng = **e;
  std::vector<JobRef> jobs;
  for (int i = 0; i < 300; ++i) {  // past a reserve of 100, and saturating cpu
    JobSpec j;
    j.name = "j" + std::to_string(i);
    j.queue = i % 2 ? "root/a" : "root/b";
    j.tasks = 4;
    j.task = {{"cpu", 1000 * (1 + i % 3)}, {"memory", int64_t{1} << 28}};
    auto r = eng.Submit(j);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) jobs.push_back(*r);
  }
  for (size_t i = 0; i < jobs.size(); ++i) (void)eng.Allocate(jobs[i], 1 + i % 2);
  for (size_t i = 0; i < jobs.size(); i += 3) EXPECT_TRUE(eng.Remove(jobs[i]).ok());
  EXPECT_TRUE(eng.Fill().ok());
  return eng.Digest();
}

TEST(ReserveJobs, SameStateWithAndWithoutRoomMadeUpFront) {
  const uint64_t plain = RunEvents(0);
  EXPECT_EQ(RunEvents(100), plain);
  EXPECT_EQ(RunEvents(100000), plain);
}

TEST(ReserveJobs, MoreThanTheJobIdsIsRefused) {
  EngineOptions o;
  o.reserve_jobs = uint64_t{1} << 32;
  auto e = Engine::Create({{"cpu", 1}}, {}, o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("reserve_jobs 4294967296"), std::string::npos) << e.status().ToString();
}

}  // namespace
}  // namespace hdrf
