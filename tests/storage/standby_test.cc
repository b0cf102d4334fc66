// Warm standby (issue 15): a storage_child writer ingests events under load
// and is SIGKILLed at a random moment while a follower in this process
// follows its store; the follower is promoted and must hold every event the
// writer acknowledged, equal an in-memory replay of the recovered prefix,
// and accept (and persist) new events. Repeated with both durabilities,
// random kill times, catch-up periods and checkpoint intervals (the writer
// deletes the log behind its checkpoints while the standby follows).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants, CheckNameIndex
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using storage_test::Acks;
using storage_test::Child;
using storage_test::MakeStream;
using storage_test::ParseAcks;
using storage_test::PrefixDigest;
using storage_test::TempDir;
using Clock = std::chrono::steady_clock;

// Reads the writer's lines until it says "ready" (30 s at most).
bool WaitReady(Child& c) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!ParseAcks(c.lines()).ready && Clock::now() < deadline)
    if (!c.Poll(20)) break;
  return ParseAcks(c.lines()).ready;
}

// After the writer's death and the standby's promotion: every event the
// writer acknowledged is there, the state is the replay of the prefix it
// holds, the stream goes on (and persists), and a recovery of the store
// gives the same state. Returns the event the standby took over at.
uint64_t CheckTakeOver(Engine& standby, const Acks& a, const std::string& durability, uint64_t seed,
                       const std::string& db) {
  EXPECT_GT(a.count, 0u) << "killed before any event";
  EXPECT_FALSE(standby.is_follower());
  const uint64_t n = standby.last_seq();
  // sync: every acknowledged event; async: every event the writer wrote
  // (durable_seq) survives the writer's crash.
  EXPECT_GE(n, a.max_durable);
  if (durability == "sync") {
    EXPECT_GE(n, a.max_last) << "an acknowledged event was lost";
  }
  EXPECT_LE(n, a.max_last + 1) << "an event the writer never applied";
  const auto stream = MakeStream(seed, {.events = n + 40});
  EXPECT_EQ(standby.Digest(), PrefixDigest(stream, n)) << "not the prefix of " << n << " events";
  EXPECT_TRUE(CheckEngineInvariants(standby).ok());
  EXPECT_TRUE(CheckNameIndex(standby).ok()) << CheckNameIndex(standby).ToString();
  // The promoted standby is the writer: the stream goes on, and persists.
  for (uint64_t i = n; i < n + 40; ++i) {
    Status s = standby.Apply(stream[i]);
    EXPECT_TRUE(s.ok()) << "event " << i + 1 << ": " << s.ToString();
    if (!s.ok()) return n;
  }
  EXPECT_EQ(standby.last_seq(), n + 40);
  EXPECT_TRUE(standby.Close().ok());
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  auto r = Engine::Open(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return n;
  EXPECT_EQ((*r)->last_seq(), n + 40);
  EXPECT_EQ((*r)->Digest(), PrefixDigest(stream, n + 40));
  return n;
}

TEST(Standby, TakesOverAfterSigkillWithEveryAckAndAnExactPrefix) {
  constexpr int kRounds = 14;
  double worst_failover_ms = 0;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    storage_test::Rng rng(1000 + static_cast<uint64_t>(round));
    const std::string durability = round % 2 ? "sync" : "async";
    const uint64_t seed = 50 + static_cast<uint64_t>(round);
    TempDir dir("standby");
    const std::string db = dir.Sub("db");
    Child c({storage_test::ChildPath(), "--db", db, "--durability", durability, "--seed",
             std::to_string(seed), "--events", "400000", "--checkpoint-every",
             std::to_string(rng.Uniform(300, 3000))});
    ASSERT_TRUE(WaitReady(c));
    FollowerOptions fo;
    fo.db_path = db;
    fo.catch_up_interval_ms = static_cast<uint32_t>(rng.Uniform(1, 40));
    auto f = Engine::OpenFollower(fo);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    Engine& standby = **f;
    const int kill_after = static_cast<int>(rng.Uniform(30, 600));
    const auto kill_at = Clock::now() + std::chrono::milliseconds(kill_after);
    while (Clock::now() < kill_at)
      if (!c.Poll(5)) break;
    const uint64_t reloads = standby.follower_lag().reloads;
    c.Kill(SIGKILL);
    const auto killed = Clock::now();
    Status p = standby.Promote({.wait_ms = 20000, .durability = Durability::kAsync});
    const double failover_ms = std::chrono::duration<double, std::milli>(Clock::now() - killed).count();
    ASSERT_TRUE(p.ok()) << p.ToString();
    worst_failover_ms = std::max(worst_failover_ms, failover_ms);
    c.Wait();
    const Acks a = ParseAcks(c.lines());
    const uint64_t n = CheckTakeOver(standby, a, durability, seed, db);
    std::printf("[ info ] round %d (%s, catch-up %u ms): killed after %d ms, %llu acks, took over at "
                "event %llu in %.1f ms, %llu reloads\n",
                round, durability.c_str(), fo.catch_up_interval_ms, kill_after,
                static_cast<unsigned long long>(a.count), static_cast<unsigned long long>(n),
                failover_ms, static_cast<unsigned long long>(reloads));
  }
  std::printf("[ info ] worst failover %.1f ms over %d rounds\n", worst_failover_ms, kRounds);
}

