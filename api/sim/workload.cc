// Workload files (docs/spec.md §13; api/hdrf/simulate.h, docs/simulate.md): CSV with
// a header, or JSONL with the same keys. Both syntaxes fill the same slots
// per line (one per known field), and one Builder turns slots into jobs, so
// a CSV file and a JSONL file with the same jobs give the same workload.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "hdrf/simulate.h"
#include "api/formats/text_lines.h"
#include "hdrf/input_file.h"

namespace hdrf {
namespace {

// Fixed fields; resources take the slots after them.
enum Slot : int { kName, kQueue, kArrival, kDuration, kUser, kTasks, kWeight, kMinAvailable, kFixedSlots };
const char* const kFixedNames[kFixedSlots] = {"name",  "queue",  "arrival", "duration",
                                              "user",  "tasks",  "weight",  "min_available"};
constexpr int64_t kMaxMs = 1000000000000000;  // 10^15 ms, about 31,700 years

using Slots = std::vector<std::optional<std::string>>;

class Fields {
 public:
  explicit Fields(const std::vector<std::string>& resources) : resources_(resources) {}
  size_t size() const { return kFixedSlots + resources_.size(); }
  // The slot of a column/key, or -1.
  int Find(std::string_view key) const {
    for (int i = 0; i < kFixedSlots; ++i)
      if (key == kFixedNames[i]) return i;
    for (size_t r = 0; r < resources_.size(); ++r)
      if (key == resources_[r]) return kFixedSlots + static_cast<int>(r);
    return -1;
  }
  std::string Name(int slot) const {
    return slot < kFixedSlots ? kFixedNames[slot] : resources_[slot - kFixedSlots];
  }
  std::string Unknown(std::string_view key) const {
    std::string known = "name, queue, arrival, duration, user, tasks, weight";
    for (const std::string& r : resources_) known += ", " + r;
    return "unknown field '" + std::string(key) + "' (not a workload field nor a cluster resource; known: " +
           known + ")";
  }

 private:
  const std::vector<std::string>& resources_;
};

// Exact decimal -> milliseconds: [+]digits[.digits][e[+-]digits].
StatusOr<int64_t> DecimalToMs(std::string_view s) {
  const std::string_view all = s;
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("'" + std::string(all) + "' " + why);
  };
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  std::string digits;  // mantissa digits, without the point
  int frac = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) digits += s[i];
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++frac) digits += s[i];
  }
  if (digits.empty()) return bad("is not a number of seconds");
  int64_t exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    const size_t start = i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
      if (exp < 100000) exp = exp * 10 + (s[i] - '0');
    if (i == start) return bad("is not a number of seconds (no digits in the exponent)");
    if (eneg) exp = -exp;
  }
  if (i != s.size()) return bad("is not a number of seconds");
  // value = digits * 10^(exp - frac) s = digits * 10^(exp - frac + 3) ms
  int64_t shift = exp - frac + 3;
  while (shift < 0 && !digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++shift;
  }
  const size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) return int64_t{0};
  digits.erase(0, nz);
  if (shift < 0) return bad("is finer than a millisecond (at most 3 decimals)");
  if (negative) return bad("is negative");
  if (static_cast<int64_t>(digits.size()) + shift > 16) return bad("is too large (at most 10^12 seconds)");
  int64_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  for (int64_t k = 0; k < shift; ++k) v *= 10;
  if (v > kMaxMs) return bad("is too large (at most 10^12 seconds)");
  return v;
}

// Turns the slots of one line into a job and checks it.
class Builder {
 public:
  Builder(const std::string& source, const std::vector<std::string>& resources, Workload* out)
      : source_(source), resources_(resources), out_(out),
        names_(16, NameHash{&out->jobs}, NameEq{&out->jobs}) {}

  Status Error(uint32_t line, const std::string& field, const std::string& what) const {
    return Status::InvalidArgument(source_ + ":" + std::to_string(line) + ": " +
                                   (field.empty() ? "" : field + ": ") + what);
  }

