/* hdrf C interface: the engine for hosts written in C, Go (cgo), Rust (FFI)
   or Python (ctypes/cffi). Plain C99; the C++ API it wraps is hdrf/engine.h.
   docs/c_api.md has the full guide and an example.

   Error model
   -----------
   Every function that can fail returns an hdrf_code: HDRF_OK (0) or one of
   the codes below (the numbering of hdrf::StatusCode). Its last parameter is
   `char** errptr`, used as in LevelDB's C API: on failure, when errptr is
   not NULL, a message saying what went wrong is stored in *errptr (a
   NUL-terminated string from malloc; free it with hdrf_free). If *errptr was
   not NULL on entry it is freed before the new message is stored, so start
   with `char* err = NULL;` and reuse it. On success *errptr is left as it
   was. There is no thread-local "last error": the message travels with the
   call, which is what cgo needs (a goroutine may change threads between two
   C calls). No function throws, aborts or crashes on bad input: a NULL or
   unknown engine handle, a NULL argument, an unknown queue, job or resource,
   a quantity in the wrong unit or a buffer that is too small all give a
   code and a message. A refused call changes nothing in the engine.

   Memory ownership
   ----------------
   Strings passed in are only read during the call (the engine copies what
   it keeps). Strings handed out (*errptr, job names, queue paths, metrics
   text) come from malloc and belong to the caller: free them with
   hdrf_free (which is free()); the one exception, the const char* names
   that a plan's accessors hand out, belong to the plan (hdrf_plan_free). Out-parameters are written only on success,
   except that pointer outputs (char**, hdrf_engine_t**) are set to NULL on
   failure.

   Handles and thread safety
   -------------------------
   An hdrf_engine_t* comes from an hdrf_engine_create*, hdrf_engine_open or
   hdrf_engine_open_follower call and is released by hdrf_engine_destroy.
   Every function on an engine may be called from any number of threads at
   once: events are applied one at a time in a total order, and a view
   taken after an event returned reflects it. hdrf_engine_close and
   hdrf_engine_destroy wait for the calls in flight on the same engine to
   return; calls that start afterwards fail cleanly
   (HDRF_FAILED_PRECONDITION after close for events, HDRF_INVALID_ARGUMENT
   after destroy). A destroyed handle stays recognisable: destroying it
   again or using it is an error, not a crash, even after its slot holds a
   new engine (handles are generation-checked slots of a fixed table, never
   dereferenced; destroy releases the engine's memory; docs/c_api.md
   "Handles"). At most 4,096 engines are alive at once. Calls on an engine
   take no process-wide lock; creating or destroying an engine holds one
   process-wide mutex (the handle table's free list) for a few
   instructions. An hdrf_options_t is not thread-safe: do not change it
   while another thread uses it.

   Quantities and resource lists
   -----------------------------
   Amounts are given as Kubernetes quantities (docs/spec.md §2) in resource lists:
   "cpu=10,memory=64Gi,nvidia.com/gpu=8" (spaces around items, names and
   values are ignored; "" or NULL is the empty list). The unit of a value
   follows its resource: "1x", "0.5m" for cpu or "-1" are refused with
   HDRF_INVALID_ARGUMENT and a message quoting the text. Amounts handed out
   are canonical integers: cpu in millicores, memory in bytes, any other
   resource in milli-units (1 GPU = 1000).
*/
#ifndef HDRF_C_H_
#define HDRF_C_H_

#include <stddef.h>
#include <stdint.h>

#include "hdrf/version.h"

#if defined(_WIN32)
#define HDRF_EXPORT
#elif defined(__GNUC__)
#define HDRF_EXPORT __attribute__((visibility("default")))
#else
#define HDRF_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Raised when a function changes incompatibly. */
#define HDRF_C_API_VERSION 2

/* The version of the library actually loaded, "0.1.0" (a static string);
   *major, *minor, *patch (each optional) receive its parts. Compare with
   HDRF_VERSION_* (hdrf/version.h, the headers compiled against): the
   SONAME changes whenever the binary interface does, so a program runs
   only against a library of the same major.minor (0.x) or major (1.0 on). */
HDRF_EXPORT const char* hdrf_version(int* major, int* minor, int* patch);

/* ---- codes and enumerations (plain ints, stable values) ---------------- */

typedef int hdrf_code;
enum {
  HDRF_OK = 0,
  HDRF_INVALID_ARGUMENT = 1,    /* malformed input, NULL/bad handle, a spec rule broken */
  HDRF_NOT_FOUND = 2,           /* unknown queue, job or resource */
  HDRF_ALREADY_EXISTS = 3,      /* duplicate name */
  HDRF_FAILED_PRECONDITION = 4, /* not allowed in the current state (closed engine...) */
  HDRF_OUT_OF_RANGE = 5,        /* overflow, release below zero, buffer too small */
  HDRF_CORRUPTION = 6,          /* damaged store or file */
  HDRF_IO_ERROR = 7,            /* the operating system refused */
  HDRF_UNIMPLEMENTED = 8,
  HDRF_INTERNAL = 9,            /* a bug, or out of memory */
  HDRF_ABORTED = 10             /* a stale plan: the state changed under it (plan again);
                                   only hdrf_apply_plan returns it */
};

/* Job states (docs/spec.md §12). */
enum {
  HDRF_JOB_PENDING = 0,
  HDRF_JOB_INQUEUE = 1,
  HDRF_JOB_RUNNING = 2,
  HDRF_JOB_UNKNOWN = 3
};

/* Queue states (docs/spec.md §3). */
enum { HDRF_QUEUE_OPEN = 0, HDRF_QUEUE_CLOSING = 1, HDRF_QUEUE_CLOSED = 2 };

