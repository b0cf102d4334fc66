// A store's log read event by event, as the readers of its history see it
// (`hdrf replay --from-db`, api/formats/store_trace.cc; `hdrf workload
// import --from-db`, api/sim/store_import.cc): records decoded in order, a
// gap named, and every Submit given the submission number (job seq) the
// engine gave it, which the task events after it name.
//
// A job's submission number is a counter of its own (engine::Tree::next_seq),
// not the sequence number of its Submit event: the two part as soon as any
// other event comes first. The newest checkpoint (at event S) holds the
// number the next Submit after S gets; the log's Submits before it count
// down from there.
#ifndef HDRF_STORAGE_LOG_SCAN_H_
#define HDRF_STORAGE_LOG_SCAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hdrf/status.h"
#include "storage/codec.h"
#include "storage/store.h"

namespace hdrf::storage {

// One logged event.
struct LogEventRef {
  uint64_t seq = 0;           // the event's sequence number
  uint64_t record_first = 0;  // the first event of its record (its key)
  uint64_t job_seq = 0;       // a Submit's own submission number; else op.job_seq
  const LogOp* op = nullptr;
  const Event* full = nullptr;  // the full event (Submit, queue, capacity, plan events); else null
  bool timed = false;           // its record holds event times
  int64_t time_us = 0;          // its time when `timed`
};

// "store DIR: key l/...": where a message about a record points.
std::string LogRecordWhere(const Store& store, uint64_t record_first);

// The submission number of the first Submit at or after event `from`,
// worked out from the newest checkpoint (the log between `from` and it is
// read when `from` is at or before it). `from` = 0: the log's first event.
StatusOr<uint64_t> FirstJobSeqFrom(const Store& store, const std::vector<std::string>& names, uint64_t from);

// Calls fn for every logged event from `from` (0: the log's first) to the
// log's end, in order, a record that begins before `from` and runs past it
// included; Submits numbered from `first_job_seq` (FirstJobSeqFrom). A gap
// in the log, or a record that does not decode, is an error naming its key;
// so is an error of fn, given the record's key as context.
Status ScanLogEvents(const Store& store, const std::vector<std::string>& names, uint64_t from,
                     uint64_t first_job_seq, const std::function<Status(const LogEventRef&)>& fn);

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_LOG_SCAN_H_
