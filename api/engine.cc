#include "api/engine.h"

#include <cstdio>

#include "api/engine_impl.h"
#include "api/event_log.h"

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

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
  if (impl_ && impl_->log && !impl_->closed) (void)impl_->log->Close();
}

StatusOr<std::unique_ptr<Engine>> Engine::Create(const ResourceAmounts& cluster,
                                                  const std::vector<QueueSpec>& queues,
                                                  const EngineOptions& options) {
  engine::TreeOptions topts;
  topts.overcommit_factor = options.overcommit_factor;
  auto tree = engine::Tree::Create(cluster, queues, topts);
  if (!tree.ok()) return tree.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->tree = std::move(tree).value();
  if (!options.db_path.empty()) {
    auto log = CreateEventLog(options, *impl->tree);
    if (!log.ok()) return log.status();
    impl->log = std::move(log).value();
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

StatusOr<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  if (options.db_path.empty()) return Status::InvalidArgument("Engine::Open needs options.db_path");
  auto rec = RecoverEventLog(options);
  if (!rec.ok()) return rec.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->tree = std::move(rec->tree);
  impl->last_seq = rec->last_seq;
  impl->log = std::move(rec->log);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Status Engine::Impl::Writable() const {
  if (closed) return Status::FailedPrecondition("engine is closed");
  if (log) return log->health();
  return Status::Ok();
}

Status Engine::Impl::ApplyLocked(const Event& e, JobRef* submitted) {
  HDRF_RETURN_IF_ERROR(Writable());
  if (e.type == Event::Type::kSubmit) {
    auto id = tree->Submit(e.job);
    if (!id.ok()) return id.status();
    if (submitted) *submitted = JobRef{*id, tree->job_seq(*id)};
  } else {
    HDRF_RETURN_IF_ERROR(ApplyEvent(*tree, e));
  }
  ++last_seq;
  if (log) log->Enqueue(last_seq, e);
  return Status::Ok();
}

namespace {
// Applies one event and, with a store, waits for its durability outside the
// engine mutex so that concurrent callers share writes.
Status ApplyAndWait(Engine::Impl& impl, const Event& e, JobRef* submitted) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    HDRF_RETURN_IF_ERROR(impl.ApplyLocked(e, submitted));
    seq = impl.last_seq;
  }
  if (impl.log) return impl.log->WaitDurable(seq);
  return Status::Ok();
}

Status CheckRef(const engine::Tree& t, JobRef j) {
  if (!t.job_alive(j.id) || t.job_seq(j.id) != j.seq)
    return Status::NotFound("job #" + std::to_string(j.seq) + ": unknown job (removed?)");
  return Status::Ok();
}
}  // namespace

StatusOr<JobRef> Engine::Submit(const JobSpec& job) {
  Event e;
  e.type = Event::Type::kSubmit;
  e.job = job;
  JobRef ref;
  HDRF_RETURN_IF_ERROR(ApplyAndWait(*impl_, e, &ref));
  return ref;
}

// Task events on a JobRef: the fast path used by replay and embedders.
#define HDRF_TASK_EVENT(Method, Maker)                                   \
  Status Engine::Method(JobRef job, int64_t n) {                        \
    uint64_t seq;                                                       \
    {                                                                   \
      std::lock_guard<std::mutex> lock(impl_->mu);                      \
      HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, job));                \
      HDRF_RETURN_IF_ERROR(impl_->Writable());       \
      HDRF_RETURN_IF_ERROR(impl_->tree->Method(job.id, n));             \
      seq = ++impl_->last_seq;                                          \
      if (impl_->log) impl_->log->Enqueue(seq, Event::Maker(job.seq, n)); \
    }                                                                   \
    if (impl_->log) return impl_->log->WaitDurable(seq);                \
    return Status::Ok();                                                \
  }
HDRF_TASK_EVENT(Allocate, Allocate)
HDRF_TASK_EVENT(Release, Release)
HDRF_TASK_EVENT(Finish, Finish)
#undef HDRF_TASK_EVENT

Status Engine::ApplyTasks(const TaskOp* ops, size_t n, uint64_t* last_seq, size_t* refused) {
  uint64_t seq = 0;
  size_t bad = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    HDRF_RETURN_IF_ERROR(impl_->Writable());
    engine::Tree& t = *impl_->tree;
    for (size_t i = 0; i < n; ++i) {
      const TaskOp& op = ops[i];
      if (op.type == Event::Type::kSubmit) {
        Event e;
        e.type = Event::Type::kSubmit;
        if (op.spec) e.job = *op.spec;
        JobRef ref;
        if (!op.spec || !impl_->ApplyLocked(e, &ref).ok()) {
          ++bad;
          continue;
        }
        if (op.submitted) *op.submitted = ref;
        seq = impl_->last_seq;
        continue;
      }
      Status st = CheckRef(t, op.job);
      if (st.ok()) {
        switch (op.type) {
          case Event::Type::kAllocate: st = t.Allocate(op.job.id, op.n); break;
          case Event::Type::kRelease: st = t.Release(op.job.id, op.n); break;
          case Event::Type::kFinish: st = t.Finish(op.job.id, op.n); break;
          case Event::Type::kRemove: st = t.Remove(op.job.id); break;
          default: st = Status::InvalidArgument("ApplyTasks takes job events only");
        }
      }
      if (!st.ok()) {
        ++bad;
        continue;
      }
      seq = ++impl_->last_seq;
      if (impl_->log) {
        Event e;
        e.type = op.type;
        e.job_seq = op.job.seq;
        e.n = op.type == Event::Type::kRemove ? 0 : op.n;
        impl_->log->Enqueue(seq, e);
      }
    }
  }
  if (last_seq) *last_seq = seq;
  if (refused) *refused = bad;
  if (impl_->log && seq > 0) return impl_->log->WaitDurable(seq);
  return Status::Ok();
}

