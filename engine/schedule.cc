// engine::TreeScheduler (engine/tree_schedule.h): the scheduling step, fit,
// admission and the enqueue gate (docs/spec.md §5, §6, §12).
#include <algorithm>
#include <deque>
#include <climits>
#include <cmath>
#include <cstdint>

#include "engine/admission.h"
#include "engine/tree_schedule.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {
namespace {

// The rule of WaitingOrderIn's traversal over items sorted by key: from the
// first unused one, the unused ones with a key within kKeyEpsilon of its
// key, the one of least tie (which one it is does not depend on how the
// sort ordered equal keys). passed(k): item k is used. *first is moved
// past the used items at the front; items.size() when none is left.
template <typename Items, typename Passed>
size_t PickSorted(const Items& items, size_t* first, Passed passed) {
  while (*first < items.size() && passed(*first)) ++*first;
  if (*first == items.size()) return items.size();
  size_t pick = *first;
  for (size_t k = *first + 1; k < items.size() && items[k].key <= items[*first].key + kKeyEpsilon; ++k)
    if (!passed(k) && items[k].tie < items[pick].tie) pick = k;
  return pick;
}

}  // namespace

// docs/spec.md §6 with §14's k tasks. Capability and held-back checks are written
// as headroom comparisons so that unlimited capabilities cannot overflow;
// k·task is formed in 128 bits.
bool TreeScheduler::Fits(JobId id, int64_t k) const {
  const Job& j = jobs_[id];
  const Queue& q = queues_[j.queue];
  const int64_t* t = &task_[size_t{id} * R_];
  auto need = [&](int r) { return static_cast<__int128>(k) * t[r]; };
  for (int r = 0; r < R_; ++r)
    if (need(r) > free_[r] - q.held_back[r]) return false;
  for (QueueId a = j.queue; a != kNone; a = queues_[a].parent) {
    const Queue& A = queues_[a];
    if (!A.cap_set) continue;
    for (int r = 0; r < R_; ++r)
      if (need(r) > static_cast<__int128>(A.cap[r]) - A.usage[r]) return false;
  }
  if (q.limits_active) {
    auto it = q.users.find(j.user);
    const int64_t n = std::max<int64_t>(1, q.active_users);
    for (int r = 0; r < R_; ++r) {
      const __int128 after = (it == q.users.end() ? 0 : it->second.usage[r]) + need(r);
      const bool gset = (q.guar_set >> r) & 1;
      const __int128 B = gset ? q.guar[r] : q.realcap[r];
      if (q.min_user_limit_percent < 100 &&
          !(__int128{100} * after <= B * q.min_user_limit_percent || __int128{n} * after <= B))
        return false;
      if (q.user_limit_factor && gset &&
          static_cast<double>(after) > static_cast<double>(q.guar[r]) * *q.user_limit_factor)
        return false;
    }
  }
  return true;
}

int64_t TreeScheduler::StepDemand(JobId id) const {
  return jobs_[id].allocated == 0 ? GangSize(id) : 1;
}

// docs/spec.md §5 with §14: a job holding no task needs room for its gang.
bool TreeScheduler::Schedulable(JobId id) const {
  const Job& j = jobs_[id];
  if (j.state == JobState::kPending || j.allocated >= j.tasks) return false;
  const int64_t k = StepDemand(id);
  return j.allocated + k <= j.tasks && Fits(id, k);
}

bool TreeScheduler::Pickable(JobId id, const SkipSet* skip) const {
  if (!Schedulable(id)) return false;
  if (!skip || skip->empty()) return true;
  auto it = skip->find(id);
  return it == skip->end() || it->second != jobs_[id].seq;
}

