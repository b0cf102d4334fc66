// Reference model, decisions: the §5 queue order of two leaves, and §8
// Preemptable / Reclaimable through the §15 transfer rule (each candidate
// victim judged on its own, the actor's one task as D, the victim's one
// task as the unit).
#include <cmath>
#include <string>
#include <vector>

#include "tests/reference/reference_internal.h"

namespace hdrf::ref {
namespace detail {

// Queue order of §5 on the state `m`, whose derived values are `v`.
int CompareQueuesIn(const Model& m, const View& v, const std::string& a, const std::string& b) {
  if (m.FindQueue(a) == nullptr || m.FindQueue(b) == nullptr) return 0;
  const std::vector<std::string> pa = PathFromRoot(a);
  const std::vector<std::string> pb = PathFromRoot(b);
  // First level where the paths differ.
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    if (pa[i] == pb[i]) continue;
    const NodeValue& na = v.QueueValue(pa[i]);
    const NodeValue& nb = v.QueueValue(pb[i]);
    if (na.blocked != nb.blocked) return na.blocked ? 1 : -1;  // non-blocked first
    if (std::abs(na.key - nb.key) <= kTieEpsilon) return 0;
    return na.key < nb.key ? -1 : 1;
  }
  return 0;  // same queue, or one is an ancestor of the other
}

StatusOr<const Job*> Actor(const Model& m, const std::string& name, const char* what) {
  const Job* j = m.FindJob(name);
  if (j == nullptr) return Status::NotFound("job " + name + ": does not exist");
  if (j->state == JobState::kPending)
    return Status::FailedPrecondition("job " + name + ": Pending, cannot " + what);
  if (j->allocated >= j->tasks)
    return Status::FailedPrecondition("job " + name + ": has no unallocated task");
  return j;
}

namespace {

Status CheckVictims(const Model& m, const std::vector<std::string>& victims) {
  for (const auto& v : victims)
    if (m.FindJob(v) == nullptr) return Status::NotFound("job " + v + ": does not exist");
  return Status::Ok();
}

Vec Plus(const Vec& a, const Vec& b) {
  Vec out(a.size());
  for (size_t r = 0; r < a.size(); ++r) out[r] = a[r] + b[r];
  return out;
}

Vec Minus(const Vec& a, const Vec& b) {
  Vec out(a.size());
  for (size_t r = 0; r < a.size(); ++r) out[r] = a[r] - b[r];
  return out;
}

// §15 condition 2, the share clause: the taker A (vector a, weight wa) is
// below the giver B (b, wb) before, d(A)/w_A < d(B)/w_B − 1e-9, and not
// above it after, d(A + D)/w_A <= d(B − u)/w_B + 1e-9. d is the plain
// dominant share over every resource (DrfShareAll).
bool ShareClause(const Model& s, const Vec& a, double wa, const Vec& b, double wb, const Vec& d,
                 const Vec& u) {
  const bool below_before = DrfShareAll(a, s.total) / wa < DrfShareAll(b, s.total) / wb - kTieEpsilon;
  const bool not_above_after =
      DrfShareAll(Plus(a, d), s.total) / wa <= DrfShareAll(Minus(b, u), s.total) / wb + kTieEpsilon;
  return below_before && not_above_after;
}

// Preempt: A is the taking job, B the victim job, with the jobs' weights.
// No guarantee is checked.
bool PermittedPreempt(const Model& s, const Job& taker, const Vec& d, const Job& victim, const Vec& u) {
  return ShareClause(s, s.Allocation(taker), ClampWeight(taker.weight), s.Allocation(victim),
                     ClampWeight(victim.weight), d, u);
}

// Reclaim: C the lowest common ancestor of the two leaves; A and B the
// children of C on the taker's and the victim's paths.
bool PermittedReclaim(const Model& s, const Job& taker, const Vec& d, const Job& victim, const Vec& u) {
  const View v(s);
  const std::vector<std::string> pj = PathFromRoot(taker.queue);
  const std::vector<std::string> pv = PathFromRoot(victim.queue);
  size_t c = 0;  // index of C in both paths
  while (c + 1 < pj.size() && c + 1 < pv.size() && pj[c + 1] == pv[c + 1]) ++c;
  if (c + 1 >= pj.size() || c + 1 >= pv.size()) return false;  // same leaf: not a reclaim
  // Condition 1: every queue on V's path below C is reclaimable (root is
  // never below C) ...
  for (size_t i = c + 1; i < pv.size(); ++i)
    if (!s.queues.at(pv[i]).reclaimable) return false;
  // ... and no queue on V's path sees its usage of r drop to below its
  // guarantee for r: below C it changes by −u[r], at C and above by
  // D[r] − u[r].
  for (size_t i = 0; i < pv.size(); ++i) {
    const Vec g = s.Dense(s.queues.at(pv[i]).guarantee, 0);
    const Vec& usage = v.Usage(pv[i]);
    for (size_t r = 0; r < s.R(); ++r) {
      const int64_t after = i > c ? usage[r] - u[r] : usage[r] + d[r] - u[r];
      if (after < usage[r] && after < g[r]) return false;
    }
  }
  // Condition 2: the share clause, or A takes back up to its guarantee.
  const std::string& a = pj[c + 1];
  const std::string& b = pv[c + 1];
  if (ShareClause(s, v.Usage(a), ClampWeight(s.queues.at(a).weight), v.Usage(b),
                  ClampWeight(s.queues.at(b).weight), d, u))
    return true;
  const Vec ga = s.Dense(s.queues.at(a).guarantee, 0);
  for (size_t r = 0; r < s.R(); ++r)
    if (d[r] > 0 && v.Usage(a)[r] + d[r] > ga[r]) return false;
  return true;
}

}  // namespace

bool Permitted(const Model& s, const Job& taker, const Vec& d, const Job& victim, const Vec& unit,
               bool preempt) {
  return preempt ? PermittedPreempt(s, taker, d, victim, unit) : PermittedReclaim(s, taker, d, victim, unit);
}

// §8: each victim independently (a job listed twice gets the same answer
// twice). A victim that is the actor, holds no running task, or lives in
// the wrong leaf (another leaf for preempt, the same for reclaim) is false.
StatusOr<std::vector<bool>> Decide(const Model& m, const std::string& actor,
                                   const std::vector<std::string>& victims, bool preempt) {
  HDRF_ASSIGN_OR_RETURN(const Job* a, Actor(m, actor, preempt ? "preempt" : "reclaim"));
  HDRF_RETURN_IF_ERROR(CheckVictims(m, victims));
  std::vector<bool> out;
  for (const auto& name : victims) {
    const Job* v = m.FindJob(name);
    const bool same_leaf = v->queue == a->queue;
    if (name == actor || v->allocated == 0 || same_leaf != preempt) {
      out.push_back(false);
      continue;
    }
    out.push_back(Permitted(m, *a, m.Tasks(*a, 1), *v, m.Tasks(*v, 1), preempt));
  }
  return out;
}

}  // namespace detail

int ReferenceModel::CompareQueues(const std::string& a, const std::string& b) const {
  return detail::CompareQueuesIn(s_->m, s_->CurrentView(), a, b);
}

StatusOr<std::vector<bool>> ReferenceModel::Preemptable(const std::string& preemptor,
                                                        const std::vector<std::string>& victims) const {
  return detail::Decide(s_->m, preemptor, victims, /*preempt=*/true);
}

StatusOr<std::vector<bool>> ReferenceModel::Reclaimable(const std::string& reclaimer,
                                                        const std::vector<std::string>& victims) const {
  return detail::Decide(s_->m, reclaimer, victims, /*preempt=*/false);
}

std::vector<int64_t> ReferenceModel::RealCapability(const std::string& path) const {
  const detail::Model& m = s_->m;
  if (m.FindQueue(path) == nullptr) return {};
  const detail::View v(m);
  return v.RealCap(path);
}

}  // namespace hdrf::ref
