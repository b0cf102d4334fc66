#include "tests/storage/storage_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace hdrf::storage_test {
namespace fs = std::filesystem;

ResourceAmounts TestCluster() {
  return {{"cpu", 64000}, {"memory", int64_t{256} << 30}, {"nvidia.com/gpu", 8000}};
}

std::vector<QueueSpec> TestQueues() {
  std::vector<QueueSpec> q(6);
  q[0].path = "root/eng";
  q[0].weight = 2;
  q[0].capability = {{"cpu", 48000}};
  q[0].guarantee = {{"cpu", 8000}};
  q[1].path = "root/eng/dev";
  q[2].path = "root/eng/prod";
  q[2].guarantee = {{"cpu", 4000}};
  q[2].min_user_limit_percent = 50;
  q[3].path = "root/sci";
  q[3].reclaimable = false;
  q[4].path = "root/sci/a";
  q[4].weight = 3;
  q[5].path = "root/sci/b";
  q[5].guarantee = {{"nvidia.com/gpu", 2000}};
  q[5].user_limit_factor = 2;
  return q;
}

namespace {

struct LiveJob {
  std::string name;
  uint64_t seq;
};

Event TaskEvent(Event::Type t, uint64_t seq, int64_t n) {
  Event e;
  e.type = t;
  e.job_seq = seq;
  e.n = n;
  return e;
}

}  // namespace

struct StreamGen::Impl {
  explicit Impl(uint64_t seed) : rng(seed) {}
  Rng rng;
  std::unique_ptr<Engine> eng = std::move(Engine::Create(TestCluster(), TestQueues()).value());
  std::vector<LiveJob> jobs;
  std::vector<std::string> extra_queues;  // created by the stream
  int next_job = 0, next_queue = 0;
};

StreamGen::StreamGen(uint64_t seed, int other_percent)
    : impl_(std::make_unique<Impl>(seed)), other_percent_(other_percent) {}
StreamGen::~StreamGen() = default;

