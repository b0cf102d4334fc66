#include "storage/state_io.h"

#include <algorithm>
#include <unordered_map>

#include "rocksdb/write_batch.h"

namespace hdrf::storage {
namespace {

std::string Names(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

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

MetaRecord MetaFor(const engine::Tree& tree, std::optional<double> overcommit_factor) {
  MetaRecord m;
  m.format_version = kFormatVersion;
  m.resource_names = tree.resource_names();
  m.initial_capacity = tree.total();
  m.overcommit_factor = overcommit_factor;
  m.created_by = "hdrf 0.1.0";
  return m;
}

Status CheckMeta(const MetaRecord& meta, const std::string& path) {
  if (meta.format_version != kFormatVersion)
    return Status::InvalidArgument("store " + path + ": format version " +
                                   std::to_string(meta.format_version) +
                                   " (key m); this build reads format version " +
                                   std::to_string(kFormatVersion));
  const auto& n = meta.resource_names;
  if (n.empty()) return Status::Corruption("store " + path + ": key m (meta) lists no resources");
  if (n.size() > static_cast<size_t>(engine::kMaxResources))
    return Status::Corruption("store " + path + ": key m (meta) lists " + std::to_string(n.size()) +
                              " resources, more than " + std::to_string(engine::kMaxResources));
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i].empty() || (i > 0 && n[i - 1] >= n[i]))
      return Status::Corruption("store " + path +
                                ": key m (meta): resource names are not sorted and unique (" +
                                Names(n) + ")");
  return Status::Ok();
}

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

StatusOr<std::unique_ptr<engine::Tree>> BuildQueueTree(const ResourceAmounts& cluster,
                                                       const std::vector<QueueSpec>& queues,
                                                       std::optional<double> overcommit_factor) {
  engine::TreeOptions topts;
  topts.overcommit_factor = overcommit_factor;
  auto direct = engine::Tree::Create(cluster, queues, topts);
  if (direct.ok()) return direct;
  // Events can reach states that the creation rules refuse: SetCapacity does
  // not re-check guarantees against the new total, and an UpdateQueue that
  // lowers a capability does not re-check descendants' guarantees. Build
  // such a tree in steps that each pass the rules: a total large enough for
  // the guarantees, queues without capabilities, then capabilities from the
  // leaves up, then the real total (no jobs exist yet, so nothing else moves).
  ResourceAmounts big = cluster;
  for (const QueueSpec& q : queues) {
    if (q.path == "root" || std::count(q.path.begin(), q.path.end(), '/') != 1) continue;
    for (const auto& [r, a] : q.guarantee)
      if (big.count(r)) big[r] += a;
  }
  std::vector<QueueSpec> bare = queues;
  for (QueueSpec& q : bare) q.capability.clear();
  auto t = engine::Tree::Create(big, bare, topts);
  if (!t.ok()) return direct.status();
  std::vector<const QueueSpec*> order;
  for (const QueueSpec& q : queues)
    if (!q.capability.empty()) order.push_back(&q);
  std::sort(order.begin(), order.end(),
            [](const QueueSpec* a, const QueueSpec* b) { return a->path > b->path; });
  for (const QueueSpec* q : order)
    if (!(*t)->UpdateQueue(*q).ok()) return direct.status();
  if (big != cluster && !(*t)->SetCapacity(cluster).ok()) return direct.status();
  return t;
}

StatusOr<std::unique_ptr<engine::Tree>> CopyTree(const engine::Tree& tree) {
  const std::vector<std::string>& names = tree.resource_names();
  ResourceAmounts cluster;
  for (size_t r = 0; r < names.size(); ++r) cluster[names[r]] = tree.total()[r];
  auto copy = BuildQueueTree(cluster, tree.QueueSpecs(), tree.options().overcommit_factor);
  if (!copy.ok()) return Status::Internal("copy of the state: " + copy.status().message());
  engine::Tree& t = **copy;
  const std::vector<JobId> jobs = tree.JobsInSubmitOrder();
  t.ReserveJobs(jobs.size());
  for (JobId j : jobs) {
    const JobInfo info = tree.GetJob(j);
    auto leaf = t.FindQueue(info.queue);
    Status s = leaf.status();
    if (s.ok())
      s = t.RestoreJob(info.name, *leaf, info.user, tree.job_task(j), info.tasks, info.weight,
                       info.min_available, info.seq, info.allocated, info.state);
    if (!s.ok()) return Status::Internal("copy of the state: " + s.message());
  }
  t.set_next_seq(tree.next_seq());
  t.RebuildAll();
  if (t.Digest() != tree.Digest())
    return Status::Internal("copy of the state: its digest differs from the state's");
  return copy;
}

namespace {
void (*checkpoint_hook)(CheckpointStep, uint64_t) = nullptr;
void Step(CheckpointStep step, uint64_t seq) {
  if (checkpoint_hook) checkpoint_hook(step, seq);
}
}  // namespace

void SetCheckpointHookForTesting(void (*hook)(CheckpointStep, uint64_t)) { checkpoint_hook = hook; }

StatusOr<uint64_t> LogKeepFrom(const Store& store, const std::vector<std::string>& names, uint64_t seq,
                               uint64_t previous, const LogRetention& retention) {
  // The newest event the rules by position let go.
  uint64_t limit = previous;
  if (retention.events > 0) limit = std::min(limit, seq > retention.events ? seq - retention.events : 0);
  if (limit == 0) return 0;
  EventBatch batch;
  if (retention.seconds <= 0) {
    // Records never straddle a checkpoint, but one may straddle `limit`:
    // it stays.
    HDRF_ASSIGN_OR_RETURN(auto at, store.LogAtOrBefore(limit + 1));
    if (!at) return limit + 1;
    Status d = DecodeLogBatch(at->second, names, at->first, &batch);
    if (!d.ok()) return d.WithContext("store " + store.path() + ": key " + KeyToString(LogKey(at->first)));
    return batch.last_seq() > limit ? at->first : limit + 1;
  }
  // By event time: the time of event `seq`, then the records from the
  // log's first on, until one that must stay. Each record is read here once
  // before it goes, and the first kept one once per checkpoint.
  HDRF_ASSIGN_OR_RETURN(auto at, store.LogAtOrBefore(seq));
  if (!at) return limit + 1;  // no log: nothing to keep
  Status d = DecodeLogBatch(at->second, names, at->first, &batch);
  if (!d.ok()) return d.WithContext("store " + store.path() + ": key " + KeyToString(LogKey(at->first)));
  if (batch.times.empty() || seq > batch.last_seq()) return 0;  // no time to measure by: keep the log
  const int64_t now = batch.TimeAt(static_cast<size_t>(seq - at->first));
  const int64_t oldest = now - std::min<int64_t>(retention.seconds, INT64_MAX / 2000000) * 1000000;
  uint64_t keep = 0;
  HDRF_RETURN_IF_ERROR(store.ScanLog(0, [&](uint64_t first, std::string_view value) -> StatusOr<bool> {
    Status s = DecodeLogBatch(value, names, first, &batch);
    if (!s.ok()) return s.WithContext("store " + store.path() + ": key " + KeyToString(LogKey(first)));
    // A record without times was written before events had one: older
    // than any timed event, it goes.
    const bool old = batch.times.empty() || batch.times.back() < oldest;
    if (batch.empty() || batch.last_seq() > limit || !old) {
      keep = first;
      return false;
    }
    keep = batch.last_seq() + 1;
    return true;
  }));
  return keep;
}

Status WriteCheckpoint(Store& store, const engine::Tree& tree, uint64_t seq,
                       const std::vector<std::string>& names, CheckpointStats* stats,
                       uint32_t jobs_per_chunk, const LogRetention& retention) {
  CheckpointHeaderRecord h;
  h.seq = seq;
  h.next_seq = tree.next_seq();
  h.capacity = tree.total();
  h.queues = tree.QueueSpecs();
  std::unordered_map<std::string, uint32_t> qidx;
  qidx.reserve(h.queues.size() * 2);
  for (uint32_t i = 0; i < h.queues.size(); ++i) qidx.emplace(h.queues[i].path, i);
  const size_t R = names.size();
  auto jobs = [&](const std::function<Status(const JobFields&)>& add) -> Status {
    for (JobId j : tree.JobsInSubmitOrder()) {
      JobInfo info = tree.GetJob(j);
      auto it = qidx.find(info.queue);
      if (it == qidx.end())
        return Status::Internal("checkpoint at event " + std::to_string(seq) + ": job " + info.name +
                                " in unknown queue " + info.queue);
      JobFields f;
      f.name = info.name;
      f.user = info.user;
      f.queue = it->second;
      f.task = info.task.data();
      f.tasks = info.tasks;
      f.allocated = info.allocated;
      f.min_available = info.min_available;
      f.weight = info.weight;
      f.seq = info.seq;
      f.state = info.state;
      if (info.task.size() != R) return Status::Internal("checkpoint: job " + info.name + ": task size");
      HDRF_RETURN_IF_ERROR(add(f));
    }
    return Status::Ok();
  };
  return WriteCheckpointOf(store, std::move(h), jobs, names, stats, jobs_per_chunk, retention);
}

Status WriteCheckpointOf(Store& store, CheckpointHeaderRecord h, const CheckpointJobs& jobs,
                         const std::vector<std::string>& names, CheckpointStats* stats,
                         uint32_t jobs_per_chunk, const LogRetention& retention) {
  const uint64_t seq = h.seq;
  const std::string where = "checkpoint at event " + std::to_string(seq);
  uint64_t previous = 0;  // the newest committed checkpoint before this one
  {
    auto seqs = store.CheckpointSeqs();
    if (!seqs.ok()) return seqs.status().WithContext(where);
    for (uint64_t s : *seqs)
      if (s < seq) previous = std::max(previous, s);
  }

  // The chunks go to a table file that is ingested whole: not through the
  // memtable and the WAL (a follower's secondary instance would replay them
  // from the WAL, and so would the open after a crash), and not rewritten by
  // flushes and compactions (docs/storage.md "Checkpoints").
  auto table = store.NewTableFile();
  if (!table.ok()) return table.status().WithContext(where);
  uint64_t bytes = 0;
  JobChunkEncoder enc;
  uint32_t chunk = 0;
  auto flush_chunk = [&]() -> Status {
    std::string v = enc.Finish(seq, chunk);
    bytes += v.size();
    HDRF_RETURN_IF_ERROR((*table)->Put(ChunkKey(seq, chunk), v).WithContext(where));
    ++chunk;
    return Status::Ok();
  };
  uint64_t job_count = 0;
  HDRF_RETURN_IF_ERROR(jobs([&](const JobFields& f) -> Status {
    enc.Add(f, names.size());
    ++job_count;
    if (enc.size() >= jobs_per_chunk) return flush_chunk();
    return Status::Ok();
  }));
  if (enc.size() > 0) HDRF_RETURN_IF_ERROR(flush_chunk());
  HDRF_RETURN_IF_ERROR((*table)->Finish().WithContext(where));
  Step(CheckpointStep::kChunksWritten, seq);
  // Durable table files in the store, before the header refers to them.
  HDRF_RETURN_IF_ERROR((*table)->Ingest().WithContext(where));
  Step(CheckpointStep::kChunksFlushed, seq);

  rocksdb::WriteBatch wb;
  h.job_count = job_count;
  h.chunk_count = chunk;
  auto hv = EncodeCheckpointHeader(h, names);
  if (!hv.ok()) return hv.status().WithContext(where);
  bytes += hv->size();
  wb.Put(HeaderKey(seq), *hv);
  // Synced: commits the chunks ingested above.
  HDRF_RETURN_IF_ERROR(store.Write(&wb, true).WithContext(where));
  wb.Clear();
  Step(CheckpointStep::kCommitted, seq);

  // Reclaim: older checkpoints, and the log records entirely <= the
  // previous checkpoint (batches never straddle a checkpoint, see
  // docs/storage.md), or fewer under `retention`. The log since the
  // previous checkpoint stays one interval longer: a follower that far
  // behind goes on reading it instead of reloading the whole state.
  uint64_t keep = 0;
  if (previous > 0) {
    auto k = LogKeepFrom(store, names, seq, previous, retention);
    if (!k.ok()) return k.status().WithContext(where + ": the log to keep");
    keep = *k;
    if (keep > 0) wb.DeleteRange(LogKey(0), LogKey(keep));
  }
  wb.DeleteRange(ChunkPrefix(0), ChunkPrefix(seq));
  wb.DeleteRange(HeaderKey(0), HeaderKey(seq));
  HDRF_RETURN_IF_ERROR(store.Write(&wb, /*sync=*/true).WithContext(where + ": reclaiming older records"));
  // The deletions synced, the table files wholly inside them can go at
  // once, without a compaction reading them (the older checkpoints' chunks,
  // ingested files that nothing else overlaps, and the older log).
  HDRF_RETURN_IF_ERROR(store.DropFilesInRange(ChunkPrefix(0), ChunkPrefix(seq)).WithContext(where));
  if (keep > 0) HDRF_RETURN_IF_ERROR(store.DropFilesInRange(LogKey(0), LogKey(keep)).WithContext(where));
  if (stats) {
    stats->jobs = job_count;
    stats->chunks = chunk;
    stats->bytes = bytes;
  }
  return Status::Ok();
}

Status ReplayBatch(Replayer& replayer, const EventBatch& batch, size_t begin, size_t end,
                   const std::string& dir) {
  for (size_t i = begin; i < end; ++i) {
    Status a = replayer.Apply(batch, i);
    if (!a.ok())
      return Status::Corruption("store " + dir + ": key " + KeyToString(LogKey(batch.first_seq)) +
                                ": event " + std::to_string(batch.first_seq + i) + " (" +
                                DescribeOp(batch, i) + ") cannot be replayed: " + a.message());
  }
  return Status::Ok();
}

Status ReadLogAfter(const Store& store, const std::vector<std::string>& names, uint64_t after,
                    uint64_t stop_at,
                    const std::function<Status(EventBatch&, size_t, size_t)>& fn,
                    uint64_t* last, uint64_t* records) {
  const std::string& dir = store.path();
  uint64_t expected = after + 1;
  EventBatch batch;
  auto read = [&](uint64_t first, std::string_view value) -> Status {
    const std::string lkey = "store " + dir + ": key " + KeyToString(LogKey(first));
    if (first > expected)
      return Status::Corruption("store " + dir + ": log gap: event " + std::to_string(expected) +
                                " is missing (the next log record, " + KeyToString(LogKey(first)) +
                                ", starts at event " + std::to_string(first) + ")");
    Status s = DecodeLogBatch(value, names, first, &batch);
    if (!s.ok()) return AsCorruption(s, lkey);
    if (records) ++*records;
    if (batch.last_seq() < expected) return Status::Ok();  // before `after`
    const uint64_t end = std::min(batch.last_seq(), stop_at);
    HDRF_RETURN_IF_ERROR(fn(batch, expected - first, end - first + 1));
    expected = end + 1;
    return Status::Ok();
  };
  // A record that began at or before `after` and runs past it.
  HDRF_ASSIGN_OR_RETURN(auto before, store.LogAtOrBefore(after));
  if (before) HDRF_RETURN_IF_ERROR(read(before->first, before->second));
  if (expected <= stop_at) {
    HDRF_RETURN_IF_ERROR(store.ScanLog(after + 1, [&](uint64_t first, std::string_view v) -> StatusOr<bool> {
      Status s = read(first, v);
      if (!s.ok()) return s;
      return expected <= stop_at;
    }));
  }
  *last = expected - 1;
  return Status::Ok();
}

namespace {
StatusOr<LoadedState> LoadStateImpl(const Store& store, const LoadOptions& options);
}  // namespace

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
}  // namespace