/* Durability of events with a store (docs/spec.md §9). */
enum { HDRF_DURABILITY_SYNC = 0, HDRF_DURABILITY_ASYNC = 1, HDRF_DURABILITY_NONE = 2 };

/* Size of the buffer hdrf_digest needs: 16 hex digits and a NUL. */
#define HDRF_DIGEST_SIZE 17

/* "OK", "InvalidArgument", ... ; "Unknown" for other values. Static string. */
HDRF_EXPORT const char* hdrf_code_name(hdrf_code code);
/* "Pending", "Inqueue", "Running", "Unknown"; NULL for other values. */
HDRF_EXPORT const char* hdrf_job_state_name(int state);
/* "open", "closing", "closed"; NULL for other values. */
HDRF_EXPORT const char* hdrf_queue_state_name(int state);

/* Frees a string handed out by this interface. NULL is allowed. */
HDRF_EXPORT void hdrf_free(void* ptr);
/* Frees a list of `n` strings handed out by this interface (hdrf_queue_paths,
   hdrf_resource_names): each string and the array. NULL is allowed. */
HDRF_EXPORT void hdrf_free_strings(char** list, size_t n);

/* Parses one quantity of `resource` into canonical units (docs/spec.md §2).
   parse_quantity("cpu", "500m") = 500; ("memory", "1Gi") = 1073741824. */
HDRF_EXPORT hdrf_code hdrf_parse_quantity(const char* resource, const char* text,
                                          int64_t* amount, char** errptr);

/* ---- engine options ---------------------------------------------------- */

typedef struct hdrf_options hdrf_options_t;

/* Defaults: memory only, gate off, durability sync, a checkpoint every
   1,000,000 events (or 4 per live job when that is more). Returns NULL
   only when out of memory. */
HDRF_EXPORT hdrf_options_t* hdrf_options_create(void);
HDRF_EXPORT void hdrf_options_destroy(hdrf_options_t* options); /* NULL ok */
/* docs/spec.md §12 enqueue gate factor; 0 turns the gate off (the default). Values
   that are negative or not finite are refused. */
HDRF_EXPORT hdrf_code hdrf_options_set_overcommit_factor(hdrf_options_t* options, double factor,
                                                         char** errptr);
/* Directory of the store; NULL or "" = memory only. hdrf_engine_open
   takes its path as an argument instead. */
HDRF_EXPORT hdrf_code hdrf_options_set_db_path(hdrf_options_t* options, const char* path,
                                               char** errptr);
/* HDRF_DURABILITY_*. */
HDRF_EXPORT hdrf_code hdrf_options_set_durability(hdrf_options_t* options, int durability,
                                                  char** errptr);
/* Background checkpoint after this many logged events, or after
   hdrf_options_set_checkpoint_events_per_job's k (default 4) per live job
   when that is more (EngineOptions checkpoint_every, docs/storage.md
   "Checkpoints"); 0 = only on hdrf_checkpoint and close. Default
   1,000,000. */
HDRF_EXPORT hdrf_code hdrf_options_set_checkpoint_every(hdrf_options_t* options, uint64_t events,
                                                        char** errptr);
/* k: a background checkpoint waits for at least k logged events per live
   job (EngineOptions checkpoint_events_per_job), so that checkpoints, whose
   cost grows with the jobs, cost a bounded amount per event; recovery then
   replays at most about k events per job after the newest checkpoint.
   0 = the interval of hdrf_options_set_checkpoint_every alone. Default 4.
   Every value is valid. */
HDRF_EXPORT hdrf_code hdrf_options_set_checkpoint_events_per_job(hdrf_options_t* options,
                                                                 uint32_t events, char** errptr);
/* How much log history a checkpoint keeps (EngineOptions
   log_retention_events and log_retention_seconds, docs/storage.md "Log
   retention"): at least the last `events` events (UINT64_MAX: every one)
   and at least the events of the last `seconds` seconds by event time; 0
   turns a rule off (the default for both: the log since the checkpoint
   before the newest). A negative `seconds` is refused. */
HDRF_EXPORT hdrf_code hdrf_options_set_log_retention(hdrf_options_t* options, uint64_t events,
                                                     int64_t seconds, char** errptr);
/* The event latency histogram (hdrf_event_latency_seconds in
   hdrf_metrics) times one in `every` event calls of each thread: a power
   of two, 1 = every call, 0 = none. Default 16. */
HDRF_EXPORT hdrf_code hdrf_options_set_latency_sample_every(hdrf_options_t* options,
                                                            uint32_t every, char** errptr);
/* The time logged with each event of a store (docs/storage.md "Event
   times"): fn(user) returns microseconds since the Unix epoch. It is called
   once per logged event, in sequence order, under the event log's lock, so
   it must be fast, must not call into the engine, and should not decrease;
   an embedder passes the platform's event time this way (for example a
   variable it sets before each call). fn NULL (the default): the host's
   clock. `user` is passed as is and must outlive the engines created with
   these options. */
typedef int64_t (*hdrf_clock_fn)(void* user);
HDRF_EXPORT hdrf_code hdrf_options_set_event_clock(hdrf_options_t* options, hdrf_clock_fn fn,
                                                   void* user, char** errptr);

/* ---- queue and job descriptions ----------------------------------------

   Versioned structs: hdrf_queue_spec_t, hdrf_job_spec_t, hdrf_job_info_t,
   hdrf_queue_info_t, hdrf_truth_job_t, hdrf_follower_options_t and
   hdrf_follower_lag_t begin with `struct_size`, which the caller sets to
   sizeof the struct it was compiled with: the *_init functions do it (and
   the HDRF_*_INIT initialisers for the outputs). A later version adds
   fields at the end only; the library reads and writes the fields that fit
   in struct_size and defaults the rest. A struct_size of 0 (not
   initialised) or one that is the size of no version this library knows
   (today each struct has one version: any other size, such as that of a
   program built against newer headers) is refused with
   HDRF_INVALID_ARGUMENT. */

