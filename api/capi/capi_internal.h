// Internal: what the files of the C interface (api/capi/*.cc) share.
//
//   handles.cc  the engine handle table (EngineUse, MakeHandle, Close/Destroy)
//   convert.cc  strings, errors and C structs to and from the C++ API
//   hdrf_c.cc   utilities, options, engines, events and scheduling by name
//   job_ref.cc  the fast path: job refs, hdrf_apply_op and hdrf_apply
//   follower.cc followers and takeover (open, catch-up, lag, promote)
//   placement.cc host placement: hdrf_step_where, hdrf_fill_where, skip sets
//   plan.cc     plans: hdrf_plan, its accessors, hdrf_apply_plan
//   reconcile.cc hdrf_reconcile over Engine::Reconcile
//   views.cc    views, metrics, persistence, version
//
// No exception leaves the interface: every entry point runs its body
// through Guard(), which turns a C++ exception (bad_alloc) into
// HDRF_INTERNAL.
#ifndef HDRF_API_CAPI_CAPI_INTERNAL_H_
#define HDRF_API_CAPI_CAPI_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hdrf/c.h"
#include "hdrf/engine.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

struct hdrf_options {
  hdrf::EngineOptions options;
};

namespace hdrf::capi {

// ---- errors and strings (convert.cc) ----

// A malloc'd NUL-terminated copy; nullptr when out of memory.
char* CopyString(std::string_view s);
// Stores a failure's message in *errptr (freeing what was there) and
// returns its code; HDRF_OK for success (errptr untouched).
hdrf_code Report(const Status& s, char** errptr);
Status InternalFromException(const char* what);
Status NullArg(const char* what);
std::string_view Trim(std::string_view s);

// Runs `body` (returning Status) and reports its result; exceptions become
// HDRF_INTERNAL.
template <typename F>
hdrf_code Guard(char** errptr, F&& body) {
  try {
    Status s = body();
    if (s.ok()) return HDRF_OK;
    return Report(s, errptr);
  } catch (const std::exception& e) {
    return Report(InternalFromException(e.what()), errptr);
  } catch (...) {
    return Report(InternalFromException(nullptr), errptr);
  }
}

template <typename T>
void SetNull(T** p) {
  if (p) *p = nullptr;
}

// "cpu=1,memory=1Gi" -> amounts. `what` names the list in errors;
// `known_names` demands names IsKnownResourceName accepts (cluster lists).
StatusOr<ResourceAmounts> ParseResourceList(const char* text, const std::string& what,
                                            bool known_names);
// A versioned struct's struct_size (hdrf/c.h "Versioned structs"): this
// version knows `known` bytes, the first version of the struct only.
Status CheckStructSize(size_t given, size_t known, const char* what);
StatusOr<QueueSpec> ToQueueSpec(const hdrf_queue_spec_t* c);
StatusOr<JobSpec> ToJobSpec(const hdrf_job_spec_t* c);
void ToJobInfo(const JobInfo& j, hdrf_job_info_t* info);
inline EngineOptions OptionsOf(const hdrf_options_t* o) { return o ? o->options : EngineOptions(); }

// ---- engine handles (handles.cc) ----
//
// An hdrf_engine_t* is never a pointer to memory: it is an address inside
// a region of address space the interface reserves (PROT_NONE, never
// readable) that encodes a slot of a fixed table (kMaxEngines) and the
// slot's generation. A slot is reused by later engines with a higher
// generation, so a destroyed handle is recognised (its generation is old)
// and a pointer that is no handle is recognised (outside the region, or a
// slot or generation never handed out) without reading through it. Each
// slot holds a BigReaderLock: a call holds it shared (one per-thread
// counter, no shared cache line among callers), close and destroy hold it
// exclusively and so wait for the calls in flight; a waiting writer lets
// no new call in. The slot table's free list has a mutex, taken by create
// and destroy only.
inline constexpr uint32_t kMaxEngines = 4096;

// A call on an engine handle: validates the handle and holds the slot
// shared for the call's duration.
class EngineUse {
 public:
  // `event`: the call changes state (refused once the engine is closed).
  EngineUse(hdrf_engine_t* h, bool event);
  ~EngineUse();
  EngineUse(const EngineUse&) = delete;
  EngineUse& operator=(const EngineUse&) = delete;

  const Status& status() const { return status_; }
  Engine& engine() const { return *engine_; }
  // Tag of this engine in the job refs it hands out (never 0; unique to
  // the slot and generation).
  uint32_t tag() const { return tag_; }

 private:
  Status status_;
  void* slot_ = nullptr;  // locked shared when non-null
  Engine* engine_ = nullptr;
  uint32_t tag_ = 0;
};

// Registers `engine` in a free slot and writes its handle.
Status MakeHandle(std::unique_ptr<Engine> engine, hdrf_engine_t** out);
// hdrf_engine_close and hdrf_engine_destroy (destroy: NULL is Ok).
Status CloseHandle(hdrf_engine_t* h);
Status DestroyHandle(hdrf_engine_t* h);
// "0x..." for messages.
std::string PtrText(const void* p);

// ---- job refs (job_ref.cc) ----
hdrf_job_ref_t EncodeJobRef(uint32_t tag, JobRef ref);
// The JobRef of `r`, refused when it is empty or belongs to another engine.
StatusOr<JobRef> DecodeJobRef(const EngineUse& u, hdrf_job_ref_t r);

}  // namespace hdrf::capi

#endif  // HDRF_API_CAPI_CAPI_INTERNAL_H_
