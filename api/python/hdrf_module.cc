// The Python module `hdrf` (pybind11) over the C++ API (hdrf/engine.h).
// docs/embedding.md is the guide and the reference ("The Python example" and after).
//
// Errors: every refused call raises hdrf.Error (a subclass per code:
// hdrf.NotFoundError, hdrf.InvalidArgumentError, ...) whose `code` is the
// hdrf_code / hdrf::StatusCode value and `code_name` its name.
// Threads: the GIL is released inside every engine call, so Python threads
// run events in parallel under the engine's lock sharding.
// Ownership: an Engine owns its C++ engine; close() (or the end of a
// `with` block) closes the store and frees it; later calls raise
// FailedPreconditionError. A Job names one job of one engine and is refused
// by any other engine, on every path that takes one (a Job, a (job, op, n)
// tuple, a row of an int64 array: PyEngine::Resolve and Decode); that it
// names a live job the engine checks (a removed job is NotFoundError).
// Job events: allocate, release, finish and remove are one hdrf::Op each
// through Engine::Apply(Op); apply() turns each tuple or int64 row into
// the same Op (the type by JobEventType, hdrf/op.h) for ApplyTasks, and
// reports the batch as hdrf_apply does (BatchStatus; see Apply below).
// Plans: engine.plan(job, mode, max_victims) returns an hdrf.Plan;
// engine.apply_plan(plan) raises hdrf.StalePlanError (code Aborted) when
// the state changed under it (docs/spec.md §15).
// Followers: Engine.open_follower(db_path) is a read-only engine over a
// store another process writes (events raise FailedPreconditionError);
// catch_up(), lag() and promote() (docs/embedding.md "Followers and
// takeover").
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/metrics.h"
#include "hdrf/op.h"
#include "hdrf/quantity.h"
#include "hdrf/sim.h"
#include "hdrf/version.h"

namespace py = pybind11;

