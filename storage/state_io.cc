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

}  // namespace hdrf::storage