// The job a step would pick inside q's subtree (docs/spec.md §5 with the tie rule of
// docs/semantics.md §6). Schedulable jobs are never blocked, so only the
// non-blocked heap is searched, in two passes: children in key order up to
// the first that has a pick (key m), then every child with a key within
// kKeyEpsilon of m that comes after it in that order, in heap order (no
// sorting: ties are common, e.g. every job without tasks has key 0), for
// the earliest submitted job / the first queue by name.
// With `skip`, the jobs in it are passed over as if not schedulable, so a
// queue whose every schedulable job is skipped has no pick (StepWhere).
//
// Subtrees whose waiting task shapes cannot fit are skipped whole (the fill
// bound, fill_bound.cc), and so are jobs whose heap entry's fit code shows
// that their task cannot fit; a search that finds nothing tightens the
// bound (skipped jobs count in it as waiting: they may fit).
std::optional<JobId> TreeScheduler::PickIn(QueueId qid, const SkipSet* skip) const {
  if (!WaitingMayFit(qid)) {
    ++main_->counters.fill_skips;  // exclusive sections only
    return std::nullopt;
  }
  const Queue& q = queues_[qid];
  const QueueView& v = QV(qid);
  HeapEntry first{0, kNone};
  if (q.children.empty()) return PickInLeaf(qid, skip);
  JobId best_job = kNone;
  v.nb.VisitInOrder([&](const HeapEntry& e) {
    auto j = PickIn(e.id, skip);
    if (!j) return true;
    first = e;
    best_job = *j;
    return false;
  });
  if (first.id == kNone) {
    TightenWaitBound(qid);
    return std::nullopt;
  }
  QueueId best = first.id;
  v.nb.VisitAtMost(first.key + kKeyEpsilon, [&](const HeapEntry& e) {
    if (e < first || e.id == first.id) return;
    if (queues_[e.id].name < queues_[best].name)
      if (auto j = PickIn(e.id, skip)) {
        best = e.id;
        best_job = *j;
      }
  });
  return best_job;
}

// A leaf's pick. Jobs whose heap entry's fit code shows a task over the
// room (LeafFitRoom) fail Fits whatever their demand k >= 1, so they are
// passed over without reading the job (fill_bound.cc, "Fit codes").
// First the jobs within kKeyEpsilon of the heap's least key k0 (in a
// nearly full cluster usually every job holding no task: key 0): those the
// code lets through are sorted and tried in key order, as the walk below
// would; when the first Pickable one's ties all lie within k0 + kKeyEpsilon
// they are all among them, and the pick is made there. Otherwise the heap
// is walked in key order past them, then EarliestTie.
std::optional<JobId> TreeScheduler::PickInLeaf(QueueId qid, const SkipSet* skip) const {
  const KeyHeap& nb = QV(qid).nb;
  int64_t room[kFitCodeResources];
  LeafFitRoom(qid, room);
  const double near = nb.empty() ? 0 : nb.top().key + kKeyEpsilon;
  thread_local std::vector<HeapEntry> tried;  // the code's survivors near k0
  tried.clear();
  nb.VisitAtMost(near, [&](const HeapEntry& e) {
    if (CodeMayFit(e.tag, room)) tried.push_back(e);
  });
  // Taken in key order from a heap of them: O(n + f log n) to reach the
  // f-th; those left after it are the ones after it in key order.
  auto later = [](const HeapEntry& a, const HeapEntry& b) { return b < a; };
  std::make_heap(tried.begin(), tried.end(), later);
  for (size_t n = tried.size(); n > 0; --n) {
    std::pop_heap(tried.begin(), tried.begin() + static_cast<std::ptrdiff_t>(n), later);
    const HeapEntry first = tried[n - 1];
    if (!Pickable(first.id, skip)) continue;
    const double limit = first.key + kKeyEpsilon;
    if (limit > near) return EarliestTie(qid, first, room, skip);
    JobId best = first.id;
    for (size_t k = 0; k + 1 < n; ++k) {
      const HeapEntry& e = tried[k];
      if (e.key <= limit && jobs_[e.id].seq < jobs_[best].seq && Pickable(e.id, skip)) best = e.id;
    }
    return best;
  }
  HeapEntry first{0, kNone};
  nb.VisitInOrder([&](const HeapEntry& e) {
    if (e.key <= near || !CodeMayFit(e.tag, room) || !Pickable(e.id, skip)) return true;
    first = e;
    return false;
  });
  if (first.id == kNone) {
    TightenWaitBound(qid);  // every job of the heap was visited
    return std::nullopt;
  }
  return EarliestTie(qid, first, room, skip);
}

JobId TreeScheduler::EarliestTie(QueueId qid, const HeapEntry& first, const int64_t* room,
                                 const SkipSet* skip) const {
  JobId best = first.id;
  QV(qid).nb.VisitAtMost(first.key + kKeyEpsilon, [&](const HeapEntry& e) {
    if (e < first || e.id == first.id) return;  // visited before first
    if (CodeMayFit(e.tag, room) && jobs_[e.id].seq < jobs_[best].seq && Pickable(e.id, skip)) best = e.id;
  });
  return best;
}

std::optional<JobId> TreeScheduler::PickNext() const { return PickIn(0, nullptr); }