typedef struct hdrf_queue_spec {
  size_t struct_size;         /* sizeof(hdrf_queue_spec_t); set by hdrf_queue_spec_init */
  const char* path;           /* "root/eng/dev"; required */
  double weight;              /* below 1 is raised to 1; default 1 */
  const char* capability;     /* resource list; NULL/"" = unlimited */
  const char* guarantee;      /* resource list; NULL/"" = none */
  int reclaimable;            /* 0/1; default 1 */
  int state;                  /* HDRF_QUEUE_*; default open */
  int min_user_limit_percent; /* 1..100; default 100 (no limit) */
  double user_limit_factor;   /* > 0; 0 = unset (default) */
} hdrf_queue_spec_t;

/* Fills *spec with the defaults above (path NULL). */
HDRF_EXPORT void hdrf_queue_spec_init(hdrf_queue_spec_t* spec);

typedef struct hdrf_job_spec {
  size_t struct_size;     /* sizeof(hdrf_job_spec_t); set by hdrf_job_spec_init */
  const char* name;       /* unique; required */
  const char* queue;      /* a leaf, a parent (admission, docs/spec.md §5) or NULL/"" = root */
  const char* user;       /* NULL = "default" */
  int64_t tasks;          /* default 1 */
  const char* task;       /* shape of one task, a resource list: "cpu=1,memory=1Gi" */
  double weight;          /* default 1 */
  int64_t min_available;  /* the gang size m (docs/spec.md §14): a job holding no task
                             starts with m tasks at once (one step) or not at
                             all; also the enqueue gate's m (docs/spec.md §12); 0 counts
                             as 1, capped at the job's task count; default 1 */
} hdrf_job_spec_t;

/* Fills *spec with the defaults above (name and task NULL). */
HDRF_EXPORT void hdrf_job_spec_init(hdrf_job_spec_t* spec);

/* ---- engines ----------------------------------------------------------- */

typedef struct hdrf_engine hdrf_engine_t;

/* A new engine over the cluster `cluster` (a resource list; every name
   must be a known resource name such as cpu, memory, pods or a
   domain-qualified one like nvidia.com/gpu) and `nqueues` queues (docs/spec.md §3
   rules; missing parents are created with weight 1). `queues` may be NULL
   when nqueues is 0. `options` may be NULL (defaults). */
HDRF_EXPORT hdrf_code hdrf_engine_create(const char* cluster, const hdrf_queue_spec_t* queues,
                                         size_t nqueues, const hdrf_options_t* options,
                                         hdrf_engine_t** engine, char** errptr);

/* A new engine from a queue configuration in YAML (docs/spec.md §3 forms 1-4, see
   docs/config.md). `cluster`, when not NULL or "", gives or overrides the
   cluster; otherwise the text must name one. A scenario's jobs are not
   submitted here (see hdrf_engine_create_from_scenario). `source_name`
   (NULL = "config") prefixes error messages, which name the line. */
HDRF_EXPORT hdrf_code hdrf_engine_create_from_config(const char* yaml, const char* source_name,
                                                     const char* cluster,
                                                     const hdrf_options_t* options,
                                                     hdrf_engine_t** engine, char** errptr);
/* The same, reading the file at `path`. */
HDRF_EXPORT hdrf_code hdrf_engine_create_from_config_file(const char* path, const char* cluster,
                                                          const hdrf_options_t* options,
                                                          hdrf_engine_t** engine, char** errptr);

/* A new engine from a scenario (docs/spec.md §10): its cluster and queues, its jobs
   submitted in order and, when run_steps is not 0, its steps run as
   `hdrf sim` runs them. The scenario's overcommitFactor applies unless the
   options set one. */
HDRF_EXPORT hdrf_code hdrf_engine_create_from_scenario(const char* yaml, const char* source_name,
                                                       int run_steps,
                                                       const hdrf_options_t* options,
                                                       hdrf_engine_t** engine, char** errptr);
HDRF_EXPORT hdrf_code hdrf_engine_create_from_scenario_file(const char* path, int run_steps,
                                                            const hdrf_options_t* options,
                                                            hdrf_engine_t** engine,
                                                            char** errptr);

/* Recovers the engine persisted at `db_path` (docs/spec.md §9). The options give
   the durability and checkpoint interval from now on (their db_path is
   ignored). */
HDRF_EXPORT hdrf_code hdrf_engine_open(const char* db_path, const hdrf_options_t* options,
                                       hdrf_engine_t** engine, char** errptr);

/* Makes every applied event durable, writes a checkpoint and closes the
   store (a no-op without one). Afterwards events are refused with
   HDRF_FAILED_PRECONDITION; views still work. The handle must still be
   destroyed. Closing twice is HDRF_FAILED_PRECONDITION. */
HDRF_EXPORT hdrf_code hdrf_engine_close(hdrf_engine_t* engine, char** errptr);

/* Closes the engine if it is not closed and frees it. Returns the status
   of that close (the engine is freed in any case). NULL is a no-op
   (HDRF_OK); a handle destroyed before, or a pointer that is no engine
   handle, gives HDRF_INVALID_ARGUMENT. */
HDRF_EXPORT hdrf_code hdrf_engine_destroy(hdrf_engine_t* engine, char** errptr);

