// JobIndex: a compact open-addressing hash index of job ids.
//
// The index stores no keys. Each slot holds a job id and 32 bits of the
// key's hash (8 bytes a slot); the caller hashes the key and answers "does
// job `id` have this key?" through a callback that looks at its own job
// records. A lookup compares hash tags first, so it reads a job record only
// for a probable match (about one record per successful lookup, almost none
// for a missing key). Growth re-places slots by their stored tags without
// touching job records.
//
// Linear probing, power-of-two table, load factor at most 7/8 after an
// insert (grows ×2), backward-shift deletion (no tombstones, so lookups never
// slow down with churn). The slot position comes from the tag, so tables up
// to 2^32 slots are supported.
//
// Memory: 8 bytes / load; at 10^6 jobs 16 MiB (2^21 slots), i.e. 16.8 bytes
// per job, against ~50-70 bytes per entry of a std::unordered_map (a node
// with a key copy, plus the bucket array).
//
// Thread safety: none (like engine::Tree, which owns its indexes).
#ifndef HDRF_ENGINE_JOB_INDEX_H_
#define HDRF_ENGINE_JOB_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace hdrf::engine {

class JobIndex {
 public:
  static constexpr uint32_t kEmpty = UINT32_MAX;

  // 64-bit hashes of the two kinds of keys the tree indexes.
  static uint64_t HashSeq(uint64_t seq) {
    // splitmix64 finalizer: every input bit affects the high 32 bits.
    uint64_t z = seq + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  static uint64_t HashName(std::string_view s) {
    // FNV-1a over 8-byte words, then the splitmix64 finalizer.
    uint64_t h = 0xcbf29ce484222325ull ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w = 0;
      for (int b = 0; b < 8; ++b) w |= uint64_t{static_cast<unsigned char>(s[i + b])} << (8 * b);
      h = (h ^ w) * 0x100000001b3ull;
    }
    uint64_t w = 0;
    for (int b = 0; i < s.size(); ++i, ++b) w |= uint64_t{static_cast<unsigned char>(s[i])} << (8 * b);
    h = (h ^ w) * 0x100000001b3ull;
    return HashSeq(h);
  }

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

  // The id whose key has `hash` and for which `eq(id)` is true, or kEmpty.
  template <class Eq>
  uint32_t Find(uint64_t hash, Eq&& eq) const {
    if (size_ == 0) return kEmpty;
    const uint32_t tag = Tag(hash);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kEmpty) return kEmpty;
      if (s.tag == tag && eq(s.id)) return s.id;
    }
  }

  // Adds `id` under `hash`. The caller makes sure no id with an equal key
  // is present (Find first).
  void Insert(uint64_t hash, uint32_t id) {
    if ((size_ + 1) * 8 > slots_.size() * 7) Grow(size_ + 1);
    Place(Slot{id, Tag(hash)});
    ++size_;
  }

  // Removes `id`, which was inserted under `hash`; false if it is absent.
  bool Erase(uint64_t hash, uint32_t id) {
    if (size_ == 0) return false;
    size_t i = Tag(hash) & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].id == kEmpty) return false;
      if (slots_[i].id == id) break;
    }
    // Backward shift: move later entries of the cluster into the hole when
    // their home position allows it.
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; slots_[j].id != kEmpty; j = (j + 1) & mask_) {
      const size_t home = slots_[j].tag & mask_;
      // Movable when home is not within (hole, j] cyclically.
      const bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!in_range) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

  // Room for `n` entries without growing.
  void Reserve(size_t n) {
    if (n * 8 > slots_.size() * 7) Grow(n);
  }

  void Clear() {
    slots_.clear();
    slots_.shrink_to_fit();
    mask_ = 0;
    size_ = 0;
  }

 private:
  struct Slot {
    uint32_t id = kEmpty;
    uint32_t tag = 0;
  };
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }

  void Place(Slot s) {
    size_t i = s.tag & mask_;
    while (slots_[i].id != kEmpty) i = (i + 1) & mask_;
    slots_[i] = s;
  }

  void Grow(size_t n) {
    size_t cap = slots_.empty() ? 16 : slots_.size();
    while (n * 8 > cap * 7) cap *= 2;
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old)
      if (s.id != kEmpty) Place(s);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_JOB_INDEX_H_
