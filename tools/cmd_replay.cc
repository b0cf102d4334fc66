// hdrf replay: applies a trace to an engine and reports throughput, latency
// and the state digest (docs/spec.md §11, docs/trace.md).
//
// Phases: read the trace; create the engine; setup (the trace's leading
// submissions, in order, on this thread); warm-up (the next --warmup events,
// in order, untimed); the timed replay (on --threads threads); report.
// The timed loop touches no strings, maps or allocations: JobRefs are
// resolved at setup, latencies go to each thread's own copy of the engine's
// histogram (ShardedLatencyHistogram::Snapshot, plain counters, merged at
// the end), and the clock is the time-stamp counter where there is one.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "base/mutex.h"
#include "hdrf/engine.h"
#include "api/formats/json_line.h"
#include "hdrf/latency_histogram.h"
#include "hdrf/store_trace.h"
#include "hdrf/trace.h"
#include "tools/commands.h"
#include "tools/cli.h"
#include "tools/replay_flags.h"
#include "tools/replay_plot.h"

namespace hdrf::tools {

namespace {

using Config = ReplayConfig;  // replay_flags.h

// ---- clock -----------------------------------------------------------------------

inline uint64_t SteadyNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The per-event clock: the TSC where there is one (a few ns), calibrated
// against steady_clock over the whole run; steady_clock elsewhere.
inline uint64_t Ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return SteadyNs();
#endif
}

// ---- stopping ----------------------------------------------------------------------

std::atomic<bool> g_stop{false};
std::atomic<bool> g_interrupted{false};
// The store failed (a write refused by the disk: IoError): every later event
// would be refused, so the run stops at once and reports what was applied
// and acknowledged, not what was attempted.
std::atomic<bool> g_store_failed{false};
std::string g_store_error;  // the first store error (set once, read after the threads end)

inline void NoteStoreError(const Status& s) {
  if (s.code() != StatusCode::kIoError) return;
  if (!g_store_failed.exchange(true)) g_store_error = s.message();
  g_stop.store(true, std::memory_order_relaxed);
}

extern "C" void OnSigint(int) {
  g_interrupted.store(true, std::memory_order_relaxed);
  g_stop.store(true, std::memory_order_relaxed);
  ::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills
}

// ---- workers -----------------------------------------------------------------------

struct alignas(64) Worker {
  std::atomic<uint64_t> done{0};  // events processed in the current phase
  uint64_t refused = 0;
  uint64_t skipped = 0;           // releases of refused allocations
  bool owes = false;              // some allocation of this thread was refused
  std::string first_error;
  // Latencies in clock ticks (Ticks()); converted to ns in the report.
  ShardedLatencyHistogram::Snapshot hist;
  std::vector<TraceEvent> events; // this thread's share (threads > 1)
  // The JobRef of each of this thread's timed events, resolved before the
  // clock starts (ResolveRefs); id kNone where the job was not submitted
  // yet (it is then looked up when the event is applied).
  std::vector<JobRef> refs;
  SharePlot* plot = nullptr;      // --plot: thread 0 samples shares
  uint64_t plot_every = 0, plot_next = 0, plot_ticks = 0;
};

struct Shared {
  Engine* engine = nullptr;
  JobRef* refs = nullptr;          // per job index, filled by submissions
  const JobSpec* jobs = nullptr;
  uint32_t* debt = nullptr;        // per job: tasks whose allocation was refused
};

inline void Refuse(Worker& w, const Status& s) {
  if (w.refused++ == 0) w.first_error = s.message();
  NoteStoreError(s);
}

// The tasks of a release or finish of `job` that are owed by refused
// allocations of the same job are not released again: returns what is left
// to release (0: the whole event is skipped).
inline int64_t PayDebt(const Shared& c, uint32_t job, int64_t n) {
  const uint32_t d = static_cast<uint32_t>(std::min<int64_t>(c.debt[job], n));
  c.debt[job] -= d;
  return n - d;
}

inline Status ReleaseOrFinish(const Shared& c, TraceEventType type, uint32_t job, int64_t n) {
  return type == TraceEventType::kRelease ? c.engine->Release(c.refs[job], n) : c.engine->Finish(c.refs[job], n);
}

inline void ApplyOne(const Shared& c, const TraceEvent& e, Worker& w) {
  Status s;
  switch (e.type) {
    case TraceEventType::kAllocate:
      s = c.engine->Allocate(c.refs[e.job], e.n);
      if (!s.ok()) [[unlikely]] {
        c.debt[e.job] += e.n;
        w.owes = true;
      }
      break;
    case TraceEventType::kRelease:
    case TraceEventType::kFinish: {
      int64_t n = e.n;
      // A job's events all run on one thread, so only a thread that had an
      // allocation refused can owe tasks.
      if (w.owes && c.debt[e.job] != 0) [[unlikely]] {
        n = PayDebt(c, e.job, n);
        if (n == 0) {
          ++w.skipped;
          return;
        }
      }
      s = ReleaseOrFinish(c, e.type, e.job, n);
      break;
    }
    case TraceEventType::kSubmit: {
      auto r = c.engine->Submit(c.jobs[e.job]);
      if (r.ok())
        c.refs[e.job] = *r;
      else
        s = r.status();
      break;
    }
    case TraceEventType::kRemove:
      s = c.engine->Remove(c.refs[e.job]);
      break;
  }
  if (!s.ok()) [[unlikely]] Refuse(w, s);
}

// --plot: one sample, its time kept out of the latencies and the throughput.
[[gnu::noinline]] void PlotSample(const Shared& c, Worker& w) {
  const uint64_t t = Ticks();
  w.plot->Sample(*c.engine);
  w.plot_next += w.plot_every;
  w.plot_ticks += Ticks() - t;
}

struct Pace {
  double rate = 0;            // events/s for this thread; 0 = unpaced
  uint64_t deadline_ns = 0;   // steady ns; 0 = none
};

// The timed loop. One clock read per event: the latency of an event is the
// time since the previous one finished (or since pacing let it start).
// Events per Engine::ApplyTasks call (--batch); 1 = one call per event.
// Without --rate the default is kDefaultReplayBatch (replay_flags.h).
size_t g_batch = 1;
size_t g_pipeline = 0;  // --pipeline N (replay_flags.h)
size_t RunBatched(const Shared& c, const TraceEvent* ev, const JobRef* ahead, size_t count, Worker& w, bool timed,
                  uint64_t deadline_ns);

template <bool kPaced>
void RunTimed(const Shared& c, const TraceEvent* ev, size_t count, Worker& w, const Pace& pace) {
  if (g_batch > 1) {
    RunBatched(c, ev, w.refs.empty() ? nullptr : w.refs.data(), count, w, /*timed=*/true, pace.deadline_ns);
    return;
  }
  const uint64_t interval_ns = kPaced ? static_cast<uint64_t>(1e9 / pace.rate) : 0;
  const uint64_t burst_ns = 10'000'000;
  uint64_t next_ns = SteadyNs();
  uint64_t prev = Ticks();
  size_t i = 0;
  for (; i < count; ++i) {
    if ((i & 1023) == 0) {
      w.done.store(i, std::memory_order_relaxed);
      if (g_stop.load(std::memory_order_relaxed)) break;
      if (pace.deadline_ns && SteadyNs() >= pace.deadline_ns) break;
      if (w.plot && i >= w.plot_next) [[unlikely]] {
        PlotSample(c, w);
        prev = Ticks();
      }
    }
    if constexpr (kPaced) {
      next_ns += interval_ns;
      uint64_t now = SteadyNs();
      if (now < next_ns) {
        if (next_ns - now > 200'000) std::this_thread::sleep_for(std::chrono::nanoseconds(next_ns - now - 100'000));
        while (SteadyNs() < next_ns) {
        }
      } else if (now - next_ns > burst_ns) {
        next_ns = now - burst_ns;
      }
      prev = Ticks();
    }
    // The JobRef a few events ahead is a likely cache miss: fetch it now.
    if (i + 4 < count) __builtin_prefetch(&c.refs[ev[i + 4].job]);
    ApplyOne(c, ev[i], w);
    uint64_t t = Ticks();
    w.hist.Record(t >= prev ? t - prev : 0);
    prev = t;
  }
  w.done.store(i, std::memory_order_relaxed);
}

