#include "storage/secondary.h"

#include <algorithm>
#include <filesystem>

#include "rocksdb/db.h"

namespace hdrf::storage {

StatusOr<std::unique_ptr<Store>> Store::OpenSecondary(const std::string& path,
                                                      const std::string& secondary_dir) {
  if (path.empty()) return Status::InvalidArgument("store: empty directory name");
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec))
    return Status::NotFound("no store at " + path);
  std::filesystem::create_directories(secondary_dir, ec);
  if (ec)
    return Status::IoError("store " + path + ": cannot create the follower's directory " +
                           secondary_dir + ": " + ec.message());
  std::unique_ptr<Store> st(new Store(path, Mode::kSecondary));
  st->secondary_dir_ = secondary_dir;
  HDRF_RETURN_IF_ERROR(st->OpenDb(Mode::kSecondary, /*create=*/false));
  return st;
}

Status Store::CatchUpWithPrimary() {
  if (!db_ || mode_ != Mode::kSecondary)
    return Status::FailedPrecondition("store " + path_ + ": not a secondary instance");
  return FromRocks(db_->TryCatchUpWithPrimary(), "catching up with the writer");
}

namespace {
LoadOptions FollowerLoadOptions() {
  LoadOptions lo;
  lo.verify_files = false;  // a live store: its files change under us
  return lo;
}

// A catch-up reads the writer's MANIFEST, then its WAL. A record found in
// the WAL may need table files whose MANIFEST entry the writer added just
// after that read: a checkpoint header (WAL) needs its chunks (table files
// of the flush before it), and the log records of a memtable the writer
// flushed meanwhile are in a table file, no longer in a WAL this instance
// reads. What it then sees is Corruption (a missing chunk, a log gap) that
// the next catch-up, which reads the MANIFEST afresh, resolves. A damaged
// store stays Corruption after these tries.
constexpr int kCatchUpTries = 4;

template <typename F>
auto RetryOnTornView(Store& store, F&& fn) -> decltype(fn()) {
  for (int i = 1;; ++i) {
    auto r = fn();
    if (r.ok() || r.status().code() != StatusCode::kCorruption || i == kCatchUpTries ||
        store.mode() != Store::Mode::kSecondary)
      return r;
    HDRF_RETURN_IF_ERROR(store.CatchUpWithPrimary());
  }
}
}  // namespace

// The writer's WAL and MANIFEST files and their sizes. Both kinds only
// grow or are replaced by files of new names (RocksDB recycles no WAL by
// default), so an unchanged fingerprint means the writer wrote nothing.
std::string WriterFilesFingerprint(const std::string& db) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(db, ec)) {
    std::string name = e.path().filename().string();
    const bool wal = name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
    if (!wal && name.rfind("MANIFEST-", 0) != 0) continue;
    const auto size = e.file_size(ec);
    files.push_back(std::move(name) + ":" + std::to_string(ec ? UINT64_MAX : size));
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto& f : files) out += f + ";";
  return out;
}

StatusOr<Replica> StoreFollower::LoadConsistent() {
  return RetryOnTornView(*store_, [&] { return Replica::Load(*store_, FollowerLoadOptions()); });
}

StatusOr<std::unique_ptr<StoreFollower>> StoreFollower::Open(const std::string& db,
                                                             const std::string& secondary_dir,
                                                             std::optional<Replica>* initial) {
  HDRF_ASSIGN_OR_RETURN(auto store, Store::OpenSecondary(db, secondary_dir));
  std::unique_ptr<StoreFollower> f(
      new StoreFollower(db, secondary_dir, std::move(store), MetaRecord{}));
  HDRF_ASSIGN_OR_RETURN(Replica loaded, f->LoadConsistent());
  f->meta_ = loaded.meta();
  initial->emplace(std::move(loaded));
  return f;
}

StatusOr<Replica> StoreFollower::Reload(bool reopen) {
  quiet_.reset();
  if (reopen) {
    (void)store_->Close();
    HDRF_ASSIGN_OR_RETURN(store_, Store::OpenSecondary(db_, secondary_dir_));
  } else if (store_->mode() == Store::Mode::kSecondary) {
    HDRF_RETURN_IF_ERROR(store_->CatchUpWithPrimary());
  }
  return LoadConsistent();
}

