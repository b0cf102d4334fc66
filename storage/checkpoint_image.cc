// CheckpointImage (storage/checkpoint_image.h).
#include "storage/checkpoint_image.h"

#include <algorithm>

#include "engine/admission.h"
#include "engine/event.h"

namespace hdrf::storage {

uint32_t CheckpointImage::Intern(engine::JobIndex& index, std::vector<std::string>& values, std::string_view v) {
  if (const uint32_t id = Lookup(index, values, v); id != engine::JobIndex::kEmpty) return id;
  const auto id = static_cast<uint32_t>(values.size());
  values.emplace_back(v);
  index.Insert(engine::JobIndex::HashName(v), id);
  return id;
}

uint64_t CheckpointImage::HashShape(const int64_t* task) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t r = 0; r < R_; ++r) {
    h ^= static_cast<uint64_t>(task[r]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h ^ (h >> 29);
}

uint32_t CheckpointImage::InternShape(const int64_t* task) {
  if ((size_t{shape_count_} + 1) * 2 > shape_slots_.size()) {  // grow ×2, re-place every shape
    std::vector<uint32_t> slots(std::max<size_t>(64, shape_slots_.size() * 2), 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t s = 0; s < shape_count_; ++s) {
      size_t i = HashShape(ShapeOf(s)) & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = s + 1;
    }
    shape_slots_.swap(slots);
  }
  const size_t mask = shape_slots_.size() - 1;
  for (size_t i = HashShape(task) & mask;; i = (i + 1) & mask) {
    const uint32_t s = shape_slots_[i];
    if (s == 0) {
      shape_data_.insert(shape_data_.end(), task, task + R_);
      shape_slots_[i] = ++shape_count_;
      return shape_count_ - 1;
    }
    if (std::equal(task, task + R_, ShapeOf(s - 1))) return s - 1;
  }
}

void CheckpointImage::RebuildQueues() {
  specs_ = qtree_->QueueSpecs();
  total_ = qtree_->total();
  queues_.assign(specs_.size(), Queue());
  usage_.assign(specs_.size() * R_, 0);
  pending_.assign(specs_.size() * R_, 0);
  is_dirty_.assign(specs_.size(), 0);
  dirty_.clear();
  // Every queue's path has an id (Admit answers with the leaf's).
  queue_path_.assign(specs_.size(), 0);
  for (size_t i = 0; i < specs_.size(); ++i) queue_path_[i] = Intern(path_index_, paths_, specs_[i].path);
  path_queue_.assign(paths_.size(), -1);
  for (size_t i = 0; i < specs_.size(); ++i) path_queue_[queue_path_[i]] = static_cast<int>(i);
  for (size_t i = 0; i < specs_.size(); ++i) {
    const QueueSpec& s = specs_[i];
    Queue& q = queues_[i];
    q.weight = s.weight;
    q.state = s.state;
    const size_t slash = s.path.rfind('/');
    if (slash != std::string::npos) {  // the tree has every queue's parent
      q.parent = path_queue_.at(Lookup(path_index_, paths_, std::string_view(s.path).substr(0, slash)));
      queues_[static_cast<size_t>(q.parent)].children.push_back(static_cast<int>(i));
    }
  }
  queue_leaf_.assign(specs_.size(), 0);
  for (size_t i = 0; i < specs_.size(); ++i) queue_leaf_[i] = queues_[i].children.empty();
  for (size_t k = 0; k < jobs_.size(); ++k) {
    const Job& j = jobs_[k];
    if (!j.alive || j.allocated == 0) continue;
    const int64_t* t = ShapeOf(j.task);
    for (int q = path_queue_[j.leaf]; q >= 0; q = queues_[q].parent) {
      int64_t* u = UsageOf(q);
      for (size_t r = 0; r < R_; ++r) u[r] += j.allocated * t[r];
    }
  }
}

Status CheckpointImage::AddJob(std::string_view name, std::string_view user, uint32_t leaf,
                               const int64_t* task, int64_t tasks, int64_t min_available, double weight,
                               uint64_t seq, int64_t allocated, JobState state) {
  size_t taken = 0;
  if (seq >= (uint64_t{1} << 40) || IndexOf(seq, &taken))
    return Status::Internal("checkpoint image: job " + std::string(name) + ": submission number " +
                            std::to_string(seq) + " is taken or out of range");
  if (!jobs_.empty() && seq <= jobs_.back().seq)
    return Status::Internal("checkpoint image: job " + std::string(name) + " out of submission order");
  const size_t b = seq >> 6;
  if (by_seq_.size() <= b) by_seq_.resize(std::max<size_t>(b + 1, by_seq_.size() * 3 / 2));
  if (by_seq_[b].has == 0) by_seq_[b].first = jobs_.size();  // its records follow (submission order)
  by_seq_[b].has |= uint64_t{1} << (seq & 63);
  if (name.size() > UINT32_MAX)
    return Status::Internal("checkpoint image: a job name of " + std::to_string(name.size()) + " bytes");
  Job j;
  j.name_at = job_names_.size();
  j.name_len = static_cast<uint32_t>(name.size());
  job_names_.append(name);
  j.user = Intern(user_index_, users_, user);
  j.leaf = leaf;
  j.task = InternShape(task);
  j.tasks = tasks;
  j.min_available = min_available;
  j.weight = std::max(1.0, weight);  // as the tree stores it
  j.seq = seq;
  j.state = state;
  jobs_.push_back(j);
  if (allocated != 0) Change(jobs_.back(), allocated, 0);
  jobs_.back().state = state;  // as recorded
  return Status::Ok();
}

void CheckpointImage::Change(Job& j, int64_t d_alloc, int64_t d_tasks) {
  j.allocated += d_alloc;
  j.tasks += d_tasks;
  if (const int q = path_queue_[j.leaf]; d_alloc != 0 && q >= 0) {
    const int64_t* t = ShapeOf(j.task);
    int64_t* p = pending_.data() + static_cast<size_t>(q) * R_;
    for (size_t r = 0; r < R_; ++r) p[r] += d_alloc * t[r];
    if (!is_dirty_[static_cast<size_t>(q)]) {
      is_dirty_[static_cast<size_t>(q)] = 1;
      dirty_.push_back(q);
    }
  }
  if (j.state != JobState::kPending) j.state = j.allocated > 0 ? JobState::kRunning : JobState::kInqueue;
}

// Placement of a submission as Tree::Admit does it: engine::AdmitChild
// (engine/admission.h) level by level from the named queue.
void CheckpointImage::FlushUsage() {
  for (const int d : dirty_) {
    int64_t* p = pending_.data() + static_cast<size_t>(d) * R_;
    for (int q = d; q >= 0; q = queues_[q].parent) {
      int64_t* u = UsageOf(q);
      for (size_t r = 0; r < R_; ++r) u[r] += p[r];
    }
    std::fill(p, p + R_, 0);
    is_dirty_[static_cast<size_t>(d)] = 0;
  }
  dirty_.clear();
}

StatusOr<uint32_t> CheckpointImage::Admit(const std::string& path) {
  int q = 0;
  if (!path.empty()) {
    const uint32_t id = Lookup(path_index_, paths_, path);
    if (id == engine::JobIndex::kEmpty || path_queue_[id] < 0)
      return Status::Internal("checkpoint image: no queue " + path);
    q = path_queue_[id];
    if (queue_leaf_[static_cast<size_t>(q)]) return id;  // its own path (queue_path_[q])
  }
  if (!queues_[q].children.empty()) FlushUsage();
  while (!queues_[q].children.empty()) {
    const std::vector<int>& ch = queues_[q].children;  // in name order
    const int pick = engine::AdmitChild(
        ch.size(), total_, [&](size_t i) { return queues_[ch[i]].state == QueueState::kOpen; },
        [&](size_t i) { return usage_.data() + static_cast<size_t>(ch[i]) * R_; },
        [&](size_t i) { return queues_[ch[i]].weight; });
    if (pick < 0) return Status::Internal("checkpoint image: no open queue under " + specs_[q].path);
    q = ch[static_cast<size_t>(pick)];
  }
  return queue_path_[static_cast<size_t>(q)];
}

Status CheckpointImage::Submit(const JobSpec& spec) {
  task_.assign(R_, 0);
  for (const auto& [name, amount] : spec.task) {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) return Status::Internal("checkpoint image: job " + spec.name + ": resource " + name);
    task_[static_cast<size_t>(it - names_.begin())] = amount;
  }
  HDRF_ASSIGN_OR_RETURN(uint32_t leaf, Admit(spec.queue));
  return AddJob(spec.name, spec.user, leaf, task_.data(), spec.tasks, spec.min_available, spec.weight,
                next_seq_++, 0, JobState::kInqueue);
}