/* ---- followers and takeover (docs/storage.md "Followers") ------------

   A follower is an engine over a store that another process (or another
   engine of this process) is writing: read-only, kept up to date by a
   background thread (Engine::OpenFollower). Views, hdrf_explain,
   hdrf_digest and hdrf_metrics work (the metrics add
   hdrf_follower_lag_events and hdrf_follower_lag_seconds); every event —
   hdrf_job_submit*, allocate/release/finish/remove by name or ref,
   hdrf_apply, hdrf_apply_plan, hdrf_reconcile, queue and capacity
   events, hdrf_step*, hdrf_fill* — is refused with
   HDRF_FAILED_PRECONDITION and the message "engine is a read-only
   follower of DIR", and changes nothing;
   hdrf_flush and hdrf_checkpoint do nothing. A follower is an ordinary
   hdrf_engine_t*: close and release it with hdrf_engine_close and
   hdrf_engine_destroy. */

typedef struct hdrf_follower_options {
  size_t struct_size;            /* sizeof(hdrf_follower_options_t); set by the init */
  const char* secondary_path;    /* the follower's own directory (a RocksDB secondary
                                    instance); NULL/"" = a fresh temporary directory
                                    under $TMPDIR or /tmp, removed on close (default) */
  uint32_t catch_up_interval_ms; /* background catch-up period; default 20;
                                    0 = only on hdrf_follower_catch_up */
} hdrf_follower_options_t;

/* Fills *options with the defaults above. */
HDRF_EXPORT void hdrf_follower_options_init(hdrf_follower_options_t* options);

/* A follower of the store at `db_path` (which a writer may hold): loads its
   newest checkpoint and log, then follows the writer. `options` may be
   NULL (defaults). Nothing is written in db_path. A directory that holds
   no store gives HDRF_NOT_FOUND ("no store at DIR"). */
HDRF_EXPORT hdrf_code hdrf_engine_open_follower(const char* db_path,
                                                const hdrf_follower_options_t* options,
                                                hdrf_engine_t** engine, char** errptr);

/* Applies what the writer logged since the last catch-up, now (on top of
   the background catch-up). HDRF_FAILED_PRECONDITION on an engine that is
   not a follower (any longer: a promoted one is the writer). */
HDRF_EXPORT hdrf_code hdrf_follower_catch_up(hdrf_engine_t* engine, char** errptr);

/* How far a follower is behind its writer (Engine::FollowerLag). All zero
   on an engine that is not a follower (is_follower 0). Versioned like the
   views' structs: HDRF_FOLLOWER_LAG_INIT or hdrf_follower_lag_init. */
typedef struct hdrf_follower_lag {
  size_t struct_size;
  int is_follower;      /* 0/1 */
  uint64_t events;      /* writer_seq - applied_seq */
  double seconds;       /* since the start of the last catch-up that left nothing
                           to apply: bounds how stale the follower's views are */
  uint64_t applied_seq; /* the last event applied (= hdrf_last_seq) */
  uint64_t writer_seq;  /* the newest event in the store at the last catch-up */
  uint64_t reloads;     /* times it reloaded the newest checkpoint */
} hdrf_follower_lag_t;

#define HDRF_FOLLOWER_LAG_INIT {sizeof(hdrf_follower_lag_t)}
HDRF_EXPORT void hdrf_follower_lag_init(hdrf_follower_lag_t* lag);

HDRF_EXPORT hdrf_code hdrf_follower_lag(hdrf_engine_t* engine, hdrf_follower_lag_t* lag,
                                        char** errptr);

/* Warm standby: waits up to `wait_ms` milliseconds (-1: until it does; 0:
   only if it is free now) for the writer to release the store (its
   process died, or it was closed), applies the log tail and makes the
   follower the writer, with nothing acknowledged lost and no recovery from
   scratch: events are accepted from then on, continuing the writer's
   sequence numbers. `options` (NULL = defaults) gives the writer's
   durability, checkpoint cadence (hdrf_options_set_checkpoint_every and
   _events_per_job), log retention, latency sampling and event clock; its
   db_path and overcommit factor are ignored (the store's own are kept).
   When the wait runs out: HDRF_FAILED_PRECONDITION "store DIR: still held by ...; not
   promoted", and the engine stays a follower. A non-follower gives
   HDRF_FAILED_PRECONDITION. Other calls on the engine go on meanwhile, but
   hdrf_engine_close and hdrf_engine_destroy wait for the promotion (and
   hold new calls back while they wait): give a finite wait_ms when
   another thread may destroy the engine. */
HDRF_EXPORT hdrf_code hdrf_follower_promote(hdrf_engine_t* engine, int64_t wait_ms,
                                            const hdrf_options_t* options, char** errptr);

/* ---- events (each accepted one gets the next sequence number) ---------- */

HDRF_EXPORT hdrf_code hdrf_queue_create(hdrf_engine_t* engine, const hdrf_queue_spec_t* spec,
                                        char** errptr);
/* Replaces the settings of the queue at spec->path. */
HDRF_EXPORT hdrf_code hdrf_queue_update(hdrf_engine_t* engine, const hdrf_queue_spec_t* spec,
                                        char** errptr);
HDRF_EXPORT hdrf_code hdrf_queue_set_state(hdrf_engine_t* engine, const char* path, int state,
                                           char** errptr);
/* The queue must be closed and hold no jobs; its subtree goes with it. */
HDRF_EXPORT hdrf_code hdrf_queue_delete(hdrf_engine_t* engine, const char* path, char** errptr);
/* New cluster capacity; it must list exactly the cluster's resources. */
HDRF_EXPORT hdrf_code hdrf_set_capacity(hdrf_engine_t* engine, const char* cluster,
                                        char** errptr);

/* A job ref: what hdrf_job_submit* hands back for the fast path below.
   A plain value (copy it freely, no free function); its fields are opaque.
   It names one job of one engine: a ref of a removed job, of another
   engine or of a destroyed one is refused with a code and a message,
   never misapplied. The zero value {0, 0} is no job. */
