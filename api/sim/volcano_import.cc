// ImportVolcanoEvents (api/hdrf/workload_import.h).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "api/formats/text_lines.h"
#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/workload_import.h"

namespace hdrf {
namespace {

using nlohmann::json;

// The line of each element of the top-level array (strings skipped).
std::vector<int> ElementLines(std::string_view text) {
  std::vector<int> lines;
  int line = 1, depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      if (depth == 1) lines.push_back(line);
    } else if (c == '{' || c == '[') {
      if (depth == 1) lines.push_back(line);
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (depth == 1 && c != ',' && c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      if (lines.empty() || lines.back() != line) lines.push_back(line);  // a bare value
    }
  }
  return lines;
}

int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

StatusOr<int64_t> ParseRfc3339Micros(const std::string& s) {
  auto digits = [&](size_t pos, size_t n, int64_t* v) {
    if (pos + n > s.size()) return false;
    *v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      *v = *v * 10 + (s[i] - '0');
    }
    return true;
  };
  int64_t Y, M, D, h, m, sec;
  const Status bad = Status::InvalidArgument("'" + EscapeName(s) + "' is not an RFC 3339 time (2025-08-26T09:00:00Z)");
  if (!digits(0, 4, &Y) || s.size() < 20 || s[4] != '-' || !digits(5, 2, &M) || s[7] != '-' ||
      !digits(8, 2, &D) || (s[10] != 'T' && s[10] != 't') || !digits(11, 2, &h) || s[13] != ':' ||
      !digits(14, 2, &m) || s[16] != ':' || !digits(17, 2, &sec))
    return bad;
  if (M < 1 || M > 12 || D < 1 || D > DaysInMonth(Y, M) || h > 23 || m > 59 || sec > 60) return bad;
  size_t pos = 19;
  int64_t us = 0;
  if (s[pos] == '.') {
    size_t n = 0;
    while (pos + 1 + n < s.size() && s[pos + 1 + n] >= '0' && s[pos + 1 + n] <= '9') {
      if (n < 6) us = us * 10 + (s[pos + 1 + n] - '0');
      ++n;
    }
    if (n == 0) return bad;
    for (size_t k = n; k < 6; ++k) us *= 10;
    pos += 1 + n;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == s.size()) {
  } else if (pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && s[pos + 3] == ':') {
    int64_t oh, om;
    if (!digits(pos + 1, 2, &oh) || !digits(pos + 4, 2, &om) || oh > 23 || om > 59) return bad;
    offset = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om) * 60;
  } else {
    return bad;
  }
  return ((DaysFromCivil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec) - offset) * 1000000 + us;
}

