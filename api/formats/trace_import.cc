// CSV / JSONL event files to traces (api/trace_import.h, docs/trace.md
// "Importing events").
//
// Both syntaxes produce the same Record per line (a value per known field);
// one Importer turns records into the trace, so a CSV file and a JSONL file
// holding the same events give the same trace, byte for byte.
#include "hdrf/trace_import.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "hdrf/engine.h"
#include "api/formats/text_lines.h"

namespace hdrf {
namespace {

// ---- fields ------------------------------------------------------------------------

enum Field : int {
  kEvent, kJob, kQueue, kUser, kTasks, kN, kTask, kWeight, kMinAvailable, kCapability,
  kGuarantee, kReclaimable, kState, kMinUserLimitPercent, kUserLimitFactor, kCapacity, kTime,
  kFieldCount
};

constexpr const char* kFieldNames[kFieldCount] = {
    "event",     "job",        "queue",       "user",  "tasks",
    "n",         "task",       "weight",      "min_available",
    "capability", "guarantee", "reclaimable", "state", "min_user_limit_percent",
    "user_limit_factor", "capacity", "time"};

int FieldOf(std::string_view name) {
  for (int i = 0; i < kFieldCount; ++i)
    if (name == kFieldNames[i]) return i;
  return -1;
}

std::string KnownFields() {
  std::string s;
  for (int i = 0; i < kFieldCount; ++i) s += (i ? ", " : "") + std::string(kFieldNames[i]);
  return s;
}

struct Value {
  enum Kind { kString, kNumber, kBool, kObject } kind = kString;
  std::string text;  // the string, the number as written, "true"/"false"
  std::vector<std::pair<std::string, std::string>> members;  // kObject: resource -> quantity text
};

struct Record {
  uint32_t line = 0;
  std::optional<Value> f[kFieldCount];
  void Clear() {
    for (auto& v : f) v.reset();
  }
};

// ---- event kinds and the fields each takes ---------------------------------------

constexpr uint32_t Bit(Field f) { return 1u << f; }

struct Kind {
  const char* name;
  uint32_t allowed;
  uint32_t required;
};
enum KindId { kSubmitK, kAllocateK, kReleaseK, kFinishK, kRemoveK, kQueueK, kClusterK, kKindCount };
constexpr Kind kKinds[kKindCount] = {
    {"submit",
     Bit(kEvent) | Bit(kJob) | Bit(kQueue) | Bit(kUser) | Bit(kTasks) | Bit(kTask) | Bit(kWeight) |
         Bit(kMinAvailable) | Bit(kTime),
     Bit(kJob) | Bit(kTask)},
    {"allocate", Bit(kEvent) | Bit(kJob) | Bit(kN) | Bit(kTime), Bit(kJob)},
    {"release", Bit(kEvent) | Bit(kJob) | Bit(kN) | Bit(kTime), Bit(kJob)},
    {"finish", Bit(kEvent) | Bit(kJob) | Bit(kN) | Bit(kTime), Bit(kJob)},
    {"remove", Bit(kEvent) | Bit(kJob) | Bit(kTime), Bit(kJob)},
    {"queue",
     Bit(kEvent) | Bit(kQueue) | Bit(kWeight) | Bit(kCapability) | Bit(kGuarantee) | Bit(kReclaimable) |
         Bit(kState) | Bit(kMinUserLimitPercent) | Bit(kUserLimitFactor) | Bit(kTime),
     Bit(kQueue)},
    {"cluster", Bit(kEvent) | Bit(kCapacity) | Bit(kTime), Bit(kCapacity)},
};

// ---- the importer ---------------------------------------------------------------------

class Importer {
 public:
  Importer(const std::string& name, const TraceImportOptions& o) : name_(name), cluster_(o.cluster) {
    trace_.queues = o.queues;
  }

  Status Err(uint32_t line, const std::string& what) const {
    return Status::InvalidArgument(name_ + ":" + std::to_string(line) + ": " + what);
  }

