// The C interface (hdrf/c.h) over hdrf::Engine (hdrf/engine.h): utilities,
// options, specs, engines, events and scheduling by name. The other entry
// points are in job_ref.cc (the fast path), views.cc, follower.cc,
// placement.cc, plan.cc and reconcile.cc (capi_internal.h lists what each
// holds); handles.cc says how handles work.
#include "hdrf/c.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/capi/capi_internal.h"
#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/quantity.h"
#include "hdrf/sim.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

using hdrf::Status;
using hdrf::StatusOr;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

namespace {

Status CreateFromScenario(const StatusOr<hdrf::Scenario>& sc, int run_steps,
                          const hdrf_options_t* options, hdrf_engine_t** out) {
  if (!sc.ok()) return sc.status();
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<hdrf::Engine> eng,
                        hdrf::RunScenarioEngine(*sc, OptionsOf(options), run_steps != 0));
  return MakeHandle(std::move(eng), out);
}

Status CreateFromConfig(const StatusOr<hdrf::QueueConfig>& cfg, const char* cluster,
                        const std::string& source, const hdrf_options_t* options,
                        hdrf_engine_t** out) {
  if (!cfg.ok()) return cfg.status();
  hdrf::ResourceAmounts c = cfg->cluster;
  if (cluster && !Trim(cluster).empty()) {
    HDRF_ASSIGN_OR_RETURN(c, ParseResourceList(cluster, "cluster", true));
  }
  if (c.empty())
    return Status::InvalidArgument(source +
                                   ": no cluster: name one in the configuration or pass it as "
                                   "the cluster argument");
  auto eng = hdrf::Engine::Create(c, cfg->queues, OptionsOf(options));
  if (!eng.ok()) return eng.status().WithContext(source);
  return MakeHandle(std::move(eng).value(), out);
}

// Resolves a job name to a JobRef and applies `event(ref)`; a job removed
// between the two is reported by name.
template <typename F>
Status OnJob(const EngineUse& u, const char* name, F&& event) {
  if (!name) return NullArg("job name");
  auto ref = u.engine().FindJob(name);
  if (!ref.ok()) return ref.status();
  Status s = event(*ref);
  if (s.code() == hdrf::StatusCode::kNotFound && !u.engine().FindJob(name).ok())
    return Status::NotFound("job " + std::string(name) + ": unknown job");
  return s;
}

// One options setter: NULL options refused, then `set` on the engine
// options (each `set` checks its arguments before it changes anything).
template <typename Set>
hdrf_code SetOption(hdrf_options_t* options, char** errptr, Set&& set) {
  return Guard(errptr, [&]() -> Status {
    if (!options) return NullArg("options");
    return set(options->options);
  });
}

}  // namespace

extern "C" {

const char* hdrf_code_name(hdrf_code code) {
  if (code < HDRF_OK || code > HDRF_ABORTED) return "Unknown";
  return hdrf::StatusCodeName(static_cast<hdrf::StatusCode>(code));
}

const char* hdrf_job_state_name(int state) {
  if (state < HDRF_JOB_PENDING || state > HDRF_JOB_UNKNOWN) return nullptr;
  return hdrf::JobStateName(static_cast<hdrf::JobState>(state));
}

const char* hdrf_queue_state_name(int state) {
  if (state < HDRF_QUEUE_OPEN || state > HDRF_QUEUE_CLOSED) return nullptr;
  return hdrf::QueueStateName(static_cast<hdrf::QueueState>(state));
}

void hdrf_free(void* ptr) { std::free(ptr); }

hdrf_code hdrf_parse_quantity(const char* resource, const char* text, int64_t* amount,
                              char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!resource) return NullArg("resource");
    if (!text) return NullArg("quantity text");
    if (!amount) return NullArg("amount");
    HDRF_ASSIGN_OR_RETURN(*amount, hdrf::ParseQuantity(resource, text));
    return Status::Ok();
  });
}

// ---- options ----

hdrf_options_t* hdrf_options_create(void) {
  try {
    return new hdrf_options();
  } catch (...) {
    return nullptr;
  }
}

void hdrf_options_destroy(hdrf_options_t* options) { delete options; }