StatusOr<LoadedState> LoadState(const Store& store, const LoadOptions& options) {
  auto r = LoadStateImpl(store, options);
  if (r.ok()) {
    HDRF_RETURN_IF_ERROR(CheckCloseMark(store, options, r->last_seq));
    return r;
  }
  if (r.status().code() != StatusCode::kCorruption) return r;
  // Missing records next to table files nobody references: say so.
  const std::string note = OrphanNote(store);
  if (note.empty()) return r;
  return Status::Corruption(r.status().message() + note);
}

namespace {
StatusOr<LoadedState> LoadStateImpl(const Store& store, const LoadOptions& options) {
  const std::string& dir = store.path();
  LoadedState out;
  HDRF_ASSIGN_OR_RETURN(out.meta, store.ReadMeta());
  HDRF_RETURN_IF_ERROR(CheckMeta(out.meta, dir));
  const std::vector<std::string>& names = out.meta.resource_names;
  if (!options.expected_resources.empty())
    HDRF_RETURN_IF_ERROR(CheckResourceNames(out.meta, dir, options.expected_resources));
  if (options.overcommit_factor && options.overcommit_factor != out.meta.overcommit_factor)
    return Status::InvalidArgument(
        "store " + dir + ": written with overcommitFactor " +
        (out.meta.overcommit_factor ? std::to_string(*out.meta.overcommit_factor) : "unset") +
        ", opened with " + std::to_string(*options.overcommit_factor));
  if (options.verify_files) HDRF_RETURN_IF_ERROR(store.VerifyChecksums());

  // ---- the latest checkpoint ----
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
  auto tree = BuildQueueTree(cluster, header->queues, out.meta.overcommit_factor);
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
  out.checkpoint_seq = S;

  // ---- the log after it ----
  const uint64_t stop_at = options.stop_at.value_or(UINT64_MAX);
  Replayer replayer(t, options.fold_task_events);
  uint64_t last = S;
  HDRF_RETURN_IF_ERROR(ReadLogAfter(
      store, names, S, stop_at,
      [&](EventBatch& batch, size_t begin, size_t end) -> Status {
        HDRF_RETURN_IF_ERROR(ReplayBatch(replayer, batch, begin, end, dir));
        out.events_replayed += end - begin;
        return Status::Ok();
      },
      &last, &out.log_records));
  const uint64_t expected = last + 1;
  replayer.Flush();
  if (options.stop_at && expected - 1 < stop_at)
    return Status::Corruption("store " + dir + ": the log ends at event " +
                              std::to_string(expected - 1) + ", expected it to reach event " +
                              std::to_string(stop_at));
  out.last_seq = expected - 1;
  out.tree = std::move(tree).value();
  return out;
}
}  // namespace

}  // namespace hdrf::storage