  Status Add(const Record& r) {
    if (!r.f[kEvent])
      return Err(r.line, "no event (expected submit, allocate, release, finish, remove, queue or cluster)");
    HDRF_ASSIGN_OR_RETURN(std::string ev, Str(r, kEvent));
    int kind = -1;
    for (int k = 0; k < kKindCount; ++k)
      if (ev == kKinds[k].name) kind = k;
    if (kind < 0)
      return Err(r.line, "unknown event '" + ev +
                             "' (expected submit, allocate, release, finish, remove, queue or cluster)");
    const Kind& k = kKinds[kind];
    for (int f = 0; f < kFieldCount; ++f) {
      if (r.f[f] && !(k.allowed & (1u << f)))
        return Err(r.line, std::string("field '") + kFieldNames[f] + "' does not apply to a " + k.name + " event");
      if (!r.f[f] && (k.required & (1u << f)))
        return Err(r.line, std::string("a ") + k.name + " event needs the field '" + kFieldNames[f] + "'");
    }
    switch (kind) {
      case kQueueK:
      case kClusterK:
        if (first_job_line_)
          return Err(r.line, std::string("a ") + k.name + " event after the first job event (line " +
                                 std::to_string(first_job_line_) +
                                 "): a trace holds the queue tree and the cluster only as its starting "
                                 "state, so queue and cluster lines come first");
        return kind == kQueueK ? AddQueue(r) : AddCluster(r);
      case kSubmitK:
        if (!first_job_line_) first_job_line_ = r.line;
        return AddSubmit(r);
      default:
        if (!first_job_line_) first_job_line_ = r.line;
        return AddTask(r, static_cast<KindId>(kind));
    }
  }

  StatusOr<Trace> Finish(const TraceImportOptions& o, TraceImportStats* stats) {
    if (cluster_.empty())
      return Status::InvalidArgument(name_ + ": no cluster capacity: give a configuration with a cluster "
                                     "(--config) or a `cluster` line before the first job event");
    trace_.cluster = cluster_;
    std::string digest;
    if (o.check) HDRF_RETURN_IF_ERROR(Check(&digest));
    Status v = ValidateTrace(trace_);
    if (!v.ok()) return v.WithContext(name_);
    if (stats) {
      stats->events = trace_.events.size();
      stats->queue_lines = queue_lines_.size();
      stats->cluster_lines = cluster_line_ ? 1 : 0;
      stats->digest = digest;
    }
    return std::move(trace_);
  }

