// Synthetic worlds for the benchmarks: a queue tree of depth D and fanout F
// over 4 resources, N jobs spread over the leaves, and a pre-generated list
// of allocate/release events that always stay valid. Uses only api/.
#ifndef HDRF_BENCH_BENCH_WORLD_H_
#define HDRF_BENCH_BENCH_WORLD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"

namespace hdrf::bench {

struct WorldOptions {
  int depth = 3;
  int fanout = 10;
  int64_t jobs = 100000;
  int64_t tasks_per_job = 8;
  // Cluster capacity as a fraction of the total demand of all jobs. Above 1
  // nothing ever saturates; "full use" worlds set capacity = the allocation
  // the event stream hovers at, so resources flip between full and free.
  double capacity_fraction = 2.0;
  bool full_use = false;
  // Full-use worlds: the allocate that follows a release goes to another
  // job of the same task shape (another job takes the freed slot), not back
  // to the released job.
  bool handover = false;
  uint64_t seed = 1;
  // Keep the submitted JobSpecs in World::specs (the reference bench needs
  // them; the memory bench must not count them).
  bool keep_specs = true;
  // EngineOptions::reserve_jobs = jobs (the embedder knows its size).
  bool reserve = false;
  // EngineOptions::batch_grouping.
  EngineOptions::BatchGrouping grouping = EngineOptions::BatchGrouping::kAuto;
};

struct World {
  ResourceAmounts cluster;
  std::vector<QueueSpec> queues;
  std::vector<JobSpec> specs;          // as submitted
  int64_t preallocated = 0;            // tasks allocated per job at setup
  std::unique_ptr<Engine> engine;
  std::vector<JobRef> jobs;
  // Event i: job index and +1 (allocate) / -1 (release).
  std::vector<uint32_t> event_job;
  std::vector<int8_t> event_dir;
};

// Builds the engine, submits the jobs, pre-allocates half of every job's
// tasks (none when `preallocate` is false) and generates `events` valid
// events starting from the pre-allocated state.
World MakeWorld(const WorldOptions& o, int64_t events, bool preallocate = true);

// Resident set size of this process in bytes (from /proc/self/statm).
int64_t RssBytes();
// Bytes the allocator holds for live objects (jemalloc stats.allocated),
// -1 without jemalloc.
int64_t AllocatedBytes();
// Asks jemalloc to give every freed page back to the kernel now (instead of
// after its decay time): an RSS read after it counts live memory, not
// buffers freed while vectors grew. False without jemalloc.
bool PurgeAllocator();
// A size_t statistic of jemalloc ("stats.active", "stats.resident",
// "stats.metadata", ...) after refreshing its epoch; -1 without jemalloc.
int64_t AllocatorStat(const char* name);

}  // namespace hdrf::bench

#endif  // HDRF_BENCH_BENCH_WORLD_H_
