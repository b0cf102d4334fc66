// ShardedLatencyHistogram (header-only): a log-linear (HDR-style) histogram of latencies
// in nanoseconds, written from many threads without a shared hot cache line.
//
//   hdrf::ShardedLatencyHistogram h;           // one per engine
//   h.Record(ns);                               // any thread, lock-free
//   auto s = h.Snapshot();                      // any thread
//   s.Percentile(99.9);                         // ns
//   hdrf::LatencyHistogramText(s);              // hdrf/metrics.h: Prometheus
//
// Buckets: values below 2^kSubBits ns (64 ns) have a bucket each; above,
// every power of two [2^k, 2^(k+1)) is split into 2^kSubBits equal buckets,
// so a bucket is at most 1/64 (1.6 %) of its values wide. Values up to
// kMaxTrackable (2^36 - 1 ns, about 68.7 s) are bucketed; larger ones are
// counted in the last bucket (and in max, sum exactly).
//
// Threads: Record picks a shard by a per-thread index (threads are spread
// round robin over the shards when they first record) and does relaxed
// atomic adds on that shard only. Each shard is aligned to 64 bytes and its
// size is a multiple of 64, so two shards never share a cache line.
// Snapshot reads every shard with relaxed loads: under concurrent Record
// calls it is a consistent-enough view (each counter exact, the counters
// possibly a few records apart), which is what a metrics scrape needs.
#ifndef HDRF_LATENCY_HISTOGRAM_H_
#define HDRF_LATENCY_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace hdrf {

class ShardedLatencyHistogram {
 public:
  static constexpr int kSubBits = 6;                       // 64 sub-buckets per octave
  static constexpr int kMaxBits = 36;                      // values < 2^36 ns are bucketed
  static constexpr uint64_t kMaxTrackable = (uint64_t{1} << kMaxBits) - 1;
  static constexpr size_t kSubCount = size_t{1} << kSubBits;
  static constexpr size_t kBuckets = kSubCount + (kMaxBits - kSubBits) * kSubCount;

  // The bucket of a value (values above kMaxTrackable go to the last one).
  static size_t BucketOf(uint64_t ns);
  // Smallest and largest value of bucket i (inclusive).
  static uint64_t BucketLow(size_t i);
  static uint64_t BucketHigh(size_t i);

  // A merged copy of the counters.
  struct Snapshot {
    std::vector<uint64_t> counts = std::vector<uint64_t>(kBuckets, 0);  // per bucket
    uint64_t count = 0;   // number of records
    uint64_t sum_ns = 0;  // sum of the recorded values (wraps after 584 years)
    uint64_t min_ns = 0;  // 0 when empty
    uint64_t max_ns = 0;

    // Adds `other` (from another histogram, or another engine).
    void Merge(const Snapshot& other);
    // Counts `n` values of `ns` in this copy: a histogram with one writer
    // and no atomics (a thread's own, merged later; hdrf replay's workers).
    void Record(uint64_t ns, uint64_t n = 1) {
      counts[BucketOf(ns)] += n;
      min_ns = count ? std::min(min_ns, ns) : ns;
      max_ns = std::max(max_ns, ns);
      count += n;
      sum_ns += ns * n;
    }
    // The value at percentile p (0..100): the largest value of the bucket
    // holding the ceil(p/100 * count)-th smallest record, clamped to
    // [min_ns, max_ns] (max_ns for the last bucket, which also holds the
    // values above kMaxTrackable); so it is never below the true value and
    // at most 1/64 above it. 0 when empty. p <= 0 gives min_ns, p >= 100 max_ns.
    uint64_t Percentile(double p) const;
    // Number of records <= ns, exact when ns is a bucket's high end
    // (BucketHigh), else counted up to the last bucket that ends <= ns.
    uint64_t CountAtMost(uint64_t ns) const;
    double MeanNs() const { return count ? static_cast<double>(sum_ns) / static_cast<double>(count) : 0; }
  };

  // `shards` = 0: one per hardware thread (at least 1, at most 64).
  explicit ShardedLatencyHistogram(size_t shards = 0);
  ~ShardedLatencyHistogram();
  ShardedLatencyHistogram(const ShardedLatencyHistogram&) = delete;
  ShardedLatencyHistogram& operator=(const ShardedLatencyHistogram&) = delete;

