// engine::TreeDecisions (engine/tree_decisions.h): reclaim and preemption plans (docs/spec.md §15), the transfer rule
// behind them and behind Preemptable/Reclaimable (docs/spec.md §8).
//
// A plan is computed on the live tree plus an overlay (PlanState) of the
// units taken so far: per job the tasks taken, per queue the usage taken,
// and the free amounts given back. Nothing in the tree is written, so a
// plan costs what its search visits, not a copy of the tree:
//   * the victim descent (FindVictim) skips whole subtrees that cannot hold
//     a permitted unit that helps: no usage of a short resource, a queue
//     that is not reclaimable, or (below the lowest common ancestor C) a
//     giver B whose share test fails for any unit and whose taker A is not
//     within its guarantee;
//   * room (docs/spec.md §15) needs only what a plan changes: held_back(J's leaf)
//     moves only through the siblings of J's path that lost usage (B), the
//     capability headroom only at C and above, the user headroom only for
//     units of J's user in J's leaf;
//   * one descent (VictimSearch) works on one state and one room, so it
//     keeps what it learns of each queue (d/w, SubtreeMayGive, whether the
//     subtree holds a unit, a leaf's pick) and asks nothing twice; it
//     allocates nothing (children are picked by selection, a plan state
//     holds its first entries in place);
//   * in a leaf, the parts of the rule that depend only on the leaf (C, B,
//     A's terms, d(B)/w_B) are computed once, and Helps reads which of
//     room's terms room[r] is (RoomParts) instead of a Room per unit.
#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>

#include "engine/plan_internal.h"
#include "hdrf/quantity.h"

