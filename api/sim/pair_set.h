// A set of 64-bit values (the simulator's (taker, victim) pairs of applied
// plans): open addressing with linear probing in one flat array, so a
// lookup of a value not in it usually reads one cache line (std::
// unordered_set reads a bucket and a node). One thread. kEmpty cannot be
// stored.
#ifndef HDRF_API_SIM_PAIR_SET_H_
#define HDRF_API_SIM_PAIR_SET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hdrf::sim {

class PairSet {
 public:
  static constexpr uint64_t kEmpty = UINT64_MAX;

  bool Contains(uint64_t v) const {
    if (slots_.empty()) return false;
    for (size_t i = Slot(v);; i = (i + 1) & mask_) {
      if (slots_[i] == v) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }
  // Adds v (not kEmpty); keeps the table at most half full.
  void Insert(uint64_t v) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    size_t i = Slot(v);
    for (; slots_[i] != kEmpty; i = (i + 1) & mask_)
      if (slots_[i] == v) return;
    slots_[i] = v;
    ++size_;
  }
  size_t size() const { return size_; }

 private:
  size_t Slot(uint64_t v) const { return static_cast<size_t>((v * 0x9e3779b97f4a7c15ull) >> shift_) & mask_; }
  void Grow() {
    std::vector<uint64_t> old;
    old.swap(slots_);
    const size_t n = old.empty() ? 1024 : 2 * old.size();
    slots_.assign(n, kEmpty);
    mask_ = n - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(n));
    size_ = 0;
    for (uint64_t v : old)
      if (v != kEmpty) Insert(v);
  }

  std::vector<uint64_t> slots_;
  size_t mask_ = 0, size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace hdrf::sim

#endif  // HDRF_API_SIM_PAIR_SET_H_
