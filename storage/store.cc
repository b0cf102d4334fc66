#include "storage/store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <system_error>

#include "base/mutex.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/sst_partitioner.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"

namespace hdrf::storage {
namespace fs = std::filesystem;
namespace {

// Keeps RocksDB's info log in memory: a read-only open must not create or
// rotate the LOG file of a store it only inspects, and the lines that name
// a damaged file make error messages say where.
class CapturingLogger : public rocksdb::Logger {
 public:
  CapturingLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL) {}
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, format, ap);
    std::string line(buf);
    const bool interesting = level >= rocksdb::InfoLogLevel::WARN_LEVEL ||
                             line.find("Corruption") != std::string::npos ||
                             line.find("dropping") != std::string::npos;
    if (!interesting) return;
    base::MutexLock l(mu_);
    if (lines_.size() >= 64) lines_.erase(lines_.begin());
    lines_.push_back(std::move(line));
  }
  // The last captured line that names a file of the store.
  std::string Hint() {
    base::MutexLock l(mu_);
    for (auto it = lines_.rbegin(); it != lines_.rend(); ++it)
      if (it->find(".log") != std::string::npos || it->find(".sst") != std::string::npos ||
          it->find("MANIFEST") != std::string::npos)
        return *it;
    return "";
  }

 private:
  base::Mutex mu_;
  std::vector<std::string> lines_ GUARDED_BY(mu_);
};

// RocksDB's "Missing WAL with log number: N" at open: the MANIFEST names a
// WAL that is gone. When the directory holds files numbered above N, the
// WAL was retired by MANIFEST edits that are no longer there: the MANIFEST
// was cut short or damaged, not the log lost. Returns a note naming the
// MANIFEST in that case, "" otherwise.
std::string StaleManifestNote(const std::string& dir, const std::string& message) {
  static constexpr std::string_view kMissing = "Missing WAL with log number: ";
  const size_t at = message.find(kMissing);
  if (at == std::string::npos) return "";
  const uint64_t missing = std::strtoull(message.c_str() + at + kMissing.size(), nullptr, 10);
  std::string manifest;
  uint64_t newest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("MANIFEST-", 0) == 0) manifest = name;
    const bool numbered = name.ends_with(".log") || name.ends_with(".sst");
    if (numbered && !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])))
      newest = std::max<uint64_t>(newest, std::strtoull(name.c_str(), nullptr, 10));
  }
  if (manifest.empty() || newest <= missing) return "";
  return "the directory holds files numbered up to " + std::to_string(newest) + ", newer than WAL " +
         std::to_string(missing) + ": " + manifest + " may be truncated or damaged";
}

std::atomic<rocksdb::Env*> g_test_env{nullptr};  // SetEnvForTesting