typedef struct hdrf_job_ref {
  uint64_t id;
  uint64_t seq;
} hdrf_job_ref_t;

/* Submits a job: `tasks` tasks of shape `task` (a resource list) owned by
   `user` (NULL = "default") in `queue` (NULL/"" = root, admission).
   *job (optional) receives its ref. */
HDRF_EXPORT hdrf_code hdrf_job_submit(hdrf_engine_t* engine, const char* name, const char* queue,
                                      const char* user, int64_t tasks, const char* task,
                                      hdrf_job_ref_t* job, char** errptr);
/* The same with every field of a job (weight, min_available). */
HDRF_EXPORT hdrf_code hdrf_job_submit_spec(hdrf_engine_t* engine, const hdrf_job_spec_t* spec,
                                           hdrf_job_ref_t* job, char** errptr);
/* The job leaves with all its tasks. */
HDRF_EXPORT hdrf_code hdrf_job_remove(hdrf_engine_t* engine, const char* name, char** errptr);
/* n tasks of the job started (the host's own placement). n >= 1. */
HDRF_EXPORT hdrf_code hdrf_job_allocate(hdrf_engine_t* engine, const char* name, int64_t n,
                                        char** errptr);
/* n running tasks stopped and go back to waiting (preempted). */
HDRF_EXPORT hdrf_code hdrf_job_release(hdrf_engine_t* engine, const char* name, int64_t n,
                                       char** errptr);
/* n running tasks completed: allocation and task count both drop by n. */
HDRF_EXPORT hdrf_code hdrf_job_finish(hdrf_engine_t* engine, const char* name, int64_t n,
                                      char** errptr);

/* ---- the fast path: events on job refs --------------------------------

   These take no name lookup and no engine-wide lock: they run in parallel
   under the engine's lock sharding (docs/concurrency.md), as the C++
   Engine::Allocate(JobRef) does. The name-based calls above look the name
   up in the engine's name index first (Engine::FindJob: beside task
   events, under the engine's lock taken shared). */

/* The ref of the job called `name` (HDRF_NOT_FOUND when there is none). */
HDRF_EXPORT hdrf_code hdrf_job_find(hdrf_engine_t* engine, const char* name, hdrf_job_ref_t* job,
                                    char** errptr);
HDRF_EXPORT hdrf_code hdrf_job_allocate_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                                            char** errptr);
HDRF_EXPORT hdrf_code hdrf_job_release_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                                           char** errptr);
HDRF_EXPORT hdrf_code hdrf_job_finish_ref(hdrf_engine_t* engine, hdrf_job_ref_t job, int64_t n,
                                          char** errptr);
HDRF_EXPORT hdrf_code hdrf_job_remove_ref(hdrf_engine_t* engine, hdrf_job_ref_t job,
                                          char** errptr);

/* The job events of hdrf_apply_op and hdrf_apply (the values of the C++
   Event::Type; hdrf/op.h). */
enum {
  HDRF_OP_ALLOCATE = 0, /* n tasks started */
  HDRF_OP_RELEASE = 1,  /* n running tasks back to waiting */
  HDRF_OP_FINISH = 2,   /* n running tasks completed */
  HDRF_OP_REMOVE = 4    /* the job leaves (n ignored) */
};

/* One job event of any type: hdrf_apply_op(e, HDRF_OP_RELEASE, job, n, &err)
   is hdrf_job_release_ref(e, job, n, &err), and so on for each HDRF_OP_*
   (the four calls above are this call with a fixed type). Any other type
   is HDRF_INVALID_ARGUMENT naming the value ("op type 9 (set-capacity) is
   not a job event: expected allocate (0), ..."), and changes nothing. */
HDRF_EXPORT hdrf_code hdrf_apply_op(hdrf_engine_t* engine, int type, hdrf_job_ref_t job, int64_t n,
                                    char** errptr);

typedef struct hdrf_op {
  hdrf_job_ref_t job;
  int64_t n;
  int type; /* HDRF_OP_* */
} hdrf_op_t;

/* Applies `nops` ops in order (each converted as hdrf_apply_op converts
   one; task events take the engine's shard path, as single calls do) and,
   with a store, waits once for their durability (group commit: with sync
   durability every applied op is on disk when this returns). `op_size` is
   sizeof(hdrf_op_t) as the caller knows it (the stride of the array; a
   later version may add fields at the end). Each op is accepted or refused
   on its own, as if called alone: the batch is not atomic. results
   (optional, nops entries) receives each op's code; *applied (optional)
   the number applied. Returns HDRF_OK when every op was applied, else the
   code of the first refused op, with a message naming it ("op 3 of 1000
   (2 refused): job ref #7/3: no such job in this engine ..."), or, when
   ops were applied but could not be made durable, that error (C++
   hdrf::BatchStatus, hdrf/op.h); when the call itself is
   refused (bad handle, closed engine, NULL ops) every results entry gets
   that code and nothing is applied. */
HDRF_EXPORT hdrf_code hdrf_apply(hdrf_engine_t* engine, const hdrf_op_t* ops, size_t nops,
                                 size_t op_size, hdrf_code* results, size_t* applied,
                                 char** errptr);

/* ---- reconcile after restart (hdrf/reconcile.h) ------------------------ */

/* One job as the platform sees it (versioned: hdrf_truth_job_init). */
typedef struct hdrf_truth_job {
  size_t struct_size;
  const char* name;      /* required */
  const char* queue;     /* its leaf queue; required */
  const char* user;      /* NULL = "default" */
  const char* task;      /* shape of one task, a resource list */
  int64_t tasks;         /* tasks not finished; default 1 */
  int64_t running;       /* running tasks, 0..tasks; default 0 */
  double weight;         /* default 1 */
  int64_t min_available; /* default 1 */
} hdrf_truth_job_t;

