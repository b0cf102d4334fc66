// The journal (storage/journal.h): numbering, group commit and checkpoints.
//
// Three parties share a JournalImpl:
//   * engine threads call Append() and AppendBatch() (number the event, or
//     a run of job events, and add it to `pending_`, under one take of
//     `mu_` and one read of the event clock) and WaitDurable();
//   * the holder of the group token (`writing_`) takes everything pending
//     at once, encodes it as log records of up to kRecordEvents events
//     (each put into the WriteBatch from the encoder's buffer) and writes
//     them in one RocksDB write (synced for kSync), then hands the group to
//     the checkpoint thread (WriteGroup);
//   * the checkpoint thread applies written groups to its own copy of the
//     state as durable (a CheckpointImage, or with the enqueue gate on an
//     replica's tree) and serializes checkpoints from it, so checkpoints never
//     touch the engine's tree or locks and never hold up a write; while the
//     image writes one it goes on applying task events (ApplyQueued), so
//     the backlog bound holds up the engine only for a checkpoint's
//     non-task events.
#include "storage/journal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <thread>

#include "base/mutex.h"
#include "rocksdb/write_batch.h"
#include "storage/checkpoint_image.h"
#include "storage/codec.h"

namespace hdrf::storage {
namespace {

// Events per log record (a record of task events is 16 bytes per event).
constexpr size_t kRecordEvents = 1 << 16;
// WaitDurable waits while more than this many units of events are
// appended but not yet applied to the checkpoint copy (bounds memory when
// ingestion outruns the writes or a long checkpoint). A task event is one
// unit (about 40 bytes queued), any other event kFullEventUnits (a Submit
// with its strings is about 600 bytes): 2^18 task events, or 2^14
// submissions. A bound of 2^22 events held 160 MB at the peak of a
// 10^6-job replay, and 2^18 submissions up to 150 MB at the end of its
// submissions (bench/README.md).
constexpr uint64_t kMaxBacklog = uint64_t{1} << 18;
constexpr uint64_t kFullEventUnits = 16;
// kAsync: the WAL is fsynced at least this often (bounds the loss on power
// failure; a process crash loses nothing written).
constexpr auto kAsyncSyncInterval = std::chrono::milliseconds(100);
// kAsync, kNone: how often an idle writer thread looks for events, and how
// many queued events wake it early.
constexpr auto kPollInterval = std::chrono::milliseconds(1);
constexpr size_t kWakeEvents = 8192;
// The spare batches kept for reuse (GiveBack): at most kPoolBatches, each
// with room for at most kPoolOps events (32 bytes an event: 1 MB) and
// kPoolFull non-task events (480 bytes each, sizeof(Event): 120 KB). A
// group is usually a millisecond of events (a few thousand); the larger
// ones, taken while the writer was behind, are freed. Keeping any batch of
// up to 2^18 events, as before, kept 23 MB of the setup's groups of
// submissions to the end of a 10^6-job replay (bench/README.md "The
// durable engine's memory outside the image").
constexpr size_t kPoolBatches = 4;
constexpr size_t kPoolOps = size_t{1} << 15;
constexpr size_t kPoolFull = 256;

std::atomic<bool> g_ack_before_sync{false};  // SetAckBeforeSyncForTesting

class JournalImpl final : public Journal {
 public:
  JournalImpl(const JournalOptions& options, std::unique_ptr<Store> store,
              std::vector<std::string> names, uint64_t last_seq, uint64_t checkpoint_seq)
      : durability_(options.durability),
        options_(options),
        retention_(options.retention),
        store_(std::move(store)),
        names_(std::move(names)),
        clock_(options.clock),
        base_seq_(last_seq),
        session_start_(last_seq),
        enc_(names_),
        last_seq_(last_seq),
        written_seq_(last_seq),
        durable_seq_(last_seq),
        synced_seq_(last_seq),
        applied_seq_(last_seq),
        checkpoint_seq_(checkpoint_seq) {}

  ~JournalImpl() override { (void)Close(); }

  void Start() {
    writer_ = std::thread([this] { WriterLoop(); });
    checkpointer_ = std::thread([this] { CheckpointLoop(); });
  }

  Status health() const override {
    if (!failed_.load(std::memory_order_acquire)) return Status::Ok();
    base::MutexLock l(prog_mu_);
    return error_;
  }