namespace hdrf::python {
namespace {

// hdrf.Error and one subclass per code, made at import.
std::map<int, py::object>& ErrorTypes() {
  static auto* m = new std::map<int, py::object>;
  return *m;
}

[[noreturn]] void Raise(const Status& s) {
  const int code = static_cast<int>(s.code());
  auto it = ErrorTypes().find(code);
  py::object type = it != ErrorTypes().end() ? it->second : ErrorTypes().at(-1);
  py::object err = type(s.message());
  err.attr("code") = code;
  err.attr("code_name") = StatusCodeName(s.code());
  PyErr_SetObject(type.ptr(), err.ptr());
  throw py::error_already_set();
}

void Check(const Status& s) {
  if (!s.ok()) Raise(s);
}
template <typename T>
T Value(StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return std::move(v).value();
}

// {"cpu": "500m", "memory": 1073741824} -> canonical amounts (strings are
// quantities, docs/spec.md §2; integers are canonical units).
ResourceAmounts Amounts(const py::dict& d, const char* what) {
  ResourceAmounts out;
  for (auto [k, v] : d) {
    const std::string name = py::str(k);
    if (py::isinstance<py::int_>(v)) {
      out[name] = v.cast<int64_t>();
    } else {
      auto q = ParseQuantity(name, std::string(py::str(v)));
      if (!q.ok()) Raise(q.status().WithContext(what));
      out[name] = *q;
    }
  }
  return out;
}

// Setters of a struct's fields, by dict key.
template <typename T>
using Fields = std::map<std::string, void (*)(T&, py::handle)>;

// A T from a dict of its fields; an unknown key raises, naming `what`.
template <typename T>
T FromDict(const py::dict& d, const Fields<T>& fields, const char* what) {
  T out;
  for (auto [k, v] : d) {
    const std::string key = py::str(k);
    auto it = fields.find(key);
    if (it == fields.end())
      Raise(Status::InvalidArgument(std::string(what) + ": unknown key '" + key + "'"));
    it->second(out, v);
  }
  return out;
}

QueueSpec ToQueueSpec(const py::dict& d) {
  static const Fields<QueueSpec> fields = {
      {"path", [](QueueSpec& q, py::handle v) { q.path = py::str(v); }},
      {"weight", [](QueueSpec& q, py::handle v) { q.weight = v.cast<double>(); }},
      {"capability",
       [](QueueSpec& q, py::handle v) { q.capability = Amounts(v.cast<py::dict>(), "capability"); }},
      {"guarantee",
       [](QueueSpec& q, py::handle v) { q.guarantee = Amounts(v.cast<py::dict>(), "guarantee"); }},
      {"reclaimable", [](QueueSpec& q, py::handle v) { q.reclaimable = v.cast<bool>(); }},
      {"min_user_limit_percent",
       [](QueueSpec& q, py::handle v) { q.min_user_limit_percent = v.cast<int>(); }},
      {"user_limit_factor",
       [](QueueSpec& q, py::handle v) { q.user_limit_factor = v.cast<double>(); }},
  };
  QueueSpec q = FromDict(d, fields, "queue spec");
  if (q.path.empty()) Raise(Status::InvalidArgument("queue spec: no path"));
  return q;
}

// A Job: a JobRef and the serial number of the engine that made it.
struct Job {
  JobRef ref;
  uint64_t engine = 0;  // 0 for a Job.__new__(Job) (zero-filled): no engine's
  static void* operator new(size_t n) { return std::memset(::operator new(n), 0, n); }
  static void operator delete(void* p) { ::operator delete(p); }
};

// Job.id as Python sees it: the engine's serial above the JobId, as the C
// interface's refs carry their engine's tag, so that a ref read back from a
// buffer of ints is checked like a Job object (PyEngine::Decode). A serial
// has at most 31 bits, so that an id fits an int64 array: a process makes
// at most kMaxSerial engines, and never gives a serial twice (NewSerial), so
// a Job.id names one engine exactly, as a Job does.
constexpr uint64_t kMaxSerial = 0x7fffffff;
uint64_t TaggedId(const Job& j) { return (j.engine & kMaxSerial) << 32 | j.ref.id; }

// The next engine serial: 1, 2, ..., kMaxSerial, each once. Only moves
// forward (NewSerial, SkipSerials).
std::atomic<uint64_t> g_next_serial{1};

// A serial for a new engine, or an error once the process has made
// kMaxSerial engines (a serial is never reused: a Job of a closed engine
// must not name a job of a later one).
StatusOr<uint64_t> NewSerial() {
  uint64_t s = g_next_serial.load();
  do {
    if (s > kMaxSerial)
      return Status::FailedPrecondition("this process has made " + std::to_string(kMaxSerial) +
                                        " hdrf.Engine objects, the most whose Job.id can name "
                                        "their engine (a serial is never reused)");
  } while (!g_next_serial.compare_exchange_weak(s, s + 1));
  return s;
}

// hdrf._skip_engine_serials(to), for tests: the next engine's serial is at
// least `to` (at most kMaxSerial + 1: no serial left). Never moves back.
void SkipSerials(uint64_t to) {
  to = std::min(to, kMaxSerial + 1);
  uint64_t s = g_next_serial.load();
  while (s < to && !g_next_serial.compare_exchange_weak(s, to)) {
  }
}

EngineOptions ToOptions(const std::string& db_path, const std::string& durability,
                        double overcommit_factor, int64_t checkpoint_every,
                        int64_t checkpoint_events_per_job, uint32_t latency_sample_every) {
  EngineOptions o;
  o.db_path = db_path;
  o.durability = Value(ParseDurability(durability));
  // As hdrf_options_set_overcommit_factor: NaN, infinite or negative is an
  // error, not a gate silently off.
  if (!(std::isfinite(overcommit_factor) && overcommit_factor >= 0))
    Raise(Status::InvalidArgument("overcommit factor must be a finite number >= 0 (0 = off), not " +
                                  std::to_string(overcommit_factor)));
  if (overcommit_factor > 0) o.overcommit_factor = overcommit_factor;
  if (checkpoint_every >= 0) o.checkpoint_every = static_cast<uint64_t>(checkpoint_every);
  if (checkpoint_events_per_job < 0 || checkpoint_events_per_job > UINT32_MAX)
    Raise(Status::InvalidArgument("checkpoint_events_per_job must be in 0..4294967295 (0: "
                                  "checkpoint_every alone), not " +
                                  std::to_string(checkpoint_events_per_job)));
  o.checkpoint_events_per_job = static_cast<uint32_t>(checkpoint_events_per_job);
  o.latency_sample_every = latency_sample_every;
  return o;
}

// hdrf.Engine. `mu` shared: a call; exclusive: close (waits for calls).
// `hdrf.Engine.__new__(hdrf.Engine)` makes an object without running
// __init__: pybind11 then allocates it with this class's operator new,
// which zero-fills, so serial_ is 0 and every method raises (Init()).
class PyEngine {
 public:
  // `serial` from NewSerial: never 0 (0 is an uninitialised engine's).
  PyEngine(std::unique_ptr<Engine> e, uint64_t serial) : engine_(std::move(e)), serial_(serial) {}
  static void* operator new(size_t n) { return std::memset(::operator new(n), 0, n); }
  static void operator delete(void* p) { ::operator delete(p); }

  // Raises unless __init__ made this engine (the GIL held).
  void Init() const {
    if (serial_ == 0)
      Raise(Status::FailedPrecondition(
          "hdrf.Engine is not initialised (made by Engine.__new__ without __init__)"));
  }

  // Runs `f(engine)` with the GIL released and the engine held.
  template <typename F>
  auto Run(F&& f) {
    Init();
    py::gil_scoped_release nogil;
    base::SharedLockGuard<base::SharedMutex> l(mu_);
    if (!engine_) {
      py::gil_scoped_acquire gil;
      Raise(Status::FailedPrecondition("engine is closed"));
    }
    return f(*engine_);
  }

