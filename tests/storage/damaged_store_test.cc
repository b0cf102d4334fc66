// Damaged stores: every kind of damage is a clear error that names the
// store and changes nothing, and `hdrf recover`'s output and exit codes
// (issue 5; docs/storage.md "Errors").
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include "hdrf/engine.h"
#include "api/facade/engine_impl.h"  // CheckEngineInvariants
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/codec.h"
#include "storage/journal.h"
#include "storage/state_io.h"
#include "storage/store.h"
#include "tests/storage/storage_util.h"
#include "tests/storage/store_test_util.h"

namespace hdrf {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using storage_test::ApplyAll;
using storage_test::Child;
using storage_test::MakeStream;
using storage_test::MustCreate;
using storage_test::MustOpen;
using storage_test::Names;
using storage_test::Opts;
using storage_test::PrefixDigest;
using storage_test::TempDir;
using storage_test::TestCluster;
using storage_test::TestQueues;
namespace fs = std::filesystem;

// A closed store with a checkpoint in SST files and a crashed store whose
// log tail is only in the WAL; each case damages a copy.
class Damaged : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("damaged");
    stream_ = new std::vector<Event>(MakeStream(77, {.events = 2000, .other_percent = 10}));
    {
      auto e = Engine::Create(TestCluster(), TestQueues(), Opts(Closed(), Durability::kAsync, 800));
      ASSERT_TRUE(e.ok());
      ApplyAll(**e, *stream_);
      ASSERT_TRUE((*e)->Close().ok());
    }
    ASSERT_FALSE(storage_test::ChildPath().empty());
    Child c({storage_test::ChildPath(), "--db", Crashed(), "--durability", "sync", "--seed", "77",
             "--events", "600", "--checkpoint-every", "0"});
    int st = c.Wait();
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete stream_;
  }
  static std::string Closed() { return dir_->Sub("closed"); }
  static std::string Crashed() { return dir_->Sub("crashed"); }

  std::string Copy(const std::string& from, const std::string& name) {
    std::string to = dir_->Sub(name);
    fs::remove_all(to);
    storage_test::CopyDir(from, to);
    return to;
  }

  // Opens `db` and expects an error whose message has every one of
  // `phrases`; checks that the store's files are unchanged.
  void ExpectRefused(const std::string& db, std::optional<StatusCode> code,
                     std::vector<std::string> phrases) {
    auto before = storage_test::Fingerprint(db);
    for (Durability d : {Durability::kSync, Durability::kNone}) {
      auto e = Engine::Open(Opts(db, d));
      ASSERT_FALSE(e.ok()) << "opened a damaged store";
      const std::string m = e.status().message();
      if (code) {
        EXPECT_EQ(e.status().code(), *code) << e.status().ToString();
      }
      for (const std::string& p : phrases) EXPECT_THAT(m, HasSubstr(p));
      EXPECT_THAT(m, HasSubstr(db));
      EXPECT_EQ(storage_test::Fingerprint(db), before) << "the store was modified";
    }
    // And the tool says so with exit code 1.
    const char* bin = std::getenv("HDRF_BIN");
    if (bin) {
      std::string cmd = std::string(bin) + " recover --db '" + db + "' --json > /dev/null 2>&1";
      int st = std::system(cmd.c_str());
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << st;
      EXPECT_EQ(storage_test::Fingerprint(db), before);
    }
  }

  static TempDir* dir_;
  static std::vector<Event>* stream_;
};
TempDir* Damaged::dir_ = nullptr;
std::vector<Event>* Damaged::stream_ = nullptr;

TEST_F(Damaged, IntactCopiesOpen) {
  for (auto [src, n] : {std::pair{Closed(), size_t{2000}}, std::pair{Crashed(), size_t{600}}}) {
    std::string db = Copy(src, "intact");
    auto e = MustOpen(Opts(db, Durability::kNone));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->last_seq(), n);
    EXPECT_EQ(e->Digest(), PrefixDigest(*stream_, n));
  }
}

