// ImportStoreHistory (api/hdrf/workload_import.h): a store's log, with its
// event times, as a docs/spec.md §13 workload (docs/simulate_import.md "A
// store's history").
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "api/formats/text_lines.h"
#include "hdrf/quantity.h"
#include "hdrf/simulate.h"
#include "hdrf/workload_import.h"
#include "storage/codec.h"
#include "storage/log_scan.h"
#include "storage/state_io.h"
#include "storage/store.h"

namespace hdrf {
namespace {

// Run lengths of a job's tasks, summed by how each run ended.
struct Runs {
  double sum_us = 0;
  int64_t n = 0;
  void Add(int64_t len_us, int64_t count) {
    sum_us += static_cast<double>(std::max<int64_t>(len_us, 0)) * static_cast<double>(count);
    n += count;
  }
};

struct Job {
  JobSpec spec;
  int64_t submit_us = 0;
  std::vector<std::pair<int64_t, int64_t>> open;  // (start, tasks), oldest first from open_head
  size_t open_head = 0;
  int64_t open_tasks = 0;
  Runs done, released;
  bool started = false;
};

class History {
 public:
  explicit History(const StoreImportOptions& o) : o_(o) {}

  bool InWindow(int64_t t) const {
    return (!o_.since_us || t >= *o_.since_us) && (!o_.until_us || t <= *o_.until_us);
  }

  // One logged event (storage/log_scan.h: a Submit's job_seq is its
  // submission number); r.timed false: its record holds no times (written
  // before events had one).
  void Apply(const storage::LogEventRef& r, StoreImportSummary* sum) {
    const storage::LogOp& op = *r.op;
    const Event* e = r.full;
    const bool timed = r.timed;
    const int64_t t = r.time_us;
    if (!timed || !InWindow(t)) {
      if (op.type == Event::Type::kSubmit && (!timed || (o_.since_us && t < *o_.since_us))) ++sum->before;
      return;
    }
    if (sum->events++ == 0) first_us_ = t;
    end_us_ = std::max(end_us_, t);
    switch (op.type) {
      case Event::Type::kSubmit:
        live_[r.job_seq] = jobs_.size();
        jobs_.push_back(Job{e->job, t});
        return;
      case Event::Type::kAllocate:
        Allocate(op.job_seq, op.n, t);
        return;
      case Event::Type::kFinish:
        End(op.job_seq, op.n, t, /*finished=*/true);
        return;
      case Event::Type::kRelease:
        End(op.job_seq, op.n, t, /*finished=*/false);
        return;
      case Event::Type::kRemove:
        if (Job* j = Find(op.job_seq)) End(op.job_seq, j->open_tasks, t, /*finished=*/true);
        live_.erase(op.job_seq);
        return;
      case Event::Type::kApplyPlan:  // the victims stop, the waiting job's demand starts
        for (const Event::Victim& v : e->victims) End(v.job_seq, v.tasks, t, /*finished=*/false);
        Allocate(op.job_seq, op.n, t);
        return;
      default:
        ++sum->other_events;
        return;
    }
  }

  // The CSV, in submission order.
  std::string Csv(const std::vector<std::string>& resources, StoreImportSummary* sum) {
    sum->origin_us = o_.since_us ? *o_.since_us : first_us_;
    sum->end_us = end_us_;
    std::vector<bool> used(resources.size(), false);
    for (const Job& j : jobs_)
      for (size_t r = 0; r < resources.size(); ++r) used[r] = used[r] || j.spec.task.count(resources[r]) > 0;
    std::string out = "name,queue,arrival,duration,user,tasks,weight,min_available";
    for (size_t r = 0; r < resources.size(); ++r)
      if (used[r]) out += "," + resources[r];
    out += "\n";
    std::unordered_map<std::string, int> uses;  // a name reused after its job left
    for (Job& j : jobs_) {
      if (!j.started) {
        ++sum->never_started;
        continue;
      }
      const bool observed = j.done.n == 0 && j.released.n == 0;  // no run ended
      const Runs r = j.done.n > 0 ? j.done : j.released.n > 0 ? j.released : OpenRuns(j);
      const int64_t duration_ms = std::max<int64_t>(1, std::llround(r.sum_us / static_cast<double>(r.n) / 1000));
      if (j.open_tasks > 0) {
        ++sum->running;
        out += "# running at the end of the log (" + std::to_string(j.open_tasks) + " of " +
               std::to_string(j.spec.tasks) + " tasks): duration " +
               (observed ? "= the time observed so far\n" : "from its ended tasks\n");
      }
      std::string name = j.spec.name;
      if (const int k = ++uses[name]; k > 1) name += "#" + std::to_string(k);
      char w[32];
      auto [p, ec] = std::to_chars(w, w + sizeof w, j.spec.weight);
      out += text::CsvField(name) + "," + text::CsvField(j.spec.queue) + "," +
             FormatMs(std::max<int64_t>(0, (j.submit_us - sum->origin_us + 500) / 1000)) + "," +
             FormatMs(duration_ms) + "," + text::CsvField(j.spec.user) + "," + std::to_string(j.spec.tasks) + "," +
             std::string(w, ec == std::errc() ? p : w) + "," + std::to_string(j.spec.min_available);
      for (size_t k = 0; k < resources.size(); ++k) {
        if (!used[k]) continue;
        out += ",";
        if (auto it = j.spec.task.find(resources[k]); it != j.spec.task.end())
          out += FormatQuantity(resources[k], it->second);
      }
      out += "\n";
      ++sum->jobs;
      sum->tasks += static_cast<uint64_t>(j.spec.tasks);
    }
    return out;
  }