  JobRef Ref(const Job& j) const {
    Init();
    if (j.engine != serial_)
      Raise(Status::InvalidArgument("job #" + std::to_string(j.ref.seq) +
                                    " belongs to another engine"));
    return j.ref;
  }
  Job MakeJob(JobRef r) const { return Job{r, serial_}; }
  // A ref from a buffer: Job.id (TaggedId) and Job.seq.
  JobRef Decode(int64_t id, int64_t seq) const {
    Init();
    const uint64_t tagged = static_cast<uint64_t>(id);
    if (tagged >> 32 != serial_)
      Raise(Status::InvalidArgument("job ref #" + std::to_string(seq) +
                                    " belongs to another engine (or is not a Job.id)"));
    return JobRef{static_cast<JobId>(tagged & 0xffffffffu), static_cast<uint64_t>(seq)};
  }
  // A Job or a job name.
  JobRef Resolve(const py::object& job) {
    if (py::isinstance<py::str>(job)) {
      const std::string name = py::str(job);
      return Value(Run([&](Engine& e) { return e.FindJob(name); }));
    }
    if (!py::isinstance<Job>(job))
      Raise(Status::InvalidArgument("a job is an hdrf.Job or a job name, not a " +
                                    std::string(py::str(py::type::of(job).attr("__name__")))));
    return Ref(job.cast<const Job&>());
  }

  void Close() {
    Init();
    std::unique_ptr<Engine> e;
    {
      py::gil_scoped_release nogil;
      base::LockGuard<base::SharedMutex> l(mu_);
      e = std::move(engine_);
    }
    if (!e) return;  // closed already: a no-op, like file.close()
    Status s;
    {
      py::gil_scoped_release nogil;
      s = e->Close();
      e.reset();
    }
    Check(s);
  }
  bool closed() {
    Init();
    base::SharedLockGuard<base::SharedMutex> l(mu_);
    return !engine_;
  }
  uint64_t serial() const { return serial_; }

