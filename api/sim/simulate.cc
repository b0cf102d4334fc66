// The workload simulator (docs/spec.md §13; api/hdrf/simulate.h, docs/simulate.md).
//
// The engine decides everything (admission, fill order); this file keeps the
// virtual clock, the calendar of task ends and the statistics. Per queue it
// tracks the plain usage of its subtree (the same sum the engine keeps) and
// integrates the time-weighted values lazily: a queue's integrals are
// brought up to t just before anything of it changes at t, so each change
// costs O(depth * R) and an instant costs nothing for the queues it leaves
// alone.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <optional>
#include <queue>
#include <unordered_map>

#include "hdrf/engine.h"
#include "hdrf/simulate.h"
#include "api/facade/plan_screen.h"
#include "api/sim/pair_set.h"
#include "api/sim/node_pool.h"
#include "api/sim/simulate_stats.h"
#include "api/sim/task_shapes.h"
#include "api/sim/try_book.h"
#include "api/sim/wait_reason.h"

namespace hdrf {
namespace {

using sim::Shapes;

constexpr uint32_t kNoJob = UINT32_MAX;

// One per workload job, 40 bytes (most of a waiting job's cost besides the
// engine's): task counts are 32-bit (Simulate refuses a job of more tasks),
// the last start is kept as its distance from the first (a distance of
// 2^32 - 1 ms or more goes to Simulator::wide_last_), the end is not kept
// (every task runs the job's duration, so the last one to end is the last
// one started: end = last start + duration) and the engine's JobRef is
// split into its two fields.
struct JobRec {
  int64_t first_start = -1;
  uint64_t seq = 0;            // JobRef::seq
  uint32_t last_after_first = 0;  // last start - first start; kWide: in wide_last_
  uint32_t id = kNoJob;        // JobRef::id
  uint32_t unstarted = 0;      // tasks not started yet
  uint32_t unfinished = 0;     // tasks not completed yet (running + unstarted)
  uint32_t leaf = sim::kNoQueue;
  uint32_t shape = 0;          // into Shapes
  JobRef ref() const { return JobRef{id, seq}; }
};
static_assert(sizeof(JobRec) == 40, "keep the per-job record small (bench/README.md)");
constexpr uint32_t kWide = UINT32_MAX;

// Task ends: every task of one job started at one instant ends together
// (with nodes, one entry per node the job's tasks went to).
struct Ending {
  int64_t end;
  uint32_t job;
  int64_t count;
  int32_t node = -1;  // with nodes: where the tasks ran
  bool operator>(const Ending& o) const { return end > o.end || (end == o.end && job > o.job); }
};

class Simulator {
 public:
  Simulator(Engine& eng, const Workload& w, const SimulateOptions& o, sim::NodePool* nodes)
      : eng_(eng), w_(w), o_(o), R_(static_cast<int>(eng.ResourceNames().size())),
        stats_(eng.Queues(), eng.Total(), o), shapes_(R_), free_(eng.Total()), nodes_(nodes) {}

  Status Run(SimulateResult* res);
  // With SimulateOptions::db_path: the engine's event clock reads *clock_ms.
  void set_clock(int64_t* clock_ms) { clock_ms_ = clock_ms; }

 private:
  int64_t* clock_ms_ = nullptr;
  Status Complete(int64_t t);
  void Arrive(int64_t t, uint32_t i);
  Status Fill(int64_t t);
  Status FillOnNodes(int64_t t);
  void Start(int64_t t, uint32_t i);
  // Puts the tasks started since the last call (started_now_) in the calendar.
  void ScheduleStarted(int64_t t);
  void PushEnding(const Ending& e);
  // With reclaim: drops the calendar's first entries whose tasks were all
  // evicted (their ends cancelled), so that no instant is made of them.
  void DropCancelled();
  // The reclaim phase (SimulateOptions::reclaim) and its evictions.
  void InitReclaim(size_t n);
  Status Reclaim(int64_t t);
  Status TryInOrder(int64_t t, int64_t* evicted_now);
  // An applied plan's evictions and the taker's start.
  Status Taken(int64_t t, const Plan& plan, uint32_t taker, int64_t* evicted_now);
  Status Evict(int64_t t, uint32_t victim, int64_t n);
  bool DemandPlaceable(const Plan& plan, uint32_t taker) const;
  void Explain();
  int64_t LastStart(uint32_t i) const {
    const JobRec& j = jobs_[i];
    if (j.first_start < 0) return -1;
    return j.last_after_first == kWide ? wide_last_.at(i) : j.first_start + j.last_after_first;
  }

