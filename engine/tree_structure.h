// TreeStructure: the raw state of the HDRF tree (docs/spec.md §3, §12) —
// the cluster total and free capacity, the queues with their attributes,
// the jobs with their task shapes and counts, the users, the indexes by name
// and submission number, and the raw sums kept along every queue path —
// with the rules that validate it. The first part of engine::Tree
// (engine/tree.h); the parts above it derive the shares from this state.
//
// Job: one part, one job each. Tree is composed as a chain of parts, each
// the base of the next, so that the event path pays no indirection:
//   TreeStructure (this) → TreeShares (engine/tree_shares.h: the
//   incremental H-DRF shares, saturation and views) → TreeShards
//   (engine/tree_shards.h: lock shards, leases, local task events) →
//   TreeScheduler (engine/tree_schedule.h: the order of §5, steps, gangs,
//   the enqueue gate) → TreeDecisions (engine/tree_decisions.h: transfer
//   decisions, plans) → Tree (engine/tree.h: the events, which change the
//   raw state here and then bring every part above up to date).
// A part calls only itself and the parts below it.
//
// Invariants (kept by the events; Tree::CheckInvariants recomputes the sums):
//   * queues_[0] is the root; a live queue's path is in queue_by_path_, its
//     parent is live, it is in its parent's `children` (name order), and
//     its depth is its parent's + 1. Only leaves hold jobs.
//   * Queue::usage is the sum of the allocations (allocated × task) of the
//     jobs in the subtree; free_ = total_ − the root's usage; usage_total_
//     is the root's usage. Queue::jobs_by_state counts the subtree's jobs
//     by state; Queue::inqueue_min and inqueue_min_total_ sum GangSize × task over
//     the Inqueue jobs (the gate, §12). pending_ holds exactly the Pending
//     jobs by submission number.
//   * The root's sums, usage_total_, inqueue_min_total_ and free_ are
//     exact in an exclusive section after BeginExclusive: until then
//     shard-local events keep their share of them, and the leases of free
//     capacity, in their shard's Scratch (engine/tree_shards.h).
//   * A live job is in its leaf's `jobs` at index Job::slot, in
//     job_by_name_ and in job_by_seq_; live_jobs_ counts them. A live job
//     with allocated > 0 is in its leaf's `holders` at Job::holder_slot, and
//     no other job is in any `holders` (holder_slot kNoSlot). A removed
//     job's id is reused only when no saved view holds it (retired_jobs_).
//   * Job ids come in blocks of kJobBlock per lock shard (NewJob).
//
// Thread safety: every method is for a caller that holds the tree
// exclusively (api: `rw` exclusive), except:
//   * the lookups (FindJob, FindJobBySeq, job_alive, job_live, job_seq,
//     job_name, ShardOf's inputs) that read what only exclusive sections
//     write (names, indexes, submission numbers, Job::queue): `rw` shared
//     suffices (engine/concurrent_tree.h "Name lookups");
//   * CheckAllocate/CheckRelease and SetJobState(j, s, sc) with a shard's
//     Scratch, which a shard-local event runs under `rw` shared plus the
//     job's shard lock: they read or write only the job, its path below the
//     root, and the shard's Scratch (engine/tree_shards.h).
#ifndef HDRF_ENGINE_TREE_STRUCTURE_H_
#define HDRF_ENGINE_TREE_STRUCTURE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/huge_alloc.h"
#include "engine/job_index.h"
#include "hdrf/spec.h"
#include "hdrf/status.h"
#include "hdrf/views.h"

namespace hdrf::engine {

// The enqueue gate's running sums of min_available × task (docs/spec.md
// §12): exact for any number of jobs (2^32 terms below 2^63 each).
using GateSum = __int128;

using ResMask = uint32_t;
inline constexpr int kMaxResources = 32;
// Keys within this distance are equal (docs/spec.md §5).
inline constexpr double kKeyEpsilon = 1e-9;

struct TreeOptions {
  // docs/spec.md §12 enqueue gate; nullopt (default) = off, every job Inqueue at once.
  std::optional<double> overcommit_factor;
};

class TreeStructure {
 public:
  TreeStructure(const TreeStructure&) = delete;
  TreeStructure& operator=(const TreeStructure&) = delete;