// Batched loop (--batch B > 1, the default without --rate): up to B
// consecutive events per Engine::ApplyTasks call, which prefetches the
// memory of the ops ahead and, with a store, waits for durability once per
// batch (group commit). Submissions and other events are never mixed in one
// batch, so a task event always finds its job's JobRef. Every event of a
// batch is recorded with the batch's latency (it is acknowledged when the
// batch is). Pacing is not applied in this mode. With --pipeline N batches
// are applied while up to N earlier ones are made durable (ApplyTasksNoWait
// starts each one's write; a batch is acknowledged once durable_seq() covers
// it, or by WaitDurable when N are in flight), and each event's latency runs
// from its batch's start to its acknowledgement.
struct Batch {
  size_t n = 0;                 // ops in this batch
  std::vector<Engine::TaskOp> ops;
  std::vector<uint32_t> job;    // the trace's job index of each op
  std::vector<Status> status;   // each op's outcome
  explicit Batch(size_t cap) : ops(cap), job(cap), status(cap) {}
};

// The JobRef table is indexed by the trace's job index: at 10^6 jobs a
// random read that misses the caches on almost every event. The timed
// events' JobRefs are resolved before the clock starts (ResolveRefs, one
// pass in trace order with the table prefetched kRefAhead events ahead), so
// that the timed loop reads only arrays in order, as an embedder that holds
// its JobRefs would; untimed batches (setup, warm-up) prefetch the same way.
constexpr size_t kRefAhead = 24;

void ResolveRefs(const Shared& c, const TraceEvent* ev, size_t count, std::vector<JobRef>* out) {
  out->resize(count);
  JobRef* r = out->data();
  for (size_t i = 0; i < count; ++i) {
    if (i + kRefAhead < count) __builtin_prefetch(&c.refs[ev[i + kRefAhead].job]);
    r[i] = c.refs[ev[i].job];
  }
}

