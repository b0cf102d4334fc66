// The binary trace format (docs/trace.md) and the trace generator.
#include "hdrf/trace.h"

#include "hdrf/input_file.h"

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
    uint32_t n = 0;
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

// Where the sections of a file image lie (docs/trace.md "Layout").
struct Sections {
  uint64_t E = 0, K = 0;  // events, checksum blocks
  uint64_t hsum_at = 0, events_at = 0, table_at = 0;
};

// Checks the prefix, the lengths and the header and table checksums.
StatusOr<Sections> CheckSections(const unsigned char* base, size_t size, const std::string& name) {
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
  Sections l;
  const uint64_t H = Load64(base + 16);
  const uint64_t E = l.E = Load64(base + 24);
  if (H > size - kPrefixBytes || size - kPrefixBytes - H < 8)
    return corrupt("truncated at offset " + std::to_string(size) + ": the header length " +
                   std::to_string(H) + " (at offset 16) runs past the end of the file");
  const uint64_t hsum_at = l.hsum_at = kPrefixBytes + H;
  uint64_t want = Load64(base + hsum_at), got = TraceChecksum(base, hsum_at, 0);
  if (want != got)
    return corrupt("header checksum mismatch: bytes " + Range(0, hsum_at) +
                   " do not match the checksum at offset " + std::to_string(hsum_at));
  if (flags != 0) return corrupt("unknown flags " + std::to_string(flags) + " at offset 12");
  const uint64_t events_at = l.events_at = hsum_at + 8;
  if (E > (size - events_at) / 8)
    return corrupt("truncated at offset " + std::to_string(size) + ": the header announces " +
                   std::to_string(E) + " events (" + std::to_string(8 * E) + " bytes from offset " +
                   std::to_string(events_at) + ")");
  const uint64_t K = l.K = (E + kTraceBlockEvents - 1) / kTraceBlockEvents;
  const uint64_t table_at = l.table_at = events_at + 8 * E;
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
  return l;
}

// The header: resources, cluster, queues and jobs.
Status DecodeHeader(const unsigned char* base, const Sections& l, const std::string& name, Trace* trace) {
  Reader r(base, kPrefixBytes, l.hsum_at, name);
  uint32_t R;
  HDRF_RETURN_IF_ERROR(r.U32(&R, "resource count"));
  HDRF_RETURN_IF_ERROR(r.Need(size_t{R} * 5, "resource table"));  // 5: the shortest name
  std::vector<std::string> names(R);
  for (uint32_t i = 0; i < R; ++i) {
    size_t at = r.pos();
    HDRF_RETURN_IF_ERROR(r.Str(&names[i], "resource name"));
    if (names[i].empty() || (i > 0 && names[i] <= names[i - 1]))
      return Status::Corruption(name + ": corrupt header at offset " + std::to_string(at) +
                                ": resource names must be non-empty, sorted and unique");
  }
  HDRF_RETURN_IF_ERROR(GetAmounts(r, names, &trace->cluster, "cluster"));
  uint32_t Q;
  HDRF_RETURN_IF_ERROR(r.U32(&Q, "queue count"));
  HDRF_RETURN_IF_ERROR(r.Need(size_t{Q} * 36, "queue table"));  // 36: the smallest queue
  trace->queues.resize(Q);
  for (auto& q : trace->queues) {
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
  trace->jobs.resize(J);
  for (auto& j : trace->jobs) {
    HDRF_RETURN_IF_ERROR(r.Str(&j.name, "job name"));
    HDRF_RETURN_IF_ERROR(r.Str(&j.queue, "job queue"));
    HDRF_RETURN_IF_ERROR(r.Str(&j.user, "job user"));
    HDRF_RETURN_IF_ERROR(r.I64(&j.tasks, "job tasks"));
    HDRF_RETURN_IF_ERROR(GetAmounts(r, names, &j.task, "job task shape"));
    HDRF_RETURN_IF_ERROR(r.F64(&j.weight, "job weight"));
    HDRF_RETURN_IF_ERROR(r.I64(&j.min_available, "job minAvailable"));
  }
  if (r.pos() != l.hsum_at)
    return r.Fail(std::to_string(l.hsum_at - r.pos()) + " bytes left over after the job table");
  return Status::Ok();
}

// The events: one pass per checksum block: verify, decode, validate.
Status DecodeEvents(const unsigned char* base, const Sections& l, const std::string& name, Trace* trace) {
  const uint64_t E = l.E, K = l.K, events_at = l.events_at, table_at = l.table_at;
  trace->events.resize(E);
  const size_t J = trace->jobs.size();
  auto corrupt = [&](const std::string& m) { return Status::Corruption(name + ": " + m); };
  std::vector<uint8_t> life(J, kUnsubmitted);
  const std::string prefix = name + ": ";
  for (uint64_t b = 0; b < K; ++b) {
    const uint64_t first = b * kTraceBlockEvents, count = std::min(kTraceBlockEvents, E - first);
    const unsigned char* blk = base + events_at + 8 * first;
    if (Load64(base + table_at + 8 * b) != TraceChecksum(blk, 8 * count, b))
      return corrupt("event block " + std::to_string(b) + " (events " + Range(first + 1, first + count) +
                     ", bytes " + Range(events_at + 8 * first, events_at + 8 * (first + count)) +
                     ") does not match its checksum at offset " + std::to_string(table_at + 8 * b));
    TraceEvent* out = trace->events.data() + first;
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
  return Status::Ok();
}

StatusOr<Trace> DecodeTrace(const void* data, size_t size, const std::string& name) {
  const unsigned char* base = static_cast<const unsigned char*>(data);
  HDRF_ASSIGN_OR_RETURN(Sections l, CheckSections(base, size, name));
  Trace trace;
  HDRF_RETURN_IF_ERROR(DecodeHeader(base, l, name, &trace));
  HDRF_RETURN_IF_ERROR(DecodeEvents(base, l, name, &trace));
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
  uint64_t file_size = 0;
  auto opened = OpenInputFile(path, &file_size);
  if (!opened.ok()) return Status(opened.status().code(), "trace " + opened.status().message());
  const int fd = *opened;
  const size_t size = static_cast<size_t>(file_size);
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

}  // namespace hdrf
