// ShardedLatencyHistogram (api/hdrf/latency_histogram.h) and its Prometheus
// rendering (api/hdrf/metrics.h LatencyHistogramText).
#include "hdrf/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/metrics.h"

namespace hdrf {
namespace {

using H = ShardedLatencyHistogram;

uint64_t Splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A latency-like value: log-uniform over 1 ns .. ~68 s, some exact small ones.
uint64_t RandomLatency(uint64_t& s) {
  const uint64_t r = Splitmix(s);
  const int bits = static_cast<int>(r % 37);
  const uint64_t v = bits == 0 ? (r >> 8) % 64 : (uint64_t{1} << (bits - 1)) + ((r >> 8) % (uint64_t{1} << (bits - 1)));
  return std::min(v, H::kMaxTrackable);
}

TEST(LatencyHistogram, BucketsTileTheRangeWithBoundedWidth) {
  EXPECT_EQ(H::BucketLow(0), 0u);
  for (size_t i = 0; i < H::kBuckets; ++i) {
    ASSERT_LE(H::BucketLow(i), H::BucketHigh(i));
    ASSERT_EQ(H::BucketOf(H::BucketLow(i)), i) << i;
    ASSERT_EQ(H::BucketOf(H::BucketHigh(i)), i) << i;
    if (i + 1 < H::kBuckets) {
      ASSERT_EQ(H::BucketHigh(i) + 1, H::BucketLow(i + 1)) << i;
    }
    // Width at most 1/64 of the bucket's low end (exact below 64 ns).
    const uint64_t width = H::BucketHigh(i) - H::BucketLow(i) + 1;
    if (i < H::kSubCount) {
      ASSERT_EQ(width, 1u);
    } else {
      ASSERT_LE(width * 64, H::BucketLow(i)) << i;
    }
  }
  EXPECT_EQ(H::BucketHigh(H::kBuckets - 1), H::kMaxTrackable);
  EXPECT_EQ(H::BucketOf(H::kMaxTrackable + 1), H::kBuckets - 1);
  EXPECT_EQ(H::BucketOf(UINT64_MAX), H::kBuckets - 1);
  EXPECT_EQ(H::BucketOf(1000), H::BucketOf(1007));
  EXPECT_NE(H::BucketOf(1007), H::BucketOf(1008));
}

TEST(LatencyHistogram, EmptySnapshot) {
  H h(4);
  H::Snapshot s = h.Take();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.sum_ns, 0u);
  EXPECT_EQ(s.min_ns, 0u);
  EXPECT_EQ(s.max_ns, 0u);
  EXPECT_EQ(s.Percentile(50), 0u);
  EXPECT_EQ(s.Percentile(100), 0u);
  EXPECT_EQ(s.MeanNs(), 0);
}

TEST(LatencyHistogram, PercentilesWithinOneBucketOfExact) {
  H h(3);
  std::vector<uint64_t> values;
  uint64_t seed = 42;
  for (int i = 0; i < 20000; ++i) values.push_back(RandomLatency(seed));
  values.push_back(0);
  values.push_back(H::kMaxTrackable);
  for (uint64_t v : values) h.Record(v);
  H::Snapshot s = h.Take();
  std::sort(values.begin(), values.end());
  uint64_t sum = 0;
  for (uint64_t v : values) sum += v;
  EXPECT_EQ(s.count, values.size());
  EXPECT_EQ(s.sum_ns, sum);
  EXPECT_EQ(s.min_ns, 0u);
  EXPECT_EQ(s.max_ns, H::kMaxTrackable);
  for (double p : {0.001, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99}) {
    const size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(values.size())));
    const uint64_t exact = values[rank - 1];
    const uint64_t got = s.Percentile(p);
    EXPECT_GE(got, exact) << "p" << p;
    EXPECT_LE(got - exact, exact / 64) << "p" << p << " exact " << exact;
    EXPECT_EQ(H::BucketOf(got), H::BucketOf(exact)) << "p" << p;
  }
  EXPECT_EQ(s.Percentile(0), 0u);
  EXPECT_EQ(s.Percentile(100), H::kMaxTrackable);
}

TEST(LatencyHistogram, ExactBelow64AndClampedToObservedRange) {
  H h(1);
  for (uint64_t v = 1; v <= 10; ++v) h.Record(v);
  H::Snapshot s = h.Take();
  EXPECT_EQ(s.Percentile(50), 5u);
  EXPECT_EQ(s.Percentile(10), 1u);
  EXPECT_EQ(s.Percentile(100), 10u);
  H one(1);
  one.Record(1000);  // bucket [1000, 1007]: the answer is clamped to max
  EXPECT_EQ(one.Take().Percentile(50), 1000u);
}

TEST(LatencyHistogram, HugeValuesGoToTheLastBucketWithExactMaxAndSum) {
  H h(2);
  const uint64_t big = uint64_t{1} << 40;  // ~18 minutes
  h.Record(big);
  h.Record(5);
  H::Snapshot s = h.Take();
  EXPECT_EQ(s.counts[H::kBuckets - 1], 1u);
  EXPECT_EQ(s.max_ns, big);
  EXPECT_EQ(s.sum_ns, big + 5);
  EXPECT_EQ(s.Percentile(100), big);
  EXPECT_EQ(s.Percentile(99), big);  // the last bucket answers max, never below the truth
}

