// KeyHeap: an indexed 4-ary min-heap of (key, id) entries.
//
// Each queue keeps one for its non-blocked children; the entry's position is
// stored in the child (a job or a queue) through the `pos` callback, so an
// entry can be updated or erased in O(log n) when a child's key changes.
// Entries order by key, then id, so the minimum and every visit in key
// order are the same whatever the heap's shape.
//
// Layout (why 4-ary): a leaf heap of 10^3 jobs is not in cache at 10^6
// jobs, and a sift waits for one line per level it reads; each entry it
// moves also writes the moved child's position (another line). With four
// children per node and the four children of a node in one 64-byte line
// (16-byte entries; the buffer is 64-byte aligned and entry i is stored at
// slot i + kPad, so that children 4i+1..4i+4 sit at slots 4(i+1)..4(i+1)+3),
// a sift reads one line per level over half the levels of a binary heap and
// moves half as many entries. Positions (the `pos` values, at(), Erase,
// Update) are entry indices 0..size()-1; the slots are internal.
//
// Not thread-safe: guarded by whatever guards the owning queue.
#ifndef HDRF_ENGINE_KEY_HEAP_H_
#define HDRF_ENGINE_KEY_HEAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace hdrf::engine {

// `tag` is carried with the entry and plays no part in the order: a job's
// entry holds its task's fit code (engine/fill_bound.cc), a queue's 0. It
// fills what would be padding (the entry stays 16 bytes).
struct HeapEntry {
  double key;
  uint32_t id;
  uint32_t tag = 0;
  bool operator<(const HeapEntry& o) const {
    return key < o.key || (key == o.key && id < o.id);
  }
};
static_assert(sizeof(HeapEntry) == 16, "four entries to a 64-byte line (see Layout)");

// The buffer's allocator: 64-byte aligned blocks (a node's four children
// then share one line; see "Layout").
template <class T>
struct LineAlignedAlloc {
  using value_type = T;
  LineAlignedAlloc() = default;
  template <class U>
  LineAlignedAlloc(const LineAlignedAlloc<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const LineAlignedAlloc<U>&) const { return true; }
};

class KeyHeap {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  static constexpr uint32_t kArity = 4;

  // Index arithmetic (entry indices): i's parent, and its first child (its
  // children are FirstChild(i) .. FirstChild(i) + 3, in one line).
  static uint32_t Parent(uint32_t i) { return (i - 1) / kArity; }
  static size_t FirstChild(uint32_t i) { return size_t{kArity} * i + 1; }

  bool empty() const { return h_.size() == kPad; }
  size_t size() const { return h_.size() - kPad; }
  const HeapEntry& top() const { return h_[kPad]; }
  const HeapEntry& at(uint32_t i) const { return h_[i + kPad]; }
  // For prefetching entry i (any i < capacity(); nothing is read): its
  // address. Reads only the buffer's address.
  const HeapEntry* slot(size_t i) const { return h_.data() + kPad + i; }
  size_t capacity() const { return h_.capacity() - kPad; }
  void clear() { h_.resize(kPad); }
  // Room for n entries without moving the buffer (grows geometrically).
  void reserve(size_t n) {
    if (n + kPad > h_.capacity()) h_.reserve(std::max(n + kPad, 2 * h_.capacity()));
  }

  // `pos(id)` returns the slot where id's index is stored: a reference, or
  // any object assignable from uint32_t (e.g. one that stores atomically).
  template <class Pos>
  void Push(double key, uint32_t id, Pos&& pos, uint32_t tag = 0) {
    h_.push_back({key, id, tag});
    const uint32_t i = static_cast<uint32_t>(size() - 1);
    pos(id) = i;
    SiftUp(i, pos);
  }

  template <class Pos>
  void Erase(uint32_t i, Pos&& pos) {
    pos(E(i).id) = kAbsent;
    const uint32_t last = static_cast<uint32_t>(size() - 1);
    if (i != last) {
      E(i) = E(last);
      pos(E(i).id) = i;
      h_.pop_back();
      Restore(i, pos);
    } else {
      h_.pop_back();
    }
  }

  template <class Pos>
  void Update(uint32_t i, double key, Pos&& pos) {
    E(i).key = key;
    Restore(i, pos);
  }

