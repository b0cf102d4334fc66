#include "api/sim/simulate_stats.h"

#include <algorithm>
#include <cmath>

namespace hdrf::sim {

WaitStats ComputeWaitStats(std::vector<int64_t>& waits) {
  WaitStats s;
  s.count = static_cast<int64_t>(waits.size());
  if (waits.empty()) return s;
  std::sort(waits.begin(), waits.end());
  long double sum = 0;
  for (int64_t w : waits) sum += w;
  s.mean_ms = static_cast<double>(sum / static_cast<long double>(waits.size()));
  // Nearest rank: the smallest value with at least p% of the values <= it.
  auto rank = [&](int64_t p) { return waits[(p * s.count + 99) / 100 - 1]; };
  s.p50_ms = rank(50);
  s.p95_ms = rank(95);
  s.p99_ms = rank(99);
  s.max_ms = waits.back();
  return s;
}

QueueStats::QueueStats(const std::vector<QueueInfo>& queues, const std::vector<int64_t>& total,
                       const SimulateOptions& options)
    : R_(static_cast<int>(total.size())), total_(total), o_(options) {
  std::unordered_map<QueueId, uint32_t> by_id;
  q_.resize(queues.size());
  for (size_t i = 0; i < queues.size(); ++i) by_id[queues[i].id] = static_cast<uint32_t>(i);
  for (size_t i = 0; i < queues.size(); ++i) {
    const QueueInfo& info = queues[i];
    Q& q = q_[i];
    q.depth = info.depth;
    q.leaf = info.is_leaf;
    q.weight = std::max(1.0, info.weight);
    q.path = info.path;
    by_path_[info.path] = static_cast<uint32_t>(i);
    for (QueueId c : info.children) {
      q.children.push_back(by_id.at(c));
      q_[by_id.at(c)].parent = static_cast<uint32_t>(i);
    }
    if (info.depth == 1) top_.push_back(static_cast<uint32_t>(i));
  }
  usage_.assign(q_.size() * R_, 0);
  guar_.assign(q_.size() * R_, 0);
  for (size_t i = 0; i < queues.size(); ++i)
    for (int r = 0; r < R_ && r < static_cast<int>(queues[i].guarantee.size()); ++r)
      if (queues[i].guarantee[r] > 0) {
        guar_[i * R_ + r] = queues[i].guarantee[r];
        q_[i].guaranteed = true;
      }
  alloc_int_.assign(R_, 0);
  why_.resize(q_.size());
  for (uint32_t t : top_) timeline_.queues.push_back(q_[t].path);
}

uint32_t QueueStats::LeafOf(std::string_view path) const {
  auto it = by_path_.find(std::string(path));
  if (it == by_path_.end() || !q_[it->second].leaf) return kNoQueue;
  return it->second;
}

void QueueStats::SetSpan(int64_t span_ms) {
  if (o_.timeline_points > 0) sample_every_ = std::max<int64_t>(1, span_ms / o_.timeline_points);
}

double QueueStats::Jain(uint32_t qi) {
  Q& q = q_[qi];
  if (q.s2 < 1e-9L) ResumChildren(qi);  // tiny sums: re-add exactly rather than trust the running sums
  if (q.s2 <= 0) return 1;              // every contender at share 0: equal
  const long double j = q.s1 * q.s1 / (static_cast<long double>(q.n_wait) * q.s2);
  return static_cast<double>(std::clamp<long double>(j, 0, 1));
}

void QueueStats::ResumChildren(uint32_t qi) {
  Q& q = q_[qi];
  q.s1 = q.s2 = 0;
  for (uint32_t c : q.children)
    if (q_[c].waiting_tasks > 0) {
      q.s1 += q_[c].x;
      q.s2 += static_cast<long double>(q_[c].x) * q_[c].x;
    }
}

void QueueStats::Integrate(uint32_t qi, int64_t t) {
  Q& q = q_[qi];
  const int64_t dt = t - q.last_t;
  if (dt <= 0) return;
  q.share_int += static_cast<long double>(q.share) * dt;
  if (q.waiting_tasks > 0 && q.running == 0) q.starved += dt;
  if (q.n_wait >= 2) {
    q.contended += dt;
    q.jain_int += static_cast<long double>(Jain(qi)) * dt;
  }
  if (q.parent == kNoQueue)
    for (int r = 0; r < R_; ++r) alloc_int_[r] += static_cast<__int128>(usage_[size_t{qi} * R_ + r]) * dt;
  q.last_t = t;
}

// ∫ fair dt of q up to t: the fair share of q is its ratio times its
// parent's (the root's is its ratio: 1 while active), and the ratio has not
// changed since fair_t, so the integral grows by ratio × the parent's
// growth.
void QueueStats::SyncFair(uint32_t qi, int64_t t) {
  Q& q = q_[qi];
  if (q.fair_t == t) return;
  if (q.parent == kNoQueue) {
    q.fair_int += static_cast<long double>(q.ratio) * static_cast<long double>(t - q.fair_t);
  } else {
    SyncFair(q.parent, t);
    const long double p = q_[q.parent].fair_int;
    q.fair_int += static_cast<long double>(q.ratio) * (p - q.fair_mark);
    q.fair_mark = p;
  }
  q.fair_t = t;
}

// q became active or idle at t: its siblings' ratios change from t on.
void QueueStats::ActiveFlipped(uint32_t qi, int64_t t) {
  const uint32_t pi = q_[qi].parent;
  if (pi == kNoQueue) {
    SyncFair(qi, t);
    q_[qi].ratio = Active(q_[qi]) ? 1 : 0;
    return;
  }
  Q& p = q_[pi];
  for (uint32_t c : p.children) SyncFair(c, t);
  double sum = 0;
  for (uint32_t c : p.children)
    if (Active(q_[c])) sum += q_[c].weight;
  for (uint32_t c : p.children) q_[c].ratio = Active(q_[c]) ? q_[c].weight / sum : 0;
}

void QueueStats::Submitted(uint32_t leaf, int64_t t, int64_t tasks) {
  for (uint32_t a = leaf; a != kNoQueue; a = q_[a].parent) ++q_[a].jobs;
  Change(leaf, t, nullptr, 0, tasks, 1);
}

void QueueStats::Change(uint32_t leaf, int64_t t, const int64_t* shape, int64_t d_run, int64_t d_wait_tasks,
                        int64_t d_wait_jobs) {
  for (uint32_t a = leaf; a != kNoQueue; a = q_[a].parent) Integrate(a, t);
  for (uint32_t a = leaf; a != kNoQueue; a = q_[a].parent) {
    Q& q = q_[a];
    const bool had = q.waiting_tasks > 0;
    const bool was_active = Active(q);
    const double old_x = q.x;
    if (d_run != 0) {
      int64_t* u = &usage_[size_t{a} * R_];
      double s = 0;
      for (int r = 0; r < R_; ++r) {
        u[r] += d_run * shape[r];
        if (total_[r] > 0) s = std::max(s, static_cast<double>(u[r]) / static_cast<double>(total_[r]));
      }
      q.running += d_run;
      q.share = s;
      q.x = s / q.weight;
    }
    q.waiting_tasks += d_wait_tasks;
    q.waiting_jobs += d_wait_jobs;
    const bool has = q.waiting_tasks > 0;
    if (was_active != Active(q)) ActiveFlipped(a, t);  // ancestors' ratios are still those before t
    if (q.guaranteed) UpdateOwed(a, t);
    if (q.parent == kNoQueue || (had == has && old_x == q.x)) continue;
    Q& p = q_[q.parent];
    if (had) {
      --p.n_wait;
      p.s1 -= old_x;
      p.s2 -= static_cast<long double>(old_x) * old_x;
    }
    if (has) {
      ++p.n_wait;
      p.s1 += q.x;
      p.s2 += static_cast<long double>(q.x) * q.x;
    }
    if (p.n_wait == 0) p.s1 = p.s2 = 0;
  }
}

// Owed: a task waits and some resource is used below its guarantee.
void QueueStats::UpdateOwed(uint32_t qi, int64_t t) {
  Q& q = q_[qi];
  bool owed = false;
  for (int r = 0; r < R_ && !owed && q.waiting_tasks > 0; ++r)
    owed = usage_[size_t{qi} * R_ + r] < guar_[size_t{qi} * R_ + r];
  if (owed == q.owed) return;
  if (owed) {
    q.owed = true;
    q.owed_since = t;
  } else {
    EndOwed(q, t);
  }
}

// An episode ends at t; one that began at t (within one instant) is none.
void QueueStats::EndOwed(Q& q, int64_t t) {
  if (!q.owed) return;
  q.owed = false;
  const int64_t d = t - q.owed_since;
  if (d <= 0) return;
  ++q.owed_episodes;
  q.owed_ms += d;
  q.owed_max_ms = std::max(q.owed_max_ms, d);
}

void QueueStats::BeginInstant(int64_t t) {
  const double dt = static_cast<double>(t - last_instant_);
  for (const Pending& p : pending_why_) why_[p.leaf][p.reason] += p.jobs * dt;
  pending_why_.clear();
  last_instant_ = t;
}

void QueueStats::AddWhy(uint32_t leaf, const std::string& reason, double jobs) {
  pending_why_.push_back({leaf, reason, jobs});
}

void QueueStats::EndInstant(int64_t t) {
  if (o_.timeline_points <= 0 || t < next_sample_) return;
  next_sample_ = t + sample_every_;
  timeline_.t_ms.push_back(t);
  std::vector<double> row;
  for (uint32_t q : top_) row.push_back(q_[q].share);
  timeline_.share.push_back(std::move(row));
}

void QueueStats::Finish(int64_t makespan, const Workload& w, const std::vector<uint32_t>& leaf_of_job,
                        SimulateResult* res) {
  for (uint32_t q = 0; q < q_.size(); ++q) {
    Integrate(q, makespan);
    EndOwed(q_[q], makespan);
  }
  EndInstant(makespan);
  res->timeline = std::move(timeline_);
  const size_t classes = o_.size_class_bounds.size() + 1;
  res->size_classes = o_.size_class_names;
  std::vector<std::vector<int64_t>> waits(q_.size());
  std::vector<std::vector<std::vector<int64_t>>> by_class(q_.size(), std::vector<std::vector<int64_t>>(classes));
  std::vector<int64_t> started(q_.size(), 0);
  for (size_t i = 0; i < w.jobs.size(); ++i) {
    JobOutcome& out = res->jobs[i];
    if (auto it = refused_.find(static_cast<uint32_t>(i)); it != refused_.end()) {
      out.refused = it->second;
      ++res->refused;
      continue;
    }
    const uint32_t leaf = leaf_of_job[i];
    if (leaf != kNoQueue) out.queue = q_[leaf].path;
    if (out.first_start_ms < 0 || leaf == kNoQueue) continue;
    ++res->started;
    const WorkloadJob& j = w.jobs[i];
    double size = 0;
    for (int r = 0; r < R_; ++r) {
      auto it = j.spec.task.find(res->resources[r]);
      if (it != j.spec.task.end() && total_[r] > 0)
        size = std::max(size, static_cast<double>(j.spec.tasks) * static_cast<double>(it->second) /
                                  static_cast<double>(total_[r]));
    }
    size_t c = 0;
    while (c < o_.size_class_bounds.size() && size >= o_.size_class_bounds[c]) ++c;
    const int64_t wait = out.first_start_ms - j.arrival_ms;
    for (uint32_t a = leaf; a != kNoQueue; a = q_[a].parent) {
      waits[a].push_back(wait);
      by_class[a][c].push_back(wait);
      ++started[a];
    }
  }
  res->unscheduled = static_cast<int64_t>(w.jobs.size()) - res->started;
  res->utilization.assign(R_, 0);
  for (int r = 0; r < R_; ++r)
    if (makespan > 0 && total_[r] > 0)
      res->utilization[r] = static_cast<double>(static_cast<long double>(alloc_int_[r]) /
                                                (static_cast<long double>(total_[r]) * makespan));
  res->queues.resize(q_.size());
  for (uint32_t qi = 0; qi < q_.size(); ++qi) {
    const Q& q = q_[qi];
    QueueReport& rep = res->queues[qi];
    rep.path = q.path;
    rep.depth = q.depth;
    rep.is_leaf = q.leaf;
    rep.weight = q.weight;
    rep.jobs = q.jobs;
    rep.started = started[qi];
    rep.usage_share_avg = makespan > 0 ? static_cast<double>(q.share_int / makespan) : 0;
    SyncFair(qi, makespan);
    rep.fair_share_avg = makespan > 0 ? static_cast<double>(q.fair_int / makespan) : 0;
    rep.wait = ComputeWaitStats(waits[qi]);
    for (auto& v : by_class[qi]) rep.wait_by_class.push_back(ComputeWaitStats(v));
    rep.starved_ms = q.starved;
    rep.fragmentation_waits = q.fragmentation_waits;
    rep.guaranteed = q.guaranteed;
    rep.owed_episodes = q.owed_episodes;
    rep.owed_ms = q.owed_ms;
    rep.owed_max_ms = q.owed_max_ms;
    rep.contended_ms = q.contended;
    rep.jain_avg = q.contended > 0 ? static_cast<double>(q.jain_int / q.contended) : 0;
    for (const auto& [reason, v] : why_[qi]) rep.why.emplace_back(reason, v);
    std::sort(rep.why.begin(), rep.why.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  }
}

}  // namespace hdrf::sim