// Fills b with ops for ev[i..] (at most B, all submissions or none); returns
// the index of the first event left. `ahead`, when set, holds the JobRefs
// resolved before the clock (aligned with ev). A release wholly owed by
// refused allocations needs no op (skipped, as in ApplyOne).
size_t FillBatch(const Shared& c, const TraceEvent* ev, const JobRef* ahead, size_t i, size_t count, Worker& w,
                 Batch& b) {
  Engine::TaskOp* const ops = b.ops.data();
  uint32_t* const job = b.job.data();
  Status* const status = b.status.data();
  const size_t cap = b.ops.size();
  const bool submits = ev[i].type == TraceEventType::kSubmit;
  const bool owes = w.owes;
  size_t k = 0;
  for (; i < count && k < cap; ++i) {
    const TraceEvent e = ev[i];
    if ((e.type == TraceEventType::kSubmit) != submits) break;
    Engine::TaskOp op;
    op.type = ToEventType(e.type);
    op.n = e.n;
    if (submits) {
      op.spec = &c.jobs[e.job];
      op.submitted = &c.refs[e.job];
    } else {
      if (ahead && ahead[i].id != engine::kNone) [[likely]] {
        op.job = ahead[i];
      } else {
        if (!ahead && i + kRefAhead < count) __builtin_prefetch(&c.refs[ev[i + kRefAhead].job]);
        op.job = c.refs[e.job];
      }
      if (owes && e.type != TraceEventType::kAllocate && c.debt[e.job] != 0) [[unlikely]] {
        op.n = PayDebt(c, e.job, op.n);
        if (op.n == 0) {
          ++w.skipped;
          continue;
        }
      }
    }
    op.status = &status[k];
    ops[k] = op;
    job[k] = e.job;
    ++k;
  }
  b.n = k;
  return i;
}

// After a batch with refused ops: a refused allocation leaves its tasks
// owed (another thread had not released yet); a release or finish of the
// same job that was refused because it found them missing is not a
// refusal: the owed part is skipped and the rest released now. (In the
// per-call loop the debt is known before the release; in a batch the
// release may already have been applied, so with several threads the
// batched mode refuses a little differently, never silently.)
void SettleRefusals(const Shared& c, const Batch& b, Worker& w) {
  for (size_t k = 0; k < b.n; ++k) {
    const Status& st = b.status[k];
    if (st.ok()) continue;
    const Engine::TaskOp& op = b.ops[k];
    const uint32_t j = b.job[k];
    const bool frees = op.type == Event::Type::kRelease || op.type == Event::Type::kFinish;
    if (op.type == Event::Type::kAllocate && st.code() != StatusCode::kIoError) {
      c.debt[j] += static_cast<uint32_t>(op.n);
      w.owes = true;
    } else if (frees && c.debt[j] != 0 && st.code() != StatusCode::kIoError) {
      const int64_t rest = PayDebt(c, j, op.n);
      if (rest == 0) {
        ++w.skipped;
        continue;
      }
      const Status s =
          ReleaseOrFinish(c, op.type == Event::Type::kRelease ? TraceEventType::kRelease : TraceEventType::kFinish,
                          j, rest);
      if (!s.ok()) Refuse(w, s);
      continue;
    }
    Refuse(w, st);
  }
}

size_t RunBatched(const Shared& c, const TraceEvent* ev, const JobRef* ahead, size_t count, Worker& w, bool timed,
                  uint64_t deadline_ns) {
  Batch b(g_batch);
  uint64_t prev = Ticks();
  // --pipeline: the batches applied and not yet acknowledged, oldest first.
  struct InFlight {
    uint64_t seq = 0, start = 0;
    size_t n = 0;
  };
  std::deque<InFlight> flight;
  // Acknowledges the batches that are durable, waiting for the oldest while
  // more than `keep` are left.
  auto acknowledge = [&](size_t keep) {
    while (!flight.empty()) {
      const InFlight& f = flight.front();
      if (flight.size() <= keep && c.engine->durable_seq() < f.seq) break;
      const Status d = c.engine->WaitDurable(f.seq);
      if (!d.ok()) [[unlikely]] NoteStoreError(d);
      if (timed) {
        const uint64_t t = Ticks();
        w.hist.Record(t >= f.start ? t - f.start : 0, f.n);
      }
      flight.pop_front();
    }
  };
  size_t i = 0;
  while (i < count) {
    w.done.store(i, std::memory_order_relaxed);
    if (g_stop.load(std::memory_order_relaxed)) break;
    if (deadline_ns && SteadyNs() >= deadline_ns) break;
    if (timed && w.plot && i >= w.plot_next) [[unlikely]] {
      PlotSample(c, w);
      prev = Ticks();
    }
    const uint64_t start = g_pipeline ? Ticks() : 0;
    i = FillBatch(c, ev, ahead, i, count, w, b);
    size_t refused = 0;
    uint64_t last = 0;
    Status s = g_pipeline ? c.engine->ApplyTasksNoWait(b.ops.data(), b.n, &last, &refused)
                          : c.engine->ApplyTasks(b.ops.data(), b.n, nullptr, &refused);
    if (!s.ok()) [[unlikely]] NoteStoreError(s);
    if (refused) [[unlikely]] SettleRefusals(c, b, w);
    if (g_pipeline) {
      if (b.n > 0) flight.push_back({last, start, b.n});
      acknowledge(g_pipeline);
    } else if (timed) {
      const uint64_t t = Ticks();
      w.hist.Record(t >= prev ? t - prev : 0, b.n);
      prev = t;
    }
  }
  acknowledge(0);
  w.done.store(i, std::memory_order_relaxed);
  return i;
}