  uint64_t Append(const Event& e) override {
    base::MutexLock l(mu_);
    const uint64_t seq = ++last_seq_;
    if (pending_.empty()) pending_.first_seq = seq;
    pending_.Add(e, clock_());
    Queued(IsJobEvent(e.type) ? 1 : kFullEventUnits);
    return seq;
  }

  // One take of mu_ and one clock read for the whole run.
  uint64_t AppendBatch(std::span<const engine::JobEventRecord> events) override {
    base::MutexLock l(mu_);
    const uint64_t first = last_seq_ + 1;
    last_seq_ += events.size();
    if (pending_.empty()) pending_.first_seq = first;
    pending_.AddJobEvents(events, clock_());
    Queued(events.size());
    return first;
  }

  uint64_t last_seq() const override {
    base::MutexLock l(mu_);
    return last_seq_;
  }

  Status WaitDurable(uint64_t seq) override {
    const bool sync = durability_ == Durability::kSync;
    if (sync) CommitAsLeader(seq);
    // The backlog as of now (events of other threads included: with kSync
    // they are asked to be written below, so that the wait cannot depend
    // on a caller that waits too).
    const uint64_t units = appended_units_.load(std::memory_order_relaxed);
    auto backlog_ok = [&] { return units <= applied_units_.load(std::memory_order_acquire) + kMaxBacklog; };
    auto done = [&] { return (!sync || durable_seq_.load(std::memory_order_acquire) >= seq) && backlog_ok(); };
    if (!done() && !failed_.load(std::memory_order_acquire)) {
      if (sync && !backlog_ok()) {
        base::MutexLock l(mu_);
        flush_to_ = std::max(flush_to_, last_seq_);
        if (writer_sleeping_) work_cv_.notify_one();
      }
      base::MutexLock l(prog_mu_);
      while (!(done() || failed_.load(std::memory_order_acquire))) l.Wait(prog_cv_);
    }
    if (failed_.load(std::memory_order_acquire) &&
        durable_seq_.load(std::memory_order_acquire) < seq) {
      base::MutexLock l(prog_mu_);
      return error_.WithContext("event " + std::to_string(seq) + " is not durable");
    }
    return Status::Ok();
  }

  uint64_t durable_seq() const override { return durable_seq_.load(std::memory_order_acquire); }

  void StartWrite(uint64_t seq) override {
    if (durability_ != Durability::kSync || durable_seq_.load(std::memory_order_acquire) >= seq) return;
    base::MutexLock l(mu_);
    flush_to_ = std::max(flush_to_, std::min(seq, last_seq_));
    if (writer_sleeping_) work_cv_.notify_one();
  }

  Status Flush() override {
    uint64_t target;
    {
      // Under the lock: a kSync writer thread waits for this wake-up
      // without a timeout, and must not miss it.
      base::MutexLock l(mu_);
      target = last_seq_;
      flush_to_ = std::max(flush_to_, target);
      work_cv_.notify_one();
    }
    {
      base::MutexLock l(prog_mu_);
      while (!(written_seq_.load() >= target || failed_.load())) l.Wait(prog_cv_);
    }
    if (durability_ == Durability::kAsync && !failed_.load()) {
      const uint64_t written = written_seq_.load();
      Status s = store_->SyncWal();
      if (!s.ok()) Fail(s);
      else Progress(synced_seq_, written);
    }
    if (failed_.load()) {
      // What was made durable before the failure stays durable: kSync's
      // synced writes, and kAsync's only up to its last WAL sync (its
      // durable_seq_ counts writes, which a power loss may take back:
      // tests/storage/power_cut_test.cc).
      const uint64_t safe =
          durability_ == Durability::kAsync ? synced_seq_.load() : durable_seq_.load();
      if (durability_ != Durability::kNone && safe >= target) return Status::Ok();
      return health();
    }
    return Status::Ok();
  }

  Status Checkpoint() override {
    HDRF_RETURN_IF_ERROR(Flush());
    const uint64_t target = written_seq_.load();
    if (checkpoint_seq_.load() >= target) return Status::Ok();
    {
      base::MutexLock l(ck_mu_);
      ckpt_request_ = std::max(ckpt_request_, target);
    }
    ck_cv_.notify_one();
    base::MutexLock l(prog_mu_);
    while (!(checkpoint_seq_.load() >= target || failed_.load())) l.Wait(prog_cv_);
    if (checkpoint_seq_.load() >= target) return Status::Ok();
    return error_;
  }