void CheckpointImage::Compact() {
  JobTable live;
  std::string names;
  std::fill(by_seq_.begin(), by_seq_.end(), SeqBlock());
  for (size_t k = 0; k < jobs_.size(); ++k) {
    Job& j = jobs_[k];
    if (!j.alive) continue;
    SeqBlock& b = by_seq_[j.seq >> 6];
    if (b.has == 0) b.first = live.size();
    b.has |= uint64_t{1} << (j.seq & 63);
    const uint64_t at = names.size();
    names.append(NameOf(j));
    j.name_at = at;
    live.push_back(j);
  }
  jobs_.swap(live);
  job_names_.swap(names);
  dead_ = 0;
}

bool CheckpointImage::ApplyTask(size_t k, const LogOp& op) {
  using T = Event::Type;
  switch (op.type) {
    case T::kAllocate:
    case T::kRelease:
    case T::kFinish:
    case T::kRemove: break;
    default: return false;
  }
  Job& j = jobs_[k];
  if (writing_) SaveBeforeChange(k);
  if (op.type == T::kAllocate) Change(j, op.n, 0);
  else if (op.type == T::kRelease) Change(j, -op.n, 0);
  else if (op.type == T::kFinish) Change(j, -op.n, -op.n);
  else {
    Change(j, -j.allocated, -j.tasks);
    j.alive = false;  // its record (by_seq_) and name (job_names_) stay until Compact
    // Not while a Write runs: Compact moves the records it reads.
    ++dead_;
    if (!writing_ && WantsCompact()) Compact();
  }
  return true;
}

