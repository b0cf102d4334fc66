// The C interface's fast path (hdrf/c.h "job refs"): events on a job ref
// go straight to Engine::Allocate(JobRef) and friends, with no name lookup
// and no lock beyond the engine's own sharding; hdrf_apply carries a batch
// of them through Engine::ApplyTasks (one exclusive section, one
// durability wait).
//
// A job ref is {id, seq}: id = engine tag << 32 | JobId, seq = the job's
// submission sequence number. The tag (EngineUse::tag) ties the ref to the
// engine (slot and generation) that handed it out; the engine itself checks
// that the job under JobId still has that sequence number.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "api/capi/capi_internal.h"

using hdrf::Status;
using hdrf::StatusOr;
using namespace hdrf::capi;  // NOLINT: the helpers of this interface

namespace hdrf::capi {

hdrf_job_ref_t EncodeJobRef(uint32_t tag, JobRef ref) {
  return hdrf_job_ref_t{(uint64_t{tag} << 32) | ref.id, ref.seq};
}

StatusOr<JobRef> DecodeJobRef(const EngineUse& u, hdrf_job_ref_t r) {
  const uint32_t tag = static_cast<uint32_t>(r.id >> 32);
  if (tag != u.tag()) {
    if (r.id == 0 && r.seq == 0) return Status::InvalidArgument("job ref is empty (zero)");
    return Status::InvalidArgument("job ref #" + std::to_string(r.seq) +
                                   " was not made by this engine (another engine's, or one "
                                   "since destroyed)");
  }
  return JobRef{static_cast<JobId>(r.id & 0xffffffffu), r.seq};
}

}  // namespace hdrf::capi

namespace {

// An event on a job ref.
template <typename F>
Status OnRef(hdrf_engine_t* engine, hdrf_job_ref_t job, F&& event) {
  EngineUse u(engine, true);
  HDRF_RETURN_IF_ERROR(u.status());
  HDRF_ASSIGN_OR_RETURN(hdrf::JobRef ref, DecodeJobRef(u, job));
  return event(u.engine(), ref);
}

StatusOr<hdrf::Event::Type> OpType(int type) {
  switch (type) {
    case HDRF_OP_ALLOCATE: return hdrf::Event::Type::kAllocate;
    case HDRF_OP_RELEASE: return hdrf::Event::Type::kRelease;
    case HDRF_OP_FINISH: return hdrf::Event::Type::kFinish;
    case HDRF_OP_REMOVE: return hdrf::Event::Type::kRemove;
    default:
      return Status::InvalidArgument("op type " + std::to_string(type) +
                                     " is not an HDRF_OP_* value");
  }
}

// hdrf_apply. Ops refused before the engine sees them (bad type, foreign
// ref) are skipped; the others go to ApplyTasks in order.
Status Apply(hdrf_engine_t* engine, const hdrf_op_t* ops, size_t nops, size_t op_size,
             hdrf_code* results, size_t* applied) {
  if (applied) *applied = 0;
  // An array of nops ops of op_size bytes must fit the address space
  // (and the results array too); checked first, as refuse_all writes
  // `results`.
  if (nops > 0 && nops > static_cast<size_t>(PTRDIFF_MAX) / std::max(op_size, sizeof(hdrf_code)))
    return Status::InvalidArgument("nops " + std::to_string(nops) + ": an array of that many ops of " +
                                   std::to_string(op_size) + " bytes cannot exist");
  auto refuse_all = [&](Status s) {
    if (results)
      for (size_t i = 0; i < nops; ++i) results[i] = static_cast<hdrf_code>(s.code());
    return s;
  };
  EngineUse u(engine, true);
  if (!u.status().ok()) return refuse_all(u.status());
  if (!ops && nops > 0) return refuse_all(NullArg("ops"));
  if (nops > 0 && op_size < sizeof(hdrf_op_t))
    return refuse_all(Status::InvalidArgument("op_size " + std::to_string(op_size) +
                                              " is below sizeof(hdrf_op_t) = " +
                                              std::to_string(sizeof(hdrf_op_t))));
  std::vector<hdrf::Engine::TaskOp> task_ops;
  std::vector<size_t> index;  // task_ops[k] is ops[index[k]]
  std::vector<Status> status(nops);
  task_ops.reserve(nops);
  index.reserve(nops);
  const char* base = reinterpret_cast<const char*>(ops);
  for (size_t i = 0; i < nops; ++i) {
    const hdrf_op_t& op = *reinterpret_cast<const hdrf_op_t*>(base + i * op_size);
    auto type = OpType(op.type);
    auto ref = DecodeJobRef(u, op.job);
    if (!type.ok() || !ref.ok()) {
      status[i] = type.ok() ? ref.status() : type.status();
      continue;
    }
    hdrf::Engine::TaskOp t;
    t.job = *ref;
    t.n = op.n;
    t.type = *type;
    t.status = &status[i];
    task_ops.push_back(t);
    index.push_back(i);
  }
  size_t refused = 0;
  Status batch = u.engine().ApplyTasks(task_ops.data(), task_ops.size(), nullptr, &refused);
  size_t ok = 0;
  size_t first_bad = nops;
  for (size_t i = 0; i < nops; ++i) {
    if (results) results[i] = static_cast<hdrf_code>(status[i].code());
    if (status[i].ok()) {
      ++ok;
    } else if (first_bad == nops) {
      first_bad = i;
    }
  }
  if (applied) *applied = ok;
  if (!batch.ok() && ok > 0) return batch;  // applied, but not made durable
  if (first_bad < nops)
    return status[first_bad].WithContext("op " + std::to_string(first_bad) + " of " +
                                         std::to_string(nops) + " (" +
                                         std::to_string(nops - ok) + " refused)");
  return batch;
}

}  // namespace

