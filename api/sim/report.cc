// The simulator's outputs: the --jobs-out CSV, the --json report and the
// per-queue table (docs/simulate.md "Outputs").
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "api/formats/text_lines.h"
#include "hdrf/simulate.h"

namespace hdrf {
namespace {

using Json = nlohmann::ordered_json;

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Fmt(const char* f, const std::string& v) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, v.c_str());
  return buf;
}

Json Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

Json UtilizationJson(const SimulateResult& r) {
  Json util = Json::object();
  for (size_t k = 0; k < r.resources.size(); ++k) util[r.resources[k]] = r.utilization[k];
  return util;
}

Json WaitJson(const WaitStats& w) {
  Json j;
  j["count"] = w.count;
  if (w.count == 0) {
    for (const char* k : {"mean", "p50", "p95", "p99", "max"}) j[k] = nullptr;
    return j;
  }
  j["mean"] = w.mean_ms / 1000.0;
  j["p50"] = Seconds(w.p50_ms);
  j["p95"] = Seconds(w.p95_ms);
  j["p99"] = Seconds(w.p99_ms);
  j["max"] = Seconds(w.max_ms);
  return j;
}

Json QueueJson(const QueueReport& q, const SimulateResult& r) {
  Json j;
  j["path"] = q.path;
  j["leaf"] = q.is_leaf;
  j["jobs"] = q.jobs;
  j["started"] = q.started;
  j["usage_share_avg"] = q.usage_share_avg;
  j["fair_share_avg"] = q.fair_share_avg;
  j["wait"] = WaitJson(q.wait);
  Json by = Json::object();
  for (size_t c = 0; c < q.wait_by_class.size() && c < r.size_classes.size(); ++c)
    by[r.size_classes[c]] = WaitJson(q.wait_by_class[c]);
  j["wait_by_size"] = by;
  j["starved_seconds"] = Seconds(q.starved_ms);
  if (r.nodes > 0) j["fragmentation_waits"] = q.fragmentation_waits;
  if (r.reclaim) j["evicted_tasks"] = q.evicted_tasks;
  if (q.guaranteed) {
    Json g;
    g["episodes"] = q.owed_episodes;
    g["mean"] = q.owed_episodes > 0 ? Json(static_cast<double>(q.owed_ms) / 1000.0 / static_cast<double>(q.owed_episodes))
                                    : Json(nullptr);
    g["max"] = q.owed_episodes > 0 ? Json(Seconds(q.owed_max_ms)) : Json(nullptr);
    g["owed_seconds"] = Seconds(q.owed_ms);
    j["time_to_guarantee"] = g;
  }
  if (!q.is_leaf) {
    j["jain_avg"] = q.contended_ms > 0 ? Json(q.jain_avg) : Json(nullptr);
    j["contended_seconds"] = Seconds(q.contended_ms);
  }
  if (!q.why.empty()) {
    Json why = Json::object();
    for (const auto& [reason, job_ms] : q.why) why[reason] = job_ms / 1000.0;
    j["why_job_seconds"] = why;
  }
  return j;
}

Json ReportObject(const Workload& w, const SimulateResult& r) {
  Json j;
  j["jobs"] = static_cast<int64_t>(w.jobs.size());
  j["started"] = r.started;
  j["unscheduled"] = r.unscheduled;
  j["refused"] = r.refused;
  j["makespan"] = Seconds(r.makespan_ms);
  j["utilization"] = UtilizationJson(r);
  Json queues = Json::array();
  for (const QueueReport& q : r.queues) queues.push_back(QueueJson(q, r));
  j["queues"] = queues;
  Json classes = Json::array();
  for (size_t c = 0; c < r.size_classes.size(); ++c) classes.push_back(r.size_classes[c]);
  j["size_classes"] = classes;
  Json refusals = Json::array();
  for (size_t i = 0; i < r.jobs.size() && refusals.size() < 100; ++i)
    if (!r.jobs[i].refused.empty())
      refusals.push_back(Json{{"name", w.jobs[i].spec.name}, {"line", w.jobs[i].spec.line},
                              {"error", r.jobs[i].refused}});
  j["refusals"] = refusals;
  j["instants"] = r.instants;
  j["steps"] = r.steps;
  j["fills_skipped"] = r.fills_skipped;
  if (r.reclaim) {
    j["evicted_tasks"] = r.evicted_tasks;
    j["lost_task_seconds"] = r.lost_task_seconds;
    j["plans_applied"] = r.plans_applied;
    j["ping_pong"] = r.ping_pong;
    j["evicted_within_60s"] = r.evicted_within_60s;
  }
  j["wall_seconds"] = r.wall_seconds;
  return j;
}