  // The tree is cut into kShards lock shards by top-level queue
  // (engine/tree_shards.h); job ids are handed out per shard (NewJob).
  static constexpr int kShards = 64;

  // Every attribute but state; then Tree rebuilds the derived state.
  // SetQueueState changes raw state only (no derived value reads it).
  Status SetQueueState(std::string_view path, QueueState state);

  // ---- lookups ----
  StatusOr<JobId> FindJob(std::string_view name) const;
  // Jobs by submission sequence number (stable across restarts).
  StatusOr<JobId> FindJobBySeq(uint64_t seq) const;
  uint64_t job_seq(JobId j) const;
  const std::string& job_name(JobId j) const;
  uint64_t next_seq() const { return next_seq_; }
  bool job_alive(JobId j) const;
  // j is a live job with submission sequence number `seq` (a JobRef).
  bool job_live(JobId j, uint64_t seq) const;
  // A job's gang size m: minAvailable, 0 counting as 1, capped at its
  // current task count (so 0 for a job of 0 tasks) (docs/spec.md §14).
  int64_t GangSize(JobId j) const;

  // ---- recovery ----
  // Recovery of folded task events (storage::Replayer): sets a job's
  // running and total tasks, raw state only (derived state stale until
  // RebuildAll()). Does not validate: the caller has checked every event.
  void RestoreTasks(JobId j, int64_t allocated, int64_t tasks);
  // The rules Allocate, Release and Finish check, as functions of a job's
  // counts and state, its task shape and the free amounts. The Tree's own
  // checks are these, and so are the folding replay's, which checks each
  // event against the state its run has reached before the run is applied.
  enum class TaskRule { kOk, kBadCount, kTooFewTasks, kPending };
  static TaskRule AllocateRule(int64_t n, int64_t allocated, int64_t tasks, JobState state) {
    if (n < 1) return TaskRule::kBadCount;
    if (n > tasks - allocated) return TaskRule::kTooFewTasks;  // no overflow for a huge n
    if (state == JobState::kPending) return TaskRule::kPending;
    return TaskRule::kOk;
  }
  static TaskRule ReleaseRule(int64_t n, int64_t allocated) {
    if (n < 1) return TaskRule::kBadCount;
    if (n > allocated) return TaskRule::kTooFewTasks;
    return TaskRule::kOk;
  }
  // The first resource of which `n` tasks of shape `task` need more than
  // `free` holds (no overflow); -1 when they fit.
  static int ShortResource(int64_t n, const int64_t* task, const int64_t* free, int resources) {
    for (int r = 0; r < resources; ++r)
      if (task[r] != 0 && (n > free[r] / task[r] || n * task[r] > free[r])) return r;
    return -1;
  }
  // Raw job fields for the folding replay (j must be alive).
  int64_t job_tasks(JobId j) const;
  int64_t job_allocated(JobId j) const;
  JobState job_state(JobId j) const;
  const int64_t* job_task(JobId j) const;  // R amounts
  std::string_view job_queue_path(JobId j) const;  // its leaf
  // One past the largest JobId in use.
  size_t job_id_limit() const;
  // Restores the next submission sequence number.
  void set_next_seq(uint64_t seq) { next_seq_ = std::max(next_seq_, seq); }
  // The queues as specs (for checkpoints), in path order.
  std::vector<QueueSpec> QueueSpecs() const;
  StatusOr<QueueId> FindQueue(std::string_view path) const;
  const std::vector<std::string>& resource_names() const { return names_; }
  const TreeOptions& options() const { return options_; }
  const std::vector<int64_t>& total() const { return total_; }
  const std::vector<int64_t>& free() const { return free_; }
  // Every live queue in path order; every live job in submission order.
  std::vector<QueueId> QueuesInPathOrder() const;
  std::vector<JobId> JobsInSubmitOrder() const;
  size_t job_count() const { return live_jobs_; }
  // Entries of the name and submission-number indexes (job_count() each).
  size_t name_index_size() const { return job_by_name_.size(); }
  size_t seq_index_size() const { return job_by_seq_.size(); }
  size_t queue_count() const { return live_queues_; }
  QueueId root() const { return 0; }
  // docs/spec.md §9 state digest (raw state only).
  uint64_t Digest() const;

