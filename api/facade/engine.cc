#include "hdrf/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <shared_mutex>
#include <span>
#include <thread>

#include "api/facade/engine_impl.h"
#include "api/facade/follower.h"

namespace hdrf {

StatusOr<Durability> ParseDurability(std::string_view t) {
  if (t == "sync") return Durability::kSync;
  if (t == "async") return Durability::kAsync;
  if (t == "none") return Durability::kNone;
  return Status::InvalidArgument("durability '" + std::string(t) + "': expected sync, async or none");
}

const char* DurabilityName(Durability d) {
  switch (d) {
    case Durability::kSync: return "sync";
    case Durability::kAsync: return "async";
    case Durability::kNone: return "none";
  }
  return "?";
}

std::string DigestToHex(uint64_t d) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(d));
  return buf;
}

namespace {
Status CheckOptions(const EngineOptions& o) {
  if (o.log_retention_seconds < 0)
    return Status::InvalidArgument("log_retention_seconds must be 0 (off) or more, not " +
                                   std::to_string(o.log_retention_seconds));
  if ((o.latency_sample_every & (o.latency_sample_every - 1)) != 0)
    return Status::InvalidArgument("latency_sample_every must be 0 or a power of two, not " +
                                   std::to_string(o.latency_sample_every));
  if (o.reserve_jobs > uint64_t{0xfffffffe})
    return Status::InvalidArgument("reserve_jobs " + std::to_string(o.reserve_jobs) +
                                   ": more than the 4294967294 job ids an engine has");
  return Status::Ok();
}
}  // namespace

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
  if (impl_ && impl_->journal && !impl_->closed) (void)impl_->journal->Close();
}