 private:
  Job* Find(uint64_t seq) {
    auto it = live_.find(seq);
    return it == live_.end() ? nullptr : &jobs_[it->second];
  }
  void Allocate(uint64_t seq, int64_t n, int64_t t) {
    Job* j = Find(seq);
    if (!j || n < 1) return;
    j->open.emplace_back(t, n);
    j->open_tasks += n;
    j->started = true;
  }
  // n running tasks end at t: a finish ends the earliest started, a
  // release or eviction the latest started (as the engine's plans do).
  void End(uint64_t seq, int64_t n, int64_t t, bool finished) {
    Job* j = Find(seq);
    if (!j) return;
    Runs& runs = finished ? j->done : j->released;
    while (n > 0 && j->open_head < j->open.size()) {
      auto& g = finished ? j->open[j->open_head] : j->open.back();
      const int64_t k = std::min(n, g.second);
      runs.Add(t - g.first, k);
      g.second -= k;
      n -= k;
      j->open_tasks -= k;
      if (g.second == 0) finished ? void(++j->open_head) : j->open.pop_back();
    }
    if (j->open_head == j->open.size()) {
      j->open.clear();
      j->open_head = 0;
    }
  }
  Runs OpenRuns(const Job& j) const {
    Runs r;
    for (size_t i = j.open_head; i < j.open.size(); ++i) r.Add(end_us_ - j.open[i].first, j.open[i].second);
    return r;
  }

  const StoreImportOptions& o_;
  std::vector<Job> jobs_;
  std::unordered_map<uint64_t, size_t> live_;  // submission seq -> jobs_ index
  int64_t first_us_ = 0, end_us_ = 0;
};

}  // namespace

StatusOr<StoreImportSummary> ImportStoreHistory(const std::string& dir, const StoreImportOptions& options,
                                                const ChunkSink& sink) {
  using storage::Store;
  if (options.since_us && options.until_us && *options.since_us > *options.until_us)
    return Status::InvalidArgument("the window is empty: --since " + FormatEventTime(*options.since_us) +
                                   " is after --until " + FormatEventTime(*options.until_us));
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(dir, Store::Mode::kReadOnly));
  HDRF_ASSIGN_OR_RETURN(const storage::MetaRecord meta, store->ReadMeta());
  HDRF_RETURN_IF_ERROR(storage::CheckMeta(meta, dir));
  HDRF_RETURN_IF_ERROR(store->VerifyChecksums());
  // The log from its first record on; its first Submit's number comes from
  // the newest checkpoint (storage/log_scan.h).
  HDRF_ASSIGN_OR_RETURN(const uint64_t first_job_seq, storage::FirstJobSeqFrom(*store, meta.resource_names, 0));
  StoreImportSummary sum;
  sum.before_log = first_job_seq - 1;
  History h(options);
  uint64_t timed = 0;
  HDRF_RETURN_IF_ERROR(storage::ScanLogEvents(*store, meta.resource_names, 0, first_job_seq,
                                              [&](const storage::LogEventRef& r) {
                                                if (sum.first_seq == 0) sum.first_seq = r.seq;
                                                sum.last_seq = r.seq;
                                                timed += r.timed;
                                                h.Apply(r, &sum);
                                                return Status::Ok();
                                              }));
  if (sum.first_seq != 0 && timed == 0)
    return Status::FailedPrecondition("store " + dir + ": its log (events " + std::to_string(sum.first_seq) + ".." +
                                      std::to_string(sum.last_seq) +
                                      ") holds no event times: it was written before events carried a time "
                                      "(docs/storage.md \"Event times\"), so arrivals and durations are unknown");
  HDRF_RETURN_IF_ERROR(sink(h.Csv(meta.resource_names, &sum)));
  return sum;
}

StatusOr<int64_t> ParseEventTimeMicros(const std::string& text) {
  const Status bad = Status::InvalidArgument(
      "'" + text + "' is neither an RFC 3339 time (2026-11-27T01:00:00Z) nor seconds since the Unix epoch "
      "(1795741200, at most 6 decimals)");
  if (text.find('T') != std::string::npos || text.find('t') != std::string::npos || text.find('-', 1) != std::string::npos) {
    auto t = ParseRfc3339Micros(text);
    if (!t.ok()) return bad;
    return *t;
  }
  size_t i = 0;
  int64_t whole = 0, frac = 0;
  int digits = 0, decimals = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
    if (whole > (INT64_MAX / 1000000 - 9) / 10) return bad;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++decimals) {
      if (decimals == 6) return bad;
      frac = frac * 10 + (text[i] - '0');
    }
  }
  if (digits == 0 || i != text.size()) return bad;
  for (int k = decimals; k < 6; ++k) frac *= 10;
  return whole * 1000000 + frac;
}

std::string FormatEventTime(int64_t us) {
  int64_t secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
  const int64_t frac = us - secs * 1000000;
  int64_t z = (secs >= 0 ? secs : secs - 86399) / 86400;  // days, floor
  const int64_t sod = secs - z * 86400;
  // Civil from days (H. Hinnant).
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", static_cast<long long>(y),
                        static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(sod / 3600),
                        static_cast<long long>(sod / 60 % 60), static_cast<long long>(sod % 60));
  if (frac != 0) n += std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), ".%06lld", static_cast<long long>(frac));
  return std::string(buf, static_cast<size_t>(n)) + "Z";
}

}  // namespace hdrf
