// hdrf standby --db DIR: a warm standby (docs/tools.md, docs/storage.md
// "Warm standby"). Follows the store another process writes; when that
// writer dies (its LOCK is released) it takes over as the writer with the
// state it already holds, and then holds the store until it is stopped.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "hdrf/engine.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace hdrf::tools {
namespace {

std::atomic<bool> g_standby_stop{false};
extern "C" void OnStandbySignal(int) { g_standby_stop.store(true, std::memory_order_relaxed); }

struct StandbyFlags {
  std::string db;
  std::string durability = "sync";
  uint64_t checkpoint_every = 1000000;
  uint32_t checkpoint_events_per_job = 4;
  uint32_t catch_up_ms = 5;  // closer than FollowerOptions' 20 ms (docs/storage.md "Followers")
  double status_seconds = 5;
  double wait_seconds = -1;
  bool exit_after_takeover = false;
  bool json = false;
};

void Line(bool json, const std::string& text, const std::string& json_text) {
  std::printf("%s\n", json ? json_text.c_str() : text.c_str());
  std::fflush(stdout);
}

std::string LagText(const Engine::FollowerLag& l) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "applied %llu of %llu (lag %llu events, %.3f s)",
                static_cast<unsigned long long>(l.applied_seq),
                static_cast<unsigned long long>(l.writer_seq),
                static_cast<unsigned long long>(l.events), l.seconds);
  return buf;
}

// Waits for the writer's death, reporting the lag every status_seconds;
// returns the Promote status (or FailedPrecondition when stopped first).
Status WaitAndPromote(Engine& eng, const StandbyFlags& f, Durability d) {
  const auto start = std::chrono::steady_clock::now();
  auto last_status = start;
  PromoteOptions po;
  po.durability = d;
  po.checkpoint_every = f.checkpoint_every;
  po.checkpoint_events_per_job = f.checkpoint_events_per_job;
  po.wait_ms = 50;  // in slices, so that Ctrl-C and status lines get a turn
  for (;;) {
    Status s = eng.Promote(po);
    if (s.ok() || s.message().find("still held") == std::string::npos) return s;
    const auto now = std::chrono::steady_clock::now();
    if (g_standby_stop.load()) return Status::FailedPrecondition("stopped before the writer went away");
    if (f.wait_seconds >= 0 && now - start >= std::chrono::duration<double>(f.wait_seconds)) return s;
    if (f.status_seconds > 0 && now - last_status >= std::chrono::duration<double>(f.status_seconds)) {
      last_status = now;
      const auto l = eng.follower_lag();
      Line(f.json, "standby " + f.db + ": " + LagText(l),
           "{\"state\": \"following\", \"applied_seq\": " + std::to_string(l.applied_seq) +
               ", \"writer_seq\": " + std::to_string(l.writer_seq) + ", \"lag_events\": " +
               std::to_string(l.events) + ", \"lag_seconds\": " + std::to_string(l.seconds) + "}");
    }
  }
}

}  // namespace

int CmdStandby(int argc, char** argv) {
  StandbyFlags f;
  CLI::App app{
      "Follows the store at DIR, which another process writes, and takes over as its writer\n"
      "when that process dies (its LOCK is released): nothing acknowledged is lost and the\n"
      "state is not recovered from scratch. Then holds the store as the writer until\n"
      "SIGINT/SIGTERM (it then closes it: a checkpoint), or exits at once with\n"
      "--exit-after-takeover.",
      "hdrf standby"};
  app.add_option("--db", f.db, "the store to follow and take over")->required();
  app.add_option("--durability", f.durability, "the new writer's durability: sync|async|none")
      ->capture_default_str();
  app.add_option("--checkpoint-every", f.checkpoint_every,
                 "the new writer's checkpoint interval (events; 0 = only on close), or "
                 "--checkpoint-events-per-job times the live jobs when that is more")
      ->capture_default_str()
      ->check(WholeNumber(UINT64_MAX));
  app.add_option("--checkpoint-events-per-job", f.checkpoint_events_per_job,
                 "k: the new writer's background checkpoints wait for at least k events per live "
                 "job (0 = --checkpoint-every alone; docs/storage.md \"Checkpoints\")")
      ->capture_default_str()
      ->check(WholeNumber(UINT32_MAX));
  app.add_option("--catch-up-ms", f.catch_up_ms, "how often to catch up with the writer (ms, >= 1)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 60000u));
  app.add_option("--status-seconds", f.status_seconds, "print the lag this often (0 = never)")
      ->capture_default_str()
      ->check(FiniteNumber(0, 86400));
  app.add_option("--wait-seconds", f.wait_seconds,
                 "give up (exit 1) if the writer is still alive after this long (default: wait)")
      ->check(FiniteNumber(0, 1e9));
  app.add_flag("--exit-after-takeover", f.exit_after_takeover,
               "close the store and exit 0 right after taking over");
  app.add_flag("--json", f.json, "one JSON object per line");
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "hdrf standby: %s\n", e.what());
    return 2;
  }
  auto d = ParseDurability(f.durability);
  if (!d.ok()) {
    std::fprintf(stderr, "hdrf standby: --durability: %s\n", d.status().message().c_str());
    return 2;
  }
  FollowerOptions fo;
  fo.db_path = f.db;
  fo.catch_up_interval_ms = f.catch_up_ms;
  auto opened = Engine::OpenFollower(fo);
  if (!opened.ok()) {
    std::fprintf(stderr, "hdrf standby: %s\n", opened.status().message().c_str());
    return 1;
  }
  Engine& eng = **opened;
  g_standby_stop.store(false);
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = OnStandbySignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  Line(f.json, "standby " + f.db + ": following, " + LagText(eng.follower_lag()),
       "{\"state\": \"following\", \"applied_seq\": " + std::to_string(eng.last_seq()) + "}");
  const auto t0 = std::chrono::steady_clock::now();
  Status s = WaitAndPromote(eng, f, *d);
  int rc = 0;
  if (!s.ok()) {
    std::fprintf(stderr, "hdrf standby: %s\n", s.message().c_str());
    rc = g_standby_stop.load() ? 0 : 1;
  } else {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Line(f.json,
         "standby " + f.db + ": took over as the writer at event " + std::to_string(eng.last_seq()) +
             " (digest " + eng.DigestHex() + ")",
         "{\"state\": \"writer\", \"last_seq\": " + std::to_string(eng.last_seq()) + ", \"digest\": \"" +
             eng.DigestHex() + "\", \"waited_seconds\": " + std::to_string(waited) + "}");
    while (!f.exit_after_takeover && !g_standby_stop.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Status c = eng.Close();
    if (!c.ok()) {
      std::fprintf(stderr, "hdrf standby: closing the store: %s\n", c.message().c_str());
      rc = 1;
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return rc;
}

}  // namespace hdrf::tools
