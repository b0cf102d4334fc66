// Internals of the reference model (reference_model.h), shared by its
// files:
//   reference_internal.h   raw state (Model) and the View declaration
//   reference_shares.cc    derived values: §4 shares, §6 fit, §7 user limits
//   reference_tree.cc      §3 tree validation
//   reference_model.cc     events, §5 scheduling, §12 gate, §14 gangs, views
//   reference_decisions.cc §8 decisions and the §15 transfer rule
//   reference_plans.cc     §15 plans
//
// Every formula is written the way the spec writes it; where a choice was
// needed the comment says so, marked "Choice:".
#ifndef HDRF_TESTS_REFERENCE_REFERENCE_INTERNAL_H_
#define HDRF_TESTS_REFERENCE_REFERENCE_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"
#include "tests/reference/reference_model.h"

namespace hdrf::ref {
namespace detail {

using Vec = std::vector<int64_t>;   // one entry per resource, name order
using DVec = std::vector<double>;   // idem, as doubles
__extension__ typedef __int128 Wide;  // exact sums and products

constexpr double kTieEpsilon = 1e-9;  // §5: keys within 1e-9 are equal
constexpr char kRoot[] = "root";

// ---------------------------------------------------------------------------
// Raw state
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
  int64_t min_available = 1;  // as given (0 counts as 1: GangSize)
  JobState state = JobState::kInqueue;
};

// Weights below 1 are raised to 1 (§3, semantics item 3).
inline double ClampWeight(double w) { return w < 1 ? 1.0 : w; }

// §14: the gang size m: minAvailable, 0 counting as 1, capped at the job's
// current task count (which finish lowers).
inline int64_t GangSize(const Job& j) {
  return std::min(std::max<int64_t>(1, j.min_available), j.tasks);
}

inline std::string ParentOf(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == std::string::npos ? std::string() : path.substr(0, pos);
}

inline std::string NameOf(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

// True when `path` is `ancestor` or lies under it.
inline bool InSubtree(const std::string& path, const std::string& ancestor) {
  if (path == ancestor) return true;
  return path.size() > ancestor.size() && path.compare(0, ancestor.size(), ancestor) == 0 &&
         path[ancestor.size()] == '/';
}

// "root", "root/a", "root/a/b" for "root/a/b".
inline std::vector<std::string> PathFromRoot(const std::string& path) {
  std::vector<std::string> out;
  for (std::string p = path; !p.empty(); p = ParentOf(p)) out.push_back(p);
  std::reverse(out.begin(), out.end());
  return out;
}

inline int Rank(QueueState s) {  // open < closing < closed
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

  // Direct child queues, in name order. The map is ordered by path, so the
  // queues under `path` are the run of keys that start with "path/"; among
  // them, direct children (no further '/') come in name order because they
  // share that prefix.
  std::vector<std::string> ChildQueues(const std::string& path) const {
    std::vector<std::string> out;
    const std::string prefix = path + "/";
    for (auto it = queues.lower_bound(prefix); it != queues.end(); ++it) {
      const std::string& p = it->first;
      if (p.compare(0, prefix.size(), prefix) != 0) break;
      if (p.find('/', prefix.size()) == std::string::npos) out.push_back(p);
    }
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

  // n tasks of job j: n × task.
  Vec Tasks(const Job& j, int64_t n) const {
    Vec v(R());
    for (size_t r = 0; r < R(); ++r) v[r] = n * j.task[r];
    return v;
  }

  // Job allocation = allocated × task.
  Vec Allocation(const Job& j) const { return Tasks(j, j.allocated); }
};

// ---------------------------------------------------------------------------
// Derived values (reference_shares.cc)
// ---------------------------------------------------------------------------

// s(U) = max over non-saturated r (T[r] > 0) of U[r]/T[r]; 0 if none (§4).
double DominantShare(const DVec& u, const Vec& total, const std::vector<bool>& saturated);
// Max over every r with T[r] > 0 of v[r]/T[r] (semantics item 11; §5
// admission; the plain dominant share d(Y) of §15).
double DrfShareAll(const Vec& v, const Vec& total);
DVec ToDouble(const Vec& v);

struct NodeValue {
  bool blocked = true;
  DVec u;          // U
  double share = 0;  // s(U)
  double key = 0;    // s(U) / w
};

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

  // x <= limit[r].
  bool Within(size_t r, int64_t x) const;
  // x >= limit[r] (the limit is reached).
  bool Reached(size_t r, int64_t x) const;
  // The largest whole x with Within(r, x) (kUnlimited when unlimited).
  int64_t Largest(size_t r) const;
};

// Everything derived from one Model, computed in the constructor.
class View {
 public:
  explicit View(const Model& m);

  const Vec& Free() const { return free_; }
  const std::vector<bool>& Saturated() const { return saturated_; }
  const Vec& Usage(const std::string& q) const { return usage_.at(q); }
  const Vec& RealCap(const std::string& q) const { return realcap_.at(q); }

  size_t JobIndex(const Job& j) const { return static_cast<size_t>(&j - m_.jobs.data()); }

  bool JobBlocked(const Job& j) const { return job_blocked_[JobIndex(j)]; }

  // §6 with n tasks: every inequality with n·task[r] in place of task[r].
  bool FitsTasks(const Job& j, int64_t n) const;
  // §14: the tasks a step allocates to `j`: its gang size m while it holds
  // no task, else 1.
  static int64_t StepTasks(const Job& j) { return j.allocated == 0 ? GangSize(j) : 1; }

  // §5 with §14: Inqueue or Running, unallocated tasks, and StepTasks(j)
  // more tasks fit (§6). Pending jobs are never schedulable (semantics 5).
  bool JobSchedulable(const Job& j) const { return job_schedulable_[JobIndex(j)]; }

  NodeValue JobValue(const Job& j) const;
  const NodeValue& QueueValue(const std::string& q) const { return queue_value_.at(q); }

  // Jobs named in `excluded` count as not schedulable (PickNext(excluded)).
  bool SubtreeHasSchedulable(const std::string& q, const std::set<std::string>& excluded = {}) const;

  // held_back(Q)[r] = Σ over queues S that are a sibling of Q or of one of
  // Q's ancestors of max(0, guarantee_S[r] − usage_S[r]) (§6).
  Vec HeldBack(const std::string& q) const;
  UserLimit UserLimitOf(const std::string& q) const;
  // Sum of the allocations of `user`'s jobs in leaf `q`.
  Vec UserUsage(const std::string& q, const std::string& user) const;

 private:
  bool ComputeJobBlocked(const Job& j) const;
  bool ComputeJobSchedulable(const Job& j) const;
  void ComputeQueueValue(const std::string& q);

  const Model& m_;
  Vec free_;
  std::vector<bool> saturated_;
  std::map<std::string, Vec> usage_;
  std::map<std::string, Vec> realcap_;
  std::vector<bool> job_blocked_;
  std::vector<bool> job_schedulable_;
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

// The mirror of PickMin (§15 descent): the largest key M first, then among
// the candidates whose key is >= M − 1e-9 the first one by `before`.
template <typename T, typename KeyFn, typename BeforeFn>
std::optional<T> PickMax(const std::vector<T>& cands, KeyFn key, BeforeFn before) {
  return PickMin(cands, [&](const T& c) { return -key(c); }, before);
}

// ---------------------------------------------------------------------------
// Tree validation (reference_tree.cc)
// ---------------------------------------------------------------------------

Status ValidatePath(const std::string& path);
// Adds queue `spec` under its existing parent, with every check. On error `m`
// is unchanged.
Status CreateQueueIn(Model& m, const QueueSpec& spec);
// Replaces the attributes of an existing queue (state untouched unless
// `with_state`). On error `m` is unchanged.
Status UpdateQueueIn(Model& m, const QueueSpec& spec, bool with_state);

// ---------------------------------------------------------------------------
// Events and decisions (reference_model.cc, reference_decisions.cc)
// ---------------------------------------------------------------------------

// Whether Pending job `j` becomes Inqueue under the current state (§12).
bool GateAdmits(const Model& m, const Job& j);
// Pending jobs re-examined in submission order (semantics item 12).
void ReexaminePending(Model& m);
// State after the allocation changed: Running while allocated > 0, Inqueue
// when it returns to 0 (a Pending job stays Pending at 0).
void SettleState(Job& j);

// The job that decisions and plans act for: known, admitted, with a task
// to place.
StatusOr<const Job*> Actor(const Model& m, const std::string& name, const char* what);

// §15: the unit of running job `v` (tasks): one task when it holds more
// than its gang size, else all it holds.
inline int64_t UnitTasks(const Job& v) { return v.allocated > GangSize(v) ? 1 : v.allocated; }

// §15 transfer rule on state `s`: may `unit` (a vector) of job `victim`
// move to job `taker` whose demand is `d`? `preempt` selects the form
// (same leaf: the two jobs compared) or reclaim (the two children of the
// lowest common ancestor compared, guarantees checked).
bool Permitted(const Model& s, const Job& taker, const Vec& d, const Job& victim, const Vec& unit,
               bool preempt);

}  // namespace detail

struct ReferenceModel::State {
  detail::Model m;
  // The derived values of `m`, built on first use by a query and dropped by
  // every event (ReferenceModel::Mutable), so the queries made between two
  // events (views, order, next step) recompute them once, not each.
  mutable std::unique_ptr<detail::View> view;

  const detail::View& CurrentView() const {
    if (!view) view = std::make_unique<detail::View>(m);
    return *view;
  }
};

}  // namespace hdrf::ref

#endif  // HDRF_TESTS_REFERENCE_REFERENCE_INTERNAL_H_