Status CheckpointImage::Apply(const EventBatch& batch, size_t i) {
  using T = Event::Type;
  const LogOp& op = batch.ops[i];
  auto job = [&](uint64_t seq) -> StatusOr<size_t> {  // the live job's index in jobs_
    size_t k = 0;
    if (!IndexOf(seq, &k) || !jobs_[k].alive)
      return Status::Internal("checkpoint image: event " + std::to_string(batch.first_seq + i) +
                              ": no job #" + std::to_string(seq));
    return k;
  };
  switch (op.type) {
    case T::kAllocate:
    case T::kRelease:
    case T::kFinish:
    case T::kRemove: {
      HDRF_ASSIGN_OR_RETURN(size_t k, job(op.job_seq));
      ApplyTask(k, op);
      return Status::Ok();
    }
    default: break;
  }
  if (op.full == kNoFull || op.full >= batch.full.size())
    return Status::Internal("checkpoint image: event " + std::to_string(batch.first_seq + i) + " has no record");
  if (writing_)
    return Status::Internal("checkpoint image: event " + std::to_string(batch.first_seq + i) +
                            " is not a task event and a checkpoint is being written");
  const Event& e = batch.full[op.full];
  switch (e.type) {
    case T::kSubmit: return Submit(e.job);
    case T::kApplyPlan: {
      HDRF_ASSIGN_OR_RETURN(size_t waiting, job(e.job_seq));
      for (const Event::Victim& v : e.victims) {
        HDRF_ASSIGN_OR_RETURN(size_t victim, job(v.job_seq));
        Change(jobs_[victim], -v.tasks, 0);
      }
      Change(jobs_[waiting], e.n, 0);
      return Status::Ok();
    }
    default: {
      // Queue events and capacity: the queue tree's own rules.
      Status s = ApplyEvent(*qtree_, e);
      if (!s.ok())
        return Status::Internal("checkpoint image: event " + std::to_string(batch.first_seq + i) + ": " +
                                s.message());
      RebuildQueues();
      return Status::Ok();
    }
  }
}