namespace hdrf {

const char* PlanModeName(PlanMode m) {
  switch (m) {
    case PlanMode::kReclaim: return "reclaim";
    case PlanMode::kPreempt: return "preempt";
    case PlanMode::kBoth: return "both";
  }
  return "unknown";
}

bool ParsePlanMode(std::string_view text, PlanMode* out) {
  if (text == "reclaim") *out = PlanMode::kReclaim;
  else if (text == "preempt") *out = PlanMode::kPreempt;
  else if (text == "both") *out = PlanMode::kBoth;
  else return false;
  return true;
}

namespace engine {
namespace {
constexpr double kEps = kPlanEps;
}  // namespace

// Fills `c` for k tasks of job j (mode left as it is); false when the
// demand overflows.
bool TreeDecisions::FillPlanCtx(JobId j, int64_t k, PlanCtx* c) const {
  c->j = j;
  c->leaf = jobs_[j].queue;
  c->k = k;
  const int64_t* t = &task_[size_t{j} * R_];
  for (int r = 0; r < R_; ++r) {
    const __int128 d = static_cast<__int128>(k) * t[r];
    if (d > INT64_MAX) return false;
    c->D[r] = static_cast<int64_t>(d);
  }
  c->path.clear();
  for (QueueId a = c->leaf; a != kNone; a = queues_[a].parent) c->path.push_back(a);
  c->leaf_depth = queues_[c->leaf].depth;
  return true;
}

StatusOr<TreeDecisions::PlanCtx> TreeDecisions::MakePlanCtx(JobId j, int64_t k) const {
  PlanCtx c;
  if (!FillPlanCtx(j, k, &c)) return DemandOverflows(j);
  return c;
}

Status TreeDecisions::DemandOverflows(JobId j) const {
  return Status::OutOfRange("job " + job_names_[j] + ": demand overflows");
}

// docs/spec.md §15: a unit of V is one task when V holds more than m_V tasks, else
// all of them (a gang is never cut below m). 0: V holds nothing.
int64_t TreeDecisions::UnitOf(JobId v, const PlanState& s) const {
  const int64_t holds = jobs_[v].allocated - s.Taken(v);
  if (holds <= 0) return 0;
  return holds > GangSize(v) ? 1 : holds;
}

// docs/spec.md §15, the transfer rule, for `ut` tasks of job v on state s. A unit in
// J's leaf is judged as preemption (A = J, B = V), any other as reclaim.
bool TreeDecisions::Permitted(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut) const {
  return Check(c, s, v, ut, nullptr) == Rule::kOk;
}

// Why the transfer rule refuses the unit ("" when it permits it).
std::string TreeDecisions::Refusal(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut) const {
  RuleDetail d;
  switch (Check(c, s, v, ut, &d)) {
    case Rule::kOk: return "";
    case Rule::kNotReclaimable: return "not reclaimable: " + queues_[d.queue].path;
    case Rule::kGuarantee:
      return "guarantee: " + queues_[d.queue].path + " would drop below its guarantee of " +
             FormatQuantity(names_[d.resource], queues_[d.queue].guar[d.resource]) + " " + names_[d.resource];
    case Rule::kOrder:
      return "order: the taker is not below the giver before, or would end above it" +
             (d.queue == kNone ? std::string() : " (" + queues_[d.other].path + " vs " + queues_[d.queue].path + ")");
  }
  return "";
}

TreeDecisions::Rule TreeDecisions::Check(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut, RuleDetail* why) const {
  RuleDetail scratch;
  RuleDetail& d = why ? *why : scratch;
  const Job& V = jobs_[v];
  const int64_t* tv = &task_[size_t{v} * R_];
  int64_t u[kMaxResources];
  for (int r = 0; r < R_; ++r) u[r] = ut * tv[r];
  int64_t a[kMaxResources], b[kMaxResources];  // A + D and B - u
  if (V.queue == c.leaf) {  // preempt: the two jobs
    const Job& J = jobs_[c.j];
    const int64_t* tj = &task_[size_t{c.j} * R_];
    const int64_t ha = J.allocated - s.Taken(c.j), hb = V.allocated - s.Taken(v);
    for (int r = 0; r < R_; ++r) a[r] = ha * tj[r];
    for (int r = 0; r < R_; ++r) b[r] = hb * tv[r];
    const double before_a = PlainShare(a) / J.weight, before_b = PlainShare(b) / V.weight;
    if (!(before_a < before_b - kEps)) return Rule::kOrder;
    for (int r = 0; r < R_; ++r) a[r] += c.D[r], b[r] -= u[r];
    return PlainShare(a) / J.weight <= PlainShare(b) / V.weight + kEps ? Rule::kOk : Rule::kOrder;
  }
  const ReclaimSides x = SidesOf(c, V.queue);
  if (x.refused != kNone) {  // condition 1: reclaimable below C
    d.queue = x.refused;
    return Rule::kNotReclaimable;
  }
  TakerTerms t;
  TakerOf(c, s, x.a, &t);
  const Queue& QB = queues_[x.b];
  const int64_t* tb = s.Usage(x.b);
  for (int r = 0; r < R_; ++r) b[r] = UsageOn(QB.usage.data(), tb, r);
  return CheckReclaim(c, s, V.queue, u, x, t, PlainShare(b) / QB.weight, d);
}

// Reclaim (docs/spec.md §15): C, the lowest common ancestor of `leaf` and
// J's leaf, is the first queue of leaf's path that is on J's path; B its
// child on leaf's side, A on J's side.
TreeDecisions::ReclaimSides TreeDecisions::SidesOf(const PlanCtx& c, QueueId leaf) const {
  ReclaimSides x;
  x.c = leaf;
  while (!c.OnPath(*this, x.c)) {
    const Queue& q = queues_[x.c];
    if (!q.reclaimable) {
      x.refused = x.c;
      return x;
    }
    x.b = x.c;
    x.c = q.parent;
  }
  x.a = c.path[c.leaf_depth - queues_[x.c].depth - 1];
  return x;
}

// The taker's side of the share test: A's guarantee and d(A)/w_A, d(A + D)/w_A on s.
void TreeDecisions::TakerOf(const PlanCtx& c, const PlanState& s, QueueId a, TakerTerms* t) const {
  t->a = a;
  const Queue& QA = queues_[a];
  const int64_t* ta = s.Usage(a);
  int64_t y[kMaxResources];
  t->within_guarantee = true;
  for (int r = 0; r < R_; ++r) {
    y[r] = UsageOn(QA.usage.data(), ta, r);
    if (c.D[r] > 0 && y[r] + c.D[r] > QA.guar[r]) t->within_guarantee = false;
  }
  t->before = PlainShare(y) / QA.weight;
  for (int r = 0; r < R_; ++r) y[r] += c.D[r];
  t->after = PlainShare(y) / QA.weight;
}

// The transfer rule for the unit u of a job in `leaf` (reclaim), given its
// sides x, A's terms t and d(B)/w_B on s (share_b).
TreeDecisions::Rule TreeDecisions::CheckReclaim(const PlanCtx& c, const PlanState& s, QueueId leaf, const int64_t* u,
                                                const ReclaimSides& x, const TakerTerms& t, double share_b,
                                                RuleDetail& d) const {
  if (x.refused != kNone) {  // condition 1: reclaimable below C
    d.queue = x.refused;
    return Rule::kNotReclaimable;
  }
  // Condition 1: no queue on V's path drops below its guarantee.
  bool below_c = true;
  for (QueueId q = leaf; q != kNone; q = queues_[q].parent) {
    if (q == x.c) below_c = false;
    const Queue& Q = queues_[q];
    // Without a guarantee (0) nothing drops below it: a queue's usage less
    // the units taken from it stays >= 0, and D >= 0.
    if (!Q.guar_set) continue;
    const int64_t* taken = s.Usage(q);
    for (int r = 0; r < R_; ++r) {
      const int64_t delta = below_c ? -u[r] : c.D[r] - u[r];
      if (delta < 0 && UsageOn(Q.usage.data(), taken, r) + delta < Q.guar[r]) {
        d.queue = q;
        d.resource = r;
        return Rule::kGuarantee;
      }
    }
  }
  // Condition 2: the share test, or the taker within its guarantee.
  if (t.within_guarantee) return Rule::kOk;
  d.other = x.a;
  d.queue = x.b;
  if (!(t.before < share_b - kEps)) return Rule::kOrder;
  const Queue& QB = queues_[x.b];
  const int64_t* tb = s.Usage(x.b);
  int64_t b[kMaxResources];
  for (int r = 0; r < R_; ++r) b[r] = UsageOn(QB.usage.data(), tb, r) - u[r];
  return t.after <= PlainShare(b) / QB.weight + kEps ? Rule::kOk : Rule::kOrder;
}

// docs/spec.md §15 room[r]: the most one more allocation in J's leaf could take on
// state s (free minus held back, capability headroom on J's path, the user
// limit's headroom); with `more`, on s with that unit taken as well (the
// arithmetic of TakeUnit, without writing s).
void TreeDecisions::Room(const PlanCtx& c, const PlanState& s, int64_t* room, const PlanEntry* more,
                         RoomParts* parts) const {
  const Queue& leaf = queues_[c.leaf];
  int64_t u[kMaxResources] = {};
  QueueId more_b = kNone;  // the unit's queue whose parent is on J's path, itself not
  int more_c_depth = -1;   // depth of the common ancestor of the unit and J
  if (more) {
    for (int r = 0; r < R_; ++r) u[r] = more->tasks * task_[size_t{more->job} * R_ + r];
    for (QueueId q = jobs_[more->job].queue; q != kNone; q = queues_[q].parent)
      if (c.OnPath(*this, q)) {
        more_c_depth = queues_[q].depth;
        break;
      } else if (c.OnPath(*this, queues_[q].parent)) {
        more_b = q;
      }
  }
  for (int r = 0; r < R_; ++r) room[r] = free_[r] + s.dfree[r] + u[r] - leaf.held_back[r];
  // held_back(leaf) sums max(0, g - usage) over the siblings of J's path:
  // of those, only queues that lost usage to the plan changed.
  auto held_change = [&](const Queue& q, const int64_t* taken, bool plus_more) {
    for (int r = 0; r < R_; ++r) {
      const int64_t d = (taken ? taken[r] : 0) + (plus_more ? u[r] : 0);
      const int64_t was = std::max<int64_t>(0, q.guar[r] - q.usage[r]);
      const int64_t now = std::max<int64_t>(0, q.guar[r] - (q.usage[r] - d));
      room[r] -= now - was;
    }
  };
  bool more_b_done = more_b == kNone;
  for (size_t i = 0; i < s.dq.size(); ++i) {
    const QueueId e = s.dq[i];
    const Queue& q = queues_[e];
    // No guarantee: max(0, 0 - usage) is 0 before and after.
    if (!q.guar_set || q.parent == kNone || c.OnPath(*this, e) || !c.OnPath(*this, q.parent)) continue;
    held_change(q, &s.dq_d[i * R_], e == more_b);
    more_b_done = more_b_done || e == more_b;
  }
  if (!more_b_done && queues_[more_b].guar_set) held_change(queues_[more_b], nullptr, true);
  if (parts) {
    std::copy(room, room + R_, parts->free);
    std::fill(parts->user_at_room, parts->user_at_room + R_, false);
  }
  for (QueueId a : c.path) {
    const Queue& A = queues_[a];
    if (!A.cap_set) continue;
    const int64_t* taken = s.Usage(a);
    const bool on_more = A.depth <= more_c_depth;
    for (int r = 0; r < R_; ++r)
      if ((A.cap_set >> r) & 1)
        room[r] = std::min(room[r], A.cap[r] - (UsageOn(A.usage.data(), taken, r) - (on_more ? u[r] : 0)));
  }
  if (leaf.limits_active) UserRoom(c, s, more ? u : nullptr, more, room, parts);
  if (!parts) return;
  // Which terms room[r] is: the deepest capability of J's path that is.
  std::fill(parts->cap_depth, parts->cap_depth + R_, -1);
  for (QueueId a : c.path) {
    const Queue& A = queues_[a];
    if (!A.cap_set) continue;
    const int64_t* taken = s.Usage(a);
    for (int r = 0; r < R_; ++r)
      if ((A.cap_set >> r) & 1 && A.cap[r] - UsageOn(A.usage.data(), taken, r) == room[r])
        parts->cap_depth[r] = std::max(parts->cap_depth[r], A.depth);
  }
}

// Room's user limit (docs/spec.md §6) in J's leaf: `u` the unit `more`
// takes (null: none). With parts, whether room[r] is the limit's headroom.
void TreeDecisions::UserRoom(const PlanCtx& c, const PlanState& s, const int64_t* u, const PlanEntry* more,
                             int64_t* room, RoomParts* parts) const {
  const Queue& leaf = queues_[c.leaf];
  const Job& J = jobs_[c.j];
  auto it = leaf.users.find(J.user);
  int64_t used[kMaxResources] = {};
  if (it != leaf.users.end())
    for (int r = 0; r < R_; ++r) used[r] = it->second.usage[r];
  for (const auto& [v, n] : s.taken)
    if (jobs_[v].queue == c.leaf && jobs_[v].user == J.user)
      for (int r = 0; r < R_; ++r) used[r] -= n * task_[size_t{v} * R_ + r];
  if (more && jobs_[more->job].queue == c.leaf && jobs_[more->job].user == J.user)
    for (int r = 0; r < R_; ++r) used[r] -= u[r];
  const int64_t n_users = std::max<int64_t>(1, leaf.active_users);
  for (int r = 0; r < R_; ++r) {
    __int128 least = static_cast<__int128>(INT64_MAX) + 1;  // the least term: above any room
    const bool gset = (leaf.guar_set >> r) & 1;
    const __int128 B = gset ? leaf.guar[r] : leaf.realcap[r];
    if (leaf.min_user_limit_percent < 100) {
      // The largest `after` with 100·after <= B·p or n·after <= B.
      const __int128 lim = std::max<__int128>(B * leaf.min_user_limit_percent / 100, B / n_users);
      room[r] = static_cast<int64_t>(std::min<__int128>(room[r], lim - used[r]));
      least = std::min<__int128>(least, lim - used[r]);
    }
    if (leaf.user_limit_factor && gset) {
      // The largest integer `after` with (double)after <= guar·f, as Fits.
      const double cap = static_cast<double>(leaf.guar[r]) * *leaf.user_limit_factor;
      int64_t x = cap >= 9.2e18 ? INT64_MAX / 2 : static_cast<int64_t>(std::floor(cap));
      while (x > INT64_MIN / 2 && static_cast<double>(x) > cap) --x;
      while (static_cast<double>(x + 1) <= cap && x < INT64_MAX / 2) ++x;
      room[r] = std::min(room[r], x - used[r]);
      least = std::min<__int128>(least, x - used[r]);
    }
    if (parts) parts->user_at_room[r] = least == room[r];
  }
}

bool TreeDecisions::DemandFits(const PlanCtx& c, const PlanState& s) const {
  int64_t room[kMaxResources];
  Room(c, s, room);
  for (int r = 0; r < R_; ++r)
    if (c.D[r] > room[r]) return false;
  return true;
}

// Takes `ut` tasks of job v into the plan state: the job's count, the usage
// of every queue on its path, the free amounts.
void TreeDecisions::TakeUnit(PlanState& s, JobId v, int64_t ut) const {
  bool found = false;
  for (auto& [j, n] : s.taken)
    if (j == v) n += ut, found = true;
  if (!found) s.taken.emplace_back(v, ut);
  const int64_t* t = &task_[size_t{v} * R_];
  for (QueueId q = jobs_[v].queue; q != kNone; q = queues_[q].parent) {
    int64_t* d = s.UsageToChange(q);
    for (int r = 0; r < R_; ++r) d[r] += ut * t[r];
  }
  for (int r = 0; r < R_; ++r) s.dfree[r] += ut * t[r];
}

// A unit helps when taking it raises room[r] for a resource still short.
bool TreeDecisions::Helps(const PlanCtx& c, const PlanState& s, JobId v, int64_t ut, const int64_t* room) const {
  const int64_t* tv = &task_[size_t{v} * R_];
  bool may = false;
  for (int r = 0; r < R_ && !may; ++r) may = c.D[r] > room[r] && tv[r] > 0;
  if (!may) return false;
  int64_t after[kMaxResources];
  const PlanEntry more{v, ut};
  Room(c, s, after, &more);
  for (int r = 0; r < R_; ++r)
    if (c.D[r] > room[r] && after[r] > room[r]) return true;
  return false;
}

// One victim search: the descent from root on one plan state and one room.
// Neither changes during it, so what it learns of a queue holds for the
// whole search and no subtree is tested twice: the existence test of the
// subtree picked at one level and its full search at the next reuse each
// other's answers. Seen is kept per QueueId in a thread's scratch and is
// this search's where its stamp is.
struct TreeDecisions::VictimSearch {
  struct Seen {
    uint32_t may_stamp = 0;    // may (SubtreeMayGive) is this search's
    uint32_t share_stamp = 0;  // share is
    uint32_t has_stamp = 0;    // has and unit are
    bool may = false;
    bool has = false;   // the subtree holds a permitted unit that helps: unit
    bool full = false;  // unit is the full search's pick, not just any unit
    double share = 0;   // d(subtree)/w on the plan's state
    PlanEntry unit;
  };
  struct Scratch {
    std::vector<Seen> seen;
    uint32_t stamp = 0;
    std::vector<TakerTerms> taker;  // by depth of C
    std::vector<std::vector<std::pair<double, uint32_t>>> order;  // by depth: (share, child index)
  };
  const PlanCtx& c;
  const PlanState& s;
  const int64_t* room;
  const RoomParts& parts;  // room's terms
  Scratch& x;
  uint32_t stamp;
};

// A's terms where C is at depth `c_depth` (A the child of C on J's path),
// computed once per search.
const TreeDecisions::TakerTerms& TreeDecisions::Taker(VictimSearch& vs, int c_depth) const {
  TakerTerms& t = vs.x.taker[static_cast<size_t>(c_depth)];
  if (t.a == kNone) TakerOf(vs.c, vs.s, vs.c.path[vs.c.leaf_depth - c_depth - 1], &t);
  return t;
}

// d(q)/w_q on the search's state, computed once per search.
double TreeDecisions::SearchShare(VictimSearch& vs, QueueId q) const {
  VictimSearch::Seen& e = vs.x.seen[q];
  if (e.share_stamp != vs.stamp) {
    const Queue& Q = queues_[q];
    const int64_t* live = Q.usage.data();
    const int64_t* taken = vs.s.Usage(q);
    // PlainShare of UsageOn, without the copy (most queues lost nothing).
    double d = 0;
    for (int r = 0; r < R_; ++r)
      if (total_[r] > 0)
        d = std::max(d, static_cast<double>(live[r] - (taken ? taken[r] : 0)) / static_cast<double>(total_[r]));
    e.share = d / Q.weight;
    e.share_stamp = vs.stamp;
  }
  return e.share;
}

// Whether q's subtree may hold a permitted unit that helps, from q's own
// numbers (false only when none can); once per search.
bool TreeDecisions::SubtreeMayGive(VictimSearch& vs, QueueId q) const {
  VictimSearch::Seen& e = vs.x.seen[q];
  if (e.may_stamp != vs.stamp) {
    e.may = SubtreeMayGiveOnce(vs, q);
    e.may_stamp = vs.stamp;
  }
  return e.may;
}

bool TreeDecisions::SubtreeMayGiveOnce(VictimSearch& vs, QueueId q) const {
  const PlanCtx& c = vs.c;
  const Queue& Q = queues_[q];
  const int64_t* taken = vs.s.Usage(q);
  bool short_held = false;
  for (int r = 0; r < R_ && !short_held; ++r)
    short_held = c.D[r] > vs.room[r] && UsageOn(Q.usage.data(), taken, r) > 0;
  if (!short_held) return false;
  if (c.OnPath(*this, q)) {
    // J's own path: units below it are preemption (J's leaf) or reclaim
    // from a deeper common ancestor.
    return c.mode != PlanMode::kReclaim || q != c.leaf;
  }
  if (c.mode == PlanMode::kPreempt || !Q.reclaimable) return false;
  if (!c.OnPath(*this, Q.parent)) return true;  // judged at the level of B
  // q is B: C is its parent, A the child of C on J's path.
  const TakerTerms& t = Taker(vs, Q.depth - 1);
  if (t.within_guarantee) return true;
  if (!(t.before < SearchShare(vs, q) - kEps)) return false;
  // Every unit holds at least one task, and every task of the subtree at
  // least min_task: d(B - u) <= d(B - min_task). When A + D ends above that,
  // no unit passes the second half.
  int64_t b[kMaxResources];
  for (int r = 0; r < R_; ++r) {
    b[r] = UsageOn(Q.usage.data(), taken, r);
    b[r] -= std::min(b[r], Q.min_task[r]);
  }
  return t.after <= PlainShare(b) / Q.weight + kEps;
}

// What the leaf scan asks of every unit of one leaf (docs/spec.md §15).
struct TreeDecisions::LeafTerms {
  bool preempt = false;           // the leaf is J's: each unit judged by Check
  ReclaimSides x;                 // reclaim: the rule's queues,
  const TakerTerms* t = nullptr;  // A's terms
  double share_b = 0;             // and d(B)/w_B on the state
  int more_c_depth = 0;           // Room's depth of C (J's leaf: its own depth)
};

// lt for leaf q; false when no unit of q can be permitted (a queue below
// C is not reclaimable).
bool TreeDecisions::LeafTermsOf(VictimSearch& vs, QueueId q, LeafTerms* lt) const {
  if (q == vs.c.leaf) {
    lt->preempt = true;
    lt->more_c_depth = vs.c.leaf_depth;
    return true;
  }
  lt->x = SidesOf(vs.c, q);
  if (lt->x.refused != kNone) return false;
  lt->t = &Taker(vs, queues_[lt->x.c].depth);
  lt->share_b = SearchShare(vs, lt->x.b);
  lt->more_c_depth = queues_[lt->x.c].depth;
  return true;
}

// Helps and Permitted for the unit ut of job v (in lt's leaf). Helps from
// the room's terms: taking the unit raises each term by what it frees
// there (the free amount by u less what more B now holds back, the
// capability headroom of the queues of J's path from C up, the user limit's
// headroom for J's user in J's leaf) and leaves the others; room[r] rises
// only when every term equal to it does.
bool TreeDecisions::LeafUnitUsable(VictimSearch& vs, LeafTerms& lt, JobId v, int64_t ut) const {
  const PlanCtx& c = vs.c;
  const RoomParts& p = vs.parts;
  const int64_t* tv = &task_[size_t{v} * R_];
  int64_t u[kMaxResources];
  for (int r = 0; r < R_; ++r) u[r] = ut * tv[r];
  const bool user_gains = lt.preempt && jobs_[v].user == jobs_[c.j].user;
  bool helps = false;
  for (int r = 0; r < R_ && !helps; ++r) {
    if (!(c.D[r] > vs.room[r] && tv[r] > 0)) continue;
    if (p.cap_depth[r] > lt.more_c_depth || (p.user_at_room[r] && !user_gains)) continue;
    if (p.free[r] == vs.room[r]) {
      int64_t f = p.free[r] + u[r];
      if (!lt.preempt && queues_[lt.x.b].guar_set) {  // held_back of B, as Room's held_change
        const Queue& B = queues_[lt.x.b];
        const int64_t* taken = vs.s.Usage(lt.x.b);
        const int64_t d = taken ? taken[r] : 0;
        f -= std::max<int64_t>(0, B.guar[r] - (B.usage[r] - (d + u[r]))) -
             std::max<int64_t>(0, B.guar[r] - (B.usage[r] - d));
      }
      if (f <= vs.room[r]) continue;
    }
    helps = true;
  }
  assert(helps == Helps(c, vs.s, v, ut, vs.room));  // what Room with the unit taken says
  if (!helps) return false;
  if (lt.preempt) return Permitted(c, vs.s, v, ut);
  RuleDetail d;
  const bool ok = CheckReclaim(c, vs.s, jobs_[v].queue, u, lt.x, *lt.t, lt.share_b, d) == Rule::kOk;
  assert(ok == Permitted(c, vs.s, v, ut));  // what Check says
  return ok;
}

// docs/spec.md §15 in a leaf: among its jobs with a permitted unit that
// helps, the largest d(allocation)/w (ties to the later submitted); with
// `any`, the first such unit found.
// The order of the scan (Queue::holders, which swap-removes) does not
// change the answer: the full search returns the latest submitted usable
// job within 1e-9 of the largest usable share (both the fast path and the
// sort below compute exactly that, shares being the same numbers in any
// order and submission numbers unique); the `any` search's unit is used
// only for its existence (FindVictim keeps it as not `full`, and only an
// `any` call reads it back; every unit a plan takes comes from a full
// search).
std::optional<TreeDecisions::PlanEntry> TreeDecisions::FindVictimInLeaf(VictimSearch& vs, QueueId q, bool any) const {
  const PlanCtx& c = vs.c;
  const PlanState& s = vs.s;
  if ((q == c.leaf) != (c.mode != PlanMode::kReclaim) && c.mode != PlanMode::kBoth) return std::nullopt;
  LeafTerms lt;
  if (!LeafTermsOf(vs, q, &lt)) return std::nullopt;  // no unit of q is permitted
  // Outside J's leaf (reclaim) Helps and Check read the unit's job only
  // through its queue (q), its task and the unit's size: the answers of the
  // last few (task, unit) pairs are kept for the scan (jobs of one leaf
  // often hold tasks of one shape).
  struct Memo {
    const int64_t* t;
    int64_t ut;
    bool ok;
  };
  constexpr int kMemo = 4;
  Memo memo[kMemo];
  int n_memo = 0, next_memo = 0;
  const bool by_task = q != c.leaf;
  auto usable = [&](JobId v, int64_t ut) {
    const int64_t* t = &task_[size_t{v} * R_];
    if (by_task)
      for (int i = 0; i < n_memo; ++i)
        if (memo[i].ut == ut && std::equal(t, t + R_, memo[i].t)) return memo[i].ok;
    const bool ok = LeafUnitUsable(vs, lt, v, ut);
    if (by_task) {
      memo[next_memo] = Memo{t, ut, ok};
      next_memo = (next_memo + 1) % kMemo;
      n_memo = std::max(n_memo, next_memo == 0 ? kMemo : next_memo);
    }
    return ok;
  };
  struct Cand {
    double d;
    uint64_t seq;
    JobId v;
    int64_t ut;
  };
  thread_local std::vector<Cand> cands;
  cands.clear();
  // Only the leaf's jobs that hold a task (Queue::holders, in no set
  // order: the answer does not depend on it, see above).
  const std::vector<JobId>& jobs = queues_[q].holders;
  const int64_t* prev_t = nullptr;  // the last share computed: its inputs
  int64_t prev_holds = 0;
  double prev_w = 0, prev_d = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    if (k + 8 < jobs.size()) {
      __builtin_prefetch(&jobs_[jobs[k + 8]]);
      __builtin_prefetch(&task_[size_t{jobs[k + 8]} * R_]);
    }
    const JobId v = jobs[k];
    const Job& V = jobs_[v];
    assert(V.allocated > 0);
    if (v == c.j) continue;
    const int64_t holds = V.allocated - s.Taken(v);
    if (holds <= 0) continue;
    const int64_t ut = holds > GangSize(v) ? 1 : holds;  // UnitOf
    if (any) {
      if (usable(v, ut)) return PlanEntry{v, ut};
      continue;
    }
    // Jobs of one leaf often hold the same tasks of one shape: the share of
    // the same numbers is the one just computed.
    const int64_t* t = &task_[size_t{v} * R_];
    bool same = prev_t && holds == prev_holds && V.weight == prev_w;
    for (int r = 0; r < R_ && same; ++r) same = t[r] == prev_t[r];
    if (!same) {
      int64_t y[kMaxResources];
      for (int r = 0; r < R_; ++r) y[r] = holds * t[r];
      prev_d = PlainShare(y) / V.weight;
      prev_t = t;
      prev_holds = holds;
      prev_w = V.weight;
    }
    cands.push_back({prev_d, V.seq, v, ut});
  }
  if (any || cands.empty()) return std::nullopt;
  // The usual case without a sort: the job of the largest share is usable
  // (so that share is the largest usable one), and so is the latest
  // submitted within 1e-9 of it.
  size_t top = 0;
  for (size_t i = 1; i < cands.size(); ++i)
    if (cands[i].d > cands[top].d) top = i;
  if (usable(cands[top].v, cands[top].ut)) {
    const double m = cands[top].d;
    size_t late = top;
    for (size_t i = 0; i < cands.size(); ++i)
      if (cands[i].d >= m - kEps && cands[i].seq > cands[late].seq) late = i;
    if (late == top || usable(cands[late].v, cands[late].ut)) return PlanEntry{cands[late].v, cands[late].ut};
  }
  std::sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) { return x.d > y.d; });
  size_t first = 0;
  while (first < cands.size() && !usable(cands[first].v, cands[first].ut)) ++first;
  if (first == cands.size()) return std::nullopt;
  // Ties: within 1e-9 of the largest usable share, the latest submitted.
  const double m = cands[first].d;
  std::vector<const Cand*> ties;
  for (size_t i = 0; i < cands.size() && cands[i].d >= m - kEps; ++i)
    if (cands[i].seq > cands[first].seq) ties.push_back(&cands[i]);
  std::sort(ties.begin(), ties.end(), [](const Cand* x, const Cand* y) { return x->seq > y->seq; });
  for (const Cand* t : ties)
    if (usable(t->v, t->ut)) return PlanEntry{t->v, t->ut};
  return PlanEntry{cands[first].v, cands[first].ut};
}