namespace {

// RFC 3339 to Unix ms (the fraction cut to whole milliseconds).
StatusOr<int64_t> ParseTimestamp(const std::string& s) {
  HDRF_ASSIGN_OR_RETURN(const int64_t us, ParseRfc3339Micros(s));
  return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

struct Event {
  int line = 0;
  int64_t t_ms = 0;
  bool create = false;
  std::string ns, group, queue;
  int64_t replicas = 0;
  ResourceAmounts requests;
};

// The string field `key` of `e`; `def` when absent (required when null).
StatusOr<std::string> StringField(const json& e, const char* key, const char* def) {
  auto it = e.find(key);
  if (it == e.end() || it->is_null()) {
    if (def) return std::string(def);
    return Status::InvalidArgument(std::string(key) + ": missing");
  }
  if (!it->is_string()) return Status::InvalidArgument(std::string(key) + ": not a string");
  return it->get<std::string>();
}

StatusOr<Event> ReadEvent(const json& e, int line) {
  Event ev;
  ev.line = line;
  if (!e.is_object()) return Status::InvalidArgument("an event must be an object");
  HDRF_ASSIGN_OR_RETURN(const std::string type, StringField(e, "type", nullptr));
  if (type != "PodCreated" && type != "PodDeleted")
    return Status::NotFound("type: '" + EscapeName(type) + "' is neither PodCreated nor PodDeleted");
  ev.create = type == "PodCreated";
  HDRF_ASSIGN_OR_RETURN(const std::string ts, StringField(e, "timestamp", nullptr));
  auto t = ParseTimestamp(ts);
  if (!t.ok()) return Status::InvalidArgument("timestamp: " + t.status().message());
  ev.t_ms = *t;
  HDRF_ASSIGN_OR_RETURN(ev.group, StringField(e, "groupName", nullptr));
  if (ev.group.empty()) return Status::InvalidArgument("groupName: empty");
  HDRF_ASSIGN_OR_RETURN(ev.ns, StringField(e, "namespace", "default"));
  if (ev.ns.empty()) ev.ns = "default";
  // Names as the workload will carry them (docs/config.md "Names"): checked
  // here, so no message below shows a name that is not printable.
  if (Status s = CheckName(NameKind::kJob, ev.group); !s.ok()) return Status::InvalidArgument("groupName: " + s.message());
  if (Status s = CheckName(NameKind::kUser, ev.ns); !s.ok()) return Status::InvalidArgument("namespace: " + s.message());
  if (!ev.create) return ev;
  HDRF_ASSIGN_OR_RETURN(ev.queue, StringField(e, "queue", "default"));
  if (ev.queue.empty()) ev.queue = "default";
  if (ev.queue != "root" && ev.queue.rfind("root/", 0) != 0)
    if (Status s = CheckName(NameKind::kQueue, ev.queue); !s.ok()) return Status::InvalidArgument("queue: " + s.message());
  if (auto r = e.find("replicas"); r != e.end() && !r->is_null()) {
    if (!r->is_number_integer()) return Status::InvalidArgument("replicas: not an integer");
    ev.replicas = r->get<int64_t>();
    if (ev.replicas < 0) return Status::InvalidArgument("replicas: negative (" + std::to_string(ev.replicas) + ")");
  }
  const json* req = nullptr;
  if (auto r = e.find("resources"); r != e.end() && !r->is_null()) {
    if (!r->is_object()) return Status::InvalidArgument("resources: not an object");
    if (auto q = r->find("requests"); q != r->end() && !q->is_null()) req = &*q;
  }
  if (req && !req->is_object()) return Status::InvalidArgument("resources.requests: not an object");
  if (req)
    for (const auto& [name, v] : req->items()) {
      const std::string where = "resources.requests." + EscapeName(name);
      if (!IsKnownResourceName(name)) return Status::InvalidArgument(where + ": unknown resource name");
      std::string text;
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_number_integer()) {
        text = std::to_string(v.get<int64_t>());
      } else {
        return Status::InvalidArgument(where + ": not a quantity");
      }
      auto q = ParseQuantity(name, text);
      if (!q.ok()) return Status::InvalidArgument(where + ": " + q.status().message());
      if (*q > 0) ev.requests[name] = *q;
    }
  return ev;
}

// Volcano queue name -> hdrf queue path.
StatusOr<std::string> QueuePath(const std::string& q, const VolcanoImportOptions& o) {
  if (q == "root" || q.rfind("root/", 0) == 0) return q;
  if (o.queue_paths.empty()) return "root/" + q;
  std::string found;
  for (const auto& p : o.queue_paths) {
    const size_t slash = p.rfind('/');
    if (p.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos, q) != 0) continue;
    if (!found.empty()) return Status::InvalidArgument("queue: '" + q + "' names both " + found + " and " + p);
    found = p;
  }
  if (found.empty()) return Status::NotFound("queue: '" + q + "' is not a queue of the config");
  return found;
}

void AppendSeconds(std::string& out, int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms / 1000), static_cast<long long>(ms % 1000));
  out += buf;
}

// `text` as JSON, or an error naming `source`'s line (and the JSON's
// complaint, escaped like names).
StatusOr<json> ParseJson(std::string_view text, const std::string& source) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    const size_t byte = std::min<size_t>(e.byte ? e.byte - 1 : 0, text.size());
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
    std::string msg = e.what();
    if (size_t c = msg.find(": syntax error"); c != std::string::npos) msg = msg.substr(c + 2);
    // nlohmann's "last read: '...'" shows the input's bytes (DEL and
    // non-ASCII ones raw): escaped like names (volcano_fuzz).
    return Status::InvalidArgument(source + ":" + std::to_string(line) + ": JSON " + EscapeName(msg));
  } catch (const json::exception& e) {
    // Not a syntax error: a number too large for a double (out_of_range
    // 406, "1e999"), which escaped as an exception and aborted the tool
    // (volcano_fuzz). No byte offset comes with it.
    return Status::InvalidArgument(source + ": JSON " + EscapeName(e.what()));
  }
}

}  // namespace