extern "C" {

hdrf_code hdrf_job_find(hdrf_engine_t* engine, const char* name, hdrf_job_ref_t* job,
                        char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!name) return NullArg("job name");
    if (!job) return NullArg("job");
    HDRF_ASSIGN_OR_RETURN(hdrf::JobRef ref, u.engine().FindJob(name));
    *job = EncodeJobRef(u.tag(), ref);
    return Status::Ok();
  });
}

hdrf_code hdrf_job_allocate_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                                char** errptr) {
  return Guard(errptr, [&] {
    return OnRef(engine, job, [&](hdrf::Engine& e, hdrf::JobRef r) { return e.Allocate(r, n); });
  });
}

hdrf_code hdrf_job_release_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                               char** errptr) {
  return Guard(errptr, [&] {
    return OnRef(engine, job, [&](hdrf::Engine& e, hdrf::JobRef r) { return e.Release(r, n); });
  });
}

hdrf_code hdrf_job_finish_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                              char** errptr) {
  return Guard(errptr, [&] {
    return OnRef(engine, job, [&](hdrf::Engine& e, hdrf::JobRef r) { return e.Finish(r, n); });
  });
}

hdrf_code hdrf_job_remove_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, char** errptr) {
  return Guard(errptr, [&] {
    return OnRef(engine, job, [&](hdrf::Engine& e, hdrf::JobRef r) { return e.Remove(r); });
  });
}

hdrf_code hdrf_job_get_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, hdrf_job_info_t* info,
                           char** errptr) {
  return Guard(errptr, [&]() -> Status {
    EngineUse u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!info) return NullArg("info");
    HDRF_RETURN_IF_ERROR(CheckStructSize(info->struct_size, sizeof(hdrf_job_info_t), "hdrf_job_info"));
    HDRF_ASSIGN_OR_RETURN(hdrf::JobRef ref, DecodeJobRef(u, job));
    HDRF_ASSIGN_OR_RETURN(hdrf::JobInfo j, u.engine().GetJob(ref));
    ToJobInfo(j, info);
    return Status::Ok();
  });
}

hdrf_code hdrf_apply(hdrf_engine_t* engine, const hdrf_op_t* ops, size_t nops, size_t op_size,
                     hdrf_code* results, size_t* applied, char** errptr) {
  return Guard(errptr, [&] { return Apply(engine, ops, nops, op_size, results, applied); });
}

}  // extern "C"
