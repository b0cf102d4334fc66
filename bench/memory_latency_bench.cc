// BM_MemoryLatency/mb/chains: the machine's own memory latency, beside the
// engine's figures (bench/README.md "Cost versus size"). A random cyclic
// pointer chase over `mb` MiB of 64-byte lines (one line per step, each
// address known only when the previous line has arrived), run as `chains`
// independent chases interleaved: with 1 chain the time per step is the
// latency of one miss; with 16 it is what a stream of independent misses
// costs each (the memory-level parallelism a batch can use). The buffer is
// 2 MiB-aligned and marked MADV_HUGEPAGE like the engine's per-job arrays
// (engine/huge_alloc.h), so the figures include no more TLB misses than
// the engine's own.
//
// Why it is here: one engine call per event (BM_Ingest) must wait for at
// least one such miss at 10^6 jobs (its job's record, whose address only
// the call knows), so BM_Ingest at 10^6 cannot cost less than BM_Ingest at
// 10^3 plus one chained miss.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hdrf::bench {
namespace {

struct alignas(64) Line {
  Line* next;
};

void BM_MemoryLatency(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  const int chains = static_cast<int>(state.range(1));
  const size_t n = bytes / sizeof(Line);
  constexpr size_t kHuge = size_t{2} << 20;
  auto* lines = static_cast<Line*>(std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(lines, bytes, MADV_HUGEPAGE);
#endif
  // One random cycle through every line.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  for (size_t i = 0; i < n; ++i) lines[order[i]].next = &lines[order[(i + 1) % n]];
  Line* cur[64];
  for (int c = 0; c < chains; ++c) cur[c] = &lines[order[c * (n / chains)]];
  constexpr int kSteps = 4096;  // per chain and iteration
  for (auto _ : state) {
    for (int s = 0; s < kSteps; ++s)
      for (int c = 0; c < chains; ++c) cur[c] = cur[c]->next;
    benchmark::DoNotOptimize(cur[0]);
  }
  state.SetItemsProcessed(state.iterations() * kSteps * chains);
  state.counters["ns_per_line"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kSteps * chains,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  std::free(lines);
}
BENCHMARK(BM_MemoryLatency)
    ->ArgNames({"mb", "chains"})
    ->Args({1, 1})->Args({16, 1})->Args({256, 1})->Args({256, 16})
    ->UseRealTime()
    ->MinTime(0.5);

// BM_LineTransfer: what one cache line costs to move between the two
// cores (threads:2): the threads take turns incrementing a counter alone
// on its line, each waiting to see the other's increment, so that every
// turn moves the line to the other core (ns_per_handoff: a read that
// misses, then the write that takes the line back from the reader). Two
// threads that write the same queue nodes (BM_IngestBatched not routed)
// pay this per shared line; on a VM its value changes with where the host
// runs the two vCPUs, and with it the two-thread figures (bench/README.md
// "Cost versus size").
void BM_LineTransfer(benchmark::State& state) {
  struct alignas(64) Turn {
    std::atomic<uint64_t> n{0};
  };
  static Turn turn;
  const uint64_t me = static_cast<uint64_t>(state.thread_index());
  const uint64_t threads = static_cast<uint64_t>(state.threads());
  if (me == 0) turn.n.store(0, std::memory_order_relaxed);
  uint64_t k = me;  // this thread's turns: me, me + threads, ...
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    while (turn.n.load(std::memory_order_acquire) != k) {
    }
    turn.n.store(k + 1, std::memory_order_release);
    k += threads;
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  // Each thread's span holds every thread's turns; the threads' figures
  // are averaged.
  state.counters["ns_per_handoff"] = benchmark::Counter(
      ns / static_cast<double>(state.iterations() * threads), benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_LineTransfer)->Threads(2)->UseRealTime()->MinTime(0.5);

}  // namespace
}  // namespace hdrf::bench