std::optional<JobId> TreeScheduler::PickNext(const SkipSet* skip) const { return PickIn(0, skip); }

std::optional<JobId> TreeScheduler::Step() {
  std::optional<JobId> j = PickNext();
  if (j) ChangeAllocation(*j, StepDemand(*j), 0);
  return j;
}

int64_t TreeScheduler::Fill() {
  int64_t steps = 0;
  while (Step()) ++steps;
  return steps;
}

std::optional<JobId> TreeScheduler::PickWaiting(const SkipSet* skip) const { return WaitingIn(0, skip); }

// Children by key (ties within kKeyEpsilon to the name sorting first), then
// in the leaf jobs by key (ties to the earlier submitted); subtrees without
// a waiting job are passed over. Not for hot paths: it reads every job of
// the leaves it enters.
std::optional<JobId> TreeScheduler::WaitingIn(QueueId qid, const SkipSet* skip) const {
  const Queue& q = queues_[qid];
  if (q.children.empty()) {
    auto waiting = [&](JobId id) {
      const Job& j = jobs_[id];
      if (j.state == JobState::kPending || j.allocated >= j.tasks) return false;
      if (!skip) return true;
      auto it = skip->find(id);
      return it == skip->end() || it->second != j.seq;
    };
    double m = 0;
    bool any = false;
    for (JobId id : q.jobs)
      if (waiting(id)) m = any ? std::min(m, JobKey(id)) : JobKey(id), any = true;
    if (!any) return std::nullopt;
    JobId best = kNone;
    for (JobId id : q.jobs)
      if (waiting(id) && JobKey(id) <= m + kKeyEpsilon && (best == kNone || jobs_[id].seq < jobs_[best].seq))
        best = id;
    return best;
  }
  std::vector<std::pair<double, QueueId>> order;
  order.reserve(q.children.size());
  for (QueueId c : q.children) order.emplace_back(QV(c).key, c);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::optional<JobId> best;
  QueueId best_q = kNone;
  double m = 0;
  for (const auto& [key, c] : order) {
    if (best && key > m + kKeyEpsilon) break;
    if (best && queues_[c].name >= queues_[best_q].name) continue;
    std::optional<JobId> j = WaitingIn(c, skip);
    if (!j) continue;
    if (!best) m = key;
    best = j;
    best_q = c;
  }
  return best;
}

// What a traversal passes over: WaitingOrder's skip set, or the jobs
// LeafOrderOf names (then `limit` ends it).
struct TreeScheduler::WaitingWalk {
  const SkipSet* skip = nullptr;
  size_t limit = SIZE_MAX;
  const std::vector<JobId>* only = nullptr;  // LeafOrderOf: the leaf's jobs to order
};

std::vector<JobId> TreeScheduler::WaitingOrder(const SkipSet* skip) const {
  std::vector<JobId> out;
  WaitingWalk walk;
  walk.skip = skip;
  WaitingOrderIn(0, walk, &out);
  return out;
}

void TreeScheduler::WaitingLeaves(const std::vector<int64_t>& untried, size_t limit, std::vector<QueueId>* out) const {
  LeafWalk walk;
  NextWaitingLeaves(untried, limit, &walk, out);
}

// The traversal of WaitingOrderIn below with counts: a child is an item
// when its count is not 0, and it is entered only when picked, a leaf
// picked being written to `out`. The walk is kept between calls: a frame
// per queue entered and not finished, each with its items sorted by key
// and the ones used marked. A call goes on where the last one stopped;
// what changed in between is only that the leaves given were passed over
// (their counts, and maybe some of their ancestors', are 0 now), and an
// item whose count is 0 is marked used when met: a walk made anew would
// not list it, and the picks among the others are the same (the rule
// reads only the unused items: the least key, ties within kKeyEpsilon of
// it to the least tie).
void TreeScheduler::NextWaitingLeaves(const std::vector<int64_t>& untried, size_t limit, LeafWalk* walk,
                                      std::vector<QueueId>* out) const {
  out->clear();
  if (untried.size() < queues_.size()) return;
  if (!walk->begun) {
    walk->begun = true;
    walk->depth = 0;
    if (untried[0] == 0) return;
    if (queues_[0].children.empty()) {
      out->push_back(0);
      return;
    }
    EnterWalk(0, untried, walk);
  }
  while (out->size() < limit && walk->depth > 0) {
    LeafWalk::Frame& f = walk->frames[walk->depth - 1];
    std::vector<LeafWalk::Item>& items = f.items;
    auto passed = [&](size_t k) {  // used, or no untried job left (then marked used)
      if (!f.used[k] && untried[items[k].q] == 0) f.used[k] = true;
      return static_cast<bool>(f.used[k]);
    };
    const size_t pick = PickSorted(items, &f.first, passed);
    if (pick == items.size()) {
      --walk->depth;
      continue;
    }
    f.used[pick] = true;
    const QueueId c = items[pick].q;
    if (queues_[c].children.empty()) {
      out->push_back(c);
    } else {
      EnterWalk(c, untried, walk);  // f is not used after this: frames may grow
    }
  }
}

