// Engine metrics in the Prometheus text exposition format 0.0.4.
//
//   std::string text = hdrf::MetricsText(engine);   // serve it on /metrics
//
// Families (docs/metrics.md lists each with its type, labels and unit):
//   per engine: hdrf_events_total, hdrf_jobs, hdrf_queues,
//               hdrf_durability_lag_events, hdrf_cluster_capacity{resource},
//               hdrf_follower_lag_events, hdrf_follower_lag_seconds (only
//               on a follower, Engine::OpenFollower),
//               hdrf_event_latency_seconds (histogram, from
//               Engine::EventLatency once it holds a sample);
//   per queue (label queue="root/eng/dev"): hdrf_queue_allocated{resource},
//               hdrf_queue_share, hdrf_queue_key, hdrf_queue_blocked,
//               hdrf_queue_weight, hdrf_queue_state{state},
//               hdrf_queue_jobs{state}, hdrf_queue_capability{resource},
//               hdrf_queue_guarantee{resource},
//               hdrf_queue_real_capability{resource}.
// Amounts are in the canonical units of docs/spec.md §2 (cpu in millicores, memory
// in bytes, other resources in milli-units).
//
// Consistency: every per-queue sample comes from one snapshot of the tree
// (Engine::Queues()); the per-engine counts are read by separate calls, so
// under concurrent events they may be a few events apart from the queues.
//
// Thread safety: MetricsText may be called from any thread while events are
// applied.
#ifndef HDRF_METRICS_H_
#define HDRF_METRICS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "hdrf/engine.h"
#include "hdrf/latency_histogram.h"

namespace hdrf {

struct MetricsOptions {
  // False omits hdrf_queue_real_capability and hdrf_cluster_capacity (for a
  // tree shown over an invented cluster, as `hdrf queues` does for a
  // configuration without one).
  bool cluster = true;
  // When set, hdrf_event_latency_seconds is rendered from this snapshot by
  // LatencyHistogramText. Otherwise it comes from the engine's own sampled
  // histogram (Engine::EventLatency), once that holds a sample.
  const ShardedLatencyHistogram::Snapshot* event_latency_snapshot = nullptr;
};

// The metrics of `engine` in Prometheus text format 0.0.4: for each family
// one `# HELP` and one `# TYPE` line followed by its samples; every line ends
// with '\n'.
std::string MetricsText(const Engine& engine, const MetricsOptions& options = {});

// A snapshot of a ShardedLatencyHistogram (nanoseconds) as one Prometheus
// histogram family `name` in seconds: HELP and TYPE lines, then one
// `name_bucket{le="..."}` sample per bound of kLatencyBucketBoundsNs,
// le="+Inf", `name_sum` and `name_count`. The counts are cumulative and
// exact: each le is the upper end (inclusive, in seconds) of the histogram
// bucket that holds the nominal bound, so it lies at most 1/64 above it
// (le="1.007e-06" for the nominal 1 us, "2.527e-06" for 2.5 us). The same
// le values are used by every engine, so series can be aggregated.
std::string LatencyHistogramText(const ShardedLatencyHistogram::Snapshot& snapshot,
                                 std::string_view name = "hdrf_event_latency_seconds",
                                 std::string_view help = "Latency of accepted events, in seconds.");
// Nominal bounds of LatencyHistogramText, in nanoseconds (1 us .. 10 s,
// 1-2.5-5 steps).
inline constexpr std::array<uint64_t, 22> kLatencyBucketBoundsNs = {
    1000,      2500,      5000,      10000,      25000,      50000,      100000,     250000,
    500000,    1000000,   2500000,   5000000,    10000000,   25000000,   50000000,   100000000,
    250000000, 500000000, 1000000000, 2500000000, 5000000000, 10000000000};

// Helpers of the format, exposed for tests and other exporters.
// Escapes a label value: backslash, double quote and newline.
std::string EscapeLabelValue(std::string_view value);
// A sample value: the shortest decimal that reads back to `v`; NaN, +Inf, -Inf.
std::string FormatSampleValue(double v);

}  // namespace hdrf

#endif  // HDRF_METRICS_H_