TEST(LatencyHistogram, MergeEqualsRecordingIntoOne) {
  H a(2), b(5), all(1);
  uint64_t seed = 7;
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = RandomLatency(seed);
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  H::Snapshot m = a.Take();
  m.Merge(b.Take());
  H::Snapshot want = all.Take();
  EXPECT_EQ(m.counts, want.counts);
  EXPECT_EQ(m.count, want.count);
  EXPECT_EQ(m.sum_ns, want.sum_ns);
  EXPECT_EQ(m.min_ns, want.min_ns);
  EXPECT_EQ(m.max_ns, want.max_ns);
  // Merging into an empty snapshot and into a histogram.
  H::Snapshot empty;
  empty.Merge(want);
  EXPECT_EQ(empty.min_ns, want.min_ns);
  EXPECT_EQ(empty.counts, want.counts);
  H c(3);
  c.Merge(want);
  c.Merge(H::Snapshot{});
  H::Snapshot cs = c.Take();
  EXPECT_EQ(cs.counts, want.counts);
  EXPECT_EQ(cs.min_ns, want.min_ns);
  EXPECT_EQ(cs.max_ns, want.max_ns);
  c.Reset();
  EXPECT_EQ(c.Take().count, 0u);
  EXPECT_EQ(c.Take().min_ns, 0u);
}

// A snapshot recorded into directly (one writer, no atomics) equals the
// sharded histogram's snapshot of the same values, repeated records included.
TEST(LatencyHistogram, SnapshotRecordEqualsShardedRecord) {
  H sharded(4);
  H::Snapshot direct;
  uint64_t seed = 11;
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = RandomLatency(seed);
    const uint64_t n = 1 + i % 3;
    for (uint64_t k = 0; k < n; ++k) sharded.Record(v);
    direct.Record(v, n);
  }
  direct.Record(uint64_t{1} << 40);  // above kMaxTrackable: the last bucket
  sharded.Record(uint64_t{1} << 40);
  H::Snapshot want = sharded.Take();
  EXPECT_EQ(direct.counts, want.counts);
  EXPECT_EQ(direct.count, want.count);
  EXPECT_EQ(direct.sum_ns, want.sum_ns);
  EXPECT_EQ(direct.min_ns, want.min_ns);
  EXPECT_EQ(direct.max_ns, want.max_ns);
  for (double p : {50.0, 99.0, 99.9}) EXPECT_EQ(direct.Percentile(p), want.Percentile(p)) << p;
}

// Many threads, each with its own values: nothing is lost (run under TSan
// in the concurrency suite too).
TEST(LatencyHistogram, ConcurrentRecordLosesNothing) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100000;
  H h(4);  // fewer shards than threads: shards are shared, adds stay atomic
  std::vector<std::thread> threads;
  std::vector<uint64_t> sums(kThreads), maxes(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t seed = 1000 + t;
      for (int i = 0; i < kPerThread; ++i) {
        const uint64_t v = RandomLatency(seed) % 100000000;
        sums[t] += v;
        maxes[t] = std::max(maxes[t], v);
        h.Record(v);
      }
    });
  // A reader takes snapshots meanwhile: counts never go down.
  uint64_t last = 0;
  for (int i = 0; i < 50; ++i) {
    const uint64_t c = h.Take().count;
    EXPECT_GE(c, last);
    last = c;
  }
  for (auto& th : threads) th.join();
  H::Snapshot s = h.Take();
  uint64_t sum = 0, mx = 0;
  for (int t = 0; t < kThreads; ++t) {
    sum += sums[t];
    mx = std::max(mx, maxes[t]);
  }
  EXPECT_EQ(s.count, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.sum_ns, sum);
  EXPECT_EQ(s.max_ns, mx);
  EXPECT_EQ(h.shard_count(), 4u);
}

// Parses `name_bucket{le="X"} N` lines.
std::vector<std::pair<std::string, uint64_t>> Buckets(const std::string& text, const std::string& name) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::istringstream in(text);
  std::string line;
  const std::string prefix = name + "_bucket{le=\"";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t q = line.find('"', prefix.size());
    out.emplace_back(line.substr(prefix.size(), q - prefix.size()), std::stoull(line.substr(q + 3)));
  }
  return out;
}

