// The C interface (hdrf/c.h): views, metrics, version and persistence.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  HDRF_RETURN_IF_ERROR(CheckStructSize(info->struct_size, sizeof(hdrf_job_info_t), "hdrf_job_info"));
  HDRF_ASSIGN_OR_RETURN(hdrf::JobInfo j, u.engine().GetJob(name));
  ToJobInfo(j, info);
  return Status::Ok();
}

// A malloc'd array of malloc'd copies of `v`.
Status CopyStrings(const std::vector<std::string>& v, char*** out, size_t* count) {
  char** list = static_cast<char**>(std::calloc(v.empty() ? 1 : v.size(), sizeof(char*)));
  if (!list) return Status::Internal("out of memory");
  for (size_t i = 0; i < v.size(); ++i) {
    list[i] = CopyString(v[i]);
    if (!list[i]) {
      hdrf_free_strings(list, i);
      return Status::Internal("out of memory");
    }
  }
  *out = list;
  *count = v.size();
  return Status::Ok();
}

// The form of `hdrf explain --json`.
std::string ExplanationJson(const hdrf::Explanation& e) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& level : e.levels) {
    nlohmann::json siblings = nlohmann::json::array();
    for (const auto& s : level.siblings)
      siblings.push_back({{"name", s.name}, {"key", s.key}, {"blocked", s.blocked}, {"on_path", s.is_path}});
    levels.push_back({{"parent", level.parent}, {"siblings", std::move(siblings)}});
  }
  const nlohmann::json j = {{"job", e.job},
                            {"queue", e.queue},
                            {"key", e.key},
                            {"blocked", e.blocked},
                            {"schedulable", e.schedulable},
                            {"next", e.is_next},
                            {"blocked_by", e.blocked_by},
                            {"unfit_because", e.unfit_because}, {"plan", e.plan},
                            {"levels", std::move(levels)}};
  return j.dump();
}

}  // namespace

extern "C" {

void hdrf_free_strings(char** list, size_t n) {
  if (!list) return;
  for (size_t i = 0; i < n; ++i) std::free(list[i]);
  std::free(list);
}

hdrf_code hdrf_queue_paths(hdrf_engine_t* engine, char*** paths, size_t* count, char** errptr) {
  SetNull(paths);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!paths) return NullArg("paths");
    if (!count) return NullArg("count");
    std::vector<std::string> v;
    for (const hdrf::QueueInfo& q : u.engine().Queues()) v.push_back(q.path);
    return CopyStrings(v, paths, count);
  });
}

hdrf_code hdrf_resource_names(hdrf_engine_t* engine, char*** names, size_t* count,
                              char** errptr) {
  SetNull(names);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!names) return NullArg("names");
    if (!count) return NullArg("count");
    return CopyStrings(u.engine().ResourceNames(), names, count);
  });
}

hdrf_code hdrf_explain(hdrf_engine_t* engine, const char* name, char** json, char** errptr) {
  SetNull(json);
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!name) return NullArg("job name");
    if (!json) return NullArg("json");
    HDRF_ASSIGN_OR_RETURN(hdrf::Explanation e, u.engine().Explain(name));
    *json = CopyString(ExplanationJson(e));
    if (!*json) return Status::Internal("out of memory");
    return Status::Ok();
  });
}

// ---- views ----

hdrf_code hdrf_job_get(hdrf_engine_t* engine, const char* name, hdrf_job_info_t* info,
                       char** errptr) {
  return Guard(errptr, [&] { return GetJobInfo(engine, name, info); });
}

hdrf_code hdrf_job_allocated(hdrf_engine_t* engine, const char* name, int64_t* allocated,
                             char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!allocated) return NullArg("allocated");
    hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
    HDRF_RETURN_IF_ERROR(GetJobInfo(engine, name, &info));
    *allocated = info.allocated;
    return Status::Ok();
  });
}

hdrf_code hdrf_job_state(hdrf_engine_t* engine, const char* name, int* state, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!state) return NullArg("state");
    hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
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
    HDRF_RETURN_IF_ERROR(
        CheckStructSize(info->struct_size, sizeof(hdrf_queue_info_t), "hdrf_queue_info"));
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

// ---- version ----

const char* hdrf_version(int* major, int* minor, int* patch) {
  if (major) *major = HDRF_VERSION_MAJOR;
  if (minor) *minor = HDRF_VERSION_MINOR;
  if (patch) *patch = HDRF_VERSION_PATCH;
  return HDRF_VERSION_STRING;
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
