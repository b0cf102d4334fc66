// Store: one RocksDB database holding an hdrf state (docs/storage.md).
//
// A Store is opened read-only (nothing in the directory is written, not even
// RocksDB's info LOG) or read-write (exclusive: RocksDB's LOCK file). Every
// error is a Status whose message starts with "store DIR" and names what is
// wrong; RocksDB errors keep RocksDB's own text (file names included).
//
// Thread safety: RocksDB's. Reads and writes may come from any thread;
// Reopen() and Close() must not race with anything else.
#ifndef HDRF_STORAGE_STORE_H_
#define HDRF_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/status.h"
#include "storage/codec.h"

namespace rocksdb {
class DB;
class Env;
class SstFileWriter;
class WriteBatch;
class Status;
}  // namespace rocksdb

namespace hdrf::storage {

class Store {
 public:
  // kSecondary: a RocksDB secondary instance over a store that another
  // process (the writer) holds; it reads what the writer wrote up to the
  // last CatchUpWithPrimary() (docs/storage.md "Followers").
  enum class Mode { kReadOnly, kReadWrite, kSecondary };

  // Creates a new store at `path` (a missing or empty directory) and writes
  // `meta`. Fails with AlreadyExists when a store, or anything else, is
  // there already.
  static StatusOr<std::unique_ptr<Store>> Create(const std::string& path, const MetaRecord& meta);
  // Opens an existing store. NotFound "no store at DIR" when there is none.
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, Mode mode);
  // Opens a secondary instance of the store at `path` (which a writer may
  // hold); `secondary_dir` (created if missing) is its own directory.
  // Nothing in `path` is written. Defined in storage/secondary.cc.
  static StatusOr<std::unique_ptr<Store>> OpenSecondary(const std::string& path,
                                                        const std::string& secondary_dir);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  Mode mode() const { return mode_; }
  // Closes and opens again in `mode`.
  Status Reopen(Mode mode);

  // ---- reads (checksums always verified) ----
  // The value at `key`; NotFound (with the key in the message) if absent.
  StatusOr<std::string> Get(std::string_view key) const;
  StatusOr<MetaRecord> ReadMeta() const;
  // Sequence numbers of the committed checkpoints ("h/" keys), ascending.
  StatusOr<std::vector<uint64_t>> CheckpointSeqs() const;
  // Calls fn(first_seq, value) for every log record whose key is >= `from`
  // (in key order) until fn returns false or an error.
  Status ScanLog(uint64_t from,
                 const std::function<StatusOr<bool>(uint64_t, std::string_view)>& fn) const;
  // The log record with the largest first seq <= `seq`, if any.
  StatusOr<std::optional<std::pair<uint64_t, std::string>>> LogAtOrBefore(uint64_t seq) const;
  // Number of keys starting with `prefix` (tests, tools).
  StatusOr<uint64_t> CountKeys(std::string_view prefix) const;
  // Table files in the directory that the MANIFEST does not reference
  // (normal only after a crash during a flush; otherwise a sign of a
  // damaged or truncated MANIFEST).
  std::vector<std::string> UnreferencedTables() const;
  // Reads every SST file of the store and checks its block checksums.
  Status VerifyChecksums() const;

  // ---- the close mark (docs/storage.md "The close mark") ----
  // A file beside RocksDB's, kCloseMarkFile, holding the last event of the
  // store's last clean close: every event up to it was durable then, so a
  // later load that reaches less has lost acknowledged events (a truncated
  // MANIFEST that RocksDB reads as an older, consistent version). Written
  // (synced, then renamed into place) after the store is closed; through
  // the test Env when one is set.
  static constexpr char kCloseMarkFile[] = "HDRF-CLOSED";
  static Status WriteCloseMark(const std::string& dir, uint64_t seq);
  // The mark's event, nullopt when the store has none (never closed
  // cleanly, or written by a build without marks); Corruption when the
  // file cannot be read or parsed.
  static StatusOr<std::optional<uint64_t>> ReadCloseMark(const std::string& dir);

  // ---- writes (read-write mode only) ----
  Status Write(rocksdb::WriteBatch* batch, bool sync);
  // Makes every write so far durable.
  Status SyncWal();
  // Sorted keys and values written to a table file outside RocksDB, then
  // ingested whole (checkpoint chunks, docs/storage.md "Checkpoints"):
  // nothing goes through the memtable or the WAL, and nothing of it is
  // visible, or survives a crash, before Ingest() returns; then all of it
  // does (one MANIFEST edit). Keys must come in ascending order. At most one
  // at a time per store (it is written to kTableFile in the store's
  // directory); a file left by a crash is overwritten by the next one.
  class TableFile {
   public:
    ~TableFile();
    Status Put(std::string_view key, std::string_view value);
    // Finishes and syncs the file (nothing in the store yet).
    Status Finish();
    // Adds the finished file to the store (read-write mode only). A file
    // with no keys is not ingested.
    Status Ingest();

   private:
    friend class Store;
    explicit TableFile(Store* store);
    Store* store_;
    std::string path_;
    std::unique_ptr<rocksdb::SstFileWriter> writer_;
    uint64_t keys_ = 0;
    bool finished_ = false;
  };
  static constexpr char kTableFile[] = "hdrf-table.tmp";
  StatusOr<std::unique_ptr<TableFile>> NewTableFile();
  // Drops the table files wholly inside [begin, end) (keys already deleted
  // by a synced range deletion: no compaction has to read them first).
  Status DropFilesInRange(std::string_view begin, std::string_view end);
  // Writes the memtable to SST files and waits until they are durable and
  // in the MANIFEST (so the next open replays no WAL).
  Status FlushMemtable();
  Status Close();
  // kSecondary only: reads what the writer wrote since the last call (its
  // MANIFEST and WAL tails). Reads in between see a fixed state.
  Status CatchUpWithPrimary();

  rocksdb::DB* db() const { return db_.get(); }

  // Converts a RocksDB status; `what` says what was being done.
  Status FromRocks(const rocksdb::Status& s, const std::string& what) const;

 private:
  Store(std::string path, Mode mode);
  Status OpenDb(Mode mode, bool create);
  // FailedPrecondition unless open read-write.
  Status CheckWritable() const;

  std::string path_;
  Mode mode_;
  std::unique_ptr<rocksdb::DB> db_;
  std::string secondary_dir_;  // kSecondary
};

// Tests only: every store opened from now on reads and writes its files
// through `env` (tests/storage/fault_fs.h: a file system that drops unsynced
// writes at a simulated power cut). Default nullptr: RocksDB's default Env.
// The Env must outlive every store opened meanwhile; set it before opening
// any (no store may be opening while it changes).
void SetEnvForTesting(rocksdb::Env* env);

// The process holding the store's LOCK (a live writer), if another process
// does. The caller's own process never shows (fcntl locks).
std::optional<long> StoreLockHolder(const std::string& path);

// What a store holds, read without replaying it (tools, the replay tool's
// checks before reusing a directory).
struct StoreInfo {
  MetaRecord meta;
  std::vector<uint64_t> checkpoints;  // committed checkpoint seqs
  uint64_t log_records = 0;
};
StatusOr<StoreInfo> InspectStore(const std::string& path);

// Fails with InvalidArgument naming both lists when the store's resource
// names differ from `expected` (any order).
Status CheckResourceNames(const MetaRecord& meta, const std::string& path,
                          std::vector<std::string> expected);

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_STORE_H_