hdrf_code hdrf_options_set_overcommit_factor(hdrf_options_t* options, double factor,
                                             char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    if (!std::isfinite(factor) || factor < 0)
      return Status::InvalidArgument("overcommit factor must be a finite number >= 0 (0 = off)");
    if (factor == 0) {
      o.overcommit_factor.reset();
    } else {
      o.overcommit_factor = factor;
    }
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_db_path(hdrf_options_t* options, const char* path, char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    o.db_path = path ? path : "";
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_durability(hdrf_options_t* options, int durability, char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    switch (durability) {
      case HDRF_DURABILITY_SYNC: o.durability = hdrf::Durability::kSync; break;
      case HDRF_DURABILITY_ASYNC: o.durability = hdrf::Durability::kAsync; break;
      case HDRF_DURABILITY_NONE: o.durability = hdrf::Durability::kNone; break;
      default:
        return Status::InvalidArgument("durability " + std::to_string(durability) +
                                       " is not an HDRF_DURABILITY_* value");
    }
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_checkpoint_every(hdrf_options_t* options, uint64_t events,
                                            char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    o.checkpoint_every = events;
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_checkpoint_events_per_job(hdrf_options_t* options, uint32_t events,
                                                     char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    o.checkpoint_events_per_job = events;
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_log_retention(hdrf_options_t* options, uint64_t events, int64_t seconds,
                                         char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    if (seconds < 0)
      return Status::InvalidArgument("log retention: seconds " + std::to_string(seconds) +
                                     " is negative (0 turns the rule off)");
    o.log_retention_events = events;
    o.log_retention_seconds = seconds;
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_latency_sample_every(hdrf_options_t* options, uint32_t every,
                                                char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    if ((every & (every - 1)) != 0)
      return Status::InvalidArgument("latency sample interval must be 0 or a power of two, not " +
                                     std::to_string(every));
    o.latency_sample_every = every;
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_event_clock(hdrf_options_t* options, hdrf_clock_fn fn, void* user,
                                        char** errptr) {
  return SetOption(options, errptr, [&](hdrf::EngineOptions& o) -> Status {
    o.event_clock = nullptr;
    if (fn) o.event_clock = [fn, user] { return fn(user); };
    return Status::Ok();
  });
}

// ---- specs ----

void hdrf_queue_spec_init(hdrf_queue_spec_t* spec) {
  if (!spec) return;
  spec->struct_size = sizeof(hdrf_queue_spec_t);
  spec->path = nullptr;
  spec->weight = 1;
  spec->capability = nullptr;
  spec->guarantee = nullptr;
  spec->reclaimable = 1;
  spec->state = HDRF_QUEUE_OPEN;
  spec->min_user_limit_percent = 100;
  spec->user_limit_factor = 0;
}

void hdrf_job_spec_init(hdrf_job_spec_t* spec) {
  if (!spec) return;
  spec->struct_size = sizeof(hdrf_job_spec_t);
  spec->name = nullptr;
  spec->queue = nullptr;
  spec->user = nullptr;
  spec->tasks = 1;
  spec->task = nullptr;
  spec->weight = 1;
  spec->min_available = 1;
}

void hdrf_job_info_init(hdrf_job_info_t* info) {
  if (!info) return;
  std::memset(info, 0, sizeof *info);
  info->struct_size = sizeof(hdrf_job_info_t);
}

void hdrf_queue_info_init(hdrf_queue_info_t* info) {
  if (!info) return;
  std::memset(info, 0, sizeof *info);
  info->struct_size = sizeof(hdrf_queue_info_t);
}

// ---- engines ----

hdrf_code hdrf_engine_create(const char* cluster, const hdrf_queue_spec_t* queues, size_t nqueues,
                             const hdrf_options_t* options, hdrf_engine_t** engine,
                             char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    if (!cluster) return NullArg("cluster");
    if (!queues && nqueues > 0) return NullArg("queues");
    HDRF_ASSIGN_OR_RETURN(hdrf::ResourceAmounts c, ParseResourceList(cluster, "cluster", true));
    std::vector<hdrf::QueueSpec> qs;
    qs.reserve(nqueues);
    for (size_t i = 0; i < nqueues; ++i) {
      auto q = ToQueueSpec(&queues[i]);
      if (!q.ok()) return q.status().WithContext("queues[" + std::to_string(i) + "]");
      qs.push_back(std::move(q).value());
    }
    auto eng = hdrf::Engine::Create(c, qs, OptionsOf(options));
    if (!eng.ok()) return eng.status();
    return MakeHandle(std::move(eng).value(), engine);
  });
}

hdrf_code hdrf_engine_create_from_config(const char* yaml, const char* source_name,
                                         const char* cluster, const hdrf_options_t* options,
                                         hdrf_engine_t** engine, char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    if (!yaml) return NullArg("yaml");
    const std::string source = source_name ? source_name : "config";
    return CreateFromConfig(hdrf::ParseQueueConfig(yaml, source), cluster, source, options,
                            engine);
  });
}

hdrf_code hdrf_engine_create_from_config_file(const char* path, const char* cluster,
                                              const hdrf_options_t* options,
                                              hdrf_engine_t** engine, char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    if (!path) return NullArg("path");
    return CreateFromConfig(hdrf::LoadQueueConfigFile(path), cluster, path, options, engine);
  });
}

hdrf_code hdrf_engine_create_from_scenario(const char* yaml, const char* source_name,
                                           int run_steps, const hdrf_options_t* options,
                                           hdrf_engine_t** engine, char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    if (!yaml) return NullArg("yaml");
    return CreateFromScenario(hdrf::ParseScenario(yaml, source_name ? source_name : "scenario"),
                              run_steps, options, engine);
  });
}

hdrf_code hdrf_engine_create_from_scenario_file(const char* path, int run_steps,
                                                const hdrf_options_t* options,
                                                hdrf_engine_t** engine, char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    if (!path) return NullArg("path");
    return CreateFromScenario(hdrf::LoadScenarioFile(path), run_steps, options, engine);
  });
}

