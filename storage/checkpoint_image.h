// CheckpointImage: what a checkpoint holds of a state, kept up to date
// from the written log without a second engine::Tree (docs/storage.md
// "Checkpoints").
//
//   auto image = CheckpointImage::Load(store, last_seq);  // checkpoint + log
//   image->Apply(batch, i);                            // each written event
//   image->Write(store, seq, retention, between);      // a checkpoint
//
// Per job it keeps only the fields of a checkpoint record (name, user,
// leaf, task shape, counts, weight, submission number, state; users, leaves
// and task shapes shared), 64 bytes a job (one cache line: the records are
// 64-byte aligned, in huge-page chunks that never move) and its name
// instead of a tree's indexes, heaps and views. Queue events and capacity
// changes go to a tree without jobs (their rules and the checkpoint's queue
// list). Per queue it keeps the usage (task events add to their own queue's
// pending part, carried up to the ancestors when needed), for the leaf a
// Submit to an inner queue is placed in (engine/admission.h, the rule
// Tree::Admit uses).
//
// Only for a store without the enqueue gate (Supports): the gate admits
// Pending jobs by cluster-wide sums that only a tree keeps. Without it a
// job's state follows from its own allocation, as the tree sets it.
//
// Thread safety: none (the journal's checkpoint thread owns it).
#ifndef HDRF_STORAGE_CHECKPOINT_IMAGE_H_
#define HDRF_STORAGE_CHECKPOINT_IMAGE_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string_view>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "engine/huge_alloc.h"
#include "engine/job_index.h"
#include "engine/tree.h"
#include "hdrf/status.h"
#include "storage/codec.h"
#include "storage/state_io.h"
#include "storage/store.h"

namespace hdrf::storage {

class CheckpointImage {
 public:
  // Whether a store of `meta` can be kept as an image (no enqueue gate).
  static bool Supports(const MetaRecord& meta) { return !meta.overcommit_factor.has_value(); }
  // The newest checkpoint of `store` and its log up to event `stop_at`,
  // which the log must reach.
  static StatusOr<std::unique_ptr<CheckpointImage>> Load(const Store& store, uint64_t stop_at);

  // Applies event i of `batch`, an event the engine accepted. Internal
  // when the image cannot (a bug: the image and the engine disagree).
  Status Apply(const EventBatch& batch, size_t i);
  // Apply of events [begin, end) of `batch` in order, with the job records
  // of task events a few positions ahead prefetched (each event's record is
  // a cache miss otherwise, about half of the image's time: bench/README.md).
  // On failure, *failed is the position of the event that failed.
  Status ApplyRange(const EventBatch& batch, size_t begin, size_t end, size_t* failed);
  // Writes the image as the checkpoint at event `seq` (WriteCheckpointOf).
  // With `between`, calls it before every `every_jobs` jobs written; it may
  // Apply task events (AppliesWhileWriting) after `seq`, and the checkpoint
  // still holds the state at `seq`: a job record about to change that is
  // not written yet is copied first (copy on write, into saved_), so the
  // journal's events need not wait for a whole checkpoint (docs/storage.md
  // "Checkpoints"). Other events must wait for the write (Internal).
  Status Write(Store& store, uint64_t seq, const LogRetention& retention,
               const std::function<void()>& between = {}, size_t every_jobs = kJobsBetween);
  // The events Apply takes while a Write runs: allocations, releases,
  // finishes and removals (a job record each, nothing else changes).
  static bool AppliesWhileWriting(const LogOp& op) { return op.full == kNoFull; }
  static constexpr size_t kJobsBetween = 8192;

  size_t job_count() const { return jobs_.size() - dead_; }