// The writer kills itself inside a checkpoint while the standby follows
// (after each step of WriteCheckpoint: chunks written without the WAL,
// chunks flushed, header committed).
TEST(Standby, TakesOverWhenTheWriterDiesInsideACheckpoint) {
  int round = 0;
  for (const char* step : {"chunks", "flushed", "committed"}) {
    for (const std::string durability : {"sync", "async"}) {
      SCOPED_TRACE(std::string(step) + " " + durability);
      const uint64_t seed = 80 + static_cast<uint64_t>(round++);
      TempDir dir("standby-ckpt");
      const std::string db = dir.Sub("db");
      Child c({storage_test::ChildPath(), "--db", db, "--durability", durability, "--seed",
               std::to_string(seed), "--events", "400000", "--checkpoint-every", "300",
               "--die-in-checkpoint", std::string(step) + ":3"});
      ASSERT_TRUE(WaitReady(c));
      FollowerOptions fo;
      fo.db_path = db;
      fo.catch_up_interval_ms = 3;
      auto f = Engine::OpenFollower(fo);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      // Reads the writer's lines (a full pipe would stop it) until it dies;
      // the follower catches up in the background meanwhile.
      const int st = c.Wait();
      ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the writer did not die in a checkpoint";
      Status p = (*f)->Promote({.wait_ms = 30000, .durability = Durability::kAsync});
      ASSERT_TRUE(p.ok()) << p.ToString();
      CheckTakeOver(**f, ParseAcks(c.lines()), durability, seed, db);
    }
  }
}

// The tools on a store a live writer holds: `hdrf queues --db` and
// `hdrf explain --db` follow it; `hdrf standby` takes over when it dies.
TEST(StandbyTool, QueuesFollowsALiveWriterAndStandbyTakesOverWhenItDies) {
  const char* bin = std::getenv("HDRF_BIN");
  ASSERT_TRUE(bin) << "HDRF_BIN is not set";
  TempDir dir("standby-tool");
  const std::string db = dir.Sub("db");
  Child writer({storage_test::ChildPath(), "--db", db, "--durability", "sync", "--seed", "77",
                "--events", "400000"});
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (ParseAcks(writer.lines()).count < 50 && Clock::now() < deadline)
    if (!writer.Poll(20)) break;
  ASSERT_GE(ParseAcks(writer.lines()).count, 50u);
  Child queues({bin, "queues", "--db", db});
  EXPECT_EQ(queues.Wait(), 0);
  ASSERT_FALSE(queues.lines().empty());
  EXPECT_THAT(queues.lines()[0], ::testing::HasSubstr("Name"));
  EXPECT_THAT(queues.lines()[1], ::testing::HasSubstr("root"));
  Child explain({bin, "explain", "--db", db, "--job", "no-such-job"});
  const int st = explain.Wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << "a follower opened, the job is unknown";
  Child standby({bin, "standby", "--db", db, "--json", "--exit-after-takeover", "--catch-up-ms", "5",
                 "--durability", "async"});
  while (standby.lines().empty() && Clock::now() < deadline)
    if (!standby.Poll(20)) break;
  ASSERT_FALSE(standby.lines().empty());
  EXPECT_THAT(standby.lines()[0], ::testing::HasSubstr("\"following\""));
  writer.Kill(SIGKILL);
  writer.Wait();
  EXPECT_EQ(standby.Wait(), 0);
  const Acks a = ParseAcks(writer.lines());
  ASSERT_GE(standby.lines().size(), 2u);
  const std::string& took = standby.lines().back();
  EXPECT_THAT(took, ::testing::HasSubstr("\"writer\""));
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  auto r = Engine::Open(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const uint64_t n = (*r)->last_seq();
  EXPECT_GE(n, a.max_last);
  EXPECT_THAT(took, ::testing::HasSubstr("\"last_seq\": " + std::to_string(n) + ","));
  EXPECT_THAT(took, ::testing::HasSubstr((*r)->DigestHex()));
  EXPECT_EQ((*r)->Digest(), PrefixDigest(MakeStream(77, {.events = n}), n));
}

}  // namespace
}  // namespace hdrf
