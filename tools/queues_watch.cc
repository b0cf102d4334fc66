#include "tools/queues_watch.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "hdrf/engine.h"
#include "hdrf/metrics.h"
#include "tools/open_store.h"
#include "tools/tree_view.h"

namespace hdrf::tools {
namespace {

std::atomic<bool> g_watch_stop{false};

extern "C" void OnWatchSigint(int) { g_watch_stop.store(true, std::memory_order_relaxed); }

std::string Clock() {
  char buf[16];
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

// One frame's body, or the error. A store being written can change under
// the open (a compaction removing a file the open was about to read): try
// a few times.
// A follower (the store is being written) is kept in *kept between frames
// and only caught up, instead of loading the store again.
StatusOr<std::string> Render(const WatchOptions& o, std::string* head, std::unique_ptr<Engine>* kept) {
  Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (*kept && !(*kept)->CatchUp().ok()) kept->reset();
    auto e = *kept ? StatusOr<std::unique_ptr<Engine>>(std::move(*kept)) : OpenStoreForReading(o.db);
    if (!e.ok()) {
      last = e.status();
      // No store there, or a process holds it (its LOCK): no point in retrying now.
      if (e.status().code() == StatusCode::kNotFound || e.status().code() == StatusCode::kFailedPrecondition) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    Engine& eng = **e;
    *head = "last_seq " + std::to_string(eng.last_seq()) + ", " + std::to_string(eng.queue_count()) + " queues, " +
            std::to_string(eng.job_count()) + " jobs";
    if (eng.is_follower()) {
      char lag[64];
      std::snprintf(lag, sizeof lag, ", following a live writer (lag %.3f s)", eng.follower_lag().seconds);
      *head += lag;
    }
    std::string body = o.metrics ? MetricsText(eng, MetricsOptions{}) : FormatTree(TakeTreeSnapshot(eng), o.view);
    if (eng.is_follower()) *kept = std::move(*e);
    return body;
  }
  return last;
}

// Sleeps up to `seconds`, waking early on Ctrl-C.
void Nap(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_watch_stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

int WatchStore(const WatchOptions& o) {
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  g_watch_stop.store(false);
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = OnWatchSigint;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  int rc = 0;
  char every[32];
  std::snprintf(every, sizeof every, "%g", o.seconds);
  std::unique_ptr<Engine> follower;
  for (int64_t frame = 1; !g_watch_stop.load(); ++frame) {
    std::string head;
    auto body = Render(o, &head, &follower);
    // A store in use by a writer is waited for; anything else wrong with the
    // first look is an error.
    if (!body.ok() && frame == 1 && body.status().code() != StatusCode::kFailedPrecondition) {
      std::fprintf(stderr, "hdrf queues: %s\n", body.status().message().c_str());
      rc = 1;
      break;
    }
    std::string out = tty ? "\033[H\033[2J" : (frame > 1 ? "\n" : "");
    out += "== hdrf queues --db " + o.db + "  " + Clock() + "  refresh " + std::to_string(frame) + " every " +
           every + " s (Ctrl-C to stop)  " + (body.ok() ? head : "refresh failed") + "\n";
    out += body.ok() ? *body : body.status().message() + "\n";
    if (!body.ok() && body.status().code() == StatusCode::kFailedPrecondition)
      out += "(the store's writer holds it; the tree shows once that process closes it)\n";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (o.count > 0 && frame >= o.count) break;
    Nap(o.seconds);
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return rc;
}

}  // namespace hdrf::tools
