// The C interface (api/hdrf_c.h) over hdrf::Engine (api/engine.h).
//
// Handles. An hdrf_engine_t is a small record that is never freed: the
// engine it holds is, on destroy, but the record stays (in the registry) so
// that its address is never reused and a stale handle is recognised instead
// of pointing at someone else's engine or at freed memory. Every call first
// looks the pointer up in the registry (so a pointer that is no handle is
// refused without being read), then holds the record's lock in shared mode
// for the duration of the call; close and destroy take it exclusively, so
// they wait for the calls in flight and the engine is never freed under one.
//
// No exception leaves this file: every entry point runs its body through
// Guard(), which turns a C++ exception (bad_alloc) into HDRF_INTERNAL.
#include "hdrf/c.h"

#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>  // std::shared_lock
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "hdrf/config.h"
#include "hdrf/engine.h"
#include "hdrf/metrics.h"
#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

using hdrf::Status;
using hdrf::StatusOr;

struct hdrf_options {
  hdrf::EngineOptions options;
};

namespace {

// A shared/exclusive lock that lets a waiting exclusive locker in first:
// new shared lockers wait while one waits. (glibc's rwlock, behind
// std::shared_mutex, prefers readers, so a destroy could wait forever
// behind a stream of overlapping calls.) Not recursive.
class GateLock {
 public:
  void lock_shared() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !writer_ && writers_waiting_ == 0; });
    ++readers_;
  }
  void unlock_shared() {
    std::lock_guard<std::mutex> l(mu_);
    if (--readers_ == 0 && writers_waiting_ > 0) cv_.notify_all();
  }
  void lock() {
    std::unique_lock<std::mutex> l(mu_);
    ++writers_waiting_;
    cv_.wait(l, [&] { return !writer_ && readers_ == 0; });
    --writers_waiting_;
    writer_ = true;
  }
  void unlock() {
    std::lock_guard<std::mutex> l(mu_);
    writer_ = false;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int readers_ = 0;
  int writers_waiting_ = 0;
  bool writer_ = false;
};

// What a live handle owns; freed on destroy.
struct EngineState {
  std::unique_ptr<hdrf::Engine> engine;
  hdrf::LatencyHistogram latency;
};

}  // namespace

struct hdrf_engine {
  GateLock mu;                         // shared: a call in flight; exclusive: close, destroy
  std::unique_ptr<EngineState> state;  // null once destroyed
  bool closed = false;
};

