// The C interface's hdrf_reconcile (hdrf/c.h) over Engine::Reconcile.
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/capi/capi_internal.h"

using hdrf::Status;
using hdrf::StatusOr;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

namespace {

StatusOr<hdrf::TruthJob> ToTruthJob(const hdrf_truth_job_t& c) {
  HDRF_RETURN_IF_ERROR(CheckStructSize(c.struct_size, sizeof(hdrf_truth_job_t), "hdrf_truth_job"));
  if (!c.name) return NullArg("job name");
  if (!c.queue) return NullArg("job queue");
  hdrf::TruthJob j;
  j.name = c.name;
  j.queue = c.queue;
  if (c.user) j.user = c.user;
  HDRF_ASSIGN_OR_RETURN(j.task, ParseResourceList(c.task, "job " + j.name + ": task", false));
  j.tasks = c.tasks;
  j.running = c.running;
  j.weight = c.weight;
  j.min_available = c.min_available;
  return j;
}

std::string ChangesJson(const hdrf::ReconcileResult& r) {
  const nlohmann::json j = {{"events", r.events},
                            {"queues_created", r.queues_created},
                            {"queues_updated", r.queues_updated},
                            {"queues_deleted", r.queues_deleted},
                            {"jobs_removed", r.jobs_removed},
                            {"jobs_submitted", r.jobs_submitted},
                            {"jobs_resubmitted", r.jobs_resubmitted},
                            {"jobs_adjusted", r.jobs_adjusted}};
  return j.dump();
}

Status Reconcile(hdrf_engine_t* engine, const hdrf_truth_job_t* jobs, size_t njobs,
                 const hdrf_queue_spec_t* queues, size_t nqueues, int match_queues,
                 uint64_t* events, char** changes_json) {
  EngineUse u(engine, true);
  HDRF_RETURN_IF_ERROR(u.status());
  if (!jobs && njobs > 0) return NullArg("jobs");
  if (!queues && nqueues > 0) return NullArg("queues");
  hdrf::ClusterTruth truth;
  for (size_t i = 0; i < njobs; ++i) {
    auto j = ToTruthJob(jobs[i]);
    if (!j.ok()) return j.status().WithContext("jobs[" + std::to_string(i) + "]");
    truth.jobs.push_back(std::move(j).value());
  }
  if (match_queues) {
    truth.queues.emplace();
    for (size_t i = 0; i < nqueues; ++i) {
      auto q = ToQueueSpec(&queues[i]);
      if (!q.ok()) return q.status().WithContext("queues[" + std::to_string(i) + "]");
      truth.queues->push_back(std::move(q).value());
    }
  }
  HDRF_ASSIGN_OR_RETURN(hdrf::ReconcileResult r, u.engine().Reconcile(truth));
  if (events) *events = r.events;
  if (changes_json) {
    *changes_json = CopyString(ChangesJson(r));
    if (!*changes_json) return Status::Internal("out of memory (the engine was reconciled)");
  }
  return Status::Ok();
}

}  // namespace

extern "C" {

void hdrf_truth_job_init(hdrf_truth_job_t* job) {
  if (!job) return;
  std::memset(job, 0, sizeof *job);
  job->struct_size = sizeof(hdrf_truth_job_t);
  job->tasks = 1;
  job->weight = 1;
  job->min_available = 1;
}

hdrf_code hdrf_reconcile(hdrf_engine_t* engine, const hdrf_truth_job_t* jobs, size_t njobs,
                         const hdrf_queue_spec_t* queues, size_t nqueues, int match_queues,
                         uint64_t* events, char** changes_json, char** errptr) {
  SetNull(changes_json);
  return Guard(errptr, [&] {
    return Reconcile(engine, jobs, njobs, queues, nqueues, match_queues, events, changes_json);
  });
}

}  // extern "C"
