// Helpers for the storage tests: a deterministic event stream that touches
// every event type, temporary directories, directory fingerprints and a
// child-process runner.
#ifndef HDRF_TESTS_STORAGE_STORAGE_UTIL_H_
#define HDRF_TESTS_STORAGE_STORAGE_UTIL_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "engine/event.h"
#include "hdrf/spec.h"
#include "tests/rng.h"

namespace hdrf::storage_test {

using Rng = hdrf::testing::Rng;  // tests/rng.h

// The world every stream starts from.
ResourceAmounts TestCluster();
std::vector<QueueSpec> TestQueues();

struct StreamOptions {
  size_t events = 1000;
  // Percent of events that are not task events (submit, remove, queue ops,
  // capacity changes).
  int other_percent = 10;
};

// An endless deterministic stream: Next() returns an event that the
// generator's own engine accepted (so the stream applies in order to an
// engine created with TestCluster()/TestQueues()). Prefix-stable: the first
// n events do not depend on how many are drawn.
class StreamGen {
 public:
  explicit StreamGen(uint64_t seed, int other_percent = 10);
  ~StreamGen();
  Event Next();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int other_percent_;
};

// `events` events, each accepted when applied in order to an engine created
// with TestCluster()/TestQueues() (the generator checks each one on its own
// engine). Same seed, same stream.
std::vector<Event> MakeStream(uint64_t seed, const StreamOptions& o);

// Digest after applying the first `n` events of `stream` in memory.
uint64_t PrefixDigest(const std::vector<Event>& stream, size_t n);

// The plan workload (storage_child --plans, crash_test's SigkillPlans): on
// an engine created with PlanCluster()/PlanQueues(), round after round two
// of the three queues fill the whole cluster (steps; some jobs are gangs,
// JobSpec::min_available 2..3), a job (sometimes a gang) waits in the
// third, and reclaim plans (Engine::Plan, Engine::ApplyPlan) take tasks back
// for it until none fits; then the round's jobs are removed. Every event is
// its own call; after each one that returned OK, `after(kind, victims)` is
// called (kind "submit" | "step" | "plan" | "remove"; victims: the plan's
// entries, 0 for other events); the workload stops when it returns false,
// or after `max_rounds` rounds. Deterministic: the same seed gives the same
// events on any engine in the same state (a store or none). An error
// (a refused or stale call) is returned.
ResourceAmounts PlanCluster();
std::vector<QueueSpec> PlanQueues();
Status RunPlanWorkload(Engine& e, uint64_t seed, uint64_t max_rounds,
                       const std::function<bool(const char* kind, size_t victims)>& after);

// A fresh empty directory under TEST_TMPDIR or /tmp; removed with the object.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// File name -> FNV-1a of its bytes, for every regular file under `dir`.
std::map<std::string, uint64_t> Fingerprint(const std::string& dir);
void CopyDir(const std::string& from, const std::string& to);
// Regular files of `dir` whose name ends with `suffix`, sorted.
std::vector<std::string> FilesWithSuffix(const std::string& dir, const std::string& suffix);
void FlipByte(const std::string& file, size_t offset);
size_t FileSize(const std::string& file);

// A child process with its stdout on a pipe.
class Child {
 public:
  // Runs `argv` (argv[0] is the program path).
  explicit Child(const std::vector<std::string>& argv);
  ~Child();
  // Reads what is available within `timeout_ms` into lines(); false at EOF.
  bool Poll(int timeout_ms);
  // Reads until EOF and reaps; returns the wait status.
  int Wait();
  void Kill(int sig);
  const std::vector<std::string>& lines() const { return lines_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string partial_;
  std::vector<std::string> lines_;
  bool reaped_ = false;
  int status_ = 0;
};

// What a storage_child reported (its lines: see storage_child.cc).
struct Acks {
  uint64_t max_durable = 0;  // largest durable_seq() reported after an OK
  uint64_t max_last = 0;     // largest last_seq() reported after an OK
  uint64_t count = 0;
  bool ready = false;
  std::string error, after_error;
};
Acks ParseAcks(const std::vector<std::string>& lines);

// The storage_child helper (its path comes from $HDRF_STORAGE_CHILD).
std::string ChildPath();

}  // namespace hdrf::storage_test

#endif  // HDRF_TESTS_STORAGE_STORAGE_UTIL_H_
