// Reference model, derived values (reference_internal.h): §4 shares and
// blocking, §6 fit, held-back amounts and real capability, §7 user limits,
// §14 gang fit. Everything is recomputed from a Model when a View is built.
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "tests/reference/reference_internal.h"

namespace hdrf::ref::detail {

double DominantShare(const DVec& u, const Vec& total, const std::vector<bool>& saturated) {
  double s = 0;
  for (size_t r = 0; r < u.size(); ++r) {
    if (saturated[r] || total[r] <= 0) continue;
    s = std::max(s, u[r] / static_cast<double>(total[r]));
  }
  return s;
}

double DrfShareAll(const Vec& v, const Vec& total) {
  double s = 0;
  for (size_t r = 0; r < v.size(); ++r) {
    if (total[r] <= 0) continue;
    s = std::max(s, static_cast<double>(v[r]) / static_cast<double>(total[r]));
  }
  return s;
}

DVec ToDouble(const Vec& v) {
  DVec d(v.size());
  for (size_t r = 0; r < v.size(); ++r) d[r] = static_cast<double>(v[r]);
  return d;
}

// The max(...) part is compared exactly:
// x <= max(B·p/100, B/n)  <=>  100·x <= B·p  or  n·x <= B.
bool UserLimit::Within(size_t r, int64_t x) const {
  if (percent && !(Wide{100} * x <= Wide{b[r]} * p || Wide{n} * x <= Wide{b[r]})) return false;
  if (factor && lists[r] && static_cast<double>(x) > gf[r]) return false;
  return true;
}

bool UserLimit::Reached(size_t r, int64_t x) const {
  if (percent && Wide{100} * x >= Wide{b[r]} * p && Wide{n} * x >= Wide{b[r]}) return true;
  if (factor && lists[r] && static_cast<double>(x) >= gf[r]) return true;
  return false;
}

namespace {
// floor(a / b) for b > 0, also for a negative a.
Wide FloorDiv(Wide a, Wide b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace

// The largest whole x with Within(r, x): max(floor(B·p/100), floor(B/n)),
// then at most floor(guarantee·f).
int64_t UserLimit::Largest(size_t r) const {
  Wide x = kUnlimited;
  if (percent) x = std::max(FloorDiv(Wide{b[r]} * p, 100), FloorDiv(Wide{b[r]}, n));
  if (factor && lists[r]) {
    const double g = std::floor(gf[r]);
    if (g < 9e18) x = std::min(x, static_cast<Wide>(g));
  }
  return static_cast<int64_t>(std::min<Wide>(x, kUnlimited));
}

View::View(const Model& m) : m_(m) {
  const size_t R = m.R();
  // free = T − Σ job allocations; saturated: free[r] <= 0 (semantics 1).
  free_ = m.total;
  for (const auto& j : m.jobs) {
    Vec a = m.Allocation(j);
    for (size_t r = 0; r < R; ++r) free_[r] -= a[r];
  }
  saturated_.assign(R, false);
  for (size_t r = 0; r < R; ++r) saturated_[r] = free_[r] <= 0;

  // usage_A = plain sum of the allocations of the jobs under A (§6).
  for (const auto& [p, q] : m.queues) {
    Vec u(R, 0);
    for (const auto& j : m.jobs) {
      if (!InSubtree(j.queue, p)) continue;
      Vec a = m.Allocation(j);
      for (size_t r = 0; r < R; ++r) u[r] += a[r];
    }
    usage_[p] = u;
  }

  // Real capability (§6): realcap(root) = T;
  // realcap(Q) = min(cap_Q, realcap(parent) − Σ guarantees of Q's siblings).
  // Path order puts every parent before its children.
  for (const auto& [p, q] : m.queues) {
    if (p == kRoot) {
      realcap_[p] = m.total;
      continue;
    }
    const Vec& parent_rc = realcap_.at(ParentOf(p));
    Vec sib_g(R, 0);
    for (const auto& s : m.Siblings(p)) {
      Vec g = m.Dense(m.queues.at(s).guarantee, 0);
      for (size_t r = 0; r < R; ++r) sib_g[r] += g[r];
    }
    Vec cap = m.Dense(q.capability, kUnlimited);
    Vec rc(R);
    for (size_t r = 0; r < R; ++r) rc[r] = std::min(cap[r], parent_rc[r] - sib_g[r]);
    realcap_[p] = rc;
  }

  // Jobs: blocked (§4) and schedulable (§5, §6, §14).
  job_blocked_.assign(m.jobs.size(), false);
  job_schedulable_.assign(m.jobs.size(), false);
  for (size_t i = 0; i < m.jobs.size(); ++i) {
    job_blocked_[i] = ComputeJobBlocked(m.jobs[i]);
    job_schedulable_[i] = ComputeJobSchedulable(m.jobs[i]);
  }

  // Node vectors, bottom-up: reverse path order visits children first.
  for (auto it = m.queues.rbegin(); it != m.queues.rend(); ++it) ComputeQueueValue(it->first);
}

NodeValue View::JobValue(const Job& j) const {
  NodeValue v;
  v.blocked = JobBlocked(j);
  v.u = ToDouble(m_.Allocation(j));
  v.share = DominantShare(v.u, m_.total, saturated_);
  v.key = v.share / ClampWeight(j.weight);
  return v;
}

bool View::SubtreeHasSchedulable(const std::string& q, const std::set<std::string>& excluded) const {
  for (const auto& j : m_.jobs)
    if (InSubtree(j.queue, q) && JobSchedulable(j) && !excluded.count(j.name)) return true;
  return false;
}

Vec View::HeldBack(const std::string& q) const {
  Vec hb(m_.R(), 0);
  for (const auto& a : PathFromRoot(q)) {
    for (const auto& s : m_.Siblings(a)) {
      Vec g = m_.Dense(m_.queues.at(s).guarantee, 0);
      const Vec& u = Usage(s);
      for (size_t r = 0; r < m_.R(); ++r) hb[r] += std::max<int64_t>(0, g[r] - u[r]);
    }
  }
  return hb;
}

UserLimit View::UserLimitOf(const std::string& q) const {
  const Queue& queue = m_.queues.at(q);
  const size_t R = m_.R();
  UserLimit l;
  l.p = queue.min_user_limit_percent;
  l.percent = l.p < 100;
  // n: distinct users owning a job in the leaf with a task count above 0.
  std::set<std::string> users;
  for (const Job* j : m_.JobsIn(q))
    if (j->tasks > 0) users.insert(j->user);
  l.n = static_cast<int64_t>(std::max<size_t>(1, users.size()));
  l.factor = queue.user_limit_factor.has_value();
  const Vec& rc = RealCap(q);
  l.b.assign(R, 0);
  l.lists.assign(R, false);
  l.gf.assign(R, 0);
  for (size_t r = 0; r < R; ++r) {
    auto g = queue.guarantee.find(m_.res[r]);
    // A guarantee of 0 is the same as none (semantics item 4).
    l.lists[r] = g != queue.guarantee.end() && g->second > 0;
    // B[r]: the guarantee where it lists r with a value above zero, else
    // the real capability.
    l.b[r] = (l.lists[r] && g->second > 0) ? g->second : rc[r];
    if (l.factor && l.lists[r]) l.gf[r] = static_cast<double>(g->second) * *queue.user_limit_factor;
  }
  return l;
}

Vec View::UserUsage(const std::string& q, const std::string& user) const {
  Vec u(m_.R(), 0);
  for (const Job* j : m_.JobsIn(q)) {
    if (j->user != user) continue;
    Vec a = m_.Allocation(*j);
    for (size_t r = 0; r < m_.R(); ++r) u[r] += a[r];
  }
  return u;
}

// §4 job blocked, with semantics items 1, 4, 5. §14 leaves it unchanged.
bool View::ComputeJobBlocked(const Job& j) const {
  if (j.allocated >= j.tasks) return true;  // all tasks allocated
  if (j.state == JobState::kPending) return true;
  const std::vector<std::string> path = PathFromRoot(j.queue);
  const Vec hb = HeldBack(j.queue);
  const UserLimit limit = UserLimitOf(j.queue);
  const Vec uu = UserUsage(j.queue, j.user);
  for (size_t r = 0; r < m_.R(); ++r) {
    if (j.task[r] <= 0) continue;  // requires r when task[r] > 0
    if (saturated_[r]) return true;
    for (const auto& a : path) {
      const Vec cap = m_.Dense(m_.queues.at(a).capability, kUnlimited);
      if (Usage(a)[r] >= cap[r]) return true;
    }
    if (free_[r] - hb[r] <= 0) return true;
    if (limit.Reached(r, uu[r])) return true;
  }
  return false;
}

// §6 with n·task[r] in place of task[r] (§14), checked for every resource.
bool View::FitsTasks(const Job& j, int64_t n) const {
  const std::vector<std::string> path = PathFromRoot(j.queue);
  const Vec hb = HeldBack(j.queue);
  const UserLimit limit = UserLimitOf(j.queue);
  const Vec uu = UserUsage(j.queue, j.user);
  for (size_t r = 0; r < m_.R(); ++r) {
    const Wide need = Wide{n} * j.task[r];
    if (need > Wide{free_[r]} - hb[r]) return false;
    for (const auto& a : path) {
      const Vec cap = m_.Dense(m_.queues.at(a).capability, kUnlimited);
      if (cap[r] == kUnlimited) continue;
      if (Wide{Usage(a)[r]} + need > cap[r]) return false;
    }
    if (need > kUnlimited - uu[r]) return false;
    if (!limit.Within(r, uu[r] + static_cast<int64_t>(need))) return false;
  }
  return true;
}

bool View::ComputeJobSchedulable(const Job& j) const {
  if (j.state != JobState::kInqueue && j.state != JobState::kRunning) return false;
  if (j.allocated >= j.tasks) return false;
  return FitsTasks(j, StepTasks(j));
}

// §4 queue vector from its children's values (children computed first).
void View::ComputeQueueValue(const std::string& q) {
  std::vector<std::pair<NodeValue, double>> children;  // value, weight
  const std::vector<std::string> cq = m_.ChildQueues(q);
  if (!cq.empty()) {
    for (const auto& c : cq)
      children.emplace_back(queue_value_.at(c), ClampWeight(m_.queues.at(c).weight));
  } else {
    for (const Job* j : m_.JobsIn(q)) children.emplace_back(JobValue(*j), ClampWeight(j->weight));
  }
  NodeValue v;
  v.u.assign(m_.R(), 0.0);
  // Blocked when all children are blocked; no children => blocked.
  v.blocked = true;
  for (const auto& [c, w] : children)
    if (!c.blocked) v.blocked = false;
  // M = min over non-blocked children of s(U_c)/w_c.
  bool any_nb = false;
  double big_m = 0;
  for (const auto& [c, w] : children) {
    if (c.blocked) continue;
    const double k = c.share / w;
    big_m = any_nb ? std::min(big_m, k) : k;
    any_nb = true;
  }
  for (const auto& [c, w] : children) {
    if (c.blocked) {
      for (size_t r = 0; r < m_.R(); ++r) v.u[r] += c.u[r];
    } else if (c.share > 0) {
      const double scale = big_m * w / c.share;
      for (size_t r = 0; r < m_.R(); ++r) v.u[r] += scale * c.u[r];
    }
  }
  v.share = DominantShare(v.u, m_.total, saturated_);
  v.key = v.share / ClampWeight(m_.queues.at(q).weight);
  queue_value_[q] = std::move(v);
}

}  // namespace hdrf::ref::detail
