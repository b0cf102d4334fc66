// The workload simulator's task shapes (api/sim/simulate.cc): each distinct
// shape once, with its count of waiting jobs. One thread.
#ifndef HDRF_API_SIM_TASK_SHAPES_H_
#define HDRF_API_SIM_TASK_SHAPES_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hdrf::sim {

// Distinct task shapes, with the number of waiting jobs of each: a fill can
// start nothing when no waiting shape fits in the free capacity (fit, docs/spec.md
// §6, needs task <= free - held back <= free), and then it is skipped.
class Shapes {
 public:
  explicit Shapes(int R) : R_(R) {}
  uint32_t Intern(const std::vector<int64_t>& v) {
    auto [it, inserted] = index_.emplace(v, static_cast<uint32_t>(waiting_.size()));
    if (inserted) {
      amounts_.insert(amounts_.end(), v.begin(), v.end());
      waiting_.push_back(0);
      pos_.push_back(kNone);
    }
    return it->second;
  }
  const int64_t* at(uint32_t s) const { return &amounts_[size_t{s} * R_]; }
  const std::vector<int64_t>& all() const { return amounts_; }  // R amounts per shape
  void AddWaiting(uint32_t s, int64_t d) {
    const int64_t before = waiting_[s];
    waiting_[s] += d;
    if (before == 0 && waiting_[s] > 0) {
      pos_[s] = static_cast<uint32_t>(active_.size());
      active_.push_back(s);
    } else if (before > 0 && waiting_[s] == 0) {
      const uint32_t last = active_.back();
      active_[pos_[s]] = last;
      pos_[last] = pos_[s];
      active_.pop_back();
      pos_[s] = kNone;
    }
  }
  // False only when certainly no waiting shape fits in `free`.
  bool AnyMayFit(const int64_t* free) const {
    if (active_.size() > kMaxScan) return true;
    for (uint32_t s : active_) {
      const int64_t* a = at(s);
      bool fits = true;
      for (int r = 0; r < R_ && fits; ++r) fits = a[r] <= free[r];
      if (fits) return true;
    }
    return false;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;  // pos_ of a shape with no waiting job
  static constexpr size_t kMaxScan = 64;
  struct VecHash {
    size_t operator()(const std::vector<int64_t>& v) const {
      size_t h = 1469598103934665603ull;
      for (int64_t x : v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
      return h;
    }
  };
  int R_;
  std::vector<int64_t> amounts_;
  std::vector<int64_t> waiting_;  // waiting jobs per shape
  std::vector<uint32_t> pos_;     // in active_
  std::vector<uint32_t> active_;  // shapes with waiting jobs
  std::unordered_map<std::vector<int64_t>, uint32_t, VecHash> index_;
};

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_TASK_SHAPES_H_