Event StreamGen::Next() {
  Rng& rng = impl_->rng;
  Engine* eng = impl_->eng.get();
  auto& jobs = impl_->jobs;
  auto& extra_queues = impl_->extra_queues;
  int& next_job = impl_->next_job;
  int& next_queue = impl_->next_queue;
  const char* users[] = {"alice", "bob", "carol", "dave"};
  const char* leaves[] = {"root/eng/dev", "root/eng/prod", "root/sci/a", "root/sci/b", "root/eng",
                          "root/sci", ""};
  for (size_t attempts = 0;; ++attempts) {
    if (attempts > 100000) throw std::runtime_error("StreamGen: stuck");
    Event e;
    const bool other = jobs.size() < 3 || rng.Chance(other_percent_);
    if (!other) {
      const LiveJob& j = jobs[rng.Uniform(0, static_cast<int64_t>(jobs.size()) - 1)];
      auto info = eng->GetJob(j.name);
      if (!info.ok()) throw std::runtime_error("MakeStream: lost a job");
      const int64_t room = info->tasks - info->allocated;
      // Allocate into a job with room while the cluster has some; else
      // release or finish running tasks.
      if (room > 0 && (info->allocated == 0 || rng.Chance(55)))
        e = TaskEvent(Event::Type::kAllocate, j.seq, rng.Uniform(1, std::min<int64_t>(3, room)));
      else if (info->allocated > 0 && rng.Chance(75))
        e = TaskEvent(Event::Type::kRelease, j.seq, rng.Uniform(1, std::min<int64_t>(2, info->allocated)));
      else if (info->allocated > 0)
        e = TaskEvent(Event::Type::kFinish, j.seq, 1);
      else
        e = TaskEvent(Event::Type::kRemove, j.seq, 0);
      // A full cluster refuses allocations: free something instead.
      if (e.type == Event::Type::kAllocate && !eng->Apply(e).ok()) {
        const LiveJob& k = jobs[rng.Uniform(0, static_cast<int64_t>(jobs.size()) - 1)];
        auto ki = eng->GetJob(k.name);
        if (ki.ok() && ki->allocated > 0) e = TaskEvent(Event::Type::kRelease, k.seq, 1);
        else continue;
      } else if (e.type == Event::Type::kAllocate) {
        goto accepted;
      }
    } else {
      int r = static_cast<int>(rng.Uniform(0, 99));
      if (jobs.size() > 300 && r < 55) r = 60;  // keep the job count bounded
      if (r < 55 || jobs.size() < 3) {
        e.type = Event::Type::kSubmit;
        e.job.name = "job-" + std::to_string(next_job++);
        if (!extra_queues.empty() && rng.Chance(10))
          e.job.queue = extra_queues[rng.Uniform(0, static_cast<int64_t>(extra_queues.size()) - 1)];
        else
          e.job.queue = leaves[rng.Uniform(0, 6)];
        e.job.user = users[rng.Uniform(0, 3)];
        e.job.tasks = rng.Uniform(1, 20);
        e.job.task["cpu"] = 250 * rng.Uniform(1, 8);
        if (rng.Chance(50)) e.job.task["memory"] = int64_t{1} << (28 + rng.Uniform(0, 4));
        if (rng.Chance(20)) e.job.task["nvidia.com/gpu"] = 1000;
        e.job.weight = static_cast<double>(rng.Uniform(1, 3));
        e.job.min_available = rng.Uniform(1, 3);
      } else if (r < 70) {
        const LiveJob& j = jobs[rng.Uniform(0, static_cast<int64_t>(jobs.size()) - 1)];
        e = TaskEvent(Event::Type::kRemove, j.seq, 0);
      } else if (r < 78 && extra_queues.size() < 12) {
        e.type = Event::Type::kCreateQueue;
        e.queue.path = std::string(rng.Chance(50) ? "root/eng/" : "root/sci/") + "x" +
                       std::to_string(next_queue++);
        e.queue.weight = static_cast<double>(rng.Uniform(1, 4));
        if (rng.Chance(30)) e.queue.capability["cpu"] = 1000 * rng.Uniform(4, 40);
      } else if (r < 86) {
        e.type = Event::Type::kUpdateQueue;
        const auto qs = TestQueues();
        e.queue = qs[rng.Uniform(0, static_cast<int64_t>(qs.size()) - 1)];
        e.queue.weight = static_cast<double>(rng.Uniform(1, 5));
        if (e.queue.capability.count("cpu") && rng.Chance(50))
          e.queue.capability["cpu"] = 1000 * rng.Uniform(16, 64);
      } else if ((r < 92 || extra_queues.size() >= 12) && !extra_queues.empty()) {
        const std::string& p = extra_queues[rng.Uniform(0, static_cast<int64_t>(extra_queues.size()) - 1)];
        if (rng.Chance(40)) {
          e.type = Event::Type::kSetQueueState;
          e.path = p;
          e.state = rng.Chance(70) ? QueueState::kClosed : static_cast<QueueState>(rng.Uniform(0, 1));
        } else {
          e.type = Event::Type::kDeleteQueue;
          e.path = p;
        }
      } else {
        e.type = Event::Type::kSetCapacity;
        e.cluster = TestCluster();
        e.cluster["cpu"] = 1000 * rng.Uniform(40, 80);
        e.cluster["nvidia.com/gpu"] = 1000 * rng.Uniform(4, 10);
      }
    }
    if (!eng->Apply(e).ok()) continue;
  accepted:
    switch (e.type) {
      case Event::Type::kSubmit:
        jobs.push_back({e.job.name, eng->FindJob(e.job.name)->seq});
        break;
      case Event::Type::kRemove:
        for (size_t i = 0; i < jobs.size(); ++i)
          if (jobs[i].seq == e.job_seq) {
            jobs.erase(jobs.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        break;
      case Event::Type::kCreateQueue:
        extra_queues.push_back(e.queue.path);
        break;
      case Event::Type::kDeleteQueue:
        for (size_t i = 0; i < extra_queues.size(); ++i)
          if (extra_queues[i] == e.path) {
            extra_queues.erase(extra_queues.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        break;
      default:
        break;
    }
    return e;
  }
}

std::vector<Event> MakeStream(uint64_t seed, const StreamOptions& o) {
  StreamGen gen(seed, o.other_percent);
  std::vector<Event> out;
  out.reserve(o.events);
  while (out.size() < o.events) out.push_back(gen.Next());
  return out;
}

uint64_t PrefixDigest(const std::vector<Event>& stream, size_t n) {
  auto eng = std::move(Engine::Create(TestCluster(), TestQueues()).value());
  for (size_t i = 0; i < n && i < stream.size(); ++i)
    if (!eng->Apply(stream[i]).ok()) throw std::runtime_error("PrefixDigest: event refused");
  return eng->Digest();
}

TempDir::TempDir(const std::string& tag) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/hdrf-" + tag + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::map<std::string, uint64_t> Fingerprint(const std::string& dir) {
  std::map<std::string, uint64_t> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
    out[fs::relative(entry.path(), dir).string()] = h;
  }
  return out;
}

void CopyDir(const std::string& from, const std::string& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

std::vector<std::string> FilesWithSuffix(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void FlipByte(const std::string& file, size_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

size_t FileSize(const std::string& file) { return static_cast<size_t>(fs::file_size(file)); }

Child::Child(const std::vector<std::string>& argv) {
  int p[2];
  if (pipe(p) != 0) throw std::runtime_error("pipe failed");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execv(args[0], args.data());
    std::perror("execv");
    _exit(127);
  }
  close(p[1]);
  fd_ = p[0];
}

Child::~Child() {
  if (!reaped_) {
    Kill(SIGKILL);
    Wait();
  }
  if (fd_ >= 0) close(fd_);
}

bool Child::Poll(int timeout_ms) {
  if (fd_ < 0) return false;
  struct pollfd pfd = {fd_, POLLIN, 0};
  if (poll(&pfd, 1, timeout_ms) <= 0) return true;
  char buf[65536];
  ssize_t n = read(fd_, buf, sizeof buf);
  if (n <= 0) {
    close(fd_);
    fd_ = -1;
    return false;
  }
  partial_.append(buf, static_cast<size_t>(n));
  size_t nl;
  while ((nl = partial_.find('\n')) != std::string::npos) {
    lines_.push_back(partial_.substr(0, nl));
    partial_.erase(0, nl + 1);
  }
  return true;
}

int Child::Wait() {
  while (Poll(1000)) {
  }
  if (!reaped_) {
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  return status_;
}

void Child::Kill(int sig) {
  if (!reaped_ && pid_ > 0) kill(pid_, sig);
}

std::string ChildPath() {
  const char* p = std::getenv("HDRF_STORAGE_CHILD");
  return p ? p : "";
}

ResourceAmounts PlanCluster() { return {{"cpu", 48000}, {"nvidia.com/gpu", 24000}}; }

std::vector<QueueSpec> PlanQueues() {
  std::vector<QueueSpec> q(3);
  const char* paths[] = {"root/a", "root/b", "root/c"};
  // No guarantees: one would hold room back for the waiting queue, and
  // its job would start without a plan. The plans move shares (§15).
  for (int i = 0; i < 3; ++i) {
    q[i].path = paths[i];
    q[i].weight = i == 1 ? 2 : 1;
  }
  return q;
}

Status RunPlanWorkload(Engine& e, uint64_t seed, uint64_t max_rounds,
                       const std::function<bool(const char* kind, size_t victims)>& after) {
  Rng rng(seed);
  const char* queues[] = {"root/a", "root/b", "root/c"};
  auto job = [&](const std::string& name, const char* queue, int64_t tasks, int64_t m) {
    JobSpec j;
    j.name = name;
    j.queue = queue;
    j.user = rng.Chance(50) ? "alice" : "bob";
    j.tasks = tasks;
    j.min_available = m;
    j.task = {{"cpu", 2000}, {"nvidia.com/gpu", 1000}};
    return j;
  };
  for (uint64_t round = 0; round < max_rounds; ++round) {
    const std::string prefix = "r" + std::to_string(round) + "-";
    const int w = static_cast<int>(rng.Uniform(0, 2));
    std::vector<JobRef> jobs;
    // Contention: the two other queues ask for more than the cluster's 24
    // GPUs, and the steps give them all of it.
    int64_t asked = 0;
    for (int k = 0; asked < 28; ++k) {
      const char* q = queues[(w + 1 + k % 2) % 3];
      const int64_t tasks = rng.Uniform(4, 12);
      const int64_t m = rng.Chance(30) ? rng.Uniform(2, 3) : 1;
      auto r = e.Submit(job(prefix + "j" + std::to_string(k), q, tasks, m));
      if (!r.ok()) return r.status();
      jobs.push_back(*r);
      asked += tasks;
      if (!after("submit", 0)) return Status();
    }
    for (;;) {
      auto s = e.Step();
      if (!s.ok()) return s.status();
      if (!s->has_value()) break;
      if (!after("step", 0)) return Status();
    }
    // The waiting job, a gang one time in three.
    auto r = e.Submit(job(prefix + "wait", queues[w], rng.Uniform(4, 10), rng.Chance(35) ? rng.Uniform(2, 4) : 1));
    if (!r.ok()) return r.status();
    jobs.push_back(*r);
    if (!after("submit", 0)) return Status();
    for (int tries = 0; tries < 40; ++tries) {
      auto p = e.Plan(*r, {PlanMode::kReclaim});
      if (!p.ok()) {
        if (p.status().code() == StatusCode::kFailedPrecondition) break;  // nothing left to wait for
        return p.status();
      }
      if (!p->fits) break;
      if (p->victims.empty()) {
        // Room now (a gang victim freed more than the demand): a step.
        auto s = e.Step();
        if (!s.ok()) return s.status();
        if (!s->has_value()) break;
        if (!after("step", 0)) return Status();
        continue;
      }
      Status s = e.ApplyPlan(*p);
      if (!s.ok()) return s;
      if (!after("plan", p->victims.size())) return Status();
    }
    for (const JobRef& j : jobs) {
      Status s = e.Remove(j);
      if (!s.ok()) return s;
      if (!after("remove", 0)) return Status();
    }
  }
  return Status();
}

Acks ParseAcks(const std::vector<std::string>& lines) {
  Acks a;
  for (const std::string& l : lines) {
    std::istringstream in(l);
    std::string word;
    in >> word;
    if (word == "ready") a.ready = true;
    if (word == "acked") {
      uint64_t d = 0, last = 0;
      in >> d >> last;
      a.max_durable = std::max(a.max_durable, d);
      a.max_last = std::max(a.max_last, last);
      ++a.count;
    }
    if (word == "error") a.error = l;
    if (word == "refused" || word == "accepted") a.after_error = l;
  }
  return a;
}

}  // namespace hdrf::storage_test