namespace {

// Every handle ever made. Heap-allocated and never destroyed, so handles
// stay reachable (and valid to look up) until the process exits, static
// destructors included.
struct Registry {
  std::mutex mu;
  std::unordered_set<const hdrf_engine*> handles;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

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

// Runs `body` (returning Status) and reports its result; exceptions become
// HDRF_INTERNAL.
template <typename F>
hdrf_code Guard(char** errptr, F&& body) {
  try {
    return Report(body(), errptr);
  } catch (const std::exception& e) {
    return Report(Status::Internal(std::string("hdrf C interface: ") + e.what()), errptr);
  } catch (...) {
    return Report(Status::Internal("hdrf C interface: unknown exception"), errptr);
  }
}

Status NullArg(const char* what) { return Status::InvalidArgument(std::string(what) + " is NULL"); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "cpu=1,memory=1Gi" -> amounts. `what` names the list in errors;
// `known_names` demands names IsKnownResourceName accepts (cluster lists).
StatusOr<hdrf::ResourceAmounts> ParseResourceList(const char* text, const std::string& what,
                                                  bool known_names) {
  hdrf::ResourceAmounts out;
  if (!text) return out;
  std::string_view all(text);
  if (Trim(all).empty()) return out;
  size_t start = 0;
  for (;;) {
    const size_t comma = all.find(',', start);
    std::string_view item =
        all.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Status::InvalidArgument(what + ": '" + std::string(Trim(item)) +
                                     "' is not NAME=QUANTITY");
    const std::string name(Trim(item.substr(0, eq)));
    const std::string_view value = Trim(item.substr(eq + 1));
    if (name.empty())
      return Status::InvalidArgument(what + ": '" + std::string(Trim(item)) +
                                     "' has no resource name");
    if (known_names && !hdrf::IsKnownResourceName(name))
      return Status::InvalidArgument(what + ": unknown resource '" + name + "'");
    if (out.count(name)) return Status::InvalidArgument(what + ": resource '" + name + "' given twice");
    auto q = hdrf::ParseQuantity(name, value);
    if (!q.ok()) return q.status().WithContext(what);
    out[name] = *q;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

StatusOr<hdrf::QueueSpec> ToQueueSpec(const hdrf_queue_spec_t* c) {
  if (!c) return NullArg("queue spec");
  if (!c->path) return NullArg("queue spec path");
  hdrf::QueueSpec q;
  q.path = c->path;
  q.weight = c->weight;
  HDRF_ASSIGN_OR_RETURN(q.capability, ParseResourceList(c->capability, "queue " + q.path + ": capability", false));
  HDRF_ASSIGN_OR_RETURN(q.guarantee, ParseResourceList(c->guarantee, "queue " + q.path + ": guarantee", false));
  q.reclaimable = c->reclaimable != 0;
  if (c->state < HDRF_QUEUE_OPEN || c->state > HDRF_QUEUE_CLOSED)
    return Status::InvalidArgument("queue " + q.path + ": state " + std::to_string(c->state) +
                                   " is not an HDRF_QUEUE_* value");
  q.state = static_cast<hdrf::QueueState>(c->state);
  q.min_user_limit_percent = c->min_user_limit_percent;
  if (c->user_limit_factor != 0) q.user_limit_factor = c->user_limit_factor;
  return q;
}

StatusOr<hdrf::JobSpec> ToJobSpec(const hdrf_job_spec_t* c) {
  if (!c) return NullArg("job spec");
  if (!c->name) return NullArg("job name");
  hdrf::JobSpec j;
  j.name = c->name;
  if (c->queue) j.queue = c->queue;
  if (c->user) j.user = c->user;
  j.tasks = c->tasks;
  HDRF_ASSIGN_OR_RETURN(j.task, ParseResourceList(c->task, "job " + j.name + ": task", false));
  j.weight = c->weight;
  j.min_available = c->min_available;
  return j;
}

// A call on an engine handle: looks the handle up and holds it for the
// duration of the call.
class Use {
 public:
  // `event`: the call changes state (refused once the engine is closed).
  Use(hdrf_engine_t* h, bool event) {
    if (!h) {
      status_ = Status::InvalidArgument("engine handle is NULL");
      return;
    }
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> l(r.mu);
      if (!r.handles.count(h)) {
        status_ = Status::InvalidArgument("engine handle " + PtrText(h) +
                                          " was not made by hdrf_engine_create* or hdrf_engine_open");
        return;
      }
    }
    lock_ = std::shared_lock<GateLock>(h->mu);
    if (!h->state) {
      status_ = Status::InvalidArgument("engine handle " + PtrText(h) + " was destroyed");
    } else if (event && h->closed) {
      status_ = Status::FailedPrecondition("engine is closed");
    } else {
      state_ = h->state.get();
    }
  }
  const Status& status() const { return status_; }
  hdrf::Engine& engine() const { return *state_->engine; }
  hdrf::LatencyHistogram& latency() const { return state_->latency; }

  static std::string PtrText(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
  }

 private:
  Status status_;
  EngineState* state_ = nullptr;
  std::shared_lock<GateLock> lock_;
};

// Times an accepted event into the engine's latency histogram.
template <typename F>
Status Timed(const Use& u, F&& event) {
  const auto t0 = std::chrono::steady_clock::now();
  Status s = event();
  if (s.ok()) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
    u.latency().Observe(static_cast<uint64_t>(ns < 0 ? 0 : ns));
  }
  return s;
}

// The outputs of hdrf_step and hdrf_step_where.
Status StepResult(const Use& u, const std::optional<hdrf::JobRef>& ref, int* stepped,
                  char** job_name) {
  if (stepped) *stepped = ref.has_value() ? 1 : 0;
  if (ref && job_name) {
    auto info = u.engine().GetJob(*ref);
    char* name = CopyString(info.ok() ? info->name : std::string());
    if (!name) return Status::Internal("out of memory (the step was made)");
    *job_name = name;
  }
  return Status::Ok();
}

Status MakeHandle(std::unique_ptr<hdrf::Engine> engine, hdrf_engine_t** out) {
  auto h = std::make_unique<hdrf_engine>();
  h->state = std::make_unique<EngineState>();
  h->state->engine = std::move(engine);
  Registry& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  r.handles.insert(h.get());
  *out = h.release();  // owned by the registry from now on
  return Status::Ok();
}

hdrf::EngineOptions OptionsOf(const hdrf_options_t* o) { return o ? o->options : hdrf::EngineOptions(); }

// Runs a scenario's steps on `eng`, as hdrf sim does (api/sim.cc).
Status RunSteps(hdrf::Engine& eng, const hdrf::Scenario& sc) {
  for (size_t i = 0; i < sc.steps.size(); ++i) {
    const hdrf::ScenarioStep& st = sc.steps[i];
    Status s;
    switch (st.kind) {
      case hdrf::ScenarioStep::Kind::kFill:
        s = eng.Fill().status();
        break;
      case hdrf::ScenarioStep::Kind::kFinish:
      case hdrf::ScenarioStep::Kind::kRemove: {
        auto ref = eng.FindJob(st.job);
        if (!ref.ok()) {
          s = ref.status();
          break;
        }
        s = st.kind == hdrf::ScenarioStep::Kind::kFinish ? eng.Finish(*ref, st.tasks)
                                                          : eng.Remove(*ref);
        break;
      }
      case hdrf::ScenarioStep::Kind::kSubmit:
        s = eng.Submit(st.submit).status();
        break;
    }
    if (!s.ok()) {
      std::string where = "step " + std::to_string(i + 1);
      if (st.line > 0) where += " (line " + std::to_string(st.line) + ")";
      return s.WithContext(where);
    }
  }
  return Status::Ok();
}

Status CreateFromScenario(const StatusOr<hdrf::Scenario>& sc, int run_steps,
                          const hdrf_options_t* options, hdrf_engine_t** out) {
  if (!sc.ok()) return sc.status();
  hdrf::EngineOptions o = OptionsOf(options);
  if (!o.overcommit_factor) o.overcommit_factor = sc->overcommit_factor;
  auto eng = hdrf::Engine::Create(sc->cluster, sc->queues, o);
  if (!eng.ok()) return eng.status();
  for (size_t i = 0; i < sc->jobs.size(); ++i) {
    auto r = (*eng)->Submit(sc->jobs[i]);
    if (!r.ok()) {
      std::string where = "job " + std::to_string(i + 1);
      if (sc->jobs[i].line > 0) where += " (line " + std::to_string(sc->jobs[i].line) + ")";
      return r.status().WithContext(where);
    }
  }
  if (run_steps) HDRF_RETURN_IF_ERROR(RunSteps(**eng, *sc));
  return MakeHandle(std::move(eng).value(), out);
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
Status OnJob(const Use& u, const char* name, F&& event) {
  if (!name) return NullArg("job name");
  auto ref = u.engine().FindJob(name);
  if (!ref.ok()) return ref.status();
  Status s = Timed(u, [&] { return event(*ref); });
  if (s.code() == hdrf::StatusCode::kNotFound && !u.engine().FindJob(name).ok())
    return Status::NotFound("job " + std::string(name) + ": unknown job");
  return s;
}

StatusOr<hdrf::QueueInfo> FindQueue(const hdrf::Engine& eng, const char* path) {
  if (!path) return NullArg("queue path");
  for (hdrf::QueueInfo& q : eng.Queues())
    if (q.path == path) return std::move(q);
  return Status::NotFound("queue " + std::string(path) + ": does not exist");
}

// Close and destroy: looked up like any call, then the record's lock taken
// exclusively (waits for calls in flight).
Status LockExclusive(hdrf_engine_t* h, std::unique_lock<GateLock>* lock) {
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> l(r.mu);
    if (!r.handles.count(h))
      return Status::InvalidArgument("engine handle " + Use::PtrText(h) +
                                     " was not made by hdrf_engine_create* or hdrf_engine_open");
  }
  *lock = std::unique_lock<GateLock>(h->mu);
  if (!h->state) return Status::InvalidArgument("engine handle " + Use::PtrText(h) + " was destroyed");
  return Status::Ok();
}

Status GetJobInfo(hdrf_engine_t* engine, const char* name, hdrf_job_info_t* info) {
  Use u(engine, false);
  HDRF_RETURN_IF_ERROR(u.status());
  if (!name) return NullArg("job name");
  if (!info) return NullArg("info");
  HDRF_ASSIGN_OR_RETURN(hdrf::JobInfo j, u.engine().GetJob(name));
  info->tasks = j.tasks;
  info->allocated = j.allocated;
  info->state = static_cast<int>(j.state);
  info->blocked = j.blocked ? 1 : 0;
  info->key = j.key;
  info->share = j.drf_share;
  info->weight = j.weight;
  info->min_available = j.min_available;
  info->seq = j.seq;
  return Status::Ok();
}

template <typename T>
void SetNull(T** p) {
  if (p) *p = nullptr;
}

}  // namespace

extern "C" {

const char* hdrf_code_name(hdrf_code code) {
  if (code < HDRF_OK || code > HDRF_INTERNAL) return "Unknown";
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
  return Guard(errptr, [&]() -> Status {
    if (!options) return NullArg("options");
    if (!std::isfinite(factor) || factor < 0)
      return Status::InvalidArgument("overcommit factor must be a finite number >= 0 (0 = off)");
    if (factor == 0) {
      options->options.overcommit_factor.reset();
    } else {
      options->options.overcommit_factor = factor;
    }
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_db_path(hdrf_options_t* options, const char* path, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!options) return NullArg("options");
    options->options.db_path = path ? path : "";
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_durability(hdrf_options_t* options, int durability, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!options) return NullArg("options");
    switch (durability) {
      case HDRF_DURABILITY_SYNC: options->options.durability = hdrf::Durability::kSync; break;
      case HDRF_DURABILITY_ASYNC: options->options.durability = hdrf::Durability::kAsync; break;
      case HDRF_DURABILITY_NONE: options->options.durability = hdrf::Durability::kNone; break;
      default:
        return Status::InvalidArgument("durability " + std::to_string(durability) +
                                       " is not an HDRF_DURABILITY_* value");
    }
    return Status::Ok();
  });
}

hdrf_code hdrf_options_set_checkpoint_every(hdrf_options_t* options, uint64_t events,
                                            char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!options) return NullArg("options");
    options->options.checkpoint_every = events;
    return Status::Ok();
  });
}

