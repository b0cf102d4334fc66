#include "tools/serve_conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"

namespace hdrf::tools {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// poll() for `events` until `deadline`; true when the socket is ready (or
// hung up: the next read or write says so).
bool PollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000 * 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// The numeric address and port of a socket's peer (or its own end).
void AddressOf(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ip.clear();
  port = 0;
  if ((peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
            : ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
    return;
  char buf[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
    port = ntohs(v6->sin6_port);
  }
  ip = buf;
}

// A socket stream with deadlines: reads end at the request's head deadline,
// writes at the response's, and a request reads at most max_request_bytes.
class GuardedStream : public httplib::Stream {
 public:
  GuardedStream(int fd, const ConnectionLimits& limits) : fd_(fd), limits_(limits) {}

  // True when a request starts (bytes are buffered or arrive) within
  // idle_seconds.
  bool WaitForRequest() {
    return off_ < len_ || PollUntil(fd_, POLLIN, After(limits_.idle_seconds));
  }
  void StartRequest() {
    read_deadline_ = After(limits_.head_seconds);
    write_deadline_ = After(limits_.head_seconds + limits_.write_seconds);  // for errors in the head
    read_bytes_ = 0;
  }
  void StartResponse() { write_deadline_ = After(limits_.write_seconds); }

  bool is_readable() const override { return off_ < len_ || PollUntil(fd_, POLLIN, read_deadline_); }
  bool is_writable() const override { return PollUntil(fd_, POLLOUT, write_deadline_); }
  ssize_t read(char* ptr, size_t size) override {
    if (off_ == len_) {
      if (read_bytes_ >= limits_.max_request_bytes || !is_readable()) {
        cut_ = true;
        return -1;
      }
      const ssize_t n = ::recv(fd_, buf_.data(), buf_.size(), 0);
      if (n <= 0) return n;
      off_ = 0;
      len_ = static_cast<size_t>(n);
      read_bytes_ += len_;
    }
    const size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buf_.data() + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    return ::send(fd_, ptr, size, MSG_NOSIGNAL);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { AddressOf(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { AddressOf(fd_, false, ip, port); }
  int socket() const override { return fd_; }

  // True once a read was refused (head deadline, request size): the
  // connection ends after the answer to it (httplib's 400).
  bool cut() const { return cut_; }

 private:
  const int fd_;
  const ConnectionLimits& limits_;
  std::array<char, 4096> buf_{};
  size_t off_ = 0, len_ = 0;
  size_t read_bytes_ = 0;
  bool cut_ = false;
  Clock::time_point read_deadline_ = Clock::now(), write_deadline_ = Clock::now();
};

// Set on the accepting thread while it runs a connection it has no thread
// for: the connection is answered 503 and closed.
thread_local bool t_no_thread = false;

void Refuse(int fd, const std::string& why) {
  const std::string body = "{\"error\":\"" + why + "\",\"status\":503}\n";
  const std::string head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                           "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n";
  const std::string all = head + body;
  (void)::send(fd, all.data(), all.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// httplib prefers brotli when a client accepts it (browsers do) and
// compresses at quality 11: 1 s of CPU for 150 KB of JSON, 40 s for a tree
// of 10^4 queues. The answers are gzip or plain instead.
void DropBrotli(httplib::Request& req) {
  auto it = req.headers.find("Accept-Encoding");
  if (it == req.headers.end()) return;
  std::string kept;
  size_t start = 0;
  const std::string& v = it->second;
  while (start <= v.size()) {
    size_t end = v.find(',', start);
    if (end == std::string::npos) end = v.size();
    std::string token = v.substr(start, end - start);
    token.erase(0, token.find_first_not_of(' '));
    if (!token.empty() && token.rfind("br", 0) != 0) kept += (kept.empty() ? "" : ", ") + token;
    start = end + 1;
  }
  it->second = kept;
}

}  // namespace

void PrepareRequest(httplib::Request& req) {
  // Range is not served (serve_conn.h): the whole body, status 200.
  req.ranges.clear();
  req.headers.erase("Range");
  DropBrotli(req);
}

// Every connection being served: its client, what it is doing and since
// when; closes waiting connections to make room (see serve_conn.h).
class ConnectionTable {
 public:
  enum class State { kWaiting, kAnswering };

  explicit ConnectionTable(const ConnectionLimits& limits) : limits_(limits) {}

  // Registers `fd` of `client`; "" when admitted, else why not.
  std::string Admit(int fd, const std::string& client) {
    base::MutexLock lock(mu_);
    if (stopping_) return "the server is stopping";
    auto mine = clients_.find(client);
    if (mine != clients_.end() && mine->second >= limits_.per_client && !EvictOldest(&client))
      return "too many connections from " + client + " (" + std::to_string(limits_.per_client) + ")";
    if (live_ >= limits_.max_connections && !EvictOldest(nullptr))
      return "too many connections (" + std::to_string(limits_.max_connections) + ")";
    conns_[fd] = Entry{client, State::kWaiting, Clock::now(), false};
    ++clients_[client];
    ++live_;
    return "";
  }
  // False once the server stops or the connection was evicted (then it
  // ends): a connection that starts waiting after Stop() is not left waiting.
  bool Set(int fd, State s) {
    base::MutexLock lock(mu_);
    Entry& e = conns_.at(fd);
    e.state = s;
    e.since = Clock::now();
    return !stopping_ && !e.evicted;
  }
  // Forgets `fd`; the caller closes it after this.
  void Remove(int fd) {
    base::MutexLock lock(mu_);
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    if (!it->second.evicted) Forget(it->second);
    conns_.erase(it);
  }
  // No new connections; the waiting ones are closed.
  void Stop() {
    base::MutexLock lock(mu_);
    stopping_ = true;
    for (auto& [fd, e] : conns_)
      if (e.state == State::kWaiting && !e.evicted) Evict(fd, e);
  }
  bool stopping() {
    base::MutexLock lock(mu_);
    return stopping_;
  }

 private:
  struct Entry {
    std::string client;
    State state;
    Clock::time_point since;
    bool evicted;
  };

  void Forget(const Entry& e) REQUIRES(mu_) {
    if (--clients_[e.client] == 0) clients_.erase(e.client);
    --live_;
  }
  // Shuts `fd` down (its thread sees the end and closes it) and stops
  // counting it.
  void Evict(int fd, Entry& e) REQUIRES(mu_) {
    ::shutdown(fd, SHUT_RDWR);
    e.evicted = true;
    Forget(e);
  }
  // Evicts the connection waiting longest (of `client` when not null).
  bool EvictOldest(const std::string* client) REQUIRES(mu_) {
    std::pair<const int, Entry>* oldest = nullptr;
    for (auto& kv : conns_) {
      const Entry& e = kv.second;
      if (e.evicted || e.state != State::kWaiting || (client && e.client != *client)) continue;
      if (!oldest || e.since < oldest->second.since) oldest = &kv;
    }
    if (!oldest) return false;
    Evict(oldest->first, oldest->second);
    return true;
  }

  const ConnectionLimits& limits_;
  mutable base::Mutex mu_;
  std::unordered_map<int, Entry> conns_ GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> clients_ GUARDED_BY(mu_);  // live connections per client
  size_t live_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
};

namespace {

// A thread per connection, at most `max` at once; a connection beyond runs
// on the accepting thread with t_no_thread set (answered 503 at once).
class ConnectionThreads : public httplib::TaskQueue {
 public:
  ConnectionThreads(size_t max, ConnectionTable* table) : max_(max), table_(table) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    Reap();
    base::MutexLock lock(mu_);
    if (threads_.size() >= max_) {
      lock.Unlock();
      t_no_thread = true;
      fn();
      t_no_thread = false;
      return;
    }
    const uint64_t id = next_++;
    threads_.emplace(id, std::thread([this, id, fn = std::move(fn)] {
                       fn();
                       base::MutexLock l(mu_);
                       done_.push_back(id);
                       cv_.notify_all();
                     }));
  }
  void shutdown() override {
    table_->Stop();
    base::MutexLock lock(mu_);
    while (done_.size() != threads_.size()) lock.Wait(cv_);
    lock.Unlock();
    Reap();
  }

 private:
  void Reap() {
    std::vector<std::thread> finished;
    {
      base::MutexLock lock(mu_);
      for (uint64_t id : done_) {
        auto it = threads_.find(id);
        finished.push_back(std::move(it->second));
        threads_.erase(it);
      }
      done_.clear();
    }
    for (std::thread& t : finished) t.join();
  }

  const size_t max_;
  ConnectionTable* const table_;
  base::Mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, std::thread> threads_ GUARDED_BY(mu_);
  std::vector<uint64_t> done_ GUARDED_BY(mu_);  // finished, not joined yet
  uint64_t next_ GUARDED_BY(mu_) = 0;
};

}  // namespace

GuardedServer::GuardedServer(const ConnectionLimits& limits)
    : limits_(limits), table_(std::make_unique<ConnectionTable>(limits_)) {
  // Room for the connections admitted plus those being admitted (each
  // admission may close an older one, whose thread then ends).
  const size_t threads = limits_.max_connections + 64;
  ConnectionTable* table = table_.get();
  new_task_queue = [threads, table] { return new ConnectionThreads(threads, table); };
  set_payload_max_length(limits_.max_request_bytes);
  // Only for the Keep-Alive header httplib writes: the loop is ours.
  set_keep_alive_max_count(limits_.requests_per_connection);
  set_keep_alive_timeout(static_cast<time_t>(limits_.idle_seconds));
}

GuardedServer::~GuardedServer() = default;

bool GuardedServer::WidenBacklog() { return ::listen(svr_sock_, SOMAXCONN) == 0; }


bool GuardedServer::process_and_close_socket(int sock) {
  std::string client;
  int port = 0;
  AddressOf(sock, true, client, port);
  const std::string refused = t_no_thread ? "too many connections" : table_->Admit(sock, client);
  if (!refused.empty()) {
    Refuse(sock, refused);
    ::close(sock);
    return false;
  }
  GuardedStream strm(sock, limits_);
  bool ok = true;
  for (size_t left = limits_.requests_per_connection; left > 0; --left) {
    if (!table_->Set(sock, ConnectionTable::State::kWaiting) || !strm.WaitForRequest()) break;
    strm.StartRequest();
    bool closed = false;
    ok = process_request(strm, left == 1 || table_->stopping(), closed, [&](httplib::Request& req) {
      table_->Set(sock, ConnectionTable::State::kAnswering);
      strm.StartResponse();
      PrepareRequest(req);
    });
    if (!ok || closed || strm.cut()) break;
  }
  table_->Remove(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace hdrf::tools
