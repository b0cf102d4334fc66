// A store's checkpoint and log tail as a trace (api/hdrf/store_trace.h).
#include "hdrf/store_trace.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/tree.h"
#include "storage/codec.h"
#include "storage/log_scan.h"
#include "storage/replica.h"
#include "storage/store.h"

namespace hdrf {
namespace {

// The checkpoint state as submissions and allocations.
Status AddCheckpoint(const engine::Tree& tree, const std::string& where, StoreTrace* out,
                     std::unordered_map<uint64_t, uint32_t>* by_seq) {
  Trace& t = out->trace;
  const std::vector<std::string>& names = tree.resource_names();
  for (size_t r = 0; r < names.size(); ++r) t.cluster[names[r]] = tree.total()[r];
  t.queues = tree.QueueSpecs();
  std::unordered_map<std::string, QueueState> state;
  for (const QueueSpec& q : t.queues) state[q.path] = q.state;
  std::vector<std::pair<uint32_t, int64_t>> running;  // job index, tasks
  for (JobId id : tree.JobsInSubmitOrder()) {
    JobInfo info = tree.GetJob(id);
    if (state[info.queue] != QueueState::kOpen)
      return Status::Unimplemented(where + ": job " + info.name + " is in the " + QueueStateName(state[info.queue]) +
                                   " queue " + info.queue +
                                   "; a trace submits every job and cannot submit into such a queue");
    JobSpec j;
    j.name = info.name;
    j.queue = info.queue;
    j.user = info.user;
    j.tasks = info.tasks;
    for (size_t r = 0; r < names.size(); ++r)
      if (info.task[r] != 0) j.task[names[r]] = info.task[r];
    j.weight = info.weight;
    j.min_available = info.min_available;
    const uint32_t index = static_cast<uint32_t>(t.jobs.size());
    (*by_seq)[info.seq] = index;
    t.jobs.push_back(std::move(j));
    t.events.push_back(TraceEvent{TraceEventType::kSubmit, index, 0});
    if (info.allocated > 0) running.emplace_back(index, info.allocated);
  }
  out->base_submits = t.events.size();
  for (auto [index, n] : running) {
    for (int64_t left = n; left > 0;) {
      const int64_t k = std::min<int64_t>(left, kMaxTraceEventN);
      t.events.push_back(TraceEvent{TraceEventType::kAllocate, index, static_cast<uint32_t>(k)});
      left -= k;
    }
  }
  out->base_events = t.events.size();
  return Status::Ok();
}

}  // namespace

StatusOr<StoreTrace> ReadStoreTrace(const std::string& dir) {
  using storage::Store;
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(dir, Store::Mode::kReadOnly));
  HDRF_ASSIGN_OR_RETURN(std::vector<uint64_t> ckpts, store->CheckpointSeqs());
  if (ckpts.empty()) return Status::Corruption("store " + dir + ": no checkpoint (no h/ key); the store is incomplete");
  const uint64_t S = ckpts.back();
  // The checkpoint state, every file's checksums verified.
  storage::LoadOptions lo;
  lo.stop_at = S;
  HDRF_ASSIGN_OR_RETURN(storage::Replica base, storage::Replica::Load(*store, lo));
  if (base.meta().overcommit_factor)
    return Status::Unimplemented("store " + dir +
                                 ": written with an overcommitFactor (the enqueue gate); a trace replay "
                                 "has no gate, so it would not rebuild the same job states");
  StoreTrace out;
  out.checkpoint_seq = S;
  std::unordered_map<uint64_t, uint32_t> by_seq;  // store job seq -> trace job index
  HDRF_RETURN_IF_ERROR(AddCheckpoint(base.tree(), "store " + dir + " (checkpoint at event " + std::to_string(S) + ")",
                                     &out, &by_seq));
  const uint64_t next_job_seq = base.tree().next_seq();  // the first Submit after S gets this number
  base.TakeTree().reset();  // the jobs are in `out` now (base applies nothing more)

  // The log after the checkpoint, as trace events. Task events name their
  // job by its submission number (the checkpoint's jobs by info.seq, the
  // log's Submits numbered on from the checkpoint's next_seq), never by the
  // Submit's event number: the two part as soon as another event comes
  // before a Submit.
  const std::vector<std::string>& names = base.meta().resource_names;
  Trace& t = out.trace;
  uint64_t next = S + 1;
  HDRF_RETURN_IF_ERROR(storage::ScanLogEvents(*store, names, S + 1, next_job_seq, [&](const storage::LogEventRef& r) {
    const storage::LogOp& op = *r.op;
    auto ev = [&] { return "event " + std::to_string(r.seq) + " (" + EventTypeName(op.type) + ")"; };
    TraceEvent e;
    e.type = ToTraceEventType(op.type).value_or(TraceEventType::kAllocate);
    if (op.type == Event::Type::kSubmit) {
      e.job = static_cast<uint32_t>(t.jobs.size());
      by_seq[r.job_seq] = e.job;
      t.jobs.push_back(r.full->job);
    } else if (IsJobEvent(op.type)) {
      auto it = by_seq.find(op.job_seq);
      if (it == by_seq.end())
        return Status::Corruption(ev() + " names job #" + std::to_string(op.job_seq) +
                                  ", which neither the checkpoint nor the log before it holds");
      e.job = it->second;
      if (op.type != Event::Type::kRemove) {
        if (op.n < 1 || op.n > kMaxTraceEventN)
          return Status::Unimplemented(ev() + ": " + std::to_string(op.n) + " tasks; a trace event holds 1.." +
                                       std::to_string(kMaxTraceEventN));
        e.n = static_cast<uint32_t>(op.n);
      } else {
        by_seq.erase(it);
      }
    } else {
      return Status::Unimplemented(ev() + ": replay --from-db replays job and task events only (a trace has no "
                                   "queue or capacity events)");
    }
    t.events.push_back(e);
    next = r.seq + 1;
    return Status::Ok();
  }));
  out.last_seq = next - 1;
  Status v = ValidateTrace(t);
  if (!v.ok()) return v.WithContext("store " + dir);
  return out;
}

}  // namespace hdrf