StatusOr<VolcanoImportSummary> ImportVolcanoEvents(std::string_view text, const std::string& source,
                                                   const VolcanoImportOptions& options,
                                                   const ChunkSink& sink) {
  auto at = [&](int line, const std::string& what) {
    return source + ":" + std::to_string(line) + ": " + what;
  };
  if (!(options.open_duration >= 0 && options.open_duration <= 1e9))
    return Status::InvalidArgument("open_duration: " + std::to_string(options.open_duration) +
                                   " is not a number of seconds in 0..1e9");
  auto parsed = ParseJson(text, source);
  if (!parsed.ok()) return parsed.status();
  const json& doc = *parsed;
  if (!doc.is_array()) return Status::InvalidArgument(at(1, "expected a JSON array of events"));
  const std::vector<int> lines = ElementLines(text);
  VolcanoImportSummary sum;
  std::vector<Event> events;
  for (size_t i = 0; i < doc.size(); ++i) {
    const int line = i < lines.size() ? lines[i] : 1;
    auto ev = ReadEvent(doc[i], line);
    if (ev.status().code() == StatusCode::kNotFound) {  // an event type Volcano ignores too
      sum.warnings.push_back(at(line, ev.status().message() + ": skipped"));
      continue;
    }
    if (!ev.ok()) return Status::InvalidArgument(at(line, "event " + std::to_string(i + 1) + ": " + ev.status().message()));
    events.push_back(std::move(*ev));
  }
  sum.events = doc.size();
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t_ms < b.t_ms; });
  const int64_t base = events.empty() ? 0 : events.front().t_ms;
  const int64_t last = events.empty() ? 0 : events.back().t_ms;

  struct Job {
    const Event* created;
    std::string name, path;
    int64_t end_ms = -1;
  };
  std::vector<Job> jobs;
  std::map<std::pair<std::string, std::string>, size_t> live;  // (ns, group) -> jobs index
  std::map<std::pair<std::string, std::string>, int> generation;
  ResourceAmounts columns;
  for (const Event& ev : events) {
    const auto key = std::make_pair(ev.ns, ev.group);
    auto it = live.find(key);
    if (!ev.create) {
      if (it == live.end()) {
        sum.warnings.push_back(at(ev.line, "PodDeleted of " + ev.ns + "/" + ev.group + ": no pods of that group exist then; skipped"));
      } else {
        jobs[it->second].end_ms = ev.t_ms;
        live.erase(it);
      }
      continue;
    }
    if (it != live.end())
      return Status::InvalidArgument(at(ev.line, "groupName: " + ev.ns + "/" + ev.group + " is created again while its pods from line " +
                                                     std::to_string(jobs[it->second].created->line) + " still exist"));
    if (ev.replicas == 0) {
      sum.warnings.push_back(at(ev.line, "PodCreated of " + ev.ns + "/" + ev.group + " with 0 replicas creates nothing; skipped"));
      continue;
    }
    auto path = QueuePath(ev.queue, options);
    if (!path.ok()) return Status::InvalidArgument(at(ev.line, path.status().message()));
    std::string name = ev.ns == "default" ? ev.group : ev.ns + "/" + ev.group;
    if (const int g = ++generation[key]; g > 1) name += "#" + std::to_string(g);
    // The names the workload will carry (docs/config.md "Names").
    if (Status s = CheckName(NameKind::kJob, name); !s.ok())
      return Status::InvalidArgument(at(ev.line, "groupName/namespace: " + s.message()));
    if (Status s = CheckQueuePath(*path); !s.ok()) return Status::InvalidArgument(at(ev.line, "queue: " + s.message()));
    live[key] = jobs.size();
    jobs.push_back({&ev, name, *path});
    for (const auto& [r, v] : ev.requests) columns[r] = 1;
  }
  std::string out = "name,queue,arrival,duration,user,tasks,weight";
  for (const auto& [r, v] : columns) out += "," + r;
  out += "\n";
  for (const Job& j : jobs) {
    int64_t end = j.end_ms;
    if (end < 0) {
      ++sum.open_ended;
      end = options.open_duration > 0 ? j.created->t_ms + std::llround(options.open_duration * 1000) : last;
    }
    if (end <= j.created->t_ms) {
      sum.warnings.push_back(at(j.created->line, j.name + " lives 0 s (deleted or the file ends at its creation); skipped"));
      continue;
    }
    out += text::CsvField(j.name) + "," + text::CsvField(j.path) + ",";
    AppendSeconds(out, j.created->t_ms - base);
    out += ",";
    AppendSeconds(out, end - j.created->t_ms);
    out += "," + text::CsvField(j.created->ns) + "," + std::to_string(j.created->replicas) + ",1";
    for (const auto& [r, one] : columns) {
      out += ",";
      if (auto it = j.created->requests.find(r); it != j.created->requests.end()) out += FormatQuantity(r, it->second);
    }
    out += "\n";
    ++sum.jobs;
    sum.tasks += static_cast<uint64_t>(j.created->replicas);
  }
  HDRF_RETURN_IF_ERROR(sink(out));
  return sum;
}

}  // namespace hdrf
