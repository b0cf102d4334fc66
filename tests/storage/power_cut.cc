#include "tests/storage/power_cut.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "api/facade/engine_impl.h"  // CheckEngineInvariants
#include "storage/replica.h"
#include "storage/state_io.h"
#include "storage/store.h"
#include "tests/storage/fault_fs.h"
#include "tests/storage/storage_util.h"

namespace hdrf::storage_test {
namespace {

// Where the running checkpoint is (storage::SetCheckpointHookForTesting):
// 1 after its chunks are in the memtable (the flush comes next), 2 after
// they are flushed (the header's synced write comes next), 0 otherwise.
std::atomic<int> g_ckpt_phase{0};

void CheckpointHook(storage::CheckpointStep step, uint64_t) {
  switch (step) {
    case storage::CheckpointStep::kChunksWritten: g_ckpt_phase = 1; break;
    case storage::CheckpointStep::kChunksFlushed: g_ckpt_phase = 2; break;
    case storage::CheckpointStep::kCommitted: g_ckpt_phase = 0; break;
  }
}

// The reference: the stream's events applied in memory, the digest after
// each prefix (digest(n): after the first n events).
class StreamRef {
 public:
  explicit StreamRef(uint64_t seed)
      : gen_(seed), eng_(std::move(Engine::Create(TestCluster(), TestQueues()).value())) {
    digests_.push_back(eng_->Digest());
  }
  const Event& event(uint64_t i) {
    Extend(i + 1);
    return events_[i];
  }
  uint64_t digest(uint64_t n) {
    Extend(n);
    return digests_[n];
  }

 private:
  void Extend(uint64_t n) {
    while (events_.size() < n) {
      events_.push_back(gen_.Next());
      Status s = eng_->Apply(events_.back());
      if (!s.ok()) std::abort();  // the generator checked it
      digests_.push_back(eng_->Digest());
    }
  }
  StreamGen gen_;
  std::unique_ptr<Engine> eng_;
  std::vector<Event> events_;
  std::vector<uint64_t> digests_;
};

// The plan workload's digests in memory: seq -> digest.
class PlanRef {
 public:
  explicit PlanRef(uint64_t seed, uint64_t rounds) {
    auto e = std::move(Engine::Create(PlanCluster(), PlanQueues()).value());
    digests_[0] = e->Digest();
    Status s = RunPlanWorkload(*e, seed, rounds, [&](const char*, size_t) {
      digests_[e->last_seq()] = e->Digest();
      return true;
    });
    if (!s.ok()) std::abort();
  }
  // 0 when the workload never reaches seq `n` as a whole event.
  bool has(uint64_t n) const { return digests_.count(n) != 0; }
  uint64_t digest(uint64_t n) const { return digests_.at(n); }

 private:
  std::map<uint64_t, uint64_t> digests_;
};

class Harness {
 public:
  explicit Harness(const PowerCutOptions& o) : o_(o), rng_(o.seed * 0x9e3779b97f4a7c15ULL + 7) {
    env_.fs->SetOnCut([this](const char* what) {
      std::lock_guard<std::mutex> l(cut_mu_);
      cut_what_ = what;
      cut_in_checkpoint_ = g_ckpt_phase.load() != 0;
    });
  }

  PowerCutResult Run() {
    storage::SetEnvForTesting(env_.env.get());
    storage::SetCheckpointHookForTesting(&CheckpointHook);
    for (uint64_t store = 0; r_.cuts < o_.cuts; ++store) {
      ++r_.stores;
      const uint64_t seed = o_.seed * 1000003 + store;
      if (o_.plans) PlanStore(seed);
      else StreamStore(seed);
    }
    storage::SetCheckpointHookForTesting(nullptr);
    storage::SetEnvForTesting(nullptr);
    return r_;
  }

 private:
  void Fail(const std::string& what) {
    ++r_.failures;
    if (r_.messages.size() < 10) r_.messages.push_back(where_ + ": " + what);
  }

  EngineOptions Options(const std::string& db) {
    EngineOptions eo;
    eo.db_path = db;
    eo.durability = o_.durability;
    eo.checkpoint_every = static_cast<uint64_t>(rng_.Uniform(5, 150));
    eo.checkpoint_events_per_job = 0;  // that cadence, however many jobs
    return eo;
  }

  // The cut of the write phase: armed at a random operation within what
  // such a phase has used on average, so that it lands anywhere in it.
  void ArmWriteCut(uint64_t events) {
    g_ckpt_phase = 0;
    if (rng_.Chance(10)) return;  // cut between events, after the phase
    const double per_event = phase_events_ ? double(phase_ops_) / double(phase_events_) : 4.0;
    const auto span = static_cast<int64_t>(std::max(2.0, per_event * double(events) * 1.1));
    env_.fs->ArmCut(static_cast<uint64_t>(rng_.Uniform(1, span)));
  }