hdrf_code hdrf_engine_open(const char* db_path, const hdrf_options_t* options,
                           hdrf_engine_t** engine, char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    if (!db_path) return NullArg("db_path");
    if (!*db_path) return Status::InvalidArgument("db_path is empty");
    hdrf::EngineOptions o = OptionsOf(options);
    o.db_path = db_path;
    auto eng = hdrf::Engine::Open(o);
    if (!eng.ok()) return eng.status();
    return MakeHandle(std::move(eng).value(), engine);
  });
}

hdrf_code hdrf_engine_close(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&] { return CloseHandle(engine); });
}

hdrf_code hdrf_engine_destroy(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&] { return DestroyHandle(engine); });
}

// ---- events ----

hdrf_code hdrf_queue_create(hdrf_engine_t* engine, const hdrf_queue_spec_t* spec, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(hdrf::QueueSpec q, ToQueueSpec(spec));
    return u.engine().CreateQueue(q);
  });
}

hdrf_code hdrf_queue_update(hdrf_engine_t* engine, const hdrf_queue_spec_t* spec, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(hdrf::QueueSpec q, ToQueueSpec(spec));
    return u.engine().UpdateQueue(q);
  });
}

hdrf_code hdrf_queue_set_state(hdrf_engine_t* engine, const char* path, int state, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!path) return NullArg("queue path");
    if (state < HDRF_QUEUE_OPEN || state > HDRF_QUEUE_CLOSED)
      return Status::InvalidArgument("queue " + std::string(path) + ": state " +
                                     std::to_string(state) + " is not an HDRF_QUEUE_* value");
    return u.engine().SetQueueState(path, static_cast<hdrf::QueueState>(state));
  });
}

hdrf_code hdrf_queue_delete(hdrf_engine_t* engine, const char* path, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!path) return NullArg("queue path");
    return u.engine().DeleteQueue(path);
  });
}

hdrf_code hdrf_set_capacity(hdrf_engine_t* engine, const char* cluster, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!cluster) return NullArg("cluster");
    HDRF_ASSIGN_OR_RETURN(hdrf::ResourceAmounts c, ParseResourceList(cluster, "cluster", true));
    return u.engine().SetCapacity(c);
  });
}

hdrf_code hdrf_job_submit(hdrf_engine_t* engine, const char* name, const char* queue,
                          const char* user, int64_t tasks, const char* task, hdrf_job_ref_t* job,
                          char** errptr) {
  hdrf_job_spec_t spec;
  hdrf_job_spec_init(&spec);
  spec.name = name;
  spec.queue = queue;
  spec.user = user;
  spec.tasks = tasks;
  spec.task = task;
  return hdrf_job_submit_spec(engine, &spec, job, errptr);
}

hdrf_code hdrf_job_submit_spec(hdrf_engine_t* engine, const hdrf_job_spec_t* spec,
                               hdrf_job_ref_t* job, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(hdrf::JobSpec j, ToJobSpec(spec));
    HDRF_ASSIGN_OR_RETURN(hdrf::JobRef ref, u.engine().Submit(j));
    if (job) *job = EncodeJobRef(u.tag(), ref);
    return Status::Ok();
  });
}

hdrf_code hdrf_job_remove(hdrf_engine_t* engine, const char* name, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Remove(r); });
  });
}

hdrf_code hdrf_job_allocate(hdrf_engine_t* engine, const char* name, int64_t n, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Allocate(r, n); });
  });
}

hdrf_code hdrf_job_release(hdrf_engine_t* engine, const char* name, int64_t n, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Release(r, n); });
  });
}

hdrf_code hdrf_job_finish(hdrf_engine_t* engine, const char* name, int64_t n, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Finish(r, n); });
  });
}

// ---- scheduling ----

hdrf_code hdrf_step(hdrf_engine_t* engine, int* stepped, char** job_name, char** errptr) {
  SetNull(job_name);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(std::optional<hdrf::JobRef> ref, u.engine().Step());
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

hdrf_code hdrf_step_ref(hdrf_engine_t* engine, int* stepped, hdrf_job_ref_t* job,
                        char** errptr) {
  if (job) *job = hdrf_job_ref_t{0, 0};
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(std::optional<hdrf::JobRef> ref, u.engine().Step());
    if (stepped) *stepped = ref.has_value() ? 1 : 0;
    if (ref && job) *job = EncodeJobRef(u.tag(), *ref);
    return Status::Ok();
  });
}

hdrf_code hdrf_fill(hdrf_engine_t* engine, int64_t* steps, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    // Each step is an event of its own; a fill is not timed as one.
    HDRF_ASSIGN_OR_RETURN(int64_t n, u.engine().Fill());
    if (steps) *steps = n;
    return Status::Ok();
  });
}

hdrf_code hdrf_pick_next(hdrf_engine_t* engine, char** job_name, char** errptr) {
  SetNull(job_name);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!job_name) return NullArg("job_name");
    std::optional<hdrf::JobInfo> next = u.engine().PickNext();
    if (next) {
      *job_name = CopyString(next->name);
      if (!*job_name) return Status::Internal("out of memory");
    }
    return Status::Ok();
  });
}

}  // extern "C"