  Status Close() override;

 private:
  void Fail(const Status& s) {
    {
      base::MutexLock l(prog_mu_);
      if (!failed_.load()) {
        error_ = s;
        failed_.store(true, std::memory_order_release);
      }
    }
    prog_cv_.notify_all();
  }

  void Progress(std::atomic<uint64_t>& a, uint64_t v) {
    {
      base::MutexLock l(prog_mu_);
      if (v > a.load()) a.store(v, std::memory_order_release);
    }
    prog_cv_.notify_all();
  }

  // After events weighing `units` were queued: counts them, and wakes the
  // writer thread when due. kSync: the caller commits the group itself in
  // WaitDurable. The others: the writer polls every kPollInterval, so that
  // a steady stream of events does not pay a wake-up each under the
  // caller's locks, and is woken once kWakeEvents are queued.
  void Queued(uint64_t units) REQUIRES(mu_) {
    units_ += units;
    appended_units_.store(units_, std::memory_order_relaxed);
    if (writer_sleeping_ && durability_ != Durability::kSync && pending_.size() >= kWakeEvents) {
      work_cv_.notify_one();
      writer_sleeping_ = false;  // one wake-up: the writer takes the group when it gets mu_
    }
  }

  EventBatch TakeSpare() {
    base::MutexLock l(pool_mu_);
    if (pool_.empty()) return EventBatch();
    EventBatch b = std::move(pool_.back());
    pool_.pop_back();
    return b;
  }

  // Keeps `b`'s buffers for a later group (kPoolBatches of them), unless
  // they are larger than a usual group needs (kPoolOps, kPoolFull).
  void GiveBack(EventBatch&& b) {
    b.clear();
    if (b.ops.capacity() > kPoolOps || b.times.capacity() > kPoolOps) return;  // let big ones go
    if (b.full.capacity() > kPoolFull) std::vector<Event>().swap(b.full);
    base::MutexLock l(pool_mu_);
    if (pool_.size() < kPoolBatches) pool_.push_back(std::move(b));
  }

  // Under mu_: when the token is free and events are pending, takes the
  // token and the pending events (swapped into *b).
  bool TakeGroup(EventBatch* b) REQUIRES(mu_) {
    if (writing_ || pending_.empty()) return false;
    writing_ = true;
    std::swap(*b, pending_);
    return true;
  }
  // Whether the writer thread writes the pending events (kSync: only those
  // Flush() or Close() asks for).
  bool WriterTakes() const REQUIRES(mu_) {
    return durability_ != Durability::kSync || stop_ || flush_to_ >= pending_.first_seq;
  }
  // Gives the token back and tells those waiting for it.
  void ReleaseToken() {
    {
      base::MutexLock l(mu_);
      writing_ = false;
      if (writer_sleeping_ && !pending_.empty() && WriterTakes()) work_cv_.notify_one();
    }
    {
      base::MutexLock l(prog_mu_);
      ++groups_;
    }
    prog_cv_.notify_all();
  }

  void CommitAsLeader(uint64_t seq);
  void WriterLoop();
  // The token holder: writes group `b` and hands it to the checkpoint thread.
  void WriteGroup(EventBatch&& b);
  Status LoadCheckpointCopy();
  // The live jobs of the checkpoint copy (checkpoint thread only).
  uint64_t CopyJobs() const { return image_ ? image_->job_count() : copy_ ? copy_->tree().job_count() : 0; }
  void DoCheckpoint();
  // Applies ck_work_ to the checkpoint copy; `while_writing` (from the
  // image's Write): first takes ck_queue_, and stops at the first event that
  // is not a task event (it waits for the write to end).
  void ApplyQueued(bool while_writing);
  // Moves the groups the writer queued to the end of ck_work_.
  void TakeQueued() REQUIRES(ck_mu_) {
    for (EventBatch& b : ck_queue_) ck_work_.push_back(std::move(b));
    ck_queue_.clear();
  }
  // Applies events [begin, end) of `b`, and counts them as applied.
  Status ApplyToCopy(const EventBatch& b, size_t begin, size_t end);
  void CheckpointLoop();