 private:
  // ---- typed field access ----
  StatusOr<std::string> Str(const Record& r, Field f) const {
    const Value& v = *r.f[f];
    if (v.kind != Value::kString)
      return Err(r.line, std::string(kFieldNames[f]) + ": expected a string, found " + v.text);
    return v.text;
  }
  StatusOr<int64_t> Int(const Record& r, Field f, int64_t lo, int64_t hi) const {
    const Value& v = *r.f[f];
    int64_t x = 0;
    const char* b = v.text.data();
    const char* e = b + v.text.size();
    auto res = std::from_chars(b, e, x);
    if ((v.kind != Value::kString && v.kind != Value::kNumber) || v.text.empty() || res.ec != std::errc() ||
        res.ptr != e)
      return Err(r.line, std::string(kFieldNames[f]) + ": '" + v.text + "' is not a whole number");
    if (x < lo || x > hi)
      return Err(r.line, std::string(kFieldNames[f]) + ": " + v.text + " is out of range " + std::to_string(lo) +
                             ".." + std::to_string(hi));
    return x;
  }
  StatusOr<double> Real(const Record& r, Field f) const {
    const Value& v = *r.f[f];
    char* end = nullptr;
    errno = 0;
    double x = v.text.empty() ? 0 : std::strtod(v.text.c_str(), &end);
    if ((v.kind != Value::kString && v.kind != Value::kNumber) || v.text.empty() ||
        end != v.text.c_str() + v.text.size() || !std::isfinite(x) || x < 0)
      return Err(r.line, std::string(kFieldNames[f]) + ": '" + v.text + "' is not a number >= 0");
    return x;
  }
  StatusOr<bool> Bool(const Record& r, Field f) const {
    const Value& v = *r.f[f];
    if ((v.kind == Value::kBool || v.kind == Value::kString) && (v.text == "true" || v.text == "false"))
      return v.text == "true";
    return Err(r.line, std::string(kFieldNames[f]) + ": '" + v.text + "' is not true or false");
  }
  // {"cpu": "500m", "memory": "1Gi"} or "cpu=500m;memory=1Gi".
  StatusOr<ResourceAmounts> Amounts(const Record& r, Field f) const {
    const Value& v = *r.f[f];
    const std::string what = kFieldNames[f];
    std::vector<std::pair<std::string, std::string>> items;
    if (v.kind == Value::kObject) {
      items = v.members;
    } else if (v.kind == Value::kString) {
      std::string_view s = v.text;
      while (!s.empty()) {
        size_t sep = s.find_first_of(";,");
        std::string_view item = s.substr(0, sep);
        s = sep == std::string_view::npos ? std::string_view() : s.substr(sep + 1);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item.empty()) continue;
        size_t eq = item.find('=');
        if (eq == std::string_view::npos)
          return Err(r.line, what + ": '" + std::string(item) + "' is not RESOURCE=QUANTITY");
        items.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
      }
    } else {
      return Err(r.line, what + ": expected resources like cpu=500m;memory=1Gi, found " + v.text);
    }
    ResourceAmounts out;
    for (const auto& [name, text] : items) {
      if (!IsKnownResourceName(name)) return Err(r.line, what + ": unknown resource '" + name + "'");
      auto q = ParseQuantity(name, text);
      if (!q.ok()) return Err(r.line, what + ": " + name + ": " + q.status().message());
      if (*q < 0) return Err(r.line, what + ": " + name + ": " + text + " is negative");
      if (!out.emplace(name, *q).second) return Err(r.line, what + ": resource '" + name + "' given twice");
    }
    if (out.empty()) return Err(r.line, what + ": no resources given");
    return out;
  }

  // ---- events ----
  Status AddQueue(const Record& r) {
    QueueSpec q;
    HDRF_ASSIGN_OR_RETURN(q.path, Str(r, kQueue));
    if (q.path.empty()) return Err(r.line, "queue: empty queue path");
    if (auto it = queue_lines_.find(q.path); it != queue_lines_.end())
      return Err(r.line, "queue " + q.path + " is defined twice (first at line " + std::to_string(it->second) + ")");
    queue_lines_.emplace(q.path, r.line);
    if (r.f[kWeight]) {
      HDRF_ASSIGN_OR_RETURN(q.weight, Real(r, kWeight));
    }
    if (r.f[kCapability]) {
      HDRF_ASSIGN_OR_RETURN(q.capability, Amounts(r, kCapability));
    }
    if (r.f[kGuarantee]) {
      HDRF_ASSIGN_OR_RETURN(q.guarantee, Amounts(r, kGuarantee));
    }
    if (r.f[kReclaimable]) {
      HDRF_ASSIGN_OR_RETURN(q.reclaimable, Bool(r, kReclaimable));
    }
    if (r.f[kState]) {
      HDRF_ASSIGN_OR_RETURN(std::string s, Str(r, kState));
      if (s == "open") q.state = QueueState::kOpen;
      else if (s == "closing") q.state = QueueState::kClosing;
      else if (s == "closed") q.state = QueueState::kClosed;
      else return Err(r.line, "state: '" + s + "' is not open, closing or closed");
    }
    if (r.f[kMinUserLimitPercent]) {
      HDRF_ASSIGN_OR_RETURN(int64_t p, Int(r, kMinUserLimitPercent, 1, 100));
      q.min_user_limit_percent = static_cast<int>(p);
    }
    if (r.f[kUserLimitFactor]) {
      HDRF_ASSIGN_OR_RETURN(double x, Real(r, kUserLimitFactor));
      if (!(x > 0)) return Err(r.line, "user_limit_factor: must be > 0");
      q.user_limit_factor = x;
    }
    q.line = static_cast<int>(r.line);
    // A queue the configuration has too is replaced.
    for (QueueSpec& old : trace_.queues) {
      if (old.path == q.path) {
        old = q;
        return Status::Ok();
      }
    }
    trace_.queues.push_back(std::move(q));
    return Status::Ok();
  }

