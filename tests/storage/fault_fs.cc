#include "tests/storage/fault_fs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "rocksdb/system_clock.h"

namespace hdrf::storage_test {
namespace fs = std::filesystem;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

namespace {

std::string Norm(const std::string& p) {
  std::string s = fs::path(p).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string DirOf(const std::string& p) { return fs::path(Norm(p)).parent_path().string(); }

void WriteWhole(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file written through FaultFs: counts its bytes and syncs.
class TrackedFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  TrackedFile(std::unique_ptr<rocksdb::FSWritableFile> t, FaultFs* fs,
              std::shared_ptr<FaultFs::FileState> st)
      : FSWritableFileOwnerWrapper(std::move(t)), fs_(fs), st_(std::move(st)) {}

  IOStatus Append(const Slice& data, const IOOptions& o, IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(fs_->mu());
    IOStatus s = fs_->Step("append");
    if (s.ok()) s = target()->Append(data, o, dbg);
    if (s.ok()) st_->size += data.size();
    return s;
  }
  IOStatus Append(const Slice& data, const IOOptions& o, const rocksdb::DataVerificationInfo&,
                  IODebugContext* dbg) override {
    return Append(data, o, dbg);
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& o,
                            IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(fs_->mu());
    IOStatus s = fs_->Step("append");
    if (s.ok()) s = target()->PositionedAppend(data, offset, o, dbg);
    if (s.ok()) st_->size = std::max<uint64_t>(st_->size, offset + data.size());
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& o,
                            const rocksdb::DataVerificationInfo&, IODebugContext* dbg) override {
    return PositionedAppend(data, offset, o, dbg);
  }
  IOStatus Truncate(uint64_t size, const IOOptions& o, IODebugContext* dbg) override {
    std::lock_guard<std::mutex> l(fs_->mu());
    IOStatus s = fs_->Step("truncate");
    if (s.ok()) s = target()->Truncate(size, o, dbg);
    if (s.ok()) {
      st_->size = size;
      st_->synced = std::min(st_->synced, size);
    }
    return s;
  }
  IOStatus Sync(const IOOptions& o, IODebugContext* dbg) override { return DoSync(o, dbg); }
  IOStatus Fsync(const IOOptions& o, IODebugContext* dbg) override { return DoSync(o, dbg); }
  // sync_file_range(2): starts write-back, persists nothing for certain.
  IOStatus RangeSync(uint64_t, uint64_t, const IOOptions&, IODebugContext*) override {
    std::lock_guard<std::mutex> l(fs_->mu());
    return fs_->Step("range sync");
  }
  IOStatus Close(const IOOptions& o, IODebugContext* dbg) override {
    // Closing writes nothing new (the POSIX file trims its preallocated
    // space to what was written); after the cut it only frees the fd.
    return target()->Close(o, dbg);
  }

 private:
  IOStatus DoSync(const IOOptions& o, IODebugContext* dbg) {
    std::lock_guard<std::mutex> l(fs_->mu());
    IOStatus s = fs_->Step("sync");
    if (s.ok()) s = target()->Flush(o, dbg);  // no fsync(2): the model decides
    if (s.ok()) st_->synced = st_->size;
    return s;
  }

  FaultFs* fs_;
  std::shared_ptr<FaultFs::FileState> st_;
};

class TrackedDir : public rocksdb::FSDirectoryWrapper {
 public:
  TrackedDir(std::unique_ptr<rocksdb::FSDirectory> t, FaultFs* fs, std::string name)
      : FSDirectoryWrapper(std::move(t)), fs_(fs), name_(std::move(name)) {}
  IOStatus Fsync(const IOOptions&, IODebugContext*) override { return DoSync(); }
  IOStatus FsyncWithDirOptions(const IOOptions&, IODebugContext*,
                               const rocksdb::DirFsyncOptions&) override {
    return DoSync();
  }

 private:
  IOStatus DoSync() {
    std::lock_guard<std::mutex> l(fs_->mu());
    IOStatus s = fs_->Step("directory fsync");
    if (s.ok()) fs_->SyncDir(name_);
    return s;
  }
  FaultFs* fs_;
  std::string name_;
};

}  // namespace

FaultFs::FaultFs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
FaultFs::~FaultFs() = default;

void FaultFs::ArmCut(uint64_t n) {
  std::lock_guard<std::mutex> l(mu_);
  cut_at_ = n == 0 ? 0 : ops_ + n;
}

void FaultFs::Cut() {
  std::lock_guard<std::mutex> l(mu_);
  off_ = true;
}

bool FaultFs::cut() const {
  std::lock_guard<std::mutex> l(mu_);
  return off_;
}

uint64_t FaultFs::ops() const {
  std::lock_guard<std::mutex> l(mu_);
  return ops_;
}

IOStatus FaultFs::Step(const char* what) {
  if (off_) return IOStatus::IOError("power cut (FaultFs)");
  ++ops_;
  if (cut_at_ != 0 && ops_ >= cut_at_) {
    off_ = true;
    cut_at_ = 0;
    if (on_cut_) on_cut_(what);
    return IOStatus::IOError("power cut (FaultFs)");
  }
  return IOStatus::OK();
}

void FaultFs::SetOnCut(std::function<void(const char* what)> fn) {
  std::lock_guard<std::mutex> l(mu_);
  on_cut_ = std::move(fn);
}

void FaultFs::SyncDir(const std::string& dir) {
  const std::string d = Norm(dir);
  name_ops_.erase(std::remove_if(name_ops_.begin(), name_ops_.end(),
                                 [&](const NameOp& op) { return op.dir == d; }),
                  name_ops_.end());
}

std::shared_ptr<FaultFs::FileState> FaultFs::Track(const std::string& path, uint64_t size,
                                                   uint64_t synced) {
  auto st = std::make_shared<FileState>();
  st->size = size;
  st->synced = synced;
  files_[path] = st;
  return st;
}

std::optional<std::string> FaultFs::DurableContent(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (auto it = files_.find(path); it != files_.end() && bytes.size() > it->second->synced)
    bytes.resize(it->second->synced);
  return bytes;
}

IOStatus FaultFs::NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                  std::unique_ptr<rocksdb::FSWritableFile>* r,
                                  IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("create");
  if (!s.ok()) return s;
  const std::string p = Norm(f);
  std::optional<std::string> before = DurableContent(p);
  std::unique_ptr<rocksdb::FSWritableFile> file;
  s = target()->NewWritableFile(f, o, &file, dbg);
  if (!s.ok()) return s;
  name_ops_.push_back({NameOp::kCreate, DirOf(p), p, "", std::move(before)});
  *r = std::make_unique<TrackedFile>(std::move(file), this, Track(p, 0, 0));
  return s;
}

IOStatus FaultFs::ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                     std::unique_ptr<rocksdb::FSWritableFile>* r,
                                     IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("reopen");
  if (!s.ok()) return s;
  const std::string p = Norm(f);
  std::error_code ec;
  const bool existed = fs::exists(p, ec);
  std::unique_ptr<rocksdb::FSWritableFile> file;
  s = target()->ReopenWritableFile(f, o, &file, dbg);
  if (!s.ok()) return s;
  std::shared_ptr<FileState> st;
  if (auto it = files_.find(p); it != files_.end()) {
    st = it->second;
  } else {
    const uint64_t size = existed ? fs::file_size(p, ec) : 0;
    st = Track(p, size, size);
    if (!existed) name_ops_.push_back({NameOp::kCreate, DirOf(p), p, "", std::nullopt});
  }
  *r = std::make_unique<TrackedFile>(std::move(file), this, std::move(st));
  return s;
}