  // Calls f(entry) on entries in ascending order until f returns false.
  // Costs O(k log k) for the k entries visited, whatever the heap's size.
  // The frontier lives on the stack while it holds at most kInline entries
  // (a visit of k entries has a frontier of at most 3k + 1).
  template <class F>
  void VisitInOrder(F&& f) const {
    if (empty()) return;
    if (!f(at(0))) return;
    constexpr size_t kInline = 64;
    uint32_t inl[kInline];
    std::vector<uint32_t> big;
    uint32_t* fr = inl;
    size_t n = 0, cap = kInline;
    auto cmp = [this](uint32_t a, uint32_t b) { return at(b) < at(a); };
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
    auto push_children = [&](uint32_t i) {
      const size_t c = FirstChild(i), end = std::min(c + kArity, size());
      for (size_t k = c; k < end; ++k) push(static_cast<uint32_t>(k));
    };
    push_children(0);
    while (n > 0) {
      std::pop_heap(fr, fr + n, cmp);
      const uint32_t i = fr[--n];
      if (!f(at(i))) return;
      push_children(i);
    }
  }

  // Calls f(entry) on every entry with key <= limit, in no particular order:
  // O(k) for the k entries visited (a subtree whose root is above the limit
  // is skipped whole).
  template <class F>
  void VisitAtMost(double limit, F&& f) const {
    // Pending entries: at most kArity - 1 per level below the one being
    // visited, plus one (2^32 entries are 16 levels).
    // Only entries within the limit are pushed; a node's first such child
    // is visited next without a push.
    uint32_t stack[kArity * 17];
    size_t n = 0;
    const size_t sz = size();
    if (sz == 0 || at(0).key > limit) return;
    stack[n++] = 0;
    while (n > 0) {
      uint32_t i = stack[--n];
      for (;;) {
        f(at(i));
        const size_t c = FirstChild(i), end = std::min(c + kArity, sz);
        uint32_t next = kAbsent;
        for (size_t k = c; k < end; ++k) {
          if (at(static_cast<uint32_t>(k)).key > limit) continue;
          if (next == kAbsent) {
            next = static_cast<uint32_t>(k);
          } else {
            stack[n++] = static_cast<uint32_t>(k);
          }
        }
        if (next == kAbsent) break;
        i = next;
      }
    }
  }

 private:
  // Entry i is stored at h_[i + kPad]: see "Layout".
  static constexpr size_t kPad = 3;
  HeapEntry& E(uint32_t i) { return h_[i + kPad]; }

  template <class Pos>
  void Restore(uint32_t i, Pos& pos) {
    if (i > 0 && E(i) < E(Parent(i))) {
      SiftUp(i, pos);
    } else {
      SiftDown(i, pos);
    }
  }
  template <class Pos>
  void SiftUp(uint32_t i, Pos& pos) {
    HeapEntry e = E(i);
    while (i > 0) {
      const uint32_t p = Parent(i);
      if (!(e < E(p))) break;
      E(i) = E(p);
      pos(E(i).id) = i;
      i = p;
    }
    E(i) = e;
    pos(e.id) = i;
  }
  template <class Pos>
  void SiftDown(uint32_t i, Pos& pos) {
    HeapEntry e = E(i);
    const size_t n = size();
    for (;;) {
      const size_t first = FirstChild(i);
      if (first >= n) break;
      const size_t end = std::min(first + kArity, n);
      size_t c = first;
      for (size_t k = first + 1; k < end; ++k)
        if (E(static_cast<uint32_t>(k)) < E(static_cast<uint32_t>(c))) c = k;
      // The chosen child's children, one line: asked for now, so that it
      // is on its way while this level's move is written (leaf heaps of
      // 10^3 jobs are not in cache at 10^6 jobs).
      if (FirstChild(static_cast<uint32_t>(c)) < n) __builtin_prefetch(slot(FirstChild(static_cast<uint32_t>(c))), 1);
      if (!(E(static_cast<uint32_t>(c)) < e)) break;
      E(i) = E(static_cast<uint32_t>(c));
      pos(E(i).id) = i;
      i = static_cast<uint32_t>(c);
    }
    E(i) = e;
    pos(e.id) = i;
  }

  std::vector<HeapEntry, LineAlignedAlloc<HeapEntry>> h_ = std::vector<HeapEntry, LineAlignedAlloc<HeapEntry>>(kPad);
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_KEY_HEAP_H_
