#include "hdrf/metrics.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/views.h"

namespace hdrf {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round trip
  return std::string(buf, r.ptr);
}

namespace {

class Writer {
 public:
  // Starts a family: its HELP and TYPE lines.
  void Family(const char* name, const char* type, const char* help) {
    name_ = name;
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;  // plain ASCII without backslashes or newlines
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  // A sample of the current family; `labels` alternate name, value.
  void Sample(std::initializer_list<std::string_view> labels, const std::string& value,
              const char* suffix = "") {
    out_ += name_;
    out_ += suffix;
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (auto it = labels.begin(); it != labels.end(); it += 2) {
        if (!first) out_ += ',';
        first = false;
        out_ += *it;
        out_ += "=\"";
        out_ += EscapeLabelValue(*(it + 1));
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }

  std::string Take() { return std::move(out_); }
  void Raw(const std::string& text) { out_ += text; }

 private:
  std::string out_;
  const char* name_ = "";
};

std::string Int(int64_t v) { return std::to_string(v); }
std::string Uint(uint64_t v) { return std::to_string(v); }

}  // namespace

std::string LatencyHistogramText(const ShardedLatencyHistogram::Snapshot& s, std::string_view name,
                                 std::string_view help) {
  using H = ShardedLatencyHistogram;
  std::string out;
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" histogram\n");
  auto sample = [&](const char* suffix, const std::string* le, const std::string& value) {
    out.append(name).append(suffix);
    if (le) out.append("{le=\"").append(*le).append("\"}");
    out.append(" ").append(value).append("\n");
  };
  uint64_t cumulative = 0;
  size_t next = 0;  // first bucket not yet added
  for (uint64_t bound : kLatencyBucketBoundsNs) {
    const size_t last = H::BucketOf(bound);
    for (; next <= last && next < s.counts.size(); ++next) cumulative += s.counts[next];
    const std::string le = FormatSampleValue(static_cast<double>(H::BucketHigh(last)) / 1e9);
    sample("_bucket", &le, Uint(cumulative));
  }
  const std::string inf = "+Inf";
  sample("_bucket", &inf, Uint(s.count));
  sample("_sum", nullptr, FormatSampleValue(static_cast<double>(s.sum_ns) / 1e9));
  sample("_count", nullptr, Uint(s.count));
  return out;
}

namespace {

// The engine-wide families: events, durability and follower lag, sizes, the
// cluster, event latency.
void EngineFamilies(const Engine& engine, const MetricsOptions& options,
                    const std::vector<std::string>& names, size_t queue_count, Writer& w) {
  // Durable first, then last: last (read later) >= durable (read earlier),
  // so the lag is never negative.
  const uint64_t durable = engine.durable_seq();
  const uint64_t last = engine.last_seq();
  const std::vector<int64_t> total = engine.Total();
  const size_t jobs = engine.job_count();
  w.Family("hdrf_events_total", "counter",
           "Events applied (the last event sequence number; it goes on across recovery from a store).");
  w.Sample({}, Uint(last));
  w.Family("hdrf_durability_lag_events", "gauge",
           "Events applied but not yet known durable (last_seq - durable_seq).");
  w.Sample({}, Uint(last > durable ? last - durable : 0));
  if (engine.is_follower()) {
    const Engine::FollowerLag lag = engine.follower_lag();
    w.Family("hdrf_follower_lag_events", "gauge",
             "A follower: events in the store (as of its last catch-up) not yet applied.");
    w.Sample({}, Uint(lag.events));
    w.Family("hdrf_follower_lag_seconds", "gauge",
             "A follower: seconds since it last had applied every event its store held.");
    w.Sample({}, FormatSampleValue(lag.seconds));
  }
  w.Family("hdrf_jobs", "gauge", "Jobs present in the engine.");
  w.Sample({}, Uint(jobs));
  w.Family("hdrf_queues", "gauge", "Queues in the tree, root included.");
  w.Sample({}, Uint(queue_count));
  if (options.cluster) {
    w.Family("hdrf_cluster_capacity", "gauge",
             "Cluster capacity per resource, in canonical units (cpu millicores, memory bytes, "
             "others milli-units).");
    for (size_t r = 0; r < names.size() && r < total.size(); ++r)
      w.Sample({"resource", names[r]}, Int(total[r]));
  }
  const ShardedLatencyHistogram::Snapshot engine_latency =
      options.event_latency_snapshot ? ShardedLatencyHistogram::Snapshot() : engine.EventLatency();
  const ShardedLatencyHistogram::Snapshot* latency =
      options.event_latency_snapshot ? options.event_latency_snapshot
      : engine_latency.count > 0     ? &engine_latency
                                     : nullptr;
  if (latency) {
    w.Raw(LatencyHistogramText(*latency, "hdrf_event_latency_seconds",
                               "Latency of accepted event calls made through the embedding "
                               "interface, durability wait included."));
  }
}

// The per-queue families, in the queues' path order.
void QueueFamilies(const std::vector<QueueInfo>& queues, const std::vector<std::string>& names,
                   const MetricsOptions& options, Writer& w) {
  // Per-resource families: one sample per queue and resource where `keep`.
  auto per_resource = [&](const char* name, const char* help,
                          std::vector<int64_t> QueueInfo::*field, auto keep) {
    w.Family(name, "gauge", help);
    for (const QueueInfo& q : queues) {
      const std::vector<int64_t>& v = q.*field;
      for (size_t r = 0; r < names.size() && r < v.size(); ++r)
        if (keep(v[r])) w.Sample({"queue", q.path, "resource", names[r]}, Int(v[r]));
    }
  };
  auto always = [](int64_t) { return true; };
  auto limited = [](int64_t v) { return v != kUnlimited; };
  auto positive = [](int64_t v) { return v > 0; };

  per_resource("hdrf_queue_allocated",
               "Sum of the allocations of the jobs under the queue, in canonical units.",
               &QueueInfo::usage, always);
  w.Family("hdrf_queue_share", "gauge",
           "Dominant share s(U) of the queue's H-DRF vector (docs/spec.md §4).");
  for (const QueueInfo& q : queues) w.Sample({"queue", q.path}, FormatSampleValue(q.share));
  w.Family("hdrf_queue_key", "gauge",
           "Key of the queue among its siblings, s(U)/weight; the smallest is served first.");
  for (const QueueInfo& q : queues) w.Sample({"queue", q.path}, FormatSampleValue(q.key));
  w.Family("hdrf_queue_blocked", "gauge",
           "1 when every child of the queue (queue or job) is blocked, else 0.");
  for (const QueueInfo& q : queues) w.Sample({"queue", q.path}, q.blocked ? "1" : "0");
  w.Family("hdrf_queue_weight", "gauge", "Weight of the queue (at least 1).");
  for (const QueueInfo& q : queues) w.Sample({"queue", q.path}, FormatSampleValue(q.weight));
  w.Family("hdrf_queue_state", "gauge",
           "1 for the queue's state (open, closing, closed), 0 for the others.");
  for (const QueueInfo& q : queues) {
    for (QueueState s : {QueueState::kOpen, QueueState::kClosing, QueueState::kClosed})
      w.Sample({"queue", q.path, "state", QueueStateName(s)}, q.state == s ? "1" : "0");
  }
  w.Family("hdrf_queue_jobs", "gauge",
           "Jobs in the queue's subtree by state (Pending, Inqueue, Running, Unknown).");
  for (const QueueInfo& q : queues) {
    for (JobState s : {JobState::kPending, JobState::kInqueue, JobState::kRunning,
                       JobState::kUnknown})
      w.Sample({"queue", q.path, "state", JobStateName(s)},
               Int(q.jobs_by_state[static_cast<int>(s)]));
  }
  per_resource("hdrf_queue_capability",
               "Most the queue's subtree may hold, in canonical units; only resources with a "
               "capability.",
               &QueueInfo::capability, limited);
  per_resource("hdrf_queue_guarantee",
               "Resources reserved for the queue's subtree, in canonical units; only resources "
               "with a guarantee.",
               &QueueInfo::guarantee, positive);
  if (options.cluster) {
    per_resource("hdrf_queue_real_capability",
                 "min(capability, parent's real capability - siblings' guarantees), in "
                 "canonical units (docs/spec.md §6).",
                 &QueueInfo::real_capability, limited);
  }
}

}  // namespace

std::string MetricsText(const Engine& engine, const MetricsOptions& options) {
  const std::vector<std::string> names = engine.ResourceNames();
  const std::vector<QueueInfo> queues = engine.Queues();
  Writer w;
  EngineFamilies(engine, options, names, queues.size(), w);
  QueueFamilies(queues, names, options, w);
  return w.Take();
}

}  // namespace hdrf