const QueueReport* FindQueue(const SimulateResult& r, const std::string& path) {
  for (const QueueReport& q : r.queues)
    if (q.path == path) return &q;
  return nullptr;
}

// Paths of a, then those only in b, each list in its own path order.
std::vector<std::string> UnionPaths(const SimulateResult& a, const SimulateResult& b) {
  std::vector<std::string> out;
  for (const QueueReport& q : a.queues) out.push_back(q.path);
  for (const QueueReport& q : b.queues)
    if (!FindQueue(a, q.path)) out.push_back(q.path);
  return out;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

std::string FormatMs(int64_t ms) {
  if (ms < 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
  return buf;
}

std::string JobsCsv(const Workload& w, const SimulateResult& r) {
  std::string out = r.reclaim ? "name,queue,arrival,first_start,last_start,end,evicted\n"
                              : "name,queue,arrival,first_start,last_start,end\n";
  out.reserve(out.size() + w.jobs.size() * 48);
  for (size_t i = 0; i < w.jobs.size() && i < r.jobs.size(); ++i) {
    const JobOutcome& o = r.jobs[i];
    out += text::CsvField(w.jobs[i].spec.name);
    out += ',';
    out += text::CsvField(o.queue);
    for (int64_t ms : {w.jobs[i].arrival_ms, o.first_start_ms, o.last_start_ms, o.end_ms}) {
      out += ',';
      out += FormatMs(ms);
    }
    if (r.reclaim) out += ',' + std::to_string(o.evicted);
    out += '\n';
  }
  return out;
}

Status WriteJobsCsv(const Workload& w, const SimulateResult& r, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status::IoError(path + ": cannot create");
  const std::string text = JobsCsv(w, r);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) return Status::IoError(path + ": cannot write");
  return Status::Ok();
}

std::string SimulateReportJson(const Workload& w, const SimulateResult& r) { return Dump(ReportObject(w, r)); }

std::string SimulateCompareJson(const Workload& w, const SimulateResult& a, const SimulateResult& b,
                                const std::string& other_name) {
  Json j = ReportObject(w, a);
  Json c;
  c["config"] = other_name;
  c["started"] = b.started;
  c["unscheduled"] = b.unscheduled;
  c["makespan"] = Seconds(b.makespan_ms);
  c["utilization"] = UtilizationJson(b);
  if (b.reclaim) {
    c["evicted_tasks"] = b.evicted_tasks;
    c["lost_task_seconds"] = b.lost_task_seconds;
    c["plans_applied"] = b.plans_applied;
  }
  Json queues = Json::array();
  for (const std::string& path : UnionPaths(a, b)) {
    const QueueReport* qa = FindQueue(a, path);
    const QueueReport* qb = FindQueue(b, path);
    Json q;
    q["path"] = path;
    auto pair = [&](auto get) { return Json::array({qa ? get(*qa) : Json(nullptr), qb ? get(*qb) : Json(nullptr)}); };
    q["jobs"] = pair([](const QueueReport& x) { return Json(x.jobs); });
    q["usage_share_avg"] = pair([](const QueueReport& x) { return Json(x.usage_share_avg); });
    q["fair_share_avg"] = pair([](const QueueReport& x) { return Json(x.fair_share_avg); });
    q["wait"] = pair([](const QueueReport& x) { return WaitJson(x.wait); });
    if (a.reclaim || b.reclaim) q["evicted_tasks"] = pair([](const QueueReport& x) { return Json(x.evicted_tasks); });
    queues.push_back(q);
  }
  c["queues"] = queues;
  j["compare"] = c;
  return Dump(j);
}

std::string SimulateCompareTable(const SimulateResult& a, const SimulateResult& b) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-26s %-22s %-24s %-30s %-30s %-30s\n", "QUEUE (A -> B)", "JOBS", "SHARE %",
                "WAIT-MEAN s", "WAIT-P50 s", "WAIT-P95 s");
  out += buf;
  auto cell = [&](const QueueReport* x, const QueueReport* y, auto get, const char* fmt) {
    auto one = [&](const QueueReport* q) {
      if (!q) return std::string("-");
      const double v = get(*q);
      return std::isfinite(v) ? Fmt(fmt, v) : std::string("-");
    };
    std::string s = one(x) + " -> " + one(y);
    if (x && y && std::isfinite(get(*x)) && std::isfinite(get(*y))) s += " (" + Fmt("%+.4g", get(*y) - get(*x)) + ")";
    return s;
  };
  const double nan = std::nan("");
  auto wait = [&](int which) {
    return [&, which](const QueueReport& q) {
      if (q.wait.count == 0) return nan;
      return which == 0 ? q.wait.mean_ms / 1000 : static_cast<double>(which == 1 ? q.wait.p50_ms : q.wait.p95_ms) / 1000;
    };
  };
  for (const std::string& path : UnionPaths(a, b)) {
    const QueueReport* qa = FindQueue(a, path);
    const QueueReport* qb = FindQueue(b, path);
    const int depth = qa ? qa->depth : qb->depth;
    const std::string name = std::string(2 * depth, ' ') + path.substr(path.rfind('/') + 1);
    out += Fmt("%-26s", name) + " " +
           Fmt("%-22s", cell(qa, qb, [](const QueueReport& q) { return static_cast<double>(q.jobs); }, "%.0f")) + " " +
           Fmt("%-24s", cell(qa, qb, [](const QueueReport& q) { return 100 * q.usage_share_avg; }, "%.1f")) + " " +
           Fmt("%-30s", cell(qa, qb, wait(0), "%.3f")) + " " + Fmt("%-30s", cell(qa, qb, wait(1), "%.3f")) + " " +
           cell(qa, qb, wait(2), "%.3f") + "\n";
  }
  std::snprintf(buf, sizeof buf, "makespan %s -> %s s; never started %lld -> %lld\n", FormatMs(a.makespan_ms).c_str(),
                FormatMs(b.makespan_ms).c_str(), static_cast<long long>(a.unscheduled),
                static_cast<long long>(b.unscheduled));
  out += buf;
  if (a.reclaim || b.reclaim) {
    std::snprintf(buf, sizeof buf, "evicted tasks %lld -> %lld; lost task-seconds %.3f -> %.3f; plans applied %lld -> %lld\n",
                  static_cast<long long>(a.evicted_tasks), static_cast<long long>(b.evicted_tasks), a.lost_task_seconds,
                  b.lost_task_seconds, static_cast<long long>(a.plans_applied), static_cast<long long>(b.plans_applied));
    out += buf;
  }
  return out;
}