HDRF_EXPORT void hdrf_truth_job_init(hdrf_truth_job_t* job);

/* Makes the engine hold exactly `jobs` (and, when match_queues is not 0,
   exactly the queues `queues`: every queue but root, missing parents
   implied) with the fewest ordinary events, each logged like any event:
   Engine::Reconcile, docs/embedding.md "Reconcile after restart". *events
   (optional) receives the number applied; *changes_json (optional, free
   with hdrf_free) a JSON object naming what changed: {"events": N,
   "queues_created": [...], "queues_updated": [...], "queues_deleted":
   [...], "jobs_removed": [...], "jobs_submitted": [...],
   "jobs_resubmitted": [...], "jobs_adjusted": [...]}. A refused truth
   (unknown queue or resource, bad counts, tasks that do not fit, an
   overflow) changes nothing: the events are tried on a copy first. */
HDRF_EXPORT hdrf_code hdrf_reconcile(hdrf_engine_t* engine, const hdrf_truth_job_t* jobs,
                                     size_t njobs, const hdrf_queue_spec_t* queues, size_t nqueues,
                                     int match_queues, uint64_t* events, char** changes_json,
                                     char** errptr);

/* ---- scheduling (docs/spec.md §5) ---------------------------------------------- */

/* One step: allocates one task to the job hdrf picks (m tasks when the job
   is a gang that holds no task yet, docs/spec.md §14: one step, one event).
   *stepped (optional) is 1 when a step was made (whatever its number of
   tasks: hdrf_job_get tells the job's allocation), 0 when no job could
   run. *job_name (optional) receives that job's name (malloc'd) or NULL
   when none ran; in the rare case that another thread removed the job
   before its name was read, the step happened and the name is "". */
HDRF_EXPORT hdrf_code hdrf_step(hdrf_engine_t* engine, int* stepped, char** job_name,
                                char** errptr);
/* hdrf_step with the chosen job's ref in *job ({0, 0} when none ran). */
HDRF_EXPORT hdrf_code hdrf_step_ref(hdrf_engine_t* engine, int* stepped, hdrf_job_ref_t* job,
                                    char** errptr);
/* Steps until none is possible; *steps (optional) receives their number
   (steps, not tasks: a gang's first step starts m tasks). */
HDRF_EXPORT hdrf_code hdrf_fill(hdrf_engine_t* engine, int64_t* steps, char** errptr);
/* The job a step would pick, without allocating: *job_name receives its
   name (malloc'd) or NULL when none could run. */
HDRF_EXPORT hdrf_code hdrf_pick_next(hdrf_engine_t* engine, char** job_name, char** errptr);

/* ---- host placement: fair order with a host's veto --------------------- */

/* A host's placement test (node affinity, GPU type, fragmentation): return
   nonzero when one more task of the job can be placed now. `task` holds one
   task's amounts (canonical units) for the resources named in `resources`,
   `n_resources` of each, in the engine's resource order. Every pointer is
   valid only during the call. It runs on the calling thread while the
   engine holds its exclusive lock: it must not call any hdrf_* function on
   the same engine (that would deadlock), and it should be quick. */
typedef int (*hdrf_placement_fn)(void* user, const char* job_name, const char* queue_path,
                                 const char* const* resources, const int64_t* task,
                                 size_t n_resources);

/* The jobs a placement test refused (hdrf::PlacementSkips): pass the same
   set to several calls to skip them without asking again, e.g. for one
   instant of a simulation; clear it when refusals may have become stale.
   Not thread-safe: one thread uses a set at a time. */
typedef struct hdrf_skips hdrf_skips_t;
HDRF_EXPORT hdrf_skips_t* hdrf_skips_create(void); /* NULL when out of memory */
HDRF_EXPORT void hdrf_skips_destroy(hdrf_skips_t* skips); /* NULL is ignored */
HDRF_EXPORT void hdrf_skips_clear(hdrf_skips_t* skips);
HDRF_EXPORT size_t hdrf_skips_size(const hdrf_skips_t* skips);

/* One step in fair order that skips the jobs `can_place` refuses
   (Engine::StepWhere): candidates are asked in the order a step would
   choose them until one is accepted; that job gets one task. Refused jobs
   are added to `skips` (NULL: a set for this call only). *stepped and
   *job_name as in hdrf_step. */
HDRF_EXPORT hdrf_code hdrf_step_where(hdrf_engine_t* engine, hdrf_placement_fn can_place,
                                      void* user, hdrf_skips_t* skips, int* stepped,
                                      char** job_name, char** errptr);
/* hdrf_step_where until none is possible, one skip set for the whole fill
   (NULL: one for this call); *steps (optional) receives their number. */
HDRF_EXPORT hdrf_code hdrf_fill_where(hdrf_engine_t* engine, hdrf_placement_fn can_place,
                                      void* user, hdrf_skips_t* skips, int64_t* steps,
                                      char** errptr);