 private:
  base::SharedMutex mu_;
  std::unique_ptr<Engine> engine_ GUARDED_BY(mu_);  // null once closed
  uint64_t serial_;
};

// An op's type, as a name ("allocate", ...) or an hdrf.OP_* value: the one
// check of hdrf/op.h (JobEventType), for tuples and buffer rows alike.
Event::Type OpType(const py::handle& op) {
  if (py::isinstance<py::str>(op)) return Value(JobEventType(std::string(py::str(op))));
  return Value(JobEventType(op.cast<int64_t>()));
}

// engine.allocate, release, finish, remove: one Op through Engine::Apply(Op),
// the ref checked as a batch's (Resolve).
void ApplyOne(PyEngine& self, Event::Type type, const py::object& job, int64_t n) {
  const Op op{type, self.Resolve(job), n};
  Check(self.Run([&](Engine& e) { return e.Apply(op); }));
}
template <Event::Type kType>
void ApplyOneOf(PyEngine& self, const py::object& job, int64_t n) {
  ApplyOne(self, kType, job, n);
}

// ops: a list of (job, op, n) tuples, or a buffer (numpy array,
// array.array, memoryview) of int64 with 4 per op: Job.id, Job.seq, op, n.
// Either way every op's type and ref are checked (OpType, then the ref as
// the single calls check it) before any op runs. Without `results`, a
// batch that applied no op raises what hdrf_apply returns (BatchStatus:
// the first refusal, "op I of N (K refused): ..."); otherwise it returns
// the number applied (and with `results`, each op's code).
py::object Apply(PyEngine& self, const py::object& ops, bool results) {
  std::vector<Engine::TaskOp> task_ops;
  if (py::isinstance<py::buffer>(ops) && !py::isinstance<py::list>(ops)) {
    py::buffer_info b = ops.cast<py::buffer>().request();
    if (b.itemsize != 8 || b.format.find_first_of("qlL") == std::string::npos)
      Raise(Status::InvalidArgument("apply: the buffer must hold int64 values"));
    if (b.size % 4 != 0) Raise(Status::InvalidArgument("apply: 4 int64 values per op"));
    const bool contiguous = b.ndim == 1 || (b.ndim == 2 && b.shape[1] == 4 &&
                                            b.strides[1] == 8 && b.strides[0] == 32);
    if (!contiguous) Raise(Status::InvalidArgument("apply: a contiguous (n, 4) int64 array"));
    const auto* v = static_cast<const int64_t*>(b.ptr);
    task_ops.reserve(static_cast<size_t>(b.size / 4));
    for (size_t i = 0; i < static_cast<size_t>(b.size / 4); ++i) {
      const Event::Type type = Value(JobEventType(v[4 * i + 2]));
      task_ops.push_back(Engine::TaskOp::Of(Op{type, self.Decode(v[4 * i], v[4 * i + 1]), v[4 * i + 3]}));
    }
  } else {
    for (const py::handle& item : ops) {
      auto t = item.cast<py::tuple>();
      if (t.size() < 2 || t.size() > 3) Raise(Status::InvalidArgument("apply: ops are (job, op, n)"));
      const Event::Type type = OpType(t[1]);
      const int64_t n = t.size() == 3 ? t[2].cast<int64_t>() : 1;
      task_ops.push_back(Engine::TaskOp::Of(Op{type, self.Resolve(py::reinterpret_borrow<py::object>(t[0])), n}));
    }
  }
  std::vector<Status> status(task_ops.size());
  for (size_t i = 0; i < status.size(); ++i) task_ops[i].status = &status[i];
  size_t refused = 0;
  Status s = self.Run([&](Engine& e) {
    return e.ApplyTasks(task_ops.data(), task_ops.size(), nullptr, &refused);
  });
  const size_t applied = task_ops.size() - refused;
  if (!results) {
    if (applied == 0) Check(BatchStatus(s, status));
    return py::int_(applied);
  }
  if (!s.ok() && applied == 0) Raise(s);
  std::vector<int> codes(status.size());
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<int>(status[i].code());
  return py::make_tuple(applied, codes);
}

py::dict QueueDict(const QueueInfo& q, const std::vector<std::string>& names) {
  py::dict d;
  d["path"] = q.path;
  d["weight"] = q.weight;
  d["share"] = q.share;
  d["key"] = q.key;
  d["blocked"] = q.blocked;
  d["state"] = QueueStateName(q.state);
  d["is_leaf"] = q.is_leaf;
  d["reclaimable"] = q.reclaimable;
  d["depth"] = q.depth;
  py::dict jobs, usage;
  for (int s = 0; s < 4; ++s) jobs[JobStateName(static_cast<JobState>(s))] = q.jobs_by_state[s];
  for (size_t r = 0; r < names.size() && r < q.usage.size(); ++r) usage[names[r].c_str()] = q.usage[r];
  d["jobs"] = jobs;
  d["allocated"] = usage;
  return d;
}

py::dict JobDict(const JobInfo& j) {
  return py::dict(py::arg("name") = j.name, py::arg("queue") = j.queue, py::arg("user") = j.user,
                  py::arg("tasks") = j.tasks, py::arg("allocated") = j.allocated,
                  py::arg("state") = JobStateName(j.state), py::arg("blocked") = j.blocked,
                  py::arg("key") = j.key, py::arg("share") = j.drf_share,
                  py::arg("weight") = j.weight, py::arg("min_available") = j.min_available,
                  py::arg("seq") = j.seq);
}

py::dict ExplanationDict(const Explanation& e) {
  py::list levels;
  for (const auto& level : e.levels) {
    py::list siblings;
    for (const auto& s : level.siblings) {
      py::dict sd;
      sd["name"] = s.name;
      sd["key"] = s.key;
      sd["blocked"] = s.blocked;
      sd["on_path"] = s.is_path;
      siblings.append(sd);
    }
    py::dict ld;
    ld["parent"] = level.parent;
    ld["siblings"] = siblings;
    levels.append(ld);
  }
  py::dict d;
  d["job"] = e.job;
  d["queue"] = e.queue;
  d["key"] = e.key;
  d["blocked"] = e.blocked;
  d["schedulable"] = e.schedulable;
  d["next"] = e.is_next;
  d["blocked_by"] = e.blocked_by;
  d["unfit_because"] = e.unfit_because;
  d["plan"] = e.plan;
  d["levels"] = levels;
  return d;
}

TruthJob ToTruthJob(const py::dict& d) {
  static const Fields<TruthJob> fields = {
      {"name", [](TruthJob& j, py::handle v) { j.name = py::str(v); }},
      {"queue", [](TruthJob& j, py::handle v) { j.queue = py::str(v); }},
      {"user", [](TruthJob& j, py::handle v) { j.user = py::str(v); }},
      {"task", [](TruthJob& j, py::handle v) { j.task = Amounts(v.cast<py::dict>(), "task"); }},
      {"tasks", [](TruthJob& j, py::handle v) { j.tasks = v.cast<int64_t>(); }},
      {"running", [](TruthJob& j, py::handle v) { j.running = v.cast<int64_t>(); }},
      {"weight", [](TruthJob& j, py::handle v) { j.weight = v.cast<double>(); }},
      {"min_available", [](TruthJob& j, py::handle v) { j.min_available = v.cast<int64_t>(); }},
  };
  return FromDict(d, fields, "truth job");
}

py::dict ReconcileDict(const ReconcileResult& r) {
  return py::dict(py::arg("events") = r.events, py::arg("queues_created") = r.queues_created,
                  py::arg("queues_updated") = r.queues_updated,
                  py::arg("queues_deleted") = r.queues_deleted,
                  py::arg("jobs_removed") = r.jobs_removed,
                  py::arg("jobs_submitted") = r.jobs_submitted,
                  py::arg("jobs_resubmitted") = r.jobs_resubmitted,
                  py::arg("jobs_adjusted") = r.jobs_adjusted);
}

void DefineErrors(py::module_& m) {
  py::object base = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("hdrf.Error", "A refused hdrf call; .code and .code_name say why.",
                                PyExc_Exception, nullptr));
  m.attr("Error") = base;
  ErrorTypes()[-1] = base;
  const std::pair<StatusCode, const char*> codes[] = {
      {StatusCode::kInvalidArgument, "InvalidArgumentError"},
      {StatusCode::kNotFound, "NotFoundError"},
      {StatusCode::kAlreadyExists, "AlreadyExistsError"},
      {StatusCode::kFailedPrecondition, "FailedPreconditionError"},
      {StatusCode::kOutOfRange, "OutOfRangeError"},
      {StatusCode::kCorruption, "CorruptionError"},
      {StatusCode::kIoError, "IOError"},
      {StatusCode::kUnimplemented, "UnimplementedError"},
      {StatusCode::kInternal, "InternalError"},
      {StatusCode::kAborted, "StalePlanError"}};
  for (const auto& [code, name] : codes) {
    const std::string full = std::string("hdrf.") + name;
    py::object t = py::reinterpret_steal<py::object>(
        PyErr_NewException(full.c_str(), base.ptr(), nullptr));
    m.attr(name) = t;
    ErrorTypes()[static_cast<int>(code)] = t;
  }
  m.attr("AbortedError") = m.attr("StalePlanError");  // the code's name, as for the others
}

}  // namespace