Status Engine::Remove(JobRef job) { return ApplyAndWait(*impl_, Event::Remove(job.seq), nullptr); }

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

StatusOr<std::optional<JobRef>> Engine::Step() {
  uint64_t seq;
  JobRef ref;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    std::optional<JobId> j = impl_->tree->PickNext();
    if (!j) return std::optional<JobRef>();
    ref = JobRef{*j, impl_->tree->job_seq(*j)};
    HDRF_RETURN_IF_ERROR(impl_->Writable());
    HDRF_RETURN_IF_ERROR(impl_->tree->Allocate(*j, 1));
    seq = ++impl_->last_seq;
    if (impl_->log) impl_->log->Enqueue(seq, Event::Allocate(ref.seq, 1));
  }
  if (impl_->log) HDRF_RETURN_IF_ERROR(impl_->log->WaitDurable(seq));
  return std::optional<JobRef>(ref);
}

StatusOr<int64_t> Engine::Fill() {
  int64_t steps = 0;
  for (;;) {
    auto s = Step();
    if (!s.ok()) return s.status();
    if (!s->has_value()) return steps;
    ++steps;
  }
}

std::optional<JobInfo> Engine::PickNext() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::optional<JobId> j = impl_->tree->PickNext();
  if (!j) return std::nullopt;
  return impl_->tree->GetJob(*j);
}

StatusOr<int> Engine::CompareQueues(std::string_view a, std::string_view b) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_ASSIGN_OR_RETURN(QueueId qa, impl_->tree->FindQueue(a));
  HDRF_ASSIGN_OR_RETURN(QueueId qb, impl_->tree->FindQueue(b));
  if (!impl_->tree->GetQueue(qa).is_leaf || !impl_->tree->GetQueue(qb).is_leaf)
    return Status::InvalidArgument("queue order compares leaf queues");
  return impl_->tree->CompareQueues(qa, qb);
}

StatusOr<int> Engine::CompareJobs(JobRef a, JobRef b) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, a));
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, b));
  return impl_->tree->CompareJobs(a.id, b.id);
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
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, preemptor));
  std::vector<JobId> ids;
  HDRF_RETURN_IF_ERROR(RefsToIds(*impl_->tree, victims, &ids));
  return impl_->tree->Preemptable(preemptor.id, ids);
}

StatusOr<std::vector<bool>> Engine::Reclaimable(JobRef reclaimer, const std::vector<JobRef>& victims) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, reclaimer));
  std::vector<JobId> ids;
  HDRF_RETURN_IF_ERROR(RefsToIds(*impl_->tree, victims, &ids));
  return impl_->tree->Reclaimable(reclaimer.id, ids);
}

StatusOr<std::string> Engine::AdmitTo(std::string_view queue) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_ASSIGN_OR_RETURN(QueueId q, impl_->tree->Admit(queue));
  return impl_->tree->GetQueue(q).path;
}

StatusOr<Explanation> Engine::Explain(std::string_view job) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_ASSIGN_OR_RETURN(JobId id, impl_->tree->FindJob(job));
  return impl_->tree->Explain(id);
}

StatusOr<JobRef> Engine::FindJob(std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_ASSIGN_OR_RETURN(JobId id, impl_->tree->FindJob(name));
  return JobRef{id, impl_->tree->job_seq(id)};
}

StatusOr<JobInfo> Engine::GetJob(std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_ASSIGN_OR_RETURN(JobId id, impl_->tree->FindJob(name));
  return impl_->tree->GetJob(id);
}

StatusOr<JobInfo> Engine::GetJob(JobRef job) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  HDRF_RETURN_IF_ERROR(CheckRef(*impl_->tree, job));
  return impl_->tree->GetJob(job.id);
}

std::vector<QueueInfo> Engine::Queues() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<QueueInfo> out;
  for (QueueId q : impl_->tree->QueuesInPathOrder()) out.push_back(impl_->tree->GetQueue(q));
  return out;
}

std::vector<JobInfo> Engine::Jobs() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<JobInfo> out;
  for (JobId j : impl_->tree->JobsInSubmitOrder()) out.push_back(impl_->tree->GetJob(j));
  return out;
}

std::vector<std::string> Engine::ResourceNames() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tree->resource_names();
}

std::vector<int64_t> Engine::Total() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tree->total();
}

uint64_t Engine::Digest() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tree->Digest();
}

std::string Engine::DigestHex() const { return DigestToHex(Digest()); }

uint64_t Engine::last_seq() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->last_seq;
}

uint64_t Engine::durable_seq() const {
  if (!impl_->log) return last_seq();
  return impl_->log->durable_seq();
}

size_t Engine::job_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tree->job_count();
}

size_t Engine::queue_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tree->queue_count();
}

Status Engine::Flush() { return impl_->log ? impl_->log->Flush() : Status::Ok(); }
Status Engine::Checkpoint() { return impl_->log ? impl_->log->Checkpoint() : Status::Ok(); }

// The log object lives until the engine is destroyed: a concurrent caller
// may still be waiting in WaitDurable. Once closed it reports an error from
// health(), so later events are refused.
Status Engine::Close() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->log || impl_->closed) return Status::Ok();
  impl_->closed = true;
  return impl_->log->Close();
}

Status Engine::CheckInvariants() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tree->CheckInvariants();
}

}  // namespace hdrf