TEST_F(Damaged, BitFlippedSst) {
  std::string db = Copy(Closed(), "sst-flip");
  auto ssts = storage_test::FilesWithSuffix(db, ".sst");
  ASSERT_FALSE(ssts.empty());
  for (const auto& f : ssts) storage_test::FlipByte(f, storage_test::FileSize(f) / 3);
  ExpectRefused(db, StatusCode::kCorruption, {".sst", "checksum"});
}

TEST_F(Damaged, TruncatedSst) {
  std::string db = Copy(Closed(), "sst-trunc");
  auto ssts = storage_test::FilesWithSuffix(db, ".sst");
  ASSERT_FALSE(ssts.empty());
  fs::resize_file(ssts[0], storage_test::FileSize(ssts[0]) / 2);
  ExpectRefused(db, std::nullopt, {".sst"});
}

TEST_F(Damaged, MissingSst) {
  std::string db = Copy(Closed(), "sst-missing");
  auto ssts = storage_test::FilesWithSuffix(db, ".sst");
  ASSERT_FALSE(ssts.empty());
  fs::remove(ssts[0]);
  ExpectRefused(db, std::nullopt, {fs::path(ssts[0]).stem().string(), "No such file"});
}

TEST_F(Damaged, TruncatedManifest) {
  std::string db = Copy(Closed(), "manifest-trunc");
  auto m = storage_test::FilesWithSuffix(db, "");
  std::string manifest;
  for (const auto& f : m)
    if (fs::path(f).filename().string().rfind("MANIFEST-", 0) == 0) manifest = f;
  ASSERT_FALSE(manifest.empty());
  fs::resize_file(manifest, storage_test::FileSize(manifest) / 2);
  ExpectRefused(db, std::nullopt, {"MANIFEST"});  // names it in a note
}

// The close mark (storage/store.h): a store whose files hold an older
// state than its last clean close (what a MANIFEST cut at a record boundary
// gives: RocksDB reads an older, consistent version) is refused, not
// opened with the later events silently gone.
TEST_F(Damaged, FilesOlderThanTheCloseMark) {
  const std::string older = Copy(Closed(), "mark-older");
  const std::string newer = Copy(Closed(), "mark-newer");
  ASSERT_TRUE(fs::exists(newer + "/" + storage::Store::kCloseMarkFile));
  uint64_t closed_at = 0;
  {
    auto e = MustOpen(Opts(newer));
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->SetCapacity(TestCluster()).ok());
    closed_at = e->last_seq();
    ASSERT_TRUE(e->Close().ok());
  }
  // The newer close's mark over the older files.
  fs::copy_file(newer + "/" + storage::Store::kCloseMarkFile, older + "/" + storage::Store::kCloseMarkFile,
                fs::copy_options::overwrite_existing);
  ExpectRefused(older, StatusCode::kCorruption,
                {"closed after event " + std::to_string(closed_at), storage::Store::kCloseMarkFile,
                 "hold the state after event " + std::to_string(closed_at - 1), "MANIFEST"});
  // The store the mark belongs to opens.
  auto e = MustOpen(Opts(newer));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->last_seq(), closed_at);
}

TEST_F(Damaged, GarbledCloseMark) {
  const std::string db = Copy(Closed(), "mark-garbled");
  {
    std::ofstream f(db + "/" + storage::Store::kCloseMarkFile, std::ios::trunc);
    f << "hdrf close mark 1\nseq 12x\n";
  }
  ExpectRefused(db, StatusCode::kCorruption, {std::string(storage::Store::kCloseMarkFile) + " is not a close mark"});
}

TEST_F(Damaged, MissingCurrent) {
  std::string db = Copy(Closed(), "no-current");
  fs::remove(db + "/CURRENT");
  ExpectRefused(db, StatusCode::kCorruption, {"CURRENT is missing"});
}

TEST_F(Damaged, BitFlippedWal) {
  std::string db = Copy(Crashed(), "wal-flip");
  auto logs = storage_test::FilesWithSuffix(db, ".log");
  ASSERT_FALSE(logs.empty());
  const std::string wal = logs.back();
  ASSERT_GT(storage_test::FileSize(wal), 4096u);
  storage_test::FlipByte(wal, storage_test::FileSize(wal) / 2);
  ExpectRefused(db, StatusCode::kCorruption, {".log", "checksum mismatch"});
}