// docs/spec.md §15 victim descent from q: among the children whose subtree holds a
// permitted unit that helps, the largest d(subtree)/w (ties to the name
// sorting last); in the leaf, FindVictimInLeaf. With `any`, the first such
// unit found (an existence test, cheap where units abound). The descent
// tests existence first and searches in full only the subtree it picks, so
// equal shares (common: a tree of equal queues) cost one search, not one
// per tied subtree. Every answer is kept for the search (VictimSearch).
std::optional<TreeDecisions::PlanEntry> TreeDecisions::FindVictim(VictimSearch& vs, QueueId q, bool any) const {
  {
    const VictimSearch::Seen& e = vs.x.seen[q];
    if (e.has_stamp == vs.stamp && (any || e.full || !e.has))
      return e.has ? std::optional<PlanEntry>(e.unit) : std::nullopt;
  }
  const Queue& Q = queues_[q];
  std::optional<PlanEntry> found;
  if (Q.children.empty()) {
    found = FindVictimInLeaf(vs, q, any);
  } else if (any) {  // any child's unit will do: no order needed
    for (QueueId ch : Q.children)
      if (SubtreeMayGive(vs, ch) && (found = FindVictim(vs, ch, true))) break;
  } else {
    found = FindVictimBelow(vs, q);
  }
  VictimSearch::Seen& e = vs.x.seen[q];
  e.has_stamp = vs.stamp;
  e.has = found.has_value();
  e.full = !any;
  if (found) e.unit = *found;
  return found;
}

