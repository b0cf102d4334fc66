// The synthetic trace generator behind `hdrf trace gen` (hdrf/trace.h
// GenerateTrace): a queue tree, jobs with task shapes, a cluster sized to a
// fraction of their demand, then allocate/release events that stay within
// each job's tasks and the cluster. Integer arithmetic and one fixed PRNG
// stream, drawn in a fixed order: same options, same trace.
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "hdrf/trace.h"

namespace hdrf {
namespace {

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = SplitMix64(seed);
  }
  uint64_t Next() {
    uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, bound), bound >= 1 (multiply-shift; the bias is < 2^-40).
  uint64_t Below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * bound) >> 64);
  }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }

 private:
  uint64_t s_[4];
};

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

// Resource order: sorted names, as the engine indexes them.
enum { kCpu = 0, kMemory = 1, kGpu = 2, kPods = 3, kR = 4 };
const char* const kResourceNames[kR] = {"cpu", "memory", "nvidia.com/gpu", "pods"};
// Task amounts are multiples of these granules, so a capacity in whole
// granules can be used up exactly (saturated) and one off by half a granule
// never is.
const int64_t kGranule[kR] = {250, 512 * kMi, 1000, 1000};


Status CheckOptions(const TraceGenOptions& o, uint64_t* leaves, uint64_t* queues) {
  if (o.jobs < 0 || o.jobs > UINT32_MAX)
    return Status::InvalidArgument("trace gen: --jobs must be in 0..4294967295");
  if (o.depth < 0 || o.depth > 16) return Status::InvalidArgument("trace gen: --depth must be in 0..16");
  if (o.fanout < 1) return Status::InvalidArgument("trace gen: --fanout must be >= 1");
  if (o.events < 0) return Status::InvalidArgument("trace gen: --events must be >= 0");
  if (o.events > 0 && o.jobs == 0) return Status::InvalidArgument("trace gen: events need --jobs >= 1");
  if (o.max_tasks < 1 || o.max_tasks > kMaxTraceEventN)
    return Status::InvalidArgument("trace gen: --max-tasks must be in 1.." + std::to_string(kMaxTraceEventN));
  if (o.alloc_percent < 0 || o.alloc_percent > 100)
    return Status::InvalidArgument("trace gen: --alloc-percent must be in 0..100");
  if (o.users < 0) return Status::InvalidArgument("trace gen: --users must be >= 0");
  if (!(o.load >= 0) || o.load > 100) return Status::InvalidArgument("trace gen: --load must be in (0, 100]");
  for (const auto& [name, amount] : o.cluster) {
    if (std::find(kResourceNames, kResourceNames + kR, name) == kResourceNames + kR)
      return Status::InvalidArgument("trace gen: cluster resource '" + name +
                                     "' is not one the generator uses (cpu, memory, nvidia.com/gpu, pods)");
    if (amount <= 0) return Status::InvalidArgument("trace gen: cluster " + name + " must be > 0");
  }
  *leaves = 1;
  *queues = 0;
  for (int d = 0; d < o.depth; ++d) {
    *leaves *= static_cast<uint64_t>(o.fanout);
    *queues += *leaves;
    if (*leaves > 10000000)
      return Status::InvalidArgument("trace gen: --fanout^--depth exceeds 10^7 leaf queues");
  }
  return Status::Ok();
}

// The queue tree, depth-first so parents precede children, weights 1..10;
// returns the leaf paths.
std::vector<std::string> GenQueues(const TraceGenOptions& o, Rng& rng, uint64_t leaves, uint64_t queues, Trace* t) {
  std::vector<std::string> leaf_paths;
  leaf_paths.reserve(leaves);
  t->queues.reserve(queues);
  std::vector<std::string> level = {"root"};
  for (int d = 0; d < o.depth; ++d) {
    std::vector<std::string> next;
    next.reserve(level.size() * static_cast<size_t>(o.fanout));
    for (const auto& parent : level)
      for (int c = 0; c < o.fanout; ++c) next.push_back(parent + "/q" + std::to_string(c));
    level = std::move(next);
  }
  leaf_paths = std::move(level);
  // Emit every queue in path (depth-first) order with a weight.
  std::function<void(const std::string&, int)> walk = [&](const std::string& p, int d) {
    if (d == o.depth) return;
    for (int c = 0; c < o.fanout; ++c) {
      QueueSpec q;
      q.path = p + "/q" + std::to_string(c);
      q.weight = static_cast<double>(rng.Between(1, 10));
      std::string path = q.path;
      t->queues.push_back(std::move(q));
      walk(path, d + 1);
    }
  };
  walk("root", 0);
  return leaf_paths;
}

