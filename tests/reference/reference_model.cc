// ReferenceModel: see reference_model.h.
//
// Layout of this file:
//   1. Raw state (Model): the tree, the jobs, the cluster. Nothing derived.
//   2. Derived (View): every derived value of SPEC §4, §6, §7, recomputed
//      from a Model each time one is built. Each public query builds a fresh
//      View, so nothing derived ever outlives the state it came from.
//   3. Validation of the tree (§3, docs/semantics.md items 3, 8, 9).
//   4. The enqueue gate (§12, docs/semantics.md item 12).
//   5. ReferenceModel: events, scheduling, views.
//
// Every formula is written the way the SPEC writes it; where a choice was
// needed the comment says so, marked "Choice:".
#include "tests/reference/reference_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace hdrf::ref {
namespace detail {

using Vec = std::vector<int64_t>;   // one entry per resource, name order
using DVec = std::vector<double>;   // idem, as doubles
__extension__ typedef __int128 Wide;  // exact sums and products

constexpr double kTieEpsilon = 1e-9;  // §5: keys within 1e-9 are equal
constexpr char kRoot[] = "root";

// ---------------------------------------------------------------------------
// 1. Raw state
// ---------------------------------------------------------------------------

struct Queue {
  std::string path;
  double weight = 1;           // as given; clamped at use (Weight())
  ResourceAmounts capability;  // absent = unlimited
  ResourceAmounts guarantee;   // absent = 0
  bool reclaimable = true;
  QueueState state = QueueState::kOpen;
  int min_user_limit_percent = 100;
  std::optional<double> user_limit_factor;
};

struct Job {
  std::string name;
  std::string queue;  // leaf path
  std::string user;
  int64_t tasks = 0;
  int64_t allocated = 0;
  Vec task;           // shape of one task
  double weight = 1;  // as given; clamped at use
  int64_t min_available = 1;
  JobState state = JobState::kInqueue;
};

// Weights below 1 are raised to 1 (§3, semantics item 3).
double ClampWeight(double w) { return w < 1 ? 1.0 : w; }

std::string ParentOf(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == std::string::npos ? std::string() : path.substr(0, pos);
}

std::string NameOf(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

// True when `path` is `ancestor` or lies under it.
bool InSubtree(const std::string& path, const std::string& ancestor) {
  if (path == ancestor) return true;
  return path.size() > ancestor.size() && path.compare(0, ancestor.size(), ancestor) == 0 &&
         path[ancestor.size()] == '/';
}

// "root", "root/a", "root/a/b" for "root/a/b".
std::vector<std::string> PathFromRoot(const std::string& path) {
  std::vector<std::string> out;
  for (std::string p = path; !p.empty(); p = ParentOf(p)) out.push_back(p);
  std::reverse(out.begin(), out.end());
  return out;
}

int Rank(QueueState s) {  // open < closing < closed
  switch (s) {
    case QueueState::kOpen: return 0;
    case QueueState::kClosing: return 1;
    case QueueState::kClosed: return 2;
  }
  return 0;
}

struct Model {
  std::vector<std::string> res;  // sorted resource names
  Vec total;                     // T
  std::optional<double> overcommit_factor;
  std::map<std::string, Queue> queues;  // by path
  std::vector<Job> jobs;                // submission order

  size_t R() const { return res.size(); }

  int ResIndex(const std::string& name) const {
    auto it = std::lower_bound(res.begin(), res.end(), name);
    if (it == res.end() || *it != name) return -1;
    return static_cast<int>(it - res.begin());
  }

  const Queue* FindQueue(const std::string& path) const {
    auto it = queues.find(path);
    return it == queues.end() ? nullptr : &it->second;
  }

  Job* FindJob(const std::string& name) {
    for (auto& j : jobs)
      if (j.name == name) return &j;
    return nullptr;
  }
  const Job* FindJob(const std::string& name) const {
    for (const auto& j : jobs)
      if (j.name == name) return &j;
    return nullptr;
  }

  // Direct child queues, in name order.
  std::vector<std::string> ChildQueues(const std::string& path) const {
    std::vector<std::string> out;
    for (const auto& [p, q] : queues)
      if (ParentOf(p) == path) out.push_back(p);
    std::sort(out.begin(), out.end(),
              [](const std::string& a, const std::string& b) { return NameOf(a) < NameOf(b); });
    return out;
  }

  // Siblings of `path` (same parent, not itself).
  std::vector<std::string> Siblings(const std::string& path) const {
    std::vector<std::string> out;
    if (path == kRoot) return out;
    for (const auto& c : ChildQueues(ParentOf(path)))
      if (c != path) out.push_back(c);
    return out;
  }

  // §1: a leaf queue has no child queues.
  bool IsLeaf(const std::string& path) const { return ChildQueues(path).empty(); }

  // Jobs living directly in `leaf`, submission order.
  std::vector<const Job*> JobsIn(const std::string& leaf) const {
    std::vector<const Job*> out;
    for (const auto& j : jobs)
      if (j.queue == leaf) out.push_back(&j);
    return out;
  }

  bool SubtreeHasJobs(const std::string& path) const {
    for (const auto& j : jobs)
      if (InSubtree(j.queue, path)) return true;
    return false;
  }

  // Sparse -> dense, absent = `absent`.
  Vec Dense(const ResourceAmounts& m, int64_t absent) const {
    Vec v(R(), absent);
    for (size_t r = 0; r < R(); ++r) {
      auto it = m.find(res[r]);
      if (it != m.end()) v[r] = it->second;
    }
    return v;
  }

  // Job allocation = allocated × task.
  Vec Allocation(const Job& j) const {
    Vec v(R());
    for (size_t r = 0; r < R(); ++r) v[r] = j.allocated * j.task[r];
    return v;
  }
};

// ---------------------------------------------------------------------------
// 2. Derived values
// ---------------------------------------------------------------------------

// s(U) = max over non-saturated r (T[r] > 0) of U[r]/T[r]; 0 if none (§4).
double DominantShare(const DVec& u, const Vec& total, const std::vector<bool>& saturated) {
  double s = 0;
  for (size_t r = 0; r < u.size(); ++r) {
    if (saturated[r] || total[r] <= 0) continue;
    s = std::max(s, u[r] / static_cast<double>(total[r]));
  }
  return s;
}

// Max over every r with T[r] > 0 of v[r]/T[r] (semantics item 11; §5 admission).
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

struct NodeValue {
  bool blocked = true;
  DVec u;          // U
  double share = 0;  // s(U)
  double key = 0;    // s(U) / w
};

// Everything derived from one Model, computed in the constructor.
class View {
 public:
  explicit View(const Model& m) : m_(m) {
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

    // Jobs: blocked (§4) and fit (§6).
    job_blocked_.assign(m.jobs.size(), false);
    job_fits_.assign(m.jobs.size(), false);
    for (size_t i = 0; i < m.jobs.size(); ++i) {
      job_blocked_[i] = ComputeJobBlocked(m.jobs[i]);
      job_fits_[i] = ComputeJobFits(m.jobs[i]);
    }

    // Node vectors, bottom-up: reverse path order visits children first.
    for (auto it = m.queues.rbegin(); it != m.queues.rend(); ++it) ComputeQueueValue(it->first);
  }

  const Vec& Free() const { return free_; }
  const std::vector<bool>& Saturated() const { return saturated_; }
  const Vec& Usage(const std::string& q) const { return usage_.at(q); }
  const Vec& RealCap(const std::string& q) const { return realcap_.at(q); }

  size_t JobIndex(const Job& j) const { return static_cast<size_t>(&j - m_.jobs.data()); }

  bool JobBlocked(const Job& j) const { return job_blocked_[JobIndex(j)]; }
  bool JobFits(const Job& j) const { return job_fits_[JobIndex(j)]; }

  // §5: Inqueue or Running, unallocated tasks, and one more task fits (§6).
  // Pending jobs are never schedulable (semantics item 5).
  bool JobSchedulable(const Job& j) const {
    if (j.state != JobState::kInqueue && j.state != JobState::kRunning) return false;
    if (j.allocated >= j.tasks) return false;
    return JobFits(j);
  }

  NodeValue JobValue(const Job& j) const {
    NodeValue v;
    v.blocked = JobBlocked(j);
    v.u = ToDouble(m_.Allocation(j));
    v.share = DominantShare(v.u, m_.total, saturated_);
    v.key = v.share / ClampWeight(j.weight);
    return v;
  }

  const NodeValue& QueueValue(const std::string& q) const { return queue_value_.at(q); }

  // Jobs named in `excluded` count as not schedulable (PickNext(excluded)).
  bool SubtreeHasSchedulable(const std::string& q, const std::set<std::string>& excluded = {}) const {
    for (const auto& j : m_.jobs)
      if (InSubtree(j.queue, q) && JobSchedulable(j) && !excluded.count(j.name)) return true;
    return false;
  }

  // held_back(Q)[r] = Σ over queues S that are a sibling of Q or of one of
  // Q's ancestors of max(0, guarantee_S[r] − usage_S[r]) (§6).
  Vec HeldBack(const std::string& q) const {
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

  // §7 with semantics item 4: the per-user limit of leaf `q` for resource
  // r is limit[r] = max(B[r]·p/100, B[r]/n) when p < 100 (else unlimited),
  // and at most guarantee[r]·f when f is set and the guarantee lists r.
  struct UserLimit {
    bool percent = false;  // p < 100
    int p = 100;
    int64_t n = 1;         // distinct users, at least 1
    Vec b;                 // B[r]
    bool factor = false;   // f set
    std::vector<bool> lists;  // the guarantee lists r
    DVec gf;               // guarantee[r]·f

    // x <= limit[r]. The max(...) part is compared exactly:
    // x <= max(B·p/100, B/n)  <=>  100·x <= B·p  or  n·x <= B.
    bool Within(size_t r, int64_t x) const {
      if (percent && !(Wide{100} * x <= Wide{b[r]} * p || Wide{n} * x <= Wide{b[r]})) return false;
      if (factor && lists[r] && static_cast<double>(x) > gf[r]) return false;
      return true;
    }
    // x >= limit[r] (the limit is reached).
    bool Reached(size_t r, int64_t x) const {
      if (percent && Wide{100} * x >= Wide{b[r]} * p && Wide{n} * x >= Wide{b[r]}) return true;
      if (factor && lists[r] && static_cast<double>(x) >= gf[r]) return true;
      return false;
    }
  };

  UserLimit UserLimitOf(const std::string& q) const {
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

  // Sum of the allocations of `user`'s jobs in leaf `q`.
  Vec UserUsage(const std::string& q, const std::string& user) const {
    Vec u(m_.R(), 0);
    for (const Job* j : m_.JobsIn(q)) {
      if (j->user != user) continue;
      Vec a = m_.Allocation(*j);
      for (size_t r = 0; r < m_.R(); ++r) u[r] += a[r];
    }
    return u;
  }

 private:
  // §4 job blocked, with semantics items 1, 4, 5.
  bool ComputeJobBlocked(const Job& j) const {
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

  // §6: one more task fits, checked for every resource.
  bool ComputeJobFits(const Job& j) const {
    const std::vector<std::string> path = PathFromRoot(j.queue);
    const Vec hb = HeldBack(j.queue);
    const UserLimit limit = UserLimitOf(j.queue);
    const Vec uu = UserUsage(j.queue, j.user);
    for (size_t r = 0; r < m_.R(); ++r) {
      if (j.task[r] > free_[r] - hb[r]) return false;
      for (const auto& a : path) {
        const Vec cap = m_.Dense(m_.queues.at(a).capability, kUnlimited);
        if (cap[r] == kUnlimited) continue;
        if (Usage(a)[r] + j.task[r] > cap[r]) return false;
      }
      if (!limit.Within(r, uu[r] + j.task[r])) return false;
    }
    return true;
  }

  // §4 queue vector from its children's values (children computed first).
  void ComputeQueueValue(const std::string& q) {
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

  const Model& m_;
  Vec free_;
  std::vector<bool> saturated_;
  std::map<std::string, Vec> usage_;
  std::map<std::string, Vec> realcap_;
  std::vector<bool> job_blocked_;
  std::vector<bool> job_fits_;
  std::map<std::string, NodeValue> queue_value_;
};

// Tie rule (§5, semantics item 6): the smallest key m first, then among the
// candidates whose key is <= m + 1e-9 the first one by `before`.
template <typename T, typename KeyFn, typename BeforeFn>
std::optional<T> PickMin(const std::vector<T>& cands, KeyFn key, BeforeFn before) {
  if (cands.empty()) return std::nullopt;
  double m = key(cands[0]);
  for (const auto& c : cands) m = std::min(m, key(c));
  std::optional<T> best;
  for (const auto& c : cands) {
    if (key(c) > m + kTieEpsilon) continue;
    if (!best.has_value() || before(c, *best)) best = c;
  }
  return best;
}

// ---------------------------------------------------------------------------
// 3. Tree validation
// ---------------------------------------------------------------------------

std::string Amount(int64_t v) { return v == kUnlimited ? std::string("inf") : std::to_string(v); }

Status QueueError(const std::string& path, const std::string& rule) {
  return Status::InvalidArgument("queue " + path + ": " + rule);
}

Status ValidatePath(const std::string& path) {
  if (path != kRoot && path.rfind(std::string(kRoot) + "/", 0) != 0)
    return QueueError(path, "path must start with root/");
  std::string::size_type start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end == start) return QueueError(path, "empty name in path");
    start = end + 1;
  }
  return Status::Ok();
}

// Attribute rules that concern only the queue itself.
Status ValidateAttributes(const Model& m, const Queue& q) {
  if (!std::isfinite(q.weight)) return QueueError(q.path, "weight must be a finite number");
  if (q.min_user_limit_percent < 1 || q.min_user_limit_percent > 100)
    return QueueError(q.path, "minUserLimitPercent " + std::to_string(q.min_user_limit_percent) +
                                  " is outside 1..100");
  if (q.user_limit_factor.has_value() &&
      !(std::isfinite(*q.user_limit_factor) && *q.user_limit_factor > 0))
    return QueueError(q.path, "userLimitFactor must be a number above 0");
  for (const auto* amounts : {&q.capability, &q.guarantee}) {
    const char* what = amounts == &q.capability ? "capability" : "guarantee";
    for (const auto& [r, v] : *amounts) {
      if (m.ResIndex(r) < 0)  // Choice: as for tasks (semantics item 10)
        return QueueError(q.path, std::string(what) + " names unknown resource " + r);
      if (v < 0) return QueueError(q.path, std::string(what) + " " + r + " is negative");
    }
  }
  return Status::Ok();
}

// Nearest proper ancestor of `path` whose capability sets `r`, or "".
std::string NearestCapAncestor(const Model& m, const std::string& path, const std::string& r) {
  for (std::string a = ParentOf(path); !a.empty(); a = ParentOf(a))
    if (m.queues.at(a).capability.count(r)) return a;
  return "";
}

// Effective capability of `path` for r: the smallest explicit capability on
// the path from root to the queue (unlimited when none sets r).
int64_t EffectiveCap(const Model& m, const std::string& path, const std::string& r) {
  int64_t c = kUnlimited;
  for (const auto& a : PathFromRoot(path)) {
    const auto& cap = m.queues.at(a).capability;
    auto it = cap.find(r);
    if (it != cap.end()) c = std::min(c, it->second);
  }
  return c;
}

// Checks every §3 rule that a change to queue `path` can affect, on the
// candidate model `m` (the change already applied). `before` is the model
// before the change (for the root-children-vs-cluster rule, see below).
Status ValidateQueueChange(const Model& m, const Model& before, const std::string& path) {
  const Queue& q = m.queues.at(path);
  HDRF_RETURN_IF_ERROR(ValidateAttributes(m, q));

  // Capability and guarantee vs capability, for the queue and its subtree.
  // Choice: an update of a parent can break a descendant's rule, so every
  // queue of the subtree is checked again, including a descendant's
  // guarantee against the (lowered) effective capability from above.
  for (const auto& [dp, d] : m.queues) {
    if (!InSubtree(dp, path)) continue;
    for (const auto& [r, v] : d.capability) {
      const std::string a = NearestCapAncestor(m, dp, r);
      if (a.empty()) continue;
      const int64_t pv = m.queues.at(a).capability.at(r);
      if (v > pv)
        return QueueError(dp, "capability " + r + " " + Amount(v) + " exceeds " + a +
                                  "'s capability " + Amount(pv));
    }
    for (const auto& [r, v] : d.guarantee) {
      const int64_t c = EffectiveCap(m, dp, r);
      if (v > c)
        return QueueError(dp, "guarantee " + r + " " + Amount(v) + " exceeds capability " +
                                  Amount(c));
    }
  }

  // Σ children guarantees <= the parent's guarantee where the parent lists r:
  // for the queue's parent and for the queue itself. A listed 0 is the same
  // as no guarantee (semantics item 4); root's own guarantee, when it lists
  // r, bounds its children too (besides the cluster).
  std::vector<std::string> parents = {path};
  if (path != kRoot) parents.push_back(ParentOf(path));
  for (const auto& p : parents) {
    const Queue& pq = m.queues.at(p);
    for (const auto& [r, pg] : pq.guarantee) {
      if (pg <= 0) continue;
      int64_t sum = 0;
      for (const auto& c : m.ChildQueues(p)) {
        const auto& g = m.queues.at(c).guarantee;
        auto it = g.find(r);
        if (it != g.end()) sum += it->second;
      }
      if (sum > pg)
        return QueueError(p, "children's guarantees for " + r + " add up to " + Amount(sum) +
                                 ", above the guarantee " + Amount(pg));
    }
  }

  // Σ guarantees of root's children <= cluster. Capacity changes may leave
  // this violated (semantics item 9). Choice: a request is refused for it only
  // when it raises the sum above the cluster, so that a queue of such a tree
  // can still be updated and its guarantee lowered.
  if (path != kRoot && ParentOf(path) == kRoot) {
    for (size_t r = 0; r < m.R(); ++r) {
      auto sum_of = [&](const Model& mm) {
        int64_t sum = 0;
        for (const auto& c : mm.ChildQueues(kRoot)) {
          const auto& g = mm.queues.at(c).guarantee;
          auto it = g.find(mm.res[r]);
          if (it != g.end()) sum += it->second;
        }
        return sum;
      };
      const int64_t after = sum_of(m);
      const int64_t prior = sum_of(before);
      if (after > m.total[r] && after > prior)
        return QueueError(path, "guarantees of root's children for " + m.res[r] + " add up to " +
                                    Amount(after) + ", above the cluster's " +
                                    Amount(m.total[r]));
    }
  }
  return Status::Ok();
}

Queue FromSpec(const QueueSpec& s) {
  Queue q;
  q.path = s.path;
  q.weight = s.weight;
  q.capability = s.capability;
  q.guarantee = s.guarantee;
  q.reclaimable = s.reclaimable;
  q.state = s.state;
  q.min_user_limit_percent = s.min_user_limit_percent;
  q.user_limit_factor = s.user_limit_factor;
  return q;
}

// Adds queue `spec` under its existing parent, with every check. On error `m`
// is unchanged.
Status CreateQueueIn(Model& m, const QueueSpec& spec) {
  HDRF_RETURN_IF_ERROR(ValidatePath(spec.path));
  if (m.queues.count(spec.path)) return Status::AlreadyExists("queue " + spec.path + ": already exists");
  const std::string parent = ParentOf(spec.path);
  const Queue* pq = m.FindQueue(parent);
  if (pq == nullptr)
    return Status::NotFound("queue " + spec.path + ": parent " + parent + " does not exist");
  if (m.IsLeaf(parent) && !m.JobsIn(parent).empty())
    return Status::FailedPrecondition("queue " + spec.path + ": parent " + parent +
                                      " is a leaf that holds jobs");
  Model cand = m;
  Queue q = FromSpec(spec);
  // A closed or closing parent closes its whole subtree (§3, semantics 8).
  // Choice: the new queue takes the parent's state when that is the more
  // closed one (open < closing < closed).
  if (Rank(pq->state) > Rank(q.state)) q.state = pq->state;
  cand.queues[q.path] = q;
  HDRF_RETURN_IF_ERROR(ValidateQueueChange(cand, m, q.path));
  m = std::move(cand);
  return Status::Ok();
}

// Replaces the attributes of an existing queue (state untouched unless
// `with_state`). On error `m` is unchanged.
Status UpdateQueueIn(Model& m, const QueueSpec& spec, bool with_state) {
  const Queue* old = m.FindQueue(spec.path);
  if (old == nullptr) return Status::NotFound("queue " + spec.path + ": does not exist");
  Model cand = m;
  Queue q = FromSpec(spec);
  q.state = old->state;
  cand.queues[q.path] = q;
  HDRF_RETURN_IF_ERROR(ValidateQueueChange(cand, m, q.path));
  if (with_state && spec.state != old->state) {
    // Same rules as SetQueueState.
    if (spec.state == QueueState::kOpen) {
      const Queue* p = cand.FindQueue(ParentOf(spec.path));
      if (p != nullptr && p->state != QueueState::kOpen)
        return Status::FailedPrecondition("queue " + spec.path + ": parent is not open");
      cand.queues[spec.path].state = QueueState::kOpen;
    } else {
      for (auto& [p, qq] : cand.queues)
        if (InSubtree(p, spec.path)) qq.state = spec.state;
    }
  }
  m = std::move(cand);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// 4. Enqueue gate (§12)
// ---------------------------------------------------------------------------


// m = minAvailable × task, per resource.
std::vector<Wide> Minimum(const Job& j) {
  std::vector<Wide> v(j.task.size());
  for (size_t r = 0; r < j.task.size(); ++r) v[r] = static_cast<Wide>(j.min_available) * j.task[r];
  return v;
}

// Whether Pending job `j` becomes Inqueue under the current state.
bool GateAdmits(const Model& m, const Job& j) {
  const View v(m);
  const size_t R = m.R();
  const std::string& leaf = j.queue;
  const std::vector<Wide> need = Minimum(j);
  const Vec guarantee = m.Dense(m.queues.at(leaf).guarantee, 0);
  const Vec& leaf_usage = v.Usage(leaf);
  const Vec& all_usage = v.Usage(kRoot);
  // Σ minimums of Inqueue jobs (admitted, no task allocated: semantics 12).
  std::vector<Wide> inq_leaf(R, 0), inq_all(R, 0);
  for (const auto& o : m.jobs) {
    if (&o == &j || o.state != JobState::kInqueue) continue;
    const std::vector<Wide> mo = Minimum(o);
    for (size_t r = 0; r < R; ++r) {
      inq_all[r] += mo[r];
      if (o.queue == leaf) inq_leaf[r] += mo[r];
    }
  }
  // (a) m fits in guarantee − usage − the other Inqueue jobs' minimums.
  bool in_guarantee = true;
  for (size_t r = 0; r < R; ++r)
    if (need[r] > static_cast<Wide>(guarantee[r]) - leaf_usage[r] - inq_leaf[r]) in_guarantee = false;
  if (in_guarantee) return true;
  // (b) Σ usage + Σ Inqueue minimums + m <= f × T, and the same sums for the
  // leaf within its real capability.
  const double f = *m.overcommit_factor;
  const Vec& rc = v.RealCap(leaf);
  for (size_t r = 0; r < R; ++r) {
    const Wide cluster_sum = static_cast<Wide>(all_usage[r]) + inq_all[r] + need[r];
    // f × T is a plain double product (f = 0.7, T = 10 cpu -> 7 cpu).
    if (static_cast<double>(cluster_sum) > f * static_cast<double>(m.total[r])) return false;
    const Wide leaf_sum = static_cast<Wide>(leaf_usage[r]) + inq_leaf[r] + need[r];
    if (leaf_sum > static_cast<Wide>(rc[r])) return false;
  }
  return true;
}

// Pending jobs re-examined in submission order (semantics item 12).
void ReexaminePending(Model& m) {
  if (!m.overcommit_factor.has_value()) return;
  for (auto& j : m.jobs)
    if (j.state == JobState::kPending && GateAdmits(m, j)) j.state = JobState::kInqueue;
}

// State after the allocation changed: Running while allocated > 0, Inqueue
// when it returns to 0 (a Pending job stays Pending at 0).
void SettleState(Job& j) {
  if (j.allocated > 0) {
    j.state = JobState::kRunning;
  } else if (j.state == JobState::kRunning) {
    j.state = JobState::kInqueue;
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------
// 5. ReferenceModel
// ---------------------------------------------------------------------------

using detail::Job;
using detail::Model;
using detail::Queue;
using detail::View;

struct ReferenceModel::State {
  Model m;
};

ReferenceModel::ReferenceModel() : s_(std::make_unique<State>()) {}
ReferenceModel::~ReferenceModel() = default;

StatusOr<std::unique_ptr<ReferenceModel>> ReferenceModel::Create(
    const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
    std::optional<double> overcommit_factor) {
  std::unique_ptr<ReferenceModel> rm(new ReferenceModel());
  Model& m = rm->s_->m;
  for (const auto& [r, v] : cluster) {
    if (r.empty()) return Status::InvalidArgument("cluster: empty resource name");
    if (v < 0) return Status::InvalidArgument("cluster: " + r + " is negative");
    m.res.push_back(r);
    m.total.push_back(v);
  }
  if (overcommit_factor.has_value() &&
      !(std::isfinite(*overcommit_factor) && *overcommit_factor >= 0))
    return Status::InvalidArgument("overcommit_factor must be a finite number >= 0");
  m.overcommit_factor = overcommit_factor;
  Queue root;
  root.path = detail::kRoot;
  m.queues[root.path] = root;

  // Any order: sort by path, which puts every parent before its children.
  std::map<std::string, QueueSpec> by_path;
  for (const auto& q : queues) {
    if (!by_path.emplace(q.path, q).second)
      return Status::AlreadyExists("queue " + q.path + ": listed twice");
  }
  for (const auto& [path, spec] : by_path) {
    if (path == detail::kRoot) {
      HDRF_RETURN_IF_ERROR(detail::UpdateQueueIn(m, spec, /*with_state=*/true));
      continue;
    }
    HDRF_RETURN_IF_ERROR(detail::ValidatePath(path));
    // Unlisted parents: open, weight 1.
    for (const auto& a : detail::PathFromRoot(detail::ParentOf(path))) {
      if (m.queues.count(a)) continue;
      QueueSpec implicit;
      implicit.path = a;
      HDRF_RETURN_IF_ERROR(detail::CreateQueueIn(m, implicit));
    }
    HDRF_RETURN_IF_ERROR(detail::CreateQueueIn(m, spec));
  }
  return rm;
}

Status ReferenceModel::CreateQueue(const QueueSpec& q) { return detail::CreateQueueIn(s_->m, q); }

Status ReferenceModel::UpdateQueue(const QueueSpec& q) {
  return detail::UpdateQueueIn(s_->m, q, /*with_state=*/false);
}

Status ReferenceModel::SetQueueState(const std::string& path, QueueState state) {
  Model& m = s_->m;
  if (m.FindQueue(path) == nullptr) return Status::NotFound("queue " + path + ": does not exist");
  if (state == QueueState::kOpen) {
    // Opening applies to the queue alone, refused while the parent is not open.
    const Queue* p = m.FindQueue(detail::ParentOf(path));
    if (p != nullptr && p->state != QueueState::kOpen)
      return Status::FailedPrecondition("queue " + path + ": cannot open while parent " + p->path +
                                        " is " + QueueStateName(p->state));
    m.queues[path].state = QueueState::kOpen;
    return Status::Ok();
  }
  // Closing / closed cascades to the whole subtree.
  for (auto& [p, q] : m.queues)
    if (detail::InSubtree(p, path)) q.state = state;
  return Status::Ok();
}

Status ReferenceModel::DeleteQueue(const std::string& path) {
  Model& m = s_->m;
  if (path == detail::kRoot) return Status::InvalidArgument("queue root: cannot be deleted");
  const Queue* q = m.FindQueue(path);
  if (q == nullptr) return Status::NotFound("queue " + path + ": does not exist");
  if (q->state != QueueState::kClosed)
    return Status::FailedPrecondition("queue " + path + ": only a closed queue can be deleted (it is " +
                                      QueueStateName(q->state) + ")");
  if (m.SubtreeHasJobs(path))
    return Status::FailedPrecondition("queue " + path + ": its subtree holds jobs");
  for (auto it = m.queues.begin(); it != m.queues.end();) {
    if (detail::InSubtree(it->first, path)) {
      it = m.queues.erase(it);
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

StatusOr<std::string> ReferenceModel::Submit(const JobSpec& spec) {
  Model& m = s_->m;
  const std::string& name = spec.name;
  if (name.empty()) return Status::InvalidArgument("job: empty name");
  if (m.FindJob(name) != nullptr) return Status::AlreadyExists("job " + name + ": already exists");
  if (spec.tasks < 0) return Status::InvalidArgument("job " + name + ": task count below 0");
  if (spec.min_available < 0) return Status::InvalidArgument("job " + name + ": minAvailable below 0");
  if (!std::isfinite(spec.weight))
    return Status::InvalidArgument("job " + name + ": weight must be a finite number");
  detail::Vec task(m.R(), 0);
  for (const auto& [r, v] : spec.task) {
    const int i = m.ResIndex(r);
    if (i < 0) return Status::NotFound("job " + name + ": task names unknown resource " + r);
    if (v < 0) return Status::InvalidArgument("job " + name + ": task " + r + " is negative");
    if (v > m.total[i])
      return Status::InvalidArgument("job " + name + ": task " + r + " " + std::to_string(v) +
                                     " exceeds the cluster total " + std::to_string(m.total[i]));
    task[i] = v;
  }

  std::string q = spec.queue.empty() ? std::string(detail::kRoot) : spec.queue;
  const Queue* queue = m.FindQueue(q);
  if (queue == nullptr) return Status::NotFound("job " + name + ": queue " + q + " does not exist");
  if (m.IsLeaf(q)) {
    if (queue->state != QueueState::kOpen)
      return Status::FailedPrecondition("job " + name + ": queue " + q + " is " +
                                        QueueStateName(queue->state));
  } else {
    // Admission (§5, semantics 7): descend through open children by the
    // dominant share (all resources) of the subtree's usage over its weight.
    const View v(m);
    while (!m.IsLeaf(q)) {
      std::vector<std::string> open;
      for (const auto& c : m.ChildQueues(q))
        if (m.queues.at(c).state == QueueState::kOpen) open.push_back(c);
      auto key = [&](const std::string& c) {
        return detail::DrfShareAll(v.Usage(c), m.total) / detail::ClampWeight(m.queues.at(c).weight);
      };
      auto before = [](const std::string& a, const std::string& b) {
        return detail::NameOf(a) < detail::NameOf(b);
      };
      auto pick = detail::PickMin(open, key, before);
      if (!pick.has_value())
        return Status::FailedPrecondition("job " + name + ": no open queue under " + q);
      q = *pick;
    }
  }

  Job j;
  j.name = name;
  j.queue = q;
  j.user = spec.user;
  j.tasks = spec.tasks;
  j.allocated = 0;
  j.task = task;
  j.weight = spec.weight;
  j.min_available = spec.min_available;
  j.state = m.overcommit_factor.has_value() ? JobState::kPending : JobState::kInqueue;
  m.jobs.push_back(j);
  // Choice: only the new job is evaluated at submit; the other Pending jobs
  // are re-examined after the events semantics item 12 lists (release,
  // finish, removal, capacity change), not here, nor after Allocate/Step or
  // UpdateQueue.
  if (m.overcommit_factor.has_value() && detail::GateAdmits(m, m.jobs.back()))
    m.jobs.back().state = JobState::kInqueue;
  return q;
}

Status ReferenceModel::Remove(const std::string& job) {
  Model& m = s_->m;
  for (auto it = m.jobs.begin(); it != m.jobs.end(); ++it) {
    if (it->name == job) {
      m.jobs.erase(it);
      detail::ReexaminePending(m);
      return Status::Ok();
    }
  }
  return Status::NotFound("job " + job + ": does not exist");
}

Status ReferenceModel::Allocate(const std::string& job, int64_t n) {
  Model& m = s_->m;
  Job* j = m.FindJob(job);
  if (j == nullptr) return Status::NotFound("job " + job + ": does not exist");
  if (n < 1) return Status::InvalidArgument("job " + job + ": allocate count below 1");
  if (j->allocated + n > j->tasks)
    return Status::OutOfRange("job " + job + ": allocating " + std::to_string(n) + " tasks exceeds " +
                              std::to_string(j->tasks - j->allocated) + " unallocated");
  // Semantics item 2: a Pending job (not admitted) is refused, and only the
  // resources the task uses are checked against free.
  if (j->state == JobState::kPending)
    return Status::FailedPrecondition("job " + job + ": Pending (not admitted by the enqueue gate)");
  const View v(m);
  for (size_t r = 0; r < m.R(); ++r) {
    if (j->task[r] > 0 && static_cast<detail::Wide>(n) * j->task[r] > v.Free()[r])
      return Status::FailedPrecondition("job " + job + ": " + std::to_string(n) + " tasks need more " +
                                        m.res[r] + " than is free");
  }
  j->allocated += n;
  detail::SettleState(*j);
  return Status::Ok();
}

Status ReferenceModel::Release(const std::string& job, int64_t n) {
  Model& m = s_->m;
  Job* j = m.FindJob(job);
  if (j == nullptr) return Status::NotFound("job " + job + ": does not exist");
  if (n < 1) return Status::InvalidArgument("job " + job + ": release count below 1");
  if (n > j->allocated)
    return Status::OutOfRange("job " + job + ": releasing " + std::to_string(n) + " tasks but " +
                              std::to_string(j->allocated) + " are running");
  j->allocated -= n;
  detail::SettleState(*j);
  detail::ReexaminePending(m);
  return Status::Ok();
}

Status ReferenceModel::Finish(const std::string& job, int64_t n) {
  Model& m = s_->m;
  Job* j = m.FindJob(job);
  if (j == nullptr) return Status::NotFound("job " + job + ": does not exist");
  if (n < 1) return Status::InvalidArgument("job " + job + ": finish count below 1");
  if (n > j->allocated)
    return Status::OutOfRange("job " + job + ": finishing " + std::to_string(n) + " tasks but " +
                              std::to_string(j->allocated) + " are running");
  j->allocated -= n;
  j->tasks -= n;
  detail::SettleState(*j);
  detail::ReexaminePending(m);
  return Status::Ok();
}

Status ReferenceModel::SetCapacity(const ResourceAmounts& cluster) {
  Model& m = s_->m;
  if (cluster.size() != m.res.size())
    return Status::InvalidArgument("cluster: capacity must name the same resources");
  detail::Vec total;
  for (const auto& [r, v] : cluster) {
    if (m.ResIndex(r) < 0) return Status::InvalidArgument("cluster: unknown resource " + r);
    if (v < 0) return Status::InvalidArgument("cluster: " + r + " is negative");
    total.push_back(v);
  }
  m.total = total;
  detail::ReexaminePending(m);
  return Status::Ok();
}

std::optional<std::string> ReferenceModel::PickNext() const { return PickNext({}); }

std::optional<std::string> ReferenceModel::PickNext(const std::set<std::string>& excluded) const {
  const Model& m = s_->m;
  const View v(m);
  std::string q = detail::kRoot;
  if (!v.SubtreeHasSchedulable(q, excluded)) return std::nullopt;
  // 1. Descend from root by the smallest key among the children that have a
  //    schedulable job in their subtree.
  while (!m.IsLeaf(q)) {
    std::vector<std::string> cands;
    for (const auto& c : m.ChildQueues(q))
      if (v.SubtreeHasSchedulable(c, excluded)) cands.push_back(c);
    auto pick = detail::PickMin(
        cands, [&](const std::string& c) { return v.QueueValue(c).key; },
        [](const std::string& a, const std::string& b) { return detail::NameOf(a) < detail::NameOf(b); });
    if (!pick.has_value()) return std::nullopt;  // unreachable
    q = *pick;
  }
  // 2. In the leaf, the schedulable job with the smallest key; ties to the
  //    earlier submitted (candidates are in submission order).
  std::vector<size_t> cands;
  for (size_t i = 0; i < m.jobs.size(); ++i)
    if (m.jobs[i].queue == q && v.JobSchedulable(m.jobs[i]) && !excluded.count(m.jobs[i].name))
      cands.push_back(i);
  auto pick = detail::PickMin(
      cands, [&](size_t i) { return v.JobValue(m.jobs[i]).key; },
      [](size_t a, size_t b) { return a < b; });
  if (!pick.has_value()) return std::nullopt;
  return m.jobs[*pick].name;
}

std::optional<std::string> ReferenceModel::Step() {
  auto name = PickNext();
  if (!name.has_value()) return std::nullopt;
  Job* j = s_->m.FindJob(*name);
  j->allocated += 1;  // it fits (§6), so the cluster is not over-allocated
  detail::SettleState(*j);
  return name;
}

int64_t ReferenceModel::Fill() {
  int64_t steps = 0;
  while (Step().has_value()) ++steps;
  return steps;
}

std::vector<std::string> ReferenceModel::ResourceNames() const { return s_->m.res; }

std::vector<RefNodeView> ReferenceModel::Queues() const {
  const Model& m = s_->m;
  const View v(m);
  std::vector<RefNodeView> out;
  for (const auto& [p, q] : m.queues) {
    const detail::NodeValue& nv = v.QueueValue(p);
    RefNodeView n;
    n.name = p;
    n.blocked = nv.blocked;
    n.share = nv.share;
    n.key = nv.key;
    n.vector = nv.u;
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<RefJobView> ReferenceModel::Jobs() const {
  const Model& m = s_->m;
  const View v(m);
  std::vector<RefJobView> out;
  for (const auto& j : m.jobs) {
    RefJobView jv;
    jv.name = j.name;
    jv.queue = j.queue;
    jv.user = j.user;
    jv.tasks = j.tasks;
    jv.allocated = j.allocated;
    jv.state = j.state;
    jv.blocked = v.JobBlocked(j);
    jv.key = v.JobValue(j).key;
    jv.drf_share = detail::DrfShareAll(m.Allocation(j), m.total);
    jv.schedulable = v.JobSchedulable(j);
    out.push_back(std::move(jv));
  }
  return out;
}

namespace detail {

// Queue order of §5 on the state `m`.
int CompareQueuesIn(const Model& m, const std::string& a, const std::string& b) {
  if (m.FindQueue(a) == nullptr || m.FindQueue(b) == nullptr) return 0;
  const View v(m);
  const std::vector<std::string> pa = detail::PathFromRoot(a);
  const std::vector<std::string> pb = detail::PathFromRoot(b);
  // First level where the paths differ.
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    if (pa[i] == pb[i]) continue;
    const detail::NodeValue& na = v.QueueValue(pa[i]);
    const detail::NodeValue& nb = v.QueueValue(pb[i]);
    if (na.blocked != nb.blocked) return na.blocked ? 1 : -1;  // non-blocked first
    if (std::abs(na.key - nb.key) <= detail::kTieEpsilon) return 0;
    return na.key < nb.key ? -1 : 1;
  }
  return 0;  // same queue, or one is an ancestor of the other
}

// The job that decisions act for: known, admitted, with a task to place.
StatusOr<const Job*> Actor(const Model& m, const std::string& name, const char* what) {
  const Job* j = m.FindJob(name);
  if (j == nullptr) return Status::NotFound("job " + name + ": does not exist");
  if (j->state == JobState::kPending)
    return Status::FailedPrecondition("job " + name + ": Pending, cannot " + what);
  if (j->allocated >= j->tasks)
    return Status::FailedPrecondition("job " + name + ": has no unallocated task");
  return j;
}

Status CheckVictims(const Model& m, const std::vector<std::string>& victims) {
  for (const auto& v : victims)
    if (m.FindJob(v) == nullptr) return Status::NotFound("job " + v + ": does not exist");
  return Status::Ok();
}

}  // namespace detail

int ReferenceModel::CompareQueues(const std::string& a, const std::string& b) const {
  return detail::CompareQueuesIn(s_->m, a, b);
}

// §8 Preemptable, literally: ls = DRF share of the preemptor with one more
// task; for each victim, rs = DRF share of the victim job with its listed
// tasks so far removed (removals add up); allowed when ls < rs or
// |ls - rs| <= 1e-6. Only running tasks of other jobs in the same leaf.
StatusOr<std::vector<bool>> ReferenceModel::Preemptable(const std::string& preemptor,
                                                        const std::vector<std::string>& victims) const {
  const Model& m = s_->m;
  HDRF_ASSIGN_OR_RETURN(const Job* p, detail::Actor(m, preemptor, "preempt"));
  HDRF_RETURN_IF_ERROR(detail::CheckVictims(m, victims));
  Model after = m;  // removals accumulate here
  Job* pa = after.FindJob(preemptor);
  pa->allocated += 1;
  const double ls = detail::DrfShareAll(after.Allocation(*pa), after.total);
  std::vector<bool> out;
  for (const auto& name : victims) {
    Job* v = after.FindJob(name);
    if (name == preemptor || v->queue != p->queue || v->allocated == 0) {
      out.push_back(false);
      continue;
    }
    v->allocated -= 1;
    const double rs = detail::DrfShareAll(after.Allocation(*v), after.total);
    out.push_back(ls < rs || std::abs(ls - rs) <= 1e-6);
  }
  return out;
}

// §8 Reclaimable, the simple way: for each victim a fresh copy of the state
// with the reclaimer's task added and the victim's removed; the queue order
// of §5 is recomputed from scratch on it. docs/semantics.md item 13: every
// queue on the victim's path that does not hold the reclaimer must be
// reclaimable, and no queue on the victim's path may end below its
// guarantee in a resource whose usage the move lowers.
StatusOr<std::vector<bool>> ReferenceModel::Reclaimable(const std::string& reclaimer,
                                                        const std::vector<std::string>& victims) const {
  const Model& m = s_->m;
  HDRF_ASSIGN_OR_RETURN(const Job* rj, detail::Actor(m, reclaimer, "reclaim"));
  HDRF_RETURN_IF_ERROR(detail::CheckVictims(m, victims));
  std::vector<bool> out;
  for (const auto& name : victims) {
    const Job* v = m.FindJob(name);
    if (name == reclaimer || v->allocated == 0 || v->queue == rj->queue) {
      out.push_back(false);
      continue;
    }
    Model after = m;
    after.FindJob(reclaimer)->allocated += 1;
    after.FindJob(name)->allocated -= 1;
    const View vb(m);
    const View va(after);
    bool ok = true;
    for (const std::string& q : detail::PathFromRoot(v->queue)) {
      const Queue& queue = *after.FindQueue(q);
      // "Others may reclaim from it": only a queue the reclaimer is outside.
      if (!detail::InSubtree(rj->queue, q) && !queue.reclaimable) ok = false;
      // Falls below its guarantee: usage goes down in r and ends below.
      const detail::Vec guarantee = after.Dense(queue.guarantee, 0);
      for (size_t r = 0; r < after.R(); ++r)
        if (va.Usage(q)[r] < vb.Usage(q)[r] && va.Usage(q)[r] < guarantee[r]) ok = false;
    }
    ok = ok && detail::CompareQueuesIn(after, rj->queue, v->queue) < 0;
    out.push_back(ok);
  }
  return out;
}

std::vector<int64_t> ReferenceModel::RealCapability(const std::string& path) const {
  const Model& m = s_->m;
  if (m.FindQueue(path) == nullptr) return {};
  const View v(m);
  return v.RealCap(path);
}

}  // namespace hdrf::ref
