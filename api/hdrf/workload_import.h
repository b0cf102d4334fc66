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

}  // namespace hdrf

#endif  // HDRF_API_HDRF_WORKLOAD_IMPORT_H_