// ---- specs ----

void hdrf_queue_spec_init(hdrf_queue_spec_t* spec) {
  if (!spec) return;
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
  spec->name = nullptr;
  spec->queue = nullptr;
  spec->user = nullptr;
  spec->tasks = 1;
  spec->task = nullptr;
  spec->weight = 1;
  spec->min_available = 1;
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
  return Guard(errptr, [&]() -> Status {
    if (!engine) return Status::InvalidArgument("engine handle is NULL");
    std::unique_lock<GateLock> lock;
    HDRF_RETURN_IF_ERROR(LockExclusive(engine, &lock));
    if (engine->closed) return Status::FailedPrecondition("engine is closed already");
    engine->closed = true;
    return engine->state->engine->Close();
  });
}

hdrf_code hdrf_engine_destroy(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    if (!engine) return Status::Ok();
    std::unique_ptr<EngineState> state;
    bool was_closed;
    {
      std::unique_lock<GateLock> lock;
      HDRF_RETURN_IF_ERROR(LockExclusive(engine, &lock));
      state = std::move(engine->state);
      was_closed = engine->closed;
      engine->closed = true;
    }
    // Outside the lock: calls that start now see a destroyed handle.
    Status s = was_closed ? Status::Ok() : state->engine->Close();
    state.reset();
    return s;
  });
}