  Status AddCluster(const Record& r) {
    if (cluster_line_)
      return Err(r.line, "a second cluster event (the first is at line " + std::to_string(cluster_line_) + ")");
    cluster_line_ = r.line;
    HDRF_ASSIGN_OR_RETURN(cluster_, Amounts(r, kCapacity));
    return Status::Ok();
  }

  Status AddSubmit(const Record& r) {
    JobSpec j;
    HDRF_ASSIGN_OR_RETURN(j.name, Str(r, kJob));
    if (j.name.empty()) return Err(r.line, "job: empty job name");
    if (auto it = alive_.find(j.name); it != alive_.end())
      return Err(r.line, "job '" + j.name + "' is already submitted (line " +
                             std::to_string(lines_[it->second.submit_event]) + ") and not removed");
    if (r.f[kQueue]) {
      HDRF_ASSIGN_OR_RETURN(j.queue, Str(r, kQueue));
    }
    if (r.f[kUser]) {
      HDRF_ASSIGN_OR_RETURN(j.user, Str(r, kUser));
      if (j.user.empty()) return Err(r.line, "user: empty user name");
    }
    if (r.f[kTasks]) {
      HDRF_ASSIGN_OR_RETURN(j.tasks, Int(r, kTasks, 1, int64_t{1} << 40));
    }
    HDRF_ASSIGN_OR_RETURN(j.task, Amounts(r, kTask));
    if (r.f[kWeight]) {
      HDRF_ASSIGN_OR_RETURN(j.weight, Real(r, kWeight));
    }
    if (r.f[kMinAvailable]) {
      HDRF_ASSIGN_OR_RETURN(j.min_available, Int(r, kMinAvailable, 1, int64_t{1} << 40));
    }
    j.line = static_cast<int>(r.line);
    const uint32_t index = static_cast<uint32_t>(trace_.jobs.size());
    alive_[j.name] = {index, static_cast<uint32_t>(trace_.events.size())};
    trace_.jobs.push_back(std::move(j));
    Push(r.line, TraceEvent{TraceEventType::kSubmit, index, 0});
    return Status::Ok();
  }

  Status AddTask(const Record& r, KindId kind) {
    HDRF_ASSIGN_OR_RETURN(std::string name, Str(r, kJob));
    auto it = alive_.find(name);
    if (it == alive_.end()) {
      auto gone = removed_.find(name);
      if (gone != removed_.end())
        return Err(r.line, "job '" + name + "' was removed at line " + std::to_string(gone->second));
      return Err(r.line, "unknown job '" + name + "' (no submit event for it before this line)");
    }
    TraceEvent e;
    e.job = it->second.index;
    switch (kind) {
      case kAllocateK: e.type = TraceEventType::kAllocate; break;
      case kReleaseK: e.type = TraceEventType::kRelease; break;
      case kFinishK: e.type = TraceEventType::kFinish; break;
      default: e.type = TraceEventType::kRemove; break;
    }
    if (kind == kRemoveK) {
      alive_.erase(it);
      removed_[name] = r.line;
    } else {
      int64_t n = 1;
      if (r.f[kN]) {
      HDRF_ASSIGN_OR_RETURN(n, Int(r, kN, 1, kMaxTraceEventN));
    }
      e.n = static_cast<uint32_t>(n);
    }
    Push(r.line, e);
    return Status::Ok();
  }

