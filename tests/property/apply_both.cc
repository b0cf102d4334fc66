// ApplyBoth: see apply_both.h.
#include "tests/property/apply_both.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hdrf::testing {

Status ApplyToReference(ref::ReferenceModel& m, const RandomOp& op) {
  switch (op.kind) {
    case RandomOp::Kind::kSubmit: return m.Submit(op.job).status();
    case RandomOp::Kind::kRemove: return m.Remove(op.name);
    case RandomOp::Kind::kAllocate: return m.Allocate(op.name, op.n);
    case RandomOp::Kind::kRelease: return m.Release(op.name, op.n);
    case RandomOp::Kind::kFinish: return m.Finish(op.name, op.n);
    case RandomOp::Kind::kCapacity: return m.SetCapacity(op.cluster);
    case RandomOp::Kind::kCreateQueue: return m.CreateQueue(op.queue);
    case RandomOp::Kind::kUpdateQueue: return m.UpdateQueue(op.queue);
    case RandomOp::Kind::kSetState: return m.SetQueueState(op.name, op.state);
    case RandomOp::Kind::kDeleteQueue: return m.DeleteQueue(op.name);
    case RandomOp::Kind::kStep:
    case RandomOp::Kind::kFill: break;
  }
  return Status::InvalidArgument("steps and fills are compared, not applied alone");
}

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
      rs = ApplyToReference(m, op);
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
      rs = ApplyToReference(m, op);
      break;
    case RandomOp::Kind::kCreateQueue:
      es = t.CreateQueue(op.queue);
      rs = ApplyToReference(m, op);
      break;
    case RandomOp::Kind::kUpdateQueue:
      es = t.UpdateQueue(op.queue);
      rs = ApplyToReference(m, op);
      break;
    case RandomOp::Kind::kSetState:
      es = t.SetQueueState(op.name, op.state);
      rs = ApplyToReference(m, op);
      break;
    case RandomOp::Kind::kDeleteQueue:
      es = t.DeleteQueue(op.name);
      rs = ApplyToReference(m, op);
      break;
  }
  if (es.ok() != rs.ok())
    return "acceptance differs: engine '" + es.ToString() + "' vs ref '" + rs.ToString() + "'";
  return "";
}

namespace {
constexpr double kTol = 1e-9;

}  // namespace

std::string CompareModels(const engine::Tree& t, const ref::ReferenceModel& m, uint64_t& rotation) {
  auto rq = m.Queues();
  auto eq = t.QueuesInPathOrder();
  if (rq.size() != eq.size()) return "queue count " + std::to_string(eq.size()) + " vs " + std::to_string(rq.size());
  for (size_t i = 0; i < rq.size(); ++i) {
    QueueInfo q = t.GetQueue(eq[i]);
    if (q.path != rq[i].name) return "queue order " + q.path + " vs " + rq[i].name;
    if (q.blocked != rq[i].blocked)
      return "queue " + q.path + " blocked " + std::to_string(q.blocked) + " vs ref " + std::to_string(rq[i].blocked);
    if (std::abs(q.key - rq[i].key) > kTol)
      return "queue " + q.path + " key " + std::to_string(q.key) + " vs ref " + std::to_string(rq[i].key);
    if (std::abs(q.share - rq[i].share) > kTol) return "queue " + q.path + " share differs";
    for (size_t r = 0; r < q.vector.size(); ++r)
      if (std::abs(q.vector[r] - rq[i].vector[r]) > kTol * std::max(1.0, std::abs(rq[i].vector[r])))
        return "queue " + q.path + " U[" + std::to_string(r) + "] " + std::to_string(q.vector[r]) +
               " vs ref " + std::to_string(rq[i].vector[r]);
  }
  auto rj = m.Jobs();
  auto ej = t.JobsInSubmitOrder();
  if (rj.size() != ej.size()) return "job count differs";
  for (size_t i = 0; i < rj.size(); ++i) {
    JobInfo j = t.GetJob(ej[i]);
    if (j.name != rj[i].name) return "job order " + j.name + " vs " + rj[i].name;
    if (j.queue != rj[i].queue) return "job " + j.name + " queue " + j.queue + " vs " + rj[i].queue;
    if (j.allocated != rj[i].allocated || j.tasks != rj[i].tasks) return "job " + j.name + " allocation differs";
    if (j.state != rj[i].state)
      return "job " + j.name + " state " + JobStateName(j.state) + " vs " + JobStateName(rj[i].state);
    if (j.blocked != rj[i].blocked)
      return "job " + j.name + " blocked " + std::to_string(j.blocked) + " vs ref " + std::to_string(rj[i].blocked);
    if (!j.blocked && std::abs(j.key - rj[i].key) > kTol) return "job " + j.name + " key differs";
  }
  // Queue order (§5) on one pair of leaves per event, rotating over all
  // pairs (each reference comparison is a full recompute).
  std::vector<QueueId> leaves;
  for (QueueId q : eq)
    if (t.GetQueue(q).is_leaf) leaves.push_back(q);
  const size_t pairs = leaves.size() * (leaves.size() - 1) / 2;
  size_t pick = pairs ? rotation++ % pairs : 0;
  for (size_t a = 0; a < leaves.size(); ++a)
    for (size_t b = a + 1; b < leaves.size(); ++b) {
      if (pick-- != 0) continue;
      const int e = t.CompareQueues(leaves[a], leaves[b]);
      const int r = m.CompareQueues(t.GetQueue(leaves[a]).path, t.GetQueue(leaves[b]).path);
      if ((e > 0) - (e < 0) != (r > 0) - (r < 0))
        return "queue order " + t.GetQueue(leaves[a]).path + " vs " + t.GetQueue(leaves[b]).path +
               ": engine " + std::to_string(e) + " ref " + std::to_string(r);
    }
  auto en = t.PickNext();
  auto rn = m.PickNext();
  std::string es = en ? t.GetJob(*en).name : "none";
  std::string rs = rn ? *rn : "none";
  if (es != rs) return "next step: engine " + es + " vs ref " + rs;
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
