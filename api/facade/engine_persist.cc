// Persistence glue: the EventLog over storage/ (docs/storage.md).
//
// Three parties share a PersistentLog:
//   * engine threads call Enqueue() (append to `pending_`, O(1)) under the
//     lock that numbered the event (Impl::rw exclusively, or Impl::seq_mu:
//     api/facade/event_log.h), and WaitDurable() outside it;
//   * the writer thread takes everything pending at once, encodes it as log
//     records of up to kRecordEvents events and writes them in one RocksDB
//     write (group commit; synced for kSync), then hands the batch on;
//   * the shadow thread applies written batches to its own engine::Tree (a
//     copy of the state as durable) and serializes checkpoints from it, so
//     checkpoints never touch the engine's tree or mutex and never hold up
//     the writer.
// A write or checkpoint failure is sticky: health() returns it and the
// engine refuses further events.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <thread>

#include "api/facade/event_log.h"
#include "base/mutex.h"
#include "rocksdb/write_batch.h"
#include "storage/codec.h"
#include "storage/state_io.h"
#include "storage/store.h"

namespace hdrf {
namespace {

using storage::EventBatch;
using storage::Store;

// Events per log record (a record of task events is 16 bytes per event).
constexpr size_t kRecordEvents = 1 << 16;
// Engine calls wait in WaitDurable while more events than this are queued
// but not yet applied to the shadow state (bounds memory when ingestion
// outruns the writer or a long checkpoint).
constexpr uint64_t kMaxBacklog = uint64_t{1} << 22;
// kAsync: the WAL is fsynced at least this often (bounds the loss on power
// failure; a process crash loses nothing written).
constexpr auto kAsyncSyncInterval = std::chrono::milliseconds(100);
// kAsync, kNone: how often an idle writer looks for events, and how many
// queued events wake it early.
constexpr auto kPollInterval = std::chrono::milliseconds(1);
constexpr size_t kWakeEvents = 8192;

std::atomic<bool> g_ack_before_sync{false};  // SetAckBeforeSyncForTesting

class PersistentLog final : public EventLog {
 public:
  PersistentLog(const EngineOptions& options, std::unique_ptr<Store> store,
                std::vector<std::string> names, uint64_t last_seq, uint64_t checkpoint_seq)
      : durability_(options.durability),
        checkpoint_every_(options.checkpoint_every),
        retention_{options.log_retention_events, options.log_retention_seconds},
        store_(std::move(store)),
        names_(std::move(names)),
        clock_(options.event_clock),
        base_seq_(last_seq),
        session_start_(last_seq),
        enqueued_seq_(last_seq),
        written_seq_(last_seq),
        durable_seq_(last_seq),
        synced_seq_(last_seq),
        applied_seq_(last_seq),
        checkpoint_seq_(checkpoint_seq) {}

  ~PersistentLog() override { (void)Close(); }

  void Start() {
    writer_ = std::thread([this] { WriterLoop(); });
    shadower_ = std::thread([this] { ShadowLoop(); });
  }

  Status health() const override {
    if (!failed_.load(std::memory_order_acquire)) return Status::Ok();
    base::MutexLock l(prog_mu_);
    return error_;
  }

  void Enqueue(uint64_t seq, const Event& e) override {
    base::MutexLock l(mu_);
    if (seq != enqueued_seq_ + 1 && !order_error_) order_error_ = seq;
    if (pending_.empty()) pending_.first_seq = seq;
    pending_.Add(e, clock_ ? clock_() : HostClockMicros());
    enqueued_seq_ = seq;
    // kSync wakes the writer at once (a caller waits); otherwise the writer
    // polls every kPollInterval, so that a steady stream of events does not
    // pay a wake-up each under the engine's numbering lock.
    if (writer_sleeping_ && (durability_ == Durability::kSync || pending_.size() >= kWakeEvents))
      work_cv_.notify_one();
  }