void DefineEngine(py::module_& m);

}  // namespace hdrf::python

PYBIND11_MODULE(hdrf, m) {
  using namespace hdrf;
  using namespace hdrf::python;
  m.doc() = "hdrf: embeddable hierarchical multi-resource fairness engine (docs/embedding.md)";
  m.attr("__version__") = HDRF_VERSION_STRING;
  for (Event::Type t : kJobEventTypes) {  // OP_ALLOCATE = 0, ... (hdrf/op.h)
    std::string name = std::string("OP_") + EventTypeName(t);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    m.attr(name.c_str()) = static_cast<int>(t);
  }
  DefineErrors(m);
  m.def("_skip_engine_serials", &SkipSerials, py::arg("to"),
        "For tests: the next Engine's serial (the tag in Job.id) is at least `to`; serials "
        "only move forward and are never reused.");
  py::class_<Job>(m, "Job", "One job of one engine (a job ref); a plain value.")
      .def_property_readonly("id", &TaggedId)
      .def_property_readonly("seq", [](const Job& j) { return j.ref.seq; })
      .def("__eq__", [](const Job& a, const Job& b) {
        return a.engine == b.engine && a.ref.id == b.ref.id && a.ref.seq == b.ref.seq;
      })
      .def("__hash__", [](const Job& j) { return py::hash(py::make_tuple(j.engine, j.ref.id, j.ref.seq)); })
      .def("__repr__", [](const Job& j) { return "<hdrf.Job #" + std::to_string(j.ref.seq) + ">"; });
  DefineEngine(m);
}