// Untimed, in order, on this thread (setup and warm-up).
size_t RunUntimed(const Shared& c, const TraceEvent* ev, size_t count, Worker& w) {
  if (g_batch > 1) return RunBatched(c, ev, nullptr, count, w, /*timed=*/false, /*deadline_ns=*/0);
  size_t i = 0;
  for (; i < count; ++i) {
    if ((i & 1023) == 0) {
      w.done.store(i, std::memory_order_relaxed);
      if (g_stop.load(std::memory_order_relaxed)) break;
    }
    ApplyOne(c, ev[i], w);
  }
  w.done.store(i, std::memory_order_relaxed);
  return i;
}

// ---- progress and acks ----------------------------------------------------------------

std::string Rate(double per_s) {
  char buf[32];
  if (per_s >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", per_s / 1e6);
  else if (per_s >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", per_s / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", per_s);
  return buf;
}

std::string Duration(double ns) {
  char buf[32];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}

// A thread that prints `acked SEQ` (with a store) every 50 ms and redraws
// the progress bar on stderr every 100 ms.
class Reporter {
 public:
  Reporter(Engine* engine, bool acks, int progress /*0 none, 1 tty, 2 lines*/, std::vector<Worker>* workers)
      : engine_(engine), acks_(acks), progress_(progress), workers_(workers) {
    if (acks_ || progress_) thread_ = std::thread([this] { Loop(); });
  }
  ~Reporter() { Stop(); }
  void Phase(const char* name, uint64_t total) {
    base::MutexLock lock(mu_);
    phase_ = name;
    total_ = total;
    phase_start_ns_ = SteadyNs();
  }
  void Stop() {
    {
      base::MutexLock lock(mu_);
      if (stopped_) return;
      stopped_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    base::MutexLock lock(mu_);  // the thread is gone; Draw reads what mu_ guards
    if (progress_ == 1 && drawn_) std::fputs("\r\033[K", stderr);
    if (progress_ == 2) Draw(SteadyNs());  // the final state, as a line
  }

 private:
  void Loop() {
    uint64_t last_draw = 0;
    base::MutexLock lock(mu_);
    while (!stopped_) {
      lock.WaitFor(cv_, std::chrono::milliseconds(50));
      if (stopped_) break;
      if (acks_) {
        std::printf("acked %llu\n", static_cast<unsigned long long>(engine_->durable_seq()));
        std::fflush(stdout);
      }
      uint64_t now = SteadyNs();
      uint64_t period = progress_ == 1 ? 100'000'000 : 1'000'000'000;
      if (progress_ && now - last_draw >= period) {
        Draw(now);
        last_draw = now;
      }
    }
  }
  void Draw(uint64_t now) REQUIRES(mu_) {
    if (!phase_) return;
    uint64_t done = 0;
    for (const Worker& w : *workers_) done += w.done.load(std::memory_order_relaxed);
    double frac = total_ ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 1.0;
    double secs = static_cast<double>(now - phase_start_ns_) / 1e9;
    double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    double eta = rate > 0 ? static_cast<double>(total_ - std::min(done, total_)) / rate : 0;
    constexpr int kWidth = 30;
    int fill = static_cast<int>(frac * kWidth);
    char bar[kWidth + 1];
    for (int i = 0; i < kWidth; ++i) bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
    bar[kWidth] = '\0';
    std::fprintf(stderr, "%s%-7s [%s] %5.1f%%  %s/%s events  %s events/s  ETA %.0f s%s",
                 progress_ == 1 ? "\r\033[K" : "", phase_, bar, 100 * frac, Rate(static_cast<double>(done)).c_str(),
                 Rate(static_cast<double>(total_)).c_str(), Rate(rate).c_str(), eta, progress_ == 1 ? "" : "\n");
    std::fflush(stderr);
    drawn_ = true;
  }

  Engine* engine_;
  bool acks_;
  int progress_;
  std::vector<Worker>* workers_;
  base::Mutex mu_;
  std::condition_variable cv_;
  bool stopped_ GUARDED_BY(mu_) = false;
  bool drawn_ GUARDED_BY(mu_) = false;
  const char* phase_ GUARDED_BY(mu_) = nullptr;
  uint64_t total_ GUARDED_BY(mu_) = 0;
  uint64_t phase_start_ns_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

// Top-level queue of a job's queue path ("root/q3/q1" -> "q3").
std::string TopLevel(const std::string& path) {
  std::string_view p = path;
  if (p.rfind("root/", 0) == 0) p.remove_prefix(5);
  else if (p == "root") return "";
  return std::string(p.substr(0, p.find('/')));
}

// ---- phases ------------------------------------------------------------------------

// The events to replay and where the phases end.
struct Input {
  Trace trace;
  StoreTrace from_db;     // --from-db: the store's checkpoint and log as a trace
  double read_s = 0;
  uint64_t total = 0;     // trace events
  uint64_t limit = 0;     // events applied (--until)
  uint64_t setup_end = 0; // setup: events [0, setup_end)
  uint64_t warm_end = 0;  // warm-up: [setup_end, warm_end); timed: [warm_end, limit)
};

StatusOr<Input> ReadInput(Config* cfg, uint64_t start_ns) {
  Input in;
  if (cfg->from_db.empty()) {
    HDRF_ASSIGN_OR_RETURN(in.trace, ReadTrace(cfg->trace));
  } else {
    HDRF_ASSIGN_OR_RETURN(in.from_db, ReadStoreTrace(cfg->from_db));
    in.trace = std::move(in.from_db.trace);
    cfg->trace = cfg->from_db;
  }
  in.read_s = static_cast<double>(SteadyNs() - start_ns) / 1e9;
  in.total = in.trace.events.size();
  in.limit = std::min<uint64_t>(in.total, cfg->until);
  // From a store: the checkpoint's submissions are the setup, its
  // allocations are applied untimed before any --warmup events.
  in.setup_end =
      std::min<uint64_t>(cfg->from_db.empty() ? TraceSetupEvents(in.trace) : in.from_db.base_submits, in.limit);
  in.warm_end = std::min<uint64_t>(
      in.setup_end + (in.from_db.base_events - in.from_db.base_submits) + cfg->warmup, in.limit);
  return in;
}

// Gives each worker its share of the timed events; each job's events stay
// in order on one thread.
void Partition(const Config& cfg, const Trace& trace, const TraceEvent* timed, size_t timed_count,
               std::vector<Worker>& workers) {
  std::vector<uint32_t> owner(trace.jobs.size());
  if (cfg.subtree) {
    std::map<std::string, uint32_t> tops;
    for (const JobSpec& j : trace.jobs) tops.emplace(TopLevel(j.queue), 0);
    uint32_t k = 0;
    for (auto& kv : tops) kv.second = k++;
    for (size_t j = 0; j < trace.jobs.size(); ++j)
      owner[j] = tops[TopLevel(trace.jobs[j].queue)] % static_cast<uint32_t>(cfg.threads);
  } else {
    for (size_t j = 0; j < owner.size(); ++j) owner[j] = static_cast<uint32_t>(j % cfg.threads);
  }
  std::vector<size_t> sizes(workers.size(), 0);
  for (size_t i = 0; i < timed_count; ++i) ++sizes[owner[timed[i].job]];
  for (size_t t = 0; t < workers.size(); ++t) workers[t].events.reserve(sizes[t]);
  for (size_t i = 0; i < timed_count; ++i) workers[owner[timed[i].job]].events.push_back(timed[i]);
}

// What setup and warm-up left behind.
struct Untimed {
  double setup_s = 0;
  double resolve_s = 0;  // the timed events' JobRefs, resolved before the clock
  uint64_t warm_refused = 0, warm_skipped = 0;
  std::string first_error;
};

// Setup (the leading submissions) and warm-up, in order on worker 0.
// Fails when a setup event is refused.
StatusOr<Untimed> RunSetupAndWarmup(const Config& cfg, const Input& in, const Shared& shared, SharePlot* plot,
                                    Reporter* reporter, std::vector<Worker>& workers) {
  Untimed u;
  reporter->Phase("setup", in.setup_end);
  const uint64_t setup_ns0 = SteadyNs();
  size_t applied = RunUntimed(shared, in.trace.events.data(), in.setup_end, workers[0]);
  u.setup_s = static_cast<double>(SteadyNs() - setup_ns0) / 1e9;
  if (workers[0].refused > 0)
    return Status::InvalidArgument(cfg.trace + ": setup failed: " + workers[0].first_error);
  if (!cfg.plot.empty()) plot->Sample(*shared.engine);
  if (applied == in.setup_end && in.warm_end > in.setup_end) {
    workers[0].done.store(0);
    reporter->Phase("warmup", in.warm_end - in.setup_end);
    RunUntimed(shared, in.trace.events.data() + in.setup_end, in.warm_end - in.setup_end, workers[0]);
    u.warm_refused = workers[0].refused;
    u.warm_skipped = workers[0].skipped;
  }
  u.first_error = workers[0].first_error;
  // Tasks owed by refused warm-up allocations belong to whichever thread
  // owns their job now.
  for (Worker& w : workers) w.owes = workers[0].owes;
  workers[0].refused = workers[0].skipped = 0;
  workers[0].first_error.clear();
  workers[0].done.store(0);
  return u;
}

// The timed replay on cfg.threads threads; returns its wall time in ns and
// sets *resolve_s to the time taken before it to resolve the timed events'
// JobRefs (batched mode; untimed, like the setup).
uint64_t RunTimedPhase(const Config& cfg, Input& in, const Shared& shared, SharePlot* plot, Reporter* reporter,
                       std::vector<Worker>& workers, double* resolve_s) {
  const TraceEvent* timed = in.trace.events.data() + in.warm_end;
  const size_t timed_count = g_stop.load() ? 0 : static_cast<size_t>(in.limit - in.warm_end);
  if (cfg.threads > 1) {
    // Partition before the clock starts; the events are then no longer needed.
    Partition(cfg, in.trace, timed, timed_count, workers);
    in.trace.events.clear();
    in.trace.events.shrink_to_fit();
    timed = nullptr;
  }
  if (g_batch > 1) {
    const uint64_t r0 = SteadyNs();
    if (cfg.threads > 1) {
      for (Worker& w : workers) ResolveRefs(shared, w.events.data(), w.events.size(), &w.refs);
    } else {
      ResolveRefs(shared, timed, timed_count, &workers[0].refs);
    }
    *resolve_s = static_cast<double>(SteadyNs() - r0) / 1e9;
  }
  if (!cfg.plot.empty()) {
    plot->Sample(*shared.engine);
    Worker& w0 = workers[0];
    w0.plot = plot;
    w0.plot_every = std::max<uint64_t>(1, w0.events.size() ? w0.events.size() / cfg.plot_samples
                                                           : timed_count / cfg.plot_samples);
    w0.plot_next = w0.plot_every;
  }
  reporter->Phase("replay", timed_count);
  Pace pace;
  pace.rate = cfg.rate / cfg.threads;
  auto run = [&](size_t t, const TraceEvent* ev, size_t count) {
    if (cfg.rate > 0)
      RunTimed<true>(shared, ev, count, workers[t], pace);
    else
      RunTimed<false>(shared, ev, count, workers[t], pace);
  };
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  if (cfg.threads > 1) {
    for (size_t t = 0; t < workers.size(); ++t) {
      pool.emplace_back([&, t] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        run(t, workers[t].events.data(), workers[t].events.size());
      });
    }
  }
  const uint64_t t0_ns = SteadyNs();
  if (cfg.duration > 0) pace.deadline_ns = t0_ns + static_cast<uint64_t>(cfg.duration * 1e9);
  if (cfg.threads > 1) {
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
  } else {
    run(0, timed, timed_count);
  }
  return SteadyNs() - t0_ns;
}

// ---- report ------------------------------------------------------------------------

// User plus system CPU time of the whole process so far (every thread: the
// engine's, the journal's writer and checkpoint threads, RocksDB's).
double ProcessCpuSeconds() {
  struct rusage ru;
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

// The run's figures, latencies in ns.
struct Figures {
  uint64_t events = 0, refused = 0, skipped = 0;
  uint64_t p50 = 0, p99 = 0, p999 = 0, lmax = 0, lmean = 0;
  double seconds = 0, eps = 0, plot_s = 0;
  std::string first_error;
};

// Merges the workers' counts and latencies; the tick clock is calibrated
// against steady_clock over the whole run (from calib_ticks0 / calib_ns0).
Figures Summarize(const Config& cfg, std::vector<Worker>& workers, uint64_t timed_ns, uint64_t calib_ticks0,
                  uint64_t calib_ns0) {
  Figures f;
  ShardedLatencyHistogram::Snapshot hist;  // ticks
  for (Worker& w : workers) {
    hist.Merge(w.hist);
    f.events += w.done.load();
    f.refused += w.refused;
    f.skipped += w.skipped;
    if (f.first_error.empty() && !w.first_error.empty()) f.first_error = w.first_error;
  }
  uint64_t calib_ticks1 = Ticks(), calib_ns1 = SteadyNs();
  if (calib_ns1 - calib_ns0 < 20'000'000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    calib_ticks1 = Ticks();
    calib_ns1 = SteadyNs();
  }
  const double ns_per_tick = calib_ticks1 > calib_ticks0 ? static_cast<double>(calib_ns1 - calib_ns0) /
                                                               static_cast<double>(calib_ticks1 - calib_ticks0)
                                                         : 1.0;
  auto ns = [&](double ticks) { return static_cast<uint64_t>(std::llround(ticks * ns_per_tick)); };
  f.p50 = ns(static_cast<double>(hist.Percentile(50)));
  f.p99 = ns(static_cast<double>(hist.Percentile(99)));
  f.p999 = ns(static_cast<double>(hist.Percentile(99.9)));
  f.lmax = ns(static_cast<double>(hist.max_ns));
  f.lmean = ns(hist.MeanNs());
  // Sampling for --plot stopped thread 0, the only thread with one.
  f.plot_s = static_cast<double>(ns(static_cast<double>(workers[0].plot_ticks))) / 1e9;
  f.seconds = static_cast<double>(timed_ns) / 1e9;
  if (cfg.threads == 1) f.seconds = std::max(0.0, f.seconds - f.plot_s);
  f.eps = f.seconds > 0 ? static_cast<double>(f.events) / f.seconds : 0;
  return f;
}

void PrintJson(const Config& cfg, const Input& in, const Untimed& u, const Figures& f, const Engine& engine,
               const SharePlot& plot, bool interrupted, bool store_failed, const std::string& store_error,
               uint64_t applied) {
  const char* durability = cfg.db.empty() ? "none" : DurabilityName(cfg.durability);
  Json j = {{"events", f.events}, {"seconds", f.seconds}, {"events_per_sec", f.eps},
            {"latency_ns", {{"p50", f.p50}, {"p99", f.p99}, {"p999", f.p999}}}, {"digest", engine.DigestHex()},
            {"last_seq", engine.last_seq()}, {"refused", f.refused}, {"skipped_releases", f.skipped + u.warm_skipped},
            {"threads", cfg.threads}, {"batch", g_batch}, {"partition", cfg.subtree ? "subtree" : "job"},
            {"durability", durability}, {"trace", cfg.trace}, {"trace_events", in.total},
            {"setup_events", in.setup_end}, {"setup_seconds", u.setup_s}, {"resolve_seconds", u.resolve_s}, {"warmup", in.warm_end - in.setup_end},
            {"warmup_refused", u.warm_refused}, {"latency_mean_ns", f.lmean}, {"latency_max_ns", f.lmax},
            {"read_seconds", in.read_s}, {"jobs", in.trace.jobs.size()}, {"queues", in.trace.queues.size()},
            {"rate", cfg.rate}, {"interrupted", interrupted}, {"pipeline", cfg.pipeline},
            {"cpu_seconds", ProcessCpuSeconds()}};
  if (store_failed) {
    j["store_error"] = store_error;
    j["acknowledged_seq"] = engine.durable_seq();
    j["applied_events"] = applied;  // timed events applied; "events": those also acknowledged
  }
  if (!cfg.plot.empty()) {
    j["plot"] = cfg.plot;
    j["plot_samples"] = plot.samples();
    j["plot_seconds"] = f.plot_s;
  }
  if (!cfg.from_db.empty()) {
    j["from_db"] = cfg.from_db;
    j["store_last_seq"] = in.from_db.last_seq;
    j["checkpoint_seq"] = in.from_db.checkpoint_seq;
    j["base_events"] = in.from_db.base_events;
  }
  std::printf("%s\n", JsonLine(j).c_str());
}

void PrintText(const Config& cfg, const Input& in, const Untimed& u, const Figures& f, const Engine& engine,
               const SharePlot& plot) {
  std::printf("trace     %s: %zu queues, %zu jobs, %llu events (read in %.2f s)\n", cfg.trace.c_str(),
              in.trace.queues.size(), in.trace.jobs.size(), static_cast<unsigned long long>(in.total), in.read_s);
  std::printf("setup     %llu submissions in %.2f s", static_cast<unsigned long long>(in.setup_end), u.setup_s);
  if (in.warm_end > in.setup_end)
    std::printf("; warm-up %llu events", static_cast<unsigned long long>(in.warm_end - in.setup_end));
  std::printf("\n");
  std::printf("replayed  %llu events in %.3f s on %d thread%s: %s events/s%s%s\n",
              static_cast<unsigned long long>(f.events), f.seconds, cfg.threads, cfg.threads == 1 ? "" : "s",
              Rate(f.eps).c_str(), cfg.db.empty() ? " (memory only)" : "",
              g_batch > 1 ? (" (batches of " + std::to_string(g_batch) + (cfg.pipeline ? ", pipeline " + std::to_string(cfg.pipeline) : "") + ")").c_str()
                          : " (one call per event)");
  std::printf("latency   p50 %s, p99 %s, p99.9 %s, max %s (mean %s)\n", Duration(static_cast<double>(f.p50)).c_str(),
              Duration(static_cast<double>(f.p99)).c_str(), Duration(static_cast<double>(f.p999)).c_str(),
              Duration(static_cast<double>(f.lmax)).c_str(), Duration(static_cast<double>(f.lmean)).c_str());
  std::printf("refused   %llu (skipped releases %llu)\n", static_cast<unsigned long long>(f.refused + u.warm_refused),
              static_cast<unsigned long long>(f.skipped + u.warm_skipped));
  if (!cfg.db.empty())
    std::printf("store     %s (durability %s)\n", cfg.db.c_str(), DurabilityName(cfg.durability));
  std::printf("digest    %s\n", engine.DigestHex().c_str());
  std::printf("last_seq  %llu\n", static_cast<unsigned long long>(engine.last_seq()));
  if (!cfg.from_db.empty())
    std::printf("store     %s: checkpoint at event %llu, log to event %llu (rebuilt in %llu untimed events)\n",
                cfg.from_db.c_str(), static_cast<unsigned long long>(in.from_db.checkpoint_seq),
                static_cast<unsigned long long>(in.from_db.last_seq),
                static_cast<unsigned long long>(in.from_db.base_events));
  if (!cfg.plot.empty())
    std::printf("plot      %s: %zu samples, %.3f s sampling (not counted above)\n", cfg.plot.c_str(),
                plot.samples(), f.plot_s);
}

}  // namespace

int CmdReplay(int argc, char** argv) {
  Config cfg;
  if (auto exit = ParseReplayFlags(argc, argv, &cfg)) return *exit;
  g_batch = cfg.batch;
  g_pipeline = cfg.pipeline;
  const uint64_t calib_ticks0 = Ticks(), calib_ns0 = SteadyNs();
  auto in_or = ReadInput(&cfg, calib_ns0);
  if (!in_or.ok()) {
    std::fprintf(stderr, "hdrf replay: %s\n", in_or.status().message().c_str());
    return 1;
  }
  Input& in = *in_or;
  EngineOptions opts;
  opts.db_path = cfg.db;
  opts.durability = cfg.durability;
  opts.log_retention_events = cfg.retention.log_retention_events;
  opts.log_retention_seconds = cfg.retention.log_retention_seconds;
  auto engine_or = Engine::Create(in.trace.cluster, in.trace.queues, opts);
  if (!engine_or.ok()) {
    std::fprintf(stderr, "hdrf replay: %s\n", engine_or.status().message().c_str());
    return 1;
  }
  std::unique_ptr<Engine> engine = std::move(engine_or).value();
  std::vector<JobRef> refs(in.trace.jobs.size());
  std::vector<uint32_t> debt(in.trace.jobs.size(), 0);
  Shared shared{engine.get(), refs.data(), in.trace.jobs.data(), debt.data()};
  std::vector<Worker> workers(static_cast<size_t>(cfg.threads));
  SharePlot plot;

  g_stop.store(false);
  g_interrupted.store(false);
  g_store_failed.store(false);
  g_store_error.clear();
  auto old_sigint = ::signal(SIGINT, OnSigint);
  Reporter reporter(engine.get(), !cfg.db.empty(), cfg.progress, &workers);
  auto untimed = RunSetupAndWarmup(cfg, in, shared, &plot, &reporter, workers);
  if (!untimed.ok()) {
    reporter.Stop();
    ::signal(SIGINT, old_sigint);
    std::fprintf(stderr, "hdrf replay: %s\n", untimed.status().message().c_str());
    return 1;
  }
  const uint64_t timed_seq0 = engine->last_seq();  // with a store: the number of the last untimed event
  const uint64_t timed_ns = RunTimedPhase(cfg, in, shared, &plot, &reporter, workers, &untimed->resolve_s);
  if (!cfg.plot.empty()) plot.Sample(*engine);

  // Make everything durable.
  Status close_status;
  if (!cfg.db.empty()) {
    close_status = engine->Flush();
    if (close_status.ok()) close_status = engine->Close();
  }
  reporter.Stop();
  ::signal(SIGINT, old_sigint);
  if (!cfg.db.empty()) {
    std::printf("acked %llu\n", static_cast<unsigned long long>(engine->durable_seq()));
    std::fflush(stdout);
  }

  Figures f = Summarize(cfg, workers, timed_ns, calib_ticks0, calib_ns0);
  if (!untimed->first_error.empty()) f.first_error = untimed->first_error;  // the earliest
  Status plot_status;
  if (!cfg.plot.empty()) {
    plot_status = plot.Write(cfg.plot, "Dominant share of the top-level queues: " + cfg.trace);
    if (!plot_status.ok()) std::fprintf(stderr, "hdrf replay: %s\n", plot_status.message().c_str());
  }
  const bool interrupted = g_interrupted.load();
  if (f.refused + untimed->warm_refused > 0)
    std::fprintf(stderr, "hdrf replay: %llu events refused%s; first: %s\n",
                 static_cast<unsigned long long>(f.refused + untimed->warm_refused),
                 cfg.threads > 1 ? " (cluster full while another thread had not released yet)" : "",
                 f.first_error.c_str());
  if (!close_status.ok())
    std::fprintf(stderr, "hdrf replay: store %s: %s\n", cfg.db.c_str(), close_status.message().c_str());
  if (interrupted) std::fprintf(stderr, "hdrf replay: interrupted\n");
  const bool store_failed = g_store_failed.load() || (!cfg.db.empty() && !close_status.ok());
  std::string store_error;
  uint64_t applied = f.events;
  if (store_failed) {
    store_error = !g_store_error.empty() ? g_store_error : !close_status.ok() ? close_status.message() : f.first_error;
    // Count only what was applied and acknowledged: refused events were not
    // applied, events after the last durable one were applied but not
    // acknowledged, and the run stopped at the failure.
    applied = f.events - std::min(f.events, f.refused);
    const uint64_t durable = engine->durable_seq();
    f.events = std::min<uint64_t>(applied, durable > timed_seq0 ? durable - timed_seq0 : 0);
    f.eps = f.seconds > 0 ? static_cast<double>(f.events) / f.seconds : 0;
    std::fprintf(stderr,
                 "hdrf replay: the store failed; stopped after %llu applied timed events (%llu acknowledged), "
                 "last_seq %llu, acknowledged (durable) %llu\n",
                 static_cast<unsigned long long>(applied), static_cast<unsigned long long>(f.events),
                 static_cast<unsigned long long>(engine->last_seq()), static_cast<unsigned long long>(durable));
  }
  if (cfg.json)
    PrintJson(cfg, in, *untimed, f, *engine, plot, interrupted, store_failed, store_error, applied);
  else
    PrintText(cfg, in, *untimed, f, *engine, plot);
  std::fflush(stdout);
  if (interrupted) return 130;
  return close_status.ok() && plot_status.ok() && !store_failed ? 0 : 1;
}

}  // namespace hdrf::tools