TEST(LatencyHistogramText, PrometheusHistogramWithExactCumulativeCounts) {
  H h(2);
  h.Record(999);
  h.Record(1000);
  h.Record(1007);   // same bucket as 1000: le="1.007e-06"
  h.Record(1008);   // next bucket
  h.Record(3000000);
  h.Record(uint64_t{1} << 40);  // above every bound
  const H::Snapshot s = h.Take();
  const std::string text = LatencyHistogramText(s);
  EXPECT_NE(text.find("# HELP hdrf_event_latency_seconds "), std::string::npos);
  EXPECT_NE(text.find("# TYPE hdrf_event_latency_seconds histogram\n"), std::string::npos);
  auto b = Buckets(text, "hdrf_event_latency_seconds");
  ASSERT_EQ(b.size(), kLatencyBucketBoundsNs.size() + 1);
  EXPECT_EQ(b[0].first, "1.007e-06");
  EXPECT_EQ(b[0].second, 3u);  // 999, 1000, 1007
  EXPECT_EQ(b[1].first, "2.527e-06");
  EXPECT_EQ(b[1].second, 4u);
  EXPECT_EQ(b.back().first, "+Inf");
  EXPECT_EQ(b.back().second, 6u);
  // Cumulative, each le within 1/64 above its nominal bound, and exact.
  for (size_t i = 0; i < kLatencyBucketBoundsNs.size(); ++i) {
    const double le = std::stod(b[i].first);
    const double nominal = static_cast<double>(kLatencyBucketBoundsNs[i]) / 1e9;
    EXPECT_GE(le, nominal);
    EXPECT_LE(le, nominal * (1 + 1.0 / 64));
    if (i > 0) {
      EXPECT_GE(b[i].second, b[i - 1].second);
    }
    EXPECT_EQ(b[i].second, s.CountAtMost(static_cast<uint64_t>(le * 1e9 + 0.5))) << b[i].first;
  }
  EXPECT_EQ(b[10].second, 4u);  // le ~2.52 ms: 3 ms is not in it
  EXPECT_EQ(b[11].second, 5u);  // le ~5 ms
  EXPECT_NE(text.find("hdrf_event_latency_seconds_count 6\n"), std::string::npos);
  const double sum = (999 + 1000 + 1007 + 1008 + 3000000 + static_cast<double>(uint64_t{1} << 40)) / 1e9;
  EXPECT_NE(text.find("hdrf_event_latency_seconds_sum " + FormatSampleValue(sum) + "\n"), std::string::npos);
  // Every line ends with a newline, no empty lines.
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find("\n\n"), std::string::npos);
}

TEST(LatencyHistogramText, CustomNameAndEmpty) {
  const std::string text = LatencyHistogramText(H::Snapshot{}, "x_seconds", "Help.");
  EXPECT_EQ(text.rfind("# HELP x_seconds Help.\n# TYPE x_seconds histogram\n", 0), 0u);
  for (auto& [le, n] : Buckets(text, "x_seconds")) EXPECT_EQ(n, 0u) << le;
  EXPECT_NE(text.find("x_seconds_count 0\n"), std::string::npos);
  EXPECT_NE(text.find("x_seconds_sum 0\n"), std::string::npos);
}

TEST(LatencyHistogramText, MetricsTextUsesTheSnapshot) {
  auto engine = Engine::Create({{"cpu", 4000}}, {}, {});
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  H h(1);
  h.Record(2000);
  const H::Snapshot s = h.Take();
  MetricsOptions o;
  o.event_latency_snapshot = &s;
  const std::string text = MetricsText(**engine, o);
  EXPECT_NE(text.find("# TYPE hdrf_event_latency_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("hdrf_event_latency_seconds_bucket{le=\"1.007e-06\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("hdrf_event_latency_seconds_bucket{le=\"2.527e-06\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("hdrf_event_latency_seconds_count 1\n"), std::string::npos);
  // Without a histogram the family is absent.
  EXPECT_EQ(MetricsText(**engine).find("hdrf_event_latency_seconds"), std::string::npos);
}

// Engine::EventLatency: accepted single-event calls, one in
// latency_sample_every of them (per thread); refused calls never count.
TEST(EngineEventLatency, SamplesAcceptedCallsOneInN) {
  for (uint32_t every : {1u, 4u, 0u}) {
    EngineOptions o;
    o.latency_sample_every = every;
    auto engine = Engine::Create({{"cpu", 1000000}}, {}, o);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    JobSpec j;
    j.name = "a";
    j.queue = "root";
    j.tasks = 100;
    j.task = {{"cpu", 1000}};
    auto ref = (*engine)->Submit(j);  // call 1
    ASSERT_TRUE(ref.ok());
    for (int i = 0; i < 99; ++i) ASSERT_TRUE((*engine)->Allocate(*ref).ok());  // calls 2..100
    const uint64_t before = (*engine)->EventLatency().count;
    for (int i = 0; i < 8; ++i) EXPECT_FALSE((*engine)->Release(*ref, 1000).ok());  // refused
    const H::Snapshot s = (*engine)->EventLatency();
    EXPECT_EQ(s.count, before) << every;
    EXPECT_EQ(s.count, every == 0 ? 0u : 100u / every) << every;
    if (every != 0) {
      EXPECT_GT(s.max_ns, 0u);
    }
    // MetricsText renders the engine's own histogram once it has samples.
    const bool shown = MetricsText(**engine).find("hdrf_event_latency_seconds_count") != std::string::npos;
    EXPECT_EQ(shown, every != 0) << every;
  }
  EngineOptions bad;
  bad.latency_sample_every = 3;
  auto e = Engine::Create({{"cpu", 1}}, {}, bad);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("power of two"), std::string::npos);
}

}  // namespace
}  // namespace hdrf
