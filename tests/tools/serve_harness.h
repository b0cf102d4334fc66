// The harness of the hdrf serve tests: the real binary (HDRF_BIN) started
// on a loopback port it picks, a client for it, a store of the sample tree.
#ifndef HDRF_TESTS_TOOLS_SERVE_HARNESS_H_
#define HDRF_TESTS_TOOLS_SERVE_HARNESS_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "hdrf/engine.h"
#include "tests/run_shell.h"
#include "tests/tools/sample_tree.h"

namespace hdrf::tools::serve_test {

using Clock = std::chrono::steady_clock;

inline std::string TempDir() {
  char tmpl[] = "/tmp/hdrf_serve_test_XXXXXX";
  return ::mkdtemp(tmpl) ? tmpl : "";
}

// Writes the sample tree into a new store at `db`.
inline void MakeStore(const std::string& db) {
  EngineOptions o;
  o.db_path = db;
  auto eng = Engine::Create(testing::SampleCluster(), testing::SampleQueues(), o);
  ASSERT_TRUE(eng.ok()) << eng.status().message();
  ASSERT_TRUE(testing::FillSample(**eng).ok());
  ASSERT_TRUE((*eng)->Close().ok());
}

inline std::unique_ptr<Engine> Recover(const std::string& db) {
  EngineOptions o;
  o.db_path = db;
  o.durability = Durability::kNone;
  auto eng = Engine::Open(o);
  EXPECT_TRUE(eng.ok()) << eng.status().message();
  return eng.ok() ? std::move(eng).value() : nullptr;
}

// A running `hdrf serve`: started with a pipe on stdout, stopped by signal.
class Serve {
 public:
  // Starts HDRF_BIN serve ARGS and waits (at most 20 s) for its
  // "listening on http://HOST:PORT/" line. port() is 0 when it did not come.
  Serve(const std::vector<std::string>& args, const std::string& err_path) : err_path_(err_path) {
    // Everything the child needs is made before fork: the test process has
    // threads (RocksDB's), so the child only calls async-signal-safe functions.
    std::vector<std::string> all = {std::getenv("HDRF_BIN"), "serve"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int out[2];
    if (err < 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);  // dup2 clears O_CLOEXEC on the copies
      ::dup2(err, 2);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
    ::close(err);
    ::close(out[1]);
    out_ = out[0];
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (line_.find('\n') == std::string::npos && Clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) break;
      line_.append(buf, static_cast<size_t>(n));
    }
    const std::string prefix = "listening on http://127.0.0.1:";
    if (line_.rfind(prefix, 0) == 0) port_ = std::atoi(line_.c_str() + prefix.size());
  }
  ~Serve() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  int port() const { return port_; }
  const std::string& first_line() const { return line_; }
  std::string err() const { return hdrf::testing::Slurp(err_path_); }
  // Sends `sig` and waits at most `seconds` for the exit; returns the exit
  // code, or -1 (then it is killed).
  int Stop(int sig, double seconds = 10) {
    ::kill(pid_, sig);
    return Wait(seconds);
  }
  int Wait(double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    int status = 0;
    while (Clock::now() < deadline) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

 private:
  std::string err_path_;
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  bool reaped_ = false;
  std::string line_;
};

inline std::unique_ptr<httplib::Client> ClientFor(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_connection_timeout(2);
  c->set_read_timeout(10);
  c->set_write_timeout(10);
  return c;
}

// Polls `done` every 20 ms for at most `seconds`.
template <typename F>
bool WaitFor(F done, double seconds = 15) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

inline std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string path = testing::RunShell(std::string("command -v ") + name + " 2>/dev/null").out;
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    if (!path.empty()) return path;
  }
  return "";
}

// Runs headless Chromium on `url` with `what` (--dump-dom or
// --screenshot=FILE), letting the page run `budget` (e.g.
// "--virtual-time-budget=3000", or "--timeout=2000" for real time); returns
// its stdout. Its log (with the page's console lines) goes to
// PROFILE/chromium.log.
inline std::string Chromium(const std::string& chromium, const std::string& profile, const std::string& url,
                            const std::string& what, const std::string& budget = "--virtual-time-budget=3000") {
  return testing::RunShell("mkdir -p '" + profile + "' && timeout 90 '" + chromium +
                           "' --headless --no-sandbox --disable-gpu " +
                           "--disable-dev-shm-usage --disable-quic --no-first-run --disable-background-networking " +
                           "--disable-component-update --disable-sync --enable-logging=stderr --v=0 --user-data-dir='" + profile +
                           "' --window-size=1280,900 " + budget + " " +
                           what + " '" + url + "' 2>'" + profile + "/chromium.log'")
      .out;
}

}  // namespace hdrf::tools::serve_test

#endif  // HDRF_TESTS_TOOLS_SERVE_HARNESS_H_