Status CheckpointImage::ApplyRange(const EventBatch& batch, size_t begin, size_t end, size_t* failed) {
  // Two stages: the by_seq_ block of the event kFar ahead, the job record
  // of the event kNear ahead (its block prefetched before).
  constexpr size_t kFar = 16, kNear = 8;
  auto task_seq = [&](size_t k) -> uint64_t {
    const LogOp& op = batch.ops[k];
    return op.full == kNoFull && (op.job_seq >> 6) < by_seq_.size() ? op.job_seq : 0;
  };
  for (size_t i = begin; i < end; ++i) {
    if (i + kFar < end) {
      if (const uint64_t seq = task_seq(i + kFar)) __builtin_prefetch(&by_seq_[seq >> 6]);
    }
    if (i + kNear < end) {
      size_t k = 0;
      if (const uint64_t seq = task_seq(i + kNear); seq && IndexOf(seq, &k)) __builtin_prefetch(&jobs_[k], 1);
    }
    // A task event on a live job without a Status; anything else (and
    // any error) through Apply.
    if (const LogOp& op = batch.ops[i]; op.full == kNoFull) {
      size_t k = 0;
      if (IndexOf(op.job_seq, &k) && jobs_[k].alive && ApplyTask(k, op)) continue;
    }
    if (Status s = Apply(batch, i); !s.ok()) {
      *failed = i;
      return s;
    }
  }
  return Status::Ok();
}

void CheckpointImage::SaveBeforeChange(size_t k) {
  Job& j = jobs_[k];
  if (j.saved) return;
  if (k < write_at_ || k >= write_end_ || saved_.empty()) return;
  std::unique_ptr<std::deque<Saved>>& window = saved_[k / every_];
  if (!window) window = std::make_unique<std::deque<Saved>>();
  window->push_back({j.tasks, j.allocated, static_cast<uint32_t>(k), j.state, j.alive});
  j.saved = true;
}

Status CheckpointImage::Write(Store& store, uint64_t seq, const LogRetention& retention,
                              const std::function<void()>& between, size_t every_jobs) {
  CheckpointHeaderRecord h;
  h.seq = seq;
  h.next_seq = next_seq_;
  h.capacity = total_;
  h.queues = specs_;
  // The jobs at `seq` are jobs_[0, write_end_) as they are now, or as
  // saved_ holds them once an event applied by `between` changed them.
  writing_ = true;
  write_at_ = 0;
  write_end_ = jobs_.size();
  every_ = std::max<size_t>(every_jobs, 1);
  saved_.clear();
  saved_.resize(between ? (write_end_ + every_ - 1) / every_ : 0);
  window_at_.assign(between ? std::min(every_, write_end_) : 0, 0);
  auto jobs = [&](const std::function<Status(const JobFields&)>& add) -> Status {
    JobFields f;
    const std::deque<Saved>* window = nullptr;  // the copies of jobs_[start, start + every_)
    for (size_t k = 0, start = 0; k < write_end_; ++k) {
      if (k == start + every_ || k == 0) {  // a window starts
        if (k > 0) start = k;
        if (between) {
          if (k > 0) {
            saved_[k / every_ - 1].reset();
            between();
          }
          window = saved_[k / every_].get();
          for (size_t i = 0; window && i < window->size(); ++i)
            window_at_[(*window)[i].k - start] = static_cast<uint32_t>(i);
        }
      }
      Job j = jobs_[k];
      if (j.saved) {
        const Saved& was = (*window)[window_at_[k - start]];
        j.tasks = was.tasks;
        j.allocated = was.allocated;
        j.state = was.state;
        j.alive = was.alive;
        jobs_[k].saved = false;
      }
      write_at_ = k + 1;
      if (!j.alive) continue;
      f.name = NameOf(j);
      f.user = users_[j.user];
      f.queue = static_cast<uint32_t>(path_queue_[j.leaf]);
      f.task = ShapeOf(j.task);
      f.tasks = j.tasks;
      f.allocated = j.allocated;
      f.min_available = j.min_available;
      f.weight = j.weight;
      f.seq = j.seq;
      f.state = j.state;
      if (path_queue_[j.leaf] < 0)
        return Status::Internal("checkpoint image: job " + std::string(NameOf(j)) + " in a deleted queue " + paths_[j.leaf]);
      HDRF_RETURN_IF_ERROR(add(f));
    }
    return Status::Ok();
  };
  Status s = WriteCheckpointOf(store, std::move(h), jobs, names_, /*stats=*/nullptr, kJobsPerChunk, retention);
  for (size_t k = write_at_; k < write_end_; ++k) jobs_[k].saved = false;  // a write that failed part way
  writing_ = false;
  std::vector<std::unique_ptr<std::deque<Saved>>>().swap(saved_);
  std::vector<uint32_t>().swap(window_at_);
  if (WantsCompact()) Compact();  // removals during the write waited
  return s;
}

