#include "bench/bench_world.h"

#include <cstdio>
#include <string>
#include <unistd.h>

// HDRF_HAVE_JEMALLOC is defined by bench/meson.build when jemalloc is linked.
#ifdef HDRF_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace hdrf::bench {
namespace {

struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return Next() % n; }
};

const char* kRes[] = {"cpu", "memory", "nvidia.com/gpu", "pods"};

}  // namespace

World MakeWorld(const WorldOptions& o, int64_t events, bool preallocate) {
  Rng rng{o.seed};
  // Leaves: root/a{i}/b{j}/c{k} ...
  std::vector<std::string> level{"root"};
  std::vector<QueueSpec> queues;
  for (int d = 0; d < o.depth; ++d) {
    std::vector<std::string> next;
    for (const std::string& p : level)
      for (int c = 0; c < o.fanout; ++c) {
        QueueSpec q;
        q.path = p + "/q" + std::to_string(d) + "_" + std::to_string(c);
        q.weight = 1 + static_cast<double>(rng.Below(4));
        queues.push_back(q);
        next.push_back(q.path);
      }
    level.swap(next);
  }
  // Task shapes: a few per resource mix, canonical units.
  std::vector<ResourceAmounts> shapes;
  for (int i = 0; i < 16; ++i) {
    ResourceAmounts t;
    t["cpu"] = 250 * (1 + static_cast<int64_t>(rng.Below(8)));
    t["memory"] = (int64_t{256} << 20) * (1 + static_cast<int64_t>(rng.Below(8)));
    if (i % 4 == 0) t["nvidia.com/gpu"] = 1000;
    t["pods"] = 1000;
    shapes.push_back(t);
  }
  std::vector<int> job_shape(o.jobs);
  ResourceAmounts demand;
  for (int64_t j = 0; j < o.jobs; ++j) {
    job_shape[j] = static_cast<int>(rng.Below(shapes.size()));
    for (auto& [r, v] : shapes[job_shape[j]]) demand[r] += v * o.tasks_per_job;
  }
  ResourceAmounts cluster;
  for (const char* r : kRes) cluster[r] = static_cast<int64_t>(static_cast<double>(demand[r]) * o.capacity_fraction) + 1000;
  if (o.full_use) {
    // Capacity equals the half-allocated state: every allocate after a
    // release fills some resource, every release frees it.
    for (const char* r : kRes) cluster[r] = 0;
    for (int64_t j = 0; j < o.jobs; ++j)
      for (auto& [r, v] : shapes[job_shape[j]]) cluster[r] += v * (o.tasks_per_job / 2);
  }
  World w;
  w.cluster = cluster;
  w.queues = queues;
  w.preallocated = preallocate ? o.tasks_per_job / 2 : 0;
  EngineOptions eo;
  if (o.reserve) eo.reserve_jobs = static_cast<uint64_t>(o.jobs);
  eo.batch_grouping = o.grouping;
  auto e = Engine::Create(cluster, queues, eo);
  if (!e.ok()) {
    std::fprintf(stderr, "bench world: %s\n", e.status().ToString().c_str());
    std::abort();
  }
  w.engine = std::move(e).value();
  std::vector<int64_t> alloc(o.jobs, 0);
  w.jobs.reserve(static_cast<size_t>(o.jobs));  // the bench's own refs: no doubling
  for (int64_t j = 0; j < o.jobs; ++j) {
    JobSpec s;
    s.name = "job" + std::to_string(j);
    s.queue = level[rng.Below(level.size())];
    s.user = "user" + std::to_string(rng.Below(50));
    s.tasks = o.tasks_per_job;
    s.task = shapes[job_shape[j]];
    auto ref = w.engine->Submit(s);
    if (!ref.ok()) std::abort();
    w.jobs.push_back(*ref);
    if (o.keep_specs) w.specs.push_back(s);
    if (w.preallocated > 0 && !w.engine->Allocate(*ref, w.preallocated).ok()) std::abort();
    alloc[j] = w.preallocated;
  }
  // Events: in full-use worlds strictly alternate release/allocate, of the
  // same job or (handover) of another job of the same shape, so the cluster
  // flips between full and one task free.
  std::vector<std::vector<uint32_t>> by_shape(shapes.size());
  if (o.handover)
    for (int64_t j = 0; j < o.jobs; ++j) by_shape[job_shape[j]].push_back(static_cast<uint32_t>(j));
  w.event_job.reserve(events);
  w.event_dir.reserve(events);
  for (int64_t i = 0; i < events; ++i) {
    if (o.full_use) {
      uint32_t j = static_cast<uint32_t>(rng.Below(o.jobs));
      while (alloc[j] == 0) j = static_cast<uint32_t>(rng.Below(o.jobs));
      uint32_t k = j;
      const std::vector<uint32_t>& same = by_shape[job_shape[j]];
      for (int tries = 0; o.handover && tries < 64 && k == j; ++tries) {
        const uint32_t c = same[rng.Below(same.size())];
        if (c != j && alloc[c] < o.tasks_per_job) k = c;
      }
      --alloc[j];
      ++alloc[k];
      w.event_job.push_back(j);
      w.event_dir.push_back(-1);
      w.event_job.push_back(k);
      w.event_dir.push_back(+1);
      ++i;
      continue;
    }
    uint32_t j = static_cast<uint32_t>(rng.Below(o.jobs));
    int8_t dir = alloc[j] == 0 ? 1 : alloc[j] == o.tasks_per_job ? -1 : (rng.Below(2) ? 1 : -1);
    alloc[j] += dir;
    w.event_job.push_back(j);
    w.event_dir.push_back(dir);
  }
  return w;
}

int64_t AllocatorStat(const char* name) {
#ifdef HDRF_HAVE_JEMALLOC
  uint64_t epoch = 1;
  size_t len = sizeof epoch;
  mallctl("epoch", &epoch, &len, &epoch, len);
  size_t value = 0;
  len = sizeof value;
  if (mallctl(name, &value, &len, nullptr, 0) == 0) return static_cast<int64_t>(value);
#else
  (void)name;
#endif
  return -1;
}

int64_t AllocatedBytes() { return AllocatorStat("stats.allocated"); }

bool PurgeAllocator() {
#ifdef HDRF_HAVE_JEMALLOC
  const std::string purge = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  return mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0) == 0;
#else
  return false;
#endif
}

int64_t RssBytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

}  // namespace hdrf::bench
