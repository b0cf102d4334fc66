// HugeAlloc: the allocator of the engine's per-job arrays (job records,
// task shapes, per-view job entries). An event touches one random entry of
// each, so at 10^5-10^6 jobs every event would otherwise miss the TLB on
// each array (4 KiB pages; the arrays span tens to hundreds of MiB). Blocks
// of at least kHugeMin bytes are aligned to 2 MiB and marked
// MADV_HUGEPAGE, so the kernel backs them with transparent huge pages where
// it allows (THP "madvise" or "always"); elsewhere the advice is ignored and
// nothing changes. Smaller blocks come from operator new with T's alignment
// (kSmallAlign). The memory comes from the ordinary allocator either way
// (counted by its statistics).
#ifndef HDRF_ENGINE_HUGE_ALLOC_H_
#define HDRF_ENGINE_HUGE_ALLOC_H_

#include <cstddef>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace hdrf::engine {

inline constexpr size_t kHugePage = size_t{2} << 20;
inline constexpr size_t kHugeMin = size_t{4} << 20;

template <class T>
struct HugeAlloc {
  using value_type = T;
  HugeAlloc() = default;
  template <class U>
  HugeAlloc(const HugeAlloc<U>&) {}

  // Small blocks keep T's alignment (a 64-byte-aligned job record must not
  // straddle lines however small the table).
  static constexpr std::align_val_t kSmallAlign{alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__
                                                    ? alignof(T)
                                                    : __STDCPP_DEFAULT_NEW_ALIGNMENT__};

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugeMin) return static_cast<T*>(::operator new(bytes, kSmallAlign));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = ::operator new(rounded, std::align_val_t{kHugePage});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugeMin) {
      ::operator delete(p, kSmallAlign);
    } else {
      ::operator delete(p, std::align_val_t{kHugePage});
    }
  }
  template <class U>
  bool operator==(const HugeAlloc<U>&) const { return true; }
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_HUGE_ALLOC_H_