  // Counters for benchmarks and docs (kept in each Scratch; Tree::counters
  // sums them).
  struct Counters {
    uint64_t full_rebuilds = 0;   // new saturated sets, structure changes
    uint64_t node_rebuilds = 0;   // periodic exact re-sums (drift bound)
    uint64_t job_refreshes = 0;   // jobs re-evaluated for blocked-ness by
                                  // another's event (capability, user
                                  // limit, held-back guarantee), not the
                                  // event's own job (a write per event to
                                  // a line of the shard's Scratch)
    uint64_t view_switches = 0;   // saturated set changed to a cached view
    uint64_t view_catchups = 0;   // jobs replayed into a view on a switch
    uint64_t fill_skips = 0;      // subtrees a step skipped by the fill bound
  };

 protected:
  struct Queue;
  struct Job;
  struct User;
  // The accumulators of one thread of work on the tree: the exclusive
  // path's (main_) or a lock shard's (engine/tree_shards.h). Raw sums of a
  // shard-local event go to its shard's Scratch (SetJobState), and so do
  // the parts above (layout: engine/tree_internal.h).
  struct Scratch;

  TreeStructure();
  ~TreeStructure();

  // Fills an empty tree (Tree::Create): the resources, root and `queues`
  // (missing parents created open with weight 1), every rule of
  // docs/spec.md §3 checked. Derived state is left for RebuildAll.
  Status Build(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
               const TreeOptions& options);
  // The structural half of the queue events (Tree::CreateQueue,
  // UpdateQueue, DeleteQueue): validated, raw state only; the caller
  // rebuilds the derived state. InsertQueue gives the new queue's id.
  StatusOr<QueueId> InsertQueue(const QueueSpec& q);
  Status EditQueue(const QueueSpec& q);
  Status EraseQueue(std::string_view path);
  // Submit's checks of a spec other than its queue: name, user, task
  // shape, counts, weight; the task shape as R amounts.
  StatusOr<std::vector<int64_t>> CheckJobSpec(const JobSpec& spec) const;
  // RestoreJob's checks and raw state: the job in leaf `leaf` with its
  // counts, sums and index entries, not yet linked to its leaf's jobs
  // (LinkToLeaf, engine/tree_shares.h, does that).
  StatusOr<JobId> RestoreJobRaw(std::string_view name, QueueId leaf, std::string_view user,
                                const int64_t* task, int64_t tasks, double weight,
                                int64_t min_available, uint64_t seq, int64_t allocated,
                                JobState state);

