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
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hdrf/latency_histogram.h"
#include "hdrf/event.h"
#include "hdrf/op.h"
#include "hdrf/plan.h"
#include "hdrf/reconcile.h"
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
  // docs/spec.md §12 enqueue gate factor. Default: unset (gate off).
  std::optional<double> overcommit_factor;
  // Directory of the RocksDB store. Default: "" (memory only).
  std::string db_path;
  // Default: kSync. Ignored without db_path.
  Durability durability = Durability::kSync;
  // Take a checkpoint in the background after this many logged events, or
  // after checkpoint_events_per_job times the live jobs when that is more
  // (docs/storage.md "Checkpoints"). Default: 1,000,000. 0 = only on
  // Checkpoint() and Close().
  uint64_t checkpoint_every = 1000000;
  // k: a background checkpoint waits for at least k logged events per live
  // job, so that checkpoints (whose cost grows with the jobs) cost a bounded
  // amount per event, while recovery replays at most about k events per job
  // after the newest checkpoint (cheap: folding). 0 = checkpoint_every alone.
  // Default: 4 (at 10^6 jobs a checkpoint every 4·10^6 events).
  uint32_t checkpoint_events_per_job = 4;
  // With a store: how much log history a checkpoint keeps (docs/storage.md
  // "Log retention"). A checkpoint always keeps the log since the one before
  // it (about 1-2 checkpoint intervals); these keep more: at least the last
  // log_retention_events events, and at least the events of the last
  // log_retention_seconds seconds by event time (event_clock), counted back
  // from the checkpoint's event. A record is deleted only when every rule
  // lets it go. `hdrf workload import --from-db` reads as far back as the
  // log goes. UINT64_MAX events keeps every event. Defaults: 0 and 0 (off:
  // today's log of one to two checkpoint intervals; a longer history costs
  // disk, about 24 bytes a task event, so it is asked for).
  uint64_t log_retention_events = 0;
  int64_t log_retention_seconds = 0;
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
  // Engine::Create only: room for this many jobs made up front. The per-job
  // tables (job records, task shapes, names, view entries, the id and name
  // indexes) then do not grow by doubling while jobs arrive: no copy, no
  // unused capacity of up to half the table, no freed buffers the allocator
  // keeps resident for a while. More jobs than this still work (the tables
  // grow). At most 2^32 - 2. Default: 0 (tables grow as jobs arrive).
  uint64_t reserve_jobs = 0;
  // Engine::ApplyTasks: apply a batch's task events grouped by lock shard,
  // each shard's in batch order under one take of its lock, so that with
  // several threads a shard's memory moves between cores once per group
  // instead of once per event (docs/concurrency.md "Batches"). Only events
  // sure to stay in their shard are grouped, so the state and every status
  // are those of applying the batch in order. kAuto groups while another
  // ApplyTasks call is running (one thread alone is faster in order);
  // kAlways and kNever as named. Default: kAuto.
  enum class BatchGrouping { kAuto, kAlways, kNever };
  BatchGrouping batch_grouping = BatchGrouping::kAuto;
  // With a store: the time logged with each event (docs/storage.md "Event
  // times"), in microseconds since the Unix epoch. Called once per logged
  // event, in sequence order, under the event log's lock: it must be fast,
  // must not call into the engine, and should not decrease. An embedder
  // passes its own event time this way (the platform's timestamp, or a
  // virtual clock as `hdrf simulate --db` does). Default: empty, the host's
  // clock (HostClockMicros).
  std::function<int64_t()> event_clock;
};

// The host's clock as logged events carry it: microseconds since the Unix
// epoch (CLOCK_REALTIME).
int64_t HostClockMicros();

// What Engine::Open did to rebuild the state (zeros for Create).
struct RecoveryStats {
  uint64_t checkpoint_seq = 0;   // the checkpoint it started from (0: none)
  uint64_t events_replayed = 0;  // log events applied after it
  double seconds = 0;            // reading and rebuilding, wall clock
};

// A follower: an engine over a store that another process is writing,
// read-only, kept up to date in the background (docs/storage.md
// "Followers"). Views, decisions, Explain and metrics work; every event
// (Submit, Allocate, ..., Step, Fill, queue and capacity events) is refused
// with FailedPrecondition "engine is a read-only follower of DIR".
struct FollowerOptions {
  // The writer's store. Required.
  std::string db_path;
  // The RocksDB secondary instance's own directory. Default "": a fresh
  // temporary directory, removed on Close().
  std::string secondary_path;
  // Background catch-up period in milliseconds. Default 20. 0 = only on
  // CatchUp().
  uint32_t catch_up_interval_ms = 20;
};

