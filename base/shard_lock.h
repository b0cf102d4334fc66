// Locks for the sharded tree (engine/tree.h, "Thread safety";
// engine::ConcurrentTree, engine/concurrent_tree.h) and the C interface's
// handle slots (api/capi/handles.cc). Both are Clang thread-safety capabilities
// (base/thread_annotations.h): hold them with base::LockGuard (exclusive)
// and base::SharedLockGuard (shared) from base/mutex.h.
//
// BigReaderLock: a reader-writer lock whose shared side touches only a
// cache line of the calling thread's own slot, so that readers on different
// cores never bounce a line between them (a std::shared_mutex shares one
// counter among all readers). The exclusive side is slower: it raises a
// flag and waits until every slot has drained.
//
// Invariants and memory order:
//   * slot count = the readers inside (or entering) a shared section that
//     map to the slot; a thread always uses the same slot;
//   * a reader increments its slot, then reads writer_ (both seq_cst); a
//     writer sets writer_, then reads every slot (seq_cst): of two such
//     racing, at least one sees the other, so a reader never runs inside a
//     writer's section (Dekker). A reader that sees writer_ set backs out
//     and waits for it to clear.
//   * writer_mu_ orders writers among themselves.
// Waiting spins with std::this_thread::yield(): the sections are short and
// this machine may run more threads than cores.
//
// SpinLock: a one-byte spin lock, to share a line with the data it guards
// (one line moves between cores per critical section instead of two).
// SpinMutex: the same alone on its cache line (an array of locks must not
// share lines).
#ifndef HDRF_BASE_SHARD_LOCK_H_
#define HDRF_BASE_SHARD_LOCK_H_

#include <atomic>
#include <cassert>
#include <cstdint>
#include <mutex>
#include <thread>

#include "base/thread_annotations.h"

namespace hdrf::base {

inline constexpr size_t kCacheLine = 64;

class CAPABILITY("mutex") BigReaderLock {
 public:
  BigReaderLock() = default;
  BigReaderLock(const BigReaderLock&) = delete;
  BigReaderLock& operator=(const BigReaderLock&) = delete;

  void lock_shared() ACQUIRE_SHARED() {
    std::atomic<int32_t>& slot = slots_[MySlot()].readers;
    for (;;) {
      slot.fetch_add(1, std::memory_order_seq_cst);
      if (!writer_.load(std::memory_order_seq_cst)) return;
      slot.fetch_sub(1, std::memory_order_release);
      while (writer_.load(std::memory_order_acquire)) std::this_thread::yield();
    }
  }
  void unlock_shared() RELEASE_SHARED() { slots_[MySlot()].readers.fetch_sub(1, std::memory_order_release); }
  // Tells the thread-safety analysis that the calling thread holds this
  // lock shared or exclusively (where it cannot see so itself, e.g. in a
  // lambda); checked in debug builds only.
  void AssertReaderHeld() const ASSERT_SHARED_CAPABILITY(this) {
    assert(slots_[MySlot()].readers.load(std::memory_order_relaxed) > 0 ||
           writer_.load(std::memory_order_relaxed));
  }

  // NO_THREAD_SAFETY_ANALYSIS: writer_mu_ is part of this lock's own
  // implementation, taken in lock() and let go in unlock().
  void lock() ACQUIRE() NO_THREAD_SAFETY_ANALYSIS {
    writer_mu_.lock();
    writer_.store(true, std::memory_order_seq_cst);
    // Only the slots handed out so far can have readers (see MySlot).
    const uint32_t used = next_slot_.load(std::memory_order_seq_cst);
    const int n = used < kSlots ? static_cast<int>(used) : kSlots;
    for (int i = 0; i < n; ++i)
      while (slots_[i].readers.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }
  void unlock() RELEASE() NO_THREAD_SAFETY_ANALYSIS {
    writer_.store(false, std::memory_order_release);
    writer_mu_.unlock();
  }

 private:
  static constexpr int kSlots = 64;
  struct alignas(kCacheLine) Slot {
    std::atomic<int32_t> readers{0};
  };
  // Threads get slots round-robin at their first use. The count is seq_cst:
  // a reader takes its slot number before it increments the slot, so a
  // writer that reads the count after raising writer_ either covers the
  // slot or is seen by the reader (the Dekker argument above), and scans
  // only the slots handed out (64 lines per exclusive section otherwise).
  static int MySlot() {
    thread_local const int slot = static_cast<int>(next_slot_.fetch_add(1, std::memory_order_seq_cst) % kSlots);
    return slot;
  }
  static inline std::atomic<uint32_t> next_slot_{0};

  Slot slots_[kSlots];
  alignas(kCacheLine) std::atomic<bool> writer_{false};
  std::mutex writer_mu_;  // orders writers; held from lock() to unlock()
};

// A test-and-test-and-set spin lock, for the shard locks: their sections
// are a few hundred nanoseconds, far less than a futex sleep and wake-up
// (microseconds in a VM). After a short spin a waiter yields, so a
// preempted holder is not starved of its core.
class CAPABILITY("mutex") SpinLock {
 public:
  void lock() ACQUIRE() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) {
          std::this_thread::yield();
        } else {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
      }
    }
  }
  bool try_lock() TRY_ACQUIRE(true) { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() RELEASE() { locked_.store(false, std::memory_order_release); }
  // Tells the thread-safety analysis that this lock is held (where it
  // cannot see so itself, e.g. in a lambda); checked in debug builds only
  // (that it is held, not by whom).
  void AssertHeld() const ASSERT_CAPABILITY(this) { assert(locked_.load(std::memory_order_relaxed)); }

 private:
  std::atomic<bool> locked_{false};
};

class CAPABILITY("mutex") alignas(kCacheLine) SpinMutex : public SpinLock {};


}  // namespace hdrf::base

#endif  // HDRF_BASE_SHARD_LOCK_H_
