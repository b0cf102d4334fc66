// Clang thread-safety annotations (-Wthread-safety; docs/architecture.md
// "Locks"). Under Clang each macro is the attribute the analysis reads;
// under any other compiler it is empty. The names follow Clang's
// documentation (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html) and
// LevelDB's port/thread_annotations.h:
//   GUARDED_BY(mu)        a field read or written only with `mu` held
//                         (shared for a read, exclusive for a write);
//   PT_GUARDED_BY(mu)     the same for what a pointer field points to;
//   REQUIRES(mu...)       a function called with `mu` held exclusively;
//   REQUIRES_SHARED(mu)   ... held at least shared;
//   EXCLUDES(mu...)       ... called without `mu` (it takes it itself);
//   ACQUIRE/RELEASE(...)  a function that takes or lets go of a lock
//                         (no argument: `this`, for a lock's own methods);
//   ACQUIRE_SHARED/RELEASE_SHARED, TRY_ACQUIRE(result, ...);
//   CAPABILITY("name")    a class that is a lock;
//   SCOPED_CAPABILITY     a class whose object holds a lock for its scope;
//   ASSERT_CAPABILITY(mu) a function that returns only when `mu` is held;
//   RETURN_CAPABILITY(mu) a function that returns `mu` (e.g. an accessor);
//   NO_THREAD_SAFETY_ANALYSIS  a function the analysis does not check: use
//                         it narrowly, with a comment saying why.
#ifndef HDRF_BASE_THREAD_ANNOTATIONS_H_
#define HDRF_BASE_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define HDRF_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define HDRF_THREAD_ANNOTATION_(x)
#endif

#define CAPABILITY(x) HDRF_THREAD_ANNOTATION_(capability(x))
#define SCOPED_CAPABILITY HDRF_THREAD_ANNOTATION_(scoped_lockable)
#define GUARDED_BY(x) HDRF_THREAD_ANNOTATION_(guarded_by(x))
#define PT_GUARDED_BY(x) HDRF_THREAD_ANNOTATION_(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) HDRF_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) HDRF_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
#define REQUIRES(...) HDRF_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) HDRF_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) HDRF_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) HDRF_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) HDRF_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) HDRF_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) HDRF_THREAD_ANNOTATION_(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) HDRF_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) HDRF_THREAD_ANNOTATION_(try_acquire_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) HDRF_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) HDRF_THREAD_ANNOTATION_(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) HDRF_THREAD_ANNOTATION_(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) HDRF_THREAD_ANNOTATION_(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS HDRF_THREAD_ANNOTATION_(no_thread_safety_analysis)

#endif  // HDRF_BASE_THREAD_ANNOTATIONS_H_
