// engine::TreeDecisions (engine/tree_decisions.h): the screens asked before a reclaim
// plan is made (docs/simulate.md "Speed"): necessary conditions for a plan, each cheaper
// than MakePlan, that say "no plan" only where MakePlan would find none.
#include <algorithm>
#include <cmath>

#include "engine/plan_internal.h"

namespace hdrf {
namespace engine {
namespace {
constexpr double kEps = kPlanEps;
}  // namespace

// MakePlan's first victim is a permitted unit on the current state. For
// reclaim (condition 2) that needs, at some level of J's path, A within
// its guarantee with D, or d(A)/w_A < d(B)/w_B - 1e-9 for a reclaimable
// sibling B: SubtreeMayGive's test, with the largest such d(B)/w_B. Where
// MakePlan would return an error, or preemption may give a unit, the
// answer is true (MakePlan is asked).
bool TreeDecisions::PlanMayTake(JobId j, PlanMode mode, ScreenCache* cache) const {
  if (mode != PlanMode::kReclaim || !CheckJobId(j).ok()) return true;
  const Job& J = jobs_[j];
  if (J.state == JobState::kPending || J.allocated >= J.tasks) return true;
  thread_local PlanCtx c;  // kept: its path's buffer is reused
  if (!FillPlanCtx(j, StepDemand(j), &c)) return true;  // MakePlanCtx's error
  c.mode = PlanMode::kReclaim;
  return PathMayTake(J.queue, c.D.data(), cache) && PlanMayFree(c, cache);
}

// docs/spec.md §15, mode reclaim: the demand fits at the end only when the
// units taken free at least D - room in each short resource (room only
// grows by what is freed: free + freed less the guarantees held back, a
// capability's headroom by the usage taken below it, a user's headroom not
// at all). A unit from sibling B of A (the child of C on J's path) is
// permitted only while d(A + D)/w_A <= d(B - u)/w_B + 1e-9 with A within its
// guarantee or not: after B's last unit, B keeps Y = usage(B) - X_B with
// d(Y) >= w_B (d(A_low + D)/w_A - 1e-9), A_low a lower bound of A's usage
// through the plan (A loses only what units below it free). So some
// resource r' keeps Y[r'] >= t total[r'], and X_B[r] is at most usage(B)[r]
// - t total[r] (r' = r) or ratio[r][r'] (usage(B)[r'] - t total[r'])
// (every task has r at most ratio times r'). Summed over every level's
// siblings, that bounds what a plan can free; false when it is short of
// D - room in a resource. Units are whole: B gives nothing unless it can
// give one, so r' can keep B's share only where that bound on X_B[r'] is
// at least m_B[r'] (every unit of B holds at least m_B, LeastUnitTask).
// A queue with a guarantee bounds none of its siblings (within it, any
// unit is permitted), nor does a demand of nothing (D = 0 is within every
// guarantee).
bool TreeDecisions::PlanMayFree(const PlanCtx& c, ScreenCache* cache) const {
  const ScreenCache& cache_read = *cache;
  if (cache_read.ratio.size() != size_t{static_cast<uint32_t>(R_)} * static_cast<uint32_t>(R_)) return true;
  double inv_total[kMaxResources];
  for (int r = 0; r < R_; ++r) {
    if (total_[r] <= 0) return true;
    inv_total[r] = 1.0 / static_cast<double>(total_[r]);
  }
  const int64_t* D = c.D.data();
  int64_t room[kMaxResources];
  Room(c, PlanState(R_), room);
  double need[kMaxResources];  // D - room where short, else <= 0
  bool short_any = false;
  for (int r = 0; r < R_; ++r) {
    // Slack for the rounding of the sums below (the bound only gets weaker).
    need[r] = (static_cast<double>(D[r]) - static_cast<double>(room[r]) - 1) / (1 + 1e-9);
    short_any = short_any || D[r] > room[r];
  }
  if (!short_any) return true;
  const bool zero_demand = std::all_of(D, D + R_, [](int64_t x) { return x == 0; });
  double freed[kMaxResources] = {}, low[kMaxResources];
  for (int r = 0; r < R_; ++r) low[r] = static_cast<double>(queues_[c.leaf].usage[r]);
  for (QueueId a = c.leaf; queues_[a].parent != kNone; a = queues_[a].parent) {
    const Queue& QA = queues_[a];
    double d = 0;  // d(A_low + D)
    for (int r = 0; r < R_; ++r) {
      low[r] = std::max(low[r], static_cast<double>(QA.usage[r]) - freed[r]);
      d = std::max(d, (low[r] + static_cast<double>(D[r])) * inv_total[r]);
    }
    // The least d(B - X_B)/w_B after a unit of B (< 0: none). The margins
    // here and in `keep` cover the rounding (the bound only gets weaker).
    // A demand of nothing is within every guarantee (condition 2 reads only
    // the r with D[r] > 0): no bound either.
    const double t = QA.guar_set || zero_demand ? -1 : d / QA.weight * (1 - 1e-9) - 2 * kEps;
    SiblingShares(QA.parent, cache);  // each reclaimable sibling's m_B in its own_in
    for (QueueId b : queues_[QA.parent].children) {
      const Queue& QB = queues_[b];
      if (b == a || !QB.reclaimable) continue;
      const double tb = t * QB.weight;
      const int64_t* least = &cache_read.tops[b].own_in[R_];
      // keep[r']: the most X_B[r'] can be with r' keeping B's share; r'
      // cannot keep it (keeps[r'] false) when that is below one unit.
      double has[kMaxResources], keep[kMaxResources];
      bool keeps[kMaxResources];
      for (int r = 0; r < R_; ++r) {
        has[r] = static_cast<double>(QB.usage[r]);
        keep[r] = has[r] * (1 + 1e-9) - tb * static_cast<double>(total_[r]);
        keeps[r] = keep[r] >= 0 && keep[r] >= static_cast<double>(least[r]);
      }
      bool covered = true;
      for (int r = 0; r < R_; ++r) {
        double g = tb <= 0 ? has[r] : keeps[r] ? keep[r] : 0.0;
        for (int r2 = 0; r2 < R_ && g < has[r]; ++r2)
          if (r2 != r && keeps[r2]) {
            const double x = cache_read.ratio[size_t(r) * R_ + r2];
            g = std::isinf(x) ? has[r] : std::max(g, x * keep[r2]);
          }
        freed[r] += std::min(has[r], g);
        covered = covered && freed[r] >= need[r];
      }
      if (covered) return true;
    }
  }
  return false;
}

// A leaf holds few tasks, often none of its least shape: the least task of
// its holding jobs is a much tighter bound than min_task there (docs/
// simulate.md "Speed").
void TreeDecisions::LeastUnitTask(QueueId q, int64_t* least) const {
  const Queue& Q = queues_[q];
  if (!Q.children.empty()) {
    std::copy(Q.min_task.begin(), Q.min_task.end(), least);
    return;
  }
  std::fill(least, least + R_, INT64_MAX);
  for (JobId v : Q.holders) {
    const int64_t* t = &task_[size_t{v} * R_];
    for (int r = 0; r < R_; ++r) least[r] = std::min(least[r], t[r]);
  }
}

const TreeDecisions::ChildShares& TreeDecisions::SiblingShares(QueueId parent, ScreenCache* cache) const {
  std::vector<ChildShares>& tops = cache->tops;
  ChildShares& top = tops[parent];
  if (top.gen == cache->gen) return top;
  if (cache->total_gen != cache->gen) {  // the kept own shares were computed with cache->total
    cache->total_gen = cache->gen;
    if (!std::equal(total_.begin(), total_.end(), cache->total.begin(), cache->total.end())) {
      cache->total = total_;
      for (ChildShares& q : tops) q.own_set = false;
    }
  }
  top.gen = cache->gen;
  top.first = top.second = top.first_less = top.second_less = -1;  // shares are >= 0
  top.first_of = top.first_less_of = kNone;
  auto add = [](double v, QueueId q, double* first, double* second, QueueId* first_of) {
    if (*first_of == kNone || v > *first) {
      *second = *first;
      *first = v;
      *first_of = q;
    } else if (v > *second) {
      *second = v;
    }
  };
  for (QueueId b : queues_[parent].children) {
    const Queue& QB = queues_[b];
    if (!QB.reclaimable) continue;
    ChildShares& own = tops[b];
    if (own.own_gen != cache->gen) {  // else checked in this gen, and b's numbers did not change since
      own.own_gen = cache->gen;
      int64_t least[kMaxResources];
      LeastUnitTask(b, least);
      bool same = own.own_set && own.own_weight == QB.weight;
      for (int r = 0; r < R_ && same; ++r) same = own.own_in[r] == QB.usage[r] && own.own_in[R_ + r] == least[r];
      if (!same) {
        own.own_in.resize(2 * size_t{static_cast<uint32_t>(R_)});
        int64_t y[kMaxResources];
        for (int r = 0; r < R_; ++r) y[r] = own.own_in[r] = QB.usage[r];
        own.own = PlainShare(y) / QB.weight;
        for (int r = 0; r < R_; ++r) own.own_in[R_ + r] = least[r];
        for (int r = 0; r < R_; ++r) y[r] -= std::min(y[r], least[r]);
        own.own_less = PlainShare(y) / QB.weight;
        own.own_weight = QB.weight;
        own.own_set = true;
      }
    }
    add(own.own, b, &top.first, &top.second, &top.first_of);
    add(own.own_less, b, &top.first_less, &top.second_less, &top.first_less_of);
  }
  return top;
}

// SiblingShares(p) reads, of p's reclaimable children, their usage,
// LeastUnitTask and weight (and the total): a change of the allocations or
// submissions below q reaches those of q's ancestors only, and the own
// shares of q and its ancestors.
void TreeDecisions::ScreenChanged(QueueId q, ScreenCache* cache) const {
  for (; q < queues_.size() && q < cache->tops.size(); q = queues_[q].parent) cache->tops[q].gen = cache->tops[q].own_gen = 0;
}

bool TreeDecisions::LeafMayTake(QueueId leaf, ScreenCache* cache, const int64_t* least) const {
  if (leaf >= queues_.size() || !queues_[leaf].children.empty()) return false;
  return PathMayTake(leaf, least, cache);
}

// Without D, a queue with a guarantee may take within it; one without
// takes within it no demand that needs some resource (its guarantee is 0).
bool TreeDecisions::PathMayTake(QueueId leaf, const int64_t* D, ScreenCache* cache) const {
  if (cache->tops.size() < queues_.size()) cache->tops.resize(queues_.size());
  for (QueueId a = leaf; queues_[a].parent != kNone; a = queues_[a].parent) {
    const Queue& QA = queues_[a];
    bool within_guarantee = D ? true : QA.guar_set != 0;
    for (int r = 0; D && r < R_; ++r)
      if (D[r] > 0 && QA.usage[r] + D[r] > QA.guar[r]) within_guarantee = false;
    if (within_guarantee) return true;
    const ChildShares& top = SiblingShares(QA.parent, cache);
    const double b = top.first_of == a ? top.second : top.first;
    const double b_less = top.first_less_of == a ? top.second_less : top.first_less;
    int64_t y[kMaxResources];
    for (int r = 0; r < R_; ++r) y[r] = QA.usage[r];
    const double before = PlainShare(y) / QA.weight;
    for (int r = 0; D && r < R_; ++r) y[r] += D[r];
    const double after = D ? PlainShare(y) / QA.weight : before;  // d(A + D) >= d(A)
    if (before < b - kEps && after <= b_less + kEps) return true;
  }
  return false;
}
}  // namespace engine
}  // namespace hdrf