  // Records one latency. Thread-safe, lock-free, no allocation.
  void Record(uint64_t ns) {
    Shard& s = shards_[ThreadSlot() % nshards_];
    s.counts[BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
    s.sum.fetch_add(ns, std::memory_order_relaxed);
    uint64_t m = s.max.load(std::memory_order_relaxed);
    while (ns > m && !s.max.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
    }
    m = s.min.load(std::memory_order_relaxed);
    while (ns < m && !s.min.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
    }
  }
  // Adds a snapshot's counts (for example one restored or taken elsewhere).
  void Merge(const Snapshot& other);
  // Reads every shard (thread-safe against Record).
  Snapshot Take() const;
  // Zeroes every shard. Not atomic against concurrent Record calls: a record
  // that races with it may be half kept (its bucket but not its sum).
  void Reset();
  size_t shard_count() const { return nshards_; }

 private:
  struct alignas(64) Shard {
    std::array<std::atomic<uint64_t>, kBuckets> counts{};
    std::atomic<uint64_t> sum{0};
    std::atomic<uint64_t> max{0};
    std::atomic<uint64_t> min{UINT64_MAX};
  };
  static_assert(sizeof(Shard) % 64 == 0, "shards must not share a cache line");
  static size_t ThreadSlot();

  size_t nshards_;
  std::unique_ptr<Shard[]> shards_;
};

inline size_t ShardedLatencyHistogram::BucketOf(uint64_t ns) {
  if (ns > kMaxTrackable) ns = kMaxTrackable;
  if (ns < kSubCount) return static_cast<size_t>(ns);
  const int msb = 63 - __builtin_clzll(ns);  // >= kSubBits
  const int shift = msb - kSubBits;
  const size_t sub = static_cast<size_t>(ns >> shift) - kSubCount;  // 0 .. kSubCount-1
  return kSubCount + static_cast<size_t>(shift) * kSubCount + sub;
}

inline uint64_t ShardedLatencyHistogram::BucketLow(size_t i) {
  if (i < kSubCount) return i;
  const size_t shift = (i - kSubCount) / kSubCount;
  const size_t sub = (i - kSubCount) % kSubCount;
  return static_cast<uint64_t>(kSubCount + sub) << shift;
}

inline uint64_t ShardedLatencyHistogram::BucketHigh(size_t i) {
  if (i < kSubCount) return i;
  const size_t shift = (i - kSubCount) / kSubCount;
  return BucketLow(i) + (uint64_t{1} << shift) - 1;
}

inline size_t ShardedLatencyHistogram::ThreadSlot() {
  static std::atomic<size_t> next{0};
  thread_local const size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  return slot;
}

inline ShardedLatencyHistogram::ShardedLatencyHistogram(size_t shards) {
  if (shards == 0) shards = std::thread::hardware_concurrency();
  nshards_ = std::clamp<size_t>(shards, 1, 64);
  shards_ = std::make_unique<Shard[]>(nshards_);
}

inline ShardedLatencyHistogram::~ShardedLatencyHistogram() = default;

inline ShardedLatencyHistogram::Snapshot ShardedLatencyHistogram::Take() const {
  Snapshot s;
  uint64_t mn = UINT64_MAX;
  for (size_t k = 0; k < nshards_; ++k) {
    const Shard& sh = shards_[k];
    for (size_t i = 0; i < kBuckets; ++i) {
      const uint64_t c = sh.counts[i].load(std::memory_order_relaxed);
      s.counts[i] += c;
      s.count += c;
    }
    s.sum_ns += sh.sum.load(std::memory_order_relaxed);
    s.max_ns = std::max(s.max_ns, sh.max.load(std::memory_order_relaxed));
    mn = std::min(mn, sh.min.load(std::memory_order_relaxed));
  }
  s.min_ns = s.count ? std::min(mn, s.max_ns) : 0;
  return s;
}

inline void ShardedLatencyHistogram::Merge(const Snapshot& other) {
  if (other.count == 0) return;
  Shard& sh = shards_[ThreadSlot() % nshards_];
  for (size_t i = 0; i < kBuckets && i < other.counts.size(); ++i)
    if (other.counts[i]) sh.counts[i].fetch_add(other.counts[i], std::memory_order_relaxed);
  sh.sum.fetch_add(other.sum_ns, std::memory_order_relaxed);
  uint64_t m = sh.max.load(std::memory_order_relaxed);
  while (other.max_ns > m && !sh.max.compare_exchange_weak(m, other.max_ns, std::memory_order_relaxed)) {
  }
  m = sh.min.load(std::memory_order_relaxed);
  while (other.min_ns < m && !sh.min.compare_exchange_weak(m, other.min_ns, std::memory_order_relaxed)) {
  }
}

inline void ShardedLatencyHistogram::Reset() {
  for (size_t k = 0; k < nshards_; ++k) {
    Shard& sh = shards_[k];
    for (auto& c : sh.counts) c.store(0, std::memory_order_relaxed);
    sh.sum.store(0, std::memory_order_relaxed);
    sh.max.store(0, std::memory_order_relaxed);
    sh.min.store(UINT64_MAX, std::memory_order_relaxed);
  }
}

inline void ShardedLatencyHistogram::Snapshot::Merge(const Snapshot& other) {
  if (other.count == 0) return;
  if (counts.size() < kBuckets) counts.resize(kBuckets, 0);
  for (size_t i = 0; i < kBuckets && i < other.counts.size(); ++i) counts[i] += other.counts[i];
  min_ns = count ? std::min(min_ns, other.min_ns) : other.min_ns;
  max_ns = std::max(max_ns, other.max_ns);
  count += other.count;
  sum_ns += other.sum_ns;
}

inline uint64_t ShardedLatencyHistogram::Snapshot::Percentile(double p) const {
  if (count == 0) return 0;
  if (!(p > 0)) return min_ns;  // also NaN
  if (p >= 100) return max_ns;
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count)));
  rank = std::clamp<uint64_t>(rank, 1, count);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) {
      if (i + 1 == kBuckets) return max_ns;  // the last bucket also holds everything above
      return std::clamp(BucketHigh(i), min_ns, max_ns);
    }
  }
  return max_ns;
}

inline uint64_t ShardedLatencyHistogram::Snapshot::CountAtMost(uint64_t ns) const {
  uint64_t n = 0;
  for (size_t i = 0; i < counts.size() && BucketHigh(i) <= ns; ++i) n += counts[i];
  return n;
}

}  // namespace hdrf

#endif  // HDRF_LATENCY_HISTOGRAM_H_
