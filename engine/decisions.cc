// engine::TreeDecisions (engine/tree_decisions.h): decisions a host scheduler asks for (docs/spec.md §5, §8) and
// explanations.
#include <algorithm>
#include <cmath>

#include "engine/tree_decisions.h"
#include "engine/tree_internal.h"

namespace hdrf::engine {
namespace {

std::string Amount(const std::string& r, int64_t v) { return FormatQuantity(r, v); }

}  // namespace

int TreeDecisions::CompareQueues(QueueId a, QueueId b) const {
  if (a == b) return 0;
  // Paths from root; compare at the first level where they differ.
  auto path = [&](QueueId q) {
    std::vector<QueueId> p;
    for (; q != kNone; q = queues_[q].parent) p.push_back(q);
    std::reverse(p.begin(), p.end());
    return p;
  };
  std::vector<QueueId> pa = path(a), pb = path(b);
  size_t i = 0;
  while (i < pa.size() && i < pb.size() && pa[i] == pb[i]) ++i;
  if (i == pa.size() || i == pb.size()) return 0;  // one is an ancestor: not leaves
  const QueueView& x = QV(pa[i]);
  const QueueView& y = QV(pb[i]);
  if (x.blocked != y.blocked) return x.blocked ? 1 : -1;
  if (std::abs(x.key - y.key) <= kKeyEpsilon) return 0;
  return x.key < y.key ? -1 : 1;
}

int TreeDecisions::CompareJobs(JobId a, JobId b) const {
  const double sa = GetJob(a).drf_share / jobs_[a].weight;
  const double sb = GetJob(b).drf_share / jobs_[b].weight;
  if (std::abs(sa - sb) > kKeyEpsilon) return sa < sb ? -1 : 1;
  if (jobs_[a].seq == jobs_[b].seq) return 0;
  return jobs_[a].seq < jobs_[b].seq ? -1 : 1;
}

Explanation TreeDecisions::Explain(JobId id) const {
  const Job& j = jobs_[id];
  const Queue& leaf = queues_[j.queue];
  const int64_t* t = &task_[size_t{id} * R_];
  Explanation e;
  e.job = job_names_[id];
  e.queue = leaf.path;
  e.key = JobKey(id);
  e.blocked = JV(id).blocked;
  e.schedulable = Schedulable(id);
  auto next = PickNext();
  e.is_next = next && *next == id;
  // Blocked reasons (docs/spec.md §4).
  if (j.state == JobState::kPending) e.blocked_by.push_back("Pending: not admitted by the enqueue gate");
  if (j.allocated >= j.tasks) e.blocked_by.push_back("all tasks allocated");
  const ResMask user_mask = leaf.limits_active ? UserExhausted(j.queue, j.user) : 0;
  for (int r = 0; r < R_; ++r) {
    if (!((j.req >> r) & 1)) continue;
    const std::string& rn = names_[r];
    if ((saturated_ >> r) & 1) e.blocked_by.push_back("resource " + rn + " saturated");
    for (QueueId a = j.queue; a != kNone; a = queues_[a].parent)
      if ((queues_[a].cap_reached >> r) & 1)
        e.blocked_by.push_back("queue " + queues_[a].path + " reached its capability in " + rn + " (" +
                               Amount(rn, queues_[a].usage[r]) + " of " + Amount(rn, queues_[a].cap[r]) + ")");
    if (!((saturated_ >> r) & 1) && ((leaf.held_mask >> r) & 1))
      e.blocked_by.push_back("held back for guarantees: free " + rn + " " + Amount(rn, free_[r]) +
                             " minus held back " + Amount(rn, leaf.held_back[r]) + " <= 0");
    if ((user_mask >> r) & 1)
      e.blocked_by.push_back("user " + user_names_[j.user] + " reached the user limit in " + rn);
  }
  if (leaf.state != QueueState::kOpen)
    e.blocked_by.push_back(std::string("note: queue is ") + QueueStateName(leaf.state) +
                           " (accepts no new jobs; running jobs go on)");
  // Fit (docs/spec.md §6).
  if (j.allocated < j.tasks && j.state != JobState::kPending) {
    for (int r = 0; r < R_; ++r) {
      const std::string& rn = names_[r];
      if (t[r] > free_[r] - leaf.held_back[r])
        e.unfit_because.push_back("task needs " + Amount(rn, t[r]) + " " + rn + ", free " +
                                  Amount(rn, free_[r]) + " minus held back " +
                                  Amount(rn, leaf.held_back[r]));
      for (QueueId a = j.queue; a != kNone; a = queues_[a].parent)
        if (t[r] > queues_[a].cap[r] - queues_[a].usage[r])
          e.unfit_because.push_back("queue " + queues_[a].path + " capability " + rn + " " +
                                    Amount(rn, queues_[a].cap[r]) + " would be exceeded");
    }
    if (!e.schedulable && e.unfit_because.empty() && leaf.limits_active)
      e.unfit_because.push_back("user limit of user " + user_names_[j.user] + " would be exceeded");
  }
  ExplainPlan(id, &e);
  // Keys along the path.
  std::vector<QueueId> path;
  for (QueueId a = j.queue; a != kNone; a = queues_[a].parent) path.push_back(a);
  std::reverse(path.begin(), path.end());
  auto add_level = [&](std::string parent, std::vector<Explanation::Sibling> sibs) {
    std::stable_sort(sibs.begin(), sibs.end(), [](const auto& x, const auto& y) {
      if (x.blocked != y.blocked) return !x.blocked;
      return x.key < y.key;
    });
    if (sibs.size() > 20) {
      auto own = std::find_if(sibs.begin(), sibs.end(), [](const auto& s) { return s.is_path; });
      Explanation::Sibling keep = own != sibs.end() ? *own : sibs.front();
      sibs.resize(20);
      if (std::none_of(sibs.begin(), sibs.end(), [](const auto& s) { return s.is_path; }))
        sibs.back() = keep;
    }
    e.levels.push_back({std::move(parent), std::move(sibs)});
  };
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    std::vector<Explanation::Sibling> sibs;
    for (QueueId c : queues_[path[i]].children)
      sibs.push_back({queues_[c].path, QV(c).key, QV(c).blocked, c == path[i + 1]});
    add_level(queues_[path[i]].path, std::move(sibs));
  }
  std::vector<Explanation::Sibling> jobs;
  for (JobId x : leaf.jobs) jobs.push_back({job_names_[x], JobKey(x), JV(x).blocked, x == id});
  add_level(leaf.path, std::move(jobs));
  return e;
}

}  // namespace hdrf::engine