rocksdb::Options MakeOptions(bool create) {
  rocksdb::Options o;
  if (rocksdb::Env* env = g_test_env.load(std::memory_order_acquire)) o.env = env;
  o.create_if_missing = create;
  o.error_if_exists = create;
  o.paranoid_checks = true;
  // A torn last WAL record (a crash mid-write) is dropped; damage anywhere
  // else in the WAL refuses the open instead of silently cutting the log.
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  // A synced WAL that went missing (or shrank) is reported at open.
  o.track_and_verify_wals_in_manifest = true;
  o.max_background_jobs = 2;
  o.keep_log_file_num = 3;
  o.stats_dump_period_sec = 0;
  o.stats_persist_period_sec = 0;
  // Memtables: they hold only the log (a checkpoint's chunks bypass them,
  // Store::TableFile), which is read back only by recovery and followers,
  // so 4 MB each suffice; two of 16 MB held 10-20 MB more of a durable
  // engine's peak memory (bench/README.md "The durable engine's memory
  // outside the image", issue 25). Up to four: with two of 4 MB, the
  // writer filled both before the flush of the first ended (80 ms of log
  // at 3 M events/s) and RocksDB stopped its writes six times in a 10^6-job
  // replay on the loaded 2-core VM; with four, none. Only a full one waits
  // for its flush, so at most 16 MB, usually one or two.
  o.write_buffer_size = 4 << 20;
  o.max_write_buffer_number = 4;
  // Level 0 holds as much log before a compaction as it did with 16 MB
  // memtables (RocksDB's defaults 4, 20 and 36 files, times four): with the
  // default 4 files, compactions merged the log into one large level-1
  // file that straddled the deleted log range, and a store held 138 MB
  // after Close instead of 60 (DropFilesInRange drops only whole files, and
  // none of level 0).
  o.level0_file_num_compaction_trigger = 16;
  o.level0_slowdown_writes_trigger = 80;
  o.level0_stop_writes_trigger = 144;
  o.avoid_flush_during_recovery = true;
  // Close() does not flush the memtable itself: Journal::Close flushes
  // it when the store is healthy, and everything in it is in the WAL too.
  // After a failed memtable switch (an I/O error creating the next WAL), a
  // flush at close switches the same memtable again and RocksDB 7.8 aborts
  // (assertion in MemTable::ConstructFragmentedRangeTombstones, RocksDB
  // PR 12796); tests/storage/power_cut_test.cc found it.
  o.avoid_flush_during_shutdown = true;
  auto supported = rocksdb::GetSupportedCompressions();
  auto has = [&](rocksdb::CompressionType t) {
    return std::find(supported.begin(), supported.end(), t) != supported.end();
  };
  if (has(rocksdb::kLZ4Compression)) o.compression = rocksdb::kLZ4Compression;
  else if (has(rocksdb::kSnappyCompression)) o.compression = rocksdb::kSnappyCompression;
  else o.compression = rocksdb::kNoCompression;
  // Compactions cut their output files where the key's first two bytes
  // change ("c/", "h/", "l/", "m"), so that a file holds one kind of record:
  // a checkpoint's ingested chunks then overlap no other file and go to the
  // bottom level at once, and an old checkpoint's or log's files can be
  // dropped whole (DropFilesInRange) instead of rewritten by compactions.
  o.sst_partitioner_factory = rocksdb::NewSstPartitionerFixedPrefixFactory(2);
  rocksdb::BlockBasedTableOptions t;
  t.block_size = 64 << 10;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

// Reads are mostly one pass over the store (recovery): 4 MB readahead, no
// block cache. A secondary instance (a follower) reads the same few blocks
// at every catch-up instead (the log tail, the checkpoint headers): the
// block cache keeps them, and RocksDB's own readahead, which starts small,
// spares each of its iterators a 4 MB read. So do the seeks that read a
// key or two (kSeek: the checkpoint list, the log record at an event, both
// read by every checkpoint): a 4 MB buffer for each table file the seek
// touches held 75 MB at once at a checkpoint of 10^6 jobs (bench/README.md).
enum class ReadKind { kScan, kSeek };
rocksdb::ReadOptions ReadOpts(Store::Mode mode, ReadKind kind = ReadKind::kScan) {
  rocksdb::ReadOptions r;
  r.verify_checksums = true;
  const bool tail = mode == Store::Mode::kSecondary;
  r.fill_cache = tail;
  r.readahead_size = tail || kind == ReadKind::kSeek ? 0 : 4 << 20;
  return r;
}

}  // namespace

void SetEnvForTesting(rocksdb::Env* env) { g_test_env.store(env, std::memory_order_release); }

