// FaultFs: a RocksDB file system for power-loss tests, in the manner of
// RocksDB's FaultInjectionTestFS (which Debian's librocksdb-dev does not
// ship). It passes every call to the default (POSIX) file system and keeps,
// per file written through it, how many bytes were written and how many
// were synced, and, per directory, the names created, renamed and deleted
// since the directory was last fsynced.
//
// A power cut has two halves:
//   * Cut() (or the operation ArmCut() names): the power goes off. Every
//     later write, sync, create, rename or delete fails with IOError
//     "power cut" and reaches nothing, so nothing the process does after
//     this instant is on "disk". Reads still work.
//   * DropUnsynced(), once every store over the file system is closed: what
//     the disk holds after the power comes back. Each file is cut to the
//     bytes that were synced (Sync/Fsync; RangeSync makes nothing durable:
//     sync_file_range(2) does not persist the file size), and the name
//     operations not followed by an fsync of their directory are undone,
//     newest first: a created file is deleted (its earlier content, if it
//     replaced one, comes back), a renamed file goes back to its old name
//     (and the file it replaced comes back), a deleted file comes back with
//     the bytes it had synced. With `partial`, some unsynced data and name
//     operations survive as a real disk may keep them: each file keeps a
//     random part of its unsynced tail (written back in order), and a
//     random prefix of the unsynced name operations (a journal committed in
//     order) stands.
// Syncs are recorded, not performed (no fsync(2)): what is durable is what
// this model says, and the tests run at memory speed. Everything is under
// one mutex, so a cut falls between two whole operations.
#ifndef HDRF_TESTS_STORAGE_FAULT_FS_H_
#define HDRF_TESTS_STORAGE_FAULT_FS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "tests/rng.h"

namespace hdrf::storage_test {

class FaultFs : public rocksdb::FileSystemWrapper {
 public:
  // Over rocksdb::FileSystem::Default().
  FaultFs();
  ~FaultFs() override;
  static const char* kClassName() { return "HdrfFaultFs"; }
  const char* Name() const override { return kClassName(); }

  // The power goes off at the `n`-th mutating operation from now (that one
  // fails and reaches nothing); 0 disarms.
  void ArmCut(uint64_t n);
  // The power goes off now.
  void Cut();
  bool cut() const;
  // Called (under the file system's lock: it must not call back into it)
  // when an armed cut happens, with the operation it stopped ("append",
  // "sync", "create", "rename", "delete", "directory fsync", ...).
  void SetOnCut(std::function<void(const char* what)> fn);
  // Mutating operations (writes, syncs, creates, renames, deletes,
  // directory fsyncs) seen so far.
  uint64_t ops() const;

  struct DropStats {
    uint64_t files_cut = 0;        // files that lost unsynced bytes
    uint64_t bytes_dropped = 0;
    uint64_t names_undone = 0;     // creates, renames, deletes undone
  };
  // After Cut(), with every file closed: leaves on disk what a power loss
  // leaves (above), then powers on again: everything on disk counts as
  // durable, nothing is armed. `rng` picks the partial survivors.
  DropStats DropUnsynced(bool partial, testing::Rng& rng);

  // ---- rocksdb::FileSystem ----
  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomRWFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSRandomRWFile>* r,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& o,
                                 std::unique_ptr<rocksdb::FSDirectory>* r,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(const std::string& f, size_t size, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& s, const std::string& t,
                               const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LinkFile(const std::string& s, const std::string& t,
                             const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDir(const std::string& d, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDirIfMissing(const std::string& d, const rocksdb::IOOptions& o,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteDir(const std::string& d, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* dbg) override;

  // ---- for the file wrappers (fault_fs.cc) ----
  struct FileState {
    uint64_t size = 0;    // bytes written
    uint64_t synced = 0;  // of which durable
  };
  // Under mu_: counts a mutating operation; IOError once the power is off
  // (this operation included, when it is the armed one).
  rocksdb::IOStatus Step(const char* what);
  std::mutex& mu() { return mu_; }
  void SyncDir(const std::string& dir);  // under mu_

 private:
  struct NameOp {
    enum Kind { kCreate, kRename, kDelete } kind;
    std::string dir;   // whose fsync makes it durable
    std::string path;  // created, renamed to, deleted
    std::string from;  // kRename: the old name
    std::optional<std::string> before;  // what `path` held before (durable bytes)
  };
  std::shared_ptr<FileState> Track(const std::string& path, uint64_t size, uint64_t synced);
  // The durable bytes of `path` now, or nullopt if it does not exist.
  std::optional<std::string> DurableContent(const std::string& path);

  mutable std::mutex mu_;
  bool off_ = false;
  uint64_t ops_ = 0;
  uint64_t cut_at_ = 0;  // 0: not armed
  std::function<void(const char*)> on_cut_;
  std::map<std::string, std::shared_ptr<FileState>> files_;  // path -> state
  std::vector<NameOp> name_ops_;  // not yet made durable by a directory fsync
};

// A RocksDB Env over a FaultFs (storage::SetEnvForTesting takes it).
struct FaultEnv {
  FaultEnv();
  ~FaultEnv();
  std::shared_ptr<FaultFs> fs;
  std::unique_ptr<rocksdb::Env> env;
};

}  // namespace hdrf::storage_test

#endif  // HDRF_TESTS_STORAGE_FAULT_FS_H_
