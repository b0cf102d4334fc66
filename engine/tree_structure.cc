// engine::TreeStructure (engine/tree_structure.h): the raw state, its
// validation (docs/spec.md §3) and its lookups.
#include "engine/tree_structure.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/tree_internal.h"

namespace hdrf::engine {
namespace {

std::string ParentPath(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

std::string LastName(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

int PathDepth(std::string_view path) {
  return static_cast<int>(std::count(path.begin(), path.end(), '/'));
}

Status QueueError(std::string_view path, const std::string& rule) {
  return Status::InvalidArgument("queue " + std::string(path) + ": " + rule);
}

// a + b, or false when the sum does not fit an int64 (amounts are >= 0).
bool AddAmounts(int64_t a, int64_t b, int64_t* sum) { return !__builtin_add_overflow(a, b, sum); }

const std::string kInt64Max = "9223372036854775807";

// *sum += add, `add` being a guarantee of resource `rn` of a child of
// `parent_path`: a sum past the largest amount refuses queue `path`.
Status AddSiblingGuarantee(const std::string& path, const std::string& parent_path, const std::string& rn,
                           int64_t add, int64_t* sum) {
  if (AddAmounts(*sum, add, sum)) return Status::Ok();
  return QueueError(path, "guarantees of " + parent_path + "'s children add up to more than " + kInt64Max +
                              " (the largest amount) of " + rn);
}

// Siblings' guarantees of resource `rn` within the parent's guarantee (when
// `parent_guar` is set) or the cluster's `total` (when the parent is root):
// the rule as ValidateQueue and Create apply it, `sum` being the siblings'
// sum with `path`'s new guarantee, `old_sum` with its old one.
Status SiblingSumRule(const std::string& path, const std::string& parent_path, const std::string& rn,
                      std::optional<int64_t> parent_guar, int64_t total, int64_t sum, int64_t old_sum) {
  // After a capacity decrease the sum may already be above the cluster:
  // only requests that raise it are refused then (docs/semantics.md §9).
  if (parent_path == "root" && sum > total && sum > old_sum)
    return QueueError(path, "guarantees of root's children add up to " + FormatQuantity(rn, sum) + " " + rn +
                                ", more than the cluster's " + FormatQuantity(rn, total));
  if (parent_guar && sum > *parent_guar)
    return QueueError(path, "guarantees of " + parent_path + "'s children add up to " + FormatQuantity(rn, sum) +
                                " " + rn + ", more than its guarantee " + FormatQuantity(rn, *parent_guar));
  return Status::Ok();
}

// "" when `w` may be a weight (docs/semantics.md §3), else why not.
std::string WeightError(double w) {
  if (!std::isfinite(w)) return "weight must be a finite number";
  if (w > kMaxWeight) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", w);
    return "weight " + std::string(buf) + " is above the largest weight, 1e9";
  }
  return "";
}

}  // namespace

TreeStructure::TreeStructure() : main_(std::make_unique<Scratch>()) {}
TreeStructure::~TreeStructure() = default;

Status TreeStructure::Build(const ResourceAmounts& cluster, const std::vector<QueueSpec>& queues,
                            const TreeOptions& options) {
  if (cluster.empty()) return Status::InvalidArgument("cluster: no resources");
  if (cluster.size() > static_cast<size_t>(kMaxResources))
    return Status::InvalidArgument("cluster: more than 32 resources");
  if (options.overcommit_factor &&
      !(std::isfinite(*options.overcommit_factor) && *options.overcommit_factor > 0))
    return Status::InvalidArgument("overcommitFactor must be a positive number");
  for (const auto& [name, amount] : cluster) {
    HDRF_RETURN_IF_ERROR(CheckName(NameKind::kResource, name).WithContext("cluster"));
    // The one check of resource names (every binding creates trees here):
    // what the C interface, the tools and the configs refuse, nothing
    // accepts, and a store holds only names its recovery reads back.
    if (!IsKnownResourceName(name))
      return Status::InvalidArgument(
          "cluster: unknown resource '" + name +
          "' (cpu, memory, pods, ephemeral-storage, hugepages-<size> or a domain-qualified "
          "name such as nvidia.com/gpu)");
    if (amount < 0) return Status::InvalidArgument("cluster: negative amount of " + name);
    names_.push_back(name);
    total_.push_back(amount);
  }
  R_ = static_cast<int>(names_.size());
  free_ = total_;
  options_ = options;
  inqueue_min_total_.assign(R_, 0);
  usage_total_.assign(R_, 0);
  QueueSpec root_spec;
  root_spec.path = "root";
  for (const QueueSpec& q : queues)
    if (q.path == "root") root_spec = q;
  HDRF_ASSIGN_OR_RETURN(QueueSpec root_norm, Normalize(root_spec));
  AddQueueNode(root_norm, kNone);
  HDRF_RETURN_IF_ERROR(ValidateQueue(root_norm, 0, kNone));

  std::vector<const QueueSpec*> order;
  for (const QueueSpec& q : queues)
    if (q.path != "root") order.push_back(&q);
  std::stable_sort(order.begin(), order.end(), [](const QueueSpec* a, const QueueSpec* b) {
    return PathDepth(a->path) < PathDepth(b->path);
  });
  bulk_ = true;
  for (const QueueSpec* q : order) {
    if (queue_by_path_.count(q->path)) {
      // An implicit parent created earlier may be listed later only if the
      // sort put it after a child, which cannot happen; so this is a duplicate.
      return QueueError(q->path, "listed twice");
    }
    // Missing ancestors are created open with weight 1.
    std::vector<std::string> missing;
    for (std::string p = ParentPath(q->path); !p.empty() && !queue_by_path_.count(p);
         p = ParentPath(p))
      missing.push_back(p);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      QueueSpec implicit;
      implicit.path = *it;
      HDRF_RETURN_IF_ERROR(InsertQueue(implicit).status());
    }
    HDRF_RETURN_IF_ERROR(InsertQueue(*q).status());
  }
  bulk_ = false;
  return CheckSiblingGuarantees(order);
}

Status TreeStructure::CheckSiblingGuarantees(const std::vector<const QueueSpec*>& order) const {
  // The sibling-sum rule in creation order, one running sum per parent:
  // linear, where a sum over the siblings for every new queue was quadratic
  // (87 s for 10^5 siblings; issue 26 item 14). Implicit parents guarantee
  // nothing and cannot break it.
  std::unordered_map<QueueId, std::vector<int64_t>> sums;
  for (const QueueSpec* q : order) {
    const Queue& n = queues_[queue_by_path_.at(q->path)];
    const Queue& p = queues_[n.parent];
    std::vector<int64_t>& sum = sums[n.parent];
    sum.resize(R_, 0);
    for (int r = 0; r < R_; ++r) {
      HDRF_RETURN_IF_ERROR(AddSiblingGuarantee(n.path, p.path, names_[r], n.guar[r], &sum[r]));
      HDRF_RETURN_IF_ERROR(SiblingSumRule(n.path, p.path, names_[r],
                                          ((p.guar_set >> r) & 1) ? std::optional(p.guar[r]) : std::nullopt,
                                          total_[r], sum[r], sum[r] - n.guar[r]));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> TreeStructure::Dense(const ResourceAmounts& a, const std::string& what) const {
  std::vector<int64_t> v(R_, 0);
  for (const auto& [name, amount] : a) {
    auto it = std::lower_bound(names_.begin(), names_.end(), name);
    if (it == names_.end() || *it != name)
      return Status::NotFound(what + ": unknown resource '" + name + "' (not in the cluster)");
    if (amount < 0) return Status::InvalidArgument(what + ": negative amount of " + name);
    v[it - names_.begin()] = amount;
  }
  return v;
}

StatusOr<QueueSpec> TreeStructure::Normalize(const QueueSpec& in) const {
  QueueSpec q = in;
  HDRF_RETURN_IF_ERROR(CheckQueuePath(q.path));
  if (std::string why = WeightError(q.weight); !why.empty()) return QueueError(q.path, why);
  if (q.weight < 1) q.weight = 1;
  if (q.min_user_limit_percent < 1 || q.min_user_limit_percent > 100)
    return QueueError(q.path, "minUserLimitPercent must be within 1..100");
  if (q.user_limit_factor &&
      !(std::isfinite(*q.user_limit_factor) && *q.user_limit_factor > 0))
    return QueueError(q.path, "userLimitFactor must be > 0");
  auto cap = Dense(q.capability, "queue " + q.path + ": capability");
  if (!cap.ok()) return cap.status();
  auto guar = Dense(q.guarantee, "queue " + q.path + ": guarantee");
  if (!guar.ok()) return guar.status();
  return q;
}

// Checks every rule of docs/spec.md §3 that involves `q` as it would be with `self`
// (kNone when being created under `parent`) replaced by q.
Status TreeStructure::ValidateQueue(const QueueSpec& q, QueueId self, QueueId parent) const {
  std::vector<int64_t> cap = *Dense(q.capability, "");
  std::vector<int64_t> guar = *Dense(q.guarantee, "");
  auto cap_of = [&](QueueId id, int r, bool* set) -> int64_t {
    if (id == self) {
      *set = q.capability.count(names_[r]) > 0;
      return cap[r];
    }
    *set = (queues_[id].cap_set >> r) & 1;
    return queues_[id].cap[r];
  };
  for (int r = 0; r < R_; ++r) {
    const std::string& rn = names_[r];
    // capability vs the nearest ancestor that sets it
    bool set = false;
    int64_t c = cap_of(self, r, &set);
    int64_t eff = set ? c : kUnlimited;
    for (QueueId a = parent; a != kNone; a = queues_[a].parent) {
      bool aset = false;
      int64_t ac = cap_of(a, r, &aset);
      if (!aset) continue;
      if (set && c > ac)
        return QueueError(q.path, "capability " + rn + " " + FormatQuantity(rn, c) +
                                      " exceeds parent " + queues_[a].path + "'s " +
                                      FormatQuantity(rn, ac));
      eff = std::min(eff, ac);
      break;
    }
    for (QueueId a = parent; a != kNone; a = queues_[a].parent)
      if ((queues_[a].cap_set >> r) & 1) eff = std::min(eff, queues_[a].cap[r]);
    // descendants (update only): explicit capabilities and guarantees must
    // stay within the new capability
    if (self != kNone && set) {
      std::vector<QueueId> stack(queues_[self].children.begin(), queues_[self].children.end());
      while (!stack.empty()) {
        QueueId d = stack.back();
        stack.pop_back();
        if (((queues_[d].cap_set >> r) & 1) && queues_[d].cap[r] > c)
          return QueueError(q.path, "capability " + rn + " " + FormatQuantity(rn, c) +
                                        " is below descendant " + queues_[d].path + "'s " +
                                        FormatQuantity(rn, queues_[d].cap[r]));
        if (queues_[d].guar[r] > c)
          return QueueError(q.path, "capability " + rn + " " + FormatQuantity(rn, c) +
                                        " is below descendant " + queues_[d].path +
                                        "'s guarantee " + FormatQuantity(rn, queues_[d].guar[r]));
        for (QueueId ch : queues_[d].children) stack.push_back(ch);
      }
    }
    // guarantee <= capability
    if (q.guarantee.count(rn) && guar[r] > eff)
      return QueueError(q.path, "guarantee " + rn + " " + FormatQuantity(rn, guar[r]) +
                                    " exceeds capability " + FormatQuantity(rn, eff));
    // siblings' guarantees within the parent's guarantee (or the cluster);
    // in bulk (Create) checked once for all queues at the end of Create.
    if (parent != kNone && !bulk_) {
      int64_t sum = guar[r];
      for (QueueId s : queues_[parent].children)
        if (s != self) HDRF_RETURN_IF_ERROR(AddSiblingGuarantee(q.path, queues_[parent].path, rn, queues_[s].guar[r], &sum));
      const int64_t old_sum = sum - guar[r] + (self != kNone ? queues_[self].guar[r] : 0);
      const Queue& p = queues_[parent];
      HDRF_RETURN_IF_ERROR(SiblingSumRule(q.path, p.path, rn, ((p.guar_set >> r) & 1) ? std::optional(p.guar[r]) : std::nullopt,
                                          total_[r], sum, old_sum));
    }
    // own children's guarantees within the new guarantee (update only)
    if (self != kNone && guar[r] > 0 && !queues_[self].children.empty()) {
      int64_t sum = 0;
      bool overflow = false;
      for (QueueId ch : queues_[self].children) overflow |= !AddAmounts(sum, queues_[ch].guar[r], &sum);
      if (overflow || sum > guar[r])
        return QueueError(q.path, "guarantee " + rn + " " + FormatQuantity(rn, guar[r]) +
                                      " is below the sum of its children's guarantees " +
                                      FormatQuantity(rn, sum));
    }
  }
  return Status::Ok();
}

// Every attribute of `q` but its state and place, into node n.
void TreeStructure::SetAttributes(Queue& n, const QueueSpec& q) const {
  n.weight = q.weight;
  n.reclaimable = q.reclaimable;
  n.min_user_limit_percent = q.min_user_limit_percent;
  n.user_limit_factor = q.user_limit_factor;
  n.cap.assign(R_, kUnlimited);
  n.guar.assign(R_, 0);
  n.cap_set = n.guar_set = 0;
  for (int r = 0; r < R_; ++r) {
    if (auto c = q.capability.find(names_[r]); c != q.capability.end()) {
      n.cap[r] = c->second;
      n.cap_set |= ResMask{1} << r;
    }
    if (auto g = q.guarantee.find(names_[r]); g != q.guarantee.end()) {
      n.guar[r] = g->second;
      if (g->second > 0) n.guar_set |= ResMask{1} << r;
    }
  }
  n.limits_active = n.min_user_limit_percent < 100 || n.user_limit_factor.has_value();
}

QueueId TreeStructure::AddQueueNode(const QueueSpec& q, QueueId parent) {
  QueueId id;
  if (!free_queue_ids_.empty()) {
    id = free_queue_ids_.back();
    free_queue_ids_.pop_back();
    queues_[id] = Queue();
  } else {
    id = static_cast<QueueId>(queues_.size());
    queues_.emplace_back();
  }
  Queue& n = queues_[id];
  n.alive = true;
  n.path = q.path;
  n.name = LastName(q.path);
  n.parent = parent;
  n.depth = parent == kNone ? 0 : queues_[parent].depth + 1;
  n.usage.assign(R_, 0);
  n.realcap.assign(R_, 0);
  n.held_back.assign(R_, 0);
  n.inqueue_min.assign(R_, 0);
  n.min_task.assign(R_, INT64_MAX);
  n.state = q.state;
  SetAttributes(n, q);
  if (n.guar_set) any_guarantee_ = true;
  if (parent != kNone) {
    auto& ch = queues_[parent].children;
    auto pos = std::lower_bound(ch.begin(), ch.end(), n.name, [&](QueueId a, const std::string& nm) {
      return queues_[a].name < nm;
    });
    ch.insert(pos, id);
  }
  queue_by_path_[n.path] = id;
  max_depth_ = std::max(max_depth_, n.depth);
  ++live_queues_;
  return id;
}

StatusOr<QueueId> TreeStructure::InsertQueue(const QueueSpec& in) {
  HDRF_ASSIGN_OR_RETURN(QueueSpec q, Normalize(in));
  if (q.path == "root") return QueueError(q.path, "root already exists");
  if (queue_by_path_.count(q.path)) return Status::AlreadyExists("queue " + q.path + ": already exists (names are unique among siblings)");
  auto pit = queue_by_path_.find(ParentPath(q.path));
  if (pit == queue_by_path_.end())
    return Status::NotFound("queue " + q.path + ": parent " + ParentPath(q.path) + " does not exist");
  QueueId parent = pit->second;
  if (IsLeaf(parent) && SubtreeJobs(parent) > 0)
    return QueueError(q.path, "parent " + queues_[parent].path + " is a leaf that holds jobs");
  HDRF_RETURN_IF_ERROR(ValidateQueue(q, kNone, parent));
  q.state = std::max(q.state, queues_[parent].state);  // a closed subtree stays closed
  return AddQueueNode(q, parent);
}

Status TreeStructure::EditQueue(const QueueSpec& in) {
  HDRF_ASSIGN_OR_RETURN(QueueSpec q, Normalize(in));
  auto it = queue_by_path_.find(q.path);
  if (it == queue_by_path_.end()) return Status::NotFound("queue " + q.path + ": does not exist");
  QueueId id = it->second;
  HDRF_RETURN_IF_ERROR(ValidateQueue(q, id, queues_[id].parent));
  SetAttributes(queues_[id], q);
  any_guarantee_ = false;
  for (const Queue& x : queues_)
    if (x.alive && x.guar_set) any_guarantee_ = true;
  return Status::Ok();
}

Status TreeStructure::EraseQueue(std::string_view path) {
  HDRF_ASSIGN_OR_RETURN(QueueId id, FindQueue(path));
  if (id == 0) return QueueError(path, "root cannot be deleted");
  if (queues_[id].state != QueueState::kClosed)
    return QueueError(path, "only a closed queue can be deleted");
  if (SubtreeJobs(id) > 0)
    return QueueError(path, "cannot delete: its subtree holds " + std::to_string(SubtreeJobs(id)) + " jobs");
  auto& siblings = queues_[queues_[id].parent].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), id));
  std::vector<QueueId> stack{id};
  while (!stack.empty()) {
    QueueId q = stack.back();
    stack.pop_back();
    for (QueueId c : queues_[q].children) stack.push_back(c);
    queue_by_path_.erase(queues_[q].path);
    queues_[q] = Queue();
    free_queue_ids_.push_back(q);
    --live_queues_;
  }
  any_guarantee_ = false;
  for (const Queue& x : queues_)
    if (x.alive && x.guar_set) any_guarantee_ = true;
  return Status::Ok();
}

bool TreeStructure::IsLeaf(QueueId q) const { return queues_[q].children.empty(); }

int64_t TreeStructure::SubtreeJobs(QueueId q) const {
  const auto& c = queues_[q].jobs_by_state;
  return c[0] + c[1] + c[2] + c[3];
}

Status TreeStructure::SetQueueState(std::string_view path, QueueState state) {
  HDRF_ASSIGN_OR_RETURN(QueueId id, FindQueue(path));
  if (state == QueueState::kOpen) {
    QueueId p = queues_[id].parent;
    if (p != kNone && queues_[p].state != QueueState::kOpen)
      return QueueError(path, "cannot open: parent " + queues_[p].path + " is not open");
    queues_[id].state = state;
    return Status::Ok();
  }
  std::vector<QueueId> stack{id};
  while (!stack.empty()) {
    QueueId q = stack.back();
    stack.pop_back();
    queues_[q].state = state;
    for (QueueId c : queues_[q].children) stack.push_back(c);
  }
  return Status::Ok();
}

uint32_t TreeStructure::UserId(const std::string& user) {
  auto [it, inserted] = user_by_name_.emplace(user, static_cast<uint32_t>(user_names_.size()));
  if (inserted) user_names_.push_back(user);
  return it->second;
}

StatusOr<std::vector<int64_t>> TreeStructure::CheckJobSpec(const JobSpec& spec) const {
  if (spec.name.empty()) return Status::InvalidArgument("job: empty name");
  HDRF_RETURN_IF_ERROR(CheckName(NameKind::kJob, spec.name));
  HDRF_RETURN_IF_ERROR(CheckName(NameKind::kUser, spec.user).WithContext("job " + spec.name));
  if (FindName(spec.name) != kNone)
    return Status::AlreadyExists("job " + spec.name + ": already exists");
  auto task = Dense(spec.task, "job " + spec.name + ": task");
  if (!task.ok()) return task.status();
  for (int r = 0; r < R_; ++r)
    if ((*task)[r] > total_[r])
      return Status::InvalidArgument("job " + spec.name + ": task needs " +
                                     FormatQuantity(names_[r], (*task)[r]) + " " + names_[r] +
                                     ", more than the cluster's " +
                                     FormatQuantity(names_[r], total_[r]));
  if (spec.tasks < 0) return Status::InvalidArgument("job " + spec.name + ": tasks must be >= 0");
  if (spec.min_available < 0)
    return Status::InvalidArgument("job " + spec.name + ": minAvailable must be >= 0");
  if (std::string why = WeightError(spec.weight); !why.empty())
    return Status::InvalidArgument("job " + spec.name + ": " + why);
  // A job's whole demand and its gate minimum are amounts too.
  for (int r = 0; r < R_; ++r) {
    int64_t product;
    if (__builtin_mul_overflow(spec.tasks, (*task)[r], &product) ||
        __builtin_mul_overflow(spec.min_available, (*task)[r], &product))
      return Status::InvalidArgument("job " + spec.name + ": " +
                                     std::to_string(std::max(spec.tasks, spec.min_available)) +
                                     " tasks of " + FormatQuantity(names_[r], (*task)[r]) + " " +
                                     names_[r] + " need more than " + kInt64Max +
                                     " (the largest amount)");
  }
  return task;
}

Status TreeStructure::UnknownJob(JobId j) {
  return Status::NotFound("job #" + std::to_string(j) + ": unknown job");
}

Status TreeStructure::CheckAllocate(JobId id, int64_t n) const {
  HDRF_RETURN_IF_ERROR(CheckJobId(id));
  const Job& j = jobs_[id];
  switch (AllocateRule(n, j.allocated, j.tasks, j.state)) {
    case TaskRule::kOk: return Status::Ok();
    case TaskRule::kBadCount: return Status::InvalidArgument("job " + job_names_[id] + ": allocate needs n >= 1");
    case TaskRule::kTooFewTasks:
      return Status::OutOfRange("job " + job_names_[id] + ": allocate " + std::to_string(n) + " with " +
                                std::to_string(j.tasks - j.allocated) + " unallocated tasks");
    case TaskRule::kPending:
      return Status::FailedPrecondition("job " + job_names_[id] + ": Pending (not admitted by the enqueue gate)");
  }
  return Status::Internal("unknown task rule");
}

Status TreeStructure::CheckRelease(JobId id, int64_t n, const char* verb) const {
  HDRF_RETURN_IF_ERROR(CheckJobId(id));
  const Job& j = jobs_[id];
  switch (ReleaseRule(n, j.allocated)) {
    case TaskRule::kOk: return Status::Ok();
    case TaskRule::kBadCount: return Status::InvalidArgument("job " + job_names_[id] + ": " + verb + " needs n >= 1");
    default:
      return Status::OutOfRange("job " + job_names_[id] + ": " + verb + " " + std::to_string(n) + " with " +
                                std::to_string(j.allocated) + " running tasks");
  }
}

JobId TreeStructure::FindName(std::string_view name) const {
  const JobId id = job_by_name_.Find(JobIndex::HashName(name),
                                     [&](uint32_t j) { return job_names_[j] == name; });
  return id == JobIndex::kEmpty ? kNone : id;
}

JobId TreeStructure::FindSeq(uint64_t seq) const {
  const JobId id =
      job_by_seq_.Find(JobIndex::HashSeq(seq), [&](uint32_t j) { return jobs_[j].seq == seq; });
  return id == JobIndex::kEmpty ? kNone : id;
}

StatusOr<JobId> TreeStructure::FindJob(std::string_view name) const {
  const JobId id = FindName(name);
  if (id == kNone) return Status::NotFound("job " + std::string(name) + ": unknown job");
  return id;
}

StatusOr<JobId> TreeStructure::FindJobBySeq(uint64_t seq) const {
  const JobId id = FindSeq(seq);
  if (id == kNone) return Status::NotFound("job #" + std::to_string(seq) + ": unknown job");
  return id;
}

// A job record in a free slot (raw fields only; no queue links, no sums).
JobId TreeStructure::NewJob(std::string_view name, QueueId leaf, std::string_view user, const int64_t* task,
                   int64_t tasks, double weight, int64_t min_available, uint64_t seq,
                   int64_t allocated, JobState state) {
  JobId id;
  const uint32_t shard = queues_[leaf].shard;
  std::vector<JobId>& free_ids = free_job_ids_[shard];
  if (!free_ids.empty()) {
    id = free_ids.back();
    free_ids.pop_back();
  } else {
    JobId& next = block_next_[shard];
    if (next == kNone || next % kJobBlock == 0) {  // the shard's block is used up
      next = static_cast<JobId>((jobs_.size() + kJobBlock - 1) / kJobBlock * kJobBlock);
      jobs_.resize(next + kJobBlock);
      job_names_.resize(jobs_.size());
      task_.resize(jobs_.size() * R_);
    }
    id = next++;
  }
  static_assert(sizeof(Job) == 64, "a job record is one cache line (tree_internal.h)");
  Job& j = jobs_[id];
  j = Job();
  j.alive = true;
  job_names_[id].assign(name.data(), name.size());
  j.queue = leaf;
  if (user_names_.empty() || user_names_[last_user_] != user)
    last_user_ = UserId(std::string(user));
  j.user = last_user_;
  j.tasks = tasks;
  j.allocated = allocated;
  j.weight = std::max(1.0, weight);
  j.min_available = min_available;
  j.seq = seq;
  j.state = state;
  std::memcpy(&task_[size_t{id} * R_], task, sizeof(int64_t) * R_);
  j.req = RequiredMask(&task_[size_t{id} * R_]);
  return id;
}

uint64_t TreeStructure::job_seq(JobId j) const { return jobs_[j].seq; }

const std::string& TreeStructure::job_name(JobId j) const { return job_names_[j]; }

bool TreeStructure::job_alive(JobId j) const { return j < jobs_.size() && jobs_[j].alive; }

bool TreeStructure::job_live(JobId j, uint64_t seq) const {
  return j < jobs_.size() && jobs_[j].alive && jobs_[j].seq == seq;
}

StatusOr<JobId> TreeStructure::RestoreJobRaw(std::string_view name, QueueId leaf, std::string_view user,
                                             const int64_t* task, int64_t tasks, double weight,
                                             int64_t min_available, uint64_t seq, int64_t allocated,
                                             JobState state) {
  if (FindName(name) != kNone || FindSeq(seq) != kNone)
    return Status::Corruption("job " + std::string(name) + ": restored twice");
  if (leaf >= queues_.size() || !queues_[leaf].alive || !IsLeaf(leaf))
    return Status::Corruption("job " + std::string(name) + ": queue #" + std::to_string(leaf) +
                              " is not a leaf");
  for (int r = 0; r < R_; ++r)
    if (task[r] < 0)
      return Status::InvalidArgument("job " + std::string(name) + ": task: negative amount of " +
                                     names_[r]);
  if (allocated < 0 || allocated > tasks)
    return Status::Corruption("job " + std::string(name) + ": allocation out of range");
  const JobId id = NewJob(name, leaf, user, task, tasks, weight, min_available, seq, allocated, state);
  for (QueueId a = leaf; a != kNone; a = queues_[a].parent)
    ++queues_[a].jobs_by_state[static_cast<int>(state)];
  if (state == JobState::kInqueue) CountInqueueMin(id, +1, inqueue_min_total_.data());
  for (int r = 0; r < R_; ++r) {
    const int64_t a = allocated * task[r];
    if (a == 0) continue;
    free_[r] -= a;
    usage_total_[r] += a;
    for (QueueId q = leaf; q != kNone; q = queues_[q].parent) queues_[q].usage[r] += a;
  }
  if (state == JobState::kPending) pending_.emplace(seq, id);
  job_by_name_.Insert(JobIndex::HashName(job_names_[id]), id);
  job_by_seq_.Insert(JobIndex::HashSeq(seq), id);
  ++live_jobs_;
  next_seq_ = std::max(next_seq_, seq + 1);
  return id;
}

void TreeStructure::RestoreTasks(JobId id, int64_t allocated, int64_t tasks) {
  Job& j = jobs_[id];
  const int64_t dA = allocated - j.allocated;
  const bool recount = j.state == JobState::kInqueue && tasks != j.tasks;  // as ChangeAllocation
  if (recount) CountInqueueMin(id, -1, inqueue_min_total_.data());
  j.allocated = allocated;
  j.tasks = tasks;
  if (recount) CountInqueueMin(id, +1, inqueue_min_total_.data());
  SyncHolder(id);  // raw state: the job is linked to its leaf
  if (dA != 0) {
    const int64_t* t = &task_[size_t{id} * R_];
    for (int r = 0; r < R_; ++r) {
      const int64_t d = dA * t[r];
      if (d == 0) continue;
      free_[r] -= d;
      usage_total_[r] += d;
      for (QueueId a = j.queue; a != kNone; a = queues_[a].parent) queues_[a].usage[r] += d;
    }
  }
  // As ChangeAllocation: every task event settles the state of a job that
  // is not Pending.
  if (j.state != JobState::kPending)
    SetJobState(id, j.allocated > 0 ? JobState::kRunning : JobState::kInqueue);
}

int64_t TreeStructure::job_tasks(JobId j) const { return jobs_[j].tasks; }
int64_t TreeStructure::job_allocated(JobId j) const { return jobs_[j].allocated; }
JobState TreeStructure::job_state(JobId j) const { return jobs_[j].state; }
const int64_t* TreeStructure::job_task(JobId j) const { return &task_[size_t{j} * R_]; }
std::string_view TreeStructure::job_queue_path(JobId j) const { return queues_[jobs_[j].queue].path; }
size_t TreeStructure::job_id_limit() const { return jobs_.size(); }

std::vector<QueueSpec> TreeStructure::QueueSpecs() const {
  std::vector<QueueSpec> out;
  for (QueueId id : QueuesInPathOrder()) {
    const Queue& q = queues_[id];
    QueueSpec s;
    s.path = q.path;
    s.weight = q.weight;
    for (int r = 0; r < R_; ++r) {
      if ((q.cap_set >> r) & 1) s.capability[names_[r]] = q.cap[r];
      if (q.guar[r] != 0) s.guarantee[names_[r]] = q.guar[r];
    }
    s.reclaimable = q.reclaimable;
    s.state = q.state;
    s.min_user_limit_percent = q.min_user_limit_percent;
    s.user_limit_factor = q.user_limit_factor;
    out.push_back(std::move(s));
  }
  return out;
}

StatusOr<QueueId> TreeStructure::FindQueue(std::string_view path) const {
  auto it = queue_by_path_.find(std::string(path));
  if (it == queue_by_path_.end())
    return Status::NotFound("queue " + std::string(path) + ": does not exist");
  return it->second;
}

std::vector<QueueId> TreeStructure::QueuesInPathOrder() const {
  std::vector<QueueId> out;
  for (QueueId i = 0; i < queues_.size(); ++i)
    if (queues_[i].alive) out.push_back(i);
  std::sort(out.begin(), out.end(),
            [&](QueueId a, QueueId b) { return queues_[a].path < queues_[b].path; });
  return out;
}

std::vector<JobId> TreeStructure::JobsInSubmitOrder() const {
  std::vector<JobId> out;
  for (JobId i = 0; i < jobs_.size(); ++i)
    if (jobs_[i].alive) out.push_back(i);
  std::sort(out.begin(), out.end(), [&](JobId a, JobId b) { return jobs_[a].seq < jobs_[b].seq; });
  return out;
}

namespace {
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  }
  void Str(const std::string& s) { Bytes(s.data(), s.size() + 1); }
  void I64(int64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * i));
    Bytes(b, 8);
  }
};
}  // namespace