  void Push(uint32_t line, const TraceEvent& e) {
    trace_.events.push_back(e);
    lines_.push_back(line);
  }

  // Applies the trace to an in-memory engine; the first refusal names its line.
  Status Check(std::string* digest) const {
    auto eng = Engine::Create(trace_.cluster, trace_.queues);
    if (!eng.ok()) {
      std::string where;
      for (const auto& [path, line] : queue_lines_)
        if (eng.status().message().find(path) != std::string::npos) where = " (queue line " + std::to_string(line) + ")";
      return Status::InvalidArgument(name_ + ": the queues and cluster do not form a valid tree" + where + ": " +
                                     eng.status().message());
    }
    Engine& engine = **eng;
    std::vector<JobRef> refs(trace_.jobs.size());
    for (size_t i = 0; i < trace_.events.size(); ++i) {
      const TraceEvent& e = trace_.events[i];
      Status s;
      switch (e.type) {
        case TraceEventType::kSubmit: {
          auto ref = engine.Submit(trace_.jobs[e.job]);
          if (ref.ok()) refs[e.job] = *ref;
          else s = ref.status();
          break;
        }
        case TraceEventType::kAllocate: s = engine.Allocate(refs[e.job], e.n); break;
        case TraceEventType::kRelease: s = engine.Release(refs[e.job], e.n); break;
        case TraceEventType::kFinish: s = engine.Finish(refs[e.job], e.n); break;
        case TraceEventType::kRemove: s = engine.Remove(refs[e.job]); break;
      }
      if (!s.ok()) {
        std::string what = TraceEventTypeName(e.type);
        if (e.n) what += " " + std::to_string(e.n);
        return Err(lines_[i], what + " of job '" + trace_.jobs[e.job].name + "' is refused by the engine: " +
                                  s.message());
      }
    }
    *digest = engine.DigestHex();
    return Status::Ok();
  }

  struct Alive {
    uint32_t index;         // into trace_.jobs
    uint32_t submit_event;  // into trace_.events
  };
  std::string name_;
  ResourceAmounts cluster_;
  Trace trace_;
  std::vector<uint32_t> lines_;  // per event
  std::unordered_map<std::string, Alive> alive_;
  std::unordered_map<std::string, uint32_t> removed_;
  std::map<std::string, uint32_t> queue_lines_;
  uint32_t cluster_line_ = 0;
  uint32_t first_job_line_ = 0;
};

// ---- CSV -------------------------------------------------------------------------------

using text::SplitCsv;

// ---- JSONL ------------------------------------------------------------------------------

class JsonLine {
 public:
  JsonLine(std::string_view s, uint32_t line, const std::string& name) : s_(s), line_(line), name_(name) {}

