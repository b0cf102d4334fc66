// Strings, errors and C structs to and from the C++ API (capi_internal.h).
#include <cstdlib>
#include <cstring>

#include "api/capi/capi_internal.h"
#include "hdrf/quantity.h"

namespace hdrf::capi {

char* CopyString(std::string_view s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

hdrf_code Report(const Status& s, char** errptr) {
  if (s.ok()) return HDRF_OK;
  if (errptr) {
    std::free(*errptr);
    *errptr = CopyString(s.message());
  }
  return static_cast<hdrf_code>(s.code());
}

Status InternalFromException(const char* what) {
  return Status::Internal(std::string("hdrf C interface: ") + (what ? what : "unknown exception"));
}

Status NullArg(const char* what) { return Status::InvalidArgument(std::string(what) + " is NULL"); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

StatusOr<ResourceAmounts> ParseResourceList(const char* text, const std::string& what,
                                            bool known_names) {
  if (!text) return ResourceAmounts();
  ResourceListOptions o;
  o.known_names_only = known_names;
  auto r = hdrf::ParseResourceList(text, o);  // the one resource-list parser (hdrf/quantity.h)
  if (!r.ok()) return r.status().WithContext(what);
  return r;
}

Status CheckStructSize(size_t given, size_t known, const char* what) {
  if (given == 0)
    return Status::InvalidArgument(std::string(what) + ".struct_size is 0: initialise it with " +
                                   what + "_init");
  if (given != known)
    return Status::InvalidArgument(std::string(what) + ".struct_size is " + std::to_string(given) +
                                   "; this hdrf library (" HDRF_VERSION_STRING ") knows " +
                                   std::to_string(known) + " (built against other headers?)");
  return Status::Ok();
}

StatusOr<QueueSpec> ToQueueSpec(const hdrf_queue_spec_t* c) {
  if (!c) return NullArg("queue spec");
  HDRF_RETURN_IF_ERROR(CheckStructSize(c->struct_size, sizeof(hdrf_queue_spec_t), "hdrf_queue_spec"));
  if (!c->path) return NullArg("queue spec path");
  QueueSpec q;
  q.path = c->path;
  q.weight = c->weight;
  HDRF_ASSIGN_OR_RETURN(q.capability, ParseResourceList(c->capability, "queue " + q.path + ": capability", false));
  HDRF_ASSIGN_OR_RETURN(q.guarantee, ParseResourceList(c->guarantee, "queue " + q.path + ": guarantee", false));
  q.reclaimable = c->reclaimable != 0;
  if (c->state < HDRF_QUEUE_OPEN || c->state > HDRF_QUEUE_CLOSED)
    return Status::InvalidArgument("queue " + q.path + ": state " + std::to_string(c->state) +
                                   " is not an HDRF_QUEUE_* value");
  q.state = static_cast<QueueState>(c->state);
  q.min_user_limit_percent = c->min_user_limit_percent;
  if (c->user_limit_factor != 0) q.user_limit_factor = c->user_limit_factor;
  return q;
}

StatusOr<JobSpec> ToJobSpec(const hdrf_job_spec_t* c) {
  if (!c) return NullArg("job spec");
  HDRF_RETURN_IF_ERROR(CheckStructSize(c->struct_size, sizeof(hdrf_job_spec_t), "hdrf_job_spec"));
  if (!c->name) return NullArg("job name");
  JobSpec j;
  j.name = c->name;
  if (c->queue) j.queue = c->queue;
  if (c->user) j.user = c->user;
  j.tasks = c->tasks;
  HDRF_ASSIGN_OR_RETURN(j.task, ParseResourceList(c->task, "job " + j.name + ": task", false));
  j.weight = c->weight;
  j.min_available = c->min_available;
  return j;
}

void ToJobInfo(const JobInfo& j, hdrf_job_info_t* info) {
  info->struct_size = sizeof(hdrf_job_info_t);
  info->tasks = j.tasks;
  info->allocated = j.allocated;
  info->state = static_cast<int>(j.state);
  info->blocked = j.blocked ? 1 : 0;
  info->key = j.key;
  info->share = j.drf_share;
  info->weight = j.weight;
  info->min_available = j.min_available;
  info->seq = j.seq;
}

}  // namespace capi
