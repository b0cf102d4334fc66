// hdrf::Engine: the embeddable HDRF engine (public API).
//
//   auto engine = hdrf::Engine::Create(cluster, queues, options);
//   auto job = (*engine)->Submit(spec);           // StatusOr<JobRef>
//   (*engine)->Allocate(*job, 1);                 // a task started
//   auto next = (*engine)->Step();                // hdrf's own choice
//
// Every call returns Status/StatusOr; nothing throws. A refused event changes
// nothing. Events get sequence numbers 1, 2, 3, ... in the order they are
// applied; refused events get none.
//
// Thread safety: every method may be called from any thread at any time.
// Events take effect in a total order; a view taken after an event returned
// reflects it and everything before. Allocate/Release/Finish on jobs under
// different top-level queues run in parallel (lock sharding); everything
// else runs alone. The locking is described in docs/concurrency.md.
// Sequence numbers: with a store, each event's number is its position in
// the log. Without one, last_seq() counts the applied events, but parallel
// task events are not numbered one by one.
#ifndef HDRF_ENGINE_H_
#define HDRF_ENGINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/latency_histogram.h"
#include "hdrf/event.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf {

enum class Durability {
  kSync,   // on disk before the call returns
  kAsync,  // written by a background thread; survives a process crash
  kNone,   // memory only, even with a store
};
// "sync" | "async" | "none"
StatusOr<Durability> ParseDurability(std::string_view text);
const char* DurabilityName(Durability d);

struct EngineOptions {
  // SPEC §12 enqueue gate factor. Default: unset (gate off).
  std::optional<double> overcommit_factor;
  // Directory of the RocksDB store. Default: "" (memory only).
  std::string db_path;
  // Default: kSync. Ignored without db_path.
  Durability durability = Durability::kSync;
  // Take a checkpoint in the background after this many logged events.
  // Default: 1,000,000. 0 = only on Checkpoint() and Close().
  uint64_t checkpoint_every = 1000000;
  // The event latency histogram (EventLatency(), hdrf_event_latency_seconds)
  // times one in this many event calls of each thread: reading the clock
  // twice costs about 50 ns here, a quarter of an event. A power of two;
  // 1 = every call, 0 = none. Default: 16.
  uint32_t latency_sample_every = 16;
  // Engine::Open only: when non-empty, the store's resource names must be
  // these (any order), or Open fails naming both lists. Default: empty (not
  // checked).
  std::vector<std::string> expected_resources;
  // Engine::Open only: fold each job's run of task events before applying
  // it (docs/storage.md "Recovery"); false applies the log one event at a
  // time. Both give the same state. Default: true.
  bool fold_recovery = true;
};

// What Engine::Open did to rebuild the state (zeros for Create).
struct RecoveryStats {
  uint64_t checkpoint_seq = 0;   // the checkpoint it started from (0: none)
  uint64_t events_replayed = 0;  // log events applied after it
  double seconds = 0;            // reading and rebuilding, wall clock
};

// A handle for fast event calls; valid until the job is removed.
struct JobRef {
  JobId id = engine::kNone;
  uint64_t seq = 0;  // the job's submission sequence number
};

class Engine {
 public:
  // A new engine over `cluster` and `queues` (SPEC §3 rules). With
  // options.db_path set, the store there must not exist yet.
  static StatusOr<std::unique_ptr<Engine>> Create(const ResourceAmounts& cluster,
                                                  const std::vector<QueueSpec>& queues,
                                                  const EngineOptions& options = {});
  // Recovers the engine from the store at options.db_path (SPEC §9).
  static StatusOr<std::unique_ptr<Engine>> Open(const EngineOptions& options);
  ~Engine();

  // ---- events ----
  StatusOr<JobRef> Submit(const JobSpec& job);
  Status Remove(JobRef job);
  Status Allocate(JobRef job, int64_t n = 1);
  Status Release(JobRef job, int64_t n = 1);
  Status Finish(JobRef job, int64_t n = 1);
  Status CreateQueue(const QueueSpec& q);
  Status UpdateQueue(const QueueSpec& q);
  Status SetQueueState(std::string_view path, QueueState state);
  Status DeleteQueue(std::string_view path);
  Status SetCapacity(const ResourceAmounts& cluster);
  // Any event (the replay tool and recovery use this).
  Status Apply(const Event& e);

