// Followers and takeover: Engine::OpenFollower, CatchUp, follower_lag and
// Promote (docs/storage.md "Followers", "Warm standby").
#include "api/facade/follower.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <shared_mutex>

#include "api/facade/engine_impl.h"

namespace hdrf {
namespace {

// Events applied per engine-lock section while catching up (bounds how long
// readers wait: about 10-30 ms at this size).
constexpr uint64_t kEventsPerRound = 1 << 16;

StatusOr<std::string> MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/hdrf-follower-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    return Status::IoError("cannot create a temporary directory for the follower under " +
                           std::string(base && *base ? base : "/tmp"));
  return tmpl;
}

void RemoveDir(const std::string& dir) {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

}  // namespace

Engine::Impl::~Impl() = default;

Follower::Follower(EngineImpl& impl, const FollowerOptions& options,
                   std::unique_ptr<storage::StoreFollower> store, storage::Replica replica,
                   std::string temp_dir)
    : impl_(impl),
      options_(options),
      temp_dir_(std::move(temp_dir)),
      store_(std::move(store)),
      replica_(std::move(replica)) {
  lag_.applied_seq = lag_.writer_seq = replica_->last_seq();
  caught_up_at_ = Clock::now();
}

Follower::~Follower() { Stop(); }

void Follower::Start() {
  if (options_.catch_up_interval_ms > 0) thread_ = std::thread([this] { Loop(); });
}

void Follower::Loop() {
  const auto interval = std::chrono::milliseconds(options_.catch_up_interval_ms);
  for (;;) {
    {
      // stop_cv_.wait_for(l, interval, [&] { return stop_; }), written out
      // (the analysis checks a lambda without the caller's locks).
      base::MutexLock l(stop_mu_);
      const auto until = std::chrono::steady_clock::now() + interval;
      while (!stop_ && l.WaitUntil(stop_cv_, until) != std::cv_status::timeout) {
      }
      if (stop_) return;
    }
    base::MutexLock g(catch_mu_);
    if (promoted_ || closed_) return;
    (void)CatchUpLocked();  // a failure shows as a growing lag; retried
  }
}

void Follower::StopThread() {
  {
    base::MutexLock l(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Follower::Stop() {
  StopThread();
  base::MutexLock g(catch_mu_);
  if (!closed_ && !promoted_ && store_) store_->Close();
  if (!closed_) RemoveDir(temp_dir_);
  closed_ = true;
  base::MutexLock l(lag_mu_);
  active_ = false;
}

Status Follower::CatchUp() {
  base::MutexLock g(catch_mu_);
  return CatchUpLocked();
}

Engine::FollowerLag Follower::Lag() const {
  base::MutexLock l(lag_mu_);
  if (!active_) return {};
  Engine::FollowerLag out = lag_;
  out.events = lag_.writer_seq > lag_.applied_seq ? lag_.writer_seq - lag_.applied_seq : 0;
  out.seconds = std::chrono::duration<double>(Clock::now() - caught_up_at_).count();
  return out;
}

// The new tree comes with its name index (FindJob reads the tree's own),
// so readers see the old tree or the new one, each complete.
void Follower::SwapIn(storage::Replica r) {
  std::unique_ptr<engine::Tree> old;
  {
    Exclusive lock(impl_.ct);
    old = impl_.ct.Swap(r.TakeTree(), r.last_seq());
  }
  replica_ = std::move(r);  // the old replica applied to `old`
  base::MutexLock l(lag_mu_);
  ++lag_.reloads;
  // `old` (maybe a million jobs) is freed here, outside the engine lock.
}

Status Follower::ApplyParts(storage::StoreFollower::Update& u) {
  Exclusive lock(impl_.ct);
  HDRF_RETURN_IF_ERROR(replica_->Apply(u.parts));
  if (replica_->last_seq() != u.last)
    return Status::Internal("store " + store_->path() + ": a catch-up read up to event " + std::to_string(u.last) +
                            " but applied up to event " + std::to_string(replica_->last_seq()));
  impl_.ct.set_last_seq(u.last);
  return Status::Ok();
}

Status Follower::CatchUpLocked() {
  if (promoted_) return Status::FailedPrecondition("the engine was promoted: it is the writer now");
  if (closed_) return Status::FailedPrecondition("engine is closed");
  uint64_t target = 0;
  for (int round = 0;; ++round) {
    const Clock::time_point start = Clock::now();  // the catch-up below reads the store as of now
    uint64_t writer_seq;
    if (need_reload_) {
      auto st = store_->Reload(reopen_);
      if (!st.ok()) {
        reopen_ = true;
        return st.status();
      }
      need_reload_ = reopen_ = false;
      writer_seq = st->last_seq();
      SwapIn(std::move(st).value());
    } else {
      auto u = store_->Poll(replica_->last_seq(), kEventsPerRound);
      if (!u.ok()) {
        // The writer may have deleted a file this instance was about to
        // read: look afresh next time.
        need_reload_ = reopen_ = true;
        return u.status();
      }
      writer_seq = u->writer_seq;
      if (u->reload) {
        SwapIn(std::move(*u->reload));
      } else if (!u->parts.empty()) {
        Status s = ApplyParts(*u);
        if (!s.ok()) {
          need_reload_ = true;  // the tree holds part of the round: rebuild it
          return s;
        }
      }
    }
    if (round == 0) target = writer_seq;
    const uint64_t applied = replica_->last_seq();
    {
      base::MutexLock l(lag_mu_);
      lag_.applied_seq = applied;
      lag_.writer_seq = std::max(writer_seq, applied);
      if (applied >= writer_seq) caught_up_at_ = start;
    }
    if (applied >= target || Stopping()) return Status::Ok();
  }
}

bool Follower::Stopping() {
  base::MutexLock l(stop_mu_);
  return stop_;
}

Status Follower::Promote(const PromoteOptions& po) {
  {
    base::MutexLock g(catch_mu_);
    if (promoted_) return Status::FailedPrecondition("the engine was promoted already: it is the writer");
    if (closed_) return Status::FailedPrecondition("engine is closed");
  }
  const std::string& db = options_.db_path;
  const auto deadline = po.wait_ms < 0 ? Clock::time_point::max()
                                       : Clock::now() + std::chrono::milliseconds(po.wait_ms);
  for (;;) {
    // The background thread keeps catching up meanwhile, so the tail left
    // for the takeover is short.
    std::optional<long> holder = storage::StoreLockHolder(db);
    if (!holder) {
      auto rw = storage::Store::Open(db, storage::Store::Mode::kReadWrite);
      if (rw.ok()) return TakeOver(std::move(rw).value(), po);
      if (rw.status().code() != StatusCode::kFailedPrecondition) return rw.status();
    }
    if (Clock::now() >= deadline)
      return Status::FailedPrecondition(
          "store " + db + ": still held by " +
          (holder ? "process " + std::to_string(*holder) : std::string("a writer in this process")) +
          "; not promoted");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Status Follower::TakeOver(std::unique_ptr<storage::Store> rw, const PromoteOptions& po) {
  StopThread();
  base::MutexLock g(catch_mu_);
  if (closed_) return Status::FailedPrecondition("engine is closed");
  store_->Adopt(std::move(rw));  // from now on the store as the writer left it
  auto fail = [&](const Status& s) {
    catch_mu_.AssertHeld();  // g's: the analysis checks a lambda on its own
    store_->Close();  // release the store: the engine stays a stopped follower
    closed_ = true;
    RemoveDir(temp_dir_);
    base::MutexLock l(lag_mu_);
    active_ = false;
    return s.WithContext("promoting the follower of " + options_.db_path);
  };
  // The tail since the last catch-up. Every event the follower applied is
  // in the writer's log after a process crash; should it not be (a lost
  // unsynced tail after a power failure), reload rather than diverge; so
  // too when the last catch-up failed (need_reload_: it may have left part
  // of a round applied).
  const uint64_t applied = replica_->last_seq();
  auto held = store_->Holds(applied);
  if (!held.ok()) return fail(held.status());
  if (!*held || need_reload_) {
    auto st = store_->Reload(false);
    if (!st.ok()) return fail(st.status());
    SwapIn(std::move(st).value());
  } else {
    auto u = store_->Poll(applied, UINT64_MAX);
    if (!u.ok()) return fail(u.status());
    if (u->reload) SwapIn(std::move(*u->reload));
    else if (!u->parts.empty())
      if (Status s = ApplyParts(*u); !s.ok()) return fail(s);
  }
  auto ckpts = store_->store().CheckpointSeqs();
  if (!ckpts.ok()) return fail(ckpts.status());
  EngineOptions eo;
  eo.db_path = options_.db_path;
  eo.overcommit_factor = store_->meta().overcommit_factor;
  eo.durability = po.durability;
  eo.checkpoint_every = po.checkpoint_every;
  eo.checkpoint_events_per_job = po.checkpoint_events_per_job;
  eo.log_retention_events = po.log_retention_events;
  eo.log_retention_seconds = po.log_retention_seconds;
  eo.latency_sample_every = po.latency_sample_every;
  eo.event_clock = po.event_clock;
  auto journal = storage::AdoptJournal(store_->Release(), store_->meta().resource_names, replica_->last_seq(),
                                      ckpts->empty() ? 0 : ckpts->back(), JournalOptionsFor(eo));
  if (!journal.ok()) return fail(journal.status());
  {
    Exclusive lock(impl_.ct);
    // Field by field: EventTimer reads latency_sample_every before it takes
    // any lock (an atomic access on both sides); the rest is read under it.
    impl_.options.db_path = eo.db_path;
    impl_.options.overcommit_factor = eo.overcommit_factor;
    impl_.options.durability = eo.durability;
    impl_.options.checkpoint_every = eo.checkpoint_every;
    impl_.options.checkpoint_events_per_job = eo.checkpoint_events_per_job;
    impl_.options.log_retention_events = eo.log_retention_events;
    impl_.options.log_retention_seconds = eo.log_retention_seconds;
    std::atomic_ref<uint32_t>(impl_.options.latency_sample_every)
        .store(eo.latency_sample_every, std::memory_order_relaxed);
    impl_.journal = std::move(journal).value();
    impl_.ct.set_sink(impl_.journal.get());
    impl_.follows.clear();
    impl_.ct.Refuse(Status::Ok());
  }
  replica_.reset();  // the tree is the engine's now (its events change it)
  promoted_ = true;
  RemoveDir(temp_dir_);
  base::MutexLock l(lag_mu_);
  active_ = false;
  return Status::Ok();
}

// ---- the Engine methods ----

StatusOr<std::unique_ptr<Engine>> Engine::OpenFollower(const FollowerOptions& options) {
  if (options.db_path.empty())
    return Status::InvalidArgument("Engine::OpenFollower needs options.db_path");
  std::string dir = options.secondary_path, temp;
  if (dir.empty()) {
    HDRF_ASSIGN_OR_RETURN(temp, MakeTempDir());
    dir = temp;
  }
  std::optional<storage::Replica> initial;
  auto sf = storage::StoreFollower::Open(options.db_path, dir, &initial);
  if (!sf.ok()) {
    RemoveDir(temp);
    return sf.status();
  }
  auto impl = std::make_unique<Impl>();
  impl->options.db_path = options.db_path;
  impl->options.durability = Durability::kNone;
  impl->options.overcommit_factor = initial->meta().overcommit_factor;
  impl->ct.Init(initial->TakeTree(), initial->last_seq(), nullptr);
  {
    base::LockGuard<base::BigReaderLock> unshared(impl->ct.lock());  // no other thread yet: for the analysis
    impl->follows = options.db_path;
    impl->ct.Refuse(Status::FailedPrecondition("engine is a read-only follower of " + options.db_path));
  }
  impl->follower = std::make_unique<Follower>(*impl, options, std::move(sf).value(),
                                              std::move(*initial), temp);
  impl->follower->Start();
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

bool Engine::is_follower() const {
  Shared l(impl_->ct);
  return !impl_->follows.empty();
}

Status Engine::CatchUp() {
  if (!impl_->follower) return Status::FailedPrecondition("CatchUp: the engine is not a follower");
  return impl_->follower->CatchUp();
}

Engine::FollowerLag Engine::follower_lag() const {
  return impl_->follower ? impl_->follower->Lag() : FollowerLag{};
}

Status Engine::Promote(const PromoteOptions& options) {
  if (!impl_->follower) return Status::FailedPrecondition("Promote: the engine is not a follower");
  return impl_->follower->Promote(options);
}

}  // namespace hdrf

namespace hdrf {

// Call it while no other thread adds or removes jobs: the jobs are listed
// under the exclusive lock, then looked up through FindJob, which takes
// the lock shared.
Status CheckNameIndex(const Engine& engine) {
  const EngineImpl& impl = EngineAccess::impl(engine);
  std::vector<std::pair<std::string, JobRef>> jobs;
  {
    Exclusive lock(impl.ct);
    const engine::Tree& t = impl.ct.tree();
    if (t.name_index_size() != t.job_count() || t.seq_index_size() != t.job_count())
      return Status::Internal("name index: " + std::to_string(t.name_index_size()) + " names and " +
                              std::to_string(t.seq_index_size()) + " submission numbers for " +
                              std::to_string(t.job_count()) + " jobs");
    for (JobId j : t.JobsInSubmitOrder()) {
      const auto by_seq = t.FindJobBySeq(t.job_seq(j));
      if (!by_seq.ok() || *by_seq != j)
        return Status::Internal("name index: job " + t.job_name(j) + " is not found by its submission number");
      jobs.push_back({t.job_name(j), JobRef{j, t.job_seq(j)}});
    }
  }
  for (const auto& [name, ref] : jobs) {
    auto found = engine.FindJob(name);
    if (!found.ok()) return Status::Internal("name index: job " + name + " is missing");
    if (found->id != ref.id || found->seq != ref.seq)
      return Status::Internal("name index: job " + name + " has a stale entry");
  }
  return Status::Ok();
}

}  // namespace hdrf
