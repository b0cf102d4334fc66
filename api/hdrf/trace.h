// Event traces: the binary trace format, its reader and writer, and the
// synthetic trace generator behind `hdrf trace gen` (docs/spec.md §11).
//
// A trace is a cluster, a queue tree, a table of jobs and a sequence of
// events. Events are numbered from 1 in trace order. Every job of the table
// enters through a `kSubmit` event; the generator puts the N submissions
// first (events 1..N) and then the E task events (N+1..N+E), so that, when a
// trace is replayed on one thread into a fresh engine, trace event i gets
// engine sequence number i (Engine numbers submissions too). The byte layout
// is described in docs/trace.md.
//
//   TraceGenOptions o;  o.jobs = 1000;  o.events = 100000;
//   auto trace = GenerateTrace(o);                  // StatusOr<Trace>
//   WriteTrace(*trace, "t.trace");                  // Status
//   auto back = ReadTrace("t.trace");               // checksummed, validated
//
// Nothing here throws; errors name the file, the offset and what is wrong.
#ifndef HDRF_TRACE_H_
#define HDRF_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/event.h"
#include "hdrf/quantity.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf {

// Values are stored on disk: never renumber, only append. The format needs
// its own enum (a trace holds job events only), but its values are
// Event::Type's, value for value (asserted below), so the two convert
// without a table.
enum class TraceEventType : uint8_t {
  kAllocate = 0,  // job, n >= 1: n more tasks of the job run
  kRelease = 1,   // job, n >= 1: n running tasks stop (the job keeps its tasks)
  kFinish = 2,    // job, n >= 1: n running tasks complete (the job loses them)
  kSubmit = 3,    // job, n = 0: jobs[job] is submitted
  kRemove = 4,    // job, n = 0: the job leaves
};
#define HDRF_SAME_EVENT_TYPE(name)                                                               \
  static_assert(static_cast<uint8_t>(TraceEventType::name) == static_cast<uint8_t>(Event::Type::name), \
                "TraceEventType::" #name " must equal Event::Type::" #name)
HDRF_SAME_EVENT_TYPE(kAllocate);
HDRF_SAME_EVENT_TYPE(kRelease);
HDRF_SAME_EVENT_TYPE(kFinish);
HDRF_SAME_EVENT_TYPE(kSubmit);
HDRF_SAME_EVENT_TYPE(kRemove);
#undef HDRF_SAME_EVENT_TYPE

constexpr Event::Type ToEventType(TraceEventType t) { return static_cast<Event::Type>(t); }
// The trace type of a job event; nullopt for queue and capacity events,
// which a trace does not hold.
constexpr std::optional<TraceEventType> ToTraceEventType(Event::Type t) {
  if (static_cast<uint8_t>(t) > static_cast<uint8_t>(TraceEventType::kRemove)) return std::nullopt;
  return static_cast<TraceEventType>(t);
}
const char* TraceEventTypeName(TraceEventType t);  // "allocate", ... (EventTypeName's)

struct TraceEvent {
  TraceEventType type = TraceEventType::kAllocate;
  uint32_t job = 0;  // index into Trace::jobs
  uint32_t n = 0;    // tasks; < 2^24 (kMaxTraceEventN)
};

// A task event or removal (not kSubmit) as the engine Event on the job that
// was submitted with sequence number `job_seq`.
inline Event TraceEventToEvent(const TraceEvent& e, uint64_t job_seq) {
  return Event::Task(ToEventType(e.type), job_seq, e.type == TraceEventType::kRemove ? 0 : e.n);
}

inline constexpr uint32_t kMaxTraceEventN = (1u << 24) - 1;
inline constexpr char kTraceMagic[9] = "HDRFTRC1";
inline constexpr uint32_t kTraceVersion = 1;
inline constexpr uint64_t kTraceBlockEvents = 65536;  // events per checksum block

struct Trace {
  ResourceAmounts cluster;
  std::vector<QueueSpec> queues;  // as for Engine::Create; `line` is not stored
  std::vector<JobSpec> jobs;      // submitted by kSubmit events; `line` not stored
  std::vector<TraceEvent> events; // event i+1 is events[i]
};

// The number of leading kSubmit events: the setup that a replay applies
// before it starts the clock.
size_t TraceSetupEvents(const Trace& trace);

// Checks what the reader checks: job indices in range, every job submitted
// at most once and before any other event names it, not used after its
// removal, n >= 1 for task events (< 2^24) and n = 0 for submit/remove, and
// that resource names are valid. The message names the event (1-based).
Status ValidateTrace(const Trace& trace);

// The file image of `trace` (validated first).
StatusOr<std::string> EncodeTrace(const Trace& trace);
// Parses a file image; `name` prefixes error messages.
StatusOr<Trace> DecodeTrace(const void* data, size_t size, const std::string& name = "trace");

// Writes `path` atomically (a temporary file renamed into place).
Status WriteTrace(const Trace& trace, const std::string& path);
// Reads and verifies `path` (mmap; about 1 s per 10^8 events).
StatusOr<Trace> ReadTrace(const std::string& path);

// XXH64 of `data` with `seed`: the checksum of the format.
uint64_t TraceChecksum(const void* data, size_t size, uint64_t seed = 0);

// ---- generator ---------------------------------------------------------------

struct TraceGenOptions {
  int64_t jobs = 1000;     // N: jobs, spread uniformly over the leaf queues
  int depth = 2;           // D: levels below root; F^D leaf queues
  int fanout = 4;          // F: children per parent queue
  int64_t events = 100000; // E: task events after the N submissions
  uint64_t seed = 1;
  // Default: cpu, memory and GPUs get `load` x demand in whole granules
  // plus half a granule (allocations hit the limits, but no resource is ever
  // exactly used up, so nothing saturates: the plain ingest case), pods the
  // full demand. With `saturate` (full use): whole granules, pods and GPUs
  // at `load`, cpu and memory at `load` + 0.3; after a ramp the events keep
  // pods at the limit, so the saturated set changes on most events.
  bool saturate = false;
  // Capacity as a fraction of the summed full demand of all jobs (tasks x
  // task shape), per resource as above. 0 = default: 0.6, or 0.45 with
  // `saturate`.
  double load = 0;
  // Without `saturate`: the chance in percent that an event on a job with
  // some but not all tasks running allocates (else it releases). 0 =
  // default: 60; above 50 the jobs drift towards full, the cluster fills up.
  int alloc_percent = 0;
  int users = 0;           // distinct users; 0 = clamp(N/100, 4, 1000)
  int64_t max_tasks = 64;  // tasks per job are uniform in 1..max_tasks
  // The cluster capacity (canonical units) of the resources it names (cpu,
  // memory, nvidia.com/gpu, pods), instead of the one `load` gives; each
  // must hold the largest task. Without `saturate` half a granule is added,
  // as to the derived capacity, so that no resource is ever exactly used
  // up. Default: empty (every resource from `load`).
  ResourceAmounts cluster;
};

// What the generator tracked while writing the events.
struct TraceGenState {
  std::vector<std::string> resources;   // sorted, like the engine's
  std::vector<int64_t> capacity;        // per resource
  std::vector<int64_t> used;            // per resource, after the last event
  std::vector<int64_t> allocated;       // per job (tasks), after the last event
  int64_t allocates = 0;
  int64_t releases = 0;
  int64_t refits = 0;       // allocations that did not fit, written as releases
  int64_t saturated = 0;    // events after which some resource had nothing free
  int64_t flips = 0;        // events that changed the set of saturated resources
  size_t leaves = 0;
};

// Same options, same trace (and the same bytes once written): a fixed
// xoshiro256** stream seeded through splitmix64; integer arithmetic only.
StatusOr<Trace> GenerateTrace(const TraceGenOptions& options, TraceGenState* state = nullptr);

}  // namespace hdrf

#endif  // HDRF_TRACE_H_