/* ---- taking back: plans (docs/spec.md §15, hdrf/plan.h) -------------------------

   A plan answers "job J waits: which running tasks should stop so that J
   can start?". Making one changes nothing; applying one stops each
   victim's tasks (allocation down, task count unchanged) and allocates J's
   demand, as one atomic event logged like any other:

     hdrf_plan_t* plan = NULL;
     if (hdrf_plan(eng, job, HDRF_PLAN_RECLAIM, -1, &plan, &err) == HDRF_OK &&
         hdrf_plan_fits(plan)) {
       for (size_t i = 0; i < hdrf_plan_victim_count(plan); ++i)
         hdrf_plan_victim(plan, i, &ref, &name, &tasks, &err);  (stop them)
       if (hdrf_apply_plan(eng, plan, &err) == HDRF_ABORTED) ... (plan again)
     }
     hdrf_plan_free(plan);

   Ownership: an hdrf_plan_t* from hdrf_plan belongs to the caller, who
   releases it with hdrf_plan_free (NULL is allowed). It is a copy: it stays
   readable after the engine changed, closed or was destroyed. Strings the
   accessors hand out (const char*) belong to the plan and stay valid until
   hdrf_plan_free; do not free them. A plan is ordinary heap memory, not a
   checked handle: using it after hdrf_plan_free is undefined, as for any
   freed pointer. Reading one plan from several threads at once is safe;
   hdrf_plan_free must not race with readers. */

/* Which running tasks a plan may take (hdrf::PlanMode). */
enum {
  HDRF_PLAN_RECLAIM = 0, /* units in other leaf queues (across queues) */
  HDRF_PLAN_PREEMPT = 1, /* units in the waiting job's own leaf */
  HDRF_PLAN_BOTH = 2     /* either */
};

typedef struct hdrf_plan hdrf_plan_t;

/* The plan for the job `job` (Engine::Plan): victims whose units, stopped
   in order, let it start. `mode` is an HDRF_PLAN_* value; `max_victims`
   the most entries the plan may hold, -1 = no limit (0 fails every plan
   that needs a victim; below -1 is refused). A plan that cannot be found
   is not an error: HDRF_OK with hdrf_plan_fits 0, no victims and
   hdrf_plan_short saying what is missing. Errors: HDRF_NOT_FOUND for a
   removed job; HDRF_INVALID_ARGUMENT for a ref of another engine, the zero
   ref, a bad mode or max_victims; HDRF_FAILED_PRECONDITION when the job is
   Pending or has no unallocated task. Changes nothing; works on a
   follower. *plan is set to NULL on failure. */
HDRF_EXPORT hdrf_code hdrf_plan(hdrf_engine_t* engine, hdrf_job_ref_t job, int mode,
                                int64_t max_victims, hdrf_plan_t** plan, char** errptr);
/* Frees a plan. NULL is a no-op. */
HDRF_EXPORT void hdrf_plan_free(hdrf_plan_t* plan);

/* The accessors below read a plan and change nothing. Those returning a
   value give 0 (hdrf_plan_mode: -1) for a NULL plan; those returning an
   hdrf_code refuse a NULL plan with HDRF_INVALID_ARGUMENT and an index out
   of range with HDRF_OUT_OF_RANGE, and write their outputs (each optional)
   only on success. */

/* 1 when the demand fits once the victims are stopped (no victims: it
   fits now), else 0. */
HDRF_EXPORT int hdrf_plan_fits(const hdrf_plan_t* plan);
/* The demand k: the job's min_available m (docs/spec.md §14) when it holds no task,
   else 1. */
HDRF_EXPORT int64_t hdrf_plan_tasks(const hdrf_plan_t* plan);
/* The plan's mode, an HDRF_PLAN_* value. */
HDRF_EXPORT int hdrf_plan_mode(const hdrf_plan_t* plan);
/* The waiting job: its ref and name (owned by the plan). */
HDRF_EXPORT hdrf_code hdrf_plan_job(const hdrf_plan_t* plan, hdrf_job_ref_t* job,
                                    const char** name, char** errptr);
/* The number of victims (0 when it does not fit or fits now). */
HDRF_EXPORT size_t hdrf_plan_victim_count(const hdrf_plan_t* plan);
/* Victim i (0 <= i < hdrf_plan_victim_count), in plan order: its job's ref,
   name (owned by the plan) and the number of its running tasks to stop
   (one task, or all of a gang that holds no more than its m). */
HDRF_EXPORT hdrf_code hdrf_plan_victim(const hdrf_plan_t* plan, size_t i, hdrf_job_ref_t* job,
                                       const char** name, int64_t* tasks, char** errptr);
/* The number of resources a failed plan is short of (0 when it fits). */
HDRF_EXPORT size_t hdrf_plan_short_count(const hdrf_plan_t* plan);
/* Short resource i (0 <= i < hdrf_plan_short_count), sorted by name: its
   name (owned by the plan) and the amount missing in canonical units (the
   demand less the room, where the search stopped). */
HDRF_EXPORT hdrf_code hdrf_plan_short(const hdrf_plan_t* plan, size_t i, const char** resource,
                                      int64_t* amount, char** errptr);

/* Applies a plan made by hdrf_plan on this engine (Engine::ApplyPlan): the
   victims' tasks stop and the demand is allocated, as one event. The plan
   is checked again on the current state: when an entry is no longer its
   job's unit or no longer permitted, a victim is gone, or the demand would
   not fit, it returns HDRF_ABORTED ("stale plan ...") and changes nothing:
   make a new plan. A plan that does not fit gives HDRF_FAILED_PRECONDITION;
   one whose waiting job is gone HDRF_NOT_FOUND; a plan of another engine
   (or of a destroyed one) or NULL HDRF_INVALID_ARGUMENT. The plan stays
   the caller's to free. */
HDRF_EXPORT hdrf_code hdrf_apply_plan(hdrf_engine_t* engine, const hdrf_plan_t* plan,
                                      char** errptr);

/* ---- views ------------------------------------------------------------- */

typedef struct hdrf_job_info {
  size_t struct_size;    /* set by the caller: HDRF_JOB_INFO_INIT or hdrf_job_info_init */
  int64_t tasks;         /* tasks not finished (running + waiting) */
  int64_t allocated;     /* running tasks */
  int state;             /* HDRF_JOB_* */
  int blocked;           /* 0/1 (docs/spec.md §4) */
  double key;            /* the job's key in its queue */
  double share;          /* DRF share over all resources: max_r alloc[r]/T[r] */
  double weight;
  int64_t min_available;
  uint64_t seq;          /* submission sequence number */
} hdrf_job_info_t;