void StoreFollower::Adopt(std::unique_ptr<Store> writer) {
  (void)store_->Close();
  store_ = std::move(writer);
}

StatusOr<uint64_t> StoreFollower::NewestEvent(uint64_t newest_checkpoint) const {
  HDRF_ASSIGN_OR_RETURN(auto rec, store_->LogAtOrBefore(UINT64_MAX));
  if (!rec) return newest_checkpoint;
  EventBatch b;
  Status s = DecodeLogBatch(rec->second, meta_.resource_names, rec->first, &b);
  if (!s.ok())
    return s.WithContext("store " + db_ + ": key " + KeyToString(LogKey(rec->first)));
  return std::max(newest_checkpoint, b.last_seq());
}

StatusOr<bool> StoreFollower::Holds(uint64_t seq) const {
  HDRF_ASSIGN_OR_RETURN(std::vector<uint64_t> ckpts, store_->CheckpointSeqs());
  const uint64_t newest = ckpts.empty() ? 0 : ckpts.back();
  if (seq == newest) return true;
  // Before the newest checkpoint: held while the log record that holds it
  // is (the log after the previous checkpoint is kept, docs/storage.md).
  HDRF_ASSIGN_OR_RETURN(auto rec, store_->LogAtOrBefore(seq));
  if (!rec) return false;
  EventBatch b;
  Status s = DecodeLogBatch(rec->second, meta_.resource_names, rec->first, &b);
  if (!s.ok())
    return s.WithContext("store " + db_ + ": key " + KeyToString(LogKey(rec->first)));
  return b.last_seq() >= seq;
}

StatusOr<StoreFollower::Update> StoreFollower::Poll(uint64_t applied, uint64_t max_events) {
  if (store_->mode() != Store::Mode::kSecondary) return Read(applied, max_events);
  // Taken before the catch-up: whatever the writer writes after it changes
  // the next one.
  std::string fingerprint = WriterFilesFingerprint(db_);
  if (quiet_ && quiet_->fingerprint == fingerprint && quiet_->applied == applied) {
    Update u;  // nothing written since the last catch-up, which read to the end
    u.last = applied;
    u.writer_seq = quiet_->writer_seq;
    return u;
  }
  quiet_.reset();
  HDRF_RETURN_IF_ERROR(store_->CatchUpWithPrimary());
  auto u = RetryOnTornView(*store_, [&] { return Read(applied, max_events); });
  if (u.ok() && u->last >= u->writer_seq)
    quiet_ = Quiet{std::move(fingerprint), u->last, u->writer_seq};
  return u;
}

StatusOr<StoreFollower::Update> StoreFollower::Read(uint64_t applied, uint64_t max_events) {
  HDRF_ASSIGN_OR_RETURN(std::vector<uint64_t> ckpts, store_->CheckpointSeqs());
  const uint64_t newest = ckpts.empty() ? 0 : ckpts.back();
  Update u;
  const uint64_t stop_at = max_events >= UINT64_MAX - applied ? UINT64_MAX : applied + max_events;
  Status s = ReadLogAfter(
      *store_, meta_.resource_names, applied, stop_at,
      [&](EventBatch& b, size_t begin, size_t end) -> Status {
        u.parts.push_back(Update::Part{std::move(b), begin, end});
        return Status::Ok();
      },
      &u.last);
  if (u.parts.empty() && newest > applied) {
    // The writer took a checkpoint past `applied` and deleted the log up to
    // it (or is about to): continue from that checkpoint.
    HDRF_ASSIGN_OR_RETURN(Replica st, Replica::Load(*store_, FollowerLoadOptions()));
    u.last = st.last_seq();
    u.writer_seq = st.last_seq();
    u.reload = std::move(st);
    return u;
  }
  HDRF_RETURN_IF_ERROR(s);
  if (u.last < stop_at) {
    u.writer_seq = std::max(u.last, newest);  // read to the end
  } else {
    HDRF_ASSIGN_OR_RETURN(u.writer_seq, NewestEvent(newest));
  }
  return u;
}

}  // namespace hdrf::storage