// Another process holding the store's LOCK (RocksDB uses fcntl locks).
std::optional<long> StoreLockHolder(const std::string& dir) {
  int fd = ::open((dir + "/LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct flock fl;
  std::memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  std::optional<long> out;
  if (::fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) out = fl.l_pid;
  ::close(fd);
  return out;
}

Status Store::FromRocks(const rocksdb::Status& s, const std::string& what) const {
  if (s.ok()) return Status::Ok();
  std::string m = "store " + path_ + ": " + what + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(m);
  if (s.IsNotFound()) return Status::NotFound(m);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(m);
  if (s.IsIOError() && s.ToString().find("lock") != std::string::npos)
    return Status::FailedPrecondition(m + " (is the store open in another engine or process?)");
  if (s.IsIOError() || s.IsNoSpace()) return Status::IoError(m);
  return Status::Internal(m);
}

Status Store::OpenDb(Mode mode, bool create) {
  rocksdb::Options o = MakeOptions(create);
  std::shared_ptr<CapturingLogger> log;
  if (mode != Mode::kReadWrite) {
    log = std::make_shared<CapturingLogger>();
    o.info_log = log;
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status s;
  if (mode == Mode::kSecondary) {
    o.max_open_files = -1;  // RocksDB's requirement for a secondary
    s = rocksdb::DB::OpenAsSecondary(o, path_, secondary_dir_, &db);
  } else {
    s = mode == Mode::kReadOnly ? rocksdb::DB::OpenForReadOnly(o, path_, &db)
                                : rocksdb::DB::Open(o, path_, &db);
  }
  if (!s.ok()) {
    delete db;
    Status st = FromRocks(s, create ? "cannot create the database" : "cannot open the database");
    if (log) {
      std::string hint = log->Hint();
      if (!hint.empty() && st.message().find(hint) == std::string::npos)
        st = Status(st.code(), st.message() + " (RocksDB: " + hint + ")");
    }
    if (std::string note = StaleManifestNote(path_, st.message()); !note.empty())
      st = Status(st.code(), st.message() + " (note: " + note + ")");
    return st;
  }
  db_.reset(db);
  mode_ = mode;
  return Status::Ok();
}

StatusOr<std::unique_ptr<Store>> Store::Create(const std::string& path, const MetaRecord& meta) {
  if (path.empty()) return Status::InvalidArgument("store: empty directory name");
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec))
      return Status::AlreadyExists("store " + path + ": exists and is not a directory");
    if (!fs::is_empty(path, ec))
      return Status::AlreadyExists("store " + path +
                                   ": the directory is not empty (a store exists there?); "
                                   "hdrf never overwrites a store: open it or choose another "
                                   "directory");
  }
  std::unique_ptr<Store> st(new Store(path, Mode::kReadWrite));
  HDRF_RETURN_IF_ERROR(st->OpenDb(Mode::kReadWrite, /*create=*/true));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  HDRF_RETURN_IF_ERROR(st->FromRocks(st->db_->Put(wo, kMetaKey, EncodeMeta(meta)), "writing meta"));
  return st;
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, Mode mode) {
  if (path.empty()) return Status::InvalidArgument("store: empty directory name");
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound("no store at " + path);
  if (!fs::is_directory(path, ec))
    return Status::InvalidArgument("no store at " + path + ": not a directory");
  if (!fs::exists(fs::path(path) / "CURRENT", ec)) {
    if (fs::is_empty(path, ec)) return Status::NotFound("no store at " + path + " (empty directory)");
    return Status::Corruption("store " + path +
                              ": file CURRENT is missing (not a store, or a damaged one)");
  }
  if (auto pid = StoreLockHolder(path))
    return Status::FailedPrecondition("store " + path + ": in use by process " +
                                      std::to_string(*pid) + " (LOCK held)");
  std::unique_ptr<Store> st(new Store(path, mode));
  HDRF_RETURN_IF_ERROR(st->OpenDb(mode, /*create=*/false));
  return st;
}

Store::Store(std::string path, Mode mode) : path_(std::move(path)), mode_(mode) {}

Store::~Store() { (void)Close(); }

Status Store::Reopen(Mode mode) {
  HDRF_RETURN_IF_ERROR(Close());
  return OpenDb(mode, false);
}

Status Store::Close() {
  if (!db_) return Status::Ok();
  rocksdb::Status s = db_->Close();
  db_.reset();
  // Close() reports an earlier background error again; the caller has seen
  // it already (a failed write), so only a new problem is worth returning.
  if (!s.ok() && !s.IsAborted()) return FromRocks(s, "closing");
  return Status::Ok();
}

