// libFuzzer target: the HTTP request handling of `hdrf serve` in-process,
// without sockets: httplib's request parsing and the server's routes
// (tools/serve_http.h InstallRoutes: path, query, headers such as Host and
// Range, methods, bodies) over a small store, with each request prepared as
// the server prepares it (tools/serve_conn.h PrepareRequest). The first
// byte picks a loopback server (Host checked) or not; the rest is what the
// client sends on the connection. Properties: nothing crashes or throws
// out; every response is HTTP/1.1 with a status the server means to give
// (never 500: an exception in a handler, nor 206: Range is not served); no
// connection gets more bytes than eight whole bodies (eight requests at most:
// no amplification).
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <httplib.h>

#include "hdrf/engine.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/serve_conn.h"
#include "tools/serve_http.h"
#include "tools/serve_page.h"
#include "tools/serve_source.h"
#include "tools/serve_state.h"

namespace {

// The client's bytes in, the server's bytes out.
class MemoryStream : public httplib::Stream {
 public:
  MemoryStream(const char* in, size_t n) : in_(in), left_(n) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = size < left_ ? size : left_;
    std::memcpy(ptr, in_, n);
    in_ += n;
    left_ -= n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 9464;
  }
  socket_t socket() const override { return -1; }
  const std::string& out() const { return out_; }

 private:
  const char* in_;
  size_t left_;
  std::string out_;
};

class FuzzServer : public httplib::Server {
 public:
  // One connection: requests until the input ends or the server closes.
  void Serve(MemoryStream& strm) {
    for (int i = 0; i < 8; ++i) {
      bool closed = false;
      if (!process_request(strm, false, closed, [](httplib::Request& req) { hdrf::tools::PrepareRequest(req); }) ||
          closed)
        break;
    }
  }
};

struct World {
  std::string dir;
  std::unique_ptr<hdrf::tools::ServeState> state;
  FuzzServer loopback, open;
  size_t largest_body = 0;
};

struct World;
World* g_world = nullptr;  // destroyed at exit

// A store with a few queues and jobs, served by a follower (as hdrf serve).
World* MakeWorld() {
  auto* w = new World;
  char tmpl[] = "/tmp/hdrf-serve-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) hdrf::fuzz::Fail("mkdtemp");
  w->dir = tmpl;
  const std::string db = w->dir + "/db";
  {
    hdrf::EngineOptions o;
    o.db_path = db;
    std::vector<hdrf::QueueSpec> qs(3);
    qs[0].path = "root/eng";
    qs[1].path = "root/eng/dev";
    qs[2].path = "root/sci";
    auto e = hdrf::Engine::Create({{"cpu", 64000}, {"memory", int64_t{256} << 30}}, qs, o);
    if (!e.ok()) hdrf::fuzz::Fail("creating the store");
    for (int i = 0; i < 6; ++i) {
      hdrf::JobSpec j;
      j.name = "job-" + std::to_string(i);
      j.queue = i % 2 ? "root/eng/dev" : "root/sci";
      j.tasks = 3;
      j.task = {{"cpu", 1000}};
      if (!(*e)->Submit(j).ok()) hdrf::fuzz::Fail("submitting");
    }
    (void)(*e)->Step();
    if (!(*e)->Close().ok()) hdrf::fuzz::Fail("closing the store");
  }
  auto source = hdrf::tools::ServeSource::Open(db);
  if (!source.ok()) hdrf::fuzz::Fail("opening the source");
  w->state = std::make_unique<hdrf::tools::ServeState>(std::move(source).value(), db, 4);
  w->state->Tick();
  w->state->Tick();
  hdrf::tools::InstallRoutes(w->loopback, *w->state, true);
  hdrf::tools::InstallRoutes(w->open, *w->state, false);
  // The largest whole body a request can ask for (the page, the metrics,
  // the whole tree, the history), with room for headers and chunking.
  auto q = w->state->Queues();
  w->largest_body = std::max({std::strlen(hdrf::tools::ServePageHtml()), w->state->Metrics().size(),
                              q.ok() ? q->dump().size() : size_t{0}, w->state->History().dump().size()});
  // At exit, before RocksDB's statics go: the follower's threads stop, then
  // the store goes.
  g_world = w;
  std::atexit([] {
    const std::string dir = g_world->dir;
    delete g_world;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
  return w;
}

World& TheWorld() {
  static World* w = MakeWorld();
  return *w;
}

bool Known(int status) {
  switch (status) {
    case 100:  // Expect: 100-continue, before the answer
    // A Range header httplib cannot parse ("bytes=0-,.0-") is answered 416
    // by httplib before the server sees the request (PrepareRequest drops
    // only well-formed ones): an error, no body, nothing amplified.
    case 416:
    case 200: case 400: case 404: case 405: case 413: case 414: case 417: case 421: case 431:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  World& w = TheWorld();
  MemoryStream strm(reinterpret_cast<const char*>(data) + 1, size - 1);
  ((data[0] & 1) ? w.loopback : w.open).Serve(strm);
  const std::string& out = strm.out();
  // Each response: "HTTP/1.1 NNN ...".
  size_t at = 0, responses = 0;
  while ((at = out.find("HTTP/1.1 ", at)) != std::string::npos) {
    if (at != 0 && out.compare(at - 2, 2, "\r\n") != 0) {
      at += 9;  // inside a body
      continue;
    }
    const int status = std::atoi(out.c_str() + at + 9);
    if (status == 500) {
      std::fprintf(stderr, "%s\n", out.substr(at, 400).c_str());
      hdrf::fuzz::Fail("a handler threw (status 500)");
    }
    if (status == 206) hdrf::fuzz::Fail("a range was served (206)");
    if (!Known(status)) {
      std::fprintf(stderr, "%s\n", out.substr(at, 400).c_str());
      hdrf::fuzz::Fail("an unexpected status");
    }
    ++responses;
    at += 9;
  }
  if (!out.empty() && out.rfind("HTTP/1.1 ", 0) != 0) hdrf::fuzz::Fail("the output does not start with a status line");
  if (out.size() > 8 * (w.largest_body + 4096)) hdrf::fuzz::Fail("more bytes out than eight whole bodies");
  return 0;
}