  Status WaitDurable(uint64_t seq) override {
    const bool sync = durability_ == Durability::kSync;
    auto done = [&] {
      return (!sync || durable_seq_.load(std::memory_order_acquire) >= seq) &&
             seq <= applied_seq_.load(std::memory_order_acquire) + kMaxBacklog;
    };
    if (!done() && !failed_.load(std::memory_order_acquire)) {
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

  Status Flush() override {
    uint64_t target;
    {
      base::MutexLock l(mu_);
      target = enqueued_seq_;
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
      base::MutexLock l(sh_mu_);
      ckpt_request_ = std::max(ckpt_request_, target);
    }
    sh_cv_.notify_one();
    base::MutexLock l(prog_mu_);
    while (!(checkpoint_seq_.load() >= target || failed_.load())) l.Wait(prog_cv_);
    if (checkpoint_seq_.load() >= target) return Status::Ok();
    return error_;
  }

  Status Close() override {
    base::MutexLock close_lock(close_mu_);
    if (closed_) return close_status_;
    closed_ = true;
    Status s = Flush();
    // A checkpoint makes the next open fast; in kNone it is what persists
    // the session's events at all. A store only looked at (no events) is
    // left as it was.
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
      base::MutexLock l(sh_mu_);
      sh_stop_ = true;
    }
    sh_cv_.notify_all();
    if (shadower_.joinable()) shadower_.join();
    if (s.ok() && !failed_.load() && store_->mode() == Store::Mode::kReadWrite) {
      // The next open then reads SST files instead of replaying the WAL.
      Status f = store_->FlushMemtable();
      if (!f.ok()) s = f;
    }
    Status c = store_->Close();
    if (s.ok()) s = c;
    close_status_ = s;
    return s;
  }

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

  EventBatch TakeSpare() {
    base::MutexLock l(pool_mu_);
    if (pool_.empty()) return EventBatch();
    EventBatch b = std::move(pool_.back());
    pool_.pop_back();
    return b;
  }

  void GiveBack(EventBatch&& b) {
    b.clear();
    if (b.ops.capacity() > 4 * kRecordEvents) return;  // let big ones go
    base::MutexLock l(pool_mu_);
    if (pool_.size() < 4) pool_.push_back(std::move(b));
  }

  void WriterLoop() {
    storage::LogEncoder enc(names_);
    rocksdb::WriteBatch wb;
    std::string value;
    auto last_sync = std::chrono::steady_clock::now();
    for (;;) {
      EventBatch b = TakeSpare();
      uint64_t order_error = 0;
      {
        base::MutexLock l(mu_);
        while (pending_.empty() && !stop_) {
          writer_sleeping_ = true;
          if (durability_ == Durability::kSync) l.Wait(work_cv_);
          else l.WaitFor(work_cv_, kPollInterval);
          writer_sleeping_ = false;
        }
        if (pending_.empty()) break;
        std::swap(b, pending_);
        order_error = order_error_;
      }
      if (order_error && !failed_.load())
        Fail(Status::Internal("event log: event " + std::to_string(order_error) +
                              " enqueued out of order"));
      if (failed_.load()) continue;  // nothing after a failure is written
      if (durability_ != Durability::kNone) {
        Status s;
        for (size_t i = 0; i < b.size() && s.ok(); i += kRecordEvents) {
          const size_t end = std::min(b.size(), i + kRecordEvents);
          s = enc.Encode(b, i, end, &value);
          if (s.ok()) wb.Put(storage::LogKey(b.first_seq + i), value);
        }
        if (s.ok())
          s = store_->Write(&wb, durability_ == Durability::kSync &&
                                     !g_ack_before_sync.load(std::memory_order_relaxed));
        wb.Clear();
        if (s.ok() && durability_ == Durability::kAsync &&
            std::chrono::steady_clock::now() - last_sync >= kAsyncSyncInterval) {
          s = store_->SyncWal();
          last_sync = std::chrono::steady_clock::now();
          if (s.ok()) Progress(synced_seq_, b.last_seq());
        }
        if (!s.ok()) {
          Fail(s.WithContext("writing events " + std::to_string(b.first_seq) + ".." +
                             std::to_string(b.last_seq())));
          continue;
        }
      }
      const uint64_t last = b.last_seq();
      {
        base::MutexLock l(sh_mu_);
        sh_queue_.push_back(std::move(b));
      }
      sh_cv_.notify_one();
      {
        base::MutexLock l(prog_mu_);
        written_seq_.store(last, std::memory_order_release);
        if (durability_ != Durability::kNone) durable_seq_.store(last, std::memory_order_release);
      }
      prog_cv_.notify_all();
    }
  }

  // Loads the shadow copy of the state at base_seq_ from the store.
  Status LoadShadow() {
    storage::LoadOptions lo;
    lo.verify_files = false;
    lo.stop_at = base_seq_;
    auto st = storage::LoadState(*store_, lo);
    if (!st.ok()) return st.status().WithContext("event log: loading the checkpoint state");
    shadow_ = std::move(st->tree);
    replayer_ = std::make_unique<storage::Replayer>(*shadow_);
    return Status::Ok();
  }

  void DoCheckpoint() {
    const uint64_t seq = applied_seq_.load();
    if (store_->mode() != Store::Mode::kReadWrite) {
      Status r = store_->Reopen(Store::Mode::kReadWrite);
      if (!r.ok()) return Fail(r.WithContext("checkpoint at event " + std::to_string(seq)));
    }
    Status s = storage::WriteCheckpoint(*store_, *shadow_, seq, names_, /*stats=*/nullptr,
                                        storage::kJobsPerChunk, retention_);
    if (!s.ok()) return Fail(s);
    since_checkpoint_ = 0;
    {
      base::MutexLock l(prog_mu_);
      checkpoint_seq_.store(seq);
      if (durability_ == Durability::kNone && seq > durable_seq_.load()) durable_seq_.store(seq);
    }
    prog_cv_.notify_all();
  }

  void ShadowLoop() {
    for (;;) {
      std::deque<EventBatch> work;
      uint64_t want = 0;
      bool stop = false;
      {
        base::MutexLock l(sh_mu_);
        while (!(!sh_queue_.empty() || sh_stop_ ||
                 (!failed_.load() && ckpt_request_ > checkpoint_seq_.load())))
          l.Wait(sh_cv_);
        work.swap(sh_queue_);
        want = ckpt_request_;
        stop = sh_stop_;
      }
      // Loaded when first needed: an engine that only looks at a store
      // (hdrf recover, hdrf queues --db) never pays for a second copy.
      if (!shadow_ && !failed_.load() && (!work.empty() || want > checkpoint_seq_.load())) {
        if (Status s = LoadShadow(); !s.ok()) Fail(s);
      }
      for (EventBatch& b : work) {
        if (failed_.load()) break;
        for (size_t i = 0; i < b.size(); ++i) {
          Status s = replayer_->Apply(b, i);
          if (!s.ok()) {
            Fail(Status::Internal("event log: event " + std::to_string(b.first_seq + i) +
                                  " applied by the engine fails on the checkpoint copy: " +
                                  s.message()));
            break;
          }
        }
        if (failed_.load()) break;
        since_checkpoint_ += b.size();
        Progress(applied_seq_, b.last_seq());
        if (durability_ != Durability::kNone && checkpoint_every_ > 0 &&
            since_checkpoint_ >= checkpoint_every_)
          DoCheckpoint();
        GiveBack(std::move(b));
      }
      if (!failed_.load() && want > checkpoint_seq_.load() && applied_seq_.load() >= want)
        DoCheckpoint();
      if (failed_.load()) Progress(applied_seq_, UINT64_MAX / 2);  // release backpressure
      if (stop) {
        base::MutexLock l(sh_mu_);
        if (sh_queue_.empty()) break;
      }
    }
  }

  const Durability durability_;
  const uint64_t checkpoint_every_;
  const storage::LogRetention retention_;  // EngineOptions::log_retention_*
  std::unique_ptr<Store> store_;
  const std::vector<std::string> names_;
  const std::function<int64_t()> clock_;  // EngineOptions::event_clock
  const uint64_t base_seq_;       // the state the shadow loads from the store
  const uint64_t session_start_;  // last event before this session

  // Ingest side.
  base::Mutex mu_;
  std::condition_variable work_cv_;
  EventBatch pending_ GUARDED_BY(mu_);
  uint64_t enqueued_seq_ GUARDED_BY(mu_);
  uint64_t order_error_ GUARDED_BY(mu_) = 0;
  bool writer_sleeping_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;

  // Progress and the sticky error. The progress counters are atomics, read
  // without the lock and written under it (so that a waiter on prog_cv_
  // cannot miss a change between its test and its wait).
  mutable base::Mutex prog_mu_;
  std::condition_variable prog_cv_;
  std::atomic<uint64_t> written_seq_;
  std::atomic<uint64_t> durable_seq_;
  std::atomic<uint64_t> synced_seq_;  // kAsync: covered by a WAL sync
  std::atomic<uint64_t> applied_seq_;
  std::atomic<uint64_t> checkpoint_seq_;
  std::atomic<bool> failed_{false};
  Status error_ GUARDED_BY(prog_mu_);

  // Shadow side.
  base::Mutex sh_mu_;
  std::condition_variable sh_cv_;
  std::deque<EventBatch> sh_queue_ GUARDED_BY(sh_mu_);
  uint64_t ckpt_request_ GUARDED_BY(sh_mu_) = 0;
  bool sh_stop_ GUARDED_BY(sh_mu_) = false;
  std::unique_ptr<engine::Tree> shadow_;  // shadow thread only
  std::unique_ptr<storage::Replayer> replayer_;  // over shadow_
  uint64_t since_checkpoint_ = 0;         // shadow thread only

  base::Mutex pool_mu_;
  std::vector<EventBatch> pool_ GUARDED_BY(pool_mu_);

  base::Mutex close_mu_;
  bool closed_ GUARDED_BY(close_mu_) = false;
  Status close_status_ GUARDED_BY(close_mu_);

  std::thread writer_, shadower_;
};

}  // namespace

int64_t HostClockMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SetAckBeforeSyncForTesting(bool on) { g_ack_before_sync.store(on); }

StatusOr<std::unique_ptr<EventLog>> CreateEventLog(const EngineOptions& options,
                                                   const engine::Tree& tree) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(options.db_path, ec);
  storage::MetaRecord meta = storage::MetaFor(tree, options.overcommit_factor);
  auto store = Store::Create(options.db_path, meta);
  if (!store.ok()) return store.status();
  Status s = storage::WriteCheckpoint(**store, tree, /*seq=*/0, meta.resource_names);
  if (!s.ok()) {
    // Leave no half-made store behind (the directory was empty or absent).
    (void)(*store)->Close();
    if (existed) {
      for (const auto& entry : fs::directory_iterator(options.db_path, ec)) fs::remove_all(entry.path(), ec);
    } else {
      fs::remove_all(options.db_path, ec);
    }
    return s;
  }
  auto log = std::make_unique<PersistentLog>(options, std::move(store).value(), meta.resource_names,
                                             /*last_seq=*/0, /*checkpoint_seq=*/0);
  log->Start();
  return std::unique_ptr<EventLog>(std::move(log));
}

StatusOr<Recovered> RecoverEventLog(const EngineOptions& options) {
  // Everything is read through a read-only open first: a damaged store is
  // reported without a single byte of it written.
  auto store = Store::Open(options.db_path, Store::Mode::kReadOnly);
  if (!store.ok()) return store.status();
  storage::LoadOptions lo;
  lo.overcommit_factor = options.overcommit_factor;
  lo.expected_resources = options.expected_resources;
  lo.fold_task_events = options.fold_recovery;
  const auto t0 = std::chrono::steady_clock::now();
  auto state = storage::LoadState(**store, lo);
  if (!state.ok()) return state.status();
  Recovered r;
  r.stats.checkpoint_seq = state->checkpoint_seq;
  r.stats.events_replayed = state->events_replayed;
  r.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // kNone writes only at a checkpoint (and reopens then); the others append
  // from now on.
  if (options.durability != Durability::kNone)
    HDRF_RETURN_IF_ERROR((*store)->Reopen(Store::Mode::kReadWrite));
  r.last_seq = state->last_seq;
  r.tree = std::move(state->tree);
  HDRF_ASSIGN_OR_RETURN(r.log, AdoptEventLog(options, std::move(store).value(),
                                             state->meta.resource_names, state->last_seq,
                                             state->checkpoint_seq));
  return r;
}

StatusOr<std::unique_ptr<EventLog>> AdoptEventLog(const EngineOptions& options,
                                                  std::unique_ptr<storage::Store> store,
                                                  std::vector<std::string> names,
                                                  uint64_t last_seq, uint64_t checkpoint_seq) {
  auto log = std::make_unique<PersistentLog>(options, std::move(store), std::move(names), last_seq,
                                             checkpoint_seq);
  log->Start();
  return std::unique_ptr<EventLog>(std::move(log));
}

}  // namespace hdrf