  Status Parse(Record* out) {
    Ws();
    if (!Eat('{')) return Err("expected a JSON object ('{')");
    Ws();
    if (!Eat('}')) {
      for (;;) {
        Ws();
        const size_t key_at = i_;
        std::string key;
        if (Peek() != '"') return Err("expected a quoted field name");
        HDRF_RETURN_IF_ERROR(String(&key));
        int f = FieldOf(key);
        if (f < 0) return ErrAt(key_at, "unknown field '" + key + "' (known: " + KnownFields() + ")");
        Ws();
        if (!Eat(':')) return Err("expected ':' after the field name");
        Ws();
        std::optional<Value> v;
        HDRF_RETURN_IF_ERROR(ParseValue(&v, /*top=*/true));
        if (out->f[f]) return ErrAt(key_at, "field '" + key + "' given twice");
        if (v) out->f[f] = std::move(v);
        Ws();
        if (Eat(',')) continue;
        if (Eat('}')) break;
        return Err("expected ',' or '}'");
      }
    }
    Ws();
    if (i_ != s_.size()) return Err("unexpected text after the object (one JSON object per line)");
    return Status::Ok();
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c || i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  Status ErrAt(size_t at, const std::string& what) const {
    return Status::InvalidArgument(name_ + ":" + std::to_string(line_) + ": column " + std::to_string(at + 1) +
                                   ": " + what);
  }
  Status Err(const std::string& what) const { return ErrAt(i_, what); }

  // null leaves *out empty (the field is absent).
  Status ParseValue(std::optional<Value>* out, bool top) {
    Value v;
    const char c = Peek();
    if (c == '"') {
      HDRF_RETURN_IF_ERROR(String(&v.text));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::kNumber;
      HDRF_RETURN_IF_ERROR(Number(&v.text));
    } else if (s_.substr(i_, 4) == "true" || s_.substr(i_, 5) == "false") {
      v.kind = Value::kBool;
      v.text = c == 't' ? "true" : "false";
      i_ += v.text.size();
    } else if (s_.substr(i_, 4) == "null") {
      i_ += 4;
      return Status::Ok();
    } else if (c == '{' && top) {
      v.kind = Value::kObject;
      ++i_;
      Ws();
      if (!Eat('}')) {
        for (;;) {
          Ws();
          std::string key;
          if (Peek() != '"') return Err("expected a quoted resource name");
          HDRF_RETURN_IF_ERROR(String(&key));
          Ws();
          if (!Eat(':')) return Err("expected ':' after the resource name");
          Ws();
          std::optional<Value> m;
          const size_t at = i_;
          HDRF_RETURN_IF_ERROR(ParseValue(&m, /*top=*/false));
          if (!m || (m->kind != Value::kString && m->kind != Value::kNumber))
            return ErrAt(at, "resource '" + key + "': expected a quantity (\"500m\", \"1Gi\" or a number)");
          v.members.emplace_back(std::move(key), std::move(m->text));
          Ws();
          if (Eat(',')) continue;
          if (Eat('}')) break;
          return Err("expected ',' or '}' in the resource object");
        }
      }
      v.text = "an object";
    } else if (c == '[') {
      return Err("arrays are not used in this format");
    } else if (c == '{') {
      return Err("a nested object is not allowed here");
    } else {
      return Err(c ? std::string("unexpected character '") + c + "'" : "unexpected end of line");
    }
    *out = std::move(v);
    return Status::Ok();
  }

  Status Number(std::string* out) {
    const size_t start = i_;
    auto digits = [&] {
      size_t n = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_, ++n;
      return n;
    };
    Eat('-');
    if (Peek() == '0') ++i_;
    else if (digits() == 0) return ErrAt(start, "malformed number");
    if (Eat('.') && digits() == 0) return ErrAt(start, "malformed number (no digits after '.')");
    if (Peek() == 'e' || Peek() == 'E') {
      ++i_;
      if (Peek() == '+' || Peek() == '-') ++i_;
      if (digits() == 0) return ErrAt(start, "malformed number (no digits in the exponent)");
    }
    out->assign(s_.substr(start, i_ - start));
    return Status::Ok();
  }

  static void Utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool Hex4(uint32_t* cp) {
    if (i_ + 4 > s_.size()) return false;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char h = s_[i_ + k];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= h - '0';
      else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
      else return false;
    }
    i_ += 4;
    *cp = v;
    return true;
  }

