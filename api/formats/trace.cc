// The binary trace format (docs/trace.md) and the trace generator.
#include "hdrf/trace.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include <xxhash.h>

namespace hdrf {

const char* TraceEventTypeName(TraceEventType t) {
  if (static_cast<uint8_t>(t) > static_cast<uint8_t>(TraceEventType::kRemove)) return "?";
  return EventTypeName(ToEventType(t));
}

// ---- byte order and XXH64 ------------------------------------------------------

namespace {

// Little-endian loads (the format's byte order).
inline uint64_t Load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
inline uint32_t Load32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

}  // namespace

uint64_t TraceChecksum(const void* data, size_t len, uint64_t seed) {
  // libxxhash reads its input as little-endian on every host, as the
  // format requires (tests/tools/trace_test.cc TraceChecksum.IsXxh64).
  return XXH64(data, len, seed);
}

// ---- validation ----------------------------------------------------------------

size_t TraceSetupEvents(const Trace& trace) {
  size_t i = 0;
  while (i < trace.events.size() && trace.events[i].type == TraceEventType::kSubmit) ++i;
  return i;
}

namespace {

// Per-job life while validating: not yet submitted, live, removed.
enum : uint8_t { kUnsubmitted = 0, kLive = 1, kRemoved = 2 };

// Checks event `index` (0-based) against `life`; `where` describes it.
inline Status CheckEvent(const TraceEvent& e, size_t index, std::vector<uint8_t>& life,
                         const std::string& where_prefix, uint64_t offset, bool with_offset) {
  auto fail = [&](const std::string& what) {
    std::string w = where_prefix + "event " + std::to_string(index + 1);
    if (with_offset) w += " at offset " + std::to_string(offset);
    return Status::Corruption(w + ": " + what);
  };
  uint8_t t = static_cast<uint8_t>(e.type);
  if (t > static_cast<uint8_t>(TraceEventType::kRemove))
    return fail("unknown event type " + std::to_string(t));
  if (e.job >= life.size())
    return fail("job index " + std::to_string(e.job) + " out of range (" +
                std::to_string(life.size()) + " jobs)");
  uint8_t& l = life[e.job];
  switch (e.type) {
    case TraceEventType::kSubmit:
      if (e.n != 0) return fail("submit with n = " + std::to_string(e.n) + " (must be 0)");
      if (l != kUnsubmitted) return fail("job index " + std::to_string(e.job) + " submitted twice");
      l = kLive;
      break;
    case TraceEventType::kRemove:
      if (e.n != 0) return fail("remove with n = " + std::to_string(e.n) + " (must be 0)");
      if (l != kLive) return fail("remove of job index " + std::to_string(e.job) + " that is not live");
      l = kRemoved;
      break;
    default:
      if (e.n == 0 || e.n > kMaxTraceEventN)
        return fail(std::string(TraceEventTypeName(e.type)) + " with n = " + std::to_string(e.n) +
                    " (must be 1.." + std::to_string(kMaxTraceEventN) + ")");
      if (l != kLive)
        return fail(std::string(TraceEventTypeName(e.type)) + " of job index " +
                    std::to_string(e.job) + (l == kUnsubmitted ? " before its submission" : " after its removal"));
  }
  return Status::Ok();
}

Status CheckAmountNames(const ResourceAmounts& a, const std::string& what) {
  for (const auto& [name, v] : a) {
    if (name.empty()) return Status::InvalidArgument(what + ": empty resource name");
    if (v < 0) return Status::InvalidArgument(what + ": negative amount of " + name);
  }
  return Status::Ok();
}

}  // namespace

Status ValidateTrace(const Trace& trace) {
  if (trace.jobs.size() > UINT32_MAX) return Status::InvalidArgument("trace: more than 2^32-1 jobs");
  HDRF_RETURN_IF_ERROR(CheckAmountNames(trace.cluster, "trace cluster"));
  for (const auto& q : trace.queues) {
    HDRF_RETURN_IF_ERROR(CheckAmountNames(q.capability, "trace queue " + q.path));
    HDRF_RETURN_IF_ERROR(CheckAmountNames(q.guarantee, "trace queue " + q.path));
  }
  for (const auto& j : trace.jobs) HDRF_RETURN_IF_ERROR(CheckAmountNames(j.task, "trace job " + j.name));
  std::vector<uint8_t> life(trace.jobs.size(), kUnsubmitted);
  for (size_t i = 0; i < trace.events.size(); ++i) {
    Status s = CheckEvent(trace.events[i], i, life, "trace: ", 0, false);
    if (!s.ok()) return Status::InvalidArgument(s.message());
  }
  return Status::Ok();
}

// ---- encoding ------------------------------------------------------------------

namespace {

constexpr size_t kPrefixBytes = 32;  // magic, version, flags, H, E

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_->push_back(static_cast<char>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_->push_back(static_cast<char>(v >> (8 * i)));
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_->append(s);
  }