TEST_F(Damaged, TruncatedWalRecoversAPrefixOnly) {
  // A WAL cut short looks exactly like a crash mid-write: what is left is
  // recovered and it is a prefix of the events (docs/storage.md).
  std::string db = Copy(Crashed(), "wal-trunc");
  auto logs = storage_test::FilesWithSuffix(db, ".log");
  ASSERT_FALSE(logs.empty());
  fs::resize_file(logs.back(), storage_test::FileSize(logs.back()) * 2 / 3 + 5);
  auto e = Engine::Open(Opts(db, Durability::kNone));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const uint64_t n = (*e)->last_seq();
  EXPECT_LT(n, 600u);
  EXPECT_EQ((*e)->Digest(), PrefixDigest(*stream_, n));
}

TEST_F(Damaged, WrongFormatVersion) {
  std::string db = Copy(Closed(), "version");
  {
    auto st = storage::Store::Open(db, storage::Store::Mode::kReadWrite);
    ASSERT_TRUE(st.ok());
    auto meta = (*st)->ReadMeta();
    ASSERT_TRUE(meta.ok());
    meta->format_version = 7;
    rocksdb::WriteBatch wb;
    wb.Put(storage::kMetaKey, storage::EncodeMeta(*meta));
    ASSERT_TRUE((*st)->Write(&wb, true).ok());
  }
  ExpectRefused(db, StatusCode::kInvalidArgument, {"format version 7", "reads format version 1", "key m"});
}

TEST_F(Damaged, OtherResourceNames) {
  // A store whose meta names other resources than its checkpoint uses.
  std::string db = Copy(Closed(), "names");
  {
    auto st = storage::Store::Open(db, storage::Store::Mode::kReadWrite);
    ASSERT_TRUE(st.ok());
    auto meta = (*st)->ReadMeta();
    ASSERT_TRUE(meta.ok());
    meta->resource_names = {"cpu", "memory"};
    rocksdb::WriteBatch wb;
    wb.Put(storage::kMetaKey, storage::EncodeMeta(*meta));
    ASSERT_TRUE((*st)->Write(&wb, true).ok());
  }
  ExpectRefused(db, StatusCode::kCorruption, {"checkpoint capacity", "3 amounts for 2 resources", "h/seq="});
}

TEST_F(Damaged, ExpectedResourcesMismatch) {
  std::string db = Copy(Closed(), "expect");
  auto info = storage::InspectStore(db);
  ASSERT_TRUE(info.ok());
  Status s = storage::CheckResourceNames(info->meta, db, {"cpu"});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("written with resources {cpu, memory, nvidia.com/gpu}, expected {cpu}"));
  EXPECT_TRUE(storage::CheckResourceNames(info->meta, db, {"nvidia.com/gpu", "cpu", "memory"}).ok());
  const char* bin = std::getenv("HDRF_BIN");
  ASSERT_NE(bin, nullptr);
  std::string cmd = std::string(bin) + " recover --db '" + db + "' --resources cpu 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int st = pclose(p);
  EXPECT_EQ(WEXITSTATUS(st), 1);
  EXPECT_THAT(out, HasSubstr("expected {cpu}"));
}

