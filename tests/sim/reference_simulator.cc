#include "tests/sim/reference_simulator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include "tests/reference/reference_model.h"

namespace hdrf::testing {
namespace {

struct RunningTask {
  size_t job;
  int64_t end;
  int node = -1;
  int64_t start = 0;
};

// The node a task goes to, by a plain scan; -1 when it fits on none.
int BestFitNode(const ResourceAmounts& cluster, const std::vector<std::map<std::string, int64_t>>& free,
                const ResourceAmounts& task) {
  std::string dom;
  double best_share = -1;
  for (const auto& [r, total] : cluster) {  // resource (name) order
    const auto it = task.find(r);
    const double share = it == task.end() || total <= 0 ? 0 : static_cast<double>(it->second) / total;
    if (share > best_share) best_share = share, dom = r;
  }
  int best = -1;
  int64_t best_left = 0;
  for (size_t n = 0; n < free.size(); ++n) {
    bool fits = true;
    for (const auto& [r, v] : task) fits = fits && v <= free[n].at(r);
    if (!fits) continue;
    const int64_t left = free[n].at(dom) - (task.count(dom) ? task.at(dom) : 0);
    if (best < 0 || left < best_left) best = static_cast<int>(n), best_left = left;
  }
  return best;
}

bool InSubtree(const std::string& leaf, const std::string& queue) {
  return leaf == queue || leaf.rfind(queue + "/", 0) == 0;
}

std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The weighted fair share of every queue while the leaves `active` hold
// jobs, by the definition of docs/simulate.md: root 1 when anything is
// active; a child: its parent's × weight / Σ weights of the parent's active
// children, 0 when idle. `paths` in path order (parents first).
std::map<std::string, double> FairShares(const std::vector<std::string>& paths, const std::map<std::string, double>& weight,
                                         const std::set<std::string>& active) {
  auto is_active = [&](const std::string& q) {
    for (const std::string& leaf : active)
      if (InSubtree(leaf, q)) return true;
    return false;
  };
  std::map<std::string, double> fair;
  for (const std::string& q : paths) {
    if (!is_active(q)) {
      fair[q] = 0;
      continue;
    }
    const std::string parent = ParentOf(q);
    if (parent.empty()) {
      fair[q] = 1;
      continue;
    }
    double sum = 0;
    for (const std::string& c : paths)
      if (ParentOf(c) == parent && is_active(c)) sum += weight.at(c);
    fair[q] = fair.at(parent) * weight.at(q) / sum;
  }
  return fair;
}

// The smallest value v of `sorted` such that at least p% of the values are <= v.
int64_t NearestRank(const std::vector<int64_t>& sorted, int p) {
  const int64_t n = static_cast<int64_t>(sorted.size());
  for (int64_t k = 1; k <= n; ++k)
    if (k * 100 >= p * n) return sorted[k - 1];
  return sorted.back();
}

// docs/spec.md §13 additions: among the waiting jobs (admitted, with unallocated
// tasks) not in `tried`, the one a step would serve first if everything fit:
// from root, at each level the child with a waiting job below it and the
// smallest key (§4; blocked or not), keys within 1e-9 equal, ties to the
// name that sorts first; in the leaf the waiting job with the smallest key,
// ties to the earlier submitted.
std::optional<std::string> FirstWaiting(const ref::ReferenceModel& model, const std::set<std::string>& tried) {
  const std::vector<ref::RefJobView> jobs = model.Jobs();  // submission order
  const std::vector<ref::RefNodeView> queues = model.Queues();
  auto waiting = [&](const ref::RefJobView& j) {
    return j.state != JobState::kPending && j.allocated < j.tasks && !tried.count(j.name);
  };
  auto waiting_below = [&](const std::string& q) {
    for (const ref::RefJobView& j : jobs)
      if (waiting(j) && InSubtree(j.queue, q)) return true;
    return false;
  };
  std::string q = "root";
  if (!waiting_below(q)) return std::nullopt;
  for (;;) {
    std::vector<const ref::RefNodeView*> kids;
    for (const ref::RefNodeView& n : queues)
      if (ParentOf(n.name) == q && waiting_below(n.name)) kids.push_back(&n);
    if (kids.empty()) break;
    double least = kids[0]->key;
    for (const ref::RefNodeView* k : kids) least = std::min(least, k->key);
    const ref::RefNodeView* pick = nullptr;
    for (const ref::RefNodeView* k : kids)
      if (k->key <= least + 1e-9 && (pick == nullptr || k->name < pick->name)) pick = k;
    q = pick->name;
  }
  std::vector<const ref::RefJobView*> cands;
  for (const ref::RefJobView& j : jobs)
    if (waiting(j) && j.queue == q) cands.push_back(&j);
  double least = cands[0]->key;
  for (const ref::RefJobView* j : cands) least = std::min(least, j->key);
  for (const ref::RefJobView* j : cands)
    if (j->key <= least + 1e-9) return j->name;  // the earliest submitted among the least
  return std::nullopt;
}

int64_t StepTasksOf(const ref::ReferenceModel& model, const std::string& job) {
  for (const ref::RefJobView& j : model.Jobs())
    if (j.name == job) return j.step_tasks;
  return 1;
}

}  // namespace

StatusOr<RefSimResult> ReferenceSimulate(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                                         const Workload& w, const std::vector<RefNode>* nodes,
                                         const RefSimOptions& options) {
  auto model_or = ref::ReferenceModel::Create(cluster, queues);
  if (!model_or.ok()) return model_or.status();
  ref::ReferenceModel& model = **model_or;
  RefSimResult res;
  res.jobs.resize(w.jobs.size());
  for (const auto& q : model.Queues()) res.queue_paths.push_back(q.name);
  std::vector<bool> arrived(w.jobs.size(), false);
  std::vector<int64_t> not_completed(w.jobs.size(), 0);
  std::vector<RunningTask> running;
  std::vector<std::map<std::string, int64_t>> node_free;
  if (nodes)
    for (const RefNode& n : *nodes) {
      std::map<std::string, int64_t> f;
      for (const auto& [r, total] : cluster) f[r] = n.capacity.count(r) ? n.capacity.at(r) : 0;
      node_free.push_back(f);
    }
  // Intervals: [from, to) with the usage of every queue during it.
  struct Interval {
    int64_t from, to;
    std::map<std::string, std::map<std::string, int64_t>> usage;  // queue -> resource -> amount
    std::set<std::string> active;  // leaves holding a job (accepted, not removed)
  };
  std::map<std::string, double> weight;
  for (const std::string& q : res.queue_paths) weight[q] = 1;
  for (const QueueSpec& q : queues) weight[q.path] = std::max(1.0, q.weight);
  std::set<std::string> active_now;
  std::vector<Interval> intervals;
  int64_t prev = 0;
  std::map<std::string, std::map<std::string, int64_t>> usage_now;
  std::set<std::pair<std::string, std::string>> took;  // (taker, victim) of the plans applied so far
  for (;;) {
    int64_t t = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < w.jobs.size(); ++i)
      if (!arrived[i]) t = std::min(t, w.jobs[i].arrival_ms);
    for (const RunningTask& rt : running) t = std::min(t, rt.end);
    if (t == std::numeric_limits<int64_t>::max()) break;
    intervals.push_back({prev, t, usage_now, active_now});
    // 1. Tasks ending at t complete; a job whose last task completes is removed.
    for (size_t k = 0; k < running.size();) {
      if (running[k].end != t) {
        ++k;
        continue;
      }
      const size_t j = running[k].job;
      if (running[k].node >= 0)
        for (const auto& [r, v] : w.jobs[j].spec.task) node_free[running[k].node][r] += v;
      running.erase(running.begin() + static_cast<long>(k));
      HDRF_RETURN_IF_ERROR(model.Finish(w.jobs[j].spec.name, 1));
      if (--not_completed[j] == 0) {
        HDRF_RETURN_IF_ERROR(model.Remove(w.jobs[j].spec.name));
        res.jobs[j].end = t;
      }
    }
    // 2. Arrivals at t, in file order.
    for (size_t i = 0; i < w.jobs.size(); ++i) {
      if (arrived[i] || w.jobs[i].arrival_ms != t) continue;
      arrived[i] = true;
      auto leaf = model.Submit(w.jobs[i].spec);
      if (!leaf.ok()) {
        res.jobs[i].refused = true;
        continue;
      }
      res.jobs[i].queue = *leaf;
      not_completed[i] = w.jobs[i].spec.tasks;
    }
    // 3. Fill: each step starts one task, or a gang's step_tasks (on nodes,
    //    one after another best-fit, all or none, with nodes).
    auto job_index = [&](const std::string& name) {
      size_t j = 0;
      while (w.jobs[j].spec.name != name) ++j;
      return j;
    };
    // Places k tasks of job j one after another best-fit on a copy of `free`;
    // the nodes chosen, or empty when one of them fits on none.
    auto place = [&](std::vector<std::map<std::string, int64_t>> free, size_t j, int64_t k) {
      std::vector<int> chosen;
      for (int64_t i = 0; i < k; ++i) {
        const int n = BestFitNode(cluster, free, w.jobs[j].spec.task);
        if (n < 0) return std::vector<int>{};
        for (const auto& [r, v] : w.jobs[j].spec.task) free[n][r] -= v;
        chosen.push_back(n);
      }
      return chosen;
    };
    auto start_tasks = [&](size_t j, const std::vector<int>& where) {
      for (int node : where) {
        if (node >= 0)
          for (const auto& [r, v] : w.jobs[j].spec.task) node_free[node][r] -= v;
        if (res.jobs[j].first_start < 0) res.jobs[j].first_start = t;
        res.jobs[j].last_start = t;
        running.push_back({j, t + w.jobs[j].duration_ms, node, t});
      }
    };
    auto fill = [&]() -> Status {
      std::set<std::string> refused_now;
      while (auto name = nodes ? model.PickNext(refused_now) : model.PickNext()) {
        const size_t j = job_index(*name);
        const int64_t k = StepTasksOf(model, *name);
        std::vector<int> where(static_cast<size_t>(k), -1);
        if (nodes) {
          where = place(node_free, j, k);
          if (where.empty()) {
            refused_now.insert(*name);
            for (const std::string& q : res.queue_paths)
              if (InSubtree(res.jobs[j].queue, q)) ++res.fragmentation_waits[q];
            continue;
          }
          HDRF_RETURN_IF_ERROR(model.Allocate(*name, k));
        } else {
          if (model.Step() != *name) return Status::Internal("reference: Step disagrees with PickNext");
        }
        start_tasks(j, where);
      }
      return Status::Ok();
    };
    HDRF_RETURN_IF_ERROR(fill());
    // 4. The reclaim phase.
    if (options.reclaim) {
      std::set<std::string> tried;
      int64_t evicted_now = 0;
      while (auto name = FirstWaiting(model, tried)) {
        if (options.reclaim_budget && evicted_now >= *options.reclaim_budget) break;
        tried.insert(*name);
        auto plan = model.Plan(*name, options.preempt ? PlanMode::kBoth : PlanMode::kReclaim);
        if (!plan.ok()) return plan.status();
        if (std::getenv("HDRF_REFSIM_TRACE"))
          std::fprintf(stderr, "ref t=%lld try %s fits=%d victims=%zu\n", static_cast<long long>(t), name->c_str(),
                       static_cast<int>(plan->fits), plan->victims.size());
        if (std::getenv("HDRF_REFSIM_TRACE"))
          for (const ref::RefPlanVictim& v : plan->victims)
            std::fprintf(stderr, "   victim %s x%lld\n", v.job.c_str(), static_cast<long long>(v.tasks));
        if (!plan->fits || plan->victims.empty()) continue;
        // Each victim's `tasks` latest started running tasks; with nodes,
        // tasks that started together leave the node listed last first.
        std::vector<size_t> evict;  // indices into running
        for (const ref::RefPlanVictim& v : plan->victims) {
          const size_t vj = job_index(v.job);
          std::vector<size_t> mine;
          for (size_t k = 0; k < running.size(); ++k)
            if (running[k].job == vj && std::find(evict.begin(), evict.end(), k) == evict.end()) mine.push_back(k);
          std::sort(mine.begin(), mine.end(), [&](size_t a, size_t b) {
            if (running[a].start != running[b].start) return running[a].start > running[b].start;
            return running[a].node > running[b].node;
          });
          if (static_cast<int64_t>(mine.size()) < v.tasks) return Status::Internal("reference: victim runs too few tasks");
          evict.insert(evict.end(), mine.begin(), mine.begin() + v.tasks);
        }
        const size_t j = job_index(*name);
        std::vector<int> where(static_cast<size_t>(plan->tasks), -1);
        if (nodes) {
          std::vector<std::map<std::string, int64_t>> free = node_free;
          for (size_t k : evict)
            for (const auto& [r, v] : w.jobs[running[k].job].spec.task) free[running[k].node][r] += v;
          where = place(free, j, plan->tasks);
          if (where.empty()) continue;  // passed over at this instant
        }
        HDRF_RETURN_IF_ERROR(model.ApplyPlan(*plan));
        if (std::getenv("HDRF_REFSIM_TRACE")) {
          std::fprintf(stderr, "ref t=%lld plan for %s (%lld tasks):", static_cast<long long>(t), name->c_str(),
                       static_cast<long long>(plan->tasks));
          for (const ref::RefPlanVictim& v : plan->victims)
            std::fprintf(stderr, " %s x%lld", v.job.c_str(), static_cast<long long>(v.tasks));
          std::fprintf(stderr, "\n");
        }
        ++res.plans_applied;
        res.eviction_ms.push_back(t);
        bool pong = false;
        for (const ref::RefPlanVictim& v : plan->victims) pong = pong || took.count({v.job, *name});
        res.ping_pong += pong;
        for (const ref::RefPlanVictim& v : plan->victims) took.insert({*name, v.job});
        std::sort(evict.begin(), evict.end());
        for (size_t e = evict.size(); e-- > 0;) {
          const RunningTask rt = running[evict[e]];
          if (rt.node >= 0)
            for (const auto& [r, v] : w.jobs[rt.job].spec.task) node_free[rt.node][r] += v;
          ++res.jobs[rt.job].evicted;
          ++res.evicted_tasks;
          ++evicted_now;
          res.lost_task_ms += t - rt.start;
          if (t - rt.start < 60000) ++res.evicted_within_60s;
          for (const std::string& q : res.queue_paths)
            if (InSubtree(res.jobs[rt.job].queue, q)) ++res.evicted_in[q];
          running.erase(running.begin() + static_cast<long>(evict[e]));
        }
        start_tasks(j, where);
        HDRF_RETURN_IF_ERROR(fill());
      }
    }
    // The usage of every queue until the next instant, from the running tasks.
    usage_now.clear();
    for (const std::string& q : res.queue_paths)
      for (const RunningTask& rt : running)
        if (InSubtree(res.jobs[rt.job].queue, q))
          for (const auto& [r, v] : w.jobs[rt.job].spec.task) usage_now[q][r] += v;
    active_now.clear();
    for (size_t i = 0; i < w.jobs.size(); ++i)
      if (not_completed[i] > 0) active_now.insert(res.jobs[i].queue);
    prev = t;
    res.makespan = t;
  }
  for (const std::string& q : res.queue_paths) {
    double integral = 0;
    for (const Interval& iv : intervals) {
      double share = 0;
      auto it = iv.usage.find(q);
      if (it != iv.usage.end())
        for (const auto& [r, v] : it->second)
          if (cluster.at(r) > 0) share = std::max(share, static_cast<double>(v) / static_cast<double>(cluster.at(r)));
      integral += share * static_cast<double>(iv.to - iv.from);
    }
    res.usage_share_avg[q] = res.makespan > 0 ? integral / static_cast<double>(res.makespan) : 0;
  }
  std::map<std::string, double> fair_integral;
  for (const Interval& iv : intervals)
    for (const auto& [q, f] : FairShares(res.queue_paths, weight, iv.active))
      fair_integral[q] += f * static_cast<double>(iv.to - iv.from);
  for (const std::string& q : res.queue_paths)
    res.fair_share_avg[q] = res.makespan > 0 ? fair_integral[q] / static_cast<double>(res.makespan) : 0;
  for (const auto& [r, total] : cluster) {
    double integral = 0;
    for (const Interval& iv : intervals) {
      auto it = iv.usage.find("root");
      if (it == iv.usage.end()) continue;
      auto v = it->second.find(r);
      if (v != it->second.end()) integral += static_cast<double>(v->second) * static_cast<double>(iv.to - iv.from);
    }
    res.utilization[r] = res.makespan > 0 && total > 0
                             ? integral / (static_cast<double>(total) * static_cast<double>(res.makespan))
                             : 0;
  }
  for (const std::string& q : res.queue_paths) {
    std::vector<int64_t> waits;
    int64_t lived = 0;
    for (size_t i = 0; i < w.jobs.size(); ++i) {
      if (res.jobs[i].refused || !InSubtree(res.jobs[i].queue, q)) continue;
      ++lived;
      if (res.jobs[i].first_start >= 0) waits.push_back(res.jobs[i].first_start - w.jobs[i].arrival_ms);
    }
    res.jobs_in[q] = lived;
    RefSimWait ws;
    ws.count = static_cast<int64_t>(waits.size());
    if (!waits.empty()) {
      std::sort(waits.begin(), waits.end());
      double sum = 0;
      for (int64_t x : waits) sum += static_cast<double>(x);
      ws.mean = sum / static_cast<double>(waits.size());
      ws.p50 = NearestRank(waits, 50);
      ws.p95 = NearestRank(waits, 95);
      ws.p99 = NearestRank(waits, 99);
      ws.max = waits.back();
    }
    res.wait[q] = ws;
  }
  return res;
}

}  // namespace hdrf::testing