// How a follower becomes the writer (Engine::Promote).
struct PromoteOptions {
  // How long to wait for the writer to release the store, in milliseconds.
  // Default -1: until it does. 0: take over only if it is free now.
  int64_t wait_ms = -1;
  // The promoted writer's options (EngineOptions of the same names).
  Durability durability = Durability::kSync;
  uint64_t checkpoint_every = 1000000;
  uint32_t checkpoint_events_per_job = 4;
  uint64_t log_retention_events = 0;
  int64_t log_retention_seconds = 0;
  uint32_t latency_sample_every = 16;
  std::function<int64_t()> event_clock;
};

// ---- host placement (Engine::StepWhere) ----
// What a host's placement test is asked: may one more task of `job` be
// placed now? The views point into the engine and are valid only during
// the call.
struct PlacementQuery {
  JobRef job;
  std::string_view name;          // the job's name
  std::string_view queue;         // the path of its leaf queue
  std::span<const int64_t> task;  // one task: ResourceNames() order, docs/spec.md §2 units
  // How many such tasks: the job's gang size (docs/spec.md §14) when it holds no
  // task yet, else 1. Place all of them or refuse.
  int64_t tasks = 1;
};
// true: the host can place the task (StepWhere then allocates it).
using PlacementFn = std::function<bool(const PlacementQuery& query)>;

// The jobs a placement test refused. StepWhere and FillWhere add every job
// they see refused and pass over the jobs in the set without asking again.
// Keep one set across calls for as long as the host's refusals stay valid
// (e.g. one instant of a simulation, where placing tasks only fills nodes)
// and Clear() it when they may not (tasks ended, nodes freed). An entry
// names one job (id and submission number): a removed job's entry matches
// no later job. Not thread-safe: one thread uses a set at a time.
class PlacementSkips {
 public:
  bool Contains(JobRef job) const;
  void Add(JobRef job);  // a host may also add jobs it knows cannot be placed
  size_t size() const { return jobs_.size(); }
  bool empty() const { return jobs_.empty(); }
  void Clear() { jobs_.clear(); }

 private:
  friend class Engine;
  std::unordered_map<JobId, uint64_t> jobs_;  // JobId -> submission sequence number
};

class Engine {
 public:
  // A new engine over `cluster` and `queues` (docs/spec.md §3 rules). With
  // options.db_path set, a new store is made there: the directory must be
  // absent or empty (AlreadyExists otherwise).
  static StatusOr<std::unique_ptr<Engine>> Create(const ResourceAmounts& cluster,
                                                  const std::vector<QueueSpec>& queues,
                                                  const EngineOptions& options = {});
  // Recovers the engine from the store at options.db_path (docs/spec.md §9).
  static StatusOr<std::unique_ptr<Engine>> Open(const EngineOptions& options);
  // A follower of the store at options.db_path, which another process may
  // hold and write (see FollowerOptions). Loads the newest checkpoint and
  // the log, then follows the writer.
  static StatusOr<std::unique_ptr<Engine>> OpenFollower(const FollowerOptions& options);
  ~Engine();

  // ---- followers and takeover (docs/storage.md "Followers") ----
  bool is_follower() const;
  // Applies what the writer logged since the last catch-up, now.
  // FailedPrecondition on an engine that is not a follower.
  Status CatchUp();
  struct FollowerLag {
    uint64_t events = 0;       // writer_seq - applied_seq
    double seconds = 0;        // time since the follower last had applied
                               // every event the store held (0 if never)
    uint64_t applied_seq = 0;  // last event applied (= last_seq())
    uint64_t writer_seq = 0;   // newest event in the store at the last catch-up
    uint64_t reloads = 0;      // times it reloaded the newest checkpoint (the log
                               // it needed was deleted, or a catch-up failed)
  };
  FollowerLag follower_lag() const;  // zeros for a non-follower
  // Warm standby: waits (options.wait_ms) until the writer releases the
  // store (its process died or closed it), applies the log tail since the
  // last catch-up and becomes the writer: events are accepted from then on,
  // continuing the writer's sequence numbers. Nothing the writer
  // acknowledged is lost; the in-memory state is kept (no recovery from
  // scratch). FailedPrecondition on a non-follower, and "store DIR: still
  // held by process N" when the wait runs out (the engine stays a
  // follower). Must not run concurrently with Close().
  Status Promote(const PromoteOptions& options = {});

  // ---- events ----
  StatusOr<JobRef> Submit(const JobSpec& job);
  // A job event of any type (hdrf/op.h): what Allocate, Release, Finish or
  // Remove does, as op.type says; these four are Apply(Op::Allocate(job,
  // n)) and so on. A type that is not a job event is InvalidArgument
  // naming it (JobEventType), and changes nothing.
  Status Apply(const Op& op);
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