namespace hdrf::python {

// What an engine method returns, for Python: a Status raises or is None, a
// StatusOr<T> raises or is its T, any other value is itself.
// A new hdrf.Engine from `open()` (a StatusOr<unique_ptr<Engine>>), run
// with the GIL released; its error is raised with the GIL held.
template <typename F>
std::unique_ptr<PyEngine> Make(F&& open) {
  const uint64_t serial = Value(NewSerial());
  StatusOr<std::unique_ptr<Engine>> e = [&] {
    py::gil_scoped_release nogil;
    return open();
  }();
  return std::make_unique<PyEngine>(Value(std::move(e)), serial);
}

inline void Unwrap(const Status& s) { Check(s); }
template <typename T>
T Unwrap(StatusOr<T> v) {
  return Value(std::move(v));
}
template <typename T>
T Unwrap(T v) {
  return v;
}

// engine.NAME(args...): `method` on the C++ engine, the GIL released.
template <typename M, typename R, typename... A>
auto Bind(M method) {
  return [method](PyEngine& self, A... args) {
    return Unwrap(self.Run([&](Engine& e) -> R { return (e.*method)(args...); }));
  };
}
template <typename R, typename... A>
auto Method(R (Engine::*m)(A...)) {
  return Bind<decltype(m), R, A...>(m);
}
template <typename R, typename... A>
auto Method(R (Engine::*m)(A...) const) {
  return Bind<decltype(m), R, A...>(m);
}

py::dict LagDict(const Engine::FollowerLag& l, bool follower) {
  return py::dict(py::arg("follower") = follower, py::arg("events") = l.events,
                  py::arg("seconds") = l.seconds, py::arg("applied_seq") = l.applied_seq,
                  py::arg("writer_seq") = l.writer_seq, py::arg("reloads") = l.reloads);
}

// engine.promote(wait_ms=-1, *, durability, checkpoint_every,
// checkpoint_events_per_job, latency_sample_every).
void Promote(PyEngine& self, int64_t wait_ms, const std::string& durability,
             int64_t checkpoint_every, int64_t checkpoint_events_per_job,
             uint32_t latency_sample_every) {
  if (wait_ms < -1)
    Raise(Status::InvalidArgument("promote: wait_ms " + std::to_string(wait_ms) +
                                  ": give -1 (until the writer lets go), 0 or milliseconds"));
  const EngineOptions eo = ToOptions("", durability, 0, checkpoint_every, checkpoint_events_per_job,
                                     latency_sample_every);
  PromoteOptions po;
  po.wait_ms = wait_ms;
  po.durability = eo.durability;
  po.checkpoint_every = eo.checkpoint_every;
  po.checkpoint_events_per_job = eo.checkpoint_events_per_job;
  po.latency_sample_every = eo.latency_sample_every;
  Check(self.Run([&](Engine& e) { return e.Promote(po); }));
}

using PyEngineClass = py::class_<PyEngine>;

// Engine: creation: a new engine, from a scenario or a config, over a store, as a follower.
void DefineConstructors(PyEngineClass& c) {
  c.def(py::init([](const py::dict& cluster, const std::vector<py::dict>& queues,
                           const std::string& db_path, const std::string& durability,
                           double overcommit_factor, int64_t checkpoint_every,
                           int64_t checkpoint_events_per_job, uint32_t latency_sample_every) {
             std::vector<QueueSpec> qs;
             for (const py::dict& q : queues) qs.push_back(ToQueueSpec(q));
             const ResourceAmounts c = Amounts(cluster, "cluster");
             const EngineOptions o =
                 ToOptions(db_path, durability, overcommit_factor, checkpoint_every,
                           checkpoint_events_per_job, latency_sample_every);
             return Make([&] { return Engine::Create(c, qs, o); });
           }),
           py::arg("cluster"), py::arg("queues") = std::vector<py::dict>(), py::kw_only(),
           py::arg("db_path") = "", py::arg("durability") = "sync",
           py::arg("overcommit_factor") = 0.0, py::arg("checkpoint_every") = -1,
           py::arg("checkpoint_events_per_job") = 4, py::arg("latency_sample_every") = 16u,
           "A new engine. checkpoint_every: background checkpoints after this many "
           "logged events (-1: the default, 1,000,000; 0: only on checkpoint() and close()); "
           "checkpoint_events_per_job: k, at least k events per live job between them when "
           "that is more (0: checkpoint_every alone; docs/storage.md \"Checkpoints\").")
      .def_static("from_scenario", [](const std::string& yaml, bool run_steps) {
             Scenario sc = Value(ParseScenario(yaml, "scenario"));
             return Make([&] { return RunScenarioEngine(sc, EngineOptions(), run_steps); });
           }, py::arg("yaml"), py::arg("run_steps") = true)
      .def_static("from_config", [](const std::string& yaml) {
             QueueConfig cfg = Value(ParseQueueConfig(yaml, "config"));
             if (cfg.cluster.empty()) Raise(Status::InvalidArgument("config: no cluster"));
             return Make([&] { return Engine::Create(cfg.cluster, cfg.queues); });
           }, py::arg("yaml"))
      .def_static("open", [](const std::string& db_path, const std::string& durability) {
             EngineOptions o = ToOptions(db_path, durability, 0, -1, 4, 16);
             return Make([&] { return Engine::Open(o); });
           }, py::arg("db_path"), py::arg("durability") = "sync")
      .def_static("open_follower", [](const std::string& db_path,
                                          const std::string& secondary_path,
                                          uint32_t catch_up_interval_ms) {
             FollowerOptions o;
             o.db_path = db_path;
             o.secondary_path = secondary_path;
             o.catch_up_interval_ms = catch_up_interval_ms;
             return Make([&] { return Engine::OpenFollower(o); });
           }, py::arg("db_path"), py::kw_only(), py::arg("secondary_path") = "",
           py::arg("catch_up_interval_ms") = FollowerOptions().catch_up_interval_ms,
           "A read-only follower of the store at db_path, which a writer may hold "
           "(docs/storage.md \"Followers\"); events raise FailedPreconditionError.");
}

// Engine: a follower: catch-up, lag, promotion.
void DefineFollowerMethods(PyEngineClass& c) {
  c.def_property_readonly("is_follower", Method(&Engine::is_follower))
      .def("catch_up", Method(&Engine::CatchUp),
           "Applies what the writer logged since the last catch-up, now.")
      .def("lag", [](PyEngine& self) {
             bool follower = false;
             const auto lag = self.Run([&](Engine& e) {
               follower = e.is_follower();
               return e.follower_lag();
             });
             return LagDict(lag, follower);
           }, "How far a follower is behind its writer: a dict of follower, events, seconds, "
              "applied_seq, writer_seq, reloads (zeros on an engine that is no follower).")
      .def("promote", &Promote, py::arg("wait_ms") = -1, py::kw_only(),
           py::arg("durability") = "sync", py::arg("checkpoint_every") = -1,
           py::arg("checkpoint_events_per_job") = 4, py::arg("latency_sample_every") = 16u,
           "Makes a follower the writer once the writer released the store (waiting up to "
           "wait_ms; -1: until it does); FailedPreconditionError when the wait runs out.");
}

// Engine: close and the `with` protocol.
void DefineLifetime(PyEngineClass& c) {
  c.def("close", &PyEngine::Close)
      .def_property_readonly("closed", &PyEngine::closed)
      .def("__enter__", [](PyEngine& e) -> PyEngine& { return e; }, py::return_value_policy::reference)
      .def("__exit__", [](PyEngine& e, const py::args&) { e.Close(); });
}

// Engine: job events: submit, find, allocate/release/finish/remove, batches, reconcile.
void DefineEvents(PyEngineClass& c) {
  c.def("submit", [](PyEngine& self, const std::string& name, const std::string& queue,
                        const std::string& user, int64_t tasks, const py::dict& task, double weight,
                        int64_t min_available) {
             JobSpec s;
             s.name = name;
             s.queue = queue;
             s.user = user;
             s.tasks = tasks;
             s.task = Amounts(task, ("job " + name + ": task").c_str());
             s.weight = weight;
             s.min_available = min_available;
             return self.MakeJob(Value(self.Run([&](Engine& e) { return e.Submit(s); })));
           }, py::arg("name"), py::arg("queue") = "", py::arg("user") = "default",
           py::arg("tasks") = 1, py::arg("task") = py::dict(), py::arg("weight") = 1.0,
           py::arg("min_available") = 1)
      .def("find", [](PyEngine& self, const std::string& name) {
             return self.MakeJob(Value(self.Run([&](Engine& e) { return e.FindJob(name); })));
           })
      .def("allocate", &ApplyOneOf<Event::Type::kAllocate>, py::arg("job"), py::arg("n") = 1)
      .def("release", &ApplyOneOf<Event::Type::kRelease>, py::arg("job"), py::arg("n") = 1)
      .def("finish", &ApplyOneOf<Event::Type::kFinish>, py::arg("job"), py::arg("n") = 1)
      .def("remove", [](PyEngine& self, const py::object& job) { ApplyOne(self, Event::Type::kRemove, job, 0); },
           py::arg("job"))
      .def("apply", &Apply, py::arg("ops"), py::arg("results") = false)
      .def("reconcile", [](PyEngine& self, const std::vector<py::dict>& jobs,
                           const std::optional<std::vector<py::dict>>& queues) {
             ClusterTruth t;
             for (const py::dict& j : jobs) t.jobs.push_back(ToTruthJob(j));
             if (queues) {
               t.queues.emplace();
               for (const py::dict& q : *queues) t.queues->push_back(ToQueueSpec(q));
             }
             return ReconcileDict(Value(self.Run([&](Engine& e) { return e.Reconcile(t); })));
           }, py::arg("jobs"), py::arg("queues") = py::none(),
           "Makes the engine hold exactly these jobs (dicts: name, queue, user, task, tasks, "
           "running, weight, min_available) and, when given, these queues; returns what changed. "
           "A refused truth changes nothing.");
}

// Engine: scheduling steps and read-only views.
void DefineReads(PyEngineClass& c) {
  c.def("step", [](PyEngine& self) -> py::object {
             auto r = Value(self.Run([&](Engine& e) { return e.Step(); }));
             if (!r) return py::none();
             return py::cast(self.MakeJob(*r));
           })
      .def("fill", Method(static_cast<StatusOr<int64_t> (Engine::*)()>(&Engine::Fill)))
      .def("job", [](PyEngine& self, const py::object& job) {
             const JobRef r = self.Resolve(job);
             return JobDict(Value(self.Run([&](Engine& e) { return e.GetJob(r); })));
           })
      .def("jobs", [](PyEngine& self) {
             py::list out;
             for (const JobInfo& j : self.Run([&](Engine& e) { return e.Jobs(); })) out.append(JobDict(j));
             return py::iter(out);
           }, "An iterator over every job (dicts), in submission order.")
      .def("queues", [](PyEngine& self) {
             std::vector<std::string> names;
             auto qs = self.Run([&](Engine& e) {
               names = e.ResourceNames();
               return e.Queues();
             });
             py::list out;
             for (const QueueInfo& q : qs) out.append(QueueDict(q, names));
             return py::iter(out);
           }, "An iterator over every queue (dicts), in path order.")
      .def("explain", [](PyEngine& self, const std::string& name) {
             return ExplanationDict(Value(self.Run([&](Engine& e) { return e.Explain(name); })));
           })
      .def("metrics", [](PyEngine& self) { return self.Run([](Engine& e) { return MetricsText(e); }); })
      .def("digest", Method(&Engine::DigestHex))
      .def_property_readonly("last_seq", Method(&Engine::last_seq))
      .def("__len__", Method(&Engine::job_count))
      .def("flush", Method(&Engine::Flush))
      .def("checkpoint", Method(&Engine::Checkpoint));
}

// A plan (docs/spec.md §15) and the serial number of the engine that made
// it: hdrf.Plan, read-only. `hdrf.Plan.__new__(hdrf.Plan)` makes an object
// that no constructor ran on (pybind11 allocates it lazily, with this
// operator new): zero-filled, its plan is null and every use raises.
struct PyPlan {
  std::shared_ptr<const Plan> plan;
  uint64_t engine = 0;
  static void* operator new(size_t n) { return std::memset(::operator new(n), 0, n); }
  static void operator delete(void* p) { ::operator delete(p); }

