// The connection handling of `hdrf serve` for a hostile network (issue 26,
// docs/tools.md "hdrf serve"): cpp-httplib's server with its connection loop
// replaced.
//
// httplib 0.11 gives each connection to one of a fixed pool of threads and
// keeps it there while it waits for a request, byte by byte, with a timeout
// per read: eight clients sending a byte a second, or a few hundred idle
// connections, hold every thread and everyone else waits. GuardedServer
// instead
//   - runs each connection on a thread of its own (ConnectionLimits::
//     max_connections at most; beyond that a connection is answered 503 by
//     the accepting thread and closed);
//   - caps the connections of one client address (per_client) and of all
//     clients together (max_connections): a new connection over a cap closes
//     the oldest connection that is only waiting (for a request, or in the
//     middle of one's head) instead of being refused, so idle or slow
//     connections cannot lock a client out; when every connection over the
//     cap is busy answering, the new one gets 503;
//   - bounds time: a request's line and headers must arrive within
//     head_seconds of its first byte, a kept-alive connection is closed after
//     idle_seconds without a request, a response must be taken within
//     write_seconds, a request (head and body) is at most max_request_bytes.
// Range requests are not served: the Range header is dropped and the whole
// body sent with 200 (RFC 9110 lets a server ignore Range), so overlapping
// ranges cannot multiply a body. Brotli is not offered (a client's "br" in
// Accept-Encoding is dropped): httplib compresses at quality 11, seconds of
// CPU per answer; gzip stays.
#ifndef HDRF_TOOLS_SERVE_CONN_H_
#define HDRF_TOOLS_SERVE_CONN_H_

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <memory>

namespace hdrf::tools {

struct ConnectionLimits {
  size_t max_connections = 256;
  size_t per_client = 32;
  double head_seconds = 5;
  double idle_seconds = 5;
  double write_seconds = 10;
  size_t requests_per_connection = 100;
  size_t max_request_bytes = 64 * 1024;
};

class ConnectionTable;

// What GuardedServer does to every request before it is routed: drops the
// Range header (and the ranges httplib parsed from it) and "br" from
// Accept-Encoding (above). tests/fuzz/serve_fuzz.cc calls it as the server
// does.
void PrepareRequest(httplib::Request& req);

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(const ConnectionLimits& limits = {});
  ~GuardedServer() override;

  // After bind_to_port: widens the listening socket's backlog from
  // httplib's 5 (compiled into Debian's library), with which a burst of
  // connections loses SYNs and each lost one waits a second to retry.
  bool WidenBacklog();

 private:
  // httplib calls this (a private virtual of httplib::Server) for each
  // accepted socket, on the thread the task queue gives it.
  bool process_and_close_socket(int sock) override;

  const ConnectionLimits limits_;
  const std::unique_ptr<ConnectionTable> table_;
};

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_CONN_H_