/* An initialiser for C++ and C (where -Wmissing-field-initializers may
   warn about it; hdrf_job_info_init does not). */
#define HDRF_JOB_INFO_INIT {sizeof(hdrf_job_info_t)}
/* Zeroes *info and sets its struct_size. */
HDRF_EXPORT void hdrf_job_info_init(hdrf_job_info_t* info);

HDRF_EXPORT hdrf_code hdrf_job_get(hdrf_engine_t* engine, const char* name, hdrf_job_info_t* info,
                                   char** errptr);
/* The same for a job ref. */
HDRF_EXPORT hdrf_code hdrf_job_get_ref(hdrf_engine_t* engine, hdrf_job_ref_t job,
                                       hdrf_job_info_t* info, char** errptr);
/* Shortcuts of hdrf_job_get. */
HDRF_EXPORT hdrf_code hdrf_job_allocated(hdrf_engine_t* engine, const char* name,
                                         int64_t* allocated, char** errptr);
HDRF_EXPORT hdrf_code hdrf_job_state(hdrf_engine_t* engine, const char* name, int* state,
                                     char** errptr);
/* The leaf queue the job lives in (after admission), malloc'd. */
HDRF_EXPORT hdrf_code hdrf_job_queue(hdrf_engine_t* engine, const char* name, char** queue_path,
                                     char** errptr);

typedef struct hdrf_queue_info {
  size_t struct_size;    /* set by the caller: HDRF_QUEUE_INFO_INIT or hdrf_queue_info_init */
  double weight;
  double share;          /* dominant share s(U) (docs/spec.md §4) */
  double key;            /* s(U)/weight */
  int blocked;           /* 0/1 */
  int state;             /* HDRF_QUEUE_* */
  int is_leaf;           /* 0/1 */
  int reclaimable;       /* 0/1 */
  int depth;             /* root = 0 */
  int64_t jobs[4];       /* jobs in the subtree, indexed by HDRF_JOB_* */
} hdrf_queue_info_t;

#define HDRF_QUEUE_INFO_INIT {sizeof(hdrf_queue_info_t)}
HDRF_EXPORT void hdrf_queue_info_init(hdrf_queue_info_t* info);

HDRF_EXPORT hdrf_code hdrf_queue_get(hdrf_engine_t* engine, const char* path,
                                     hdrf_queue_info_t* info, char** errptr);
/* What the jobs under the queue hold of `resource`, in canonical units. */
HDRF_EXPORT hdrf_code hdrf_queue_allocated(hdrf_engine_t* engine, const char* path,
                                           const char* resource, int64_t* amount,
                                           char** errptr);

/* Every queue's path in path order ("root" first): *paths receives a
   malloc'd array of *count malloc'd strings; free it with
   hdrf_free_strings(*paths, *count). */
HDRF_EXPORT hdrf_code hdrf_queue_paths(hdrf_engine_t* engine, char*** paths, size_t* count,
                                       char** errptr);
/* The cluster's resource names, sorted (the order of amounts in views);
   free with hdrf_free_strings. */
HDRF_EXPORT hdrf_code hdrf_resource_names(hdrf_engine_t* engine, char*** names, size_t* count,
                                          char** errptr);
/* Why the job `name` is or is not next (docs/spec.md §5; `hdrf explain`): a JSON
   object, malloc'd, in the form of `hdrf explain --json` (docs/tools.md):
   {"job", "queue", "key", "blocked", "schedulable", "next",
   "blocked_by": [...], "unfit_because": [...], "levels": [{"parent",
   "siblings": [{"name", "key", "blocked", "on_path"}]}]}. */
HDRF_EXPORT hdrf_code hdrf_explain(hdrf_engine_t* engine, const char* name, char** json,
                                   char** errptr);

/* State digest (docs/spec.md §9): 16 lowercase hex digits and a NUL written to
   buf, which must hold HDRF_DIGEST_SIZE bytes (else HDRF_OUT_OF_RANGE, and
   buf gets "" when buf_len > 0). */
HDRF_EXPORT hdrf_code hdrf_digest(hdrf_engine_t* engine, char* buf, size_t buf_len,
                                  char** errptr);
/* Last applied and last durable event sequence numbers. */
HDRF_EXPORT hdrf_code hdrf_last_seq(hdrf_engine_t* engine, uint64_t* seq, char** errptr);
HDRF_EXPORT hdrf_code hdrf_durable_seq(hdrf_engine_t* engine, uint64_t* seq, char** errptr);
HDRF_EXPORT hdrf_code hdrf_job_count(hdrf_engine_t* engine, uint64_t* count, char** errptr);
HDRF_EXPORT hdrf_code hdrf_queue_count(hdrf_engine_t* engine, uint64_t* count, char** errptr);

/* Metrics in Prometheus text format 0.0.4 (docs/metrics.md), including
   hdrf_event_latency_seconds for the event calls made through this
   interface. *text receives a malloc'd NUL-terminated string; *len
   (optional) its length. */
HDRF_EXPORT hdrf_code hdrf_metrics(hdrf_engine_t* engine, char** text, size_t* len,
                                   char** errptr);

/* ---- persistence (no-ops without a store) ------------------------------ */

HDRF_EXPORT hdrf_code hdrf_flush(hdrf_engine_t* engine, char** errptr);
HDRF_EXPORT hdrf_code hdrf_checkpoint(hdrf_engine_t* engine, char** errptr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HDRF_C_H_ */