IOStatus FaultFs::ReuseWritableFile(const std::string&, const std::string&,
                                    const rocksdb::FileOptions&,
                                    std::unique_ptr<rocksdb::FSWritableFile>*, IODebugContext*) {
  // Only with recycle_log_file_num > 0, which the store does not set.
  return IOStatus::NotSupported("FaultFs: ReuseWritableFile");
}

IOStatus FaultFs::NewRandomRWFile(const std::string& f, const rocksdb::FileOptions& o,
                                  std::unique_ptr<rocksdb::FSRandomRWFile>* r,
                                  IODebugContext* dbg) {
  // Not used by the store's options; its writes would not be modelled.
  (void)f, (void)o, (void)r, (void)dbg;
  return IOStatus::NotSupported("FaultFs: NewRandomRWFile");
}

IOStatus FaultFs::NewDirectory(const std::string& name, const IOOptions& o,
                               std::unique_ptr<rocksdb::FSDirectory>* r, IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSDirectory> d;
  IOStatus s = target()->NewDirectory(name, o, &d, dbg);
  if (s.ok()) *r = std::make_unique<TrackedDir>(std::move(d), this, Norm(name));
  return s;
}

IOStatus FaultFs::DeleteFile(const std::string& f, const IOOptions& o, IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("delete");
  if (!s.ok()) return s;
  const std::string p = Norm(f);
  std::optional<std::string> before = DurableContent(p);
  s = target()->DeleteFile(f, o, dbg);
  if (!s.ok()) return s;
  files_.erase(p);
  name_ops_.push_back({NameOp::kDelete, DirOf(p), p, "", std::move(before)});
  return s;
}

IOStatus FaultFs::Truncate(const std::string& f, size_t size, const IOOptions& o,
                           IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("truncate");
  if (!s.ok()) return s;
  s = target()->Truncate(f, size, o, dbg);
  if (s.ok()) {
    if (auto it = files_.find(Norm(f)); it != files_.end()) {
      it->second->size = size;
      it->second->synced = std::min<uint64_t>(it->second->synced, size);
    }
  }
  return s;
}