// The full search below q (not a leaf): its children in order of d/w,
// largest first, until one holds a unit; then, within 1e-9 of that share,
// the name that sorts last holding a unit (children are in name order, so
// the largest index). Children are picked by selection, not sorted: the
// first usually holds a unit.
std::optional<TreeDecisions::PlanEntry> TreeDecisions::FindVictimBelow(VictimSearch& vs, QueueId q) const {
  const Queue& Q = queues_[q];
  std::vector<std::pair<double, uint32_t>>& order = vs.x.order[Q.depth];  // one buffer per depth: recursion
  order.clear();
  // Every child's share first; SubtreeMayGive only for the children the
  // order reaches (the rest cannot be the pick whatever it says).
  for (uint32_t i = 0; i < Q.children.size(); ++i) order.push_back({SearchShare(vs, Q.children[i]), i});
  // order[0, tried) holds no unit; order[tried] is the largest share of the rest.
  size_t tried = 0;
  for (; tried < order.size(); ++tried) {
    size_t top = tried;
    for (size_t i = tried + 1; i < order.size(); ++i)
      if (order[i].first > order[top].first) top = i;
    std::swap(order[tried], order[top]);
    const QueueId ch = Q.children[order[tried].second];
    if (!SubtreeMayGive(vs, ch)) continue;
    // When no child left ties with it and sorts after it, it is the pick
    // if it holds a unit: searched in full at once (the answer also says
    // whether it holds one; where it holds none, the full search asks what
    // the existence test would). Otherwise only whether it holds one.
    bool tie_after = false;
    for (size_t i = tried + 1; i < order.size() && !tie_after; ++i)
      tie_after = order[i].second > order[tried].second && order[i].first >= order[tried].first - kEps;
    if (FindVictim(vs, ch, tie_after)) break;
  }
  if (tried == order.size()) return std::nullopt;
  // Ties: the largest index within 1e-9 of m holding a unit; order[tried]
  // holds one, those before it none. Asked from the largest index down, the
  // first holding a unit is the pick: each is searched in full at once.
  const double m = order[tried].first;
  uint32_t pick = order[tried].second;
  for (;;) {
    size_t best = order.size();
    for (size_t i = tried + 1; i < order.size(); ++i)
      if (order[i].second > pick && order[i].first >= m - kEps &&
          (best == order.size() || order[i].second > order[best].second))
        best = i;
    if (best == order.size()) break;
    const QueueId ch = Q.children[order[best].second];
    if (SubtreeMayGive(vs, ch) && FindVictim(vs, ch, false)) {
      pick = order[best].second;
      break;
    }
    order[best].first = -1;  // holds no unit: out of the ties (shares are >= 0)
  }
  return FindVictim(vs, Q.children[pick], false);
}

