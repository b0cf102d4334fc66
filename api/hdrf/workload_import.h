// Importing other simulators' inputs as docs/spec.md §13 workloads:
// `hdrf workload import --from volcano FILE --out workload.csv`.
//
// Volcano's scheduler simulator (`vcsimctl run --config FILE`) reads a JSON
// array of events, each
//   {"timestamp": "2025-08-26T09:00:00Z", "type": "PodCreated" | "PodDeleted",
//    "groupName": "job-a", "namespace": "default", "replicas": 3,
//    "queue": "default", "resources": {"requests": {...}, "limits": {...}},
//    "labels": {...}, "annotations": {...}, "toleration": [...]}
// replayed in timestamp order from the earliest one: PodCreated creates
// `replicas` pods of the group with those requests in the queue, PodDeleted
// deletes the group's pods. docs/simulate_import.md gives the mapping to
// §13 jobs and what is dropped.
#ifndef HDRF_API_HDRF_WORKLOAD_IMPORT_H_
#define HDRF_API_HDRF_WORKLOAD_IMPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/workload_gen.h"  // ChunkSink
#include "hdrf/status.h"

namespace hdrf {

struct VolcanoImportOptions {
  // The queue paths of the target config (hdrf simulate --config). A
  // Volcano queue name maps to the one path whose last component is that
  // name. Empty (default): name -> "root/<name>".
  std::vector<std::string> queue_paths;
  // A group that is never deleted runs until the file's last event
  // (default, 0), or for this many seconds when > 0 (at most 1e9; NaN and
  // infinities are refused).
  double open_duration = 0;
};

struct VolcanoImportSummary {
  uint64_t events = 0;
  uint64_t jobs = 0;        // CSV lines written
  uint64_t tasks = 0;       // Σ replicas of those jobs
  uint64_t open_ended = 0;  // jobs never deleted in the file
  std::vector<std::string> warnings;  // "FILE:LINE: ..." for dropped events
};

// Converts the event file `text` (named `source` in messages) and writes
// the CSV to `sink`. A malformed file is an InvalidArgument error
// "SOURCE:LINE: ..." that names the field, and nothing is written.
StatusOr<VolcanoImportSummary> ImportVolcanoEvents(std::string_view text, const std::string& source,
                                                   const VolcanoImportOptions& options,
                                                   const ChunkSink& sink);

// ---- a store's own history (`hdrf workload import --from-db DIR`) ----------
//
// docs/simulate_import.md "A store's history": every job submitted inside
// the window becomes one workload job: arrival = its submission's event
// time - the origin; queue (as submitted: a leaf, a parent or root), user,
// tasks, weight, min_available and the task shape from the submission;
// duration = the mean run of its tasks, a run being from an allocation to
// the finish, removal, release or eviction that ends it (runs ended by a
// finish or removal when the job has any, else those ended by a release;
// else the runs still open at the end, observed so far, and the job is
// flagged). Times are the log's event times (docs/storage.md "Event times").

struct StoreImportOptions {
  // The window of event times, microseconds since the Unix epoch
  // (inclusive). Events outside it are left out; a job submitted before it
  // is not imported. Unset: from the first logged event / to the last.
  std::optional<int64_t> since_us, until_us;
};

struct StoreImportSummary {
  uint64_t first_seq = 0, last_seq = 0;  // the log events read (0, 0: none)
  uint64_t events = 0;        // events inside the window
  uint64_t jobs = 0;          // CSV lines written
  uint64_t tasks = 0;         // their tasks
  uint64_t running = 0;       // jobs with tasks still running at the end (flagged)
  uint64_t never_started = 0; // submitted in the window, never allocated: left out
  uint64_t before = 0;        // submitted before the window (or untimed): left out
  uint64_t before_log = 0;    // submitted before the log's first record (in a
                              // checkpoint only, no time known): left out
  uint64_t other_events = 0;  // queue and capacity events in the window: ignored
  int64_t origin_us = 0;      // arrival 0
  int64_t end_us = 0;         // the end of the window (last event time)
};

// Reads the store at `dir` (read-only, checksums verified) and writes the
// workload CSV to `sink`. Errors name the store and the key or event: no
// store, a damaged one, a log with no event times, a window with since
// after until.
StatusOr<StoreImportSummary> ImportStoreHistory(const std::string& dir, const StoreImportOptions& options,
                                                const ChunkSink& sink);

// An RFC 3339 time ("2026-11-27T01:00:00Z", "...00.250+08:00") as
// microseconds since the Unix epoch (digits beyond microseconds are cut).
StatusOr<int64_t> ParseRfc3339Micros(const std::string& text);

// A --since/--until time: RFC 3339, or seconds since the Unix epoch with
// at most 6 decimals ("1795741200", "12.5"). InvalidArgument saying which
// forms are accepted otherwise.
StatusOr<int64_t> ParseEventTimeMicros(const std::string& text);

// Microseconds since the Unix epoch as RFC 3339 UTC
// ("2026-11-27T01:00:00.000250Z"; no fraction when whole seconds).
std::string FormatEventTime(int64_t us);

}  // namespace hdrf

#endif  // HDRF_API_HDRF_WORKLOAD_IMPORT_H_
