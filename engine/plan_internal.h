// engine/plan.cc and engine/plan_screen.cc: what a plan computation keeps
// (docs/spec.md §15): the overlay of units taken (PlanState), the waiting job and its
// demand (PlanCtx), and the plain dominant share. Internal to engine/.
#ifndef HDRF_ENGINE_PLAN_INTERNAL_H_
#define HDRF_ENGINE_PLAN_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/tree_decisions.h"
#include "engine/tree_internal.h"

namespace hdrf {
namespace engine {

// docs/spec.md §15: shares within this distance are equal.
inline constexpr double kPlanEps = 1e-9;

// A vector of trivially destructible T that holds its first N elements in
// place and moves to the heap beyond: a plan's overlay has a few entries,
// so a plan state costs no allocation. Not copyable (data() may point into
// the object).
template <typename T, size_t N>
class InlineVec {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  InlineVec() = default;
  InlineVec(const InlineVec&) = delete;
  InlineVec& operator=(const InlineVec&) = delete;
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  T& back() { return p_[n_ - 1]; }
  void clear() { n_ = 0; }  // the buffer kept (T is trivially destructible)
  void push_back(const T& v) {
    Reserve(n_ + 1);
    new (p_ + n_++) T(v);
  }
  template <typename... A>
  void emplace_back(A&&... a) {
    push_back(T(std::forward<A>(a)...));
  }
  void resize(size_t n, const T& v = T()) {  // new elements are v
    Reserve(n);
    for (size_t i = n_; i < n; ++i) new (p_ + i) T(v);
    n_ = n;
  }

 private:
  void Reserve(size_t n) {
    if (n <= cap_) return;
    const size_t cap = std::max(n, 2 * cap_);
    auto heap = std::make_unique<T[]>(cap);
    std::copy(p_, p_ + n_, heap.get());
    heap_ = std::move(heap);
    p_ = heap_.get();
    cap_ = cap;
  }
  alignas(T) unsigned char in_place_[N * sizeof(T)];
  T* p_ = reinterpret_cast<T*>(in_place_);
  size_t n_ = 0, cap_ = N;
  std::unique_ptr<T[]> heap_;
};

// What a plan has taken so far, over the live tree: per job the tasks
// taken, per queue the usage taken (R amounts per entry of dq, kept apart
// from the ids so that a lookup scans a few contiguous ids), and the free
// amounts given back.
struct TreeDecisions::PlanState {
  explicit PlanState(int r) : R(r) {}
  // Empty again for R resources, the buffers kept (a reused state costs
  // no allocation).
  void Reset(int r) {
    R = r;
    taken.clear();
    dq.clear();
    dq_d.clear();
    dfree.fill(0);
    dq_bits = 0;
  }
  int R;
  InlineVec<std::pair<JobId, int64_t>, 8> taken;  // job -> tasks taken
  InlineVec<QueueId, 16> dq;
  InlineVec<int64_t, 64> dq_d;                     // usage taken, R per entry of dq
  std::array<int64_t, kMaxResources> dfree{};    // free given back

  int64_t Taken(JobId v) const {
    for (const auto& [j, n] : taken)
      if (j == v) return n;
    return 0;
  }
  uint64_t dq_bits = 0;  // bit q % 64 of every queue in dq: most lookups miss
  const int64_t* Usage(QueueId q) const {  // null: nothing taken under q
    if (!((dq_bits >> (q % 64)) & 1)) return nullptr;
    for (size_t i = 0; i < dq.size(); ++i)
      if (dq[i] == q) return &dq_d[i * R];
    return nullptr;
  }
  int64_t* UsageToChange(QueueId q) {
    if (const int64_t* d = Usage(q)) return const_cast<int64_t*>(d);
    dq_bits |= uint64_t{1} << (q % 64);
    dq.push_back(q);
    dq_d.resize(dq_d.size() + R, 0);
    return &dq_d[dq_d.size() - R];
  }
};

// The waiting job J and its demand D = k·task_J.
struct TreeDecisions::PlanCtx {
  JobId j = kNone;
  QueueId leaf = kNone;
  int64_t k = 0;
  PlanMode mode = PlanMode::kReclaim;
  std::array<int64_t, kMaxResources> D{};
  std::vector<QueueId> path;  // J's leaf up to root
  int leaf_depth = 0;
  bool OnPath(const TreeDecisions& t, QueueId q) const {
    const int d = t.queues_[q].depth;
    return d <= leaf_depth && path[leaf_depth - d] == q;
  }
};

// The taker's side of the share test (docs/spec.md §15) at one level: A,
// the child of C on J's path, on a plan state.
struct TreeDecisions::TakerTerms {
  QueueId a = kNone;
  bool within_guarantee = false;  // A + D within A's guarantee where D > 0
  double before = 0, after = 0;   // d(A)/w_A, d(A + D)/w_A
};

// The queues of the transfer rule for a unit in a leaf other than J's
// (reclaim): C, the lowest common ancestor, B its child on the unit's
// side, A on J's; `refused`, the first queue below C that is not
// reclaimable (kNone: none; then a, b and c are not set).
struct TreeDecisions::ReclaimSides {
  QueueId a = kNone, b = kNone, c = kNone, refused = kNone;
};

// Which of Room's terms room[r] is, without a unit taken (Helps reads it:
// a unit raises room[r] only when it raises every term equal to it).
struct TreeDecisions::RoomParts {
  int64_t free[kMaxResources];      // free less what is held back
  int cap_depth[kMaxResources];     // the deepest queue of J's path whose capability headroom is room[r]; -1: none
  bool user_at_room[kMaxResources]; // the user limit's headroom is room[r]
};

// Usage of queue q on the plan's state.
inline int64_t UsageOn(const int64_t* live, const int64_t* taken, int r) {
  return live[r] - (taken ? taken[r] : 0);
}

inline double TreeDecisions::PlainShare(const int64_t* y) const {
  double s = 0;
  for (int r = 0; r < R_; ++r)
    if (total_[r] > 0) s = std::max(s, static_cast<double>(y[r]) / static_cast<double>(total_[r]));
  return s;
}

}  // namespace engine
}  // namespace hdrf

#endif  // HDRF_ENGINE_PLAN_INTERNAL_H_