  // One event for ApplyTasks: a task event on `job`, a removal of `job`, or
  // a submission of `*spec` (its JobRef is written to `*submitted`).
  struct TaskOp {
    JobRef job;
    int64_t n = 1;
    Event::Type type = Event::Type::kAllocate;  // kAllocate|kRelease|kFinish|kRemove|kSubmit
    const JobSpec* spec = nullptr;               // kSubmit
    JobRef* submitted = nullptr;                 // kSubmit, may be null
  };
  // Applies `ops` in order in one exclusive section and, with a store, waits
  // once for the durability of the last applied op (group commit: with kSync
  // every applied op is on disk when this returns). An op the engine refuses
  // (a stale JobRef, a count the job does not allow, a submission without a
  // spec or one Submit refuses, a type not listed above) is skipped and
  // counted in *refused; its status is not returned. `*last_seq` receives
  // the sequence number of the last applied op (0 if none). Either pointer
  // may be null. Returns an error only when the engine takes no events (it
  // is closed or its log failed: nothing is applied, *last_seq and
  // *refused are left alone) or the durability wait fails. Not timed in
  // EventLatency().
  Status ApplyTasks(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused);

  // ---- scheduling (SPEC §5) ----
  // Allocates one task to the job hdrf picks and returns that job; nullopt
  // when none can run.
  StatusOr<std::optional<JobRef>> Step();
  // Steps until none is possible; returns the number of steps.
  StatusOr<int64_t> Fill();
  // The job a step would pick, without allocating.
  std::optional<JobInfo> PickNext() const;

  // ---- decisions (SPEC §5, §8) ----
  // Queue order of two leaf queues: <0 a first, 0 equal, >0 b first.
  StatusOr<int> CompareQueues(std::string_view a, std::string_view b) const;
  // Job order within a queue: <0 a first.
  StatusOr<int> CompareJobs(JobRef a, JobRef b) const;
  // Preemption within a queue: one task of `preemptor` against one task of
  // each victim (a job listed k times offers k tasks).
  StatusOr<std::vector<bool>> Preemptable(JobRef preemptor, const std::vector<JobRef>& victims) const;
  // Reclaim across queues; each victim judged independently by a path-local
  // what-if, atomically with respect to concurrent events.
  StatusOr<std::vector<bool>> Reclaimable(JobRef reclaimer, const std::vector<JobRef>& victims);
  // The leaf a job submitted to `queue` would be placed in (§5 admission).
  StatusOr<std::string> AdmitTo(std::string_view queue) const;
  // Why a job is or is not next.
  StatusOr<Explanation> Explain(std::string_view job) const;

  // ---- views ----
  StatusOr<JobRef> FindJob(std::string_view name) const;
  StatusOr<JobInfo> GetJob(std::string_view name) const;
  StatusOr<JobInfo> GetJob(JobRef job) const;
  std::vector<QueueInfo> Queues() const;  // path order
  std::vector<JobInfo> Jobs() const;      // submission order
  std::vector<std::string> ResourceNames() const;
  std::vector<int64_t> Total() const;
  uint64_t Digest() const;                // SPEC §9
  std::string DigestHex() const;          // 16 lowercase hex digits
  uint64_t last_seq() const;              // last applied event
  uint64_t durable_seq() const;           // last event known durable
  size_t job_count() const;
  size_t queue_count() const;

  // Latencies of accepted single-event calls (Submit, Remove, Allocate,
  // Release, Finish, Step, queue and capacity events, Apply; durability
  // wait included), sampled per EngineOptions::latency_sample_every.
  ShardedLatencyHistogram::Snapshot EventLatency() const;

  // ---- persistence (no-ops without a store) ----
  Status Flush();       // make every applied event durable
  Status Checkpoint();  // write a checkpoint now
  Status Close();       // flush, checkpoint, close the store

  // How the state was rebuilt by Open.
  RecoveryStats recovery_stats() const;

 private:
  struct Impl;
  friend struct EngineAccess;  // api/facade/engine_impl.h: tests and the C interface
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::string DigestToHex(uint64_t digest);

}  // namespace hdrf

#endif  // HDRF_ENGINE_H_
