// The event stream of a bench World as one thread of a benchmark sees it:
// the events of the jobs it owns, forward and then backward with the
// directions inverted, so that the stream can cycle forever and every
// event stays valid. Shared by engine_bench and capi_bench so that the C++
// API, the C interface and the batch calls run the very same events.
#ifndef HDRF_BENCH_EVENT_STREAM_H_
#define HDRF_BENCH_EVENT_STREAM_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_world.h"

namespace hdrf::bench {

class EventStream {
 public:
  // Thread `me` of `threads` owns the jobs with index % threads == me or,
  // with `by_top_queue`, the jobs under every threads-th top-level queue
  // (each lock shard is then written by one thread only).
  EventStream(const World& w, int threads, int me, bool by_top_queue = false) : w_(w) {
    std::map<std::string, int> tops;  // top-level queue -> index
    std::vector<int> top_of(w.specs.size(), 0);
    for (size_t j = 0; j < w.specs.size() && by_top_queue; ++j) {
      const std::string& path = w.specs[j].queue;
      const std::string top = path.substr(0, path.find('/', path.find('/') + 1));
      top_of[j] = tops.emplace(top, static_cast<int>(tops.size())).first->second;
    }
    auto owner = [&](uint32_t job) {
      return static_cast<int>(by_top_queue ? top_of[job] % threads : job % threads);
    };
    for (uint32_t i = 0; i < w.event_job.size(); ++i)
      if (owner(w.event_job[i]) == me) mine_.push_back(i);
    refs_.reserve(mine_.size());
    for (uint32_t i : mine_) refs_.push_back(w.jobs[w.event_job[i]]);
  }

  // Whether this thread owns no event (more threads than top-level queues).
  bool empty() const { return mine_.empty(); }

  // The next event: a job index of the World and +1 (allocate) / -1 (release).
  void Next(uint32_t* job, int* dir) {
    const size_t k = Advance(dir);
    *job = w_.event_job[mine_[k]];
  }

  // The same, with the job's JobRef as the event carries it: read from this
  // stream's own copy in event order (a sequential read), not from the
  // World's table of 10^3..10^7 refs (a random read, the benchmark's own
  // cache miss, which an embedder whose events carry their ref never pays).
  void NextRef(JobRef* job, int* dir) { *job = refs_[Advance(dir)]; }

  // Calls apply(job, dir) with the inverse of every event given since the
  // stream last passed its start, newest first: the World is back in its
  // state before the first forward pass.
  template <typename F>
  void Undo(F&& apply) {
    auto undo = [&](uint32_t i) { apply(w_.event_job[i], -w_.event_dir[i]); };
    if (forward_) {
      for (size_t k = pos_; k-- > 0;) undo(mine_[k]);
    } else {
      for (size_t k = pos_; k < mine_.size(); ++k) undo(mine_[mine_.size() - 1 - k]);
    }
    pos_ = 0;
    forward_ = true;
  }

 private:
  // The index into mine_ of the next event, whose direction goes to *dir;
  // moves the stream on by one.
  size_t Advance(int* dir) {
    const size_t k = forward_ ? pos_ : mine_.size() - 1 - pos_;
    *dir = forward_ ? w_.event_dir[mine_[k]] : -w_.event_dir[mine_[k]];
    if (++pos_ == mine_.size()) {
      pos_ = 0;
      forward_ = !forward_;
    }
    return k;
  }

  const World& w_;
  std::vector<uint32_t> mine_;  // indices into w.event_job
  std::vector<JobRef> refs_;    // refs_[k]: the JobRef of event mine_[k]
  size_t pos_ = 0;
  bool forward_ = true;
};

}  // namespace hdrf::bench

#endif  // HDRF_BENCH_EVENT_STREAM_H_
