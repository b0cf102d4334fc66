// Crash and fault tests (issue 5): a storage_child process ingests events
// and is SIGKILLed at a random moment, or runs out of file size; the parent
// recovers the store and checks it against what the child acknowledged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants
#include "tests/storage/storage_util.h"

namespace hdrf {
namespace {

using ::testing::HasSubstr;
using storage_test::Acks;
using storage_test::Child;
using storage_test::TempDir;

// Runs the child until `kill_after_ms` after it is ready, then SIGKILLs it.
Acks RunAndKill(const std::vector<std::string>& args, int kill_after_ms) {
  Child c(args);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (storage_test::ParseAcks(c.lines()).ready == false && std::chrono::steady_clock::now() < deadline)
    if (!c.Poll(50)) break;
  const auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(kill_after_ms);
  while (std::chrono::steady_clock::now() < kill_at)
    if (!c.Poll(5)) break;
  c.Kill(SIGKILL);
  c.Wait();
  return storage_test::ParseAcks(c.lines());
}

std::unique_ptr<Engine> Recover(const std::string& db) {
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  auto e = Engine::Open(o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

class Sigkill : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(Sigkill, OneThreadRecoversAnExactPrefixHoldingEveryAck) {
  const std::string durability = std::get<0>(GetParam());
  const int seed = std::get<1>(GetParam());
  TempDir dir("kill1");
  const std::string db = dir.Sub("db");
  storage_test::Rng rng(static_cast<uint64_t>(seed));
  const int after = static_cast<int>(rng.Uniform(150, 700));
  Acks a = RunAndKill({storage_test::ChildPath(), "--db", db, "--durability", durability, "--seed",
                       std::to_string(seed), "--events", "400000", "--checkpoint-every",
                       std::to_string(rng.Uniform(300, 3000))},
                      after);
  ASSERT_TRUE(a.ready);
  ASSERT_GT(a.count, 0u) << "killed before any event";
  auto e = Recover(db);
  ASSERT_TRUE(e);
  const uint64_t n = e->last_seq();
  // sync: every acknowledged event; async: everything the writer wrote
  // (durable_seq) survives a process crash.
  EXPECT_GE(n, a.max_durable) << durability;
  if (durability == std::string("sync")) {
    EXPECT_GE(n, a.max_last);
  }
  EXPECT_LE(n, a.max_last + 1) << "recovered an event the child never applied";
  auto stream = storage_test::MakeStream(static_cast<uint64_t>(seed), {.events = n});
  EXPECT_EQ(e->DigestHex(), DigestToHex(storage_test::PrefixDigest(stream, n)))
      << "recovered state is not the prefix of " << n << " events";
  EXPECT_TRUE(CheckEngineInvariants(*e).ok());
  std::printf("[ info ] %s seed %d: killed after %d ms, %llu acks, recovered %llu events\n",
              durability.c_str(), seed, after, static_cast<unsigned long long>(a.count),
              static_cast<unsigned long long>(n));
}

INSTANTIATE_TEST_SUITE_P(Runs, Sigkill,
                         ::testing::Combine(::testing::Values("sync", "async"),
                                            ::testing::Values(1, 2, 3)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

// The writer kills itself inside its third checkpoint, after each step of
// WriteCheckpoint in turn (chunks written without the WAL; chunks flushed;
// header committed): recovery holds every acknowledged event and equals the
// replay of the prefix it holds, whichever checkpoint it then starts from.
class SigkillInCheckpoint : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(SigkillInCheckpoint, RecoversAnExactPrefixHoldingEveryAck) {
  const std::string durability = std::get<0>(GetParam()), step = std::get<1>(GetParam());
  TempDir dir("killckpt");
  const std::string db = dir.Sub("db");
  const uint64_t seed = 21;
  Child c({storage_test::ChildPath(), "--db", db, "--durability", durability, "--seed",
           std::to_string(seed), "--events", "400000", "--checkpoint-every", "300",
           "--die-in-checkpoint", step + ":3"});
  const int st = c.Wait();
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the child did not die in a checkpoint";
  const Acks a = storage_test::ParseAcks(c.lines());
  ASSERT_GT(a.count, 600u) << "two checkpoints come before the third";
  auto e = Recover(db);
  ASSERT_TRUE(e);
  const uint64_t n = e->last_seq();
  EXPECT_GE(n, a.max_durable);
  if (durability == "sync") {
    EXPECT_GE(n, a.max_last) << "an acknowledged event was lost";
  }
  EXPECT_LE(n, a.max_last + 1);
  EXPECT_EQ(e->Digest(), storage_test::PrefixDigest(storage_test::MakeStream(seed, {.events = n}), n));
  EXPECT_TRUE(CheckEngineInvariants(*e).ok());
  // The recovered checkpoint: the new one once its header is committed.
  uint64_t dying = 0;
  for (const std::string& l : c.lines())
    if (l.rfind("dying in checkpoint ", 0) == 0) dying = std::stoull(l.substr(20));
  ASSERT_GE(dying, 900u);
  if (step == "committed") {
    EXPECT_EQ(e->recovery_stats().checkpoint_seq, dying);
  } else {
    EXPECT_LT(e->recovery_stats().checkpoint_seq, dying);
  }
}

INSTANTIATE_TEST_SUITE_P(Steps, SigkillInCheckpoint,
                         ::testing::Combine(::testing::Values("sync", "async"),
                                            ::testing::Values("chunks", "flushed", "committed")),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

TEST(SigkillThreads, SyncKeepsEveryAckAndTheStoreStaysUsable) {
  for (int round = 0; round < 2; ++round) {
    TempDir dir("killT");
    const std::string db = dir.Sub("db");
    Acks a = RunAndKill({storage_test::ChildPath(), "--db", db, "--durability", "sync", "--seed",
                         std::to_string(10 + round), "--events", "10000000", "--threads", "6",
                         "--checkpoint-every", "2000"},
                        300 + 250 * round);
    ASSERT_GT(a.count, 0u);
    auto e = Recover(db);
    ASSERT_TRUE(e);
    // Each worker reported durable_seq() after its call returned OK, which
    // is >= the sequence number of its own event.
    EXPECT_GE(e->last_seq(), a.max_durable) << "an acknowledged event was lost";
    EXPECT_TRUE(CheckEngineInvariants(*e).ok());
    ASSERT_TRUE(e->Close().ok());
    // The recovered store takes new events and recovers them too.
    EngineOptions o;
    o.db_path = db;
    auto again = Engine::Open(o);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    auto ref = (*again)->FindJob("t0-j0");
    ASSERT_TRUE(ref.ok());
    Status s = (*again)->Allocate(*ref, 1);
    if (!s.ok()) s = (*again)->Release(*ref, 1);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const uint64_t d = (*again)->Digest(), last = (*again)->last_seq();
    ASSERT_TRUE((*again)->Close().ok());
    auto third = Recover(db);
    ASSERT_TRUE(third);
    EXPECT_EQ(third->Digest(), d);
    EXPECT_EQ(third->last_seq(), last);
  }
}

// A writer killed around ApplyPlan recovers all of a plan or none of it
// (docs/spec.md §15: one logged event). The child runs the plan workload
// (storage_util.h: two queues fill the cluster, some jobs gangs, a job in
// the third takes tasks back by reclaim plans) and prints, after each event
// it acknowledged, last_seq() and the digest right after it. Ten rounds,
// each killed at a random moment within a second of "ready": nine with
// sync durability, one with async. The recovered store holds every
// acknowledged event (sync) and its digest is the one printed for the
// sequence number it recovered: a state between a plan's victims' release
// and its demand's allocation has no sequence number of its own, so it
// could match none. The same workload re-run in memory up to that number
// gives the same digests (covering an event applied but not yet
// acknowledged when the kill came).
TEST(SigkillPlans, RecoversAllOfAPlanOrNoneOfIt) {
  uint64_t plans_acked = 0, recovered_after_plan = 0;
  for (int round = 0; round < 10; ++round) {
    const std::string durability = round == 9 ? "async" : "sync";
    const uint64_t seed = 100 + static_cast<uint64_t>(round);
    storage_test::Rng rng(seed);
    const int after = static_cast<int>(rng.Uniform(20, 1000));
    TempDir dir("killplan");
    const std::string db = dir.Sub("db");
    Child c({storage_test::ChildPath(), "--plans", "--db", db, "--durability", durability, "--seed",
             std::to_string(seed), "--checkpoint-every", std::to_string(rng.Uniform(30, 300))});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!storage_test::ParseAcks(c.lines()).ready && std::chrono::steady_clock::now() < deadline)
      if (!c.Poll(50)) break;
    const auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(after);
    while (std::chrono::steady_clock::now() < kill_at)
      if (!c.Poll(5)) break;
    c.Kill(SIGKILL);
    const int st = c.Wait();
    ASSERT_TRUE(WIFSIGNALED(st)) << "the child ended before it was killed: " << st;
    const Acks a = storage_test::ParseAcks(c.lines());
    ASSERT_TRUE(a.ready) << durability << " round " << round;
    // seq -> (digest, kind) as the child printed them.
    std::map<uint64_t, std::pair<std::string, std::string>> printed;
    for (const std::string& l : c.lines()) {
      std::istringstream in(l);
      std::string word, digest, kind;
      uint64_t durable = 0, last = 0;
      if (!(in >> word >> durable >> last >> digest >> kind) || word != "acked") continue;
      EXPECT_FALSE(printed.count(last)) << "two acks for seq " << last;
      printed[last] = {digest, kind};
      if (kind == "plan") ++plans_acked;
    }
    ASSERT_EQ(printed.size(), a.count);
    auto e = Recover(db);
    ASSERT_TRUE(e);
    const uint64_t n = e->last_seq();
    EXPECT_GE(n, a.max_durable) << durability << " round " << round;
    if (durability == "sync") {
      EXPECT_GE(n, a.max_last) << "an acknowledged event was lost (round " << round << ")";
    }
    EXPECT_LE(n, a.max_last + 1) << "recovered an event the child never applied";
    auto it = printed.find(n);
    if (it != printed.end()) {
      EXPECT_EQ(e->DigestHex(), it->second.first)
          << "round " << round << ": the state recovered at seq " << n << " (after a "
          << it->second.second << ") is not the one the child acknowledged";
    } else {
      EXPECT_TRUE(n == 0 || n == a.max_last + 1) << n;
    }
    EXPECT_TRUE(CheckEngineInvariants(*e).ok()) << "round " << round;
    // The same workload in memory: the child's digests, and the one at n.
    auto mem = Engine::Create(storage_test::PlanCluster(), storage_test::PlanQueues());
    ASSERT_TRUE(mem.ok());
    std::string digest_at_n = n == 0 ? (*mem)->DigestHex() : "", kind_at_n = "nothing";
    uint64_t compared = 0;
    Status s = storage_test::RunPlanWorkload(**mem, seed, UINT64_MAX, [&](const char* kind, size_t) {
      const uint64_t seq = (*mem)->last_seq();
      auto p = printed.find(seq);
      if (p != printed.end()) {
        EXPECT_EQ((*mem)->DigestHex(), p->second.first) << "seq " << seq;
        ++compared;
      }
      if (seq == n) {
        digest_at_n = (*mem)->DigestHex();
        kind_at_n = kind;
      }
      return seq < std::max(n, a.max_last);
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(compared, printed.size());
    EXPECT_EQ(e->DigestHex(), digest_at_n) << "round " << round << ": recovered seq " << n;
    if (kind_at_n == "plan") ++recovered_after_plan;
    std::printf("[ info ] plans %s round %d: killed after %d ms, %llu acks, recovered %llu events (last: %s, %s)\n",
                durability.c_str(), round, after, static_cast<unsigned long long>(a.count),
                static_cast<unsigned long long>(n), kind_at_n.c_str(),
                it == printed.end() ? "unacknowledged" : "acknowledged");
  }
  EXPECT_GT(plans_acked, 0u) << "no plan was applied before the kills";
  std::printf("[ info ] plans: %llu plans acknowledged, %llu rounds recovered right after a plan\n",
              static_cast<unsigned long long>(plans_acked), static_cast<unsigned long long>(recovered_after_plan));
}

TEST(DiskFull, FailingCallReportsLaterCallsAreRefusedAckedEventsSurvive) {
  for (const char* durability : {"sync", "async"}) {
    TempDir dir("full");
    const std::string db = dir.Sub("db");
    Child c({storage_test::ChildPath(), "--db", db, "--durability", durability, "--seed", "5",
             "--events", "400000", "--checkpoint-every", "0", "--fsize", "262144"});
    int st = c.Wait();
    Acks a = storage_test::ParseAcks(c.lines());
    ASSERT_TRUE(a.ready) << durability;
    ASSERT_TRUE(WIFEXITED(st)) << st;
    EXPECT_EQ(WEXITSTATUS(st), 3) << "the child should have hit the file size limit";
    EXPECT_THAT(a.error, HasSubstr("IoError")) << a.error;
    EXPECT_THAT(a.after_error, HasSubstr("refused")) << "the engine must refuse events after a write error";
    auto e = Recover(db);
    ASSERT_TRUE(e);
    const uint64_t n = e->last_seq();
    EXPECT_GE(n, a.max_durable) << durability;
    if (std::string(durability) == "sync") {
      EXPECT_GE(n, a.max_last);
    }
    auto stream = storage_test::MakeStream(5, {.events = n});
    EXPECT_EQ(e->Digest(), storage_test::PrefixDigest(stream, n));
    std::printf("[ info ] disk full (%s): %llu acks, error '%s', recovered %llu events\n", durability,
                static_cast<unsigned long long>(a.count), a.error.c_str(),
                static_cast<unsigned long long>(n));
  }
}

}  // namespace
}  // namespace hdrf