std::string SimulateReportTable(const SimulateResult& r) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "jobs %zu, started %" PRId64 ", never started %" PRId64 " (%" PRId64
                " refused), makespan %s s\nutilization:",
                r.jobs.size(), r.started, r.unscheduled, r.refused, FormatMs(r.makespan_ms).c_str());
  out += buf;
  for (size_t k = 0; k < r.resources.size(); ++k) {
    std::snprintf(buf, sizeof buf, " %s %.1f%%", r.resources[k].c_str(), 100 * r.utilization[k]);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "\n\n%-32s %7s %7s %7s %7s %9s %9s %9s %9s %9s %9s\n", "QUEUE", "JOBS", "STARTED",
                "SHARE", "FAIR", "WAIT-MEAN", "P50", "P95", "P99", "MAX", "STARVED");
  out += buf;
  for (const QueueReport& q : r.queues) {
    std::string name = std::string(2 * q.depth, ' ') + q.path.substr(q.path.rfind('/') + 1);
    auto sec = [&](int64_t ms) { return q.wait.count ? FormatMs(ms) : std::string("-"); };
    std::string mean = "-";
    if (q.wait.count) {
      std::snprintf(buf, sizeof buf, "%.3f", q.wait.mean_ms / 1000.0);
      mean = buf;
    }
    std::snprintf(buf, sizeof buf, "%-32s %7" PRId64 " %7" PRId64 " %6.1f%% %6.1f%% %9s %9s %9s %9s %9s %9s\n",
                  name.c_str(), q.jobs, q.started, 100 * q.usage_share_avg, 100 * q.fair_share_avg, mean.c_str(), sec(q.wait.p50_ms).c_str(),
                  sec(q.wait.p95_ms).c_str(), sec(q.wait.p99_ms).c_str(), sec(q.wait.max_ms).c_str(),
                  FormatMs(q.starved_ms).c_str());
    out += buf;
  }
  out += "(wait times and STARVED in seconds; SHARE = time-averaged max_r usage/total; FAIR = time-averaged\n"
         " weighted fair share among the sibling queues that had jobs waiting or running, docs/simulate.md)\n";
  return out;
}

}  // namespace hdrf