IOStatus FaultFs::RenameFile(const std::string& src, const std::string& dst, const IOOptions& o,
                             IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("rename");
  if (!s.ok()) return s;
  const std::string from = Norm(src), to = Norm(dst);
  std::optional<std::string> before = DurableContent(to);
  s = target()->RenameFile(src, dst, o, dbg);
  if (!s.ok()) return s;
  files_.erase(to);
  if (auto it = files_.find(from); it != files_.end()) {
    files_[to] = it->second;
    files_.erase(it);
  }
  name_ops_.push_back({NameOp::kRename, DirOf(to), to, from, std::move(before)});
  return s;
}

IOStatus FaultFs::LinkFile(const std::string&, const std::string&, const IOOptions&,
                           IODebugContext*) {
  // Not modelled: a checkpoint's ingested table file (Store::TableFile)
  // is then copied instead, which RocksDB syncs like any file it writes.
  return IOStatus::NotSupported("FaultFs: LinkFile");
}

IOStatus FaultFs::CreateDir(const std::string& d, const IOOptions& o, IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("mkdir");
  return s.ok() ? target()->CreateDir(d, o, dbg) : s;
}

IOStatus FaultFs::CreateDirIfMissing(const std::string& d, const IOOptions& o,
                                     IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("mkdir");
  return s.ok() ? target()->CreateDirIfMissing(d, o, dbg) : s;
}

IOStatus FaultFs::DeleteDir(const std::string& d, const IOOptions& o, IODebugContext* dbg) {
  std::lock_guard<std::mutex> l(mu_);
  IOStatus s = Step("rmdir");
  return s.ok() ? target()->DeleteDir(d, o, dbg) : s;
}

FaultFs::DropStats FaultFs::DropUnsynced(bool partial, testing::Rng& rng) {
  std::lock_guard<std::mutex> l(mu_);
  DropStats st;
  std::error_code ec;
  // Data first, under each file's present name; the name operations are
  // undone after, which moves the cut files back where they were.
  for (const auto& [path, f] : files_) {
    if (f->size <= f->synced) continue;
    uint64_t keep = f->synced;
    if (partial && rng.Chance(50))
      keep += static_cast<uint64_t>(rng.Uniform(0, static_cast<int64_t>(f->size - f->synced)));
    const uint64_t now = fs::file_size(path, ec);
    if (ec || now <= keep) continue;
    fs::resize_file(path, keep, ec);
    ++st.files_cut;
    st.bytes_dropped += now - keep;
  }
  size_t stand = 0;  // name operations that survive: a prefix of them
  if (partial && !name_ops_.empty() && rng.Chance(50))
    stand = static_cast<size_t>(rng.Uniform(0, static_cast<int64_t>(name_ops_.size())));
  for (size_t i = name_ops_.size(); i-- > stand;) {
    const NameOp& op = name_ops_[i];
    ++st.names_undone;
    switch (op.kind) {
      case NameOp::kCreate:
        fs::remove(op.path, ec);
        if (op.before) WriteWhole(op.path, *op.before);
        break;
      case NameOp::kRename:
        if (fs::exists(op.path, ec)) fs::rename(op.path, op.from, ec);
        if (op.before) WriteWhole(op.path, *op.before);
        break;
      case NameOp::kDelete:
        if (op.before) WriteWhole(op.path, *op.before);
        break;
    }
  }
  files_.clear();
  name_ops_.clear();
  off_ = false;
  cut_at_ = 0;
  return st;
}

namespace {

// RocksDB sleeps a second after a failed background flush or compaction
// ("in case this is an environmental problem"); every cut that lands in
// one would cost that second. Sleeps here last at most a millisecond.
class ShortSleepClock : public rocksdb::SystemClockWrapper {
 public:
  ShortSleepClock() : SystemClockWrapper(rocksdb::SystemClock::Default()) {}
  const char* Name() const override { return "HdrfShortSleepClock"; }
  void SleepForMicroseconds(int micros) override {
    target_->SleepForMicroseconds(std::min(micros, 1000));
  }
};

// The composite Env over FaultFs, with the short-sleep clock.
class FaultEnvImpl : public rocksdb::EnvWrapper {
 public:
  explicit FaultEnvImpl(const std::shared_ptr<FaultFs>& fs)
      : EnvWrapper(rocksdb::NewCompositeEnv(fs)) {
    system_clock_ = std::make_shared<ShortSleepClock>();
  }
  const char* Name() const override { return "HdrfFaultEnv"; }
};

}  // namespace

FaultEnv::FaultEnv() : fs(std::make_shared<FaultFs>()), env(std::make_unique<FaultEnvImpl>(fs)) {}
FaultEnv::~FaultEnv() = default;

}  // namespace hdrf::storage_test