StatusOr<std::unique_ptr<Engine>> Engine::Create(const ResourceAmounts& cluster,
                                                  const std::vector<QueueSpec>& queues,
                                                  const EngineOptions& options) {
  HDRF_RETURN_IF_ERROR(CheckOptions(options));
  engine::TreeOptions topts;
  topts.overcommit_factor = options.overcommit_factor;
  auto tree = engine::Tree::Create(cluster, queues, topts);
  if (!tree.ok()) return tree.status();
  std::unique_ptr<engine::Tree> t = std::move(tree).value();
  if (options.reserve_jobs > 0) t->ReserveJobs(options.reserve_jobs);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (!options.db_path.empty()) {
    auto journal = storage::CreateJournal(options.db_path, *t, options.overcommit_factor, JournalOptionsFor(options));
    if (!journal.ok()) return journal.status();
    impl->journal = std::move(journal).value();
  }
  impl->ct.Init(std::move(t), 0, impl->journal.get());
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

StatusOr<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  if (options.db_path.empty()) return Status::InvalidArgument("Engine::Open needs options.db_path");
  HDRF_RETURN_IF_ERROR(CheckOptions(options));
  auto rec = storage::RecoverJournal(options.db_path, RecoveryOptionsFor(options), JournalOptionsFor(options));
  if (!rec.ok()) return rec.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->journal = std::move(rec->journal);
  // The recovered replica's tree becomes the engine's; its events change
  // it from now on, so the replica is dropped.
  storage::Replica& state = *rec->state;
  impl->ct.Init(state.TakeTree(), state.last_seq(), impl->journal.get());
  impl->recovery.checkpoint_seq = state.checkpoint_seq();
  impl->recovery.events_replayed = state.events_replayed();
  impl->recovery.seconds = rec->seconds;
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

namespace {
uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
}  // namespace

EventTimer::EventTimer(EngineImpl& impl) : impl_(impl) {
  thread_local uint64_t calls = 0;
  // Atomic: a follower's Promote sets it while events may be under way.
  const uint32_t every =
      std::atomic_ref<uint32_t>(impl.options.latency_sample_every).load(std::memory_order_relaxed);
  if (every != 0 && (++calls & (every - 1)) == 0) start_ns_ = NowNs();
}

Status EventTimer::Done(Status s) {
  if (start_ns_ != 0 && s.ok()) impl_.latency.Record(NowNs() - start_ns_);
  return s;
}

ShardedLatencyHistogram::Snapshot Engine::EventLatency() const { return impl_->latency.Take(); }

namespace {
// Applies one event and, with a store, waits for its durability outside the
// engine lock so that concurrent callers share writes.
// With `ref`, the event is one on that job (the event names it by its
// submission number only): it must name a live job of this engine.
Status ApplyAndWaitUntimed(EngineImpl& impl, const Event& e, JobRef* submitted,
                           const JobRef* ref = nullptr) {
  uint64_t seq;
  {
    Exclusive lock(impl.ct);
    if (ref) HDRF_RETURN_IF_ERROR(CheckRef(impl.ct.tree(), *ref));
    HDRF_RETURN_IF_ERROR(impl.ct.Apply(e, submitted));
    seq = impl.ct.last_seq();
  }
  if (impl.journal) return impl.journal->WaitDurable(seq);
  return Status::Ok();
}

Status ApplyAndWait(EngineImpl& impl, const Event& e, JobRef* submitted, const JobRef* ref = nullptr) {
  EventTimer timer(impl);
  return timer.Done(ApplyAndWaitUntimed(impl, e, submitted, ref));
}

}  // namespace

StatusOr<JobRef> Engine::Submit(const JobSpec& job) {
  // A new job's gang must fit in it (docs/spec.md §14). Not a rule of the
  // tree: logs and traces written before gangs existed may hold such jobs
  // (minAvailable was only the gate's minimum), and they still replay, the
  // gang capped at the task count. A job of 0 tasks has nothing to start.
  if (job.tasks > 0 && job.min_available > job.tasks)
    return Status::InvalidArgument("job " + job.name + ": a gang larger than its job (minAvailable " +
                                   std::to_string(job.min_available) + " > tasks " + std::to_string(job.tasks) +
                                   ")");
  Event e;
  e.type = Event::Type::kSubmit;
  e.job = job;
  JobRef ref;
  HDRF_RETURN_IF_ERROR(ApplyAndWait(*impl_, e, &ref));
  return ref;
}

namespace {
// A task event of Engine::Apply(Op): the shard path (TaskEvent), then the
// wait for its durability, timed as one call. Not inlined into Apply:
// there the status's string moves became calls (~30 instructions an
// event, callgrind).
[[gnu::noinline]] Status TimedTaskEvent(EngineImpl& impl, const Op& op) {
  EventTimer timer(impl);
  uint64_t seq = 0;
  Status s = impl.ct.TaskEvent(op, &seq);
  if (s.ok() && impl.journal) s = impl.journal->WaitDurable(seq);
  return timer.Done(std::move(s));
}
}  // namespace

// The one entry of a single job event (hdrf/op.h): a task event takes the
// shard path (TimedTaskEvent); a removal runs alone (ApplyAndWait).
Status Engine::Apply(const Op& op) {
  if (!IsJobEvent(op.type)) return CheckJobEvent(op.type);
  if (op.type == Event::Type::kRemove) return ApplyAndWait(*impl_, Event::Remove(op.job.seq), nullptr, &op.job);
  return TimedTaskEvent(*impl_, op);
}

Status Engine::Allocate(JobRef job, int64_t n) { return Apply(Op::Allocate(job, n)); }
Status Engine::Release(JobRef job, int64_t n) { return Apply(Op::Release(job, n)); }
Status Engine::Finish(JobRef job, int64_t n) { return Apply(Op::Finish(job, n)); }
Status Engine::Remove(JobRef job) { return Apply(Op::Remove(job)); }

// Batches: engine::ConcurrentTree::ApplyTasks (docs/concurrency.md
// "Batches"), then one wait for the durability of the last op.
Status Engine::ApplyTasks(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused) {
  uint64_t logged = 0;
  HDRF_RETURN_IF_ERROR(impl_->ct.ApplyTasks(ops, n, impl_->options.batch_grouping, last_seq, refused, &logged));
  if (impl_->journal && logged > 0) return impl_->journal->WaitDurable(logged);
  return Status::Ok();
}

Status Engine::ApplyTasksNoWait(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused) {
  uint64_t logged = 0;
  HDRF_RETURN_IF_ERROR(impl_->ct.ApplyTasks(ops, n, impl_->options.batch_grouping, last_seq, refused, &logged));
  if (impl_->journal && logged > 0) impl_->journal->StartWrite(logged);
  return Status::Ok();
}

Status Engine::WaitDurable(uint64_t seq) {
  if (!impl_->journal || seq == 0) return Status::Ok();
  return impl_->journal->WaitDurable(seq);
}

Status Engine::CreateQueue(const QueueSpec& q) {
  Event e;
  e.type = Event::Type::kCreateQueue;
  e.queue = q;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::UpdateQueue(const QueueSpec& q) {
  Event e;
  e.type = Event::Type::kUpdateQueue;
  e.queue = q;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::SetQueueState(std::string_view path, QueueState state) {
  Event e;
  e.type = Event::Type::kSetQueueState;
  e.path = std::string(path);
  e.state = state;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::DeleteQueue(std::string_view path) {
  Event e;
  e.type = Event::Type::kDeleteQueue;
  e.path = std::string(path);
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::SetCapacity(const ResourceAmounts& cluster) {
  Event e;
  e.type = Event::Type::kSetCapacity;
  e.cluster = cluster;
  return ApplyAndWait(*impl_, e, nullptr);
}

Status Engine::Apply(const Event& e) { return ApplyAndWait(*impl_, e, nullptr); }

namespace {

// The allocation of one task that a step picked, recorded in the log (the
// caller holds the exclusive section); returns the record's sequence number
// for the durability wait.
StatusOr<uint64_t> AllocateOneLocked(EngineImpl& impl, engine::Tree& t, JobRef ref) REQUIRES(impl.ct.lock()) {
  HDRF_RETURN_IF_ERROR(impl.ct.Writable());
  const int64_t k = t.StepDemand(ref.id);  // a gang that holds no task: all m at once
  HDRF_RETURN_IF_ERROR(t.Allocate(ref.id, k));
  return impl.ct.RecordJob(Event::Type::kAllocate, ref.seq, k);
}

// One step (docs/spec.md §5, §14: a gang holding no task gets its m tasks in one
// event): with `can_place`, the first job in step order that it
// accepts; the ones it refuses go into `skip` (Engine::StepWhere).
StatusOr<std::optional<JobRef>> StepWith(EngineImpl& impl, const PlacementFn* can_place,
                                         engine::Tree::SkipSet* skip) {
  EventTimer timer(impl);
  uint64_t seq;
  JobRef ref;
  {
    Exclusive lock(impl.ct);
    if (!impl.follows.empty()) return impl.ct.Writable();  // a follower picks nothing
    engine::Tree& t = impl.ct.tree();
    if (can_place) HDRF_RETURN_IF_ERROR(impl.ct.Writable());  // before the host reserves anything
    std::optional<JobId> j;
    for (;;) {
      j = t.PickNext(skip);
      if (!j) return std::optional<JobRef>();
      ref = JobRef{*j, t.job_seq(*j)};
      if (!can_place) break;
      const PlacementQuery q{ref, t.job_name(*j), t.job_queue_path(*j),
                             std::span<const int64_t>(t.job_task(*j), t.resource_names().size()),
                             t.StepDemand(*j)};
      bool ok;
      try {
        ok = (*can_place)(q);
      } catch (const std::exception& e) {
        return Status::Internal(std::string("placement test threw: ") + e.what());
      } catch (...) {
        return Status::Internal("placement test threw");
      }
      if (ok) break;
      (*skip)[*j] = ref.seq;
    }
    HDRF_ASSIGN_OR_RETURN(seq, AllocateOneLocked(impl, t, ref));
  }
  if (impl.journal) HDRF_RETURN_IF_ERROR(impl.journal->WaitDurable(seq));
  (void)timer.Done(Status::Ok());
  return std::optional<JobRef>(ref);
}

}  // namespace

StatusOr<std::optional<JobRef>> Engine::Step() { return StepWith(*impl_, nullptr, nullptr); }

StatusOr<int64_t> Engine::Fill() {
  int64_t steps = 0;
  for (;;) {
    auto s = Step();
    if (!s.ok()) return s.status();
    if (!s->has_value()) return steps;
    ++steps;
  }
}

StatusOr<int64_t> Engine::Fill(std::vector<JobRef>* started) {
  EngineImpl& impl = *impl_;
  EventTimer timer(impl);
  uint64_t seq = 0;
  int64_t steps = 0;
  {
    Exclusive lock(impl.ct);
    if (!impl.follows.empty()) return impl.ct.Writable();  // a follower picks nothing
    engine::Tree& t = impl.ct.tree();
    while (std::optional<JobId> j = t.PickNext(nullptr)) {  // as StepWith, one step after another
      const JobRef ref{*j, t.job_seq(*j)};
      const int64_t k = t.StepDemand(*j);
      HDRF_ASSIGN_OR_RETURN(seq, AllocateOneLocked(impl, t, ref));
      ++steps;
      if (started) started->insert(started->end(), static_cast<size_t>(k), ref);
    }
  }
  if (impl.journal && seq > 0) HDRF_RETURN_IF_ERROR(impl.journal->WaitDurable(seq));
  (void)timer.Done(Status::Ok());
  return steps;
}

StatusOr<std::optional<JobRef>> Engine::StepWhere(const PlacementFn& can_place,
                                                  PlacementSkips* skips) {
  if (!can_place) return Status::InvalidArgument("StepWhere: the placement test is empty");
  PlacementSkips local;
  return StepWith(*impl_, &can_place, &(skips ? skips : &local)->jobs_);
}

StatusOr<int64_t> Engine::FillWhere(const PlacementFn& can_place, PlacementSkips* skips) {
  PlacementSkips local;
  if (!skips) skips = &local;
  int64_t steps = 0;
  for (;;) {
    auto s = StepWhere(can_place, skips);
    if (!s.ok()) return s.status();
    if (!s->has_value()) return steps;
    ++steps;
  }
}

bool PlacementSkips::Contains(JobRef job) const {
  auto it = jobs_.find(job.id);
  return it != jobs_.end() && it->second == job.seq;
}

void PlacementSkips::Add(JobRef job) { jobs_[job.id] = job.seq; }

std::optional<JobInfo> Engine::PickNext() const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  std::optional<JobId> j = t.PickNext();
  if (!j) return std::nullopt;
  return t.GetJob(*j);
}

StatusOr<int> Engine::CompareQueues(std::string_view a, std::string_view b) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_ASSIGN_OR_RETURN(QueueId qa, t.FindQueue(a));
  HDRF_ASSIGN_OR_RETURN(QueueId qb, t.FindQueue(b));
  if (!t.GetQueue(qa).is_leaf || !t.GetQueue(qb).is_leaf)
    return Status::InvalidArgument("queue order compares leaf queues");
  return t.CompareQueues(qa, qb);
}

StatusOr<int> Engine::CompareJobs(JobRef a, JobRef b) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_RETURN_IF_ERROR(CheckRef(t, a));
  HDRF_RETURN_IF_ERROR(CheckRef(t, b));
  return t.CompareJobs(a.id, b.id);
}

namespace {
Status RefsToIds(const engine::Tree& t, const std::vector<JobRef>& refs, std::vector<JobId>* ids) {
  for (const JobRef& r : refs) {
    HDRF_RETURN_IF_ERROR(CheckRef(t, r));
    ids->push_back(r.id);
  }
  return Status::Ok();
}
}  // namespace

StatusOr<std::vector<bool>> Engine::Preemptable(JobRef preemptor,
                                                const std::vector<JobRef>& victims) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_RETURN_IF_ERROR(CheckRef(t, preemptor));
  std::vector<JobId> ids;
  HDRF_RETURN_IF_ERROR(RefsToIds(t, victims, &ids));
  return t.Preemptable(preemptor.id, ids);
}

StatusOr<std::vector<bool>> Engine::Reclaimable(JobRef reclaimer, const std::vector<JobRef>& victims) {
  Exclusive lock(impl_->ct);
  engine::Tree& t = impl_->ct.tree();
  HDRF_RETURN_IF_ERROR(CheckRef(t, reclaimer));
  std::vector<JobId> ids;
  HDRF_RETURN_IF_ERROR(RefsToIds(t, victims, &ids));
  return t.Reclaimable(reclaimer.id, ids);
}

StatusOr<std::string> Engine::AdmitTo(std::string_view queue) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_ASSIGN_OR_RETURN(QueueId q, t.Admit(queue));
  return t.GetQueue(q).path;
}