  const Plan& Get() const {
    if (!plan)
      Raise(Status::FailedPrecondition("hdrf.Plan is not initialised (make plans with Engine.plan)"));
    return *plan;
  }
  Job JobOf(JobId id, uint64_t seq) const { return Job{JobRef{id, seq}, engine}; }
};

// hdrf.Plan's read-only attributes.
void DefinePlanClass(py::module_& m) {
  py::class_<PyPlan>(m, "Plan",
                     "A plan (docs/spec.md §15): which running tasks should stop so that a "
                     "waiting job can start. Made by Engine.plan, applied by Engine.apply_plan.")
      .def_property_readonly("job", [](const PyPlan& p) { return p.JobOf(p.Get().id, p.Get().seq); })
      .def_property_readonly("name", [](const PyPlan& p) { return p.Get().job; })
      .def_property_readonly("mode", [](const PyPlan& p) { return PlanModeName(p.Get().mode); })
      .def_property_readonly("fits", [](const PyPlan& p) { return p.Get().fits; })
      .def_property_readonly("tasks", [](const PyPlan& p) { return p.Get().tasks; })
      .def_property_readonly("victims", [](const PyPlan& p) {
             py::list out;
             for (const PlanVictim& v : p.Get().victims) out.append(py::make_tuple(v.name, v.tasks));
             return out;
           }, "[(job name, tasks)] in plan order; empty when it does not fit.")
      .def_property_readonly("victim_jobs", [](const PyPlan& p) {
             py::list out;
             for (const PlanVictim& v : p.Get().victims) out.append(p.JobOf(v.id, v.seq));
             return out;
           }, "The victims as hdrf.Job values, in plan order.")
      .def_property_readonly("short", [](const PyPlan& p) { return p.Get().short_by; },
           "{resource: amount still missing} in canonical units when it does not fit.")
      .def_property_readonly("made_at_seq", [](const PyPlan& p) { return p.Get().made_at_seq; })
      .def("__repr__", [](const PyPlan& p) -> std::string {
             if (!p.plan) return "<hdrf.Plan, not initialised>";
             const Plan& plan = *p.plan;
             return "<hdrf.Plan for " + plan.job + ": " + (plan.fits ? "fits" : "does not fit") +
                    ", " + std::to_string(plan.victims.size()) + " victims>";
           });
}

// engine.plan(job, mode="reclaim", max_victims=None), engine.apply_plan(plan).
void DefinePlans(py::module_& m, PyEngineClass& c) {
  DefinePlanClass(m);
  c.def("plan", [](PyEngine& self, const py::object& job, const std::string& mode,
                   std::optional<int64_t> max_victims) {
         PlanOptions o;
         if (!ParsePlanMode(mode, &o.mode))
           Raise(Status::InvalidArgument("plan mode '" + mode +
                                         "': expected reclaim, preempt or both"));
         o.max_victims = max_victims;
         const JobRef r = self.Resolve(job);
         Plan plan = Value(self.Run([&](Engine& e) { return e.Plan(r, o); }));
         return PyPlan{std::make_shared<const Plan>(std::move(plan)), self.serial()};
       }, py::arg("job"), py::arg("mode") = "reclaim", py::arg("max_victims") = py::none(),
       "The plan for a waiting job (a Job or a name); changes nothing. A plan that cannot be "
       "found is not an error: fits is False and short says what is missing.")
      .def("apply_plan", [](PyEngine& self, const PyPlan& p) {
         const Plan& plan = p.Get();
         if (p.engine != self.serial())
           Raise(Status::InvalidArgument("plan for job " + plan.job +
                                         " belongs to another engine"));
         Check(self.Run([&](Engine& e) { return e.ApplyPlan(plan); }));
       }, py::arg("plan"),
       "Applies a plan made by this engine as one event; hdrf.StalePlanError when the state "
       "changed under it (nothing changes: plan again).");
}

void DefineEngine(py::module_& m) {
  PyEngineClass c(m, "Engine", "An hdrf engine; use it in a `with` block or call close().");
  DefineConstructors(c);
  DefineFollowerMethods(c);
  DefineLifetime(c);
  DefineEvents(c);
  DefineReads(c);
  DefinePlans(m, c);
}

}  // namespace hdrf::python
