// The C interface's fast path (hdrf/c.h "the fast path: events on job
// refs"): an event on a job ref (hdrf_apply_op, and hdrf_job_allocate_ref
// and friends, which are it with a fixed type) becomes an hdrf::Op (ToOp,
// the one conversion) and goes straight to Engine::Apply(Op), with no name
// lookup and no lock beyond the handle's gate (held shared, as by every
// call) and the engine's own sharding; hdrf_apply converts each op of a
// batch the same way and carries them through Engine::ApplyTasks (one
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
#include "hdrf/op.h"

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

// HDRF_OP_* are the values of Event::Type, so that JobEventType, the one
// check of an op's type (hdrf/op.h), converts them.
static_assert(HDRF_OP_ALLOCATE == static_cast<int>(hdrf::Event::Type::kAllocate));
static_assert(HDRF_OP_RELEASE == static_cast<int>(hdrf::Event::Type::kRelease));
static_assert(HDRF_OP_FINISH == static_cast<int>(hdrf::Event::Type::kFinish));
static_assert(HDRF_OP_REMOVE == static_cast<int>(hdrf::Event::Type::kRemove));

// The one conversion of a C op (single calls and hdrf_apply alike) into
// *op: the type, then the ref. Inlined (as is ApplyOp) so that a call of a
// fixed type (hdrf_job_allocate_ref, ...) checks its constant type at
// compile time.
[[gnu::always_inline]] inline Status ToOp(const EngineUse& u, int type, hdrf_job_ref_t job, int64_t n, hdrf::Op* op) {
  HDRF_ASSIGN_OR_RETURN(op->type, hdrf::JobEventType(type));
  HDRF_ASSIGN_OR_RETURN(op->job, DecodeJobRef(u, job));
  op->n = n;
  return Status::Ok();
}

// One job event on a job ref (hdrf_apply_op, hdrf_job_allocate_ref, ...).
[[gnu::always_inline]] inline Status ApplyOp(hdrf_engine_t* engine, int type, hdrf_job_ref_t job,
                                             int64_t n) {
  EngineUse u(engine, true);
  HDRF_RETURN_IF_ERROR(u.status());
  hdrf::Op op;
  HDRF_RETURN_IF_ERROR(ToOp(u, type, job, n, &op));
  return u.engine().Apply(op);
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
  std::vector<Status> status(nops);
  task_ops.reserve(nops);
  const char* base = reinterpret_cast<const char*>(ops);
  for (size_t i = 0; i < nops; ++i) {
    const hdrf_op_t& op = *reinterpret_cast<const hdrf_op_t*>(base + i * op_size);
    hdrf::Op o;
    status[i] = ToOp(u, op.type, op.job, op.n, &o);
    if (status[i].ok()) task_ops.push_back(hdrf::Engine::TaskOp::Of(o, &status[i]));
  }
  const Status batch = u.engine().ApplyTasks(task_ops.data(), task_ops.size(), nullptr, nullptr);
  size_t ok = 0;
  for (size_t i = 0; i < nops; ++i) {
    if (results) results[i] = static_cast<hdrf_code>(status[i].code());
    if (status[i].ok()) ++ok;
  }
  if (applied) *applied = ok;
  return hdrf::BatchStatus(batch, status);
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
  return Guard(errptr, [&] { return ApplyOp(engine, HDRF_OP_ALLOCATE, job, n); });
}

hdrf_code hdrf_job_release_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                               char** errptr) {
  return Guard(errptr, [&] { return ApplyOp(engine, HDRF_OP_RELEASE, job, n); });
}

hdrf_code hdrf_job_finish_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                              char** errptr) {
  return Guard(errptr, [&] { return ApplyOp(engine, HDRF_OP_FINISH, job, n); });
}

hdrf_code hdrf_job_remove_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, char** errptr) {
  return Guard(errptr, [&] { return ApplyOp(engine, HDRF_OP_REMOVE, job, 0); });
}

hdrf_code hdrf_apply_op(hdrf_engine_t* engine, int type, hdrf_job_ref_t job, int64_t n,
                        char** errptr) {
  return Guard(errptr, [&] { return ApplyOp(engine, type, job, n); });
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
