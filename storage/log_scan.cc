// storage/log_scan.h: a store's log read event by event.
#include "storage/log_scan.h"

#include <optional>

namespace hdrf::storage {

std::string LogRecordWhere(const Store& store, uint64_t record_first) {
  return "store " + store.path() + ": key " + KeyToString(LogKey(record_first));
}

namespace {

// Calls fn(batch, first index, record key) for every record holding events
// from `from` on, in order, checking that none is missing.
Status ScanRecords(const Store& store, const std::vector<std::string>& names, uint64_t from,
                   const std::function<StatusOr<bool>(const EventBatch&, size_t)>& fn) {
  const std::string& dir = store.path();
  // The event the next record must begin at: `from` (none when reading
  // from the log's first record on).
  std::optional<uint64_t> next;
  if (from > 0) next = from;
  EventBatch batch;
  bool go = true;
  auto take = [&](uint64_t first, std::string_view value, bool straddles) -> StatusOr<bool> {
    if (!straddles && next && first != *next)
      return Status::Corruption("store " + dir + ": log gap: event " + std::to_string(*next) +
                                " is missing (the next log record, " + KeyToString(LogKey(first)) +
                                ", starts at event " + std::to_string(first) + ")");
    Status d = DecodeLogBatch(value, names, first, &batch);
    if (!d.ok()) return d.WithContext(LogRecordWhere(store, first));
    if (batch.empty()) return true;
    next = batch.last_seq() + 1;
    if (batch.last_seq() < from) return true;
    auto r = fn(batch, from > first ? static_cast<size_t>(from - first) : 0);
    if (!r.ok()) return r.status().WithContext(LogRecordWhere(store, first));
    go = *r;
    return go;
  };
  if (from > 0) {  // a record that began before `from` and may run past it
    HDRF_ASSIGN_OR_RETURN(auto before, store.LogAtOrBefore(from));
    if (before) {
      HDRF_RETURN_IF_ERROR(take(before->first, before->second, /*straddles=*/true).status());
      if (!go) return Status::Ok();
    }
  }
  return store.ScanLog(from > 0 ? from + 1 : 0,
                       [&](uint64_t first, std::string_view v) { return take(first, v, false); });
}

}  // namespace

StatusOr<uint64_t> FirstJobSeqFrom(const Store& store, const std::vector<std::string>& names, uint64_t from) {
  const std::string& dir = store.path();
  HDRF_ASSIGN_OR_RETURN(std::vector<uint64_t> ckpts, store.CheckpointSeqs());
  if (ckpts.empty()) return Status::Corruption("store " + dir + ": no checkpoint (no h/ key); the store is incomplete");
  const uint64_t S = ckpts.back();
  HDRF_ASSIGN_OR_RETURN(std::string hv, store.Get(HeaderKey(S)));
  auto header = DecodeCheckpointHeader(hv, names);
  if (!header.ok()) return header.status().WithContext("store " + dir + ": key " + KeyToString(HeaderKey(S)));
  if (from > S) {  // count the Submits between the checkpoint and `from`
    uint64_t submits = 0;
    if (from > S + 1) {
      HDRF_RETURN_IF_ERROR(ScanRecords(store, names, S + 1, [&](const EventBatch& b, size_t i) -> StatusOr<bool> {
        for (; i < b.size() && b.first_seq + i < from; ++i) submits += b.ops[i].type == Event::Type::kSubmit;
        return b.last_seq() + 1 < from;
      }));
    }
    return header->next_seq + submits;
  }
  uint64_t submits = 0;  // the log's Submits from `from` to S
  HDRF_RETURN_IF_ERROR(ScanRecords(store, names, from, [&](const EventBatch& b, size_t i) -> StatusOr<bool> {
    for (; i < b.size() && b.first_seq + i <= S; ++i) submits += b.ops[i].type == Event::Type::kSubmit;
    return b.last_seq() < S;
  }));
  if (submits >= header->next_seq)
    return Status::Corruption("store " + dir + ": the log holds " + std::to_string(submits) +
                              " submissions up to event " + std::to_string(S) + ", but the checkpoint there (" +
                              KeyToString(HeaderKey(S)) + ") counts only " + std::to_string(header->next_seq - 1));
  return header->next_seq - submits;
}

Status ScanLogEvents(const Store& store, const std::vector<std::string>& names, uint64_t from,
                     uint64_t first_job_seq, const std::function<Status(const LogEventRef&)>& fn) {
  uint64_t job_seq = first_job_seq;
  LogEventRef ev;
  return ScanRecords(store, names, from, [&](const EventBatch& b, size_t i) -> StatusOr<bool> {
    ev.record_first = b.first_seq;
    ev.timed = !b.times.empty();
    for (; i < b.size(); ++i) {
      const LogOp& op = b.ops[i];
      ev.seq = b.first_seq + i;
      ev.op = &op;
      ev.full = op.full == kNoFull ? nullptr : &b.full[op.full];
      ev.job_seq = op.type == Event::Type::kSubmit ? job_seq++ : op.job_seq;
      ev.time_us = b.TimeAt(i);
      HDRF_RETURN_IF_ERROR(fn(ev));
    }
    return true;
  });
}

}  // namespace hdrf::storage