  Status ValidateQueue(const QueueSpec& q, QueueId self, QueueId parent) const;
  StatusOr<QueueSpec> Normalize(const QueueSpec& q) const;
  StatusOr<std::vector<int64_t>> Dense(const ResourceAmounts& a, const std::string& what) const;
  QueueId AddQueueNode(const QueueSpec& q, QueueId parent);
  void SetAttributes(Queue& n, const QueueSpec& q) const;
  // The sibling-sum rule of docs/spec.md §3 over the queues Build created
  // (`order`, in creation order).
  Status CheckSiblingGuarantees(const std::vector<const QueueSpec*>& order) const;
  JobId NewJob(std::string_view name, QueueId leaf, std::string_view user, const int64_t* task,
               int64_t tasks, double weight, int64_t min_available, uint64_t seq,
               int64_t allocated, JobState state);
  JobId FindName(std::string_view name) const;  // kNone when absent
  JobId FindSeq(uint64_t seq) const;            // kNone when absent
  bool IsLeaf(QueueId q) const;
  int64_t SubtreeJobs(QueueId q) const;
  Status CheckJobId(JobId j) const;  // inline (tree_internal.h)
  static Status UnknownJob(JobId j);  // CheckJobId's error, out of line
  uint32_t UserId(const std::string& user);
  ResMask RequiredMask(const int64_t* task) const;  // inline (tree_internal.h)
  // Checks of Allocate/Release/Finish other than free capacity.
  Status CheckAllocate(JobId j, int64_t n) const;
  Status CheckRelease(JobId j, int64_t n, const char* verb) const;
  void SetJobState(JobId j, JobState s, Scratch& sc);
  void SetJobState(JobId j, JobState s) { SetJobState(j, s, *main_); }
  // Adds (sign +1) or takes (-1) job j's min_available × task to its leaf's
  // Queue::inqueue_min and to `total` (inqueue_min_total_ or a shard's delta).
  // The sums are 128-bit: each term fits int64 (Submit checks
  // min_available × task), but a sum over many jobs need not (issue 26).
  void CountInqueueMin(JobId j, int sign, GateSum* total);
  // Keeps job j's entry in its leaf's Queue::holders (the jobs with
  // allocated > 0) after its allocation changed; inline (tree_internal.h).
  // A job gets its first entry when it is linked (LinkToLeaf).
  void SyncHolder(JobId j);

  std::vector<std::string> names_;
  int R_ = 0;
  std::vector<int64_t> total_;
  std::vector<int64_t> free_;
  TreeOptions options_;
  bool any_guarantee_ = false;
  bool bulk_ = false;  // Build: the sibling-sum rule checked once at the end

  std::vector<Queue> queues_;
  std::vector<QueueId> free_queue_ids_;
  std::unordered_map<std::string, QueueId> queue_by_path_;
  size_t live_queues_ = 0;
  int max_depth_ = 0;

  std::vector<Job, HugeAlloc<Job>> jobs_;      // hot: one 64-byte line per job
  std::vector<std::string> job_names_;          // cold: indexed like jobs_
  std::vector<int64_t, HugeAlloc<int64_t>> task_;  // jobs_.size() x R_
  // Job ids are handed out in blocks of kJobBlock per lock shard, so that
  // the job records, task shapes and view entries of different shards never
  // share a cache line (threads on different shards would bounce them).
  static constexpr uint32_t kJobBlock = 16;
  std::vector<std::vector<JobId>> free_job_ids_ = std::vector<std::vector<JobId>>(kShards);
  // Removed jobs whose contributions saved views may still hold (Remove):
  // their records keep queue, weight and task row, and their ids are not
  // reused, until DropSavedViews frees them.
  struct RetiredJob {
    JobId id;
    uint32_t shard;
  };
  std::vector<RetiredJob> retired_jobs_;
  std::vector<JobId> block_next_ = std::vector<JobId>(kShards, kNone);  // next id of a shard's block
  JobIndex job_by_name_;  // name -> id, keyed through jobs_ (engine/job_index.h)
  JobIndex job_by_seq_;   // submission sequence number -> id
  size_t live_jobs_ = 0;
  uint64_t next_seq_ = 1;

  std::vector<std::string> user_names_;
  std::unordered_map<std::string, uint32_t> user_by_name_;
  uint32_t last_user_ = 0;  // NewJob: the previous job's user (bulk restores repeat users)

  // §12 gate: Pending jobs by submission sequence, and the global sums.
  std::map<uint64_t, JobId> pending_;
  std::vector<GateSum> inqueue_min_total_;
  std::vector<int64_t> usage_total_;

  // The exclusive path's Scratch (the shards' are in engine/tree_shards.h).
  std::unique_ptr<Scratch> main_;
};

}  // namespace hdrf::engine

#endif  // HDRF_ENGINE_TREE_STRUCTURE_H_