StatusOr<Explanation> Engine::Explain(std::string_view job) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_ASSIGN_OR_RETURN(JobId id, t.FindJob(job));
  return t.Explain(id);
}

// The shared section task events use: the tree's name index, its names and
// submission numbers change only under the exclusive lock
// (engine/concurrent_tree.h "Name lookups").
StatusOr<JobRef> Engine::FindJob(std::string_view name) const {
  Shared l(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_ASSIGN_OR_RETURN(JobId id, t.FindJob(name));
  return JobRef{id, t.job_seq(id)};
}

StatusOr<JobInfo> Engine::GetJob(std::string_view name) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_ASSIGN_OR_RETURN(JobId id, t.FindJob(name));
  return t.GetJob(id);
}

StatusOr<JobInfo> Engine::GetJob(JobRef job) const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  HDRF_RETURN_IF_ERROR(CheckRef(t, job));
  return t.GetJob(job.id);
}

std::vector<QueueInfo> Engine::Queues() const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  std::vector<QueueInfo> out;
  for (QueueId q : t.QueuesInPathOrder()) out.push_back(t.GetQueue(q));
  return out;
}

std::vector<QueueSpec> Engine::QueueSpecs() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.tree().QueueSpecs();
}

std::vector<JobInfo> Engine::Jobs() const {
  Exclusive lock(impl_->ct);
  const engine::Tree& t = impl_->ct.tree();
  std::vector<JobInfo> out;
  for (JobId j : t.JobsInSubmitOrder()) out.push_back(t.GetJob(j));
  return out;
}

