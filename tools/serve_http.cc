#include "tools/serve_http.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>
#include <regex>

#include "tools/serve_page.h"
#include "tools/tree_json.h"

namespace hdrf::tools {
namespace {

const char kJson[] = "application/json";
const char kJobPattern[] = R"(/api/jobs/(.*)/explain)";
const char* const kPaths[] = {"/", "/metrics", "/api/queues", "/api/history"};

const char* Reason(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 413: return "payload too large";
    case 414: return "URI too long";
    case 416: return "range not satisfiable";
    case 421: return "misdirected request";
    default: return status >= 500 ? "internal server error" : "error";
  }
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(DumpJson({{"error", message}, {"status", status}}) + "\n", kJson);
}

bool KnownPath(const std::string& path) {
  for (const char* p : kPaths)
    if (path == p) return true;
  static const std::regex job(kJobPattern);
  return std::regex_match(path, job);
}

// Why `name` cannot be a job name to look up ("" when it can).
std::string BadJobName(const std::string& name) {
  if (name.empty()) return "empty job name";
  if (name.size() > kMaxJobNameBytes)
    return "job name longer than " + std::to_string(kMaxJobNameBytes) + " bytes";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return "job name with a control character";
  return "";
}

}  // namespace

std::string BadLoopbackHost(const httplib::Request& req) {
  if (!req.has_header("Host")) return "";
  const std::string host = req.get_header_value("Host");
  std::string name = host;
  // Strip ":PORT" (after "]" for an IPv6 literal).
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos && (name.front() != '[' || colon > name.find(']'))) {
    const std::string port = name.substr(colon + 1);
    if (!port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos)
      name.resize(colon);
  }
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "localhost" || name == "127.0.0.1" || name == "[::1]") return "";
  return "Host '" + host +
         "' is not served here: hdrf serve on a loopback address answers only Host localhost, 127.0.0.1 or "
         "[::1] (with or without the port), so that a web page cannot reach it under another name (DNS "
         "rebinding)";
}

StatusOr<ListenAddress> ParseListen(std::string_view text) {
  const std::string what = "--listen '" + std::string(text) + "': ";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return Status::InvalidArgument(what + "expected HOST:PORT, e.g. 127.0.0.1:9464");
  std::string host(text.substr(0, colon));
  const std::string port(text.substr(colon + 1));
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']')
      return Status::InvalidArgument(what + "an IPv6 host goes in brackets, e.g. [::1]:9464");
    host = host.substr(1, host.size() - 2);
  }
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || port[0] == '-' || port[0] == '+' || p > 65535)
    return Status::InvalidArgument(what + "port '" + port + "' is not a number in 0..65535");
  ListenAddress a;
  a.host = host;
  a.port = static_cast<int>(p);
  unsigned char buf[16];
  if (host == "localhost") {
    a.loopback = true;
  } else if (inet_pton(AF_INET, host.c_str(), buf) == 1) {
    a.loopback = buf[0] == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), buf) == 1) {
    static const unsigned char kLoop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    a.loopback = std::equal(buf, buf + 16, kLoop6);
  } else {
    return Status::InvalidArgument(what + "host '" + host +
                                   "' is not an IPv4 or IPv6 address or localhost");
  }
  return a;
}

void InstallRoutes(httplib::Server& svr, const ServeState& state, bool loopback) {
  svr.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(ServePageHtml(), "text/html; charset=utf-8");
  });
  svr.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
    res.set_content(state.Metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  svr.Get("/api/queues", [&state](const httplib::Request& req, httplib::Response& res) {
    std::vector<std::string> under;
    for (size_t i = 0; i < req.get_param_value_count("under"); ++i) under.push_back(req.get_param_value("under", i));
    const std::string depth = req.get_param_value("depth"), limit = req.get_param_value("limit");
    auto filter = ParseQueueFilter(under, req.has_param("depth") ? &depth : nullptr,
                                   req.has_param("limit") ? &limit : nullptr);
    if (!filter.ok()) return SendError(res, 400, filter.status().message());
    auto j = state.Queues(*filter);
    if (!j.ok()) return SendError(res, 404, j.status().message());
    res.set_header("Cache-Control", "no-store");
    res.set_content(DumpJson(*j) + "\n", kJson);
  });
  svr.Get("/api/history", [&state](const httplib::Request& req, httplib::Response& res) {
    int64_t since = -1;
    if (req.has_param("since")) {
      const std::string text = req.get_param_value("since");
      char* end = nullptr;
      since = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || text.find_first_not_of("0123456789") != std::string::npos)
        return SendError(res, 400, "since '" + text + "' is not a time in milliseconds since the epoch");
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(DumpJson(state.History(since)) + "\n", kJson);
  });
  svr.Get(kJobPattern, [&state](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1];
    if (std::string bad = BadJobName(name); !bad.empty()) return SendError(res, 400, bad);
    auto [status, body] = state.Explain(name);
    res.status = status;
    res.set_content(body + "\n", kJson);
  });
  svr.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    SendError(res, 404, "no such path: " + req.path);
  });
  // Other methods: 405 on the paths above, 404 elsewhere. A request without
  // a body is answered before routing (httplib would wait for the body of a
  // POST that has no Content-Length); one with a body after it is read.
  auto refuse = [](const httplib::Request& req, httplib::Response& res) {
    if (!KnownPath(req.path)) return SendError(res, 404, "no such path: " + req.path);
    res.set_header("Allow", "GET, HEAD");
    SendError(res, 405, "method " + req.method + " not allowed on " + req.path + " (GET, HEAD)");
  };
  svr.set_pre_routing_handler([refuse, loopback](const httplib::Request& req, httplib::Response& res) {
    if (std::string bad = loopback ? BadLoopbackHost(req) : ""; !bad.empty()) {
      SendError(res, 421, bad);
      return httplib::Server::HandlerResponse::Handled;
    }
    const bool body = req.has_header("Transfer-Encoding") ||
                      (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    if (req.method == "GET" || req.method == "HEAD" || body) return httplib::Server::HandlerResponse::Unhandled;
    refuse(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  svr.Post(".*", refuse);
  svr.Put(".*", refuse);
  svr.Delete(".*", refuse);
  svr.Patch(".*", refuse);
  svr.Options(".*", refuse);
  // Errors httplib answers itself (a malformed request, 414, ...) get a
  // JSON body too.
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) SendError(res, res.status, Reason(res.status));
  });
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    SendError(res, 500, what);
  });
}

}  // namespace hdrf::tools
