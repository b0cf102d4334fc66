// hdrf serve against a hostile network (issue 26), over real sockets to
// the real binary: Range requests that multiply a body, slow and idle
// clients, foreign Host headers (DNS rebinding), damaged stores and absurd
// flags.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/tools/serve_harness.h"
#include "tools/serve_conn.h"

namespace hdrf::tools {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using serve_test::Clock;
using serve_test::MakeStore;
using serve_test::Serve;
using serve_test::TempDir;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A TCP connection to 127.0.0.1:port (-1 when it fails).
int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// True when the server closed `fd` within `seconds` (reads until the end).
bool ClosedWithin(int fd, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  char buf[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

// Sends `request` as is on a new connection and reads the answer until the
// server closes it (the request says Connection: close); "" on failure.
std::string Raw(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  std::string out;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    char buf[65536];
    while (Clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string Get(const std::string& path, const std::string& extra_headers, const std::string& host = "localhost") {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n" + extra_headers + "\r\n";
}

std::string StatusLine(const std::string& response) { return response.substr(0, response.find("\r\n")); }
std::string Body(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

class ServeHostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NE(std::getenv("HDRF_BIN"), nullptr) << "HDRF_BIN must name the hdrf binary";
    dir_ = TempDir();
    MakeStore(dir_ + "/store");
    server_ = new Serve({"--db", dir_ + "/store", "--listen", "127.0.0.1:0"}, dir_ + "/serve.err");
    ASSERT_GT(server_->port(), 0) << server_->first_line() << server_->err();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  static int port() { return server_->port(); }

  static std::string dir_;
  static Serve* server_;
};
std::string ServeHostile::dir_;
Serve* ServeHostile::server_ = nullptr;

TEST_F(ServeHostile, RangeIsIgnoredAndTheWholeBodySentOnce) {
  const std::string plain = Raw(port(), Get("/api/queues", ""));
  ASSERT_EQ(StatusLine(plain), "HTTP/1.1 200 OK");
  const size_t size = Body(plain).size();
  ASSERT_GT(size, 1000u);
  std::string many = "bytes=0-";
  for (int i = 1; i < 400; ++i) many += ",0-";
  for (const std::string& range : {many, std::string("bytes=0-9"), std::string("bytes=-5")}) {
    const std::string r = Raw(port(), Get("/api/queues", "Range: " + range + "\r\n"));
    EXPECT_EQ(StatusLine(r), "HTTP/1.1 200 OK") << range.substr(0, 20);
    EXPECT_THAT(r, Not(HasSubstr("multipart/byteranges")));
    // The same document (its clock fields aside), once.
    json a = json::parse(Body(plain)), b = json::parse(Body(r));
    EXPECT_EQ(a["queues"], b["queues"]);
    EXPECT_LT(Body(r).size(), size + 100) << range.substr(0, 20);
  }
}

TEST_F(ServeHostile, ARangeThatDoesNotParseIs416) {
  const std::string r = Raw(port(), Get("/api/queues", "Range: bytes=x-y\r\n"));
  EXPECT_EQ(StatusLine(r), "HTTP/1.1 416 Range Not Satisfiable");
  EXPECT_EQ(json::parse(Body(r))["status"], 416);
}

TEST_F(ServeHostile, BrotliIsNotOfferedGzipIs) {
  // httplib's brotli (quality 11) took seconds of CPU per answer.
  for (const std::string& accept : {std::string("br"), std::string("gzip, deflate, br"), std::string("br;q=1, gzip")}) {
    const std::string r = Raw(port(), Get("/api/queues", "Accept-Encoding: " + accept + "\r\n"));
    EXPECT_EQ(StatusLine(r), "HTTP/1.1 200 OK") << accept;
    EXPECT_THAT(r, Not(HasSubstr("Content-Encoding: br"))) << accept;
    if (accept != "br") {
      EXPECT_THAT(r, HasSubstr("Content-Encoding: gzip")) << accept;
    }
  }
}

TEST_F(ServeHostile, ForeignHostsAreRefusedOnLoopback) {
  const std::string p = std::to_string(port());
  for (const std::string& host : std::vector<std::string>{"evil.example.com", "evil.example.com:" + p, "127.0.0.2", "localhost.evil.com",
                                 "[::2]:" + p, "localhost:" + p + "x"}) {
    const std::string r = Raw(port(), Get("/api/queues", "", host));
    EXPECT_EQ(StatusLine(r), "HTTP/1.1 421 Misdirected Request") << host;
    EXPECT_EQ(json::parse(Body(r))["error"],
              "Host '" + host +
                  "' is not served here: hdrf serve on a loopback address answers only Host localhost, "
                  "127.0.0.1 or [::1] (with or without the port), so that a web page cannot reach it under "
                  "another name (DNS rebinding)")
        << host;
  }
  for (const std::string& host : std::vector<std::string>{"localhost", "localhost:" + p, "LocalHost:" + p, "127.0.0.1", "127.0.0.1:" + p,
                                 "[::1]", "[::1]:" + p})
    EXPECT_EQ(StatusLine(Raw(port(), Get("/api/queues", "", host))), "HTTP/1.1 200 OK") << host;
  // HTTP/1.0 without a Host cannot come from a rebinding page.
  EXPECT_EQ(StatusLine(Raw(port(), "GET /metrics HTTP/1.0\r\n\r\n")), "HTTP/1.1 200 OK");
}

TEST_F(ServeHostile, SlowAndIdleClientsDoNotDelayOthers) {
  const ConnectionLimits limits;
  std::vector<int> idle, slow;
  for (int i = 0; i < 200; ++i) idle.push_back(Connect(port()));
  for (int i = 0; i < 8; ++i) slow.push_back(Connect(port()));
  for (int fd : idle) ASSERT_GE(fd, 0);
  for (int fd : slow) ASSERT_GE(fd, 0);
  // The slow ones send a request a byte at a time, a byte every 200 ms.
  std::atomic<bool> stop{false};
  std::thread drip([&] {
    const std::string req = Get("/api/queues", "X-Pad: " + std::string(200, 'a') + "\r\n");
    for (size_t i = 0; i < req.size() && !stop.load(); ++i) {
      for (int fd : slow) (void)::send(fd, req.data() + i, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  const auto t0 = Clock::now();
  for (int i = 0; i < 5; ++i) {
    const auto t = Clock::now();
    const std::string r = Raw(port(), Get("/api/queues", ""));
    EXPECT_EQ(StatusLine(r), "HTTP/1.1 200 OK") << i;
    EXPECT_LT(Since(t), 2.0) << "request " << i << " waited";
  }
  // The slow requests are cut at the head deadline (or closed earlier to
  // make room); of the idle connections, no more than one client's share
  // is still open.
  for (int fd : slow) EXPECT_TRUE(ClosedWithin(fd, limits.head_seconds + 3 - Since(t0)));
  size_t open = 0;
  for (int fd : idle) {
    char c;
    if (::recv(fd, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN) ++open;
  }
  EXPECT_LE(open, limits.per_client);
  stop.store(true);
  drip.join();
  for (int fd : idle) ::close(fd);
  for (int fd : slow) ::close(fd);
  EXPECT_EQ(StatusLine(Raw(port(), Get("/metrics", ""))), "HTTP/1.1 200 OK");
}

TEST_F(ServeHostile, AnIdleKeptAliveConnectionIsClosed) {
  const ConnectionLimits limits;
  const int fd = Connect(port());
  ASSERT_GE(fd, 0);
  const auto t0 = Clock::now();
  EXPECT_TRUE(ClosedWithin(fd, limits.idle_seconds + 3));
  EXPECT_GE(Since(t0), limits.idle_seconds - 0.5);
  ::close(fd);
}

// ---- refused at start ----

struct Refusal {
  int code;
  std::string err;
};

Refusal StartOn(const std::vector<std::string>& args, const std::string& dir) {
  Serve s(args, dir + "/refused.err");
  EXPECT_EQ(s.port(), 0) << s.first_line();
  const int code = s.Wait(20);
  return {code, s.err()};
}

std::vector<std::string> FilesEndingIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(p);
  }
  return out;
}

TEST(ServeStart, ADamagedStoreIsRefusedAsRecoverRefusesIt) {
  ASSERT_NE(std::getenv("HDRF_BIN"), nullptr);
  const std::string dir = TempDir();
  MakeStore(dir + "/store");
  ASSERT_FALSE(FilesEndingIn(dir + "/store", ".sst").empty());
  struct Damage {
    std::string name;
    // Damages the store at db; returns what the error must name.
    std::function<std::string(const std::string& db)> apply;
  };
  const std::vector<Damage> damages = {
      {"flipped", [](const std::string& db) {
         for (const std::string& f : FilesEndingIn(db, ".sst")) {
           std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
           const auto at = static_cast<std::streamoff>(fs::file_size(f) / 3);
           io.seekg(at);
           const char c = static_cast<char>(io.get() ^ 0x5a);
           io.seekp(at);
           io.put(c);
         }
         return std::string(".sst");
       }},
      {"missing-sst", [](const std::string& db) {
         const fs::path sst = FilesEndingIn(db, ".sst").front();
         fs::remove(sst);
         return sst.stem().string();
       }},
      {"missing-current", [](const std::string& db) {
         fs::remove(db + "/CURRENT");
         return std::string("CURRENT");
       }},
  };
  for (const Damage& d : damages) {
    const std::string db = dir + "/" + d.name;
    fs::copy(dir + "/store", db);
    const std::string names = d.apply(db);
    const auto recover = testing::RunCaptured(std::string(std::getenv("HDRF_BIN")) + " recover --db '" + db + "'", dir);
    ASSERT_EQ(recover.code, 1) << d.name;
    ASSERT_THAT(recover.err, HasSubstr(names)) << d.name;
    const Refusal r = StartOn({"--db", db, "--listen", "127.0.0.1:0"}, dir);
    EXPECT_EQ(r.code, 1) << d.name;
    // The same message after the command's name (up to RocksDB's own
    // detail, which names whichever damaged block it read first).
    auto ours = [](const std::string& e) {
      const std::string m = e.substr(e.find(':'));
      return m.substr(0, m.find(" (RocksDB:"));
    };
    EXPECT_EQ(ours(r.err), ours(recover.err)) << d.name;
  }
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(ServeStart, RefreshMustBeAFiniteNumberOfSecondsInRange) {
  ASSERT_NE(std::getenv("HDRF_BIN"), nullptr);
  const std::string dir = TempDir();
  MakeStore(dir + "/store");
  // The message of every float flag of the tools (tools/cli.h FiniteNumber).
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "-1", "0", "0.01", "3601", "1e9", "1x", "1e400"}) {
    const Refusal r = StartOn({"--db", dir + "/store", "--listen", "127.0.0.1:0", "--refresh", bad}, dir);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr(std::string("--refresh: '") + bad + "' is not a number in 0.05..3600"))
        << bad;
  }
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace hdrf::tools