void TreeScheduler::EnterWalk(QueueId q, const std::vector<int64_t>& untried, LeafWalk* walk) const {
  if (walk->frames.size() <= walk->depth) walk->frames.resize(walk->depth + 1);
  LeafWalk::Frame& f = walk->frames[walk->depth++];
  f.items.clear();
  const std::vector<QueueId>& ch = queues_[q].children;
  for (size_t i = 0; i < ch.size(); ++i)  // children are in name order
    if (untried[ch[i]] != 0) f.items.push_back({QV(ch[i]).key, static_cast<uint32_t>(i), ch[i]});
  std::sort(f.items.begin(), f.items.end(), [](const LeafWalk::Item& a, const LeafWalk::Item& b) { return a.key < b.key; });
  f.used.assign(f.items.size(), false);
  f.first = 0;
}

void TreeScheduler::LeafOrderOf(QueueId leaf, const std::vector<JobId>& jobs, size_t limit,
                                std::vector<JobId>* out) const {
  out->clear();
  if (leaf >= queues_.size() || !queues_[leaf].children.empty() || limit == 0) return;
  WaitingWalk walk;
  walk.only = &jobs;
  walk.limit = limit;
  WaitingOrderIn(leaf, walk, out);
}

bool TreeScheduler::HeldAfterIdle(const std::vector<int64_t>& shapes, double max_weight) const {
  if (R_ == 0 || shapes.size() % static_cast<size_t>(R_) != 0 || !(max_weight > 0)) return false;
  for (size_t s = 0; s < shapes.size(); s += static_cast<size_t>(R_))
    if (!(DominantPerTask(&shapes[s]) / max_weight > kKeyEpsilon)) return false;
  return true;
}

// While the state does not change, the descent of PickWaiting keeps taking
// the same child until its subtree has no untried job left: the order is a
// traversal that, at each node, takes the children (with a waiting job) by
// the descent's rule: the smallest key, ties within kKeyEpsilon of it to the
// name sorting first (to the earlier submitted among jobs). LeafOrderOf
// enters one leaf and reads only the jobs it names, until `limit`.
void TreeScheduler::WaitingOrderIn(QueueId qid, WaitingWalk& walk, std::vector<JobId>* out) const {
  const Queue& q = queues_[qid];
  struct Item {
    double key;
    uint64_t tie;  // job: submission number; queue: rank of its name
    size_t begin, end;  // its part of `parts` (queues), the job id (begin)
  };
  // Buffers kept per depth (the traversal recurses), so that an order costs
  // no allocation once they have grown; a deque, so that growing it keeps
  // the callers' references.
  struct Buffers {
    std::vector<Item> items;
    std::vector<JobId> parts;
    std::vector<bool> used;
  };
  thread_local std::deque<Buffers> by_depth;
  if (by_depth.size() <= static_cast<size_t>(q.depth)) by_depth.resize(q.depth + 1);
  std::vector<Item>& items = by_depth[q.depth].items;
  std::vector<JobId>& parts = by_depth[q.depth].parts;
  items.clear();
  parts.clear();
  if (q.children.empty()) {
    for (JobId id : walk.only ? *walk.only : q.jobs) {
      if (walk.only && (id >= jobs_.size() || !job_alive(id) || jobs_[id].queue != qid)) continue;
      const Job& j = jobs_[id];
      if (j.state == JobState::kPending || j.allocated >= j.tasks) continue;
      if (walk.skip) {
        auto it = walk.skip->find(id);
        if (it != walk.skip->end() && it->second == j.seq) continue;
      }
      items.push_back({JobKey(id), j.seq, id, id});
    }
  } else {
    for (size_t i = 0; i < q.children.size(); ++i) {  // children are in name order
      const size_t begin = parts.size();
      WaitingOrderIn(q.children[i], walk, &parts);
      if (parts.size() > begin) items.push_back({QV(q.children[i]).key, i, begin, parts.size()});
    }
  }
  auto by_key = [](const Item& a, const Item& b) { return a.key < b.key; };
  // Only the first `need` picks of a leaf are wanted: they come from the
  // jobs whose key is at most the need-th smallest key + kKeyEpsilon (the
  // smallest unused key is never above it), so the others are not sorted.
  if (const size_t need = walk.limit - out->size(); q.children.empty() && need < items.size()) {
    std::nth_element(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(need - 1), items.end(), by_key);
    const double bound = items[need - 1].key + kKeyEpsilon;
    items.erase(std::partition(items.begin(), items.end(), [bound](const Item& a) { return a.key <= bound; }),
                items.end());
  }
  std::sort(items.begin(), items.end(), by_key);
  std::vector<bool>& used = by_depth[q.depth].used;
  used.assign(items.size(), false);
  for (size_t first = 0; out->size() < walk.limit;) {
    const size_t pick = PickSorted(items, &first, [&](size_t k) { return static_cast<bool>(used[k]); });
    if (pick == items.size()) break;
    used[pick] = true;
    if (q.children.empty()) {
      out->push_back(static_cast<JobId>(items[pick].begin));
    } else {
      out->insert(out->end(), parts.begin() + static_cast<std::ptrdiff_t>(items[pick].begin),
                  parts.begin() + static_cast<std::ptrdiff_t>(items[pick].end));
    }
  }
}