StatusOr<std::string> Store::Get(std::string_view key) const {
  if (!db_) return Status::FailedPrecondition("store " + path_ + ": closed");
  std::string v;
  rocksdb::Status s = db_->Get(ReadOpts(mode_), rocksdb::Slice(key.data(), key.size()), &v);
  if (s.IsNotFound())
    return Status::NotFound("store " + path_ + ": key " + KeyToString(key) + " is missing");
  HDRF_RETURN_IF_ERROR(FromRocks(s, "reading key " + KeyToString(key)));
  return v;
}

StatusOr<MetaRecord> Store::ReadMeta() const {
  auto v = Get(kMetaKey);
  if (!v.ok()) {
    if (v.status().code() == StatusCode::kNotFound)
      return Status::Corruption("store " + path_ + ": key m (meta) is missing");
    return v.status();
  }
  auto m = DecodeMeta(*v);
  if (!m.ok()) return m.status().WithContext("store " + path_ + ": key m (meta)");
  return m;
}

StatusOr<std::vector<uint64_t>> Store::CheckpointSeqs() const {
  std::vector<uint64_t> out;
  rocksdb::ReadOptions ro = ReadOpts(mode_, ReadKind::kSeek);
  std::string upper = "h0";  // '0' follows '/'
  rocksdb::Slice ub(upper);
  ro.iterate_upper_bound = &ub;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  for (it->Seek(kHeaderPrefix); it->Valid(); it->Next()) {
    uint64_t seq;
    if (!ParseHeaderKey(std::string_view(it->key().data(), it->key().size()), &seq))
      return Status::Corruption("store " + path_ + ": unexpected key " +
                                KeyToString(std::string_view(it->key().data(), it->key().size())));
    out.push_back(seq);
  }
  HDRF_RETURN_IF_ERROR(FromRocks(it->status(), "listing checkpoints"));
  return out;
}

Status Store::ScanLog(uint64_t from,
                      const std::function<StatusOr<bool>(uint64_t, std::string_view)>& fn) const {
  rocksdb::ReadOptions ro = ReadOpts(mode_);
  std::string upper = "l0";
  rocksdb::Slice ub(upper);
  ro.iterate_upper_bound = &ub;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  for (it->Seek(LogKey(from)); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    uint64_t first;
    if (!ParseLogKey(key, &first))
      return Status::Corruption("store " + path_ + ": unexpected key " + KeyToString(key));
    auto more = fn(first, std::string_view(it->value().data(), it->value().size()));
    if (!more.ok()) return more.status();
    if (!*more) return Status::Ok();
  }
  return FromRocks(it->status(), "reading the log");
}

StatusOr<std::optional<std::pair<uint64_t, std::string>>> Store::LogAtOrBefore(uint64_t seq) const {
  rocksdb::ReadOptions ro = ReadOpts(mode_, ReadKind::kSeek);
  std::string lower = kLogPrefix;
  rocksdb::Slice lb(lower);
  ro.iterate_lower_bound = &lb;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  it->SeekForPrev(LogKey(seq));
  std::optional<std::pair<uint64_t, std::string>> out;
  if (it->Valid()) {
    uint64_t first;
    std::string_view key(it->key().data(), it->key().size());
    if (ParseLogKey(key, &first)) out.emplace(first, it->value().ToString());
  }
  HDRF_RETURN_IF_ERROR(FromRocks(it->status(), "reading the log"));
  return out;
}

StatusOr<uint64_t> Store::CountKeys(std::string_view prefix) const {
  rocksdb::ReadOptions ro = ReadOpts(mode_);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  uint64_t n = 0;
  rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) ++n;
  HDRF_RETURN_IF_ERROR(FromRocks(it->status(), "counting keys"));
  return n;
}