 private:
  // 64 bytes, one cache line: the name lives in job_names_ (a std::string
  // member took 32 bytes of each job, the flags padded it to 96:
  // bench/README.md).
  struct alignas(64) Job {
    uint64_t name_at = 0;  // job_names_ offset
    uint32_t name_len = 0;
    uint32_t user = 0;  // users_
    uint32_t leaf = 0;  // paths_
    uint32_t task = 0;  // shapes_
    int64_t tasks = 0, allocated = 0, min_available = 0;
    double weight = 1;
    uint64_t seq : 40 = 0;  // < 2^40 (AddJob checks)
    JobState state : 8 = JobState::kInqueue;
    bool alive : 1 = true;
    bool saved : 1 = false;  // while Write runs: copied into saved_ (SaveBeforeChange)
  };
  static_assert(sizeof(Job) == 64);
  struct Queue {
    int parent = -1;
    std::vector<int> children;  // in path order (the tree's name order)
    double weight = 1;
    QueueState state = QueueState::kOpen;
  };
  // The job records, in chunks of 4 MiB (kChunkJobs records, in huge
  // pages where the kernel allows: engine::HugeAlloc, as an event's record
  // is a random access): past the first chunk, growing adds a chunk and
  // never moves a record (a vector doubled, copied them and held both
  // copies while it grew), and record k is a shift and a mask away. The
  // first chunk starts at 64 records and doubles up to a whole one, so a
  // small image stays small.
  class JobTable {
   public:
    static constexpr size_t kShift = 16, kChunkJobs = size_t{1} << kShift;
    JobTable() = default;
    JobTable(const JobTable&) = delete;
    JobTable& operator=(const JobTable&) = delete;
    ~JobTable() {
      for (size_t c = 0; c < chunks_.size(); ++c) Alloc().deallocate(chunks_[c], c == 0 ? first_cap_ : kChunkJobs);
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    Job& operator[](size_t k) { return chunks_[k >> kShift][k & (kChunkJobs - 1)]; }
    const Job& operator[](size_t k) const { return chunks_[k >> kShift][k & (kChunkJobs - 1)]; }
    Job& back() { return (*this)[size_ - 1]; }
    const Job& back() const { return (*this)[size_ - 1]; }
    void push_back(const Job& j) {
      if (chunks_.empty() || (chunks_.size() == 1 && size_ == first_cap_ && first_cap_ < kChunkJobs)) {
        const size_t cap = chunks_.empty() ? 64 : first_cap_ * 2;
        Job* first = Alloc().allocate(cap);
        if (!chunks_.empty()) {
          std::uninitialized_copy_n(chunks_[0], size_, first);
          Alloc().deallocate(chunks_[0], first_cap_);
          chunks_[0] = first;
        } else {
          chunks_.push_back(first);
        }
        first_cap_ = cap;
      } else if (size_ == chunks_.size() * kChunkJobs) {
        chunks_.push_back(Alloc().allocate(kChunkJobs));
      }
      ::new (&(*this)[size_]) Job(j);
      ++size_;
    }
    void swap(JobTable& o) noexcept {
      chunks_.swap(o.chunks_);
      std::swap(size_, o.size_);
      std::swap(first_cap_, o.first_cap_);
    }

   private:
    using Alloc = engine::HugeAlloc<Job>;
    std::vector<Job*> chunks_;
    size_t size_ = 0;
    size_t first_cap_ = 0;  // records chunks_[0] holds: 64, 128, ... kChunkJobs
  };

  CheckpointImage(std::vector<std::string> names, std::unique_ptr<engine::Tree> queues)
      : names_(std::move(names)), R_(names_.size()), qtree_(std::move(queues)) {}

  // The id of `v` in `values` (indexed by `index`), added when new.
  static uint32_t Intern(engine::JobIndex& index, std::vector<std::string>& values, std::string_view v);
  static uint32_t Lookup(const engine::JobIndex& index, const std::vector<std::string>& values,
                         std::string_view v) {
    return index.Find(engine::JobIndex::HashName(v), [&](uint32_t id) { return values[id] == v; });
  }
  // The id of task shape `task` (R_ amounts), added when new: an
  // open-addressing table over shape_data_ (no allocation for a known one).
  uint32_t InternShape(const int64_t* task);
  uint64_t HashShape(const int64_t* task) const;
  const int64_t* ShapeOf(uint32_t id) const { return shape_data_.data() + size_t{id} * R_; }
  int64_t* UsageOf(int q) { return usage_.data() + static_cast<size_t>(q) * R_; }
  // Adds the pending usage of every queue in dirty_ to it and its
  // ancestors (Admit reads usage_ only below an inner queue).
  void FlushUsage();
  // Rebuilds queues_ from the queue tree, and every queue's usage.
  void RebuildQueues();
  Status AddJob(std::string_view name, std::string_view user, uint32_t leaf, const int64_t* task,
                int64_t tasks, int64_t min_available, double weight, uint64_t seq, int64_t allocated,
                JobState state);
  // Applies task event `op` (allocate, release, finish, remove) to its
  // live job jobs_[k]; false (nothing done) for another type.
  bool ApplyTask(size_t k, const LogOp& op);
  // Tree::ChangeAllocation's effect on the fields a checkpoint holds.
  void Change(Job& j, int64_t d_alloc, int64_t d_tasks);
  StatusOr<uint32_t> Admit(const std::string& path);
  Status Submit(const JobSpec& spec);
  void Compact();
  // Whether removed jobs are many enough to compact: more than 1,024 and
  // more than half of jobs_.
  bool WantsCompact() const { return dead_ > 1024 && dead_ > jobs_.size() / 2; }
  std::string_view NameOf(const Job& j) const { return {job_names_.data() + j.name_at, j.name_len}; }

