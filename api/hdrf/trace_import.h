// Trace import: a CSV or JSONL event file, as a platform can export it,
// converted to a Trace (hdrf/trace.h) for `hdrf trace import` and
// `hdrf replay`. The format is described in docs/trace.md "Importing events".
//
//   TraceImportOptions o;
//   o.cluster = config.cluster;  o.queues = config.queues;   // e.g. --config
//   auto trace = ImportTraceFile("events.csv", o);            // StatusOr<Trace>
//   WriteTrace(*trace, "events.trace");
//
// One event per line (CSV: after a header line naming the columns; JSONL:
// one JSON object per line). Events keep the file's order: trace event i is
// the i-th event line. `queue` and `cluster` lines describe the starting
// queue tree and capacity and must come before the first job event.
//
// Every error is an InvalidArgument status "FILE:LINE: what is wrong" (an
// unreadable file is an IoError naming it). By default the events are also
// applied to an in-memory engine, so an event the engine would refuse (a
// release of tasks that do not run, an allocation that does not fit, a
// submission to an unknown queue) is reported with its line too, and a
// replay of the trace on one thread refuses nothing. Nothing here throws.
#ifndef HDRF_TRACE_IMPORT_H_
#define HDRF_TRACE_IMPORT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/trace.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"

namespace hdrf {

enum class TraceImportFormat { kCsv, kJsonl };

// By the file name: ".csv" -> CSV; ".jsonl", ".ndjson" -> JSONL; anything
// else is an InvalidArgument naming the path.
StatusOr<TraceImportFormat> TraceImportFormatOf(const std::string& path);

struct TraceImportOptions {
  // The starting cluster and queues (e.g. from a queue configuration);
  // `cluster` and `queue` lines of the file replace and add to them.
  ResourceAmounts cluster;
  std::vector<QueueSpec> queues;
  // Apply the events to an in-memory engine and report the first refused
  // one by its line.
  bool check = true;
};

struct TraceImportStats {
  size_t lines = 0;         // lines read, blank and comment lines included
  size_t events = 0;        // trace events written
  size_t queue_lines = 0;   // `queue` lines
  size_t cluster_lines = 0; // `cluster` lines (0 or 1)
  std::string digest;       // engine digest after the events (with `check`)
};

// Parses `text`; `name` (the file name) prefixes every error message.
StatusOr<Trace> ImportTrace(std::string_view text, TraceImportFormat format, const std::string& name,
                            const TraceImportOptions& options, TraceImportStats* stats = nullptr);

// Reads `path` and imports it in the format its name says.
StatusOr<Trace> ImportTraceFile(const std::string& path, const TraceImportOptions& options,
                                TraceImportStats* stats = nullptr);

}  // namespace hdrf

#endif  // HDRF_TRACE_IMPORT_H_
