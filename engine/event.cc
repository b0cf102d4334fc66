#include "engine/event.h"

#include <cstdint>
#include <iterator>
#include <string>

#include "engine/tree.h"

namespace hdrf {

const char* EventTypeName(Event::Type t) {
  switch (t) {
    case Event::Type::kAllocate: return "allocate";
    case Event::Type::kRelease: return "release";
    case Event::Type::kFinish: return "finish";
    case Event::Type::kSubmit: return "submit";
    case Event::Type::kRemove: return "remove";
    case Event::Type::kCreateQueue: return "create-queue";
    case Event::Type::kUpdateQueue: return "update-queue";
    case Event::Type::kSetQueueState: return "set-queue-state";
    case Event::Type::kDeleteQueue: return "delete-queue";
    case Event::Type::kSetCapacity: return "set-capacity";
    case Event::Type::kApplyPlan: return "apply-plan";
  }
  return "unknown";
}

namespace {

// `what` (an op type given as a number or a name) is not a job event.
Status NotAJobEvent(const std::string& what) {
  std::string expected;
  for (size_t i = 0; i < std::size(kJobEventTypes); ++i) {
    if (i > 0) expected += i + 1 < std::size(kJobEventTypes) ? ", " : " or ";
    expected += std::string(EventTypeName(kJobEventTypes[i])) + " (" +
                std::to_string(static_cast<int>(kJobEventTypes[i])) + ")";
  }
  return Status::InvalidArgument("op " + what + " is not a job event: expected " + expected);
}

}  // namespace

Status NotAJobEventType(int64_t value) {
  std::string what = "type " + std::to_string(value);
  if (value >= 0 && value <= static_cast<int64_t>(Event::Type::kApplyPlan))
    what += std::string(" (") + EventTypeName(static_cast<Event::Type>(value)) + ")";
  return NotAJobEvent(what);
}

StatusOr<Event::Type> JobEventType(std::string_view name) {
  for (Event::Type t : kJobEventTypes)
    if (name == EventTypeName(t)) return t;
  return NotAJobEvent("'" + std::string(name) + "'");
}

Status CheckJobEvent(Event::Type t) {
  if (IsJobEvent(t)) return Status::Ok();
  return NotAJobEventType(static_cast<int64_t>(t));
}

Status BatchStatus(const Status& batch, std::span<const Status> outcomes) {
  size_t applied = 0;
  size_t first_bad = outcomes.size();
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].ok()) {
      ++applied;
    } else if (first_bad == outcomes.size()) {
      first_bad = i;
    }
  }
  if (!batch.ok() && applied > 0) return batch;  // applied, but not made durable
  if (first_bad < outcomes.size())
    return outcomes[first_bad].WithContext("op " + std::to_string(first_bad) + " of " +
                                           std::to_string(outcomes.size()) + " (" +
                                           std::to_string(outcomes.size() - applied) + " refused)");
  return batch;
}

Status ApplyJobEvent(engine::Tree& tree, const Op& op) {
  switch (op.type) {
    case Event::Type::kAllocate: return tree.Allocate(op.job.id, op.n);
    case Event::Type::kRelease: return tree.Release(op.job.id, op.n);
    case Event::Type::kFinish: return tree.Finish(op.job.id, op.n);
    case Event::Type::kRemove: return tree.Remove(op.job.id);
    default: return CheckJobEvent(op.type);
  }
}

Status ApplyEvent(engine::Tree& tree, const Event& e) {
  using T = Event::Type;
  switch (e.type) {
    case T::kAllocate:
    case T::kRelease:
    case T::kFinish:
    case T::kRemove: {
      HDRF_ASSIGN_OR_RETURN(JobId id, tree.FindJobBySeq(e.job_seq));
      return ApplyJobEvent(tree, Op{e.type, JobRef{id, e.job_seq}, e.n});
    }
    case T::kSubmit: return tree.Submit(e.job).status();
    case T::kCreateQueue: return tree.CreateQueue(e.queue);
    case T::kUpdateQueue: return tree.UpdateQueue(e.queue);
    case T::kSetQueueState: return tree.SetQueueState(e.path, e.state);
    case T::kDeleteQueue: return tree.DeleteQueue(e.path);
    case T::kSetCapacity: return tree.SetCapacity(e.cluster);
    case T::kApplyPlan: {
      HDRF_ASSIGN_OR_RETURN(JobId id, tree.FindJobBySeq(e.job_seq));
      std::vector<engine::Tree::PlanEntry> victims;
      for (const Event::Victim& v : e.victims) {
        HDRF_ASSIGN_OR_RETURN(JobId vid, tree.FindJobBySeq(v.job_seq));
        victims.push_back({vid, v.tasks});
      }
      // The entries say where they are: one in the job's leaf is preemption.
      return tree.ApplyPlan(id, e.n, victims, PlanMode::kBoth);
    }
  }
  return Status::InvalidArgument("unknown event type " + std::to_string(static_cast<int>(e.type)));
}

}  // namespace hdrf