// The jobs' task shapes (kR amounts each) and task counts, and what they
// demand in all.
struct Shapes {
  std::vector<int64_t> shape;
  std::vector<int64_t> tasks;
  __int128 demand[kR] = {0, 0, 0, 0};
  int64_t max_task[kR] = {0, 0, 0, 0};
};

// One job's task shape: cpu batch, memory-heavy service or GPU training.
void GenShape(Rng& rng, int64_t* s) {
  uint64_t kind = rng.Below(100);
  if (kind < 55) {  // cpu batch
    s[kCpu] = 250 * rng.Between(1, 16);
    s[kMemory] = 512 * kMi * rng.Between(1, 32);
  } else if (kind < 80) {  // memory-heavy service
    s[kCpu] = 500 * rng.Between(1, 4);
    s[kMemory] = kGi * rng.Between(4, 64);
  } else {  // gpu training
    s[kGpu] = 1000 * (int64_t{1} << rng.Below(4));  // 1, 2, 4 or 8 GPUs
    s[kCpu] = 1000 * rng.Between(2, 16);
    s[kMemory] = 4 * kGi * rng.Between(2, 32);
  }
  s[kPods] = 1000;
}

Shapes GenJobs(const TraceGenOptions& o, Rng& rng, const std::vector<std::string>& leaf_paths, Trace* t) {
  const int64_t N = o.jobs;
  const int64_t users = o.users > 0 ? o.users : std::clamp<int64_t>(N / 100, 4, 1000);
  size_t width = 1;
  for (int64_t x = std::max<int64_t>(N - 1, 1); x >= 10; x /= 10) ++width;
  Shapes sh;
  sh.shape.resize(static_cast<size_t>(N) * kR);
  sh.tasks.resize(static_cast<size_t>(N));
  t->jobs.resize(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) {
    JobSpec& j = t->jobs[static_cast<size_t>(i)];
    std::string digits = std::to_string(i);
    j.name.reserve(1 + std::max<size_t>(digits.size(), width));
    j.name = "j";
    j.name.append(std::max<size_t>(digits.size(), width) - digits.size(), '0');
    j.name += digits;
    j.queue = leaf_paths[rng.Below(leaf_paths.size())];
    j.user = "u" + std::to_string(rng.Below(static_cast<uint64_t>(users)));
    j.tasks = rng.Between(1, o.max_tasks);
    int64_t* s = &sh.shape[static_cast<size_t>(i) * kR];
    GenShape(rng, s);
    for (int r = 0; r < kR; ++r) {
      if (s[r] > 0) j.task[kResourceNames[r]] = s[r];
      sh.demand[r] += static_cast<__int128>(s[r]) * j.tasks;
      sh.max_task[r] = std::max(sh.max_task[r], s[r]);
    }
    sh.tasks[static_cast<size_t>(i)] = j.tasks;
  }
  return sh;
}

