// hdrf serve --db DIR [--listen 127.0.0.1:9464]: Prometheus /metrics, the
// tree and Explain as JSON, and a live web page of the tree (docs/tools.md).
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "base/mutex.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/serve_conn.h"
#include "tools/serve_http.h"
#include "tools/serve_source.h"
#include "tools/serve_state.h"

namespace hdrf::tools {
namespace {

const char kHelp[] =
    "usage: hdrf serve --db DIR [--listen HOST:PORT] [--refresh SECONDS] [--history N]\n"
    "\n"
    "Serves the store at DIR over HTTP: Prometheus text metrics at /metrics\n"
    "(docs/metrics.md), the queue tree as JSON at /api/queues (part of it with\n"
    "?under=PATH&depth=N), the top-level queues' shares over time at\n"
    "/api/history, why a job is or is not next at\n"
    "/api/jobs/NAME/explain, and at / a page that shows the tree live. Prints\n"
    "\"listening on http://HOST:PORT/\" on stdout once it accepts connections.\n"
    "Ctrl-C or SIGTERM stops it (exit 0).\n"
    "  --db DIR          the store (written by an engine with a db_path, e.g.\n"
    "                    hdrf replay --db)\n"
    "  --listen H:P      where to listen (default 127.0.0.1:9464, loopback);\n"
    "                    an IPv4 or [IPv6] address or localhost; port 0 takes\n"
    "                    a free one\n"
    "  --refresh S       seconds between looks at the store and history samples\n"
    "                    (default 1; 0.05..3600)\n"
    "  --history N       samples kept for /api/history (default 600; 2..100000)\n";

struct Flags {
  std::string db;
  std::string listen = "127.0.0.1:9464";
  double refresh = 1;
  size_t history = 600;
};

// The stop request, shared by the signal thread, the refresher and main.
class Stop {
 public:
  void Request() {
    base::MutexLock lock(mu_);
    requested_ = true;
    cv_.notify_all();
  }
  bool requested() {
    base::MutexLock lock(mu_);
    return requested_;
  }
  // Waits up to `seconds`; true when a stop was requested.
  bool WaitFor(double seconds) {
    // cv_.wait_for(lock, seconds, [this] { return requested_; }), written
    // out as libstdc++ does (the analysis checks a lambda on its own).
    base::MutexLock lock(mu_);
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::ceil<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    while (!requested_)
      if (lock.WaitUntil(cv_, until) == std::cv_status::timeout) return requested_;
    return true;
  }

 private:
  base::Mutex mu_;
  std::condition_variable cv_;
  bool requested_ GUARDED_BY(mu_) = false;
};

// Takes SIGINT and SIGTERM (blocked in every thread) with sigtimedwait and
// stops `server`; returns once `done` is set.
void WaitForSignals(httplib::Server& server, Stop& stop, const std::atomic<bool>& done) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  const timespec tick{0, 50 * 1000 * 1000};
  while (!done.load()) {
    if (sigtimedwait(&set, nullptr, &tick) > 0) stop.Request();
    // The server may not be listening yet when the signal comes: stop it
    // until listen returns.
    if (stop.requested()) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

std::string UrlHost(const ListenAddress& a) {
  return a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host;
}

// Parses the flags; returns -1 to go on, else the exit code.
int ParseFlags(int argc, char** argv, Flags* f, ListenAddress* listen) {
  CLI::App app("hdrf serve", "hdrf serve");
  app.set_help_flag();  // --help prints kHelp, in the tools' form
  bool help = false;
  app.add_flag("-h,--help", help);
  app.add_option("--db", f->db);
  app.add_option("--listen", f->listen);
  // The tools' one float-flag check (tools/cli.h): CLI::Range lets NaN
  // through (every comparison with it is false), and a refresh of NaN
  // seconds made the refresher spin.
  app.add_option("--refresh", f->refresh)->check(FiniteNumber(0.05, 3600));
  app.add_option("--history", f->history)->check(CLI::Range(size_t{2}, size_t{100000}));
  try {
    app.parse(argc - 1, argv + 1);
    if (help) {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (f->db.empty()) throw CLI::RequiredError("--db");
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "hdrf serve: %s\n", e.what());
    return 2;
  }
  auto l = ParseListen(f->listen);
  if (!l.ok()) {
    std::fprintf(stderr, "hdrf serve: %s\n", l.status().message().c_str());
    return 2;
  }
  *listen = *l;
  return -1;
}

// Binds, prints the URL, serves until a signal; the exit code.
int Run(ServeState& state, const Flags& f, const ListenAddress& listen) {
  GuardedServer server;  // connection limits and timeouts (serve_conn.h)
  InstallRoutes(server, state, listen.loopback);
  // httplib's default is SO_REUSEPORT, which lets a second server bind a
  // port in use and share its connections: take SO_REUSEADDR only (a port
  // in use is refused; one in TIME_WAIT after a restart is not).
  server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  int port = listen.port;
  errno = 0;
  const bool bound = port == 0 ? (port = server.bind_to_any_port(listen.host)) > 0
                               : server.bind_to_port(listen.host, port);
  if (!bound || !server.WidenBacklog()) {
    std::fprintf(stderr, "hdrf serve: cannot listen on %s: %s\n", f.listen.c_str(),
                 errno ? std::strerror(errno) : "bind failed");
    return 1;
  }
  if (!listen.loopback)
    std::fprintf(stderr,
                 "hdrf serve: listening on %s, not a loopback address: whoever reaches it sees the tree and "
                 "job names\n",
                 f.listen.c_str());
  std::printf("listening on http://%s:%d/\n", UrlHost(listen).c_str(), port);
  std::fflush(stdout);

  Stop stop;
  std::atomic<bool> done{false};
  std::thread refresher([&] {
    while (!stop.WaitFor(f.refresh)) state.Tick();
  });
  std::thread signals([&] { WaitForSignals(server, stop, done); });
  const bool listened = server.listen_after_bind();
  done.store(true);
  stop.Request();
  signals.join();
  refresher.join();
  if (!listened) {
    std::fprintf(stderr, "hdrf serve: the listening socket failed\n");
    return 1;
  }
  std::fprintf(stderr, "hdrf serve: stopped\n");
  return 0;
}

}  // namespace

int CmdServe(int argc, char** argv) {
  Flags f;
  ListenAddress listen;
  if (int rc = ParseFlags(argc, argv, &f, &listen); rc >= 0) return rc;
  // SIGINT and SIGTERM go to WaitForSignals only: block them before any
  // thread starts (threads inherit the mask).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  auto source = ServeSource::Open(f.db);
  if (!source.ok()) {
    std::fprintf(stderr, "hdrf serve: %s\n", source.status().message().c_str());
    return 1;
  }
  ServeState state(std::move(source).value(), f.db, f.history);
  state.Tick();
  return Run(state, f, listen);
}

}  // namespace hdrf::tools