  const Durability durability_;
  const JournalOptions options_;  // checkpoint_every, checkpoint_events_per_job
  const LogRetention retention_;
  std::unique_ptr<Store> store_;
  const std::vector<std::string> names_;
  const std::function<int64_t()> clock_;
  const uint64_t base_seq_;       // the state the checkpoint copy loads from the store
  const uint64_t session_start_;  // last event before this session

  // Group token holder only (`writing_`): the encoder and its buffers.
  LogEncoder enc_;
  rocksdb::WriteBatch wb_;
  std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();

  // Numbering and queueing.
  mutable base::Mutex mu_;
  std::condition_variable work_cv_;
  uint64_t last_seq_ GUARDED_BY(mu_);
  uint64_t units_ GUARDED_BY(mu_) = 0;  // backlog units appended (kMaxBacklog) ...
  std::atomic<uint64_t> appended_units_{0};  // ... published, read without mu_
  EventBatch pending_ GUARDED_BY(mu_);
  bool writing_ GUARDED_BY(mu_) = false;  // the group token
  // The last event the writer thread is asked to write (kSync: by Flush(),
  // StartWrite() and a WaitDurable held up by the backlog).
  uint64_t flush_to_ GUARDED_BY(mu_) = 0;
  bool writer_sleeping_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;

  // Progress and the sticky error. The progress counters are atomics, read
  // without the lock and written under it (so that a waiter on prog_cv_
  // cannot miss a change between its test and its wait).
  mutable base::Mutex prog_mu_;
  std::condition_variable prog_cv_;
  uint64_t groups_ GUARDED_BY(prog_mu_) = 0;  // token releases
  std::atomic<uint64_t> written_seq_;
  std::atomic<uint64_t> durable_seq_;
  std::atomic<uint64_t> synced_seq_;  // kAsync: covered by a WAL sync
  std::atomic<uint64_t> applied_seq_;
  std::atomic<uint64_t> applied_units_{0};  // backlog units applied (kMaxBacklog)
  std::atomic<uint64_t> checkpoint_seq_;
  std::atomic<bool> failed_{false};
  Status error_ GUARDED_BY(prog_mu_);

  // The checkpoint side.
  base::Mutex ck_mu_;
  std::condition_variable ck_cv_;
  std::deque<EventBatch> ck_queue_ GUARDED_BY(ck_mu_);
  uint64_t ckpt_request_ GUARDED_BY(ck_mu_) = 0;
  bool ck_stop_ GUARDED_BY(ck_mu_) = false;
  // The checkpoint copy (checkpoint thread only): an image, or with the
  // enqueue gate on a replica (a tree, its replayer and position).
  std::unique_ptr<CheckpointImage> image_;
  std::optional<Replica> copy_;
  uint64_t since_checkpoint_ = 0;          // checkpoint thread only
  // Checkpoint thread only: groups taken from ck_queue_, in order, not yet
  // applied; ck_work_at_ events of the first are.
  std::deque<EventBatch> ck_work_;
  size_t ck_work_at_ = 0;

  base::Mutex pool_mu_;
  std::vector<EventBatch> pool_ GUARDED_BY(pool_mu_);

  base::Mutex close_mu_;
  bool closed_ GUARDED_BY(close_mu_) = false;
  Status close_status_ GUARDED_BY(close_mu_);

