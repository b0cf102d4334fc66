// The C interface (hdrf/c.h): views, metrics and persistence.
#include <cstring>
#include <string>
#include <vector>

#include "api/capi/capi_internal.h"
#include "hdrf/metrics.h"

using hdrf::Status;
using hdrf::StatusOr;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

namespace {

StatusOr<hdrf::QueueInfo> FindQueue(const hdrf::Engine& eng, const char* path) {
  if (!path) return NullArg("queue path");
  for (hdrf::QueueInfo& q : eng.Queues())
    if (q.path == path) return std::move(q);
  return Status::NotFound("queue " + std::string(path) + ": does not exist");
}

Status GetJobInfo(hdrf_engine_t* engine, const char* name, hdrf_job_info_t* info) {
  EngineUse u(engine, false);
  HDRF_RETURN_IF_ERROR(u.status());
  if (!name) return NullArg("job name");
  if (!info) return NullArg("info");
  HDRF_ASSIGN_OR_RETURN(hdrf::JobInfo j, u.engine().GetJob(name));
  ToJobInfo(j, info);
  return Status::Ok();
}

}  // namespace

extern "C" {

// ---- views ----

hdrf_code hdrf_job_get(hdrf_engine_t* engine, const char* name, hdrf_job_info_t* info,
                       char** errptr) {
  return Guard(errptr, [&] { return GetJobInfo(engine, name, info); });
}

hdrf_code hdrf_job_allocated(hdrf_engine_t* engine, const char* name, int64_t* allocated,
                             char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!allocated) return NullArg("allocated");
    hdrf_job_info_t info;
    HDRF_RETURN_IF_ERROR(GetJobInfo(engine, name, &info));
    *allocated = info.allocated;
    return Status::Ok();
  });
}

hdrf_code hdrf_job_state(hdrf_engine_t* engine, const char* name, int* state, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!state) return NullArg("state");
    hdrf_job_info_t info;
    HDRF_RETURN_IF_ERROR(GetJobInfo(engine, name, &info));
    *state = info.state;
    return Status::Ok();
  });
}

hdrf_code hdrf_job_queue(hdrf_engine_t* engine, const char* name, char** queue_path,
                         char** errptr) {
  SetNull(queue_path);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!name) return NullArg("job name");
    if (!queue_path) return NullArg("queue_path");
    HDRF_ASSIGN_OR_RETURN(hdrf::JobInfo j, u.engine().GetJob(name));
    *queue_path = CopyString(j.queue);
    if (!*queue_path) return Status::Internal("out of memory");
    return Status::Ok();
  });
}

hdrf_code hdrf_queue_get(hdrf_engine_t* engine, const char* path, hdrf_queue_info_t* info,
                         char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!info) return NullArg("info");
    HDRF_ASSIGN_OR_RETURN(hdrf::QueueInfo q, FindQueue(u.engine(), path));
    info->weight = q.weight;
    info->share = q.share;
    info->key = q.key;
    info->blocked = q.blocked ? 1 : 0;
    info->state = static_cast<int>(q.state);
    info->is_leaf = q.is_leaf ? 1 : 0;
    info->reclaimable = q.reclaimable ? 1 : 0;
    info->depth = q.depth;
    for (int i = 0; i < 4; ++i) info->jobs[i] = q.jobs_by_state[i];
    return Status::Ok();
  });
}

hdrf_code hdrf_queue_allocated(hdrf_engine_t* engine, const char* path, const char* resource,
                               int64_t* amount, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!resource) return NullArg("resource");
    if (!amount) return NullArg("amount");
    HDRF_ASSIGN_OR_RETURN(hdrf::QueueInfo q, FindQueue(u.engine(), path));
    const std::vector<std::string> names = u.engine().ResourceNames();
    for (size_t r = 0; r < names.size() && r < q.usage.size(); ++r) {
      if (names[r] == resource) {
        *amount = q.usage[r];
        return Status::Ok();
      }
    }
    return Status::NotFound("unknown resource '" + std::string(resource) + "' (not in the cluster)");
  });
}

hdrf_code hdrf_digest(hdrf_engine_t* engine, char* buf, size_t buf_len, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (buf && buf_len > 0) buf[0] = '\0';
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!buf) return NullArg("buf");
    if (buf_len < HDRF_DIGEST_SIZE)
      return Status::OutOfRange("digest buffer holds " + std::to_string(buf_len) +
                                " bytes; it needs " + std::to_string(HDRF_DIGEST_SIZE));
    const std::string hex = u.engine().DigestHex();
    std::memcpy(buf, hex.c_str(), hex.size() + 1);
    return Status::Ok();
  });
}

#define HDRF_C_COUNTER(fn, type, arg, expr)                               \
  hdrf_code fn(hdrf_engine_t* engine, type* arg, char** errptr) {         \
    return Guard(errptr, [&]() -> Status {                                \
      EngineUse u(engine, false);                                         \
      HDRF_RETURN_IF_ERROR(u.status());                                   \
      if (!arg) return NullArg(#arg);                                     \
      *arg = static_cast<type>(u.engine().expr);                          \
      return Status::Ok();                                                \
    });                                                                   \
  }
HDRF_C_COUNTER(hdrf_last_seq, uint64_t, seq, last_seq())
HDRF_C_COUNTER(hdrf_durable_seq, uint64_t, seq, durable_seq())
HDRF_C_COUNTER(hdrf_job_count, uint64_t, count, job_count())
HDRF_C_COUNTER(hdrf_queue_count, uint64_t, count, queue_count())
#undef HDRF_C_COUNTER

hdrf_code hdrf_metrics(hdrf_engine_t* engine, char** text, size_t* len, char** errptr) {
  SetNull(text);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!text) return NullArg("text");
    // hdrf_event_latency_seconds: the engine's own histogram (Engine::EventLatency).
    const std::string m = hdrf::MetricsText(u.engine());
    *text = CopyString(m);
    if (!*text) return Status::Internal("out of memory");
    if (len) *len = m.size();
    return Status::Ok();
  });
}

// ---- persistence ----

hdrf_code hdrf_flush(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return u.engine().Flush();
  });
}

hdrf_code hdrf_checkpoint(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return u.engine().Checkpoint();
  });
}

}  // extern "C"