// ---- events ----

hdrf_code hdrf_queue_create(hdrf_engine_t* engine, const hdrf_queue_spec_t* spec, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(hdrf::QueueSpec q, ToQueueSpec(spec));
    return Timed(u, [&] { return u.engine().CreateQueue(q); });
  });
}

hdrf_code hdrf_queue_update(hdrf_engine_t* engine, const hdrf_queue_spec_t* spec, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(hdrf::QueueSpec q, ToQueueSpec(spec));
    return Timed(u, [&] { return u.engine().UpdateQueue(q); });
  });
}

hdrf_code hdrf_queue_set_state(hdrf_engine_t* engine, const char* path, int state, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!path) return NullArg("queue path");
    if (state < HDRF_QUEUE_OPEN || state > HDRF_QUEUE_CLOSED)
      return Status::InvalidArgument("queue " + std::string(path) + ": state " +
                                     std::to_string(state) + " is not an HDRF_QUEUE_* value");
    return Timed(u, [&] {
      return u.engine().SetQueueState(path, static_cast<hdrf::QueueState>(state));
    });
  });
}

hdrf_code hdrf_queue_delete(hdrf_engine_t* engine, const char* path, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!path) return NullArg("queue path");
    return Timed(u, [&] { return u.engine().DeleteQueue(path); });
  });
}