TEST_F(Damaged, MissingMetaChunkAndLogRecord) {
  auto edit = [&](const std::string& src, const std::string& name, auto&& fn) {
    std::string db = Copy(src, name);
    auto st = storage::Store::Open(db, storage::Store::Mode::kReadWrite);
    EXPECT_TRUE(st.ok());
    fn(**st);
    EXPECT_TRUE((*st)->FlushMemtable().ok());
    return db;
  };
  std::string no_meta = edit(Closed(), "no-meta", [](storage::Store& s) {
    rocksdb::WriteBatch wb;
    wb.Delete(storage::kMetaKey);
    ASSERT_TRUE(s.Write(&wb, true).ok());
  });
  ExpectRefused(no_meta, StatusCode::kCorruption, {"key m (meta) is missing"});

  uint64_t ckpt = 0;
  std::string no_chunk = edit(Closed(), "no-chunk", [&](storage::Store& s) {
    auto c = s.CheckpointSeqs();
    ASSERT_TRUE(c.ok() && !c->empty());
    ckpt = c->back();
    rocksdb::WriteBatch wb;
    wb.Delete(storage::ChunkKey(ckpt, 0));
    ASSERT_TRUE(s.Write(&wb, true).ok());
  });
  ExpectRefused(no_chunk, StatusCode::kCorruption, {"key c/seq=" + std::to_string(ckpt) + "/chunk=0 is missing"});

  std::string gap = edit(Crashed(), "log-gap", [](storage::Store& s) {
    rocksdb::WriteBatch wb;
    wb.Delete(storage::LogKey(300));
    ASSERT_TRUE(s.Write(&wb, true).ok());
  });
  ExpectRefused(gap, StatusCode::kCorruption, {"log gap: event 300 is missing", "l/seq=301"});

  std::string garbage = edit(Crashed(), "log-garbage", [](storage::Store& s) {
    rocksdb::WriteBatch wb;
    wb.Put(storage::LogKey(200), "this is not a flatbuffer at all");
    ASSERT_TRUE(s.Write(&wb, true).ok());
  });
  ExpectRefused(garbage, StatusCode::kCorruption, {"key l/seq=200", "not an hdrf record"});

  // A record that verifies but cannot be replayed (names a job that never
  // existed) is reported with its event's sequence number.
  std::string bad_event = edit(Crashed(), "log-bad-event", [](storage::Store& s) {
    storage::EventBatch b;
    b.first_seq = 250;
    b.Add(Event::Allocate(999999, 1));
    storage::LogEncoder enc(Names());
    std::string v;
    ASSERT_TRUE(enc.Encode(b, 0, 1, &v).ok());
    rocksdb::WriteBatch wb;
    wb.Put(storage::LogKey(250), v);
    ASSERT_TRUE(s.Write(&wb, true).ok());
  });
  ExpectRefused(bad_event, StatusCode::kCorruption, {"event 250 (allocate job #999999 n=1) cannot be replayed"});
}

// ------------------------------------------------------------- the tool --

TEST(RecoverTool, PrintsOneJsonLineAndUsesExitCodes) {
  const char* bin = std::getenv("HDRF_BIN");
  ASSERT_NE(bin, nullptr);
  TempDir dir("tool");
  const std::string db = dir.Sub("db");
  auto stream = MakeStream(4, {.events = 500});
  uint64_t digest;
  size_t jobs, queues;
  {
    auto e = MustCreate(Opts(db));
    ApplyAll(*e, stream);
    digest = e->Digest();
    jobs = e->job_count();
    queues = e->queue_count();
    ASSERT_TRUE(e->Close().ok());
  }
  auto run = [&](const std::string& args, int* code) {
    std::string cmd = std::string(bin) + " recover " + args + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int st = pclose(p);
    *code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
  };
  int code;
  std::string out = run("--db " + db + " --json", &code);
  EXPECT_EQ(code, 0);
  EXPECT_THAT(out, AllOf(HasSubstr("{\"last_seq\": 500, \"digest\": \"" + DigestToHex(digest) + "\""),
                         HasSubstr("\"queues\": " + std::to_string(queues)),
                         HasSubstr("\"jobs\": " + std::to_string(jobs)), HasSubstr("\"seconds\": ")));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1);
  run("--db " + dir.Sub("missing"), &code);
  EXPECT_EQ(code, 1);
  run("--db " + db + " --bogus", &code);
  EXPECT_EQ(code, 2);
  run("", &code);
  EXPECT_EQ(code, 2);
  out = run("--help", &code);
  EXPECT_EQ(code, 0);
  EXPECT_THAT(out, HasSubstr("--db DIR"));
}
}  // namespace
}  // namespace hdrf
