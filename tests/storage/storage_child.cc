// storage_child: the process the crash tests kill. It creates a store, applies
// events and reports on stdout (one write(2) per line, so a SIGKILL never
// loses a reported line):
//   ready                       the store exists, events start
//   acked DURABLE LAST          an event call returned OK; durable_seq(),
//                               last_seq() right after
//   error SEQ MESSAGE           an event call failed (SEQ = last_seq())
//   refused MESSAGE | accepted  the event call after a failure
//   done LAST DIGEST            all events applied (no Close)
//   closed LAST DIGEST          all events applied, Close() returned OK
//   dying in checkpoint SEQ     --die-in-checkpoint: SIGKILL follows
//   acked DURABLE LAST DIGEST KIND [VICTIMS]
//                               --plans: as "acked", with the state digest
//                               right after the event and its kind (submit,
//                               step, plan with its victim count, remove)
//
// usage: storage_child --db DIR --durability sync|async|none --seed S
//          --events N [--threads T] [--checkpoint-every K] [--close]
//          [--fsize BYTES] [--hold-ms MS (keep the store open after "done")]
//          [--die-in-checkpoint STEP:N (SIGKILL itself after step STEP =
//           chunks|flushed|committed of the Nth checkpoint after creation)]
//        storage_child --plans --db DIR --durability D --seed S [--rounds R]
//          [--checkpoint-every K]: the plan workload (storage_util.h,
//          RunPlanWorkload) on PlanCluster()/PlanQueues() for R rounds
//          (default: until killed), then "done LAST DIGEST"
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/engine.h"
#include "storage/state_io.h"
#include "tests/storage/storage_util.h"

using namespace hdrf;
using namespace hdrf::storage_test;

namespace {

void Say(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > static_cast<int>(sizeof buf) - 2) n = sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t w = write(1, buf, static_cast<size_t>(n));
  (void)w;
}

// --die-in-checkpoint: the step and the checkpoint (1 = the first after
// the store's creation) at which the process kills itself.
storage::CheckpointStep die_step;
int die_at = 0;
std::atomic<int> checkpoints_seen{0};

void DieInCheckpoint(storage::CheckpointStep step, uint64_t seq) {
  if (seq == 0) return;  // the store's creation
  if (step == storage::CheckpointStep::kChunksWritten) ++checkpoints_seen;
  if (step != die_step || checkpoints_seen.load() != die_at) return;
  Say("dying in checkpoint %llu", static_cast<unsigned long long>(seq));
  raise(SIGKILL);
}

