// ResArray<T>: one amount per resource (R of them), stored inside the
// object when R <= kInline and in one heap block otherwise.
//
// The per-queue sums of the event path (Queue::usage and cap, QueueView's
// sum_norm, sum_blk, U and wait_min) are arrays of R. As std::vector each
// was a pointer in the node and a separate heap block: an event walking a
// path loaded the pointer, then missed on the block. Inline, a node's hot
// data is a few adjacent lines whose addresses are known from the node's
// (docs/algorithm.md, "Node layout"). Clusters with more than kInline
// resources (up to kMaxResources) keep working through the heap block.
//
// The interface is the part of std::vector that the engine uses: [],
// data(), size(), begin()/end(), assign(n, v), assign(first, last),
// comparison with a std::vector. Not thread-safe (guarded by whatever
// guards the owning node).
#ifndef HDRF_ENGINE_RES_ARRAY_H_
#define HDRF_ENGINE_RES_ARRAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace hdrf::engine {

template <class T>
class ResArray {
  static_assert(std::is_trivially_copyable_v<T>, "amounts are plain numbers");

 public:
  static constexpr uint32_t kInline = 4;

  ResArray() : inline_{} {}
  ResArray(const ResArray& o) : inline_{} { assign(o.begin(), o.end()); }
  ResArray(ResArray&& o) noexcept : inline_{} { Take(o); }
  ResArray& operator=(const ResArray& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ResArray& operator=(ResArray&& o) noexcept {
    if (this != &o) {
      Free();
      Take(o);
    }
    return *this;
  }
  ~ResArray() { Free(); }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* data() { return n_ <= kInline ? inline_ : heap_; }
  const T* data() const { return n_ <= kInline ? inline_ : heap_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + n_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + n_; }

  void assign(size_t n, T v) {
    Resize(n);
    std::fill(begin(), end(), v);
  }
  template <class It>
    requires(!std::is_integral_v<It>)
  void assign(It first, It last) {
    Resize(static_cast<size_t>(last - first));
    std::copy(first, last, begin());
  }
  std::vector<T> ToVector() const { return std::vector<T>(begin(), end()); }
  bool operator==(const std::vector<T>& v) const {
    return v.size() == n_ && std::equal(begin(), end(), v.begin());
  }

 private:
  // Sized for n (contents unspecified).
  void Resize(size_t n) {
    if (n == n_) return;
    Free();
    if (n > kInline) heap_ = new T[n];
    n_ = static_cast<uint32_t>(n);
  }
  void Free() {
    if (n_ > kInline) delete[] heap_;
    n_ = 0;
  }
  // From o (this one empty); o is left empty.
  void Take(ResArray& o) {
    if (o.n_ > kInline) {
      heap_ = o.heap_;
    } else {
      std::copy(o.inline_, o.inline_ + o.n_, inline_);
    }
    n_ = o.n_;
    o.n_ = 0;
  }

  union {
    T inline_[kInline];
    T* heap_;
  };
  uint32_t n_ = 0;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_RES_ARRAY_H_