// The descent from root on state s with `room` (a new VictimSearch).
std::optional<TreeDecisions::PlanEntry> TreeDecisions::SearchVictim(const PlanCtx& c, const PlanState& s,
                                                                    const int64_t* room, const RoomParts& parts) const {
  thread_local VictimSearch::Scratch x;
  if (++x.stamp == 0) {  // wrapped: no entry may look current
    x.seen.assign(x.seen.size(), VictimSearch::Seen{});
    x.stamp = 1;
  }
  if (x.seen.size() < queues_.size()) x.seen.resize(queues_.size());
  x.taker.assign(static_cast<size_t>(c.leaf_depth) + 1, TakerTerms{});
  if (x.order.size() <= static_cast<size_t>(max_depth_)) x.order.resize(static_cast<size_t>(max_depth_) + 1);
  VictimSearch vs{c, s, room, parts, x, x.stamp};
  return FindVictim(vs, 0, false);
}

// Valid (docs/spec.md §15): each entry, in order, is its job's unit and permitted
// on the state after the entries before it; then the demand fits. One pass
// over the plan: every condition is a pure test of the state the entries
// before it leave, so the answer is that of asking them in any order; an
// entry's unit is bounded (0 to the tasks its job still holds) before the
// rule reads it, so no sum overflows. The state is one per thread, reused
// (PlanValid runs for every applied plan and every pruning step).
bool TreeDecisions::PlanValid(const PlanCtx& c, const std::vector<PlanEntry>& plan) const {
  thread_local PlanState s(0);
  s.Reset(R_);
  for (const PlanEntry& e : plan) {
    if (e.job == c.j || e.job >= jobs_.size() || !jobs_[e.job].alive) return false;
    const bool same_leaf = jobs_[e.job].queue == c.leaf;
    if ((c.mode == PlanMode::kReclaim && same_leaf) || (c.mode == PlanMode::kPreempt && !same_leaf))
      return false;
    if (e.tasks < 0 || e.tasks > jobs_[e.job].allocated - s.Taken(e.job)) return false;
    if (UnitOf(e.job, s) != e.tasks || !Permitted(c, s, e.job, e.tasks)) return false;
    TakeUnit(s, e.job, e.tasks);
  }
  return DemandFits(c, s);
}

