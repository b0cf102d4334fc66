#include "engine/event.h"

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

Status ApplyJobEvent(engine::Tree& tree, Event::Type t, JobId id, int64_t n) {
  switch (t) {
    case Event::Type::kAllocate: return tree.Allocate(id, n);
    case Event::Type::kRelease: return tree.Release(id, n);
    case Event::Type::kFinish: return tree.Finish(id, n);
    case Event::Type::kRemove: return tree.Remove(id);
    default: return Status::InvalidArgument(std::string("not a job event: ") + EventTypeName(t));
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
      return ApplyJobEvent(tree, e.type, id, e.n);
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
