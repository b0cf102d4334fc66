// KeyHeap: an indexed binary min-heap of (key, id) entries.
//
// Each queue keeps one for its non-blocked children; the entry's position is
// stored in the child (a job or a queue) through the `pos` callback, so an
// entry can be updated or erased in O(log n) when a child's key changes.
// Entries order by key, then id, so iteration order is deterministic.
//
// Not thread-safe: guarded by whatever guards the owning queue.
#ifndef HDRF_ENGINE_KEY_HEAP_H_
#define HDRF_ENGINE_KEY_HEAP_H_

#include <algorithm>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

namespace hdrf::engine {

struct HeapEntry {
  double key;
  uint32_t id;
  bool operator<(const HeapEntry& o) const {
    return key < o.key || (key == o.key && id < o.id);
  }
};

class KeyHeap {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  bool empty() const { return h_.empty(); }
  size_t size() const { return h_.size(); }
  const HeapEntry& top() const { return h_.front(); }
  const HeapEntry& at(uint32_t i) const { return h_[i]; }
  // For prefetching entry i (any i < capacity(); nothing is read).
  const HeapEntry* data() const { return h_.data(); }
  size_t capacity() const { return h_.capacity(); }
  void clear() { h_.clear(); }
  // Room for n entries without moving the buffer (grows geometrically).
  void reserve(size_t n) {
    if (n > h_.capacity()) h_.reserve(std::max(n, 2 * h_.capacity()));
  }

  // `pos(id)` returns the slot where id's index is stored: a reference, or
  // any object assignable from uint32_t (e.g. one that stores atomically).
  template <class Pos>
  void Push(double key, uint32_t id, Pos&& pos) {
    h_.push_back({key, id});
    pos(id) = static_cast<uint32_t>(h_.size() - 1);
    SiftUp(static_cast<uint32_t>(h_.size() - 1), pos);
  }

  template <class Pos>
  void Erase(uint32_t i, Pos&& pos) {
    pos(h_[i].id) = kAbsent;
    uint32_t last = static_cast<uint32_t>(h_.size() - 1);
    if (i != last) {
      h_[i] = h_[last];
      pos(h_[i].id) = i;
      h_.pop_back();
      Restore(i, pos);
    } else {
      h_.pop_back();
    }
  }

  template <class Pos>
  void Update(uint32_t i, double key, Pos&& pos) {
    h_[i].key = key;
    Restore(i, pos);
  }

  // Calls f(entry) on entries in ascending order until f returns false.
  // Costs O(k log k) for the k entries visited, whatever the heap's size.
  // The frontier lives on the stack while it holds at most kInline entries
  // (a visit of k entries has a frontier of at most k + 1).
  template <class F>
  void VisitInOrder(F&& f) const {
    if (h_.empty()) return;
    if (!f(h_[0])) return;
    constexpr size_t kInline = 32;
    uint32_t inl[kInline];
    std::vector<uint32_t> big;
    uint32_t* fr = inl;
    size_t n = 0, cap = kInline;
    auto cmp = [this](uint32_t a, uint32_t b) { return h_[b] < h_[a]; };
    auto push = [&](uint32_t i) {
      if (n == cap) {
        big.assign(fr, fr + n);
        big.resize(2 * cap);
        fr = big.data();
        cap = big.size();
      }
      fr[n++] = i;
      std::push_heap(fr, fr + n, cmp);
    };
    if (1 < h_.size()) push(1);
    if (2 < h_.size()) push(2);
    while (n > 0) {
      std::pop_heap(fr, fr + n, cmp);
      const uint32_t i = fr[--n];
      if (!f(h_[i])) return;
      const uint32_t l = 2 * i + 1;
      if (l < h_.size()) push(l);
      if (l + 1 < h_.size()) push(l + 1);
    }
  }

  // Calls f(entry) on every entry with key <= limit, in no particular order:
  // O(k) for the k entries visited (a subtree whose root is above the limit
  // is skipped whole).
  template <class F>
  void VisitAtMost(double limit, F&& f) const {
    uint32_t stack[64];  // pending right siblings: at most one per level
    size_t n = 0;
    const uint32_t size = static_cast<uint32_t>(h_.size());
    if (size > 0) stack[n++] = 0;
    while (n > 0) {
      uint32_t i = stack[--n];
      while (i < size && !(h_[i].key > limit)) {
        f(h_[i]);
        if (2 * i + 2 < size) stack[n++] = 2 * i + 2;
        i = 2 * i + 1;
      }
    }
  }

 private:
  template <class Pos>
  void Restore(uint32_t i, Pos& pos) {
    if (i > 0 && h_[i] < h_[(i - 1) / 2]) {
      SiftUp(i, pos);
    } else {
      SiftDown(i, pos);
    }
  }
  template <class Pos>
  void SiftUp(uint32_t i, Pos& pos) {
    HeapEntry e = h_[i];
    while (i > 0) {
      uint32_t p = (i - 1) / 2;
      if (!(e < h_[p])) break;
      h_[i] = h_[p];
      pos(h_[i].id) = i;
      i = p;
    }
    h_[i] = e;
    pos(e.id) = i;
  }
  template <class Pos>
  void SiftDown(uint32_t i, Pos& pos) {
    HeapEntry e = h_[i];
    const uint32_t n = static_cast<uint32_t>(h_.size());
    for (;;) {
      uint32_t c = 2 * i + 1;
      if (c >= n) break;
      // The next level's entries (c's and c+1's children, 64 bytes from
      // 4i+3): asked for now, so that a sift of several levels waits for
      // one line at a time at most (leaf heaps of 10^3 jobs are not in cache).
      if (2 * c + 1 < n) __builtin_prefetch(&h_[2 * c + 1]);
      if (2 * c + 4 < n) __builtin_prefetch(&h_[2 * c + 4]);
      if (c + 1 < n && h_[c + 1] < h_[c]) ++c;
      if (!(h_[c] < e)) break;
      h_[i] = h_[c];
      pos(h_[i].id) = i;
      i = c;
    }
    h_[i] = e;
    pos(e.id) = i;
  }

  std::vector<HeapEntry> h_;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_KEY_HEAP_H_