std::vector<std::string> Engine::ResourceNames() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.tree().resource_names();
}

std::vector<int64_t> Engine::Total() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.tree().total();
}

uint64_t Engine::Digest() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.tree().Digest();
}

std::string Engine::DigestHex() const { return DigestToHex(Digest()); }

uint64_t Engine::last_seq() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.last_seq();
}

uint64_t Engine::durable_seq() const {
  if (!impl_->journal) return last_seq();
  return impl_->journal->durable_seq();
}

size_t Engine::job_count() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.tree().job_count();
}

size_t Engine::queue_count() const {
  Exclusive lock(impl_->ct);
  return impl_->ct.tree().queue_count();
}

Status Engine::Flush() { return impl_->journal ? impl_->journal->Flush() : Status::Ok(); }
Status Engine::Checkpoint() { return impl_->journal ? impl_->journal->Checkpoint() : Status::Ok(); }

// The journal lives until the engine is destroyed: a concurrent caller
// may still be waiting in WaitDurable. Once closed, the tree refuses
// later events (ConcurrentTree::Refuse).
Status Engine::Close() {
  if (impl_->follower) impl_->follower->Stop();  // outside the lock: it joins a thread that takes it
  Exclusive lock(impl_->ct);
  if (!impl_->journal || impl_->closed) return Status::Ok();
  impl_->closed = true;
  impl_->ct.Refuse(Status::FailedPrecondition("engine is closed"));
  return impl_->journal->Close();
}

RecoveryStats Engine::recovery_stats() const { return impl_->recovery; }

Status CheckEngineInvariants(const Engine& engine) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  Exclusive lock(impl.ct);
  return impl.ct.tree().CheckInvariants();
}

}  // namespace hdrf