  // One event for ApplyTasks: a job event (an Op's three fields: a task
  // event on `job` or a removal of `job`), or a submission of `*spec` (its
  // JobRef is written to `*submitted`).
  struct TaskOp {
    JobRef job;
    int64_t n = 1;
    Event::Type type = Event::Type::kAllocate;  // kAllocate|kRelease|kFinish|kRemove|kSubmit
    const JobSpec* spec = nullptr;               // kSubmit
    JobRef* submitted = nullptr;                 // kSubmit, may be null
    Status* status = nullptr;                    // when set: the op's outcome

    // The batch entry of job event `op`; its outcome to `*status` when set.
    static TaskOp Of(const Op& op, Status* status = nullptr) {
      TaskOp t;
      t.job = op.job;
      t.n = op.n;
      t.type = op.type;
      t.status = status;
      return t;
    }
    // The job event (not for kSubmit).
    Op op() const { return {type, job, n}; }
  };
  // Applies `ops` in order and, with a store, waits once for the durability
  // of the last one (group commit: with kSync every op is on disk when this
  // returns). Task events take the shard path of Allocate/Release/Finish, so
  // batches of several threads run in parallel and events of other threads
  // may come between two ops of a batch (docs/concurrency.md "Batches");
  // the memory of the next ops is prefetched while one is applied. Refused
  // ops are skipped and counted in *refused; the first refusal's status is
  // returned only when nothing could be made durable. `*last_seq` receives
  // the sequence number of the last applied op (0 if none); without a
  // store, where shard-path events are counted rather than numbered, it
  // receives last_seq() as of the batch's end. Each op's `status`, when
  // set, receives its own outcome; when the engine stops accepting events
  // (closed, a failed store) the ops not yet applied are refused with that
  // status, which is returned. Either pointer may be null. Not timed in
  // EventLatency().
  Status ApplyTasks(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused);
  // ApplyTasks without the wait: returns once the ops are applied and
  // logged. With a store they are acknowledged only when durable_seq()
  // reaches *last_seq (WaitDurable); with kSync their write and fsync start
  // at once on the journal's writer thread, so that the caller can apply
  // its next batch meanwhile (one batch in flight: `hdrf replay
  // --pipeline`). Without a store the same as ApplyTasks.
  Status ApplyTasksNoWait(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused);
  // Blocks until event `seq` is durable under the store's durability (what
  // an event call waits for before it returns; at once without a store);
  // the error of the failed write when it cannot be.
  Status WaitDurable(uint64_t seq);

  // Makes the engine match the platform's view after a restart
  // (hdrf/reconcile.h): removes the jobs the truth lacks, submits the ones
  // it adds, resubmits jobs whose description changed, finishes, allocates
  // and releases tasks so that every job has the truth's tasks and running
  // count, and (when truth.queues is set) creates, updates, closes and
  // deletes queues. Uses the fewest ordinary events, frees before it
  // allocates, and logs each like any event. Meant for a quiet engine
  // (events from other threads meanwhile may be undone). A refused truth
  // (bad counts or specs, an unknown queue or resource, an overflow, tasks
  // that do not fit) changes nothing: the events are tried on a copy of the
  // state first (O(jobs) time, and a second copy of the state in memory
  // while it runs), so the state, last_seq and the store
  // stay as they were. Only a failure of the store midway (or an event of
  // another thread in between that makes one refused) can leave the events
  // applied before it; calling it again goes on from there.
  StatusOr<ReconcileResult> Reconcile(const ClusterTruth& truth);

  // ---- scheduling (docs/spec.md §5) ----
  // Allocates one task to the job hdrf picks and returns that job; nullopt
  // when none can run.
  StatusOr<std::optional<JobRef>> Step();
  // Steps until none is possible; returns the number of steps.
  StatusOr<int64_t> Fill();
  // The same steps (each an event of its own, in the same order), under one
  // exclusive section for the whole fill (cheaper per step: meant for a
  // fill of many steps, e.g. a simulation), appending the job of every task
  // started to *started (when non-null): once per step, m times for the
  // step that starts a gang of m (docs/spec.md §14). Other threads' events wait for the whole
  // fill. On an error the steps before it stay and are in *started.
  StatusOr<int64_t> Fill(std::vector<JobRef>* started);
  // The job a step would pick, without allocating.
  std::optional<JobInfo> PickNext() const;
  // The waiting job (admitted, with an unallocated task) a step would serve
  // first if every task fit, passing over the jobs in `skip` (may be null):
  // the §5 descent by smallest key, blocked or not, same ties. The order in
  // which the reclaim phase of docs/spec.md §13 tries waiting jobs.
  std::optional<JobRef> FirstWaiting(const PlacementSkips* skip = nullptr) const;
  // All of them in the order successive FirstWaiting calls would return
  // them (each call passing over the jobs before it) on the current state.
  std::vector<JobRef> WaitingOrder(const PlacementSkips* skip = nullptr) const;

