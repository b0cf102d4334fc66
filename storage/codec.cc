#include "storage/codec.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <bit>
#include <cstring>
#include <limits>
#include <new>

#include "flatbuffers/flatbuffers.h"
#include "storage/hdrf_state_generated.h"

namespace hdrf::storage {
namespace {

namespace fbs = ::hdrf::storage::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// The schema's enums are the engine's, value for value (hdrf_state.fbs): the
// codec converts them with casts, so a renumbering on either side must fail
// to compile.
#define HDRF_SAME(fb_enum, fb_name, engine_value)                                              \
  static_assert(static_cast<uint8_t>(fbs::fb_enum::fb_name) == static_cast<uint8_t>(engine_value), \
                #fb_enum "::" #fb_name " must equal " #engine_value)
HDRF_SAME(EventType, Allocate, Event::Type::kAllocate);
HDRF_SAME(EventType, Release, Event::Type::kRelease);
HDRF_SAME(EventType, Finish, Event::Type::kFinish);
HDRF_SAME(EventType, Submit, Event::Type::kSubmit);
HDRF_SAME(EventType, Remove, Event::Type::kRemove);
HDRF_SAME(EventType, CreateQueue, Event::Type::kCreateQueue);
HDRF_SAME(EventType, UpdateQueue, Event::Type::kUpdateQueue);
HDRF_SAME(EventType, SetQueueState, Event::Type::kSetQueueState);
HDRF_SAME(EventType, DeleteQueue, Event::Type::kDeleteQueue);
HDRF_SAME(EventType, SetCapacity, Event::Type::kSetCapacity);
HDRF_SAME(EventType, ApplyPlan, Event::Type::kApplyPlan);
HDRF_SAME(QueueState, Open, QueueState::kOpen);
HDRF_SAME(QueueState, Closing, QueueState::kClosing);
HDRF_SAME(QueueState, Closed, QueueState::kClosed);
HDRF_SAME(JobState, Pending, JobState::kPending);
HDRF_SAME(JobState, Inqueue, JobState::kInqueue);
HDRF_SAME(JobState, Running, JobState::kRunning);
HDRF_SAME(JobState, Unknown, JobState::kUnknown);
#undef HDRF_SAME

// ---- keys ----

void PutBe64(std::string* s, uint64_t v) {
  for (int i = 7; i >= 0; --i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutBe32(std::string* s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetBe(std::string_view s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(s[pos + i]);
  return v;
}

Status Bad(const std::string& what) { return Status::Corruption(what); }

// ---- verification ----

// Verifies `value` as a Record of kind `want` and returns its body.
// FlatBuffers reads scalars in place and needs the buffer aligned to 8
// bytes; values read from RocksDB carry no such promise, so a misaligned one
// is copied into a per-thread aligned scratch buffer first. The result points
// into `value` or into that buffer: it is valid until the next call on this
// thread (each Decode* below uses it before returning).
template <typename T>
StatusOr<const T*> Verified(std::string_view value, fbs::Body want, const char* kind) {
  const auto* data = reinterpret_cast<const uint8_t*>(value.data());
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    thread_local std::vector<uint64_t> scratch;
    scratch.resize((value.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(scratch.data(), value.data(), value.size());
    data = reinterpret_cast<const uint8_t*>(scratch.data());
  }
  if (value.size() < 8 || !flatbuffers::BufferHasIdentifier(data, fbs::RecordIdentifier()))
    return Bad(std::string(kind) + " record: not an hdrf record (" + std::to_string(value.size()) +
               " bytes, no HDRF identifier)");
  flatbuffers::Verifier::Options vo;
  vo.max_depth = 16;
  vo.max_tables = std::numeric_limits<flatbuffers::uoffset_t>::max();
  flatbuffers::Verifier v(data, value.size(), vo);
  if (!fbs::VerifyRecordBuffer(v))
    return Bad(std::string(kind) + " record: FlatBuffers verification failed (" +
               std::to_string(value.size()) + " bytes)");
  const fbs::Record* rec = fbs::GetRecord(data);
  if (rec->body_type() != want || rec->body() == nullptr)
    return Bad(std::string(kind) + " record: holds a " + fbs::EnumNameBody(rec->body_type()) +
               " record instead");
  return static_cast<const T*>(rec->body());
}

// ---- resource maps ----

// The amounts of `a` as (amount, index into `names`) structs. The map's
// keys come in sorted order and `names` is sorted, so each key's index is
// looked for from the one after the previous key's: one comparison a key
// when every resource is named, and no search or allocation (the writer
// encodes a submission's task shape per logged Submit).
StatusOr<Offset<flatbuffers::Vector<const fbs::Amount*>>> EncodeAmounts(
    FlatBufferBuilder& fbb, const ResourceAmounts& a, const std::vector<std::string>& names) {
  constexpr size_t kInline = 16;
  alignas(fbs::Amount) unsigned char inline_v[kInline * sizeof(fbs::Amount)];  // not zeroed
  std::vector<fbs::Amount> heap_v;
  fbs::Amount* v = reinterpret_cast<fbs::Amount*>(inline_v);
  if (a.size() > kInline) {
    heap_v.resize(a.size());
    v = heap_v.data();
  }
  size_t k = 0, idx = 0;
  for (const auto& [name, amount] : a) {
    int c = -1;
    while (idx < names.size() && (c = names[idx].compare(name)) < 0) ++idx;
    if (c != 0)
      return Status::InvalidArgument("resource '" + name + "' is not one of the store's resources");
    new (&v[k++]) fbs::Amount(amount, static_cast<uint16_t>(idx++));
  }
  return fbb.CreateVectorOfStructs(v, k);
}

Status DecodeAmounts(const flatbuffers::Vector<const fbs::Amount*>* v,
                     const std::vector<std::string>& names, const char* what, ResourceAmounts* out) {
  out->clear();
  if (!v) return Status::Ok();
  // Struct elements are copied out: the verifier checks a struct vector's
  // length field alignment but not that its 8-byte elements are aligned, so
  // a damaged buffer can place them anywhere.
  for (uint32_t i = 0; i < v->size(); ++i) {
    fbs::Amount a;
    std::memcpy(&a, v->Data() + size_t{i} * sizeof(fbs::Amount), sizeof a);
    if (a.resource() >= names.size())
      return Bad(std::string(what) + ": resource index " + std::to_string(a.resource()) +
                 " out of range (" + std::to_string(names.size()) + " resources)");
    (*out)[names[a.resource()]] = a.amount();
  }
  return Status::Ok();
}

// Scalar vector elements are copied out byte-wise for the same reason: the
// verifier checks the alignment of a vector's length field, not that its
// 8-byte elements are aligned. (FlatBuffers is little-endian, as is every
// machine this builds for.)
static_assert(std::endian::native == std::endian::little, "FlatBuffers scalars are little-endian");
void CopyScalars(const flatbuffers::Vector<int64_t>* v, int64_t* out) {
  if (v->size() > 0) std::memcpy(out, v->Data(), size_t{v->size()} * sizeof(int64_t));
}

Status DecodeDense(const flatbuffers::Vector<int64_t>* v, size_t n, const char* what,
                   std::vector<int64_t>* out) {
  if (!v || v->size() != n)
    return Bad(std::string(what) + ": " + std::to_string(v ? v->size() : 0) +
               " amounts for " + std::to_string(n) + " resources");
  out->resize(n);
  CopyScalars(v, out->data());
  return Status::Ok();
}

// ---- queues and jobs ----

StatusOr<Offset<fbs::QueueRec>> EncodeQueue(FlatBufferBuilder& fbb, const QueueSpec& q,
                                            const std::vector<std::string>& names) {
  auto path = fbb.CreateString(q.path);
  HDRF_ASSIGN_OR_RETURN(auto cap, EncodeAmounts(fbb, q.capability, names));
  HDRF_ASSIGN_OR_RETURN(auto guar, EncodeAmounts(fbb, q.guarantee, names));
  fbs::QueueRecBuilder b(fbb);
  b.add_path(path);
  b.add_weight(q.weight);
  b.add_capability(cap);
  b.add_guarantee(guar);
  b.add_reclaimable(q.reclaimable);
  b.add_state(static_cast<fbs::QueueState>(q.state));
  b.add_min_user_limit_percent(q.min_user_limit_percent);
  if (q.user_limit_factor) b.add_user_limit_factor(*q.user_limit_factor);
  return b.Finish();
}

Status DecodeQueue(const fbs::QueueRec* r, const std::vector<std::string>& names, QueueSpec* q) {
  if (!r || !r->path()) return Bad("queue record without a path");
  *q = QueueSpec();
  q->path = r->path()->str();
  const std::string what = "queue " + q->path;
  q->weight = r->weight();
  HDRF_RETURN_IF_ERROR(DecodeAmounts(r->capability(), names, (what + " capability").c_str(), &q->capability));
  HDRF_RETURN_IF_ERROR(DecodeAmounts(r->guarantee(), names, (what + " guarantee").c_str(), &q->guarantee));
  q->reclaimable = r->reclaimable();
  auto st = static_cast<uint8_t>(r->state());
  if (st > static_cast<uint8_t>(QueueState::kClosed))
    return Bad(what + ": unknown queue state " + std::to_string(st));
  q->state = static_cast<QueueState>(st);
  q->min_user_limit_percent = r->min_user_limit_percent();
  auto f = r->user_limit_factor();
  if (f.has_value()) q->user_limit_factor = *f;
  return Status::Ok();
}

StatusOr<Offset<fbs::JobSpecRec>> EncodeJobSpec(FlatBufferBuilder& fbb, const JobSpec& j,
                                                const std::vector<std::string>& names) {
  auto name = fbb.CreateString(j.name);
  auto queue = fbb.CreateString(j.queue);
  auto user = fbb.CreateString(j.user);
  HDRF_ASSIGN_OR_RETURN(auto task, EncodeAmounts(fbb, j.task, names));
  fbs::JobSpecRecBuilder b(fbb);
  b.add_name(name);
  b.add_queue(queue);
  b.add_user(user);
  b.add_tasks(j.tasks);
  b.add_task(task);
  b.add_weight(j.weight);
  b.add_min_available(j.min_available);
  return b.Finish();
}

Status DecodeJobSpec(const fbs::JobSpecRec* r, const std::vector<std::string>& names, JobSpec* j) {
  if (!r || !r->name()) return Bad("submitted job record without a name");
  *j = JobSpec();
  j->name = r->name()->str();
  j->queue = r->queue() ? r->queue()->str() : std::string();
  j->user = r->user() ? r->user()->str() : std::string();
  j->tasks = r->tasks();
  HDRF_RETURN_IF_ERROR(DecodeAmounts(r->task(), names, ("job " + j->name + " task").c_str(), &j->task));
  j->weight = r->weight();
  j->min_available = r->min_available();
  return Status::Ok();
}

// The finished record, in the builder's buffer (valid until it is cleared).
std::string_view FinishedView(FlatBufferBuilder& fbb, fbs::Body type, Offset<void> body) {
  auto rec = fbs::CreateRecord(fbb, type, body);
  fbs::FinishRecordBuffer(fbb, rec);
  return std::string_view(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

std::string Finished(FlatBufferBuilder& fbb, fbs::Body type, Offset<void> body) {
  return std::string(FinishedView(fbb, type, body));
}

}  // namespace

// ---- keys ----

std::string HeaderKey(uint64_t seq) {
  std::string k = kHeaderPrefix;
  PutBe64(&k, seq);
  return k;
}

std::string ChunkPrefix(uint64_t seq) {
  std::string k = kChunkPrefix;
  PutBe64(&k, seq);
  return k;
}

std::string ChunkKey(uint64_t seq, uint32_t index) {
  std::string k = ChunkPrefix(seq);
  PutBe32(&k, index);
  return k;
}

std::string LogKey(uint64_t first_seq) {
  std::string k = kLogPrefix;
  PutBe64(&k, first_seq);
  return k;
}

bool ParseHeaderKey(std::string_view key, uint64_t* seq) {
  if (key.size() != 10 || key.substr(0, 2) != kHeaderPrefix) return false;
  *seq = GetBe(key, 2, 8);
  return true;
}

bool ParseLogKey(std::string_view key, uint64_t* first_seq) {
  if (key.size() != 10 || key.substr(0, 2) != kLogPrefix) return false;
  *first_seq = GetBe(key, 2, 8);
  return true;
}

std::string KeyToString(std::string_view key) {
  uint64_t seq;
  if (key == kMetaKey) return "m";
  if (ParseHeaderKey(key, &seq)) return "h/seq=" + std::to_string(seq);
  if (ParseLogKey(key, &seq)) return "l/seq=" + std::to_string(seq);
  if (key.size() == 14 && key.substr(0, 2) == kChunkPrefix)
    return "c/seq=" + std::to_string(GetBe(key, 2, 8)) + "/chunk=" + std::to_string(GetBe(key, 10, 4));
  std::string out = "0x";
  char buf[3];
  for (unsigned char c : key) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

// ---- meta ----

std::string EncodeMeta(const MetaRecord& m) {
  FlatBufferBuilder fbb(256);
  auto names = fbb.CreateVectorOfStrings(m.resource_names);
  auto cap = fbb.CreateVector(m.initial_capacity);
  auto by = fbb.CreateString(m.created_by);
  fbs::MetaBuilder b(fbb);
  b.add_format_version(m.format_version);
  b.add_resource_names(names);
  b.add_initial_capacity(cap);
  if (m.overcommit_factor) b.add_overcommit_factor(*m.overcommit_factor);
  b.add_created_by(by);
  return Finished(fbb, fbs::Body::Meta, b.Finish().Union());
}

StatusOr<MetaRecord> DecodeMeta(std::string_view value) {
  HDRF_ASSIGN_OR_RETURN(const fbs::Meta* m, Verified<fbs::Meta>(value, fbs::Body::Meta, "meta"));
  MetaRecord out;
  out.format_version = m->format_version();
  if (m->resource_names())
    for (const auto* s : *m->resource_names()) out.resource_names.push_back(s->str());
  if (m->initial_capacity()) {
    out.initial_capacity.resize(m->initial_capacity()->size());
    CopyScalars(m->initial_capacity(), out.initial_capacity.data());
  }
  auto f = m->overcommit_factor();
  if (f.has_value()) out.overcommit_factor = *f;
  if (m->created_by()) out.created_by = m->created_by()->str();
  return out;
}

// ---- checkpoint header ----

StatusOr<std::string> EncodeCheckpointHeader(const CheckpointHeaderRecord& h,
                                             const std::vector<std::string>& names) {
  FlatBufferBuilder fbb(1024);
  std::vector<Offset<fbs::QueueRec>> qs;
  qs.reserve(h.queues.size());
  for (const QueueSpec& q : h.queues) {
    auto o = EncodeQueue(fbb, q, names);
    if (!o.ok()) return o.status().WithContext("queue " + q.path);
    qs.push_back(*o);
  }
  auto queues = fbb.CreateVector(qs);
  auto cap = fbb.CreateVector(h.capacity);
  fbs::CheckpointHeaderBuilder b(fbb);
  b.add_seq(h.seq);
  b.add_next_seq(h.next_seq);
  b.add_capacity(cap);
  b.add_queues(queues);
  b.add_job_count(h.job_count);
  b.add_chunk_count(h.chunk_count);
  return Finished(fbb, fbs::Body::CheckpointHeader, b.Finish().Union());
}

StatusOr<CheckpointHeaderRecord> DecodeCheckpointHeader(std::string_view value,
                                                        const std::vector<std::string>& names) {
  HDRF_ASSIGN_OR_RETURN(const fbs::CheckpointHeader* h,
                        Verified<fbs::CheckpointHeader>(value, fbs::Body::CheckpointHeader,
                                                        "checkpoint header"));
  CheckpointHeaderRecord out;
  out.seq = h->seq();
  out.next_seq = h->next_seq();
  HDRF_RETURN_IF_ERROR(DecodeDense(h->capacity(), names.size(), "checkpoint capacity", &out.capacity));
  if (!h->queues() || h->queues()->size() == 0) return Bad("checkpoint header lists no queues");
  out.queues.resize(h->queues()->size());
  for (flatbuffers::uoffset_t i = 0; i < h->queues()->size(); ++i)
    HDRF_RETURN_IF_ERROR(DecodeQueue(h->queues()->Get(i), names, &out.queues[i]));
  if (out.queues[0].path != "root") return Bad("checkpoint header: first queue is not root");
  out.job_count = h->job_count();
  out.chunk_count = h->chunk_count();
  return out;
}

// ---- job chunks ----

struct JobChunkEncoder::Impl {
  FlatBufferBuilder fbb{1 << 20};
  std::vector<Offset<fbs::JobRec>> jobs;
};

JobChunkEncoder::JobChunkEncoder() : impl_(std::make_unique<Impl>()) {}
JobChunkEncoder::~JobChunkEncoder() = default;

void JobChunkEncoder::Add(const JobFields& j, size_t resources) {
  FlatBufferBuilder& fbb = impl_->fbb;
  auto name = fbb.CreateString(j.name.data(), j.name.size());
  auto user = fbb.CreateString(j.user.data(), j.user.size());
  auto task = fbb.CreateVector(j.task, resources);
  fbs::JobRecBuilder b(fbb);
  b.add_name(name);
  b.add_queue(j.queue);
  b.add_user(user);
  b.add_task(task);
  b.add_tasks(j.tasks);
  b.add_allocated(j.allocated);
  b.add_weight(j.weight);
  b.add_min_available(j.min_available);
  b.add_seq(j.seq);
  b.add_state(static_cast<fbs::JobState>(j.state));
  impl_->jobs.push_back(b.Finish());
  ++count_;
}

std::string JobChunkEncoder::Finish(uint64_t checkpoint_seq, uint32_t index) {
  FlatBufferBuilder& fbb = impl_->fbb;
  auto jobs = fbb.CreateVector(impl_->jobs);
  fbs::JobChunkBuilder b(fbb);
  b.add_checkpoint_seq(checkpoint_seq);
  b.add_index(index);
  b.add_jobs(jobs);
  std::string out = Finished(fbb, fbs::Body::JobChunk, b.Finish().Union());
  fbb.Clear();
  impl_->jobs.clear();
  count_ = 0;
  return out;
}

Status DecodeJobChunkFields(std::string_view value, size_t R, size_t queue_count, uint64_t seq,
                            uint32_t index, const std::function<Status(const JobFields&)>& fn) {
  HDRF_ASSIGN_OR_RETURN(const fbs::JobChunk* c,
                        Verified<fbs::JobChunk>(value, fbs::Body::JobChunk, "checkpoint chunk"));
  if (c->checkpoint_seq() != seq || c->index() != index)
    return Bad("checkpoint chunk says it is chunk " + std::to_string(c->index()) + " of checkpoint " +
               std::to_string(c->checkpoint_seq()) + ", expected chunk " + std::to_string(index) +
               " of checkpoint " + std::to_string(seq));
  if (!c->jobs()) return Bad("checkpoint chunk without a job list");
  JobFields f;
  std::vector<int64_t> task(R);
  f.task = task.data();
  for (const fbs::JobRec* j : *c->jobs()) {
    if (!j->name()) return Bad("checkpoint job without a name");
    f.name = std::string_view(j->name()->c_str(), j->name()->size());
    if (j->queue() >= queue_count)
      return Bad("job " + std::string(f.name) + ": queue index " + std::to_string(j->queue()) +
                 " out of range (" + std::to_string(queue_count) + " queues)");
    f.queue = j->queue();
    f.user = j->user() ? std::string_view(j->user()->c_str(), j->user()->size()) : std::string_view();
    if (!j->task() || j->task()->size() != R)
      return Bad("job " + std::string(f.name) + ": task shape has " +
                 std::to_string(j->task() ? j->task()->size() : 0) + " amounts for " +
                 std::to_string(R) + " resources");
    // Copied out: a damaged buffer can misalign the elements.
    CopyScalars(j->task(), task.data());
    f.tasks = j->tasks();
    f.weight = j->weight();
    f.min_available = j->min_available();
    f.seq = j->seq();
    f.allocated = j->allocated();
    auto st = static_cast<uint8_t>(j->state());
    if (st > static_cast<uint8_t>(JobState::kUnknown))
      return Bad("job " + std::string(f.name) + ": unknown job state " + std::to_string(st));
    f.state = static_cast<JobState>(st);
    HDRF_RETURN_IF_ERROR(fn(f));
  }
  return Status::Ok();
}

Status DecodeJobChunk(std::string_view value, const std::vector<std::string>& names,
                      const std::vector<std::string>& queue_paths, uint64_t seq, uint32_t index,
                      const std::function<Status(const JobRecord&)>& fn) {
  JobRecord rec;
  const size_t R = names.size();
  return DecodeJobChunkFields(value, R, queue_paths.size(), seq, index,
                              [&](const JobFields& f) -> Status {
                                rec.spec.name.assign(f.name);
                                rec.spec.queue = queue_paths[f.queue];
                                rec.spec.user.assign(f.user);
                                rec.spec.task.clear();
                                for (size_t r = 0; r < R; ++r)
                                  if (f.task[r] != 0)
                                    rec.spec.task.emplace_hint(rec.spec.task.end(), names[r], f.task[r]);
                                rec.spec.tasks = f.tasks;
                                rec.spec.weight = f.weight;
                                rec.spec.min_available = f.min_available;
                                rec.seq = f.seq;
                                rec.allocated = f.allocated;
                                rec.state = f.state;
                                return fn(rec);
                              });
}

// ---- event batches ----

void EventBatch::Add(const Event& e) {
  LogOp op;
  op.type = e.type;
  op.job_seq = e.job_seq;  // also an ApplyPlan's waiting job and its demand
  op.n = e.n;
  if (!IsJobEvent(e.type)) {
    op.full = static_cast<uint32_t>(full.size());
    full.push_back(e);
  }
  ops.push_back(op);
}

void EventBatch::AddJobEvents(std::span<const engine::JobEventRecord> events, int64_t time_us) {
  const size_t at = ops.size();
  ops.resize(at + events.size());
  LogOp* out = ops.data() + at;
  for (const engine::JobEventRecord& e : events) *out++ = LogOp{e.job_seq, e.n, kNoFull, e.type};
  times.resize(times.size() + events.size(), time_us);
}

Event EventBatch::At(size_t i) const {
  const LogOp& op = ops[i];
  if (op.full != kNoFull) return full[op.full];
  Event e;
  e.type = op.type;
  e.job_seq = op.job_seq;
  e.n = op.n;
  return e;
}

struct LogEncoder::Impl {
  std::vector<std::string> names;
  FlatBufferBuilder fbb{1 << 16};
  std::vector<Offset<fbs::FullEvent>> events;
};

LogEncoder::LogEncoder(std::vector<std::string> names) : impl_(std::make_unique<Impl>()) {
  impl_->names = std::move(names);
}
LogEncoder::~LogEncoder() = default;

namespace {
bool FitsTaskOp(const LogOp& op) {
  return op.full == kNoFull && op.n >= std::numeric_limits<int32_t>::min() &&
         op.n <= std::numeric_limits<int32_t>::max();
}
}  // namespace

Status LogEncoder::Encode(const EventBatch& batch, size_t begin, size_t end, std::string* out) {
  std::string_view v;
  HDRF_RETURN_IF_ERROR(Encode(batch, begin, end, &v));
  out->assign(v.data(), v.size());
  return Status::Ok();
}

Status LogEncoder::Encode(const EventBatch& batch, size_t begin, size_t end, std::string_view* out) {
  FlatBufferBuilder& fbb = impl_->fbb;
  const auto& names = impl_->names;
  fbb.Clear();
  impl_->events.clear();
  size_t n_tasks = 0;
  for (size_t i = begin; i < end; ++i) {
    const LogOp& op = batch.ops[i];
    if (FitsTaskOp(op)) {
      ++n_tasks;
      continue;
    }
    Offset<fbs::JobSpecRec> job;
    Offset<fbs::QueueRec> queue;
    Offset<flatbuffers::String> path;
    Offset<flatbuffers::Vector<const fbs::Amount*>> cluster;
    Offset<flatbuffers::Vector<const fbs::TaskOp*>> victims;
    QueueState state = QueueState::kOpen;
    if (op.full != kNoFull) {
      const Event& e = batch.full[op.full];
      switch (e.type) {
        case Event::Type::kSubmit: {
          auto j = EncodeJobSpec(fbb, e.job, names);
          if (!j.ok()) return j.status().WithContext("event " + std::to_string(batch.first_seq + i));
          job = *j;
          break;
        }
        case Event::Type::kCreateQueue:
        case Event::Type::kUpdateQueue: {
          auto q = EncodeQueue(fbb, e.queue, names);
          if (!q.ok()) return q.status().WithContext("event " + std::to_string(batch.first_seq + i));
          queue = *q;
          break;
        }
        case Event::Type::kSetQueueState:
          path = fbb.CreateString(e.path);
          state = e.state;
          break;
        case Event::Type::kDeleteQueue:
          path = fbb.CreateString(e.path);
          break;
        case Event::Type::kSetCapacity: {
          auto c = EncodeAmounts(fbb, e.cluster, names);
          if (!c.ok()) return c.status().WithContext("event " + std::to_string(batch.first_seq + i));
          cluster = *c;
          break;
        }
        case Event::Type::kApplyPlan: {
          std::vector<fbs::TaskOp> v;
          for (const Event::Victim& x : e.victims) {
            if (x.tasks < 1 || x.tasks > std::numeric_limits<int32_t>::max())
              return Status::OutOfRange("event " + std::to_string(batch.first_seq + i) +
                                        ": a plan entry of " + std::to_string(x.tasks) + " tasks");
            v.emplace_back(x.job_seq, static_cast<int32_t>(x.tasks), fbs::EventType::Release);
          }
          victims = fbb.CreateVectorOfStructs(v);
          break;
        }
        default:
          break;
      }
    }
    fbs::FullEventBuilder b(fbb);
    b.add_index(static_cast<uint32_t>(i - begin));
    b.add_type(static_cast<fbs::EventType>(op.type));
    b.add_job_seq(op.job_seq);
    b.add_n(op.n);
    if (!job.IsNull()) b.add_job(job);
    if (!queue.IsNull()) b.add_queue(queue);
    if (!path.IsNull()) b.add_path(path);
    b.add_state(static_cast<fbs::QueueState>(state));
    if (!cluster.IsNull()) b.add_cluster(cluster);
    if (!victims.IsNull()) b.add_victims(victims);
    impl_->events.push_back(b.Finish());
  }
  auto events = fbb.CreateVector(impl_->events);
  fbs::TaskOp* slots = nullptr;
  auto tasks = fbb.CreateUninitializedVectorOfStructs<fbs::TaskOp>(n_tasks, &slots);
  for (size_t i = begin; i < end; ++i) {
    const LogOp& op = batch.ops[i];
    if (!FitsTaskOp(op)) continue;
    *slots++ = fbs::TaskOp(op.job_seq, static_cast<int32_t>(op.n), static_cast<fbs::EventType>(op.type));
  }
  Offset<flatbuffers::Vector<int64_t>> times;
  if (batch.times.size() == batch.ops.size())
    times = fbb.CreateVector(batch.times.data() + begin, end - begin);
  fbs::LogBatchBuilder b(fbb);
  b.add_first_seq(batch.first_seq + begin);
  b.add_count(static_cast<uint32_t>(end - begin));
  b.add_tasks(tasks);
  b.add_events(events);
  if (!times.IsNull()) b.add_times(times);
  *out = FinishedView(fbb, fbs::Body::LogBatch, b.Finish().Union());
  return Status::Ok();
}

namespace {

// The body of a full event `fe` (its type set in `*e` already);
// `where` names it in errors.
Status DecodeFullEvent(const fbs::FullEvent* fe, const std::vector<std::string>& names, const std::string& where,
                       Event* e) {
  switch (e->type) {
    case Event::Type::kSubmit:
      if (!fe->job()) return Bad(where + ": no job");
      HDRF_RETURN_IF_ERROR(DecodeJobSpec(fe->job(), names, &e->job).WithContext(where));
      break;
    case Event::Type::kCreateQueue:
    case Event::Type::kUpdateQueue:
      if (!fe->queue()) return Bad(where + ": no queue");
      HDRF_RETURN_IF_ERROR(DecodeQueue(fe->queue(), names, &e->queue).WithContext(where));
      break;
    case Event::Type::kSetQueueState: {
      if (!fe->path()) return Bad(where + ": no queue path");
      e->path = fe->path()->str();
      auto st = static_cast<uint8_t>(fe->state());
      if (st > static_cast<uint8_t>(QueueState::kClosed))
        return Bad(where + ": unknown queue state " + std::to_string(st));
      e->state = static_cast<QueueState>(st);
      break;
    }
    case Event::Type::kDeleteQueue:
      if (!fe->path()) return Bad(where + ": no queue path");
      e->path = fe->path()->str();
      break;
    case Event::Type::kSetCapacity:
      HDRF_RETURN_IF_ERROR(
          DecodeAmounts(fe->cluster(), names, (where + ": capacity").c_str(), &e->cluster));
      break;
    case Event::Type::kApplyPlan: {
      e->job_seq = fe->job_seq();
      e->n = fe->n();
      const uint32_t nv = fe->victims() ? fe->victims()->size() : 0;
      for (uint32_t k = 0; k < nv; ++k) {
        fbs::TaskOp v;  // copied out: see DecodeAmounts on alignment
        std::memcpy(&v, fe->victims()->Data() + size_t{k} * sizeof(fbs::TaskOp), sizeof v);
        if (v.n() < 1) return Bad(where + ": plan entry " + std::to_string(k) + " stops " + std::to_string(v.n()) + " tasks");
        e->victims.push_back({v.job_seq(), v.n()});
      }
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

}  // namespace

Status DecodeLogBatch(std::string_view value, const std::vector<std::string>& names,
                      uint64_t key_seq, EventBatch* out) {
  out->clear();
  HDRF_ASSIGN_OR_RETURN(const fbs::LogBatch* b,
                        Verified<fbs::LogBatch>(value, fbs::Body::LogBatch, "log batch"));
  if (b->first_seq() != key_seq)
    return Bad("log batch says it starts at event " + std::to_string(b->first_seq()) +
               ", its key says " + std::to_string(key_seq));
  const uint32_t count = b->count();
  const uint32_t n_tasks = b->tasks() ? b->tasks()->size() : 0;
  const uint32_t n_events = b->events() ? b->events()->size() : 0;
  if (count == 0 || static_cast<uint64_t>(n_tasks) + n_events != count)
    return Bad("log batch at event " + std::to_string(key_seq) + " counts " + std::to_string(count) +
               " events but holds " + std::to_string(n_tasks) + " task and " +
               std::to_string(n_events) + " other events");
  if (b->times() && b->times()->size() != count)
    return Bad("log batch at event " + std::to_string(key_seq) + " counts " + std::to_string(count) +
               " events but holds " + std::to_string(b->times()->size()) + " event times");
  out->first_seq = key_seq;
  out->ops.resize(count);
  if (b->times()) {  // copied out: see DecodeAmounts on alignment
    out->times.resize(count);
    std::memcpy(out->times.data(), b->times()->Data(), size_t{count} * sizeof(int64_t));
  }
  uint32_t next_task = 0, next_event = 0;
  for (uint32_t i = 0; i < count; ++i) {
    LogOp& op = out->ops[i];
    const fbs::FullEvent* fe =
        next_event < n_events ? b->events()->Get(next_event) : nullptr;
    if (fe && fe->index() < i)
      return Bad("log batch at event " + std::to_string(key_seq) +
                 ": event positions out of order at position " + std::to_string(fe->index()));
    const uint64_t seq = key_seq + i;
    if (fe && fe->index() == i) {
      ++next_event;
      auto t = static_cast<uint8_t>(fe->type());
      if (t > static_cast<uint8_t>(Event::Type::kApplyPlan))
        return Bad("event " + std::to_string(seq) + ": unknown event type " + std::to_string(t));
      op.type = static_cast<Event::Type>(t);
      op.job_seq = fe->job_seq();
      op.n = fe->n();
      op.full = kNoFull;
      if (IsJobEvent(op.type)) continue;
      Event e;
      e.type = op.type;
      const std::string where = "event " + std::to_string(seq) + " (" + EventTypeName(op.type) + ")";
      HDRF_RETURN_IF_ERROR(DecodeFullEvent(fe, names, where, &e));
      op.full = static_cast<uint32_t>(out->full.size());
      out->full.push_back(std::move(e));
      continue;
    }
    if (next_task >= n_tasks)
      return Bad("log batch at event " + std::to_string(key_seq) + ": position " + std::to_string(i) +
                 " has no event");
    fbs::TaskOp t_copy;  // copied out: see DecodeAmounts on alignment
    std::memcpy(&t_copy, b->tasks()->Data() + size_t{next_task++} * sizeof(fbs::TaskOp), sizeof t_copy);
    const fbs::TaskOp* t = &t_copy;
    auto ty = static_cast<uint8_t>(t->type());
    if (ty > static_cast<uint8_t>(Event::Type::kSetCapacity) || !IsJobEvent(static_cast<Event::Type>(ty)))
      return Bad("event " + std::to_string(seq) + ": task record with event type " + std::to_string(ty));
    op.type = static_cast<Event::Type>(ty);
    op.job_seq = t->job_seq();
    op.n = t->n();
    op.full = kNoFull;
  }
  if (next_event != n_events)
    return Bad("log batch at event " + std::to_string(key_seq) + ": event position " +
               std::to_string(b->events()->Get(next_event)->index()) + " beyond its " +
               std::to_string(count) + " events");
  return Status::Ok();
}

}  // namespace hdrf::storage
