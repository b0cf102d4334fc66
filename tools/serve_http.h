// The HTTP side of `hdrf serve` (cpp-httplib): the listen address and the
// routes (docs/tools.md "hdrf serve").
#ifndef HDRF_TOOLS_SERVE_HTTP_H_
#define HDRF_TOOLS_SERVE_HTTP_H_

#include <string>
#include <string_view>

#include <httplib.h>

#include "hdrf/status.h"
#include "tools/serve_state.h"

namespace hdrf::tools {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 address (no brackets), or "localhost"
  int port = 0;      // 0: any free port
  bool loopback = true;
};

// "127.0.0.1:9464", "[::1]:9464", "localhost:0", "0.0.0.0:9464". The error
// names the text and what is wrong with it.
StatusOr<ListenAddress> ParseListen(std::string_view text);

// Longest job name /api/jobs/NAME/explain looks up.
inline constexpr size_t kMaxJobNameBytes = 1024;

// Why a request's Host header is refused by a server on a loopback address
// ("" when it is served): only localhost, 127.0.0.1 and [::1], with or
// without a port, or no Host at all. A DNS rebinding page reaches the server
// under its own host name, which is refused (421).
std::string BadLoopbackHost(const httplib::Request& req);

// GET (and HEAD) /, /metrics, /api/queues, /api/history,
// /api/jobs/NAME/explain; 404 for other paths, 405 for other methods on
// these; JSON error bodies {"error": "..."}. With `loopback`, requests for
// other hosts are refused first (BadLoopbackHost).
void InstallRoutes(httplib::Server& server, const ServeState& state, bool loopback);

}  // namespace hdrf::tools

#endif  // HDRF_TOOLS_SERVE_HTTP_H_