// Cluster: load x demand per resource, at least the largest task.
// - Default: cpu, memory and GPUs get whole granules plus half a granule,
//   so they come close to full and allocations hit the limits, yet free
//   never drops to exactly 0: no resource is ever saturated (docs/spec.md §4), the
//   plain ingest case. Pods get the full demand (never the limit).
// - `saturate`: whole granules; pods (one per task, needed by every job)
//   and GPUs get `load`, cpu and memory 0.3 more so that they rarely bind.
// - `o.cluster` replaces the capacity of each resource it names (half a
//   granule more unless `saturate`, as above); it must hold the largest task.
Status GenCluster(const TraceGenOptions& o, const Shapes& sh, int64_t cap[kR], Trace* t) {
  const double load = o.load > 0 ? o.load : (o.saturate ? 0.45 : 0.6);
  for (int r = 0; r < kR; ++r) {
    double f = load;
    if (o.saturate && (r == kCpu || r == kMemory)) f = load + 0.3;
    if (!o.saturate && r == kPods) f = std::max(1.0, load);
    const int64_t permille = std::max<int64_t>(1, std::llround(f * 1000));
    __int128 c = sh.demand[r] * permille / 1000;
    if (sh.demand[r] == 0) c = 8 * kGranule[r];
    c = std::max<__int128>(c, sh.max_task[r]);
    c -= c % kGranule[r];
    if (c > INT64_MAX / 4) c = INT64_MAX / 4 - (INT64_MAX / 4) % kGranule[r];
    if (!o.saturate && r != kPods) c += kGranule[r] / 2;
    if (auto given = o.cluster.find(kResourceNames[r]); given != o.cluster.end()) {
      if (given->second < sh.max_task[r])
        return Status::InvalidArgument("trace gen: cluster " + given->first + " " + std::to_string(given->second) +
                                       " is smaller than the largest task (" + std::to_string(sh.max_task[r]) + ")");
      c = given->second;
      if (!o.saturate && given->second <= INT64_MAX / 2) c += kGranule[r] / 2;
    }
    cap[r] = static_cast<int64_t>(c);
    t->cluster[kResourceNames[r]] = cap[r];
  }
  return Status::Ok();
}

// The task events: what runs where, kept in step with the events written.
class EventGen {
 public:
  EventGen(const TraceGenOptions& o, Rng& rng, const Shapes& sh, const int64_t cap[kR], Trace* t)
      : o_(o), rng_(rng), sh_(sh), t_(t), N_(o.jobs), alloc_(static_cast<size_t>(o.jobs), 0),
        pos_(static_cast<size_t>(o.jobs), UINT32_MAX),
        alloc_percent_(static_cast<uint64_t>(o.alloc_percent > 0 ? o.alloc_percent : 60)) {
    std::copy(cap, cap + kR, cap_);
  }

  // With `saturate`: a ramp (allocate whenever a job has room) until pods
  // first run out, then full use: release one task while pods are
  // saturated, else allocate one task of a job it fits.
  Status Run() {
    bool full = false;
    for (int64_t k = 0; k < o_.events; ++k) {
      HDRF_RETURN_IF_ERROR(full ? FullUseEvent() : RampEvent());
      unsigned mask = 0;
      for (int r = 0; r < kR; ++r) mask |= (used_[r] == cap_[r] ? 1u : 0u) << r;
      saturated_ += mask != 0;
      flips_ += mask != sat_mask_;
      sat_mask_ = mask;
      if (o_.saturate && (mask >> kPods & 1u)) full = true;
    }
    return Status::Ok();
  }

  void Report(TraceGenState* state, size_t leaves) {
    state->resources.assign(kResourceNames, kResourceNames + kR);
    state->capacity.assign(cap_, cap_ + kR);
    state->used.assign(used_, used_ + kR);
    state->allocated = std::move(alloc_);
    state->allocates = allocates_;
    state->releases = releases_;
    state->refits = refits_;
    state->saturated = saturated_;
    state->flips = flips_;
    state->leaves = leaves;
  }

 private:
  Status FullUseEvent() {
    if (used_[kPods] == cap_[kPods]) {
      HDRF_ASSIGN_OR_RETURN(uint32_t j, RandomActive());
      Emit(TraceEventType::kRelease, j, 1);
      return Status::Ok();
    }
    for (int tries = 0; tries < 16; ++tries) {
      uint32_t j = static_cast<uint32_t>(rng_.Below(static_cast<uint64_t>(N_)));
      if (alloc_[j] < sh_.tasks[j] && Fits(j, 1) == 1) {
        Emit(TraceEventType::kAllocate, j, 1);
        return Status::Ok();
      }
    }
    ++refits_;
    HDRF_ASSIGN_OR_RETURN(uint32_t j, RandomActive());
    Emit(TraceEventType::kRelease, j, 1);
    return Status::Ok();
  }