  Status Add(uint32_t line, Slots& slots) {
    WorkloadJob job;
    job.spec.line = static_cast<int>(line);
    for (int req : {kName, kArrival, kDuration})
      if (!slots[req] || slots[req]->empty())
        return Error(line, kFixedNames[req], "missing (name, arrival and duration are required)");
    job.spec.name = std::move(*slots[kName]);
    if (slots[kQueue]) job.spec.queue = std::move(*slots[kQueue]);
    if (slots[kUser] && !slots[kUser]->empty()) job.spec.user = std::move(*slots[kUser]);
    // Names as the engine checks them (docs/config.md "Names"), with the line.
    if (Status s = CheckName(NameKind::kJob, job.spec.name); !s.ok()) return Error(line, "name", s.message());
    if (Status s = CheckName(NameKind::kUser, job.spec.user); !s.ok()) return Error(line, "user", s.message());
    if (!job.spec.queue.empty())
      if (Status s = CheckQueuePath(job.spec.queue); !s.ok()) return Error(line, "queue", s.message());
    auto arrival = DecimalToMs(*slots[kArrival]);
    if (!arrival.ok()) return Error(line, "arrival", arrival.status().message() + " (arrival >= 0 in seconds)");
    job.arrival_ms = *arrival;
    auto duration = DecimalToMs(*slots[kDuration]);
    if (!duration.ok())
      return Error(line, "duration", duration.status().message() + " (duration > 0 in seconds)");
    if (*duration <= 0)
      return Error(line, "duration", "'" + *slots[kDuration] + "' is not above 0 (a task runs at least 1 ms)");
    job.duration_ms = *duration;
    if (slots[kTasks] && !slots[kTasks]->empty()) {
      const std::string& t = *slots[kTasks];
      int64_t v = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size() || v < 1)
        return Error(line, "tasks", "'" + t + "' is not an integer >= 1");
      job.spec.tasks = v;
    }
    if (slots[kWeight] && !slots[kWeight]->empty()) {
      const std::string& t = *slots[kWeight];
      double v = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v))
        return Error(line, "weight", "'" + t + "' is not a finite number");
      job.spec.weight = v;
    }
    if (slots[kMinAvailable] && !slots[kMinAvailable]->empty()) {  // a gang (docs/spec.md §14)
      const std::string& t = *slots[kMinAvailable];
      int64_t v = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size() || v < 1 || v > job.spec.tasks)
        return Error(line, "min_available",
                     "'" + t + "' is not an integer from 1 to the job's tasks (" + std::to_string(job.spec.tasks) + ")");
      job.spec.min_available = v;
    }
    for (size_t r = 0; r < resources_.size(); ++r) {
      const auto& cell = slots[kFixedSlots + r];
      if (!cell || cell->empty()) continue;
      auto q = ParseQuantity(resources_[r], *cell);
      if (!q.ok()) return Error(line, resources_[r], q.status().message());
      if (*q > 0) job.spec.task.emplace_hint(job.spec.task.end(), resources_[r], *q);
    }
    out_->jobs.push_back(std::move(job));
    auto [it, inserted] = names_.insert(static_cast<uint32_t>(out_->jobs.size() - 1));
    if (!inserted) {
      const WorkloadJob& first = out_->jobs[*it];
      return Error(line, "name", "job name '" + first.spec.name + "' is already used at line " +
                                     std::to_string(first.spec.line) + " (names are unique)");
    }
    return Status::Ok();
  }

 private:
  struct NameHash {
    const std::vector<WorkloadJob>* jobs;
    size_t operator()(uint32_t i) const { return std::hash<std::string>()((*jobs)[i].spec.name); }
  };
  struct NameEq {
    const std::vector<WorkloadJob>* jobs;
    bool operator()(uint32_t a, uint32_t b) const { return (*jobs)[a].spec.name == (*jobs)[b].spec.name; }
  };
  const std::string& source_;
  const std::vector<std::string>& resources_;
  Workload* out_;
  std::unordered_set<uint32_t, NameHash, NameEq> names_;
};

// ---- CSV ------------------------------------------------------------------------

Status ParseCsv(std::string_view text, const std::string& source, const Fields& fields, Builder& b) {
  std::vector<int> columns;  // slot per column; empty until the header
  uint32_t header_line = 0;
  std::vector<std::string> cells;
  Slots slots(fields.size());
  size_t lines = 0;
  HDRF_RETURN_IF_ERROR(text::ForEachLine(text, &lines, [&](uint32_t number, std::string_view line) -> Status {
    if (auto bad = text::SplitCsv(line, &cells)) return b.Error(number, "", *bad);
    if (columns.empty()) {
      header_line = number;
      for (const std::string& c : cells) {
        const int f = fields.Find(c);
        if (f < 0) return b.Error(number, "header", fields.Unknown(c));
        for (int prev : columns)
          if (prev == f) return b.Error(number, "header", "column '" + c + "' appears twice");
        columns.push_back(f);
      }
      for (int req : {kName, kQueue, kArrival, kDuration})
        if (std::find(columns.begin(), columns.end(), req) == columns.end())
          return b.Error(number, "header",
                         std::string("no '") + kFixedNames[req] +
                             "' column (name, queue, arrival and duration are required; the first line "
                             "that is not blank or a # comment is the header)");
      return Status::Ok();
    }
    if (cells.size() != columns.size())
      return b.Error(number, "", std::to_string(cells.size()) + " fields, the header (line " +
                                     std::to_string(header_line) + ") has " + std::to_string(columns.size()));
    for (auto& s : slots) s.reset();
    for (size_t c = 0; c < cells.size(); ++c) slots[columns[c]] = std::move(cells[c]);
    return b.Add(number, slots);
  }));
  if (columns.empty()) return Status::InvalidArgument(source + ": no header line (an empty workload file)");
  return Status::Ok();
}

