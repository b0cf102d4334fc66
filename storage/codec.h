// Keys and FlatBuffers values of an hdrf store (docs/storage.md).
//
//   "m"                          Meta: format version, resource names
//   "h/" be64(S)                 CheckpointHeader of the state after event S
//   "c/" be64(S) be32(i)         JobChunk i of that checkpoint
//   "l/" be64(F)                 LogBatch holding events F, F+1, ...
//
// Every decoder runs the FlatBuffers Verifier first and then checks what the
// verifier cannot (enum ranges, resource indexes, vector lengths); a failure
// is Status::Corruption saying what is wrong. Decoders never crash on any
// input. Callers add where (store, key) with Status::WithContext.
#ifndef HDRF_STORAGE_CODEC_H_
#define HDRF_STORAGE_CODEC_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/event.h"
#include "engine/event_sink.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf::storage {

// The on-disk format this build writes and reads.
inline constexpr uint32_t kFormatVersion = 1;

// ---- keys ----
inline constexpr char kMetaKey[] = "m";
inline constexpr char kHeaderPrefix[] = "h/";
inline constexpr char kChunkPrefix[] = "c/";
inline constexpr char kLogPrefix[] = "l/";

std::string HeaderKey(uint64_t seq);
std::string ChunkKey(uint64_t seq, uint32_t index);
std::string ChunkPrefix(uint64_t seq);  // "c/" be64(seq)
std::string LogKey(uint64_t first_seq);
// Parse keys written by the functions above; false for anything else.
bool ParseHeaderKey(std::string_view key, uint64_t* seq);
bool ParseLogKey(std::string_view key, uint64_t* first_seq);
// A printable form: "l/seq=42", "c/seq=7/chunk=3", "m", or hex bytes.
std::string KeyToString(std::string_view key);

// ---- records ----
struct MetaRecord {
  uint32_t format_version = kFormatVersion;
  std::vector<std::string> resource_names;  // sorted
  std::vector<int64_t> initial_capacity;    // dense
  std::optional<double> overcommit_factor;
  std::string created_by;
};
std::string EncodeMeta(const MetaRecord& m);
// Checks structure only; the version is checked by the caller (so that a
// newer store gets a "format version" message, not a structural one).
StatusOr<MetaRecord> DecodeMeta(std::string_view value);

struct CheckpointHeaderRecord {
  uint64_t seq = 0;
  uint64_t next_seq = 1;
  std::vector<int64_t> capacity;   // dense, Meta order
  std::vector<QueueSpec> queues;   // path order, root first
  uint64_t job_count = 0;
  uint32_t chunk_count = 0;
};
StatusOr<std::string> EncodeCheckpointHeader(const CheckpointHeaderRecord& h,
                                             const std::vector<std::string>& names);
StatusOr<CheckpointHeaderRecord> DecodeCheckpointHeader(std::string_view value,
                                                        const std::vector<std::string>& names);

// One job of a checkpoint: spec.queue is the leaf path.
struct JobRecord {
  JobSpec spec;
  uint64_t seq = 0;
  int64_t allocated = 0;
  JobState state = JobState::kInqueue;
};

// Builds JobChunk values one job at a time.
class JobChunkEncoder {
 public:
  JobChunkEncoder();
  ~JobChunkEncoder();
  // `f.queue` indexes the header's queues; `f.task` holds `resources`
  // amounts (dense, Meta order).
  void Add(const struct JobFields& f, size_t resources);
  size_t size() const { return count_; }
  // Returns the value and starts a new chunk.
  std::string Finish(uint64_t checkpoint_seq, uint32_t index);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  size_t count_ = 0;
};

// Calls `fn` for each job of a chunk value (the record is reused between
// calls). `queue_paths` are the header's queues; the chunk must say it is
// chunk `index` of checkpoint `seq`.
Status DecodeJobChunk(std::string_view value, const std::vector<std::string>& names,
                      const std::vector<std::string>& queue_paths, uint64_t seq, uint32_t index,
                      const std::function<Status(const JobRecord&)>& fn);

// One job of a checkpoint as decoded fields, without building a JobSpec
// (the bulk path of recovery). The views are valid during the callback.
struct JobFields {
  std::string_view name;
  std::string_view user;
  uint32_t queue = 0;             // index into the header's queues (checked)
  const int64_t* task = nullptr;  // one amount per resource, Meta order
  int64_t tasks = 0;
  int64_t allocated = 0;
  int64_t min_available = 0;
  double weight = 1;
  uint64_t seq = 0;
  JobState state = JobState::kInqueue;
};
Status DecodeJobChunkFields(std::string_view value, size_t resources, size_t queue_count,
                            uint64_t seq, uint32_t index,
                            const std::function<Status(const JobFields&)>& fn);

// ---- the event log ----
// One logged event, compact: task events carry (type, job_seq, n); other
// events point into EventBatch::full.
struct LogOp {
  uint64_t job_seq = 0;
  int64_t n = 0;
  uint32_t full = UINT32_MAX;  // index into EventBatch::full, or kNoFull
  Event::Type type = Event::Type::kAllocate;
};
inline constexpr uint32_t kNoFull = UINT32_MAX;

// Events first_seq, first_seq+1, ... in order.
struct EventBatch {
  uint64_t first_seq = 0;
  std::vector<LogOp> ops;
  std::vector<Event> full;
  // The event times (docs/storage.md "Event times"), microseconds since the
  // Unix epoch: one per op, or empty when none are known (a record written
  // before times were logged, or a batch built without them).
  std::vector<int64_t> times;
  size_t size() const { return ops.size(); }
  bool empty() const { return ops.empty(); }
  uint64_t last_seq() const { return first_seq + ops.size() - 1; }
  void clear() {
    ops.clear();
    full.clear();
    times.clear();
  }
  // Appends `e` (as the event after the last one).
  void Add(const Event& e);
  // Appends `e` with its time (every event of the batch then needs one).
  void Add(const Event& e, int64_t time_us) {
    Add(e);
    times.push_back(time_us);
  }
  // Appends job events (engine::EventSink::AppendBatch), all at one time.
  void AddJobEvents(std::span<const engine::JobEventRecord> events, int64_t time_us);
  // The time of event i; 0 when unknown.
  int64_t TimeAt(size_t i) const { return i < times.size() ? times[i] : 0; }
  // The event at position i, as an Event (for messages and tests).
  Event At(size_t i) const;
};

// Encodes ops [begin, end) of a batch as one LogBatch value (first seq =
// batch.first_seq + begin). Reuses its builder between calls.
class LogEncoder {
 public:
  explicit LogEncoder(std::vector<std::string> names);
  ~LogEncoder();
  // Fails only for an event naming a resource outside the store's names.
  Status Encode(const EventBatch& batch, size_t begin, size_t end, std::string* out);
  // The same without a copy: *out is the encoder's own buffer, valid until
  // its next call (the journal's writer puts it into its WriteBatch).
  Status Encode(const EventBatch& batch, size_t begin, size_t end, std::string_view* out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Decodes a LogBatch value into `out` (cleared first). `key_seq` is the
// first sequence number its key names; it must match the value's.
Status DecodeLogBatch(std::string_view value, const std::vector<std::string>& names,
                      uint64_t key_seq, EventBatch* out);

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_CODEC_H_