std::vector<std::string> Store::UnreferencedTables() const {
  std::vector<std::string> out;
  if (!db_) return out;
  std::vector<rocksdb::LiveFileMetaData> live;
  db_->GetLiveFilesMetaData(&live);
  std::set<std::string> names;
  for (const auto& f : live) names.insert(fs::path(f.name).filename().string());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".sst") == 0 && !names.count(name))
      out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status Store::VerifyChecksums() const {
  return FromRocks(db_->VerifyChecksum(ReadOpts(mode_)), "verifying file checksums");
}

Status Store::CheckWritable() const {
  if (!db_ || mode_ != Mode::kReadWrite)
    return Status::FailedPrecondition("store " + path_ + ": not open for writing");
  return Status::Ok();
}

Status Store::Write(rocksdb::WriteBatch* batch, bool sync) {
  HDRF_RETURN_IF_ERROR(CheckWritable());
  rocksdb::WriteOptions wo;
  wo.sync = sync;
  return FromRocks(db_->Write(wo, batch), "write failed");
}

Status Store::SyncWal() {
  if (!db_ || mode_ != Mode::kReadWrite) return Status::Ok();
  return FromRocks(db_->SyncWAL(), "syncing the write-ahead log");
}

Status Store::FlushMemtable() {
  if (!db_ || mode_ != Mode::kReadWrite) return Status::Ok();
  rocksdb::FlushOptions fo;
  fo.wait = true;
  return FromRocks(db_->Flush(fo), "flushing the memtable");
}

Store::TableFile::TableFile(Store* store) : store_(store), path_(store->path() + "/" + kTableFile) {}

Store::TableFile::~TableFile() {
  // Not ingested (an error on the way): leave no file behind. Ingested
  // with move_files, RocksDB has removed it already.
  if (!writer_) return;
  writer_.reset();
  if (store_->db_) (void)store_->db_->GetEnv()->DeleteFile(path_);
}

// A checkpoint's table file is compressed block by block on this many
// threads of RocksDB's table builder besides the one that writes it (the
// checkpoint thread), so that the compression does not take the checkpoint
// thread's time from applying events (docs/storage.md "Writing: group
// commit", the table of RocksDB options).
constexpr uint32_t kTableFileCompressionThreads = 2;

StatusOr<std::unique_ptr<Store::TableFile>> Store::NewTableFile() {
  HDRF_RETURN_IF_ERROR(CheckWritable());
  std::unique_ptr<TableFile> t(new TableFile(this));
  rocksdb::Options o = MakeOptions(false);
  o.compression_opts.parallel_threads = kTableFileCompressionThreads;
  t->writer_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(o), o);
  HDRF_RETURN_IF_ERROR(FromRocks(t->writer_->Open(t->path_), "creating " + std::string(kTableFile)));
  return t;
}

Status Store::TableFile::Put(std::string_view key, std::string_view value) {
  ++keys_;
  return store_->FromRocks(writer_->Put(rocksdb::Slice(key.data(), key.size()),
                                        rocksdb::Slice(value.data(), value.size())),
                           "writing " + std::string(kTableFile));
}

Status Store::TableFile::Finish() {
  finished_ = true;
  if (keys_ == 0) return Status::Ok();  // SstFileWriter refuses an empty file
  return store_->FromRocks(writer_->Finish(), "finishing " + std::string(kTableFile));  // synced
}

Status Store::TableFile::Ingest() {
  if (!finished_) return Status::Internal("store " + store_->path() + ": table file ingested before Finish");
  if (keys_ == 0) return Status::Ok();
  HDRF_RETURN_IF_ERROR(store_->CheckWritable());
  rocksdb::IngestExternalFileOptions io;
  io.move_files = true;  // a hard link (a copy where links fail), no rewrite
  HDRF_RETURN_IF_ERROR(store_->FromRocks(store_->db_->IngestExternalFile({path_}, io),
                                         "ingesting " + std::string(kTableFile)));
  (void)store_->db_->GetEnv()->DeleteFile(path_);  // a copy leaves it
  writer_.reset();
  return Status::Ok();
}