StatusOr<std::unique_ptr<CheckpointImage>> CheckpointImage::Load(const Store& store, uint64_t stop_at) {
  const std::string& dir = store.path();
  HDRF_ASSIGN_OR_RETURN(MetaRecord meta, store.ReadMeta());
  HDRF_RETURN_IF_ERROR(CheckMeta(meta, dir));
  if (!Supports(meta)) return Status::InvalidArgument("store " + dir + ": the enqueue gate is on");
  const std::vector<std::string>& names = meta.resource_names;
  HDRF_ASSIGN_OR_RETURN(std::vector<uint64_t> ckpts, store.CheckpointSeqs());
  if (ckpts.empty()) return Status::Corruption("store " + dir + ": no checkpoint (no h/ key)");
  const uint64_t S = ckpts.back();
  const std::string hkey = "store " + dir + ": key " + KeyToString(HeaderKey(S));
  HDRF_ASSIGN_OR_RETURN(std::string hv, store.Get(HeaderKey(S)));
  auto header = DecodeCheckpointHeader(hv, names);
  if (!header.ok()) return header.status().WithContext(hkey);
  ResourceAmounts cluster;
  for (size_t r = 0; r < names.size(); ++r) cluster[names[r]] = header->capacity[r];
  auto qtree = BuildQueueTree(cluster, header->queues, std::nullopt);
  if (!qtree.ok()) return qtree.status().WithContext(hkey + ": queues cannot be rebuilt");
  std::unique_ptr<CheckpointImage> im(new CheckpointImage(names, std::move(qtree).value()));
  for (const QueueSpec& q : header->queues) Intern(im->path_index_, im->paths_, q.path);
  im->RebuildQueues();
  im->next_seq_ = header->next_seq;
  for (uint32_t c = 0; c < header->chunk_count; ++c) {
    const std::string ckey = "store " + dir + ": key " + KeyToString(ChunkKey(S, c));
    auto v = store.Get(ChunkKey(S, c));
    if (!v.ok()) return v.status().WithContext(ckey);
    Status s = DecodeJobChunkFields(*v, names.size(), header->queues.size(), S, c, [&](const JobFields& j) {
      return im->AddJob(j.name, j.user, j.queue, j.task, j.tasks, j.min_available, j.weight, j.seq,
                        j.allocated, j.state);
    });
    if (!s.ok()) return s.WithContext(ckey);
  }
  uint64_t last = S;
  HDRF_RETURN_IF_ERROR(ReadLogAfter(
      store, names, S, stop_at,
      [&](EventBatch& batch, size_t begin, size_t end) -> Status {
        size_t failed = 0;
        return im->ApplyRange(batch, begin, end, &failed);
      },
      &last));
  if (last != stop_at)
    return Status::Corruption("store " + dir + ": the log ends at event " + std::to_string(last) +
                              ", before event " + std::to_string(stop_at));
  return im;
}

}  // namespace hdrf::storage