[[noreturn]] void Die(const std::string& m) {
  std::fprintf(stderr, "storage_child: %s\n", m.c_str());
  _exit(2);
}

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db, durability = "sync";
  uint64_t seed = 1, events = 1000, checkpoint_every = 1000000, fsize = 0, hold_ms = 0;
  int threads = 1;
  bool close = false, plans = false;
  uint64_t rounds = UINT64_MAX;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value for " + a);
      return argv[++i];
    };
    if (a == "--db") db = next();
    else if (a == "--durability") durability = next();
    else if (a == "--seed") seed = std::stoull(next());
    else if (a == "--events") events = std::stoull(next());
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--checkpoint-every") checkpoint_every = std::stoull(next());
    else if (a == "--fsize") fsize = std::stoull(next());
    else if (a == "--close") close = true;
    else if (a == "--plans") plans = true;
    else if (a == "--rounds") rounds = std::stoull(next());
    else if (a == "--hold-ms") hold_ms = std::stoull(next());
    else if (a == "--die-in-checkpoint") {
      const std::string v = next();
      const size_t colon = v.find(':');
      const std::string step = v.substr(0, colon);
      if (step == "chunks") die_step = storage::CheckpointStep::kChunksWritten;
      else if (step == "flushed") die_step = storage::CheckpointStep::kChunksFlushed;
      else if (step == "committed") die_step = storage::CheckpointStep::kCommitted;
      else Die("--die-in-checkpoint: unknown step " + step);
      die_at = colon == std::string::npos ? 1 : std::stoi(v.substr(colon + 1));
      storage::SetCheckpointHookForTesting(&DieInCheckpoint);
    }
    else Die("unknown argument " + a);
  }
  EngineOptions o;
  o.db_path = db;
  auto d = ParseDurability(durability);
  if (!d.ok()) Die(d.status().message());
  o.durability = *d;
  o.checkpoint_every = checkpoint_every;
  o.checkpoint_events_per_job = 0;  // --checkpoint-every alone, however many jobs

  if (plans) {
    auto created = Engine::Create(PlanCluster(), PlanQueues(), o);
    if (!created.ok()) Die(created.status().ToString());
    std::unique_ptr<Engine> eng = std::move(created).value();
    Say("ready");
    Status s = RunPlanWorkload(*eng, seed, rounds, [&](const char* kind, size_t victims) {
      const unsigned long long durable = eng->durable_seq(), last = eng->last_seq();
      const std::string digest = eng->DigestHex();
      if (victims)
        Say("acked %llu %llu %s %s %zu", durable, last, digest.c_str(), kind, victims);
      else
        Say("acked %llu %llu %s %s", durable, last, digest.c_str(), kind);
      return true;
    });
    if (!s.ok()) Die("plan workload: " + s.ToString());
    Say("done %llu %s", static_cast<unsigned long long>(eng->last_seq()), eng->DigestHex().c_str());
    _exit(0);
  }
  StreamGen gen(seed);
  auto created = Engine::Create(TestCluster(), TestQueues(), o);
  if (!created.ok()) Die(created.status().ToString());
  std::unique_ptr<Engine> eng = std::move(created).value();
  if (fsize) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = fsize;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) Die("setrlimit failed");
  }
  Say("ready");

  auto report_failure = [&](const Status& s, const Event& again) {
    Say("error %llu %s", static_cast<unsigned long long>(eng->last_seq()), OneLine(s.ToString()).c_str());
    Status t = eng->Apply(again);
    if (t.ok()) Say("accepted");
    else Say("refused %s", OneLine(t.ToString()).c_str());
    _exit(3);
  };

  if (threads == 1) {
    for (uint64_t i = 0; i < events; ++i) {
      const Event e = gen.Next();
      Status s = eng->Apply(e);
      if (!s.ok()) report_failure(s, e);
      Say("acked %llu %llu", static_cast<unsigned long long>(eng->durable_seq()),
          static_cast<unsigned long long>(eng->last_seq()));
    }
  } else {
    // Each thread owns jobs in one leaf and allocates/releases them.
    const char* leaves[] = {"root/eng/dev", "root/sci/a", "root/eng/prod", "root/sci/b"};
    std::vector<std::vector<JobRef>> refs(threads);
    for (int t = 0; t < threads; ++t)
      for (int k = 0; k < 8; ++k) {
        JobSpec j;
        j.name = std::to_string(t);
        j.name.insert(0, 1, 't');
        j.name += "-j";
        j.name += std::to_string(k);
        j.queue = leaves[t % 4];
        j.user = std::to_string(k % 3);
        j.user.insert(0, 1, 'u');
        j.tasks = 50;
        j.task = {{"cpu", 100}};
        auto r = eng->Submit(j);
        if (!r.ok()) Die(r.status().ToString());
        refs[t].push_back(*r);
      }
    std::atomic<bool> failed{false};
    std::vector<std::thread> workers;
    const uint64_t per_thread = events / static_cast<uint64_t>(threads);
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        Rng rng(seed * 1000 + static_cast<uint64_t>(t));
        for (uint64_t i = 0; i < per_thread && !failed.load(); ++i) {
          JobRef j = refs[t][rng.Uniform(0, 7)];
          Status s = rng.Chance(55) ? eng->Allocate(j, 1) : eng->Release(j, 1);
          if (s.ok()) {
            Say("acked %llu %llu", static_cast<unsigned long long>(eng->durable_seq()),
                static_cast<unsigned long long>(eng->last_seq()));
          } else if (s.code() == StatusCode::kOutOfRange) {
            continue;  // nothing to release / no room: refused, not logged
          } else if (!failed.exchange(true)) {
            report_failure(s, Event::Allocate(j.seq, 1));
          }
        }
      });
    for (auto& w : workers) w.join();
  }
  const std::string digest = eng->DigestHex();
  const unsigned long long last = eng->last_seq();
  if (close) {
    Status s = eng->Close();
    if (!s.ok()) Die("close: " + s.ToString());
    Say("closed %llu %s", last, digest.c_str());
    return 0;
  }
  Say("done %llu %s", last, digest.c_str());
  if (hold_ms) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  _exit(0);  // no Close: what is in the store is what a crash leaves
}