// docs/spec.md §8: each victim judged on its own by the transfer rule of §15, with
// the actor's one task as the demand and the victim's one task as the unit.
// A job listed k times is judged k times on the same state.
StatusOr<std::vector<bool>> TreeDecisions::Preemptable(JobId preemptor, const std::vector<JobId>& victims) const {
  return TransferDecisions(preemptor, victims, true);
}

StatusOr<std::vector<bool>> TreeDecisions::Reclaimable(JobId reclaimer, const std::vector<JobId>& victims) const {
  return TransferDecisions(reclaimer, victims, false);
}

StatusOr<std::vector<bool>> TreeDecisions::TransferDecisions(JobId actor, const std::vector<JobId>& victims,
                                                    bool same_leaf) const {
  HDRF_RETURN_IF_ERROR(CheckJobId(actor));
  for (JobId v : victims) HDRF_RETURN_IF_ERROR(CheckJobId(v));
  const char* verb = same_leaf ? "preempt" : "reclaim";
  // docs/semantics.md item 13: the actor must have a task to place.
  if (jobs_[actor].state == JobState::kPending)
    return Status::FailedPrecondition("job " + job_names_[actor] + ": Pending, cannot " + verb);
  if (jobs_[actor].allocated >= jobs_[actor].tasks)
    return Status::FailedPrecondition("job " + job_names_[actor] + ": has no unallocated task");
  HDRF_ASSIGN_OR_RETURN(PlanCtx c, MakePlanCtx(actor, 1));
  c.mode = same_leaf ? PlanMode::kPreempt : PlanMode::kReclaim;
  const PlanState none(R_);
  std::vector<bool> out;
  out.reserve(victims.size());
  for (JobId v : victims) {
    const bool ok = v != actor && jobs_[v].allocated > 0 && (jobs_[v].queue == c.leaf) == same_leaf &&
                    Permitted(c, none, v, 1);
    out.push_back(ok);
  }
  return out;
}