  const std::vector<std::string> names_;
  const size_t R_;
  std::unique_ptr<engine::Tree> qtree_;  // the queues and capacity, no jobs
  std::vector<QueueSpec> specs_;         // qtree_->QueueSpecs()
  std::vector<Queue> queues_;            // parallel to specs_
  // Queue q's Σ allocated · task over the jobs in its subtree is
  // usage_[q·R_, q·R_ + R_) plus the pending_ of every queue at or below it:
  // a task event adds to its queue's pending_ alone (one level, not the
  // whole path), FlushUsage carries them up before Admit reads usage_.
  std::vector<int64_t> usage_, pending_;
  std::vector<uint8_t> is_dirty_;        // queues_ -> whether in dirty_
  std::vector<int> dirty_;               // queues whose pending_ may be nonzero
  std::vector<uint32_t> queue_path_;     // queues_ -> paths_ id
  std::vector<uint8_t> queue_leaf_;      // queues_ -> whether it has no children (Admit's case, compact)
  std::vector<int64_t> total_;
  uint64_t next_seq_ = 1;

  JobTable jobs_;                // in submission order; removed ones until Compact
  std::string job_names_;        // the jobs' names, back to back (removed ones until Compact)
  size_t dead_ = 0;              // removed jobs still in jobs_
  // Submission number -> record: block seq / 64 holds the index in jobs_
  // of its first record and a bit for each of its 64 numbers that has a
  // record (live, or removed until Compact); the records of a block are
  // consecutive in jobs_ (submission order). 16 bytes per 64 numbers, so
  // the table stays in cache where a 4-byte entry a number did not.
  struct SeqBlock {
    uint64_t first = 0;  // index in jobs_ of the block's first record
    uint64_t has = 0;    // bit s % 64: number s has a record
  };
  std::vector<SeqBlock> by_seq_;
  // The index in jobs_ of number `seq`'s record, if it has one.
  bool IndexOf(uint64_t seq, size_t* k) const {
    const uint64_t b = seq >> 6, bit = uint64_t{1} << (seq & 63);
    if (b >= by_seq_.size() || (by_seq_[b].has & bit) == 0) return false;
    *k = by_seq_[b].first + Popcount(by_seq_[b].has & (bit - 1));
    return true;
  }
  // Set bits of x, inline (without -mpopcnt the builtin is a libgcc call).
  static size_t Popcount(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<size_t>((x * 0x0101010101010101ull) >> 56);
  }
  std::vector<std::string> users_, paths_;
  engine::JobIndex user_index_, path_index_;  // users_, paths_ by name (no copy of the key)
  std::vector<int> path_queue_;  // paths_ -> queues_ index (-1: gone)
  std::vector<int64_t> shape_data_;   // shape id s: [s·R_, s·R_ + R_)
  uint32_t shape_count_ = 0;
  std::vector<uint32_t> shape_slots_;  // open addressing: 1 + shape id, 0 = empty; at most half full
  std::vector<int64_t> task_;          // Submit's scratch shape (R_)

  // While Write runs: jobs_[write_at_, write_end_) are not written yet; the
  // fields a task event changes of a record among them are copied before
  // its first change, and the record marked (Job::saved, so an event reads
  // nothing but its record). Write calls `between` (which applies events)
  // only as it starts a window of every_ records, so a window's copies are
  // all made before Write reaches it: they go to saved_[k / every_], and
  // Write indexes a window's copies (window_at_) as it starts it, frees them
  // as it leaves it, and clears the marks as it passes the records. 24
  // bytes a copy, at most one a job, in blocks (deques: no doubling).
  struct Saved {
    int64_t tasks, allocated;
    uint32_t k;  // index in jobs_
    JobState state;
    bool alive;
  };
  static_assert(sizeof(Saved) == 24);
  bool writing_ = false;
  size_t write_at_ = 0, write_end_ = 0, every_ = 1;
  std::vector<std::unique_ptr<std::deque<Saved>>> saved_;  // by window, made on its first copy
  std::vector<uint32_t> window_at_;  // Write: record k - window start -> its copy in the window's deque
  void SaveBeforeChange(size_t k);
};

}  // namespace hdrf::storage

#endif  // HDRF_STORAGE_CHECKPOINT_IMAGE_H_
