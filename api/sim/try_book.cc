// TryBook (api/sim/try_book.h).
#include "api/sim/try_book.h"

#include <algorithm>

namespace hdrf::sim {

void TryBook::Init(const std::vector<QueueInfo>& queues, size_t jobs) {
  QueueId ids = 0;
  for (const QueueInfo& q : queues) ids = std::max(ids, q.id + 1);
  eng_parent_.assign(ids, engine::kNone);
  stats_of_.assign(ids, UINT32_MAX);
  eng_leaf_.assign(queues.size(), engine::kNone);
  for (size_t q = 0; q < queues.size(); ++q) {
    for (QueueId c : queues[q].children) eng_parent_.at(c) = queues[q].id;
    stats_of_[queues[q].id] = static_cast<uint32_t>(q);
    if (queues[q].is_leaf) eng_leaf_[q] = queues[q].id;
  }
  untried_.assign(ids, 0);
  waiting_.assign(ids, 0);
  leaf_keys_.assign(queues.size(), {});
  leaf_jobs_.assign(queues.size(), LeafJobs{});
  leaf_phase_.assign(queues.size(), 0);
  leaf_mark_.assign(queues.size(), 0);
  jobs_.assign(jobs, JobBook{});
}

bool TryBook::Update(uint32_t i, uint32_t leaf, bool waiting, const TryKey& key, uint64_t seq, bool holds) {
  JobBook& b = jobs_[i];
  if (b.key && waiting && *b.key->key == key && b.holds == holds) return true;  // no change
  if (leaf >= eng_leaf_.size() || eng_leaf_[leaf] == engine::kNone) return !waiting;
  const bool was = b.key != nullptr;
  Leave(i);
  b.leaf = leaf;
  b.seq = seq;
  b.holds = holds;
  if (waiting) Join(i, key, !was);
  return true;
}

bool TryBook::Tried(uint32_t i) const {
  const JobBook& b = jobs_[i];
  return b.tried || (b.key && leaf_phase_[b.leaf] == phase_ && b.since < leaf_mark_[b.leaf]);
}

void TryBook::MarkTried(uint32_t i) {
  JobBook& b = jobs_[i];
  if (!b.key || Tried(i)) return;
  b.tried = true;
  tried_now_.push_back(i);
  --b.key->untried;
  Touch(b.key);
  Count(b.leaf, -1);
}

void TryBook::MarkLeafTried(uint32_t leaf) {
  for (KeyJobs* k : leaf_keys_[leaf]) {
    k->untried = 0;
    Touch(k);
  }
  Count(leaf, -untried_[eng_leaf_[leaf]]);
  leaf_phase_[leaf] = phase_;
  leaf_mark_[leaf] = ++clock_;
  for (KeyJobs* k : leaf_keys_[leaf]) {
    k->mark_phase = phase_;
    k->mark_seq = UINT64_MAX;
  }
}

std::set<std::pair<uint64_t, uint32_t>>::iterator TryBook::IdleFront(KeyJobs* k) {
  auto it = k->mark_phase == phase_ ? k->idle.lower_bound({k->mark_seq, 0}) : k->idle.begin();
  while (it != k->idle.end() && Tried(it->second)) ++it;
  k->mark_phase = phase_;
  k->mark_seq = it == k->idle.end() ? UINT64_MAX : it->first;
  return it;
}

uint32_t TryBook::FirstUntriedIdle(KeyJobs* k) {
  if (k->untried == 0) return kNoJob;
  auto it = IdleFront(k);
  return it == k->idle.end() ? kNoJob : it->second;
}

// MarkTried for each, with the counts changed once; the mark then stands
// past them.
void TryBook::MarkIdleTriedBelow(KeyJobs* k, uint64_t seq) {
  if (k->untried == 0) return;
  int64_t n = 0;
  auto it = IdleFront(k);
  for (; it != k->idle.end() && it->first < seq; ++it) {
    if (Tried(it->second)) continue;
    jobs_[it->second].tried = true;
    tried_now_.push_back(it->second);
    ++n;
  }
  k->mark_seq = it == k->idle.end() ? UINT64_MAX : it->first;
  if (n == 0) return;
  k->untried -= n;
  Touch(k);
  Count(jobs_[tried_now_.back()].leaf, -n);
}

void TryBook::LeafCandidates(uint32_t leaf, size_t n, std::vector<uint32_t>* out) {
  out->clear();
  for (uint32_t i : leaf_jobs_[leaf].holding)
    if (!Tried(i)) out->push_back(i);
  // The keys' idle jobs merged by seq, each key from its mark.
  using It = std::set<std::pair<uint64_t, uint32_t>>::iterator;
  thread_local std::vector<std::pair<It, It>> runs;
  runs.clear();
  for (KeyJobs* k : leaf_keys_[leaf])
    if (k->untried > 0) runs.emplace_back(IdleFront(k), k->idle.end());
  for (size_t taken = 0; taken < n;) {
    std::pair<It, It>* best = nullptr;
    for (auto& r : runs) {
      while (r.first != r.second && Tried(r.first->second)) ++r.first;
      if (r.first != r.second && (!best || r.first->first < best->first->first)) best = &r;
    }
    if (!best) break;
    out->push_back(best->first->second);
    ++best->first;
    ++taken;
  }
}

void TryBook::EndPhase() {
  for (KeyJobs* k : touched_) k->untried = static_cast<int64_t>(k->jobs.size());
  touched_.clear();
  for (uint32_t i : tried_now_) jobs_[i].tried = false;
  tried_now_.clear();
  untried_ = waiting_;
  ++phase_;
}

// Job i stops waiting with its key: a tried job stays tried (a job tried
// with its leaf as a whole gets its own mark, since it no longer waits
// since before the leaf's mark once it waits again).
void TryBook::Leave(uint32_t i) {
  JobBook& b = jobs_[i];
  if (!b.key) return;
  KeyJobs* k = b.key;
  if (Tried(i)) {
    if (!b.tried) {
      b.tried = true;
      tried_now_.push_back(i);
    }
  } else {
    --k->untried;
    Count(b.leaf, -1);
  }
  const uint32_t last = k->jobs.back();
  k->jobs[b.pos] = last;
  jobs_[last].pos = b.pos;
  k->jobs.pop_back();
  if (b.holds) {
    LeafJobs& l = leaf_jobs_[b.leaf];
    const uint32_t h = l.holding.back();
    l.holding[b.hpos] = h;
    jobs_[h].hpos = b.hpos;
    l.holding.pop_back();
  } else {
    k->idle.erase({b.seq, i});
  }
  if (k->jobs.empty()) {
    std::vector<KeyJobs*>& lk = leaf_keys_[b.leaf];
    lk.erase(std::find(lk.begin(), lk.end(), k));
  }
  for (QueueId q = eng_leaf_[b.leaf]; q != engine::kNone; q = eng_parent_[q]) --waiting_[q];
  b.key = nullptr;
}

void TryBook::Join(uint32_t i, const TryKey& key, bool began) {
  JobBook& b = jobs_[i];
  auto [it, fresh] = keys_.try_emplace(key);
  KeyJobs* k = &it->second;
  if (fresh) k->key = &it->first;
  if (k->jobs.empty()) leaf_keys_[b.leaf].push_back(k);
  b.pos = static_cast<uint32_t>(k->jobs.size());
  k->jobs.push_back(i);
  b.key = k;
  if (began) b.since = ++clock_;
  for (QueueId q = eng_leaf_[b.leaf]; q != engine::kNone; q = eng_parent_[q]) ++waiting_[q];
  if (b.holds) {
    LeafJobs& l = leaf_jobs_[b.leaf];
    b.hpos = static_cast<uint32_t>(l.holding.size());
    l.holding.push_back(i);
  } else {
    k->idle.emplace(b.seq, i);
  }
  if (Tried(i)) {
    Touch(k);  // its untried count is below its job count until EndPhase
  } else {
    ++k->untried;
    Count(b.leaf, 1);
    if (!b.holds && k->mark_phase == phase_ && b.seq < k->mark_seq) k->mark_seq = b.seq;
  }
}

void TryBook::Count(uint32_t leaf, int64_t d) {
  for (QueueId q = eng_leaf_[leaf]; q != engine::kNone; q = eng_parent_[q]) untried_[q] += d;
}

void TryBook::Touch(KeyJobs* k) {
  if (k->phase == phase_) return;
  k->phase = phase_;
  touched_.push_back(k);
}

}  // namespace hdrf::sim
