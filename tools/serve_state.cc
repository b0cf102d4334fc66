#include "tools/serve_state.h"

#include <algorithm>
#include <chrono>

#include "hdrf/metrics.h"
#include "tools/explain_json.h"
#include "tools/tree_json.h"
#include "tools/tree_view.h"

namespace hdrf::tools {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

ServeState::ServeState(std::unique_ptr<ServeSource> source, std::string db, size_t history)
    : source_(std::move(source)), db_(std::move(db)), capacity_(std::max<size_t>(history, 2)),
      refreshed_ms_(NowMs()) {}

void ServeState::Tick() {
  Status s = source_->Refresh();
  std::shared_ptr<const Engine> eng = source_->engine();
  Sample sample;
  sample.time_ms = NowMs();
  sample.last_seq = eng->last_seq();
  const TreeSnapshot tree = TakeTreeSnapshot(*eng);
  for (const QueueInfo& q : tree.queues)
    if (q.depth == 1) sample.queues.push_back({q.path, {UsageShare(q, tree.total), q.share}});
  base::MutexLock lock(mu_);
  if (s.ok()) {
    refreshed_ms_ = sample.time_ms;
    refresh_error_.clear();
  } else {
    refresh_error_ = s.message();
  }
  samples_.push_back(std::move(sample));
  while (samples_.size() > capacity_) samples_.pop_front();
}

std::string ServeState::Metrics() const {
  std::shared_ptr<const Engine> eng = source_->engine();
  std::string text = MetricsText(*eng);
  int64_t refreshed;
  {
    base::MutexLock lock(mu_);
    refreshed = refreshed_ms_;
  }
  text +=
      "# HELP hdrf_serve_state_age_seconds Seconds since hdrf serve last brought the state it shows up to date "
      "with the store.\n"
      "# TYPE hdrf_serve_state_age_seconds gauge\n"
      "hdrf_serve_state_age_seconds " +
      FormatSampleValue(static_cast<double>(std::max<int64_t>(0, NowMs() - refreshed)) / 1000) + "\n";
  return text;
}

StatusOr<nlohmann::json> ServeState::Queues(const QueueFilter& filter) const {
  std::shared_ptr<const Engine> eng = source_->engine();
  HDRF_ASSIGN_OR_RETURN(nlohmann::json j, SubtreeJson(TakeTreeSnapshot(*eng), filter));
  j["db"] = db_;
  j["source"] = source_->mode();
  j["last_seq"] = eng->last_seq();
  j["job_count"] = eng->job_count();
  j["queue_count"] = eng->queue_count();
  j["time_ms"] = NowMs();
  base::MutexLock lock(mu_);
  j["refreshed_ms"] = refreshed_ms_;
  j["refresh_error"] = refresh_error_.empty() ? nlohmann::json(nullptr) : nlohmann::json(refresh_error_);
  return j;
}

nlohmann::json ServeState::History(int64_t since_ms) const {
  nlohmann::json samples = nlohmann::json::array();
  base::MutexLock lock(mu_);
  for (const Sample& s : samples_) {
    if (s.time_ms <= since_ms) continue;
    nlohmann::json queues = nlohmann::json::object();
    for (const auto& [path, v] : s.queues) queues[path] = {{"usage_share", v.first}, {"share", v.second}};
    samples.push_back({{"time_ms", s.time_ms}, {"last_seq", s.last_seq}, {"queues", std::move(queues)}});
  }
  return {{"capacity", capacity_}, {"samples", std::move(samples)}};
}

std::pair<int, std::string> ServeState::Explain(std::string_view job) const {
  std::shared_ptr<const Engine> eng = source_->engine();
  auto ex = eng->Explain(job);
  if (ex.ok()) return {200, ExplanationJson(*ex)};
  const int code = ex.status().code() == StatusCode::kNotFound ? 404 : 500;
  return {code, DumpJson({{"error", ex.status().message()}, {"job", std::string(job)}})};
}

}  // namespace hdrf::tools