Status Store::DropFilesInRange(std::string_view begin, std::string_view end) {
  if (!db_ || mode_ != Mode::kReadWrite) return Status::Ok();
  const rocksdb::Slice b(begin.data(), begin.size()), e(end.data(), end.size());
  return FromRocks(rocksdb::DeleteFilesInRange(db_.get(), db_->DefaultColumnFamily(), &b, &e,
                                               /*include_end=*/false),
                   "dropping table files in " + KeyToString(begin) + " .. " + KeyToString(end));
}

namespace {
constexpr std::string_view kCloseMarkHead = "hdrf close mark 1\nseq ";
rocksdb::Env* MarkEnv() {
  rocksdb::Env* env = g_test_env.load(std::memory_order_acquire);
  return env ? env : rocksdb::Env::Default();
}
}  // namespace

Status Store::WriteCloseMark(const std::string& dir, uint64_t seq) {
  rocksdb::Env* env = MarkEnv();
  const std::string final_name = dir + "/" + kCloseMarkFile;
  const std::string temp_name = final_name + ".tmp";
  const std::string data = std::string(kCloseMarkHead) + std::to_string(seq) + "\n";
  rocksdb::Status s = rocksdb::WriteStringToFile(env, data, temp_name, /*should_sync=*/true);
  if (s.ok()) s = env->RenameFile(temp_name, final_name);
  if (s.ok()) {
    std::unique_ptr<rocksdb::Directory> d;
    s = env->NewDirectory(dir, &d);
    if (s.ok()) s = d->Fsync();
  }
  if (!s.ok()) return Status::IoError("store " + dir + ": writing " + kCloseMarkFile + ": " + s.ToString());
  return Status::Ok();
}

StatusOr<std::optional<uint64_t>> Store::ReadCloseMark(const std::string& dir) {
  rocksdb::Env* env = MarkEnv();
  const std::string name = dir + "/" + kCloseMarkFile;
  if (env->FileExists(name).IsNotFound()) return std::optional<uint64_t>();
  std::string data;
  rocksdb::Status s = rocksdb::ReadFileToString(env, name, &data);
  if (!s.ok()) return Status::Corruption("store " + dir + ": reading " + kCloseMarkFile + ": " + s.ToString());
  // "hdrf close mark 1\nseq N\n", N decimal: nothing else is a mark.
  const std::string_view v(data);
  uint64_t seq = 0;
  bool ok = v.starts_with(kCloseMarkHead) && v.ends_with('\n');
  if (ok) {
    const char* end = v.data() + v.size() - 1;
    const auto [at, ec] = std::from_chars(v.data() + kCloseMarkHead.size(), end, seq);
    ok = ec == std::errc() && at == end && at != v.data() + kCloseMarkHead.size();
  }
  if (!ok) return Status::Corruption("store " + dir + ": " + kCloseMarkFile + " is not a close mark (" +
                                     std::to_string(data.size()) + " bytes)");
  return std::optional<uint64_t>(seq);
}

StatusOr<StoreInfo> InspectStore(const std::string& path) {
  HDRF_ASSIGN_OR_RETURN(auto st, Store::Open(path, Store::Mode::kReadOnly));
  StoreInfo info;
  HDRF_ASSIGN_OR_RETURN(info.meta, st->ReadMeta());
  HDRF_ASSIGN_OR_RETURN(info.checkpoints, st->CheckpointSeqs());
  HDRF_ASSIGN_OR_RETURN(info.log_records, st->CountKeys(kLogPrefix));
  return info;
}

namespace {
std::string JoinNames(const std::vector<std::string>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "}";
}
}  // namespace

Status CheckResourceNames(const MetaRecord& meta, const std::string& path,
                          std::vector<std::string> expected) {
  std::sort(expected.begin(), expected.end());
  if (expected == meta.resource_names) return Status::Ok();
  return Status::InvalidArgument("store " + path + ": written with resources " +
                                 JoinNames(meta.resource_names) + ", expected " +
                                 JoinNames(expected));
}

}  // namespace hdrf::storage
