// ApplyBoth: see apply_both.h.
#include "tests/property/apply_both.h"

#include <cstdio>
#include <cstdlib>

namespace hdrf::testing {

std::string ApplyBoth(engine::Tree& t, ref::ReferenceModel& m, const RandomOp& op) {
  Status es, rs;
  auto job_id = [&](const std::string& name) { return t.FindJob(name); };
  switch (op.kind) {
    case RandomOp::Kind::kSubmit: {
      auto e = t.Submit(op.job);
      auto r = m.Submit(op.job);
      es = e.status();
      rs = r.status();
      break;
    }
    case RandomOp::Kind::kRemove:
    case RandomOp::Kind::kAllocate:
    case RandomOp::Kind::kRelease:
    case RandomOp::Kind::kFinish: {
      auto id = job_id(op.name);
      if (!id.ok()) {
        es = id.status();
      } else if (op.kind == RandomOp::Kind::kRemove) {
        es = t.Remove(*id);
      } else if (op.kind == RandomOp::Kind::kAllocate) {
        es = t.Allocate(*id, op.n);
      } else if (op.kind == RandomOp::Kind::kRelease) {
        es = t.Release(*id, op.n);
      } else {
        es = t.Finish(*id, op.n);
      }
      if (op.kind == RandomOp::Kind::kRemove) rs = m.Remove(op.name);
      if (op.kind == RandomOp::Kind::kAllocate) rs = m.Allocate(op.name, op.n);
      if (op.kind == RandomOp::Kind::kRelease) rs = m.Release(op.name, op.n);
      if (op.kind == RandomOp::Kind::kFinish) rs = m.Finish(op.name, op.n);
      break;
    }
    case RandomOp::Kind::kStep: {
      auto e = t.Step();
      auto r = m.Step();
      std::string en = e ? t.GetJob(*e).name : "none";
      std::string rn = r ? *r : "none";
      if (en != rn) return "step chose " + en + " vs ref " + rn;
      break;
    }
    case RandomOp::Kind::kFill: {
      int64_t e = t.Fill();
      int64_t r = m.Fill();
      if (e != r) return "fill steps " + std::to_string(e) + " vs ref " + std::to_string(r);
      break;
    }
    case RandomOp::Kind::kCapacity:
      es = t.SetCapacity(op.cluster);
      rs = m.SetCapacity(op.cluster);
      break;
    case RandomOp::Kind::kCreateQueue:
      es = t.CreateQueue(op.queue);
      rs = m.CreateQueue(op.queue);
      break;
    case RandomOp::Kind::kUpdateQueue:
      es = t.UpdateQueue(op.queue);
      rs = m.UpdateQueue(op.queue);
      break;
    case RandomOp::Kind::kSetState:
      es = t.SetQueueState(op.name, op.state);
      rs = m.SetQueueState(op.name, op.state);
      break;
    case RandomOp::Kind::kDeleteQueue:
      es = t.DeleteQueue(op.name);
      rs = m.DeleteQueue(op.name);
      break;
  }
  if (es.ok() != rs.ok())
    return "acceptance differs: engine '" + es.ToString() + "' vs ref '" + rs.ToString() + "'";
  return "";
}

BothModels CreateBoth(const RandomWorld& w) {
  engine::TreeOptions topts;
  topts.overcommit_factor = w.overcommit;
  BothModels b;
  b.tree = engine::Tree::Create(w.cluster, w.queues, topts);
  b.ref = ref::ReferenceModel::Create(w.cluster, w.queues, w.overcommit);
  return b;
}

RandomOp NextOp(Rng& rng, const RandomWorld& w, const engine::Tree& t, int& next_job, int64_t i) {
  std::vector<std::string> queues, jobs;
  for (QueueId q : t.QueuesInPathOrder()) queues.push_back(t.GetQueue(q).path);
  for (JobId j : t.JobsInSubmitOrder()) jobs.push_back(t.GetJob(j).name);
  RandomOp op = MakeOp(rng, w, queues, jobs, next_job);
  if (std::getenv("HDRF_PROPERTY_VERBOSE")) std::printf("%lld: %s\n", static_cast<long long>(i), op.ToString().c_str());
  return op;
}

}  // namespace hdrf::testing
