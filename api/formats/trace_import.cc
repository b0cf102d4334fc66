// CSV / JSONL event files to traces (api/hdrf/trace_import.h, docs/trace.md
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

#include <nlohmann/json.hpp>

#include "hdrf/engine.h"
#include "api/formats/text_lines.h"
#include "hdrf/input_file.h"

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
    ResourceAmounts out;
    if (v.kind == Value::kObject) {
      for (const auto& [name, text] : v.members) {
        Status s = AddResourceQuantity(name, text, &out);
        if (!s.ok()) return Err(r.line, what + ": " + s.message());
      }
    } else if (v.kind == Value::kString) {
      ResourceListOptions o;
      o.separators = ";,";
      o.skip_empty_items = true;
      auto list = ParseResourceList(v.text, o);
      if (!list.ok()) return Err(r.line, what + ": " + list.status().message());
      out = std::move(*list);
    } else {
      return Err(r.line, what + ": expected resources like cpu=500m;memory=1Gi, found " + v.text);
    }
    if (out.empty()) return Err(r.line, what + ": no resources given");
    for (const auto& [name, amount] : out)
      if (Status s = CheckName(NameKind::kResource, name); !s.ok()) return Err(r.line, what + ": " + s.message());
    return out;
  }

  // ---- events ----
  Status AddQueue(const Record& r) {
    QueueSpec q;
    HDRF_ASSIGN_OR_RETURN(q.path, Str(r, kQueue));
    if (q.path.empty()) return Err(r.line, "queue: empty queue path");
    if (Status s = CheckQueuePath(q.path); !s.ok()) return Err(r.line, "queue: " + s.message());
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
    if (Status s = CheckName(NameKind::kJob, j.name); !s.ok()) return Err(r.line, "job: " + s.message());
    if (auto it = alive_.find(j.name); it != alive_.end())
      return Err(r.line, "job '" + j.name + "' is already submitted (line " +
                             std::to_string(lines_[it->second.submit_event]) + ") and not removed");
    if (r.f[kQueue]) {
      HDRF_ASSIGN_OR_RETURN(j.queue, Str(r, kQueue));
      if (Status s = CheckQueuePath(j.queue); !j.queue.empty() && !s.ok()) return Err(r.line, "queue: " + s.message());
    }
    if (r.f[kUser]) {
      HDRF_ASSIGN_OR_RETURN(j.user, Str(r, kUser));
      if (j.user.empty()) return Err(r.line, "user: empty user name");
      if (Status s = CheckName(NameKind::kUser, j.user); !s.ok()) return Err(r.line, "user: " + s.message());
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

// nlohmann-json's SAX parser fills a Record. The input iterator counts the
// bytes the lexer has read, so that every error can name its column: a
// field name's, a value's, or the token where the syntax breaks.
struct CountingIter {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p;
  size_t* read;
  reference operator*() const { return *p; }
  CountingIter& operator++() {
    ++p;
    ++*read;
    return *this;
  }
  CountingIter operator++(int) {
    CountingIter old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIter& o) const { return p == o.p; }
  bool operator!=(const CountingIter& o) const { return p != o.p; }
};

class JsonlParser : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonlParser(std::string_view s, uint32_t line, const std::string& name) : s_(s), line_(line), name_(name) {}

  Status Parse(Record* out) {
    out_ = out;
    const bool ok = nlohmann::json::sax_parse(CountingIter{s_.data(), &read_}, CountingIter{s_.data() + s_.size(), &read_},
                                              this, nlohmann::json::input_format_t::json, /*strict=*/true);
    if (!ok && error_.ok()) return ErrAt(Skip(0), "expected a JSON object ('{')");
    return error_;
  }

  // ---- SAX events ----
  bool null() override {
    if (depth_ == 1) return AfterValue(std::nullopt);  // null: the field is absent
    return ValueAt(read_ - 4, std::nullopt);
  }
  bool boolean(bool b) override {
    Value v;
    v.kind = Value::kBool;
    v.text = b ? "true" : "false";
    const size_t at = read_ - v.text.size();
    return ValueAt(at, std::move(v));
  }
  bool number_integer(number_integer_t x) override { return Number(std::to_string(x)); }
  bool number_unsigned(number_unsigned_t x) override { return Number(std::to_string(x)); }
  bool number_float(number_float_t, const string_t& text) override { return Number(text); }
  bool string(string_t& s) override {
    Value v;
    v.text = std::move(s);
    return ValueAt(OpeningQuote(read_), std::move(v));
  }
  bool binary(binary_t&) override { return false; }  // not produced by the JSON lexer
  bool start_object(std::size_t) override {
    last_end_ = read_;
    if (depth_ == 0) {
      depth_ = 1;
      state_ = kAfterOpen;
      return true;
    }
    if (depth_ == 2) return Fail(read_ - 1, "a nested object is not allowed here");
    depth_ = 2;
    state_ = kAfterOpen;
    object_ = Value();
    object_.kind = Value::kObject;
    object_.text = "an object";
    return true;
  }
  bool key(string_t& k) override {
    const size_t at = OpeningQuote(read_);
    state_ = kAfterKey;
    last_end_ = read_;
    if (depth_ == 2) {
      member_ = std::move(k);
      return true;
    }
    field_ = FieldOf(k);
    field_at_ = at;
    if (field_ < 0) return Fail(at, "unknown field '" + k + "' (known: " + KnownFields() + ")");
    return true;
  }
  bool end_object() override {
    last_end_ = read_;
    if (depth_ == 1) {
      depth_ = 0;
      state_ = kDone;
      return true;
    }
    depth_ = 1;
    return AfterValue(std::move(object_));
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return Fail(read_ - 1, "expected a JSON object ('{')");
    return Fail(read_ - 1, "arrays are not used in this format");
  }
  bool end_array() override { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    SyntaxError(ex.what());
    return false;
  }

 private:
  enum State { kStart, kAfterOpen, kAfterKey, kAfterValue, kDone };

  Status ErrAt(size_t at, const std::string& what) const {
    return Status::InvalidArgument(name_ + ":" + std::to_string(line_) + ": column " + std::to_string(at + 1) +
                                   ": " + what);
  }
  bool Fail(size_t at, const std::string& what) {
    error_ = ErrAt(at, what);
    return false;
  }
  // The first byte at or after `at` that is not a blank.
  size_t Skip(size_t at) const {
    while (at < s_.size() && (s_[at] == ' ' || s_[at] == '\t')) ++at;
    return at;
  }
  // The opening quote of the string that ends just before `end`.
  size_t OpeningQuote(size_t end) const {
    size_t i = end - 1;
    while (i > 0) {
      --i;
      if (s_[i] != '"') continue;
      size_t backslashes = 0;
      while (i - backslashes > 0 && s_[i - backslashes - 1] == '\\') ++backslashes;
      if (backslashes % 2 == 0) return i;
    }
    return 0;
  }

  bool Number(const std::string& text) {
    // The lexer reads one byte past a number (unless the line ends there).
    const bool at_end = read_ == s_.size() && !s_.empty() && s_.back() >= '0' && s_.back() <= '9';
    const size_t end = at_end ? read_ : read_ - 1;
    Value v;
    v.kind = Value::kNumber;
    v.text = text;
    const size_t start = end - text.size();
    read_ = end;  // the value ends here (AfterValue records it)
    const bool ok = ValueAt(start, std::move(v));
    read_ = at_end ? end : end + 1;
    return ok;
  }

  bool ValueAt(size_t at, std::optional<Value> v) {
    if (depth_ == 0) return Fail(Skip(0), "expected a JSON object ('{')");
    if (depth_ == 2) {
      if (!v || (v->kind != Value::kString && v->kind != Value::kNumber))
        return Fail(at, "resource '" + member_ + "': expected a quantity (\"500m\", \"1Gi\" or a number)");
      object_.members.emplace_back(std::move(member_), std::move(v->text));
      state_ = kAfterValue;
      last_end_ = read_;
      return true;
    }
    return AfterValue(std::move(v));
  }
  // A field's value is complete.
  bool AfterValue(std::optional<Value> v) {
    state_ = kAfterValue;
    last_end_ = read_;
    if (out_->f[field_]) return Fail(field_at_, "field '" + std::string(kFieldNames[field_]) + "' given twice");
    if (v) out_->f[field_] = std::move(v);
    return true;
  }

  // Where and what for a syntax error, from what was read last.
  void SyntaxError(const std::string& what) {
    const bool object = depth_ == 2;
    size_t at = Skip(last_end_);
    if (state_ == kAfterKey && at < s_.size() && s_[at] == ':') at = Skip(at + 1);
    else if (state_ == kAfterValue && at < s_.size() && s_[at] == ',') {
      at = Skip(at + 1);
      state_ = kAfterOpen;
    } else if (state_ == kAfterKey) {
      error_ = ErrAt(at, object ? "expected ':' after the resource name" : "expected ':' after the field name");
      return;
    }
    // A lexer error: nlohmann's message, "... - invalid string: ...; last read: ...".
    std::string lexer;
    if (size_t dash = what.find(" - "); dash != std::string::npos && what.compare(dash + 3, 11, "unexpected ") != 0) {
      lexer = what.substr(dash + 3);
      lexer = lexer.substr(0, lexer.find("; last read"));
    }
    if (state_ == kStart) {
      error_ = ErrAt(Skip(0), "expected a JSON object ('{')");
    } else if (state_ == kDone) {
      error_ = ErrAt(at, "unexpected text after the object (one JSON object per line)");
    } else if (state_ == kAfterValue) {
      error_ = ErrAt(at, object ? "expected ',' or '}' in the resource object" : "expected ',' or '}'");
    } else if (lexer.find("missing closing quote") != std::string::npos) {
      error_ = ErrAt(at, "the string has no closing quote");
    } else if (lexer.find("control character") != std::string::npos) {
      error_ = ErrAt(read_ > 0 ? read_ - 1 : 0, "control character inside a string");
    } else if (lexer.find("after backslash") != std::string::npos || lexer.find("\\u") != std::string::npos ||
               lexer.find("surrogate") != std::string::npos) {
      const size_t bs = read_ > 0 ? s_.rfind('\\', read_ - 1) : std::string_view::npos;
      error_ = ErrAt(bs == std::string_view::npos ? at : bs, lexer.find("after backslash") != std::string::npos
                                                                 ? "unknown escape in a string"
                                                                 : "malformed \\u escape (" + lexer + ")");
    } else if (state_ == kAfterOpen && (at >= s_.size() || s_[at] != '"')) {
      error_ = ErrAt(at, object ? "expected a quoted resource name" : "expected a quoted field name");
    } else if (!lexer.empty()) {
      error_ = ErrAt(at, lexer);
    } else {
      error_ = ErrAt(at, at < s_.size() ? std::string("unexpected character '") + s_[at] + "'" : "unexpected end of line");
    }
  }

  std::string_view s_;
  uint32_t line_;
  const std::string& name_;
  Record* out_ = nullptr;
  Status error_;
  size_t read_ = 0;      // bytes the lexer has read
  size_t last_end_ = 0;  // where the last complete token ended
  State state_ = kStart;
  int depth_ = 0;        // 1: the event object, 2: a resource object
  int field_ = -1;       // the field whose value comes next
  size_t field_at_ = 0;  // its name's column
  std::string member_;   // the resource whose quantity comes next
  Value object_;         // the resource object being read
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
      HDRF_RETURN_IF_ERROR(JsonlParser(line, number, name).Parse(&rec));
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
  HDRF_ASSIGN_OR_RETURN(const std::string contents, ReadInputFile(path));
  return ImportTrace(contents, format, path, options, stats);
}

}  // namespace hdrf