  Status RampEvent() {
    uint32_t j = static_cast<uint32_t>(rng_.Below(static_cast<uint64_t>(N_)));
    int64_t a = alloc_[j], n_tasks = sh_.tasks[j];
    bool want_alloc = a == 0 ? true
                      : a == n_tasks ? false
                      : o_.saturate  ? true
                                     : rng_.Below(100) < alloc_percent_;
    if (!want_alloc) {
      Emit(TraceEventType::kRelease, j, PickN(a));
      return Status::Ok();
    }
    int64_t n = o_.saturate ? rng_.Between(1, std::min<int64_t>(8, n_tasks - a)) : PickN(n_tasks - a);
    int64_t fit = Fits(j, n);
    if (fit >= 1) {
      Emit(TraceEventType::kAllocate, j, fit);
      return Status::Ok();
    }
    // Does not fit: release instead, from this job or a running one.
    ++refits_;
    if (a == 0) {
      HDRF_ASSIGN_OR_RETURN(j, RandomActive());
    }
    Emit(TraceEventType::kRelease, j, PickN(alloc_[j]));
    return Status::Ok();
  }

  // n per event: 1 three times in four, else 2..min(8, limit).
  int64_t PickN(int64_t limit) {
    if (limit <= 1 || (rng_.Next() & 3) != 0) return 1;
    return rng_.Between(2, std::min<int64_t>(8, limit));
  }
  void Apply(uint32_t j, int64_t n) {  // n < 0: release
    const int64_t* s = &sh_.shape[size_t{j} * kR];
    for (int r = 0; r < kR; ++r) used_[r] += n * s[r];
    int64_t before = alloc_[j];
    alloc_[j] += n;
    if (before == 0 && alloc_[j] > 0) {
      pos_[j] = static_cast<uint32_t>(active_.size());
      active_.push_back(j);
    } else if (before > 0 && alloc_[j] == 0) {
      uint32_t last = active_.back();
      active_[pos_[j]] = last;
      pos_[last] = pos_[j];
      active_.pop_back();
      pos_[j] = UINT32_MAX;
    }
  }
  int64_t Fits(uint32_t j, int64_t n) const {  // how many of n tasks fit
    const int64_t* s = &sh_.shape[size_t{j} * kR];
    for (int r = 0; r < kR; ++r)
      if (s[r] > 0) n = std::min(n, (cap_[r] - used_[r]) / s[r]);
    return n;
  }
  void Emit(TraceEventType type, uint32_t j, int64_t n) {
    t_->events.push_back({type, j, static_cast<uint32_t>(n)});
    if (type == TraceEventType::kAllocate) {
      Apply(j, n);
      ++allocates_;
    } else {
      Apply(j, -n);
      ++releases_;
    }
  }
  StatusOr<uint32_t> RandomActive() {
    if (active_.empty()) return Status::Internal("trace gen: a task fits nowhere in an empty cluster");
    return active_[rng_.Below(active_.size())];
  }

  const TraceGenOptions& o_;
  Rng& rng_;
  const Shapes& sh_;
  Trace* t_;
  const int64_t N_;
  int64_t cap_[kR];
  std::vector<int64_t> alloc_;
  std::vector<uint32_t> active_, pos_;  // jobs with alloc > 0, and where
  const uint64_t alloc_percent_;
  int64_t used_[kR] = {0, 0, 0, 0};
  int64_t allocates_ = 0, releases_ = 0, refits_ = 0, saturated_ = 0, flips_ = 0;
  unsigned sat_mask_ = 0;
};

}  // namespace

StatusOr<Trace> GenerateTrace(const TraceGenOptions& o, TraceGenState* state) {
  uint64_t leaves = 0, queues = 0;
  HDRF_RETURN_IF_ERROR(CheckOptions(o, &leaves, &queues));
  Rng rng(o.seed);
  Trace t;
  const std::vector<std::string> leaf_paths = GenQueues(o, rng, leaves, queues, &t);
  const Shapes sh = GenJobs(o, rng, leaf_paths, &t);
  int64_t cap[kR];
  HDRF_RETURN_IF_ERROR(GenCluster(o, sh, cap, &t));
  // Events: N submissions, then E task events.
  t.events.reserve(static_cast<size_t>(o.jobs + o.events));
  for (int64_t i = 0; i < o.jobs; ++i) t.events.push_back({TraceEventType::kSubmit, static_cast<uint32_t>(i), 0});
  EventGen events(o, rng, sh, cap, &t);
  HDRF_RETURN_IF_ERROR(events.Run());
  if (state) events.Report(state, leaf_paths.size());
  return t;
}

}  // namespace hdrf