  Engine& eng_;
  const Workload& w_;
  const SimulateOptions& o_;
  const int R_;
  sim::QueueStats stats_;
  Shapes shapes_;
  std::vector<int64_t> free_;
  std::vector<JobRec> jobs_;
  std::unordered_map<uint32_t, int64_t> wide_last_;  // last starts 2^32 - 1 ms or more after the first
  std::vector<uint32_t> job_of_id_;  // engine JobId -> workload index
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> calendar_;
  std::vector<Engine::TaskOp> ops_;
  std::vector<JobRef> picked_;  // the jobs of one fill's steps, in order
  std::vector<uint32_t> started_now_;  // the job of each task started since the last ScheduleStarted
  // With reclaim: per job, its running tasks by end (and node), in start
  // order; the calendar's entries are then checked against it (evictions
  // cancel tasks: an entry whose group is gone ends nothing).
  struct Group {
    int64_t end;
    int32_t node;
    int64_t count;
  };
  std::unordered_map<uint32_t, std::vector<Group>> live_;
  std::vector<int64_t> evicted_;  // per job
  // With reclaim: what a plan depends on besides the state (TryKeyOf).
  // kept_ is the plan found for kept_key_ on state kept_on_ (state_: a new
  // one at each phase and after each applied plan; the next job of that key
  // gets it). A key whose plan failed is marked with fail_state_ below.
  using TryKey = sim::TryKey;
  using KeyJobs = sim::TryBook::KeyJobs;
  TryKey TryKeyOf(uint32_t i) const;
  uint64_t state_ = 1;
  // What a plan's outcome reads of the engine changes only with a job's
  // allocation (a task started, ended or evicted) or, in a leaf with a user
  // limit, a submission: changes_ counts those. fail_state_ numbers the
  // states by it (a new one whenever changes_ moved), and a key's failure
  // (KeyJobs::failed_on) stands while it is the same, across phases.
  uint64_t changes_ = 0, fail_changes_ = 0, fail_state_ = 1;
  uint64_t FailState() {
    if (changes_ != fail_changes_) {
      fail_changes_ = changes_;
      ++fail_state_;
    }
    return fail_state_;
  }
  std::optional<Plan> kept_;
  const KeyJobs* kept_key_ = nullptr;
  uint64_t kept_on_ = 0;
  // With reclaim: the waiting jobs by key and what was tried (try_book.h),
  // brought up to date after every change of a job's tasks (Book).
  sim::TryBook book_;
  bool untracked_ = false;  // a job waits where the book cannot count it
  void Book(uint32_t i) {
    const JobRec& j = jobs_[i];
    if (o_.reclaim && !book_.Update(i, j.leaf, j.unstarted > 0, TryKeyOf(i), j.seq, j.unfinished > j.unstarted))
      untracked_ = true;
  }
  std::vector<QueueId> leaves_;  // the leaves of the order of tries on one state
  LeafWalk leaf_walk_;  // the walk that lists them, on this state
  std::vector<JobRef> order_;    // the jobs of a leaf being tried
  std::vector<uint32_t> candidates_;  // the jobs order_ is made of (TryBook::LeafCandidates)
  std::vector<JobId> candidate_ids_;
  // TryLeaf's outcomes: no plan applied; one applied (the state changed);
  // the phase is over (the budget, or no leaf may take any more).
  enum class LeafTries { kNone, kApplied, kEnd };
  StatusOr<LeafTries> TryLeaf(int64_t t, QueueId q, const PlanOptions& po, int64_t* evicted_now);
  StatusOr<LeafTries> TryJobs(int64_t t, const PlanOptions& po, int64_t* evicted_now);
  StatusOr<std::optional<LeafTries>> TryIdle(int64_t t, uint32_t leaf, const PlanOptions& po, int64_t* evicted_now);
  StatusOr<LeafTries> Apply(int64_t t, uint32_t taker, int64_t* evicted_now);
  bool IdleFirst();
  std::optional<uint64_t> idle_first_res_;  // IdleFirst's answer, for these resources in shares
  bool idle_first_ = false;
  double max_weight_ = 1;  // of the workload's jobs, as the engine keeps them (at least 1)
  // Whether a key of `leaf` (stats index) with an untried job gets a plan
  // applied on this state, each such key asked once (failed_on keeps the
  // failures); KeyFails asks for one key, with its waiting job `job` (when
  // it does not fail, kept_ is its plan).
  StatusOr<bool> LeafMayApply(int64_t t, uint32_t leaf, const PlanOptions& po);
  StatusOr<bool> KeyFails(int64_t t, KeyJobs* key, uint32_t job, const PlanOptions& po);
  PlanScreen screen_;  // PlanMayTake's numbers, brought up to date when the state changes (Rescreen)
  // With reclaim: the leaves (stats index) whose jobs' allocations changed,
  // or that got a submission, since the last Rescreen (each once: marked
  // with changed_epoch_), and whether a job of no known leaf did.
  std::vector<uint32_t> changed_;
  std::vector<QueueId> changed_ids_;
  std::vector<uint64_t> changed_mark_;
  uint64_t changed_epoch_ = 1;
  bool changed_unknown_ = false;
  void Changed(uint32_t leaf) {
    if (!o_.reclaim) return;
    if (leaf >= changed_mark_.size() || book_.EngineLeaf(leaf) == engine::kNone) {
      changed_unknown_ = true;
    } else if (changed_mark_[leaf] != changed_epoch_) {
      changed_mark_[leaf] = changed_epoch_;
      changed_.push_back(leaf);
    }
  }
  // The screen after a change of the state: the allocations of jobs and
  // the submissions (their leaves in changed_) are all that changes during
  // a run (queues, weights and the cluster do not), so only the numbers
  // of those leaves' ancestors are computed again (plan_screen.h).
  void Rescreen();
  // The reclaim phase's calls on the engine between two changes of its
  // state go through one exclusive section (plan_screen.h), opened by the
  // first and closed before the state changes (Apply) and at the phase's
  // end: no other call on the engine is made while it is open.
  std::optional<PlanSession> session_;
  const PlanSession& Session() {
    if (!session_) session_.emplace(eng_);
    return *session_;
  }
  // Without --preempt, and when every job's demand needs some resource and
  // cannot overflow: the leaves (stats index, engine id), whose
  // LeafMayTake ends a phase where no waiting job's plan can succeed.
  std::vector<std::pair<uint32_t, QueueId>> screen_leaves_;
  bool screen_by_leaf_ = false;
  size_t any_leaf_from_ = 0;  // AnyLeafMayTake's first leaf to ask
  bool AnyLeafMayTake();
  // Without --preempt (screen_by_leaf_): the screen of `leaf` (stats
  // index) with the least demand, in each resource, of its keys still to be
  // asked on this state; when it fails, every one of them fails it (a
  // larger demand only makes it harder) and is marked failed.
  bool LeastMayTake(uint32_t leaf);
  std::vector<int64_t> least_;
  std::vector<KeyJobs*> asked_;
  std::vector<bool> limited_;      // per queue: a leaf with a user limit
  std::vector<uint32_t> user_of_;  // per job, with reclaim: its user, interned
  // (taker << 32 | victim) of applied plans: a flat hash set, one cache
  // line per lookup (a tree of 10^6 pairs costs a cache miss per level).
  sim::PairSet took_;
  static uint64_t Took(uint32_t taker, uint32_t victim) { return uint64_t{taker} << 32 | victim; }
  int64_t evicted_tasks_ = 0, plans_applied_ = 0, ping_pong_ = 0, evicted_soon_ = 0;
  double lost_ms_ = 0;
  std::vector<int64_t> eviction_ms_;
  std::vector<std::deque<uint32_t>> waiting_;  // per queue, with explain_per_leaf: jobs in arrival order
  sim::NodePool* nodes_;  // null without --nodes
  std::vector<std::pair<uint32_t, int32_t>> placed_now_;  // with nodes: (job, node) of each task started
  int64_t steps_ = 0, skipped_ = 0;
};

Status Simulator::Complete(int64_t t) {
  ops_.clear();
  while (!calendar_.empty() && calendar_.top().end == t) {
    Ending e = calendar_.top();
    calendar_.pop();
    if (o_.reclaim) {  // what is left of the group after evictions
      std::vector<Group>& g = live_[e.job];
      auto it = std::find_if(g.begin(), g.end(), [&](const Group& x) { return x.end == e.end && x.node == e.node; });
      if (it == g.end()) continue;  // merged into an earlier entry, or evicted
      e.count = it->count;
      g.erase(it);
      if (g.empty()) live_.erase(e.job);
      if (e.count == 0) continue;
    }
    JobRec& j = jobs_[e.job];
    j.unfinished -= static_cast<uint32_t>(e.count);
    ++changes_;
    Changed(j.leaf);
    Book(e.job);
    const int64_t* shape = shapes_.at(j.shape);
    for (int r = 0; r < R_; ++r) free_[r] += e.count * shape[r];
    if (nodes_)
      for (int64_t k = 0; k < e.count; ++k) HDRF_RETURN_IF_ERROR(nodes_->Release(e.node, shape));
    stats_.Change(j.leaf, t, shape, -e.count, 0, 0);
    Engine::TaskOp op;
    op.job = j.ref();
    if (j.unfinished == 0) {  // the last task: the job leaves (at LastStart + duration)
      op.type = Event::Type::kRemove;
    } else {
      op.type = Event::Type::kFinish;
      op.n = e.count;
    }
    ops_.push_back(op);
  }
  if (ops_.empty()) return Status::Ok();
  size_t refused = 0;
  HDRF_RETURN_IF_ERROR(eng_.ApplyTasks(ops_.data(), ops_.size(), nullptr, &refused));
  if (refused > 0) return Status::Internal("the engine refused " + std::to_string(refused) + " task completions");
  return Status::Ok();
}

void Simulator::Arrive(int64_t t, uint32_t i) {
  const WorkloadJob& wj = w_.jobs[i];
  JobRec& j = jobs_[i];
  auto ref = eng_.Submit(wj.spec);
  if (!ref.ok()) {
    stats_.Refuse(i, ref.status().message());
    return;
  }
  j.id = ref->id;
  j.seq = ref->seq;
  if (job_of_id_.size() <= ref->id) job_of_id_.resize(ref->id + 1 + job_of_id_.size() / 2, kNoJob);
  job_of_id_[ref->id] = i;
  j.leaf = stats_.LeafOf(wj.spec.queue);
  if (j.leaf == sim::kNoQueue) {  // a parent queue: the engine admitted it to a leaf
    auto info = eng_.GetJob(*ref);
    j.leaf = info.ok() ? stats_.LeafOf(info->queue) : sim::kNoQueue;
  }
  j.unstarted = j.unfinished = static_cast<uint32_t>(wj.spec.tasks);  // <= UINT32_MAX: Simulate checked
  if (o_.reclaim && (j.leaf >= limited_.size() || limited_[j.leaf])) ++changes_;  // Room's user limits
  Changed(j.leaf);  // its queues' min_task
  shapes_.AddWaiting(j.shape, 1);
  Book(i);
  stats_.Submitted(j.leaf, t, wj.spec.tasks);
  if (o_.explain_per_leaf > 0 && j.leaf != sim::kNoQueue) waiting_[j.leaf].push_back(i);
}

void Simulator::Start(int64_t t, uint32_t i) {
  JobRec& j = jobs_[i];
  started_now_.push_back(i);
  if (j.first_start < 0) j.first_start = t;
  if (const int64_t d = t - j.first_start; d < kWide) {
    j.last_after_first = static_cast<uint32_t>(d);
  } else {
    j.last_after_first = kWide;
    wide_last_[i] = t;
  }
  --j.unstarted;
  ++changes_;
  Changed(j.leaf);
  if (j.unstarted == 0) shapes_.AddWaiting(j.shape, -1);
  Book(i);
  const int64_t* shape = shapes_.at(j.shape);
  for (int r = 0; r < R_; ++r) free_[r] -= shape[r];
  stats_.Change(j.leaf, t, shape, 1, -1, j.unstarted == 0 ? -1 : 0);
  ++steps_;
}

Status Simulator::Fill(int64_t t) {
  started_now_.clear();
  if (!shapes_.AnyMayFit(free_.data())) {
    ++skipped_;
    return Status::Ok();
  }
  if (nodes_) return FillOnNodes(t);
  picked_.clear();
  auto s = eng_.Fill(&picked_);
  if (!s.ok()) return s.status().WithContext("fill at " + FormatMs(t) + " s");
  for (const JobRef& ref : picked_) {  // a gang's first step lists the job m times
    const uint32_t i = ref.id < job_of_id_.size() ? job_of_id_[ref.id] : kNoJob;
    if (i == kNoJob) return Status::Internal("the engine started a job the simulator does not know");
    Start(t, i);
  }
  ScheduleStarted(t);
  return Status::Ok();
}

void Simulator::PushEnding(const Ending& e) {
  calendar_.push(e);
  if (!o_.reclaim) return;
  std::vector<Group>& g = live_[e.job];
  if (!g.empty() && g.back().end == e.end && g.back().node == e.node) {
    g.back().count += e.count;
  } else {
    g.push_back(Group{e.end, e.node, e.count});
  }
}

void Simulator::DropCancelled() {
  if (!o_.reclaim) return;
  while (!calendar_.empty()) {
    const Ending& e = calendar_.top();
    if (auto l = live_.find(e.job); l != live_.end())
      for (const Group& x : l->second)
        if (x.end == e.end && x.node == e.node && x.count > 0) return;
    calendar_.pop();
  }
}

// Tasks of one job started at one instant end together.
void Simulator::ScheduleStarted(int64_t t) {
  std::sort(started_now_.begin(), started_now_.end());
  for (size_t k = 0; k < started_now_.size();) {
    size_t e = k;
    while (e < started_now_.size() && started_now_[e] == started_now_[k]) ++e;
    const uint32_t i = started_now_[k];
    PushEnding(Ending{t + w_.jobs[i].duration_ms, i, static_cast<int64_t>(e - k)});
    k = e;
  }
  started_now_.clear();
}

// Fill with host placement (docs/simulate_nodes.md): steps in fair order
// over the jobs whose task fits on some node, best fit; a job refused for
// want of a node is skipped for the rest of this fill.
Status Simulator::FillOnNodes(int64_t t) {
  placed_now_.clear();
  std::vector<int> chosen;  // the nodes of the step's tasks, placed already
  PlacementSkips skips;
  // A gang's m tasks go one after another, best fit on the pool as it
  // fills; if one cannot be placed, none is (docs/spec.md §14).
  Status place_error;
  const PlacementFn fits = [&](const PlacementQuery& q) {
    chosen.clear();
    for (int64_t k = 0; k < q.tasks; ++k) {
      const int n = nodes_->BestFit(q.task.data());
      if (n < 0) break;
      if (Status st = nodes_->Place(n, q.task.data()); !st.ok()) {
        place_error = st;
        break;
      }
      chosen.push_back(n);
    }
    if (static_cast<int64_t>(chosen.size()) == q.tasks) return true;
    for (int n : chosen) (void)nodes_->Release(n, q.task.data());
    chosen.clear();
    const uint32_t i = q.job.id < job_of_id_.size() ? job_of_id_[q.job.id] : kNoJob;
    if (i != kNoJob) stats_.FragmentationWait(jobs_[i].leaf);
    return false;
  };
  for (;;) {
    auto s = eng_.StepWhere(fits, &skips);
    if (!s.ok()) return s.status().WithContext("fill at " + FormatMs(t) + " s");
    if (!s->has_value()) break;
    const uint32_t i = (**s).id < job_of_id_.size() ? job_of_id_[(**s).id] : kNoJob;
    if (i == kNoJob) return Status::Internal("the engine started a job the simulator does not know");
    for (int n : chosen) {
      placed_now_.emplace_back(i, n);
      Start(t, i);
    }
  }
  HDRF_RETURN_IF_ERROR(place_error);
  started_now_.clear();  // in the calendar by node, below
  // Tasks of one job on one node at this instant end together.
  std::sort(placed_now_.begin(), placed_now_.end());
  for (size_t k = 0; k < placed_now_.size();) {
    size_t e = k;
    while (e < placed_now_.size() && placed_now_[e] == placed_now_[k]) ++e;
    const auto [i, node] = placed_now_[k];
    PushEnding(Ending{t + w_.jobs[i].duration_ms, i, static_cast<int64_t>(e - k), node});
    k = e;
  }
  return Status::Ok();
}

void Simulator::Explain() {
  const std::vector<std::string> names = eng_.ResourceNames();
  for (uint32_t q = 0; q < waiting_.size(); ++q) {
    std::deque<uint32_t>& dq = waiting_[q];
    while (!dq.empty() && jobs_[dq.front()].unstarted == 0) dq.pop_front();
    const int64_t total = stats_.waiting_jobs(q);
    if (dq.empty() || total <= 0) continue;
    std::vector<uint32_t> sample;
    for (size_t k = 0; k < dq.size() && sample.size() < static_cast<size_t>(o_.explain_per_leaf); ++k)
      if (jobs_[dq[k]].unstarted > 0) sample.push_back(dq[k]);
    for (uint32_t i : sample) {
      auto e = eng_.Explain(w_.jobs[i].spec.name);
      if (!e.ok()) continue;
      stats_.AddWhy(q, sim::WaitReason(*e, names, shapes_.at(jobs_[i].shape), free_),
                    static_cast<double>(total) / static_cast<double>(sample.size()));
    }
  }
}

// docs/spec.md §13 additions: after the fill, the waiting jobs in step
// order, each tried once per instant.
Status Simulator::Reclaim(int64_t t) {
  if (untracked_) return Status::Internal("a job waits in a queue the simulator does not know as a leaf");
  Rescreen();
  Status s;
  if (AnyLeafMayTake()) {  // else every try would fail
    int64_t evicted_now = 0;
    s = TryInOrder(t, &evicted_now);
    book_.EndPhase();
  }
  session_.reset();
  return s;
}

void Simulator::Rescreen() {
  if (changed_unknown_) {
    screen_.Clear();
  } else {
    changed_ids_.clear();
    for (uint32_t leaf : changed_) changed_ids_.push_back(book_.EngineLeaf(leaf));
    Session().Changed(&screen_, changed_ids_);
  }
  changed_.clear();
  changed_unknown_ = false;
  ++changed_epoch_;
}

// The order of tries is WaitingOrder with the jobs tried so far in this
// phase passed over; it changes only when a plan is applied (failed tries
// change nothing), and each leaf's jobs are together in it. So the phase
// goes leaf by leaf, in the order of the leaves with an untried job on
// this state (WaitingLeaves, from the book's counts): a leaf where no key
// with an untried job may have its plan applied on this state is marked
// tried as a whole (trying its jobs one by one would fail each, changing
// nothing); otherwise its untried jobs are tried in order up to the first
// whose plan is applied, and the state has changed (docs/simulate.md
// "Speed").
Status Simulator::TryInOrder(int64_t t, int64_t* evicted_now) {
  PlanOptions po;
  po.mode = o_.preempt ? PlanMode::kBoth : PlanMode::kReclaim;
  // Failed tries change nothing, and jobs of one TryKey get the same plan:
  // after one fails, the others of its key are tried without asking again.
  ++state_;
  // The leaves are read a few at a time: the first ones on each state,
  // then four times as many each time those are used up (the ones marked
  // tried are not listed again).
  constexpr size_t kFirstLeaves = 4, kGrow = 4;
  size_t want = kFirstLeaves;
  leaf_walk_.Clear();
  for (;;) {
    Session().NextWaitingLeaves(book_.untried(), want, &leaf_walk_, &leaves_);
    if (leaves_.empty()) return Status::Ok();  // every waiting job tried
    LeafTries r = LeafTries::kNone;
    for (QueueId q : leaves_) {
      if (o_.reclaim_budget && *evicted_now >= *o_.reclaim_budget) return Status::Ok();
      const uint32_t leaf = book_.StatsLeaf(q);
      HDRF_ASSIGN_OR_RETURN(bool may, LeafMayApply(t, leaf, po));
      if (!may) {
        book_.MarkLeafTried(leaf);
        continue;
      }
      HDRF_ASSIGN_OR_RETURN(r, TryLeaf(t, q, po, evicted_now));
      if (r != LeafTries::kNone) break;
    }
    if (r == LeafTries::kEnd) return Status::Ok();
    if (r == LeafTries::kApplied) {
      want = kFirstLeaves;  // the state changed: the order anew
      leaf_walk_.Clear();
    } else if (leaves_.size() < want) {
      return Status::Ok();  // every waiting job tried
    } else {
      want *= kGrow;
    }
  }
}

// The untried jobs of engine leaf q (the first leaf of the order), in
// order, up to the first whose plan is applied. They are read a few at a
// time, then four times as many each time those are used up: the book
// gives the jobs the first n can come from (those holding a task, and the
// first n by submission of those holding none), the engine orders them.
StatusOr<Simulator::LeafTries> Simulator::TryLeaf(int64_t t, QueueId q, const PlanOptions& po, int64_t* evicted_now) {
  constexpr int64_t kFirstTries = 8, kGrow = 4;
  const uint32_t leaf = book_.StatsLeaf(q);
  if (IdleFirst()) {
    HDRF_ASSIGN_OR_RETURN(std::optional<LeafTries> r, TryIdle(t, leaf, po, evicted_now));
    if (r) return *r;
  }
  for (int64_t want = kFirstTries; book_.untried()[q] > 0; want *= kGrow) {
    const size_t n = static_cast<size_t>(std::min(want, book_.untried()[q]));
    book_.LeafCandidates(leaf, n, &candidates_);
    candidate_ids_.clear();
    for (uint32_t i : candidates_) candidate_ids_.push_back(jobs_[i].id);
    Session().LeafOrderOf(q, candidate_ids_, n, &order_);
    if (order_.size() != n) return Status::Internal("the reclaim phase's count of untried jobs disagrees with the engine");
    HDRF_ASSIGN_OR_RETURN(LeafTries r, TryJobs(t, po, evicted_now));
    if (r != LeafTries::kNone) return r;
  }
  return LeafTries::kNone;  // every job of the leaf tried, none applied
}

// The jobs of order_ in turn, up to the first whose plan is applied.
StatusOr<Simulator::LeafTries> Simulator::TryJobs(int64_t t, const PlanOptions& po, int64_t* evicted_now) {
  for (const JobRef& next : order_) {
    if (o_.reclaim_budget && *evicted_now >= *o_.reclaim_budget) return LeafTries::kEnd;
    const uint32_t taker = next.id < job_of_id_.size() ? job_of_id_[next.id] : kNoJob;
    if (taker == kNoJob) return Status::Internal("a plan for a job the simulator does not know");
    KeyJobs* key = book_.KeyOf(taker);
    if (!key) return Status::Internal("a waiting job the reclaim phase's book does not hold");
    book_.MarkTried(taker);
    HDRF_ASSIGN_OR_RETURN(bool fails, KeyFails(t, key, taker, po));
    if (fails) continue;
    return Apply(t, taker, evicted_now);
  }
  return LeafTries::kNone;
}

// The untried jobs of `leaf` (stats index) that hold no task, while they
// come first in its order (HeldAfterIdle): by submission, so the first
// whose key's plan may be applied is the one with the smallest seq among
// the keys' first untried ones, the keys that fail passed over; every job
// before it is of a failed key and tried. Null when none is left (each
// tried): the ones that hold a task come next.
StatusOr<std::optional<Simulator::LeafTries>> Simulator::TryIdle(int64_t t, uint32_t leaf, const PlanOptions& po,
                                                                 int64_t* evicted_now) {
  const uint64_t fail_state = FailState();
  for (;;) {
    KeyJobs* best = nullptr;
    uint32_t taker = kNoJob;
    for (KeyJobs* k : book_.LeafKeys(leaf)) {
      if (k->failed_on == fail_state) continue;
      const uint32_t j = book_.FirstUntriedIdle(k);
      if (j != kNoJob && (!best || book_.Seq(j) < book_.Seq(taker))) {
        best = k;
        taker = j;
      }
    }
    if (!best) break;
    HDRF_ASSIGN_OR_RETURN(bool fails, KeyFails(t, best, taker, po));
    if (fails) continue;
    for (KeyJobs* k : book_.LeafKeys(leaf))
      if (k != best) book_.MarkIdleTriedBelow(k, book_.Seq(taker));
    book_.MarkTried(taker);
    HDRF_ASSIGN_OR_RETURN(LeafTries r, Apply(t, taker, evicted_now));
    return std::optional<LeafTries>(r);
  }
  for (KeyJobs* k : book_.LeafKeys(leaf)) book_.MarkIdleTriedBelow(k, UINT64_MAX);
  return std::optional<LeafTries>();
}

// Whether a leaf's jobs that hold a task come after those that hold none
// (engine.HeldAfterIdle for every shape, with the largest weight): asked
// again only when the resources that count in a share change.
bool Simulator::IdleFirst() {
  const uint64_t res = Session().ShareResources();
  if (!idle_first_res_ || *idle_first_res_ != res) {
    idle_first_ = Session().HeldAfterIdle(shapes_.all(), max_weight_);
    idle_first_res_ = res;
  }
  return idle_first_;
}

// Job `taker`'s try gets kept_, the plan of its key on this state (the same
// victims and demand for each job of the key, TryKeyOf), made for it.
StatusOr<Simulator::LeafTries> Simulator::Apply(int64_t t, uint32_t taker, int64_t* evicted_now) {
  Plan plan = std::move(*kept_);
  kept_.reset();
  kept_key_ = nullptr;
  plan.id = jobs_[taker].id;
  plan.seq = jobs_[taker].seq;
  plan.job = w_.jobs[taker].spec.name;
  session_.reset();  // the state changes
  if (Status s = eng_.ApplyPlan(plan); !s.ok()) return s.WithContext("reclaim at " + FormatMs(t) + " s");
  ++state_;
  ++changes_;
  HDRF_RETURN_IF_ERROR(Taken(t, plan, taker, evicted_now));
  HDRF_RETURN_IF_ERROR(Fill(t));
  Rescreen();
  return AnyLeafMayTake() ? LeafTries::kApplied : LeafTries::kEnd;
}

// Whether some key of `leaf` with an untried job may have its plan applied
// on this state (its first untried job then gets it, or a job before it of
// another such key).
StatusOr<bool> Simulator::LeafMayApply(int64_t t, uint32_t leaf, const PlanOptions& po) {
  if (screen_by_leaf_ && !LeastMayTake(leaf)) return false;
  for (KeyJobs* k : book_.LeafKeys(leaf)) {
    if (k->untried == 0) continue;
    HDRF_ASSIGN_OR_RETURN(bool fails, KeyFails(t, k, k->jobs.front(), po));
    if (!fails) return true;
  }
  return false;
}

// Whether the plan of waiting job `job` (of key `key`) fails on this state
// (no plan, no victims, or with nodes a demand that cannot be placed): the
// answer kept for the key on this state, else of the screen and the plan,
// kept in key->failed_on or (the plan) in kept_.
StatusOr<bool> Simulator::KeyFails(int64_t t, KeyJobs* key, uint32_t job, const PlanOptions& po) {
  const uint64_t fail_state = FailState();
  if (key->failed_on == fail_state) return true;
  if (kept_key_ == key && kept_on_ == state_) return false;
  // A cheap necessary test first: most keys fail the transfer rule at
  // every level of their path, and Plan would only confirm it.
  const JobRef ref = jobs_[job].ref();
  if (!Session().PlanMayTake(ref, po, &screen_)) {
    key->failed_on = fail_state;
    return true;
  }
  auto p = Session().MakePlan(ref, po);
  if (!p.ok()) return p.status().WithContext("reclaim at " + FormatMs(t) + " s");
  // With nodes the demand must also be placed once the victims' tasks
  // stop (docs/simulate_nodes.md "Reclaim"); else the job is passed over.
  if (!p->fits || p->victims.empty() || (nodes_ && !DemandPlaceable(*p, job))) {
    key->failed_on = fail_state;
    return true;
  }
  kept_ = std::move(p).value();
  kept_key_ = key;
  kept_on_ = state_;
  return false;
}

Status Simulator::Taken(int64_t t, const Plan& plan, uint32_t taker, int64_t* evicted_now) {
  ++plans_applied_;
  eviction_ms_.push_back(t);
  bool pong = false;  // counted once per plan (a victim may be listed more than once)
  for (const PlanVictim& v : plan.victims) {
    const uint32_t i = v.id < job_of_id_.size() ? job_of_id_[v.id] : kNoJob;
    if (i == kNoJob) return Status::Internal("a plan took from a job the simulator does not know");
    HDRF_RETURN_IF_ERROR(Evict(t, i, v.tasks));
    *evicted_now += v.tasks;
    pong = pong || took_.Contains(Took(i, taker));
    took_.Insert(Took(taker, i));
  }
  ping_pong_ += pong;
  if (!nodes_) {
    for (int64_t k = 0; k < plan.tasks; ++k) Start(t, taker);
    ScheduleStarted(t);
    return Status::Ok();
  }
  const int64_t* shape = shapes_.at(jobs_[taker].shape);
  std::vector<int> on;
  for (int64_t k = 0; k < plan.tasks; ++k) {
    const int node = nodes_->BestFit(shape);
    if (node < 0) return Status::Internal("a reclaimed task found no node");
    HDRF_RETURN_IF_ERROR(nodes_->Place(node, shape));
    on.push_back(node);
    Start(t, taker);
  }
  started_now_.clear();
  std::sort(on.begin(), on.end());
  for (size_t k = 0; k < on.size();) {
    size_t e = k;
    while (e < on.size() && on[e] == on[k]) ++e;
    PushEnding(Ending{t + w_.jobs[taker].duration_ms, taker, static_cast<int64_t>(e - k), on[k]});
    k = e;
  }
  return Status::Ok();
}

bool Simulator::LeastMayTake(uint32_t leaf) {
  const uint64_t fail_state = FailState();
  asked_.clear();
  least_.assign(R_, INT64_MAX);
  for (KeyJobs* k : book_.LeafKeys(leaf)) {
    if (k->untried == 0 || k->failed_on == fail_state) continue;
    if (kept_key_ == k && kept_on_ == state_) return true;  // its plan is made: it may be applied
    asked_.push_back(k);
    const int64_t* shape = shapes_.at(k->key->shape);  // each of its jobs' shape
    for (int r = 0; r < R_; ++r) least_[r] = std::min(least_[r], k->key->k * shape[r]);
  }
  if (asked_.size() < 2 || Session().LeafMayTake(book_.EngineLeaf(leaf), &screen_, &least_)) return true;
  for (KeyJobs* k : asked_) k->failed_on = fail_state;
  return false;
}

// The leaves holding a waiting job (stats: jobs with an unstarted task, a
// superset of the engine's waiting jobs) through LeafMayTake: when none
// passes, no try of the phase can give a plan, and failed tries change
// nothing (docs/simulate.md "Speed").
// The question is whether any passes, so the leaves are asked from the one
// that passed last (it mostly passes again), wrapping around.
bool Simulator::AnyLeafMayTake() {
  if (!screen_by_leaf_) return true;
  const size_t n = screen_leaves_.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (any_leaf_from_ + k) % n;
    const auto& [q, id] = screen_leaves_[i];
    if (stats_.waiting_jobs(q) > 0 && Session().LeafMayTake(id, &screen_)) {
      any_leaf_from_ = i;
      return true;
    }
  }
  return false;
}

// docs/spec.md §15 reads the waiting job J only through its leaf, its demand
// D = k·task and, where the leaf has a user limit, its user (room); with
// --preempt also through its allocation and weight (A = J in the transfer
// rule; a job of the same key is never a permitted victim of J, its share
// being J's). Jobs of one key therefore get one plan on one state. k is
// the engine's StepDemand: the gang size min(max(1, m), tasks) while the job
// holds no task (its task count is the unfinished tasks), else 1.
Simulator::TryKey Simulator::TryKeyOf(uint32_t i) const {
  const JobRec& j = jobs_[i];
  const WorkloadJob& wj = w_.jobs[i];
  const int64_t held = int64_t{j.unfinished} - j.unstarted;
  const int64_t k = held > 0 ? 1 : std::min<int64_t>(std::max<int64_t>(1, wj.spec.min_available), j.unfinished);
  TryKey key{j.leaf, j.shape, 0, k, -1, 0};
  if (j.leaf < limited_.size() && limited_[j.leaf]) key.user = user_of_[i];
  if (o_.preempt) {
    key.held = held;
    key.weight = wj.spec.weight;
  }
  return key;
}

// On a copy of the pool: the victims' latest started tasks leave their
// nodes, then the demand's tasks are placed best fit one after another.
bool Simulator::DemandPlaceable(const Plan& plan, uint32_t taker) const {
  sim::NodePool trial = *nodes_;
  // A job may be listed more than once: its later entries go on past the
  // tasks its earlier ones took, as Evict does.
  std::unordered_map<uint32_t, int64_t> gone;
  for (const PlanVictim& v : plan.victims) {
    const uint32_t i = v.id < job_of_id_.size() ? job_of_id_[v.id] : kNoJob;
    auto it = live_.find(i);
    if (i == kNoJob || it == live_.end()) return false;
    const int64_t* shape = shapes_.at(jobs_[i].shape);
    int64_t skip = gone[i], left = v.tasks;
    gone[i] += v.tasks;
    for (auto g = it->second.rbegin(); g != it->second.rend() && left > 0; ++g) {
      const int64_t passed = std::min(skip, g->count);
      skip -= passed;
      for (int64_t k = std::min(left, g->count - passed); k > 0; --k, --left)
        if (!trial.Release(g->node, shape).ok()) return false;
    }
  }
  const int64_t* shape = shapes_.at(jobs_[taker].shape);
  for (int64_t k = 0; k < plan.tasks; ++k) {
    const int node = trial.BestFit(shape);
    if (node < 0 || !trial.Place(node, shape).ok()) return false;
  }
  return true;
}

// n running tasks of job i stop at t, the latest started first: their ends
// are cancelled and they wait again, to run their full duration.
Status Simulator::Evict(int64_t t, uint32_t i, int64_t n) {
  JobRec& j = jobs_[i];
  const int64_t* shape = shapes_.at(j.shape);
  std::vector<Group>& g = live_[i];
  const int64_t duration = w_.jobs[i].duration_ms;
  for (int64_t left = n; left > 0;) {
    if (g.empty()) return Status::Internal("evicting more tasks than job " + w_.jobs[i].spec.name + " runs");
    Group& last = g.back();  // the latest started (groups are in start order)
    const int64_t k = std::min(left, last.count);
    last.count -= k;
    left -= k;
    const int64_t ran = t - (last.end - duration);
    lost_ms_ += static_cast<double>(k * ran);
    if (ran < 60000) evicted_soon_ += k;
    if (nodes_)
      for (int64_t x = 0; x < k; ++x) HDRF_RETURN_IF_ERROR(nodes_->Release(last.node, shape));
    if (last.count == 0) g.pop_back();
  }
  if (g.empty()) live_.erase(i);
  for (int r = 0; r < R_; ++r) free_[r] += n * shape[r];
  const bool was_waiting = j.unstarted > 0;
  j.unstarted += static_cast<uint32_t>(n);
  if (!was_waiting) shapes_.AddWaiting(j.shape, 1);
  Book(i);
  stats_.Change(j.leaf, t, shape, -n, n, was_waiting ? 0 : 1);
  evicted_[i] += n;
  evicted_tasks_ += n;
  ++changes_;
  Changed(j.leaf);
  return Status::Ok();
}

// The reclaim phase's state for the workload's n jobs (shapes interned).
void Simulator::InitReclaim(size_t n) {
  evicted_.assign(n, 0);
  const std::vector<QueueInfo> qs = eng_.Queues();
  limited_.assign(qs.size(), false);
  for (size_t q = 0; q < qs.size(); ++q)
    limited_[q] = qs[q].is_leaf && (qs[q].min_user_limit_percent < 100 || qs[q].user_limit_factor.has_value());
  for (size_t q = 0; q < qs.size(); ++q)
    if (qs[q].is_leaf) screen_leaves_.emplace_back(static_cast<uint32_t>(q), qs[q].id);
  book_.Init(qs, n);
  changed_mark_.assign(qs.size(), 0);
  screen_by_leaf_ = !o_.preempt;
  for (size_t i = 0; i < n && screen_by_leaf_; ++i) {
    const int64_t* shape = shapes_.at(jobs_[i].shape);
    bool needs = false, overflows = false;
    for (int r = 0; r < R_; ++r) {
      needs = needs || shape[r] > 0;
      overflows = overflows || static_cast<__int128>(w_.jobs[i].spec.tasks) * shape[r] > INT64_MAX;
    }
    screen_by_leaf_ = needs && !overflows;
  }
  if (!o_.preempt) SetTaskShapes(eng_, shapes_.all(), &screen_);  // every job's task is one of them
  for (const WorkloadJob& j : w_.jobs) max_weight_ = std::max(max_weight_, j.spec.weight);
  std::unordered_map<std::string, uint32_t> users;
  user_of_.resize(n);
  for (size_t i = 0; i < n; ++i)
    user_of_[i] = users.emplace(w_.jobs[i].spec.user, static_cast<uint32_t>(users.size())).first->second;
}

Status Simulator::Run(SimulateResult* res) {
  const size_t n = w_.jobs.size();
  if (n >= kNoJob) return Status::InvalidArgument(w_.source + ": more than " + std::to_string(kNoJob - 1) + " jobs");
  jobs_.resize(n);
  const std::vector<std::string> names = eng_.ResourceNames();
  std::vector<int64_t> dense(R_);
  for (size_t i = 0; i < n; ++i) {
    std::fill(dense.begin(), dense.end(), 0);
    for (const auto& [r, v] : w_.jobs[i].spec.task) {
      auto it = std::lower_bound(names.begin(), names.end(), r);
      if (it == names.end() || *it != r) continue;  // the engine refuses the job at submission
      dense[it - names.begin()] = v;
    }
    jobs_[i].shape = shapes_.Intern(dense);
  }
  waiting_.resize(stats_.queue_count());
  if (o_.reclaim) InitReclaim(n);
  job_of_id_.assign(n + 1, kNoJob);  // engine ids are dense: one slot per job (grown if not)
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return w_.jobs[a].arrival_ms < w_.jobs[b].arrival_ms; });
  if (n > 0) {
    int64_t longest = 0;
    for (const WorkloadJob& j : w_.jobs) longest = std::max(longest, j.duration_ms);
    stats_.SetSpan(w_.jobs[order.back()].arrival_ms + longest);
  }
  size_t next = 0;
  int64_t t = 0, instants = 0;
  size_t progress_at = o_.progress_every_jobs;
  // docs/spec.md §13: an instant is when something happens; an end cancelled by an
  // eviction is not one.
  while ((DropCancelled(), next < n || !calendar_.empty())) {
    t = next < n ? w_.jobs[order[next]].arrival_ms : INT64_MAX;
    if (!calendar_.empty()) t = std::min(t, calendar_.top().end);
    if (clock_ms_) *clock_ms_ = t;
    ++instants;
    stats_.BeginInstant(t);
    HDRF_RETURN_IF_ERROR(Complete(t));
    while (next < n && w_.jobs[order[next]].arrival_ms == t) Arrive(t, order[next++]);
    HDRF_RETURN_IF_ERROR(Fill(t));
    if (o_.reclaim) HDRF_RETURN_IF_ERROR(Reclaim(t));
    if (!calendar_.empty() && calendar_.top().end < t)
      return Status::OutOfRange("task end times overflow the clock");
    if (o_.explain_per_leaf > 0) Explain();
    stats_.EndInstant(t);
    if (o_.progress && next >= progress_at) {
      progress_at = next + std::max<size_t>(1, o_.progress_every_jobs);
      SimulateProgress p;
      p.now_ms = t;
      p.last_arrival_ms = n ? w_.jobs[order[n - 1]].arrival_ms : 0;
      p.jobs_arrived = next;
      p.jobs_total = n;
      o_.progress(p);
    }
  }
  res->makespan_ms = t;
  res->instants = instants;
  res->steps = steps_;
  res->fills_skipped = skipped_;
  res->jobs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    JobOutcome& out = res->jobs[i];
    const JobRec& j = jobs_[i];
    out.first_start_ms = j.first_start;
    out.last_start_ms = LastStart(static_cast<uint32_t>(i));
    const bool removed = j.first_start >= 0 && j.unstarted == 0 && j.unfinished == 0;
    out.end_ms = removed ? out.last_start_ms + w_.jobs[i].duration_ms : -1;
  }
  std::vector<uint32_t> leaf_of_job(n);
  for (size_t i = 0; i < n; ++i) leaf_of_job[i] = jobs_[i].leaf;
  stats_.Finish(t, w_, leaf_of_job, res);
  if (o_.reclaim) {
    res->reclaim = true;
    res->evicted_tasks = evicted_tasks_;
    res->lost_task_seconds = lost_ms_ / 1000.0;
    res->plans_applied = plans_applied_;
    res->ping_pong = ping_pong_;
    res->evicted_within_60s = evicted_soon_;
    res->eviction_ms = std::move(eviction_ms_);
    std::unordered_map<std::string, size_t> at;
    for (size_t q = 0; q < res->queues.size(); ++q) at[res->queues[q].path] = q;
    for (size_t i = 0; i < n; ++i) {
      res->jobs[i].evicted = evicted_[i];
      if (evicted_[i] == 0) continue;
      for (std::string p = res->jobs[i].queue; !p.empty(); p = p.substr(0, std::min(p.size(), p.rfind('/')))) {
        if (auto it = at.find(p); it != at.end()) res->queues[it->second].evicted_tasks += evicted_[i];
        if (p.find('/') == std::string::npos) break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SimulateResult> Simulate(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                                  const Workload& workload, const SimulateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.size_class_names.size() != options.size_class_bounds.size() + 1)
    return Status::InvalidArgument("size_class_names must have one name more than size_class_bounds");
  EngineOptions eo;
  eo.latency_sample_every = 0;
  auto eng = Engine::Create(cluster, queues, eo);
  if (!eng.ok()) return eng.status();
  SimulateResult res;
  res.resources = (*eng)->ResourceNames();
  res.total = (*eng)->Total();
  for (const WorkloadJob& j : workload.jobs) {
    if (j.spec.tasks > int64_t{UINT32_MAX})
      return Status::InvalidArgument(workload.source + ":" + std::to_string(j.spec.line) + ": tasks: " +
                                     std::to_string(j.spec.tasks) + " is above the simulator's limit of " +
                                     std::to_string(UINT32_MAX) + " tasks per job");
    for (const auto& [r, v] : j.spec.task)
      if (!std::binary_search(res.resources.begin(), res.resources.end(), r))
        return Status::InvalidArgument(workload.source + ":" + std::to_string(j.spec.line) + ": resource '" + r +
                                       "' is not a resource of the cluster");
  }
  std::optional<sim::NodePool> nodes;
  if (!options.nodes_file.empty()) {
    auto pool = sim::NodePool::Load(options.nodes_file, res.resources);
    if (!pool.ok()) return pool.status();
    nodes.emplace(std::move(pool).value());
    nodes->SetDominanceTotals(res.total);
    res.nodes = static_cast<int64_t>(nodes->size());
  }
  int64_t virtual_ms = 0;  // the store's event clock
  if (!options.db_path.empty()) {  // only now: bad input leaves no store behind
    eo.db_path = options.db_path;
    eo.durability = Durability::kAsync;  // synced once, at Close
    eo.checkpoint_every = 0;             // the whole log is kept
    eo.event_clock = [&virtual_ms] { return virtual_ms * 1000; };
    eng = Engine::Create(cluster, queues, eo);
    if (!eng.ok()) return eng.status();
  }
  Simulator sim(**eng, workload, options, nodes ? &*nodes : nullptr);
  sim.set_clock(&virtual_ms);
  HDRF_RETURN_IF_ERROR(sim.Run(&res));
  if (!options.db_path.empty()) HDRF_RETURN_IF_ERROR((*eng)->Close());
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace hdrf