 private:
  std::string* out_;
};

// Resource name -> index in the trace's resource table.
using ResourceIndex = std::map<std::string, uint32_t, std::less<>>;

void PutAmounts(Writer& w, const ResourceAmounts& a, const ResourceIndex& index) {
  w.U32(static_cast<uint32_t>(a.size()));
  for (const auto& [name, v] : a) {
    w.U32(index.at(name));
    w.I64(v);
  }
}

inline void PutRecord(char* p, const TraceEvent& e) {
  uint32_t job = e.job;
  uint32_t word = static_cast<uint32_t>(e.type) | (e.n << 8);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(job >> (8 * i));
  for (int i = 0; i < 4; ++i) p[4 + i] = static_cast<char>(word >> (8 * i));
}

void PutU64At(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

}  // namespace

namespace {

// Streams the file image of a validated trace to `sink(data, size)`, which
// returns a Status; the events go out in checksum blocks.
template <typename Sink>
Status EncodeTo(const Trace& trace, Sink&& sink) {
  // Resource table: every name used anywhere, sorted.
  ResourceIndex index;
  auto collect = [&](const ResourceAmounts& a) {
    for (const auto& kv : a) index.emplace(kv.first, 0);
  };
  collect(trace.cluster);
  for (const auto& q : trace.queues) {
    collect(q.capability);
    collect(q.guarantee);
  }
  for (const auto& j : trace.jobs) collect(j.task);
  uint32_t next = 0;
  for (auto& kv : index) kv.second = next++;

  std::string body;
  Writer w(&body);
  w.U32(static_cast<uint32_t>(index.size()));
  for (const auto& kv : index) w.Str(kv.first);
  PutAmounts(w, trace.cluster, index);
  w.U32(static_cast<uint32_t>(trace.queues.size()));
  for (const auto& q : trace.queues) {
    w.Str(q.path);
    w.F64(q.weight);
    PutAmounts(w, q.capability, index);
    PutAmounts(w, q.guarantee, index);
    w.U8(q.reclaimable ? 1 : 0);
    w.U8(static_cast<uint8_t>(q.state));
    w.U8(q.user_limit_factor.has_value() ? 1 : 0);
    w.U8(0);
    w.I32(q.min_user_limit_percent);
    w.F64(q.user_limit_factor.value_or(0.0));
  }
  w.U32(static_cast<uint32_t>(trace.jobs.size()));
  for (const auto& j : trace.jobs) {
    w.Str(j.name);
    w.Str(j.queue);
    w.Str(j.user);
    w.I64(j.tasks);
    PutAmounts(w, j.task, index);
    w.F64(j.weight);
    w.I64(j.min_available);
  }

  const uint64_t E = trace.events.size();
  const uint64_t K = (E + kTraceBlockEvents - 1) / kTraceBlockEvents;
  std::string head;
  head.reserve(kPrefixBytes + body.size() + 8);
  head.append(kTraceMagic, 8);
  Writer p(&head);
  p.U32(kTraceVersion);
  p.U32(0);  // flags
  p.U64(body.size());
  p.U64(E);
  head.append(body);
  body.clear();
  body.shrink_to_fit();
  p.U64(TraceChecksum(head.data(), head.size(), 0));
  HDRF_RETURN_IF_ERROR(sink(head.data(), head.size()));

  std::vector<char> block(8 * std::min<uint64_t>(E, kTraceBlockEvents));
  std::vector<char> table(8 * K + 8);
  for (uint64_t b = 0; b < K; ++b) {
    const uint64_t first = b * kTraceBlockEvents, count = std::min(kTraceBlockEvents, E - first);
    for (uint64_t i = 0; i < count; ++i) PutRecord(block.data() + 8 * i, trace.events[first + i]);
    PutU64At(table.data() + 8 * b, TraceChecksum(block.data(), 8 * count, b));
    HDRF_RETURN_IF_ERROR(sink(block.data(), 8 * count));
  }
  PutU64At(table.data() + 8 * K, TraceChecksum(table.data(), 8 * K, 0));
  return sink(table.data(), table.size());
}

}  // namespace

StatusOr<std::string> EncodeTrace(const Trace& trace) {
  HDRF_RETURN_IF_ERROR(ValidateTrace(trace));
  std::string out;
  HDRF_RETURN_IF_ERROR(EncodeTo(trace, [&](const char* data, size_t size) {
    out.append(data, size);
    return Status::Ok();
  }));
  return out;
}

// ---- decoding ------------------------------------------------------------------

namespace {

// Bounds-checked reading of the header body; errors name the offset.
class Reader {
 public:
  Reader(const unsigned char* base, size_t begin, size_t end, const std::string& name)
      : base_(base), pos_(begin), end_(end), name_(name) {}
  size_t pos() const { return pos_; }
  Status Fail(const std::string& what) const {
    return Status::Corruption(name_ + ": corrupt header at offset " + std::to_string(pos_) + ": " + what);
  }
  Status Need(size_t n, const char* what) const {
    if (end_ - pos_ < n)
      return Fail(std::string(what) + " runs past the end of the header (needs " + std::to_string(n) +
                  " bytes, " + std::to_string(end_ - pos_) + " left)");
    return Status::Ok();
  }
  Status U8(uint8_t* v, const char* what) {
    HDRF_RETURN_IF_ERROR(Need(1, what));
    *v = base_[pos_++];
    return Status::Ok();
  }
  Status U32(uint32_t* v, const char* what) {
    HDRF_RETURN_IF_ERROR(Need(4, what));
    *v = Load32(base_ + pos_);
    pos_ += 4;
    return Status::Ok();
  }
  Status U64(uint64_t* v, const char* what) {
    HDRF_RETURN_IF_ERROR(Need(8, what));
    *v = Load64(base_ + pos_);
    pos_ += 8;
    return Status::Ok();
  }
  Status I64(int64_t* v, const char* what) {
    uint64_t u = 0;
    HDRF_RETURN_IF_ERROR(U64(&u, what));
    *v = static_cast<int64_t>(u);
    return Status::Ok();
  }
  Status F64(double* v, const char* what) {
    uint64_t u = 0;
    HDRF_RETURN_IF_ERROR(U64(&u, what));
    *v = std::bit_cast<double>(u);
    return Status::Ok();
  }
  Status Str(std::string* s, const char* what) {
    uint32_t n;
    HDRF_RETURN_IF_ERROR(U32(&n, what));
    HDRF_RETURN_IF_ERROR(Need(n, what));
    s->assign(reinterpret_cast<const char*>(base_ + pos_), n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  const unsigned char* base_;
  size_t pos_, end_;
  const std::string& name_;
};

Status GetAmounts(Reader& r, const std::vector<std::string>& names, ResourceAmounts* out,
                  const char* what) {
  uint32_t n;
  HDRF_RETURN_IF_ERROR(r.U32(&n, what));
  if (n > names.size())
    return r.Fail(std::string(what) + ": " + std::to_string(n) + " amounts but " +
                  std::to_string(names.size()) + " resources");
  for (uint32_t i = 0; i < n; ++i) {
    size_t at = r.pos();
    uint32_t idx;
    int64_t v;
    HDRF_RETURN_IF_ERROR(r.U32(&idx, what));
    HDRF_RETURN_IF_ERROR(r.I64(&v, what));
    if (idx >= names.size())
      return r.Fail(std::string(what) + ": resource index " + std::to_string(idx) + " (at offset " +
                    std::to_string(at) + ") out of range (" + std::to_string(names.size()) +
                    " resources)");
    if (v < 0) return r.Fail(std::string(what) + ": negative amount of " + names[idx]);
    if (!out->emplace(names[idx], v).second)
      return r.Fail(std::string(what) + ": resource " + names[idx] + " listed twice");
  }
  return Status::Ok();
}

std::string Range(uint64_t a, uint64_t b) { return std::to_string(a) + ".." + std::to_string(b); }

}  // namespace

StatusOr<Trace> DecodeTrace(const void* data, size_t size, const std::string& name) {
  const unsigned char* base = static_cast<const unsigned char*>(data);
  auto corrupt = [&](const std::string& m) { return Status::Corruption(name + ": " + m); };
  if (size < 8 || std::memcmp(base, kTraceMagic, 8) != 0) {
    if (size < 8 && (size == 0 || std::memcmp(base, kTraceMagic, size) == 0))
      return corrupt("truncated at offset " + std::to_string(size) + ": the file ends inside the magic");
    return corrupt("not an hdrf trace (bad magic at offset 0, expected \"HDRFTRC1\")");
  }
  if (size < kPrefixBytes)
    return corrupt("truncated at offset " + std::to_string(size) + ": the file ends inside the " +
                   std::to_string(kPrefixBytes) + "-byte prefix");
  uint32_t version = Load32(base + 8);
  if (version != kTraceVersion)
    return corrupt("unsupported version " + std::to_string(version) + " at offset 8 (this build reads " +
                   std::to_string(kTraceVersion) + ")");
  uint32_t flags = Load32(base + 12);
  const uint64_t H = Load64(base + 16);
  const uint64_t E = Load64(base + 24);
  if (H > size - kPrefixBytes || size - kPrefixBytes - H < 8)
    return corrupt("truncated at offset " + std::to_string(size) + ": the header length " +
                   std::to_string(H) + " (at offset 16) runs past the end of the file");
  const uint64_t hsum_at = kPrefixBytes + H;
  uint64_t want = Load64(base + hsum_at), got = TraceChecksum(base, hsum_at, 0);
  if (want != got)
    return corrupt("header checksum mismatch: bytes " + Range(0, hsum_at) +
                   " do not match the checksum at offset " + std::to_string(hsum_at));
  if (flags != 0) return corrupt("unknown flags " + std::to_string(flags) + " at offset 12");
  const uint64_t events_at = hsum_at + 8;
  if (E > (size - events_at) / 8)
    return corrupt("truncated at offset " + std::to_string(size) + ": the header announces " +
                   std::to_string(E) + " events (" + std::to_string(8 * E) + " bytes from offset " +
                   std::to_string(events_at) + ")");
  const uint64_t K = (E + kTraceBlockEvents - 1) / kTraceBlockEvents;
  const uint64_t table_at = events_at + 8 * E;
  const uint64_t expect = table_at + 8 * K + 8;
  if (size < expect)
    return corrupt("truncated at offset " + std::to_string(size) + ": expected " + std::to_string(expect) +
                   " bytes (" + std::to_string(E) + " events and " + std::to_string(K) +
                   " block checksums)");
  if (size > expect)
    return corrupt(std::to_string(size - expect) + " unexpected bytes after offset " + std::to_string(expect));
  if (Load64(base + table_at + 8 * K) != TraceChecksum(base + table_at, 8 * K, 0))
    return corrupt("block checksum table (bytes " + Range(table_at, table_at + 8 * K) +
                   ") does not match its checksum at offset " + std::to_string(table_at + 8 * K));

  Trace trace;
  Reader r(base, kPrefixBytes, hsum_at, name);
  uint32_t R;
  HDRF_RETURN_IF_ERROR(r.U32(&R, "resource count"));
  std::vector<std::string> names(R);
  for (uint32_t i = 0; i < R; ++i) {
    size_t at = r.pos();
    HDRF_RETURN_IF_ERROR(r.Str(&names[i], "resource name"));
    if (names[i].empty() || (i > 0 && names[i] <= names[i - 1]))
      return Status::Corruption(name + ": corrupt header at offset " + std::to_string(at) +
                                ": resource names must be non-empty, sorted and unique");
  }
  HDRF_RETURN_IF_ERROR(GetAmounts(r, names, &trace.cluster, "cluster"));
  uint32_t Q;
  HDRF_RETURN_IF_ERROR(r.U32(&Q, "queue count"));
  HDRF_RETURN_IF_ERROR(r.Need(size_t{Q} * 36, "queue table"));  // 36: the smallest queue
  trace.queues.resize(Q);
  for (auto& q : trace.queues) {
    HDRF_RETURN_IF_ERROR(r.Str(&q.path, "queue path"));
    HDRF_RETURN_IF_ERROR(r.F64(&q.weight, "queue weight"));
    HDRF_RETURN_IF_ERROR(GetAmounts(r, names, &q.capability, "queue capability"));
    HDRF_RETURN_IF_ERROR(GetAmounts(r, names, &q.guarantee, "queue guarantee"));
    uint8_t recl, state, has_ulf, pad;
    HDRF_RETURN_IF_ERROR(r.U8(&recl, "queue reclaimable"));
    HDRF_RETURN_IF_ERROR(r.U8(&state, "queue state"));
    HDRF_RETURN_IF_ERROR(r.U8(&has_ulf, "queue flags"));
    HDRF_RETURN_IF_ERROR(r.U8(&pad, "queue flags"));
    uint32_t mulp;
    HDRF_RETURN_IF_ERROR(r.U32(&mulp, "queue minUserLimitPercent"));
    double ulf;
    HDRF_RETURN_IF_ERROR(r.F64(&ulf, "queue userLimitFactor"));
    if (recl > 1 || state > 2 || has_ulf > 1 || pad != 0)
      return r.Fail("queue " + q.path + ": bad flag byte");
    q.reclaimable = recl == 1;
    q.state = static_cast<QueueState>(state);
    q.min_user_limit_percent = static_cast<int32_t>(mulp);
    if (has_ulf) q.user_limit_factor = ulf;
  }
  uint32_t J;
  HDRF_RETURN_IF_ERROR(r.U32(&J, "job count"));
  HDRF_RETURN_IF_ERROR(r.Need(size_t{J} * 40, "job table"));  // 40: the smallest job
  trace.jobs.resize(J);
  for (auto& j : trace.jobs) {
    HDRF_RETURN_IF_ERROR(r.Str(&j.name, "job name"));
    HDRF_RETURN_IF_ERROR(r.Str(&j.queue, "job queue"));
    HDRF_RETURN_IF_ERROR(r.Str(&j.user, "job user"));
    HDRF_RETURN_IF_ERROR(r.I64(&j.tasks, "job tasks"));
    HDRF_RETURN_IF_ERROR(GetAmounts(r, names, &j.task, "job task shape"));
    HDRF_RETURN_IF_ERROR(r.F64(&j.weight, "job weight"));
    HDRF_RETURN_IF_ERROR(r.I64(&j.min_available, "job minAvailable"));
  }
  if (r.pos() != hsum_at)
    return r.Fail(std::to_string(hsum_at - r.pos()) + " bytes left over after the job table");

  // Events: one pass per checksum block: verify, decode, validate.
  trace.events.resize(E);
  std::vector<uint8_t> life(J, kUnsubmitted);
  const std::string prefix = name + ": ";
  for (uint64_t b = 0; b < K; ++b) {
    const uint64_t first = b * kTraceBlockEvents, count = std::min(kTraceBlockEvents, E - first);
    const unsigned char* blk = base + events_at + 8 * first;
    if (Load64(base + table_at + 8 * b) != TraceChecksum(blk, 8 * count, b))
      return corrupt("event block " + std::to_string(b) + " (events " + Range(first + 1, first + count) +
                     ", bytes " + Range(events_at + 8 * first, events_at + 8 * (first + count)) +
                     ") does not match its checksum at offset " + std::to_string(table_at + 8 * b));
    TraceEvent* out = trace.events.data() + first;
    for (uint64_t i = 0; i < count; ++i) {
      const unsigned char* p = blk + 8 * i;
      uint32_t word = Load32(p + 4);
      TraceEvent& e = out[i];
      e.job = Load32(p);
      e.type = static_cast<TraceEventType>(word & 0xff);
      e.n = word >> 8;
      // Fast path for the common case; the full check names the problem.
      if (e.job < J && life[e.job] == kLive && e.n != 0 &&
          static_cast<uint8_t>(e.type) <= static_cast<uint8_t>(TraceEventType::kFinish))
        continue;
      HDRF_RETURN_IF_ERROR(CheckEvent(e, first + i, life, prefix, events_at + 8 * (first + i), true));
    }
  }
  return trace;
}

// ---- files -----------------------------------------------------------------------

Status WriteTrace(const Trace& trace, const std::string& path) {
  HDRF_RETURN_IF_ERROR(ValidateTrace(trace));
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("trace " + tmp + ": cannot create: " + std::strerror(errno));
  uint64_t offset = 0;
  Status s = EncodeTo(trace, [&](const char* data, size_t size) {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return Status::IoError("trace " + tmp + ": write failed at offset " + std::to_string(offset + done) +
                               ": " + std::strerror(n < 0 ? errno : ENOSPC));
      done += static_cast<size_t>(n);
    }
    offset += size;
    return Status::Ok();
  });
  if (::close(fd) != 0 && s.ok()) s = Status::IoError("trace " + tmp + ": close failed: " + std::strerror(errno));
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = Status::IoError("trace " + path + ": rename failed: " + std::strerror(errno));
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

StatusOr<Trace> ReadTrace(const std::string& path) {
  const std::string name = "trace " + path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(name + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::IoError(name + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(name + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return DecodeTrace("", 0, name);
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int map_err = errno;
  ::close(fd);
  if (map == MAP_FAILED) return Status::IoError(name + ": cannot map: " + std::strerror(map_err));
  ::madvise(map, size, MADV_SEQUENTIAL);
  StatusOr<Trace> t = DecodeTrace(map, size, name);
  ::munmap(map, size);
  return t;
}

// ---- generator -------------------------------------------------------------------

namespace {

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = SplitMix64(seed);
  }
  uint64_t Next() {
    uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, bound), bound >= 1 (multiply-shift; the bias is < 2^-40).
  uint64_t Below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * bound) >> 64);
  }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }

 private:
  uint64_t s_[4];
};

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

// Resource order: sorted names, as the engine indexes them.
enum { kCpu = 0, kMemory = 1, kGpu = 2, kPods = 3, kR = 4 };
const char* const kResourceNames[kR] = {"cpu", "memory", "nvidia.com/gpu", "pods"};
// Task amounts are multiples of these granules, so a capacity in whole
// granules can be used up exactly (saturated) and one off by half a granule
// never is.
const int64_t kGranule[kR] = {250, 512 * kMi, 1000, 1000};

}  // namespace

StatusOr<Trace> GenerateTrace(const TraceGenOptions& o, TraceGenState* state) {
  if (o.jobs < 0 || o.jobs > UINT32_MAX)
    return Status::InvalidArgument("trace gen: --jobs must be in 0..4294967295");
  if (o.depth < 0 || o.depth > 16) return Status::InvalidArgument("trace gen: --depth must be in 0..16");
  if (o.fanout < 1) return Status::InvalidArgument("trace gen: --fanout must be >= 1");
  if (o.events < 0) return Status::InvalidArgument("trace gen: --events must be >= 0");
  if (o.events > 0 && o.jobs == 0) return Status::InvalidArgument("trace gen: events need --jobs >= 1");
  if (o.max_tasks < 1 || o.max_tasks > kMaxTraceEventN)
    return Status::InvalidArgument("trace gen: --max-tasks must be in 1.." + std::to_string(kMaxTraceEventN));
  if (o.alloc_percent < 0 || o.alloc_percent > 100)
    return Status::InvalidArgument("trace gen: --alloc-percent must be in 0..100");
  if (o.users < 0) return Status::InvalidArgument("trace gen: --users must be >= 0");
  if (!(o.load >= 0) || o.load > 100) return Status::InvalidArgument("trace gen: --load must be in (0, 100]");
  uint64_t leaves = 1, queues = 0;
  for (int d = 0; d < o.depth; ++d) {
    leaves *= static_cast<uint64_t>(o.fanout);
    queues += leaves;
    if (leaves > 10000000)
      return Status::InvalidArgument("trace gen: --fanout^--depth exceeds 10^7 leaf queues");
  }

  Rng rng(o.seed);
  Trace t;
  // Queue tree, depth-first so parents precede children; weights 1..10.
  std::vector<std::string> leaf_paths;
  leaf_paths.reserve(leaves);
  t.queues.reserve(queues);
  {
    std::vector<std::string> level = {"root"};
    for (int d = 0; d < o.depth; ++d) {
      std::vector<std::string> next;
      next.reserve(level.size() * static_cast<size_t>(o.fanout));
      for (const auto& parent : level)
        for (int c = 0; c < o.fanout; ++c) next.push_back(parent + "/q" + std::to_string(c));
      level = std::move(next);
    }
    leaf_paths = std::move(level);
    // Emit every queue in path (depth-first) order with a weight.
    std::function<void(const std::string&, int)> walk = [&](const std::string& p, int d) {
      if (d == o.depth) return;
      for (int c = 0; c < o.fanout; ++c) {
        QueueSpec q;
        q.path = p + "/q" + std::to_string(c);
        q.weight = static_cast<double>(rng.Between(1, 10));
        std::string path = q.path;
        t.queues.push_back(std::move(q));
        walk(path, d + 1);
      }
    };
    walk("root", 0);
  }

  // Jobs.
  const int64_t N = o.jobs;
  const int64_t users = o.users > 0 ? o.users : std::clamp<int64_t>(N / 100, 4, 1000);
  size_t width = 1;
  for (int64_t x = std::max<int64_t>(N - 1, 1); x >= 10; x /= 10) ++width;
  std::vector<int64_t> shape(static_cast<size_t>(N) * kR);
  std::vector<int64_t> tasks(static_cast<size_t>(N));
  __int128 demand[kR] = {0, 0, 0, 0};
  int64_t max_task[kR] = {0, 0, 0, 0};
  t.jobs.resize(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) {
    JobSpec& j = t.jobs[static_cast<size_t>(i)];
    std::string digits = std::to_string(i);
    j.name.reserve(1 + std::max<size_t>(digits.size(), width));
    j.name = "j";
    j.name.append(std::max<size_t>(digits.size(), width) - digits.size(), '0');
    j.name += digits;
    j.queue = leaf_paths[rng.Below(leaf_paths.size())];
    j.user = "u" + std::to_string(rng.Below(static_cast<uint64_t>(users)));
    j.tasks = rng.Between(1, o.max_tasks);
    int64_t* s = &shape[static_cast<size_t>(i) * kR];
    uint64_t kind = rng.Below(100);
    if (kind < 55) {  // cpu batch
      s[kCpu] = 250 * rng.Between(1, 16);
      s[kMemory] = 512 * kMi * rng.Between(1, 32);
    } else if (kind < 80) {  // memory-heavy service
      s[kCpu] = 500 * rng.Between(1, 4);
      s[kMemory] = kGi * rng.Between(4, 64);
    } else {  // gpu training
      s[kGpu] = 1000 * (int64_t{1} << rng.Below(4));  // 1, 2, 4 or 8 GPUs
      s[kCpu] = 1000 * rng.Between(2, 16);
      s[kMemory] = 4 * kGi * rng.Between(2, 32);
    }
    s[kPods] = 1000;
    for (int r = 0; r < kR; ++r) {
      if (s[r] > 0) j.task[kResourceNames[r]] = s[r];
      demand[r] += static_cast<__int128>(s[r]) * j.tasks;
      max_task[r] = std::max(max_task[r], s[r]);
    }
    tasks[static_cast<size_t>(i)] = j.tasks;
  }

  // Cluster: load x demand per resource, at least the largest task.
  // - Default: cpu, memory and GPUs get whole granules plus half a granule,
  //   so they come close to full and allocations hit the limits, yet free
  //   never drops to exactly 0: no resource is ever saturated (SPEC §4), the
  //   plain ingest case. Pods get the full demand (never the limit).
  // - `saturate`: whole granules; pods (one per task, needed by every job)
  //   and GPUs get `load`, cpu and memory 0.3 more so that they rarely bind.
  const double load = o.load > 0 ? o.load : (o.saturate ? 0.45 : 0.6);
  int64_t cap[kR];
  for (int r = 0; r < kR; ++r) {
    double f = load;
    if (o.saturate && (r == kCpu || r == kMemory)) f = load + 0.3;
    if (!o.saturate && r == kPods) f = std::max(1.0, load);
    const int64_t permille = std::max<int64_t>(1, std::llround(f * 1000));
    __int128 c = demand[r] * permille / 1000;
    if (demand[r] == 0) c = 8 * kGranule[r];
    c = std::max<__int128>(c, max_task[r]);
    c -= c % kGranule[r];
    if (c > INT64_MAX / 4) c = INT64_MAX / 4 - (INT64_MAX / 4) % kGranule[r];
    if (!o.saturate && r != kPods) c += kGranule[r] / 2;
    cap[r] = static_cast<int64_t>(c);
    t.cluster[kResourceNames[r]] = cap[r];
  }

  // Events: N submissions, then E task events.
  t.events.reserve(static_cast<size_t>(N + o.events));
  for (int64_t i = 0; i < N; ++i)
    t.events.push_back({TraceEventType::kSubmit, static_cast<uint32_t>(i), 0});
  std::vector<int64_t> alloc(static_cast<size_t>(N), 0);
  std::vector<uint32_t> active, pos(static_cast<size_t>(N), UINT32_MAX);  // jobs with alloc > 0
  int64_t used[kR] = {0, 0, 0, 0};
  int64_t allocates = 0, releases = 0, refits = 0, saturated = 0, flips = 0;
  unsigned sat_mask = 0;
  // n per event: 1 three times in four, else 2..min(8, limit).
  auto pick_n = [&](int64_t limit) -> int64_t {
    if (limit <= 1 || (rng.Next() & 3) != 0) return 1;
    return rng.Between(2, std::min<int64_t>(8, limit));
  };
  auto apply = [&](uint32_t j, int64_t n) {  // n < 0: release
    const int64_t* s = &shape[size_t{j} * kR];
    for (int r = 0; r < kR; ++r) used[r] += n * s[r];
    int64_t before = alloc[j];
    alloc[j] += n;
    if (before == 0 && alloc[j] > 0) {
      pos[j] = static_cast<uint32_t>(active.size());
      active.push_back(j);
    } else if (before > 0 && alloc[j] == 0) {
      uint32_t last = active.back();
      active[pos[j]] = last;
      pos[last] = pos[j];
      active.pop_back();
      pos[j] = UINT32_MAX;
    }
  };
  const uint64_t alloc_percent = static_cast<uint64_t>(
      o.alloc_percent > 0 ? o.alloc_percent : 60);
  auto fits = [&](uint32_t j, int64_t n) {  // how many of n tasks fit
    const int64_t* s = &shape[size_t{j} * kR];
    for (int r = 0; r < kR; ++r)
      if (s[r] > 0) n = std::min(n, (cap[r] - used[r]) / s[r]);
    return n;
  };
  auto emit = [&](TraceEventType type, uint32_t j, int64_t n) {
    t.events.push_back({type, j, static_cast<uint32_t>(n)});
    if (type == TraceEventType::kAllocate) {
      apply(j, n);
      ++allocates;
    } else {
      apply(j, -n);
      ++releases;
    }
  };
  auto random_active = [&]() -> StatusOr<uint32_t> {
    if (active.empty()) return Status::Internal("trace gen: a task fits nowhere in an empty cluster");
    return active[rng.Below(active.size())];
  };
  // With `saturate`: a ramp (allocate whenever a job has room) until pods
  // first run out, then full use: release one task while pods are saturated,
  // else allocate one task of a job it fits.
  bool full = false;
  for (int64_t k = 0; k < o.events; ++k) {
    if (full) {
      if (used[kPods] == cap[kPods]) {
        HDRF_ASSIGN_OR_RETURN(uint32_t j, random_active());
        emit(TraceEventType::kRelease, j, 1);
      } else {
        bool done = false;
        for (int tries = 0; tries < 16 && !done; ++tries) {
          uint32_t j = static_cast<uint32_t>(rng.Below(static_cast<uint64_t>(N)));
          if (alloc[j] < tasks[j] && fits(j, 1) == 1) {
            emit(TraceEventType::kAllocate, j, 1);
            done = true;
          }
        }
        if (!done) {
          ++refits;
          HDRF_ASSIGN_OR_RETURN(uint32_t j, random_active());
          emit(TraceEventType::kRelease, j, 1);
        }
      }
    } else {
      uint32_t j = static_cast<uint32_t>(rng.Below(static_cast<uint64_t>(N)));
      int64_t a = alloc[j], n_tasks = tasks[j];
      bool want_alloc = a == 0 ? true
                        : a == n_tasks ? false
                        : o.saturate   ? true
                                       : rng.Below(100) < alloc_percent;
      if (want_alloc) {
        int64_t n = o.saturate ? rng.Between(1, std::min<int64_t>(8, n_tasks - a)) : pick_n(n_tasks - a);
        int64_t fit = fits(j, n);
        if (fit >= 1) {
          emit(TraceEventType::kAllocate, j, fit);
        } else {
          // Does not fit: release instead, from this job or a running one.
          ++refits;
          if (a == 0) {
            HDRF_ASSIGN_OR_RETURN(j, random_active());
          }
          emit(TraceEventType::kRelease, j, pick_n(alloc[j]));
        }
      } else {
        emit(TraceEventType::kRelease, j, pick_n(a));
      }
    }
    unsigned mask = 0;
    for (int r = 0; r < kR; ++r) mask |= (used[r] == cap[r] ? 1u : 0u) << r;
    saturated += mask != 0;
    flips += mask != sat_mask;
    sat_mask = mask;
    if (o.saturate && (mask >> kPods & 1u)) full = true;
  }

  if (state) {
    state->resources.assign(kResourceNames, kResourceNames + kR);
    state->capacity.assign(cap, cap + kR);
    state->used.assign(used, used + kR);
    state->allocated = std::move(alloc);
    state->allocates = allocates;
    state->releases = releases;
    state->refits = refits;
    state->saturated = saturated;
    state->flips = flips;
    state->leaves = leaf_paths.size();
  }
  return t;
}

}  // namespace hdrf