  // ---- host placement: fair order with a host's veto ----
  // A step that also asks the host: candidates are taken in the order a
  // step would choose them (docs/spec.md §5: the first schedulable job; were it not
  // a candidate, the next one; ...) and `can_place` is called on each in
  // turn until one is accepted; that job gets one task and is returned.
  // Every refused job is added to `skips` (a set local to the call when
  // null) and, like the jobs already in it, is passed over: the job chosen
  // is the one a step picks on the same state with those jobs not
  // candidates (their allocations still count in every share). nullopt when
  // every schedulable job is refused or skipped. Shares are those of the
  // state before the step; a refusal changes nothing in the engine.
  // Cost: a normal step plus one pick per job refused in this call; a pick
  // walks past the skipped jobs ahead of its choice in the leaves it visits
  // (skipped jobs stay in the shares), so many refusals in one leaf make
  // later steps dearer (figures in bench/README.md).
  //
  // Contract of `can_place`: it runs on the calling thread while the engine
  // holds its exclusive lock (no other event or view of this engine runs
  // meanwhile, so it sees the engine as of the step); it must not call this
  // engine (the lock is not re-entrant: it would deadlock); it should be
  // quick (other threads wait); it must not throw (an exception is returned
  // as an Internal error, nothing allocated). When it returns true the task
  // is allocated before the call returns, unless the store fails (an error
  // is returned): a host that reserves room inside can_place (e.g. picks a
  // node) commits that reservation for the returned job.
  StatusOr<std::optional<JobRef>> StepWhere(const PlacementFn& can_place,
                                            PlacementSkips* skips = nullptr);
  // StepWhere until none is possible, with one skip set for the whole fill
  // (a job refused once is not asked again in this fill); returns the
  // number of steps. Each step is an event of its own, as in Fill().
  StatusOr<int64_t> FillWhere(const PlacementFn& can_place, PlacementSkips* skips = nullptr);

  // ---- decisions (docs/spec.md §5, §8) ----
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
  // ---- taking back (docs/spec.md §15, hdrf/plan.h) ----
  // The victims whose units, stopped in order, let `job` start. Changes
  // nothing. NotFound for an unknown job; FailedPrecondition when the job is
  // Pending or has no unallocated task; InvalidArgument for a negative
  // max_victims. A plan that cannot be found is not an error: fits = false
  // and short_by says what is missing.
  StatusOr<hdrf::Plan> Plan(JobRef job, const PlanOptions& options = {}) const;
  // Applies a plan made by Plan() (on this engine) atomically, as one
  // logged event: victims' tasks stop, then the demand is allocated. The
  // plan is checked again on the current state; kAborted ("stale plan ...")
  // when an entry is no longer its job's unit or permitted, or the demand
  // would not fit, or a victim is gone; nothing changes then. A plan with
  // fits = false is FailedPrecondition; one whose waiting job is gone is
  // NotFound.
  Status ApplyPlan(const hdrf::Plan& plan);
  // The leaf a job submitted to `queue` would be placed in (§5 admission).
  StatusOr<std::string> AdmitTo(std::string_view queue) const;
  // Why a job is or is not next.
  StatusOr<Explanation> Explain(std::string_view job) const;

  // ---- views ----
  // Takes the engine's lock shared, as task events do: it runs beside them
  // (and waits only for exclusive sections). The ref may be stale by the time it is used (the job removed
  // meanwhile); events on it are then refused with kNotFound.
  StatusOr<JobRef> FindJob(std::string_view name) const;
  StatusOr<JobInfo> GetJob(std::string_view name) const;
  StatusOr<JobInfo> GetJob(JobRef job) const;
  std::vector<QueueInfo> Queues() const;  // path order
  // Every queue's settings as the spec that would create it (path order;
  // amounts only where set): what a checkpoint records of a queue.
  std::vector<QueueSpec> QueueSpecs() const;
  std::vector<JobInfo> Jobs() const;      // submission order
  std::vector<std::string> ResourceNames() const;
  std::vector<int64_t> Total() const;
  uint64_t Digest() const;                // docs/spec.md §9
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
  friend struct EngineAccess;  // api/facade/engine_access.h: the facade's files and tests
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::string DigestToHex(uint64_t digest);

}  // namespace hdrf

#endif  // HDRF_ENGINE_H_