uint64_t TreeStructure::Digest() const {
  // Canonical form: docs/storage.md "State digest".
  Fnv f;
  for (QueueId q : QueuesInPathOrder()) {
    const Queue& n = queues_[q];
    f.Str("Q");
    f.Str(n.path);
    uint64_t wbits;
    std::memcpy(&wbits, &n.weight, 8);
    f.I64(static_cast<int64_t>(wbits));
    for (int r = 0; r < R_; ++r) {
      f.I64(((n.cap_set >> r) & 1) ? n.cap[r] : -1);
      f.I64(n.guar[r]);
    }
    f.I64(static_cast<int64_t>(n.state));
  }
  std::vector<JobId> jobs = JobsInSubmitOrder();
  std::sort(jobs.begin(), jobs.end(), [&](JobId a, JobId b) { return job_names_[a] < job_names_[b]; });
  for (JobId id : jobs) {
    const Job& j = jobs_[id];
    f.Str("J");
    f.Str(job_names_[id]);
    f.Str(queues_[j.queue].path);
    f.Str(user_names_[j.user]);
    for (int r = 0; r < R_; ++r) f.I64(task_[size_t{id} * R_ + r]);
    f.I64(j.tasks);
    f.I64(j.allocated);
  }
  return f.h;
}

// A shard-local call (sc.local) leaves the root-level counts to sc's deltas.
void TreeStructure::SetJobState(JobId id, JobState s, Scratch& sc) {
  Job& j = jobs_[id];
  if (j.state == s) return;
  const QueueId stop = sc.local ? 0 : kNone;
  for (QueueId a = j.queue; a != stop; a = queues_[a].parent) {
    --queues_[a].jobs_by_state[static_cast<int>(j.state)];
    ++queues_[a].jobs_by_state[static_cast<int>(s)];
  }
  if (sc.local) {
    --sc.d_state[static_cast<int>(j.state)];
    ++sc.d_state[static_cast<int>(s)];
  }
  GateSum* inq = sc.local ? sc.d_inqueue_min : inqueue_min_total_.data();
  if (j.state == JobState::kInqueue) CountInqueueMin(id, -1, inq);
  if (s == JobState::kInqueue) CountInqueueMin(id, +1, inq);
  j.state = s;
}

void TreeStructure::CountInqueueMin(JobId id, int sign, GateSum* total) {
  const Job& j = jobs_[id];
  const int64_t* t = &task_[size_t{id} * R_];
  GateSum* leaf = queues_[j.queue].inqueue_min.data();
  for (int r = 0; r < R_; ++r) {
    const GateSum m = GateSum{sign} * GangSize(id) * t[r];
    leaf[r] += m;
    total[r] += m;
  }
}


}  // namespace hdrf::engine
