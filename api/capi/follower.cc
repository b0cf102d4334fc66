// The C interface (hdrf/c.h): followers and takeover, over
// Engine::OpenFollower, CatchUp, follower_lag and Promote (hdrf/engine.h).
#include <cstring>
#include <memory>
#include <string>

#include "api/capi/capi_internal.h"

using hdrf::Status;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

namespace {

hdrf::StatusOr<hdrf::FollowerOptions> ToFollowerOptions(const char* db_path,
                                                        const hdrf_follower_options_t* c) {
  if (!db_path) return NullArg("db_path");
  if (!*db_path) return Status::InvalidArgument("db_path is empty");
  hdrf::FollowerOptions o;
  o.db_path = db_path;
  if (!c) return o;
  HDRF_RETURN_IF_ERROR(
      CheckStructSize(c->struct_size, sizeof(hdrf_follower_options_t), "hdrf_follower_options"));
  if (c->secondary_path) o.secondary_path = c->secondary_path;
  o.catch_up_interval_ms = c->catch_up_interval_ms;
  return o;
}

}  // namespace

extern "C" {

void hdrf_follower_options_init(hdrf_follower_options_t* options) {
  if (!options) return;
  const hdrf::FollowerOptions defaults;
  options->struct_size = sizeof(hdrf_follower_options_t);
  options->secondary_path = nullptr;
  options->catch_up_interval_ms = defaults.catch_up_interval_ms;
}

void hdrf_follower_lag_init(hdrf_follower_lag_t* lag) {
  if (!lag) return;
  std::memset(lag, 0, sizeof *lag);
  lag->struct_size = sizeof(hdrf_follower_lag_t);
}

hdrf_code hdrf_engine_open_follower(const char* db_path, const hdrf_follower_options_t* options,
                                    hdrf_engine_t** engine, char** errptr) {
  SetNull(engine);
  return Guard(errptr, [&]() -> Status {
    if (!engine) return NullArg("engine (the output)");
    HDRF_ASSIGN_OR_RETURN(hdrf::FollowerOptions o, ToFollowerOptions(db_path, options));
    auto eng = hdrf::Engine::OpenFollower(o);
    if (!eng.ok()) return eng.status();
    return MakeHandle(std::move(eng).value(), engine);
  });
}

hdrf_code hdrf_follower_catch_up(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    return u.engine().CatchUp();
  });
}

hdrf_code hdrf_follower_lag(hdrf_engine_t* engine, hdrf_follower_lag_t* lag, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!lag) return NullArg("lag");
    HDRF_RETURN_IF_ERROR(
        CheckStructSize(lag->struct_size, sizeof(hdrf_follower_lag_t), "hdrf_follower_lag"));
    const bool follower = u.engine().is_follower();
    const hdrf::Engine::FollowerLag l = u.engine().follower_lag();
    lag->is_follower = follower ? 1 : 0;
    lag->events = l.events;
    lag->seconds = l.seconds;
    lag->applied_seq = l.applied_seq;
    lag->writer_seq = l.writer_seq;
    lag->reloads = l.reloads;
    return Status::Ok();
  });
}

hdrf_code hdrf_follower_promote(hdrf_engine_t* engine, int64_t wait_ms,
                                const hdrf_options_t* options, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (wait_ms < -1)
      return Status::InvalidArgument("wait_ms " + std::to_string(wait_ms) +
                                     ": give -1 (until the writer lets go), 0 or a number of "
                                     "milliseconds");
    const hdrf::EngineOptions eo = OptionsOf(options);
    hdrf::PromoteOptions po;
    po.wait_ms = wait_ms;
    po.durability = eo.durability;
    po.checkpoint_every = eo.checkpoint_every;
    po.checkpoint_events_per_job = eo.checkpoint_events_per_job;
    po.log_retention_events = eo.log_retention_events;
    po.log_retention_seconds = eo.log_retention_seconds;
    po.latency_sample_every = eo.latency_sample_every;
    po.event_clock = eo.event_clock;
    return u.engine().Promote(po);
  });
}

}  // extern "C"
