#include "storage/replica.h"

#include <algorithm>

namespace hdrf::storage {
namespace {

// Any failure while rebuilding from records the store holds is damage.
Status AsCorruption(const Status& s, const std::string& context) {
  if (s.ok()) return s;
  return Status::Corruption(context + ": " + s.message());
}

std::string DescribeOp(const EventBatch& b, size_t i) {
  const LogOp& op = b.ops[i];
  std::string d = std::string(EventTypeName(op.type));
  if (op.full == kNoFull) {
    d += " job #" + std::to_string(op.job_seq);
    if (op.type != Event::Type::kRemove) d += " n=" + std::to_string(op.n);
    return d;
  }
  const Event& e = b.full[op.full];
  switch (e.type) {
    case Event::Type::kSubmit: return d + " job " + e.job.name;
    case Event::Type::kCreateQueue:
    case Event::Type::kUpdateQueue: return d + " " + e.queue.path;
    case Event::Type::kSetQueueState:
    case Event::Type::kDeleteQueue: return d + " " + e.path;
    default: return d;
  }
}

}  // namespace

// Dense index up to this many sequence numbers (4 bytes each).
constexpr uint64_t kMaxDenseSeqs = uint64_t{1} << 25;

Replayer::Replayer(engine::Tree& tree, bool fold) : tree_(tree), fold_(fold) {
  if (tree.next_seq() > kMaxDenseSeqs) return;
  by_seq_.assign(tree.next_seq() + 1024, engine::kNone);
  for (JobId j : tree.JobsInSubmitOrder()) by_seq_[tree.job_seq(j)] = j;
}

Status Replayer::Apply(const EventBatch& batch, size_t i) {
  const LogOp& op = batch.ops[i];
  // The index entry of an event a little ahead: a cache miss taken early.
  if (i + 16 < batch.ops.size() && batch.ops[i + 16].job_seq < by_seq_.size())
    __builtin_prefetch(&by_seq_[batch.ops[i + 16].job_seq]);
  if (fold_) {
    if (op.full == kNoFull && op.type != Event::Type::kRemove) {
      // The job record and the run slot of an event a little ahead.
      if (i + 8 < batch.ops.size()) {
        const JobId ahead = Find(batch.ops[i + 8].job_seq);
        if (ahead < slot_.size()) {
          __builtin_prefetch(&slot_[ahead]);
          __builtin_prefetch(tree_.job_task(ahead));
        }
      }
      if (i + 4 < batch.ops.size()) {
        const JobId ahead = Find(batch.ops[i + 4].job_seq);
        if (ahead < slot_.size() && slot_[ahead] < run_.size()) __builtin_prefetch(&run_[slot_[ahead]]);
      }
      if (!run_open_ && !pending_seen_) pending_seen_ = !StartRun();
      if (run_open_ && Fold(op)) return Status::Ok();
    } else {
      pending_seen_ = false;  // a barrier: the next run checks again
    }
    Flush();  // a barrier, or an event the tree may refuse: on its own
  }
  return ApplyOne(batch, i);
}

Status Replayer::ApplyOne(const EventBatch& batch, size_t i) {
  const LogOp& op = batch.ops[i];
  if (op.full != kNoFull) {
    const Event& e = batch.full[op.full];
    HDRF_RETURN_IF_ERROR(ApplyEvent(tree_, e));
    if (e.type == Event::Type::kSubmit && !by_seq_.empty()) {
      const uint64_t seq = tree_.next_seq() - 1;
      auto id = tree_.FindJobBySeq(seq);
      if (seq >= kMaxDenseSeqs) {
        by_seq_.clear();
        by_seq_.shrink_to_fit();
      } else {
        if (seq >= by_seq_.size()) by_seq_.resize(std::max<uint64_t>(seq + 1, by_seq_.size() * 2), engine::kNone);
        by_seq_[seq] = id.ok() ? *id : engine::kNone;
      }
    }
    return Status::Ok();
  }
  JobId id = Find(op.job_seq);
  if (id == engine::kNone || !tree_.job_alive(id) || tree_.job_seq(id) != op.job_seq) {
    HDRF_ASSIGN_OR_RETURN(id, tree_.FindJobBySeq(op.job_seq));
  }
  HDRF_RETURN_IF_ERROR(ApplyJobEvent(tree_, Op{op.type, JobRef{id, op.job_seq}, op.n}));
  if (op.type == Event::Type::kRemove && op.job_seq < by_seq_.size()) by_seq_[op.job_seq] = engine::kNone;
  return Status::Ok();
}

// A run may start only when no job is Pending: with the docs/spec.md §12 gate, a
// release or finish re-examines Pending jobs at that moment, which depends on
// the order of the events (Pending jobs appear only through submissions,
// which end runs, so one check at the start suffices).
bool Replayer::StartRun() {
  if (tree_.GetQueue(tree_.root()).jobs_by_state[static_cast<int>(JobState::kPending)] != 0)
    return false;
  free_ = tree_.free();
  if (slot_.size() < tree_.job_id_limit()) slot_.resize(tree_.job_id_limit(), UINT32_MAX);
  run_open_ = true;
  return true;
}

// The Tree's own rules (Tree::AllocateRule, ReleaseRule, ShortResource),
// applied to the state the run has reached. Anything they do not accept is
// applied on its own by the tree, which then gives the same answer a
// sequential replay would (the raw state is the same).
bool Replayer::Fold(const LogOp& op) {
  const JobId id = Find(op.job_seq);
  if (id == engine::kNone || id >= slot_.size()) return false;
  uint32_t& slot = slot_[id];
  Entry* e;
  if (slot != UINT32_MAX) {
    // Checked when it joined the run; jobs neither come nor go during a run.
    e = &run_[slot];
    if (e->seq != op.job_seq) return false;
  } else {
    if (!tree_.job_alive(id) || tree_.job_seq(id) != op.job_seq) return false;
    const int64_t a = tree_.job_allocated(id), t = tree_.job_tasks(id);
    slot = static_cast<uint32_t>(run_.size());
    run_.push_back(Entry{id, tree_.job_state(id), op.job_seq, a, t, a, t, tree_.job_task(id)});
    e = &run_.back();
  }
  using Tree = engine::Tree;
  const int64_t n = op.n;
  const size_t R = free_.size();
  switch (op.type) {
    case Event::Type::kAllocate: {
      // A job's state does not change during a run (a run has no Pending
      // jobs and ends at anything that could make one).
      if (Tree::AllocateRule(n, e->alloc, e->tasks, e->state) != Tree::TaskRule::kOk ||
          Tree::ShortResource(n, e->task, free_.data(), static_cast<int>(R)) >= 0)
        return false;
      for (size_t r = 0; r < R; ++r) free_[r] -= n * e->task[r];
      e->alloc += n;
      break;
    }
    case Event::Type::kRelease:
    case Event::Type::kFinish: {
      if (Tree::ReleaseRule(n, e->alloc) != Tree::TaskRule::kOk) return false;
      for (size_t r = 0; r < R; ++r) free_[r] += n * e->task[r];
      e->alloc -= n;
      if (op.type == Event::Type::kFinish) e->tasks -= n;
      break;
    }
    default: return false;
  }
  ++stats_.folded_events;
  return true;
}

void Replayer::Flush() {
  if (!run_open_) return;
  run_open_ = false;
  if (run_.empty()) return;
  ++stats_.runs;
  stats_.jobs_applied += run_.size();
  // Many jobs: set raw state and re-derive everything once (O(jobs));
  // few: update each job incrementally (O(depth) each).
  const bool bulk = run_.size() >= 1024 && run_.size() * 4 >= tree_.job_count();
  if (bulk) {
    ++stats_.bulk_runs;
    for (const Entry& e : run_) tree_.RestoreTasks(e.id, e.alloc, e.tasks);
    tree_.RebuildAll();
  } else {
    // Net zero changes still settle the job's state, as the events did.
    for (const Entry& e : run_) tree_.ApplyTaskDelta(e.id, e.alloc - e.alloc0, e.tasks - e.tasks0);
  }
  for (const Entry& e : run_) slot_[e.id] = UINT32_MAX;
  run_.clear();
}

namespace {
// " (note: N table file(s) are not referenced by the MANIFEST: ...)", or
// "" when every table file is referenced.
std::string OrphanNote(const Store& store) {
  std::vector<std::string> orphans = store.UnreferencedTables();
  if (orphans.empty()) return "";
  std::string list;
  for (size_t i = 0; i < orphans.size() && i < 5; ++i) list += (i ? ", " : "") + orphans[i];
  if (orphans.size() > 5) list += ", ...";
  return " (note: " + std::to_string(orphans.size()) + " table file(s) are not referenced by the MANIFEST: " +
         list + "; the MANIFEST may be truncated or damaged)";
}

// A load that reaches less than the store's close mark (store.h) lost
// events that were durable at that close. Not for a secondary (a follower
// reads the writer's files as they grow) or a load told where to stop.
Status CheckCloseMark(const Store& store, const LoadOptions& options, uint64_t last_seq) {
  if (store.mode() == Store::Mode::kSecondary || options.stop_at) return Status::Ok();
  HDRF_ASSIGN_OR_RETURN(std::optional<uint64_t> mark, Store::ReadCloseMark(store.path()));
  if (!mark || last_seq >= *mark) return Status::Ok();
  std::string note = OrphanNote(store);
  if (note.empty()) note = " (the MANIFEST may be truncated or damaged: RocksDB read an older version of the store)";
  return Status::Corruption("store " + store.path() + ": it was closed after event " + std::to_string(*mark) +
                            " (" + Store::kCloseMarkFile + ") but its files hold the state after event " +
                            std::to_string(last_seq) + note);
}

struct Checkpoint {
  std::unique_ptr<engine::Tree> tree;
  uint64_t seq = 0;
};

// The newest checkpoint of `store` as a tree.
StatusOr<Checkpoint> LoadCheckpoint(const Store& store, const MetaRecord& meta) {
  const std::string& dir = store.path();
  const std::vector<std::string>& names = meta.resource_names;
  HDRF_ASSIGN_OR_RETURN(std::vector<uint64_t> ckpts, store.CheckpointSeqs());
  if (ckpts.empty())
    return Status::Corruption("store " + dir + ": no checkpoint (no h/ key); the store is incomplete");
  const uint64_t S = ckpts.back();
  const std::string hkey = "store " + dir + ": key " + KeyToString(HeaderKey(S));
  HDRF_ASSIGN_OR_RETURN(std::string hv, store.Get(HeaderKey(S)));
  auto header = DecodeCheckpointHeader(hv, names);
  if (!header.ok()) return header.status().WithContext(hkey);
  if (header->seq != S)
    return Status::Corruption(hkey + ": header says it is the checkpoint at event " +
                              std::to_string(header->seq));
  ResourceAmounts cluster;
  for (size_t r = 0; r < names.size(); ++r) cluster[names[r]] = header->capacity[r];
  auto tree = BuildQueueTree(cluster, header->queues, meta.overcommit_factor);
  if (!tree.ok()) return AsCorruption(tree.status(), hkey + ": queues cannot be rebuilt");
  engine::Tree& t = **tree;
  // The leaf of each header queue, resolved once (jobs name queues by index).
  std::vector<QueueId> leaf_of(header->queues.size(), engine::kNone);
  for (size_t q = 0; q < header->queues.size(); ++q) {
    auto id = t.FindQueue(header->queues[q].path);
    if (id.ok() && t.GetQueue(*id).is_leaf) leaf_of[q] = *id;
  }
  // Room for the jobs up front (bounded: the header may be damaged).
  t.ReserveJobs(std::min<uint64_t>({header->job_count, uint64_t{header->chunk_count} * 65536,
                                    uint64_t{1} << 26}));
  const size_t R = names.size();
  uint64_t jobs = 0;
  for (uint32_t i = 0; i < header->chunk_count; ++i) {
    const std::string key = ChunkKey(S, i);
    const std::string ckey = "store " + dir + ": key " + KeyToString(key);
    auto v = store.Get(key);
    if (!v.ok()) {
      if (v.status().code() == StatusCode::kNotFound)
        return Status::Corruption(ckey + " is missing (checkpoint at event " + std::to_string(S) +
                                  " has " + std::to_string(header->chunk_count) + " chunks)");
      return v.status();
    }
    Status s = DecodeJobChunkFields(
        *v, R, header->queues.size(), S, i, [&](const JobFields& j) -> Status {
          ++jobs;
          const QueueId leaf = leaf_of[j.queue];
          if (leaf == engine::kNone) {
            const std::string& path = header->queues[j.queue].path;
            return Status::Corruption("job " + std::string(j.name) + ": queue " + path +
                                      (t.FindQueue(path).ok() ? " is not a leaf" : " does not exist"));
          }
          return t.RestoreJob(j.name, leaf, j.user, j.task, j.tasks, j.weight, j.min_available,
                              j.seq, j.allocated, j.state);
        });
    if (!s.ok()) return AsCorruption(s, ckey);
  }
  if (jobs != header->job_count)
    return Status::Corruption(hkey + ": checkpoint lists " + std::to_string(header->job_count) +
                              " jobs, its chunks hold " + std::to_string(jobs));
  t.set_next_seq(header->next_seq);
  t.RebuildAll();
  return Checkpoint{std::move(tree).value(), S};
}

}  // namespace

Replica::Replica(MetaRecord meta, std::string dir, std::unique_ptr<engine::Tree> tree,
                 uint64_t checkpoint_seq, bool fold)
    : meta_(std::move(meta)),
      dir_(std::move(dir)),
      owned_(std::move(tree)),
      tree_(owned_.get()),
      replayer_(std::make_unique<Replayer>(*tree_, fold)),
      checkpoint_seq_(checkpoint_seq),
      last_seq_(checkpoint_seq) {}

StatusOr<Replica> Replica::Load(const Store& store, const LoadOptions& options) {
  auto r = LoadImpl(store, options);
  if (r.ok()) {
    HDRF_RETURN_IF_ERROR(CheckCloseMark(store, options, r->last_seq()));
    return r;
  }
  if (r.status().code() != StatusCode::kCorruption) return r;
  // Missing records next to table files nobody references: say so.
  const std::string note = OrphanNote(store);
  if (note.empty()) return r;
  return Status::Corruption(r.status().message() + note);
}

StatusOr<Replica> Replica::LoadImpl(const Store& store, const LoadOptions& options) {
  const std::string& dir = store.path();
  HDRF_ASSIGN_OR_RETURN(MetaRecord meta, store.ReadMeta());
  HDRF_RETURN_IF_ERROR(CheckMeta(meta, dir));
  if (!options.expected_resources.empty())
    HDRF_RETURN_IF_ERROR(CheckResourceNames(meta, dir, options.expected_resources));
  if (options.overcommit_factor && options.overcommit_factor != meta.overcommit_factor)
    return Status::InvalidArgument(
        "store " + dir + ": written with overcommitFactor " +
        (meta.overcommit_factor ? std::to_string(*meta.overcommit_factor) : "unset") +
        ", opened with " + std::to_string(*options.overcommit_factor));
  if (options.verify_files) HDRF_RETURN_IF_ERROR(store.VerifyChecksums());
  HDRF_ASSIGN_OR_RETURN(Checkpoint ck, LoadCheckpoint(store, meta));
  Replica r(std::move(meta), dir, std::move(ck.tree), ck.seq, options.fold_task_events);
  const uint64_t stop_at = options.stop_at.value_or(UINT64_MAX);
  HDRF_RETURN_IF_ERROR(r.CatchUp(store, stop_at));
  if (options.stop_at && r.last_seq_ < stop_at)
    return Status::Corruption("store " + dir + ": the log ends at event " + std::to_string(r.last_seq_) +
                              ", expected it to reach event " + std::to_string(stop_at));
  return r;
}

Status Replica::Usable() const {
  if (!broken_) return Status::Ok();
  return Status::FailedPrecondition("store " + dir_ + ": the replica's state holds part of a failed apply after event " +
                                    std::to_string(last_seq_) + "; load it again");
}

Status Replica::ApplyRange(const EventBatch& batch, size_t begin, size_t end, size_t* failed) {
  if (begin >= end) return Status::Ok();
  if (batch.first_seq + begin != last_seq_ + 1)
    return Status::Internal("store " + dir_ + ": event " + std::to_string(batch.first_seq + begin) +
                            " given to a replica at event " + std::to_string(last_seq_) + " (expected event " +
                            std::to_string(last_seq_ + 1) + ")");
  for (size_t i = begin; i < end; ++i) {
    Status a = replayer_->Apply(batch, i);
    if (!a.ok()) {
      broken_ = true;
      if (failed) *failed = i;
      return Status::Corruption("store " + dir_ + ": key " + KeyToString(LogKey(batch.first_seq)) + ": event " +
                                std::to_string(batch.first_seq + i) + " (" + DescribeOp(batch, i) +
                                ") cannot be replayed: " + a.message());
    }
  }
  events_replayed_ += end - begin;
  last_seq_ = batch.first_seq + end - 1;
  return Status::Ok();
}

Status Replica::CatchUp(const Store& store, uint64_t stop_at) {
  HDRF_RETURN_IF_ERROR(Usable());
  uint64_t last = last_seq_;
  Status s = ReadLogAfter(
      store, meta_.resource_names, last_seq_, stop_at,
      [&](EventBatch& batch, size_t begin, size_t end) { return ApplyRange(batch, begin, end, nullptr); },
      &last, &log_records_);
  replayer_->Flush();
  return s;
}

Status Replica::Apply(const EventBatch& batch, size_t begin, size_t end, size_t* failed) {
  HDRF_RETURN_IF_ERROR(Usable());
  Status s = ApplyRange(batch, begin, end, failed);
  replayer_->Flush();
  return s;
}

Status Replica::Apply(const std::vector<LogPart>& parts) {
  HDRF_RETURN_IF_ERROR(Usable());
  Status s;
  for (const LogPart& p : parts) {
    s = ApplyRange(p.batch, p.begin, p.end, nullptr);
    if (!s.ok()) break;
  }
  replayer_->Flush();
  return s;
}

}  // namespace hdrf::storage