  // After the write phase: the cut (if no armed one came), the engine gone,
  // the unsynced writes dropped.
  void PowerOff(std::unique_ptr<Engine>& e, uint64_t ops_before, uint64_t events) {
    if (!env_.fs->cut()) {
      phase_ops_ += env_.fs->ops() - ops_before;
      phase_events_ += events;
      env_.fs->Cut();
      ++r_.cuts_idle;
      std::lock_guard<std::mutex> l(cut_mu_);
      cut_what_ = "idle";
      cut_in_checkpoint_ = false;
    }
    {
      std::lock_guard<std::mutex> l(cut_mu_);
      ++r_.cut_at_op[cut_what_];
      if (cut_in_checkpoint_) ++r_.cuts_in_checkpoint;
    }
    if (e) (void)e->Close();
    e.reset();
    Drop();
    ++r_.cuts;
  }

  void Drop() {
    auto d = env_.fs->DropUnsynced(rng_.Chance(50), rng_);
    r_.bytes_dropped += d.bytes_dropped;
    r_.names_undone += d.names_undone;
  }

  // Opens the store after a cut; sometimes the power goes off again during
  // the recovery (then it drops and opens again). Null on failure.
  // With `digest_at`, the checkpoint the power cut left is checked first
  // (CheckCheckpoint), before the open writes anything.
  template <typename DigestAt>
  std::unique_ptr<Engine> Recover(const std::string& db, DigestAt digest_at) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      CheckCheckpoint(db, digest_at);
      const bool cut_during = attempt < 3 && rng_.Chance(15);
      if (cut_during) env_.fs->ArmCut(static_cast<uint64_t>(rng_.Uniform(1, 30)));
      auto e = Engine::Open(Options(db));
      env_.fs->ArmCut(0);
      if (env_.fs->cut()) {
        ++r_.cuts_in_recovery;
        if (e.ok()) (void)(*e)->Close();
        Drop();
        continue;
      }
      if (!e.ok()) {
        Fail("recovery failed: " + e.status().ToString());
        return nullptr;
      }
      return std::move(e).value();
    }
    Fail("no recovery in 4 attempts");
    return nullptr;
  }

  // The newest checkpoint alone must be the reference state at its seq,
  // and every table file must read back whole.
  template <typename DigestAt>
  void CheckCheckpoint(const std::string& db, DigestAt digest_at) {
    auto st = storage::Store::Open(db, storage::Store::Mode::kReadOnly);
    if (!st.ok()) return Fail("read-only open: " + st.status().ToString());
    auto seqs = (*st)->CheckpointSeqs();
    if (!seqs.ok() || seqs->empty()) return Fail("no committed checkpoint");
    storage::LoadOptions lo;
    lo.stop_at = seqs->back();
    auto loaded = storage::Replica::Load(**st, lo);
    if (!loaded.ok()) return Fail("loading checkpoint " + std::to_string(seqs->back()) + ": " +
                                  loaded.status().ToString());
    uint64_t want = 0;
    if (!digest_at(seqs->back(), &want)) return Fail("checkpoint at an unknown seq");
    if (loaded->tree().Digest() != want)
      Fail("checkpoint " + std::to_string(seqs->back()) + " is not the state at its seq");
  }

  // Checks a recovered engine: seq within [acked, issued], the reference's
  // state there, invariants.
  template <typename DigestAt>
  bool CheckRecovered(Engine& e, uint64_t acked, uint64_t issued, DigestAt digest_at) {
    const uint64_t n = e.last_seq();
    bool ok = true;
    if (n < acked) {
      Fail("lost acknowledged events: recovered " + std::to_string(n) + " of " +
           std::to_string(acked) + " acknowledged");
      ok = false;
    }
    if (n > issued) {
      Fail("recovered " + std::to_string(n) + " events, only " + std::to_string(issued) +
           " were issued");
      return false;
    }
    uint64_t want = 0;
    if (!digest_at(n, &want)) {
      Fail("recovered seq " + std::to_string(n) + " is inside an event");
      return false;
    }
    if (e.Digest() != want) {
      Fail("recovered state at seq " + std::to_string(n) + " is not the reference's (a gap?)");
      ok = false;
    }
    if (Status s = CheckEngineInvariants(e); !s.ok()) {
      Fail("invariants: " + s.ToString());
      ok = false;
    }
    r_.events_acked += acked;
    r_.events_lost += issued - n;
    r_.recovered_unacked += n > acked ? n - acked : 0;
    return ok;
  }

  void Log(const char* what, uint64_t acked, uint64_t issued, uint64_t recovered) {
    if (!o_.verbose) return;
    std::lock_guard<std::mutex> l(cut_mu_);
    std::fprintf(stderr, "%s: %s cut at %s%s: acked %" PRIu64 " issued %" PRIu64
                 " recovered %" PRIu64 "\n",
                 where_.c_str(), what, cut_what_.c_str(), cut_in_checkpoint_ ? " (checkpoint)" : "",
                 acked, issued, recovered);
  }