hdrf_code hdrf_set_capacity(hdrf_engine_t* engine, const char* cluster, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!cluster) return NullArg("cluster");
    HDRF_ASSIGN_OR_RETURN(hdrf::ResourceAmounts c, ParseResourceList(cluster, "cluster", true));
    return Timed(u, [&] { return u.engine().SetCapacity(c); });
  });
}

hdrf_code hdrf_job_submit(hdrf_engine_t* engine, const char* name, const char* queue,
                          const char* user, int64_t tasks, const char* task, char** errptr) {
  hdrf_job_spec_t spec;
  hdrf_job_spec_init(&spec);
  spec.name = name;
  spec.queue = queue;
  spec.user = user;
  spec.tasks = tasks;
  spec.task = task;
  return hdrf_job_submit_spec(engine, &spec, errptr);
}

hdrf_code hdrf_job_submit_spec(hdrf_engine_t* engine, const hdrf_job_spec_t* spec, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    HDRF_ASSIGN_OR_RETURN(hdrf::JobSpec j, ToJobSpec(spec));
    return Timed(u, [&] { return u.engine().Submit(j).status(); });
  });
}

hdrf_code hdrf_job_remove(hdrf_engine_t* engine, const char* name, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Remove(r); });
  });
}

hdrf_code hdrf_job_allocate(hdrf_engine_t* engine, const char* name, int64_t n, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Allocate(r, n); });
  });
}

hdrf_code hdrf_job_release(hdrf_engine_t* engine, const char* name, int64_t n, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Release(r, n); });
  });
}

hdrf_code hdrf_job_finish(hdrf_engine_t* engine, const char* name, int64_t n, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return OnJob(u, name, [&](hdrf::JobRef r) { return u.engine().Finish(r, n); });
  });
}

// ---- scheduling ----

hdrf_code hdrf_step(hdrf_engine_t* engine, int* stepped, char** job_name, char** errptr) {
  SetNull(job_name);
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    std::optional<hdrf::JobRef> ref;
    HDRF_RETURN_IF_ERROR(Timed(u, [&]() -> Status {
      HDRF_ASSIGN_OR_RETURN(ref, u.engine().Step());
      return Status::Ok();
    }));
    return StepResult(u, ref, stepped, job_name);
  });
}

hdrf_code hdrf_fill(hdrf_engine_t* engine, int64_t* steps, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
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
    Use u(engine, false);
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

// ---- host placement ----

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
  CPlacement(hdrf::Engine& engine, hdrf_placement_fn fn, void* user)
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
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!can_place) return NullArg("can_place");
    const CPlacement test(u.engine(), can_place, user);
    std::optional<hdrf::JobRef> ref;
    HDRF_RETURN_IF_ERROR(Timed(u, [&]() -> Status {
      HDRF_ASSIGN_OR_RETURN(ref, u.engine().StepWhere(test.fn(), skips ? &skips->set : nullptr));
      return Status::Ok();
    }));
    return StepResult(u, ref, stepped, job_name);
  });
}

hdrf_code hdrf_fill_where(hdrf_engine_t* engine, hdrf_placement_fn can_place, void* user,
                          hdrf_skips_t* skips, int64_t* steps, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!can_place) return NullArg("can_place");
    const CPlacement test(u.engine(), can_place, user);
    HDRF_ASSIGN_OR_RETURN(int64_t n, u.engine().FillWhere(test.fn(), skips ? &skips->set : nullptr));
    if (steps) *steps = n;
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
    Use u(engine, false);
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
    Use u(engine, false);
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
    Use u(engine, false);
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
    Use u(engine, false);
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
      Use u(engine, false);                                               \
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
    Use u(engine, false);
    HDRF_RETURN_IF_ERROR(u.status());
    if (!text) return NullArg("text");
    hdrf::MetricsOptions mo;
    mo.event_latency = &u.latency();
    const std::string m = hdrf::MetricsText(u.engine(), mo);
    *text = CopyString(m);
    if (!*text) return Status::Internal("out of memory");
    if (len) *len = m.size();
    return Status::Ok();
  });
}

// ---- persistence ----

hdrf_code hdrf_flush(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return u.engine().Flush();
  });
}

hdrf_code hdrf_checkpoint(hdrf_engine_t* engine, char** errptr) {
  return Guard(errptr, [&]() -> Status {
    Use u(engine, true);
    HDRF_RETURN_IF_ERROR(u.status());
    return u.engine().Checkpoint();
  });
}

}  // extern "C"