StatusOr<TreeDecisions::PlanOutcome> TreeDecisions::MakePlan(JobId j, PlanMode mode, std::optional<int64_t> max_victims) const {
  HDRF_RETURN_IF_ERROR(CheckJobId(j));
  const Job& J = jobs_[j];
  if (J.state == JobState::kPending)
    return Status::FailedPrecondition("job " + job_names_[j] + ": Pending (not admitted), no plan");
  if (J.allocated >= J.tasks)
    return Status::FailedPrecondition("job " + job_names_[j] + ": has no unallocated task, no plan");
  if (max_victims && *max_victims < 0)
    return Status::InvalidArgument("plan for job " + job_names_[j] + ": maxVictims must be >= 0");
  PlanOutcome out;
  out.tasks = StepDemand(j);
  HDRF_ASSIGN_OR_RETURN(PlanCtx c, MakePlanCtx(j, out.tasks));
  c.mode = mode;
  PlanState s(R_);
  int64_t room[kMaxResources];
  RoomParts parts;
  for (;;) {
    Room(c, s, room, nullptr, &parts);
    bool fits = true;
    for (int r = 0; r < R_; ++r) fits = fits && c.D[r] <= room[r];
    if (fits) break;
    std::optional<PlanEntry> v;
    if (!max_victims || static_cast<int64_t>(out.victims.size()) < *max_victims) v = SearchVictim(c, s, room, parts);
    if (!v) {
      out.short_by.assign(R_, 0);
      for (int r = 0; r < R_; ++r) out.short_by[r] = std::max<int64_t>(0, c.D[r] - room[r]);
      out.victims.clear();
      return out;
    }
    out.victims.push_back(*v);
    TakeUnit(s, v->job, v->tasks);
  }
  // The pruning pass, last entry first. s holds every entry kept so far:
  // the demand fits without entry i when it fits on s less that entry (a
  // negative unit in Room), and only then is the rest checked in full.
  for (size_t i = out.victims.size(); i-- > 0;) {
    const PlanEntry less{out.victims[i].job, -out.victims[i].tasks};
    Room(c, s, room, &less);
    bool fits = true;
    for (int r = 0; r < R_; ++r) fits = fits && c.D[r] <= room[r];
    if (!fits) continue;
    std::vector<PlanEntry> rest = out.victims;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    if (!PlanValid(c, rest)) continue;
    out.victims = std::move(rest);
    TakeUnit(s, less.job, less.tasks);
  }
  out.fits = true;
  return out;
}

