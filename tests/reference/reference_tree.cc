// Reference model, §3 tree validation (reference_internal.h): the rules a
// queue change must keep, with docs/semantics.md items 3, 8, 9.
#include <cmath>
#include <utility>

#include "tests/reference/reference_internal.h"

namespace hdrf::ref::detail {


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

}  // namespace hdrf::ref::detail