  Status String(std::string* out) {
    const size_t open = i_++;
    out->clear();
    for (;;) {
      if (i_ >= s_.size()) return ErrAt(open, "the string has no closing quote");
      const char c = s_[i_++];
      if (c == '"') return Status::Ok();
      if (static_cast<unsigned char>(c) < 0x20) return ErrAt(i_ - 1, "control character inside a string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      const char e = Peek();
      ++i_;
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return ErrAt(i_ - 2, "malformed \\u escape");
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (!(Eat('\\') && Eat('u') && Hex4(&lo) && lo >= 0xDC00 && lo < 0xE000))
              return ErrAt(i_, "a high surrogate \\u escape without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return ErrAt(i_ - 6, "a lone low surrogate \\u escape");
          }
          Utf8(cp, out);
          break;
        }
        default:
          return ErrAt(i_ - 2, "unknown escape in a string");
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  uint32_t line_;
  const std::string& name_;
};

using text::ForEachLine;

}  // namespace

StatusOr<TraceImportFormat> TraceImportFormatOf(const std::string& path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".csv") || ends(".CSV")) return TraceImportFormat::kCsv;
  if (ends(".jsonl") || ends(".ndjson") || ends(".JSONL")) return TraceImportFormat::kJsonl;
  return Status::InvalidArgument(path + ": unknown event file type (expected a name ending in .csv, .jsonl or .ndjson)");
}

StatusOr<Trace> ImportTrace(std::string_view text, TraceImportFormat format, const std::string& name,
                            const TraceImportOptions& options, TraceImportStats* stats) {
  Importer imp(name, options);
  Record rec;
  size_t lines = 0;
  Status s;
  if (format == TraceImportFormat::kCsv) {
    std::vector<int> columns;  // field per column; empty until the header
    uint32_t header_line = 0;
    std::vector<std::string> cells;
    s = ForEachLine(text, &lines, [&](uint32_t number, std::string_view line) -> Status {
      if (auto bad = SplitCsv(line, &cells))
        return Status::InvalidArgument(name + ":" + std::to_string(number) + ": " + *bad);
      if (columns.empty()) {
        header_line = number;
        for (const std::string& c : cells) {
          int f = FieldOf(c);
          if (f < 0)
            return Status::InvalidArgument(name + ":" + std::to_string(number) + ": unknown column '" + c +
                                           "' in the header (known: " + KnownFields() + ")");
          for (int prev : columns)
            if (prev == f)
              return Status::InvalidArgument(name + ":" + std::to_string(number) + ": column '" + c +
                                             "' appears twice in the header");
          columns.push_back(f);
        }
        for (int f : columns)
          if (f == kEvent) return Status::Ok();
        return Status::InvalidArgument(name + ":" + std::to_string(number) +
                                       ": the header has no 'event' column (the first line that is not blank "
                                       "or a # comment is the header)");
      }
      if (cells.size() != columns.size())
        return Status::InvalidArgument(name + ":" + std::to_string(number) + ": " + std::to_string(cells.size()) +
                                       " fields, the header (line " + std::to_string(header_line) + ") has " +
                                       std::to_string(columns.size()));
      rec.Clear();
      rec.line = number;
      for (size_t c = 0; c < cells.size(); ++c) {
        if (cells[c].empty()) continue;  // absent
        Value v;
        v.text = std::move(cells[c]);
        rec.f[columns[c]] = std::move(v);
      }
      return imp.Add(rec);
    });
    if (s.ok() && columns.empty())
      s = Status::InvalidArgument(name + ": no header line (an empty file)");
  } else {
    s = ForEachLine(text, &lines, [&](uint32_t number, std::string_view line) -> Status {
      rec.Clear();
      rec.line = number;
      HDRF_RETURN_IF_ERROR(JsonLine(line, number, name).Parse(&rec));
      return imp.Add(rec);
    });
  }
  if (!s.ok()) return s;
  if (stats) stats->lines = lines;
  return imp.Finish(options, stats);
}

StatusOr<Trace> ImportTraceFile(const std::string& path, const TraceImportOptions& options,
                                TraceImportStats* stats) {
  HDRF_ASSIGN_OR_RETURN(TraceImportFormat format, TraceImportFormatOf(path));
  HDRF_ASSIGN_OR_RETURN(const std::string contents, text::ReadFile(path));
  return ImportTrace(contents, format, path, options, stats);
}

}  // namespace hdrf