  void StreamStore(uint64_t seed) {
    TempDir dir("powercut");
    const std::string db = dir.Sub("db");
    StreamRef ref(seed);
    auto digest_at = [&](uint64_t n, uint64_t* d) {
      *d = ref.digest(n);
      return true;
    };
    auto created = Engine::Create(TestCluster(), TestQueues(), Options(db));
    where_ = "seed " + std::to_string(seed);
    if (!created.ok()) return Fail("create: " + created.status().ToString());
    std::unique_ptr<Engine> e = std::move(created).value();
    uint64_t acked = 0;  // sync: last acknowledged; async: last flushed
    for (uint64_t c = 0; c < o_.cuts_per_store && r_.cuts < o_.cuts; ++c) {
      where_ = "seed " + std::to_string(seed) + " cut " + std::to_string(c);
      const auto events = static_cast<uint64_t>(rng_.Uniform(0, 250));
      const uint64_t ops_before = env_.fs->ops();
      ArmWriteCut(events);
      uint64_t issued = e->last_seq();
      for (uint64_t i = 0; i < events && !env_.fs->cut(); ++i) {
        Status s = e->Apply(ref.event(issued));
        issued = e->last_seq();
        if (!s.ok()) {
          if (!env_.fs->cut()) Fail("event refused with the power on: " + s.ToString());
          break;
        }
        if (o_.durability == Durability::kSync) acked = issued;
        if (rng_.Chance(3)) {  // an explicit checkpoint (waits for it)
          if (e->Checkpoint().ok()) acked = std::max(acked, issued);
        } else if (o_.durability == Durability::kAsync && rng_.Chance(4)) {
          if (e->Flush().ok()) acked = issued;
        }
      }
      PowerOff(e, ops_before, events);
      e = Recover(db, digest_at);
      if (!e) return;
      Log("stream", acked, issued, e->last_seq());
      if (!CheckRecovered(*e, acked, issued, digest_at)) return;
      acked = e->last_seq();  // what recovery read is on disk
      (void)e->Close();
      e = Recover(db, digest_at);  // and the checkpoint Close() wrote
      if (!e) return;
      if (e->last_seq() != acked) return Fail("a clean close and open changed the seq");
    }
    // A clean close keeps everything.
    const uint64_t last = e->last_seq();
    if (Status s = e->Close(); !s.ok()) return Fail("clean close: " + s.ToString());
    e.reset();
    auto again = Engine::Open(Options(db));
    if (!again.ok()) return Fail("open after a clean close: " + again.status().ToString());
    if ((*again)->last_seq() != last || (*again)->Digest() != ref.digest(last))
      Fail("a clean close lost events");
  }

  void PlanStore(uint64_t seed) {
    TempDir dir("powercutplan");
    const std::string db = dir.Sub("db");
    where_ = "plans seed " + std::to_string(seed);
    const uint64_t rounds = static_cast<uint64_t>(rng_.Uniform(1, 3));
    PlanRef ref(seed, rounds);
    auto digest_at = [&](uint64_t n, uint64_t* d) {
      if (!ref.has(n)) return false;
      *d = ref.digest(n);
      return true;
    };
    auto created = Engine::Create(PlanCluster(), PlanQueues(), Options(db));
    if (!created.ok()) return Fail("create: " + created.status().ToString());
    std::unique_ptr<Engine> e = std::move(created).value();
    const uint64_t ops_before = env_.fs->ops();
    ArmWriteCut(30 * rounds);  // a round is about 30 events
    uint64_t acked = 0, issued = 0, plans = 0;
    (void)RunPlanWorkload(*e, seed, rounds, [&](const char* kind, size_t) {
      issued = e->last_seq();
      if (o_.durability == Durability::kSync) acked = issued;
      else if (rng_.Chance(5) && e->Flush().ok()) acked = issued;
      if (std::string(kind) == "plan") ++plans;
      return !env_.fs->cut();
    });
    // An event refused after the cut was applied in memory all the same.
    issued = std::max(issued, e->last_seq());
    PowerOff(e, ops_before, issued);
    e = Recover(db, digest_at);
    if (!e) return;
    Log("plans", acked, issued, e->last_seq());
    if (!CheckRecovered(*e, acked, issued, digest_at)) return;
    r_.plans_applied += plans;
    (void)e->Close();
    CheckCheckpoint(db, digest_at);
  }

  const PowerCutOptions o_;
  testing::Rng rng_;
  FaultEnv env_;
  PowerCutResult r_;
  std::string where_;
  std::mutex cut_mu_;
  std::string cut_what_;
  bool cut_in_checkpoint_ = false;
  uint64_t phase_ops_ = 0, phase_events_ = 0;  // of phases that ended uncut
};

}  // namespace

PowerCutResult RunPowerCuts(const PowerCutOptions& options) { return Harness(options).Run(); }

}  // namespace hdrf::storage_test
