#include "tests/property/random_stream.h"

namespace hdrf::testing {
namespace {

const char* kResources[] = {"cpu", "memory", "nvidia.com/gpu", "pods"};

ResourceAmounts RandomAmounts(Rng& rng, const ResourceAmounts& cluster, int pct_present,
                              int64_t max_units) {
  ResourceAmounts out;
  for (const auto& entry : cluster) {
    const std::string& r = entry.first;
    if (!rng.Chance(pct_present)) continue;
    out[r] = rng.Uniform(0, max_units) * 1000;
  }
  return out;
}

}  // namespace

std::string RandomOp::ToString() const {
  static const char* names[] = {"submit", "remove", "allocate", "release", "finish", "step",
                                "fill", "capacity", "create-queue", "update-queue",
                                "set-state", "delete-queue"};
  std::string s = names[static_cast<int>(kind)];
  if (kind == Kind::kSubmit) {
    s += " " + job.name + " to '" + job.queue + "' user " + job.user + " tasks " +
         std::to_string(job.tasks) + " w " + std::to_string(job.weight) + " task{";
    for (auto& [r, v] : job.task) s += r + ":" + std::to_string(v) + " ";
    s += "}";
  } else if (kind == Kind::kCreateQueue || kind == Kind::kUpdateQueue) {
    s += " " + queue.path + " w " + std::to_string(queue.weight) + " cap{";
    for (auto& [r, v] : queue.capability) s += r + ":" + std::to_string(v) + " ";
    s += "} guar{";
    for (auto& [r, v] : queue.guarantee) s += r + ":" + std::to_string(v) + " ";
    s += "} mulp " + std::to_string(queue.min_user_limit_percent);
    if (queue.user_limit_factor) s += " ulf " + std::to_string(*queue.user_limit_factor);
  } else if (kind == Kind::kCapacity) {
    for (auto& [r, v] : cluster) s += " " + r + ":" + std::to_string(v);
  } else {
    s += " " + name + " n " + std::to_string(n);
    if (kind == Kind::kSetState) s += std::string(" -> ") + QueueStateName(state);
  }
  return s;
}

RandomWorld MakeWorld(Rng& rng) {
  RandomWorld w;
  const int nres = static_cast<int>(rng.Uniform(2, 4));
  for (int i = 0; i < nres; ++i) w.cluster[kResources[i]] = rng.Uniform(4, 16) * 1000;
  const int depth = static_cast<int>(rng.Uniform(1, 3));
  std::vector<std::string> level{"root"};
  for (int d = 0; d < depth; ++d) {
    std::vector<std::string> next;
    for (const std::string& p : level) {
      const int fan = static_cast<int>(rng.Uniform(1, 3));
      for (int c = 0; c < fan; ++c) {
        QueueSpec q;
        q.path = p + "/q" + std::to_string(c);
        q.weight = static_cast<double>(rng.Uniform(1, 4));
        if (rng.Chance(20)) q.capability = RandomAmounts(rng, w.cluster, 50, 12);
        if (rng.Chance(15)) q.guarantee = RandomAmounts(rng, w.cluster, 50, 3);
        if (rng.Chance(15)) q.min_user_limit_percent = static_cast<int>(rng.Uniform(20, 99));
        if (rng.Chance(10)) q.user_limit_factor = static_cast<double>(rng.Uniform(1, 3)) / 2;
        w.queues.push_back(q);
        next.push_back(q.path);
      }
    }
    level = next;
  }
  if (rng.Chance(15)) w.overcommit = static_cast<double>(rng.Uniform(8, 15)) / 10;
  return w;
}

RandomOp MakeOp(Rng& rng, const RandomWorld& world, const std::vector<std::string>& queues,
                const std::vector<std::string>& jobs, int& next_job) {
  RandomOp op;
  const int roll = static_cast<int>(rng.Uniform(1, 100));
  auto pick_job = [&] { return jobs.empty() ? std::string("nojob") : jobs[rng.Uniform(0, jobs.size() - 1)]; };
  auto pick_queue = [&] { return queues[rng.Uniform(0, queues.size() - 1)]; };
  if (roll <= 14 || jobs.size() < 2) {
    op.kind = RandomOp::Kind::kSubmit;
    op.job.name = std::to_string(next_job++);
    op.job.name.insert(0, 1, 'j');  // not "j" + ...: g++ 12 -Wrestrict false positive
    op.job.queue = rng.Chance(10) ? std::string() : pick_queue();
    op.job.user = "u" + std::to_string(rng.Uniform(0, 2));
    op.job.tasks = rng.Uniform(0, 6);
    op.job.weight = static_cast<double>(rng.Uniform(1, 3));
    op.job.min_available = rng.Uniform(1, 2);
    // Engine::Submit refuses a gang larger than a job of at least one task
    // (docs/spec.md §14); the tree and the reference cap it.
    if (op.job.tasks >= 1 && op.job.min_available > op.job.tasks) op.job.min_available = op.job.tasks;
    for (auto& [r, total] : world.cluster)
      if (rng.Chance(60)) op.job.task[r] = rng.Uniform(0, 3) * 500;
    if (rng.Chance(3)) op.job.task["cpu"] = 1000000;  // too large: refused
  } else if (roll <= 18) {
    op.kind = RandomOp::Kind::kRemove;
    op.name = pick_job();
  } else if (roll <= 38) {
    op.kind = RandomOp::Kind::kAllocate;
    op.name = pick_job();
    op.n = rng.Uniform(1, 2);
  } else if (roll <= 52) {
    op.kind = RandomOp::Kind::kRelease;
    op.name = pick_job();
    op.n = rng.Uniform(1, 2);
  } else if (roll <= 58) {
    op.kind = RandomOp::Kind::kFinish;
    op.name = pick_job();
    op.n = 1;
  } else if (roll <= 88) {
    op.kind = RandomOp::Kind::kStep;
  } else if (roll <= 90) {
    op.kind = RandomOp::Kind::kFill;
  } else if (roll <= 92) {
    op.kind = RandomOp::Kind::kCapacity;
    for (auto& [r, total] : world.cluster) op.cluster[r] = rng.Uniform(2, 16) * 1000;
  } else if (roll <= 94) {
    op.kind = RandomOp::Kind::kCreateQueue;
    op.queue.path = pick_queue() + "/n" + std::to_string(rng.Uniform(0, 3));
    op.queue.weight = static_cast<double>(rng.Uniform(1, 4));
    if (rng.Chance(30)) op.queue.capability = RandomAmounts(rng, world.cluster, 50, 10);
    if (rng.Chance(20)) op.queue.guarantee = RandomAmounts(rng, world.cluster, 50, 2);
  } else if (roll <= 96) {
    op.kind = RandomOp::Kind::kUpdateQueue;
    op.queue.path = pick_queue();
    op.queue.weight = static_cast<double>(rng.Uniform(0, 5));
    if (rng.Chance(40)) op.queue.capability = RandomAmounts(rng, world.cluster, 50, 14);
    if (rng.Chance(30)) op.queue.guarantee = RandomAmounts(rng, world.cluster, 50, 3);
    if (rng.Chance(30)) op.queue.min_user_limit_percent = static_cast<int>(rng.Uniform(10, 100));
    if (rng.Chance(20)) op.queue.user_limit_factor = static_cast<double>(rng.Uniform(1, 4)) / 2;
  } else if (roll <= 98) {
    op.kind = RandomOp::Kind::kSetState;
    op.name = pick_queue();
    op.state = static_cast<QueueState>(rng.Uniform(0, 2));
  } else {
    op.kind = RandomOp::Kind::kDeleteQueue;
    op.name = pick_queue();
  }
  return op;
}

}  // namespace hdrf::testing