// docs/spec.md §5 admission: descend through open children by the plain dominant
// share of their usage over their weight, ties to the name sorting first.
StatusOr<QueueId> TreeScheduler::Admit(std::string_view path) const {
  QueueId q = 0;
  if (!path.empty()) {
    HDRF_ASSIGN_OR_RETURN(q, FindQueue(path));
  }
  while (!queues_[q].children.empty()) {
    const std::vector<QueueId>& ch = queues_[q].children;  // in name order
    const int pick = AdmitChild(
        ch.size(), total_, [&](size_t i) { return queues_[ch[i]].state == QueueState::kOpen; },
        [&](size_t i) -> const auto& { return queues_[ch[i]].usage; },
        [&](size_t i) { return queues_[ch[i]].weight; });
    if (pick < 0) return Status::FailedPrecondition("no open queue under " + queues_[q].path);
    q = ch[static_cast<size_t>(pick)];
  }
  return q;
}

// docs/spec.md §12, read literally: every resource must satisfy the inequalities.
bool TreeScheduler::GateAdmits(JobId id) const {
  if (!options_.overcommit_factor) return true;
  const Job& j = jobs_[id];
  const Queue& q = queues_[j.queue];
  const int64_t* t = &task_[size_t{id} * R_];
  // The leaf's Inqueue jobs other than this one. In 128 bits, as the sums:
  // a wrapped int64 sum would admit a job far over the limits.
  GateSum leaf_inq[kMaxResources];
  for (int r = 0; r < R_; ++r)
    leaf_inq[r] = q.inqueue_min[r] - (j.state == JobState::kInqueue ? GateSum{GangSize(id)} * t[r] : 0);
  bool in_guarantee = true, in_overcommit = true;
  const double f = *options_.overcommit_factor;
  for (int r = 0; r < R_; ++r) {
    const GateSum m = GateSum{GangSize(id)} * t[r];
    if (m > GateSum{q.guar[r]} - q.usage[r] - leaf_inq[r]) in_guarantee = false;
    if (static_cast<double>(GateSum{usage_total_[r]} + inqueue_min_total_[r] + m) >
        f * static_cast<double>(total_[r]))
      in_overcommit = false;
    if (GateSum{q.usage[r]} + leaf_inq[r] + m > q.realcap[r]) in_overcommit = false;
  }
  return in_guarantee || in_overcommit;
}

void TreeScheduler::AdmitPending() {
  if (!options_.overcommit_factor || pending_.empty()) return;
  for (auto it = pending_.begin(); it != pending_.end();) {
    JobId id = it->second;
    if (!GateAdmits(id)) {
      ++it;
      continue;
    }
    it = pending_.erase(it);
    Touch(id);
    RemoveJobContribution(id);
    SetJobState(id, JobState::kInqueue);
    AddJobContribution(id);
    MarkDirty(jobs_[id].queue);
  }
  Propagate();
}

}  // namespace hdrf::engine