  std::thread writer_, checkpointer_;
};

// kSync group commit (LevelDB's DBImpl::Write): until `seq` is durable, the
// caller that finds the token free commits the group of everything queued,
// its own event and those of the callers behind it; the others wait for
// its write, or for the token to come free (their event may have come
// after the group it took).
void JournalImpl::CommitAsLeader(uint64_t seq) {
  while (durable_seq_.load(std::memory_order_acquire) < seq && !failed_.load()) {
    uint64_t groups;
    {
      base::MutexLock l(prog_mu_);
      groups = groups_;
    }
    EventBatch b = TakeSpare();
    bool leader;
    {
      base::MutexLock l(mu_);
      leader = TakeGroup(&b);
    }
    if (leader) {
      WriteGroup(std::move(b));
      continue;
    }
    GiveBack(std::move(b));
    base::MutexLock l(prog_mu_);
    while (durable_seq_.load(std::memory_order_acquire) < seq && !failed_.load() && groups_ == groups)
      l.Wait(prog_cv_);
  }
}

void JournalImpl::WriterLoop() {
  for (;;) {
    EventBatch b = TakeSpare();
    {
      base::MutexLock l(mu_);
      bool took;
      while (!(took = WriterTakes() && TakeGroup(&b)) && !(stop_ && pending_.empty() && !writing_)) {
        writer_sleeping_ = true;
        // kSync: callers commit their own groups; the writer thread writes
        // only what Flush(), Close() and StartWrite() ask for (events whose
        // caller did not wait, after an error, or waits later), and what a
        // caller held up by the backlog needs written.
        if (durability_ == Durability::kSync) l.Wait(work_cv_);
        else l.WaitFor(work_cv_, kPollInterval);
        writer_sleeping_ = false;
      }
      if (!took) break;  // stopped, everything written
    }
    WriteGroup(std::move(b));
  }
}

void JournalImpl::WriteGroup(EventBatch&& b) {
  if (failed_.load()) {  // nothing after a failure is written
    GiveBack(std::move(b));
    return ReleaseToken();
  }
  if (durability_ != Durability::kNone) {
    Status s;
    for (size_t i = 0; i < b.size() && s.ok(); i += kRecordEvents) {
      const size_t end = std::min(b.size(), i + kRecordEvents);
      std::string_view value;  // the encoder's buffer: WriteBatch::Put copies it
      s = enc_.Encode(b, i, end, &value);
      if (s.ok()) wb_.Put(LogKey(b.first_seq + i), rocksdb::Slice(value.data(), value.size()));
    }
    if (s.ok())
      s = store_->Write(&wb_, durability_ == Durability::kSync &&
                                  !g_ack_before_sync.load(std::memory_order_relaxed));
    wb_.Clear();
    if (s.ok() && durability_ == Durability::kAsync &&
        std::chrono::steady_clock::now() - last_sync_ >= kAsyncSyncInterval) {
      s = store_->SyncWal();
      last_sync_ = std::chrono::steady_clock::now();
      if (s.ok()) Progress(synced_seq_, b.last_seq());
    }
    if (!s.ok()) {
      Fail(s.WithContext("writing events " + std::to_string(b.first_seq) + ".." +
                         std::to_string(b.last_seq())));
      GiveBack(std::move(b));
      return ReleaseToken();
    }
  }
  const uint64_t last = b.last_seq();
  {
    // Under the token: groups reach the checkpoint thread in order.
    base::MutexLock l(ck_mu_);
    ck_queue_.push_back(std::move(b));
  }
  ck_cv_.notify_one();
  {
    base::MutexLock l(prog_mu_);
    written_seq_.store(last, std::memory_order_release);
    if (durability_ != Durability::kNone) durable_seq_.store(last, std::memory_order_release);
  }
  ReleaseToken();  // notifies prog_cv_
}

Status JournalImpl::Close() {
  base::MutexLock close_lock(close_mu_);
  if (closed_) return close_status_;
  closed_ = true;
  Status s = Flush();
  // A checkpoint makes the next open fast; in kNone it is what persists the
  // session's events at all. A store only looked at (no events) is left as
  // it was.
  const bool new_events = written_seq_.load() > session_start_;
  if (s.ok() && written_seq_.load() > checkpoint_seq_.load() &&
      (new_events || durability_ != Durability::kNone))
    s = Checkpoint();
  {
    base::MutexLock l(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  {
    base::MutexLock l(ck_mu_);
    ck_stop_ = true;
  }
  ck_cv_.notify_all();
  if (checkpointer_.joinable()) checkpointer_.join();
  const bool writable = store_->mode() == Store::Mode::kReadWrite;
  if (s.ok() && !failed_.load() && writable) {
    // The next open then reads SST files instead of replaying the WAL.
    Status f = store_->FlushMemtable();
    if (!f.ok()) s = f;
  }
  Status c = store_->Close();
  if (s.ok()) s = c;
  // Every event is durable now: the close mark says up to which
  // (storage/store.h; a later load that reaches less has lost some).
  if (s.ok() && !failed_.load() && writable)
    s = Store::WriteCloseMark(store_->path(), std::max(written_seq_.load(), checkpoint_seq_.load()));
  close_status_ = s;
  return s;
}

// Loads the checkpoint copy of the state at base_seq_ from the store: an
// image (storage/checkpoint_image.h) when the store has no enqueue gate,
// else a tree.
Status JournalImpl::LoadCheckpointCopy() {
  auto meta = store_->ReadMeta();
  if (!meta.ok()) return meta.status().WithContext("event log: loading the checkpoint state");
  if (CheckpointImage::Supports(*meta)) {
    auto im = CheckpointImage::Load(*store_, base_seq_);
    if (!im.ok()) return im.status().WithContext("event log: loading the checkpoint image");
    image_ = std::move(im).value();
    return Status::Ok();
  }
  LoadOptions lo;
  lo.verify_files = false;
  lo.stop_at = base_seq_;
  auto st = Replica::Load(*store_, lo);
  if (!st.ok()) return st.status().WithContext("event log: loading the checkpoint state");
  copy_.emplace(std::move(st).value());
  return Status::Ok();
}

void JournalImpl::DoCheckpoint() {
  const uint64_t seq = applied_seq_.load();
  if (store_->mode() != Store::Mode::kReadWrite) {
    Status r = store_->Reopen(Store::Mode::kReadWrite);
    if (!r.ok()) return Fail(r.WithContext("checkpoint at event " + std::to_string(seq)));
  }
  const uint64_t before = since_checkpoint_;
  // The image goes on taking task events while it writes (ApplyQueued):
  // the engine is not held up by the backlog bound for a whole checkpoint.
  Status s = image_ ? image_->Write(*store_, seq, retention_, [this] { ApplyQueued(/*while_writing=*/true); })
                    : WriteCheckpoint(*store_, copy_->tree(), seq, names_, /*stats=*/nullptr, kJobsPerChunk, retention_);
  if (!s.ok()) return Fail(s);
  since_checkpoint_ -= before;  // the events applied during the write count towards the next
  {
    base::MutexLock l(prog_mu_);
    checkpoint_seq_.store(seq);
    if (durability_ == Durability::kNone && seq > durable_seq_.load()) durable_seq_.store(seq);
  }
  prog_cv_.notify_all();
}

Status JournalImpl::ApplyToCopy(const EventBatch& b, size_t begin, size_t end) {
  size_t at = begin;
  Status s = image_ ? image_->ApplyRange(b, begin, end, &at) : copy_->Apply(b, begin, end, &at);
  if (!s.ok())
    return Status::Internal("event log: event " + std::to_string(b.first_seq + at) +
                            " applied by the engine fails on the checkpoint copy: " + s.message());
  uint64_t units = end - begin;
  for (size_t i = begin; i < end; ++i)
    if (b.ops[i].full != kNoFull) units += kFullEventUnits - 1;  // as Append counts it
  since_checkpoint_ += end - begin;
  {
    base::MutexLock l(prog_mu_);
    applied_units_.fetch_add(units, std::memory_order_release);
  }
  Progress(applied_seq_, b.first_seq + end - 1);
  return Status::Ok();
}

void JournalImpl::ApplyQueued(bool while_writing) {
  if (while_writing) {  // take what the writer queued since
    base::MutexLock l(ck_mu_);
    TakeQueued();
  }
  while (!ck_work_.empty() && !failed_.load()) {
    EventBatch& b = ck_work_.front();
    size_t end = b.size();
    if (while_writing) {  // task events only, up to the first other one
      end = ck_work_at_;
      while (end < b.size() && CheckpointImage::AppliesWhileWriting(b.ops[end])) ++end;
    }
    if (end > ck_work_at_) {
      if (Status s = ApplyToCopy(b, ck_work_at_, end); !s.ok()) return Fail(s);
      ck_work_at_ = end;
    }
    if (ck_work_at_ < b.size()) return;  // an event that waits for the write
    GiveBack(std::move(b));
    ck_work_.pop_front();
    ck_work_at_ = 0;
    if (!while_writing && durability_ != Durability::kNone && options_.checkpoint_every > 0 &&
        since_checkpoint_ >= CheckpointInterval(options_, CopyJobs()))
      DoCheckpoint();
  }
}

void JournalImpl::CheckpointLoop() {
  for (;;) {
    uint64_t want = 0;
    bool stop = false;
    {
      base::MutexLock l(ck_mu_);
      // ck_work_ may hold events a checkpoint's write left (ApplyQueued).
      while (!(!ck_queue_.empty() || !ck_work_.empty() || ck_stop_ ||
               (!failed_.load() && ckpt_request_ > checkpoint_seq_.load())))
        l.Wait(ck_cv_);
      TakeQueued();
      want = ckpt_request_;
      stop = ck_stop_;
    }
    // Loaded when first needed: an engine that only looks at a store
    // (hdrf recover, hdrf queues --db) never pays for a second copy.
    if (!copy_ && !image_ && !failed_.load() && (!ck_work_.empty() || want > checkpoint_seq_.load())) {
      if (Status s = LoadCheckpointCopy(); !s.ok()) Fail(s);
    }
    ApplyQueued(/*while_writing=*/false);
    if (!failed_.load() && want > checkpoint_seq_.load() && applied_seq_.load() >= want) DoCheckpoint();
    if (failed_.load()) {  // release backpressure
      {
        base::MutexLock l(prog_mu_);
        applied_units_.store(UINT64_MAX / 2, std::memory_order_release);
      }
      Progress(applied_seq_, UINT64_MAX / 2);
      ck_work_.clear();
    }
    if (stop) {
      base::MutexLock l(ck_mu_);
      if (ck_queue_.empty() && ck_work_.empty()) break;
    }
  }
}

StatusOr<std::unique_ptr<Journal>> Started(std::unique_ptr<JournalImpl> j) {
  j->Start();
  return std::unique_ptr<Journal>(std::move(j));
}

}  // namespace

uint64_t CheckpointInterval(const JournalOptions& options, uint64_t jobs) {
  if (options.checkpoint_every == 0) return 0;
  const uint64_t per_job = options.checkpoint_events_per_job;
  const uint64_t scaled = jobs > UINT64_MAX / std::max<uint64_t>(per_job, 1) ? UINT64_MAX : per_job * jobs;
  return std::max(options.checkpoint_every, scaled);
}

void SetAckBeforeSyncForTesting(bool on) { g_ack_before_sync.store(on); }

StatusOr<std::unique_ptr<Journal>> CreateJournal(const std::string& path, const engine::Tree& tree,
                                                 std::optional<double> overcommit_factor,
                                                 const JournalOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  MetaRecord meta = MetaFor(tree, overcommit_factor);
  auto store = Store::Create(path, meta);
  if (!store.ok()) return store.status();
  Status s = WriteCheckpoint(**store, tree, /*seq=*/0, meta.resource_names);
  if (!s.ok()) {
    // Leave no half-made store behind (the directory was empty or absent).
    (void)(*store)->Close();
    if (existed) {
      for (const auto& entry : fs::directory_iterator(path, ec)) fs::remove_all(entry.path(), ec);
    } else {
      fs::remove_all(path, ec);
    }
    return s;
  }
  return AdoptJournal(std::move(store).value(), meta.resource_names, /*last_seq=*/0,
                      /*checkpoint_seq=*/0, options);
}

StatusOr<RecoveredJournal> RecoverJournal(const std::string& path, const LoadOptions& load,
                                          const JournalOptions& options) {
  auto store = Store::Open(path, Store::Mode::kReadOnly);
  if (!store.ok()) return store.status();
  const auto t0 = std::chrono::steady_clock::now();
  auto state = Replica::Load(**store, load);
  if (!state.ok()) return state.status();
  RecoveredJournal r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // kNone writes only at a checkpoint (and reopens then); the others append
  // from now on.
  if (options.durability != Durability::kNone)
    HDRF_RETURN_IF_ERROR((*store)->Reopen(Store::Mode::kReadWrite));
  HDRF_ASSIGN_OR_RETURN(r.journal, AdoptJournal(std::move(store).value(), state->meta().resource_names,
                                                state->last_seq(), state->checkpoint_seq(), options));
  r.state.emplace(std::move(state).value());
  return r;
}

StatusOr<std::unique_ptr<Journal>> AdoptJournal(std::unique_ptr<Store> store,
                                                std::vector<std::string> names, uint64_t last_seq,
                                                uint64_t checkpoint_seq, const JournalOptions& options) {
  if (!options.clock) return Status::InvalidArgument("journal: no event clock");
  return Started(std::make_unique<JournalImpl>(options, std::move(store), std::move(names), last_seq,
                                               checkpoint_seq));
}

}  // namespace hdrf::storage