// ---- JSONL ------------------------------------------------------------------------

// Collects one flat JSON object into slots, numbers as their source text.
class LineSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  LineSax(const Fields& fields, Slots* slots) : fields_(fields), slots_(slots) {}
  const std::string& error() const { return error_; }

  bool null() override { return Value(std::nullopt); }
  bool boolean(bool) override { return Fail("a boolean is not allowed here"); }
  bool number_integer(number_integer_t v) override { return Value(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Value(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& raw) override { return Value(raw); }
  bool string(string_t& s) override { return Value(std::move(s)); }
  bool binary(binary_t&) override { return Fail("binary values are not allowed"); }
  bool start_object(std::size_t) override {
    if (depth_++ > 0) return Fail("a nested object is not allowed (one flat object per line)");
    return true;
  }
  bool key(string_t& k) override {
    slot_ = fields_.Find(k);
    key_ = k;
    if (slot_ < 0) return Fail(fields_.Unknown(k));
    if (seen_.size() < slots_->size()) seen_.resize(slots_->size());
    if (seen_[slot_]) return Fail("field '" + k + "' given twice");
    seen_[slot_] = true;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return Fail("arrays are not allowed (one flat object per line)"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string m = ex.what();
    const size_t at = m.find("column");
    if (at != std::string::npos) m = m.substr(at);
    return Fail("not a JSON object: " + m);
  }

 private:
  bool Value(std::optional<std::string> v) {
    if (depth_ != 1) return Fail("expected a JSON object ('{...}')");
    (*slots_)[slot_] = std::move(v);
    return true;
  }
  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  const Fields& fields_;
  Slots* slots_;
  std::vector<bool> seen_;
  int depth_ = 0;
  int slot_ = -1;
  std::string key_;
  std::string error_;
};

Status ParseJsonl(std::string_view text, const Fields& fields, Builder& b) {
  Slots slots(fields.size());
  size_t lines = 0;
  return text::ForEachLine(text, &lines, [&](uint32_t number, std::string_view line) -> Status {
    for (auto& s : slots) s.reset();
    LineSax sax(fields, &slots);
    bool ok = false;
    try {
      ok = nlohmann::json::sax_parse(line, &sax);
    } catch (const std::exception& e) {
      return b.Error(number, "", std::string("not a JSON object: ") + e.what());
    }
    if (!ok) return b.Error(number, "", sax.error().empty() ? "not a JSON object" : sax.error());
    return b.Add(number, slots);
  });
}

}  // namespace

StatusOr<int64_t> ParseSecondsToMs(std::string_view text) { return DecimalToMs(text); }

StatusOr<WorkloadFormat> WorkloadFormatOf(const std::string& path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".csv") || ends(".CSV")) return WorkloadFormat::kCsv;
  if (ends(".jsonl") || ends(".ndjson") || ends(".JSONL")) return WorkloadFormat::kJsonl;
  return Status::InvalidArgument(path + ": unknown workload file type (expected a name ending in .csv, "
                                        ".jsonl or .ndjson)");
}

StatusOr<Workload> ParseWorkload(std::string_view text, WorkloadFormat format, const std::string& source_name,
                                 const std::vector<std::string>& resource_names) {
  Workload w;
  w.source = source_name;
  const Fields fields(resource_names);
  Builder b(w.source, resource_names, &w);
  if (format == WorkloadFormat::kCsv) {
    HDRF_RETURN_IF_ERROR(ParseCsv(text, source_name, fields, b));
  } else {
    HDRF_RETURN_IF_ERROR(ParseJsonl(text, fields, b));
  }
  return w;
}

StatusOr<Workload> LoadWorkloadFile(const std::string& path, const std::vector<std::string>& resource_names) {
  HDRF_ASSIGN_OR_RETURN(WorkloadFormat format, WorkloadFormatOf(path));
  HDRF_ASSIGN_OR_RETURN(const std::string contents, ReadInputFile(path));
  return ParseWorkload(contents, format, path, resource_names);
}

}  // namespace hdrf
