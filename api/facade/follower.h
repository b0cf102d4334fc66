// Internal: Follower, the catch-up machinery of an engine opened with
// Engine::OpenFollower, and its promotion to the writer (Engine::Promote).
// docs/storage.md "Followers" and "Warm standby".
//
// Thread safety:
//   * catch_mu_ serializes catch-ups (the background thread's and
//     CatchUp()'s), Promote() and Stop(); it guards store_, replica_,
//     need_reload_, reopen_, promoted_ and closed_. It is taken before the engine's lock,
//     never inside it.
//   * replica_ (storage/replica.h: the replayer and the log position) applies
//     to the engine's tree, which it handed over (Replica::TakeTree); until
//     promotion the tree changes only through it, and only inside an engine
//     exclusive section (class Exclusive), where readers (views, Explain,
//     metrics) cannot be: a catch-up decodes outside the lock and applies
//     under it. A reload loads a new replica outside the lock and swaps its
//     tree in under it. Promotion drops the replica: the engine's events
//     change the tree from then on.
//   * lag_mu_ guards lag_, caught_up_at_ and active_ (read by follower_lag() from any
//     thread, without the engine lock).
//   * stop_mu_ guards stop_; the background thread waits on stop_cv_.
#ifndef HDRF_API_FACADE_FOLLOWER_H_
#define HDRF_API_FACADE_FOLLOWER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "hdrf/engine.h"
#include "api/facade/engine_access.h"
#include "base/mutex.h"
#include "storage/replica.h"
#include "storage/secondary.h"

namespace hdrf {

class Follower {
 public:
  // `temp_dir`: the secondary directory to remove at Stop() ("" = keep).
  // `replica`: the state `impl`'s tree was taken from (Replica::TakeTree).
  Follower(EngineImpl& impl, const FollowerOptions& options,
           std::unique_ptr<storage::StoreFollower> store, storage::Replica replica, std::string temp_dir);
  ~Follower();
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // Starts the background catch-up (when the interval is not 0).
  void Start();
  // One catch-up now, until the events the store held at its start are
  // applied.
  Status CatchUp();
  Engine::FollowerLag Lag() const;
  Status Promote(const PromoteOptions& options);
  // Stops the background thread and closes the secondary instance
  // (idempotent; a promoted follower only stops its thread).
  void Stop();

 private:
  using Clock = std::chrono::steady_clock;
  Status CatchUpLocked() REQUIRES(catch_mu_);
  // Replaces the engine's tree by `r`'s (a reload) under the engine lock;
  // `r` becomes replica_.
  void SwapIn(storage::Replica r) REQUIRES(catch_mu_);
  Status ApplyParts(storage::StoreFollower::Update& u) REQUIRES(catch_mu_);  // takes the engine lock
  void Loop();
  void StopThread();
  // Whether Stop() or a takeover wants the thread to end: a long catch-up
  // (far behind) ends after its current round instead of holding them up.
  bool Stopping() EXCLUDES(stop_mu_);
  Status TakeOver(std::unique_ptr<storage::Store> rw, const PromoteOptions& options) EXCLUDES(catch_mu_);

  EngineImpl& impl_;
  const FollowerOptions options_;
  const std::string temp_dir_;

  base::Mutex catch_mu_;
  std::unique_ptr<storage::StoreFollower> store_ GUARDED_BY(catch_mu_);
  // Applies to impl_.ct's tree; empty once promoted.
  std::optional<storage::Replica> replica_ GUARDED_BY(catch_mu_);
  bool need_reload_ GUARDED_BY(catch_mu_) = false;
  bool reopen_ GUARDED_BY(catch_mu_) = false;
  bool promoted_ GUARDED_BY(catch_mu_) = false;
  bool closed_ GUARDED_BY(catch_mu_) = false;

  mutable base::Mutex lag_mu_ ACQUIRED_AFTER(catch_mu_);
  Engine::FollowerLag lag_ GUARDED_BY(lag_mu_);
  Clock::time_point caught_up_at_ GUARDED_BY(lag_mu_){};  // {} = never
  bool active_ GUARDED_BY(lag_mu_) = true;                 // false once promoted or stopped

  base::Mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ GUARDED_BY(stop_mu_) = false;
  std::thread thread_;
};

}  // namespace hdrf

#endif  // HDRF_API_FACADE_FOLLOWER_H_