Status TreeDecisions::ApplyPlan(JobId j, int64_t tasks, const std::vector<PlanEntry>& victims, PlanMode mode) {
  HDRF_RETURN_IF_ERROR(CheckJobId(j));
  for (const PlanEntry& e : victims) HDRF_RETURN_IF_ERROR(CheckJobId(e.job));
  const Job& J = jobs_[j];
  auto stale = [&](const std::string& why) { return Status::Aborted("stale plan for job " + job_names_[j] + ": " + why); };
  if (J.state == JobState::kPending || J.allocated >= J.tasks)
    return stale("it no longer waits with an unallocated task");
  if (tasks != StepDemand(j))
    return stale("its demand is now " + std::to_string(StepDemand(j)) + " tasks, not " + std::to_string(tasks));
  // One context per thread, reused: its path costs no allocation.
  thread_local PlanCtx c;
  if (!FillPlanCtx(j, tasks, &c)) return DemandOverflows(j);
  c.mode = mode;
  if (!PlanValid(c, victims))
    return stale("an entry is no longer its job's unit or permitted, or the demand would not fit");
  for (const PlanEntry& e : victims) ChangeAllocation(e.job, -e.tasks, 0);
  ChangeAllocation(j, tasks, 0);
  AdmitPending();
  return Status::Ok();
}

// Explain (docs/spec.md §14, §15): a gang's demand, and for a job that waits its
// reclaim plan, or why there is none: the resources short and, for up to
// ten units that would help, the rule that refuses each.
void TreeDecisions::ExplainPlan(JobId j, Explanation* e) const {
  const Job& J = jobs_[j];
  if (J.state == JobState::kPending || J.allocated >= J.tasks || Schedulable(j)) return;
  const int64_t k = StepDemand(j);
  auto c = MakePlanCtx(j, k);
  if (!c.ok()) return;
  c->mode = PlanMode::kReclaim;
  const PlanState none(R_);
  int64_t room[kMaxResources];
  Room(*c, none, room);
  if (k > 1)
    for (int r = 0; r < R_; ++r)
      if (c->D[r] > room[r])
        e->unfit_because.push_back("waits: a gang of " + std::to_string(k) + " needs " +
                                   FormatQuantity(names_[r], c->D[r]) + " " + names_[r] + ", " +
                                   FormatQuantity(names_[r], std::max<int64_t>(0, room[r])) + " free for it");
  auto plan = MakePlan(j, PlanMode::kReclaim, std::nullopt);
  if (!plan.ok()) return;
  if (plan->fits) {
    std::string line = "reclaim plan: stop";
    for (size_t i = 0; i < plan->victims.size(); ++i)
      line += (i ? ", " : " ") + job_names_[plan->victims[i].job] + " " + std::to_string(plan->victims[i].tasks) +
              (plan->victims[i].tasks == 1 ? " task" : " tasks");
    e->plan.push_back(line);
    return;
  }
  std::string line = "no reclaim plan: short";
  for (int r = 0; r < R_; ++r)
    if (plan->short_by[r] > 0) line += " " + names_[r] + " " + FormatQuantity(names_[r], plan->short_by[r]);
  e->plan.push_back(line);
  int shown = 0;
  for (JobId v = 0; v < jobs_.size() && shown < 10; ++v) {
    if (!jobs_[v].alive || v == j || jobs_[v].queue == c->leaf) continue;
    const int64_t ut = UnitOf(v, none);
    if (ut == 0) continue;
    if (!Helps(*c, none, v, ut, room)) continue;
    const std::string why = Refusal(*c, none, v, ut);
    if (why.empty()) continue;
    e->plan.push_back("refused " + job_names_[v] + " (" + queues_[jobs_[v].queue].path + "): " + why);
    ++shown;
  }
}

}  // namespace engine
}  // namespace hdrf
