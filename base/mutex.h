// Locks the compiler checks (docs/architecture.md "Locks"): std::mutex and
// std::shared_mutex wrapped as Clang thread-safety capabilities, and scoped
// holders for them and for any other annotated lock (base/shard_lock.h).
// libstdc++'s own mutexes and guards carry no annotations, so a field
// GUARDED_BY a std::mutex could not be checked.
//
//   Mutex mu;  int n GUARDED_BY(mu);
//   { MutexLock l(mu); ++n; }                  // exclusive, for the scope
//   { MutexLock l(mu); while (!ready) l.Wait(cv); }  // condition variables
//
// Condition variables stay std::condition_variable (no
// condition_variable_any indirection): MutexLock holds the native
// std::unique_lock and waits on it. For the analysis the mutex is held
// across a Wait, as it is whenever the caller's code runs. Write a wait's
// predicate as a loop around Wait (`while (!cond) l.Wait(cv);`), not as a
// lambda: the analysis checks a lambda's body on its own, without the
// caller's locks.
#ifndef HDRF_BASE_MUTEX_H_
#define HDRF_BASE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "base/thread_annotations.h"

namespace hdrf::base {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis that the calling thread holds this mutex, where it
  // cannot see so itself (a lambda called under the caller's lock). Checks
  // nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex exclusively for its scope; Unlock()/Lock() let go of it and
// take it again inside the scope, and Wait* wait on a condition variable.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

  void Wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Rep, typename Period>
  std::cv_status WaitFor(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& d) {
    return cv.wait_for(lock_, d);
  }
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& t) {
    return cv.wait_until(lock_, t);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds any annotated lock with lock()/unlock() (Mutex, SharedMutex,
// base::SpinLock, base::BigReaderLock) exclusively for its scope.
template <typename Lock>
class SCOPED_CAPABILITY LockGuard {
 public:
  explicit LockGuard(Lock& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~LockGuard() RELEASE() { mu_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Lock& mu_;
};

// Holds any annotated lock with lock_shared()/unlock_shared() shared for its
// scope.
template <typename Lock>
class SCOPED_CAPABILITY SharedLockGuard {
 public:
  explicit SharedLockGuard(Lock& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~SharedLockGuard() RELEASE() { mu_.unlock_shared(); }
  SharedLockGuard(const SharedLockGuard&) = delete;
  SharedLockGuard& operator=(const SharedLockGuard&) = delete;

 private:
  Lock& mu_;
};

}  // namespace hdrf::base

#endif  // HDRF_BASE_MUTEX_H_
