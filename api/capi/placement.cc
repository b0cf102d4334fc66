// The C interface's host placement (hdrf/c.h "host placement"): a step in
// fair order that passes over the jobs a C placement test refuses
// (Engine::StepWhere/FillWhere, docs/simulate_nodes.md), and the skip sets
// that carry refusals across calls.
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "api/capi/capi_internal.h"

using hdrf::Status;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

struct hdrf_skips {
  hdrf::PlacementSkips set;
};

hdrf_skips_t* hdrf_skips_create(void) { return new (std::nothrow) hdrf_skips; }
void hdrf_skips_destroy(hdrf_skips_t* skips) { delete skips; }
void hdrf_skips_clear(hdrf_skips_t* skips) {
  if (skips) skips->set.Clear();
}
size_t hdrf_skips_size(const hdrf_skips_t* skips) { return skips ? skips->set.size() : 0; }

namespace {

// The C test as an hdrf::PlacementFn; resource names are read once.
class CPlacement {
 public:
  CPlacement(const hdrf::Engine& engine, hdrf_placement_fn fn, void* user)
      : names_(engine.ResourceNames()) {
    for (const auto& n : names_) ptrs_.push_back(n.c_str());
    fn_ = [this, fn, user](const hdrf::PlacementQuery& q) {
      const std::string name(q.name), queue(q.queue);
      return fn(user, name.c_str(), queue.c_str(), ptrs_.data(), q.task.data(), q.task.size()) != 0;
    };
  }
  CPlacement(const CPlacement&) = delete;
  CPlacement& operator=(const CPlacement&) = delete;
  const hdrf::PlacementFn& fn() const { return fn_; }

 private:
  std::vector<std::string> names_;
  std::vector<const char*> ptrs_;
  hdrf::PlacementFn fn_;
};

}  // namespace

hdrf_code hdrf_step_where(hdrf_engine_t* engine, hdrf_placement_fn can_place, void* user,
                          hdrf_skips_t* skips, int* stepped, char** job_name, char** errptr) {
  SetNull(job_name);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!can_place) return NullArg("can_place");
    const CPlacement test(u.engine(), can_place, user);
    HDRF_ASSIGN_OR_RETURN(std::optional<hdrf::JobRef> ref,
                          u.engine().StepWhere(test.fn(), skips ? &skips->set : nullptr));
    if (stepped) *stepped = ref.has_value() ? 1 : 0;
    if (ref && job_name) {
      auto info = u.engine().GetJob(*ref);
      char* name = CopyString(info.ok() ? info->name : std::string());
      if (!name) return Status::Internal("out of memory (the step was made)");
      *job_name = name;
    }
    return Status::Ok();
  });
}

hdrf_code hdrf_fill_where(hdrf_engine_t* engine, hdrf_placement_fn can_place, void* user,
                          hdrf_skips_t* skips, int64_t* steps, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!can_place) return NullArg("can_place");
    const CPlacement test(u.engine(), can_place, user);
    HDRF_ASSIGN_OR_RETURN(int64_t n, u.engine().FillWhere(test.fn(), skips ? &skips->set : nullptr));
    if (steps) *steps = n;
    return Status::Ok();
  });
}
