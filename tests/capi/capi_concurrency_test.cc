// The C interface from several threads at once (suite `concurrency`, run
// under ThreadSanitizer by CI): events from many threads are all applied,
// each once; views, metrics and lookups run beside them; close and destroy
// wait for calls in flight and later calls fail cleanly; a follower is
// read and written while it catches up and is promoted; plans raced from
// several threads apply once.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hdrf/c.h"

namespace {

constexpr int kThreads = 8;

hdrf_engine_t* MakeEngine() {
  const char* paths[] = {"root/a", "root/b", "root/c/x", "root/c/y"};
  hdrf_queue_spec_t qs[4];
  for (int i = 0; i < 4; ++i) {
    hdrf_queue_spec_init(&qs[i]);
    qs[i].path = paths[i];
    qs[i].weight = 1 + i;
  }
  hdrf_engine_t* e = nullptr;
  char* err = nullptr;
  EXPECT_EQ(hdrf_engine_create("cpu=64,memory=64Gi", qs, 4, nullptr, &e, &err), HDRF_OK)
      << (err ? err : "");
  hdrf_free(err);
  return e;
}

// "p<t>-<i>" (built with snprintf: g++ 12 warns falsely, -Wrestrict, on
// "literal" + std::to_string(...)).
std::string JobName(char prefix, int t, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%d-%d", prefix, t, i);
  return buf;
}

const char* LeafOf(int t) {
  static const char* leaves[] = {"root/a", "root/b", "root/c/x", "root/c/y"};
  return leaves[t % 4];
}

TEST(CApiConcurrency, EventsFromManyThreadsAreEachAppliedOnce) {
  hdrf_engine_t* e = MakeEngine();
  ASSERT_NE(e, nullptr);
  std::atomic<uint64_t> accepted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      char* err = nullptr;
      uint64_t ok = 0;
      for (int i = 0; i < 60; ++i) {
        const std::string name = JobName('t', t, i);
        if (hdrf_job_submit(e, name.c_str(), LeafOf(t), t % 2 ? "alice" : "bob", 4,
                            "cpu=250m,memory=256Mi", nullptr, &err) == HDRF_OK)
          ++ok;
        if (hdrf_job_allocate(e, name.c_str(), 1, &err) == HDRF_OK) ++ok;
        int stepped = 0;
        char* picked = nullptr;
        if (hdrf_step(e, &stepped, &picked, &err) == HDRF_OK && stepped) ++ok;
        hdrf_free(picked);
        if (hdrf_job_release(e, name.c_str(), 1, &err) == HDRF_OK) ++ok;
        // Views beside the events.
        char digest[HDRF_DIGEST_SIZE];
        EXPECT_EQ(hdrf_digest(e, digest, sizeof digest, &err), HDRF_OK);
        hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
        EXPECT_EQ(hdrf_job_get(e, name.c_str(), &info, &err), HDRF_OK);
        hdrf_queue_info_t q = HDRF_QUEUE_INFO_INIT;
        EXPECT_EQ(hdrf_queue_get(e, LeafOf(t), &q, &err), HDRF_OK);
        char* next = nullptr;
        EXPECT_EQ(hdrf_pick_next(e, &next, &err), HDRF_OK);
        hdrf_free(next);
        if (i % 10 == 0) {
          char* text = nullptr;
          EXPECT_EQ(hdrf_metrics(e, &text, nullptr, &err), HDRF_OK);
          hdrf_free(text);
        }
        if (i % 3 == 0 && hdrf_job_remove(e, name.c_str(), &err) == HDRF_OK) ++ok;
        // Unknown names from many threads: refused, nothing applied.
        EXPECT_EQ(hdrf_job_allocate(e, "ghost", 1, &err), HDRF_NOT_FOUND);
      }
      accepted += ok;
      hdrf_free(err);
    });
  }
  for (auto& th : threads) th.join();
  uint64_t last = 0, jobs = 0;
  ASSERT_EQ(hdrf_last_seq(e, &last, nullptr), HDRF_OK);
  EXPECT_EQ(last, accepted.load());
  ASSERT_EQ(hdrf_job_count(e, &jobs, nullptr), HDRF_OK);
  EXPECT_EQ(jobs, uint64_t{kThreads} * 40);  // 20 of each thread's 60 removed
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

// Destroy while other threads are calling: the calls in flight finish, the
// later ones get HDRF_INVALID_ARGUMENT, nothing crashes or races.
TEST(CApiConcurrency, DestroyWhileInUse) {
  for (int round = 0; round < 3; ++round) {
    hdrf_engine_t* e = MakeEngine();
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(hdrf_job_submit(e, "j", "root/a", nullptr, 1000000, "cpu=1m", nullptr, nullptr), HDRF_OK);
    std::atomic<int> started{0};
    std::atomic<bool> bad{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        char* err = nullptr;
        bool first = true;
        for (;;) {
          hdrf_code c;
          switch (t % 4) {
            case 0: c = hdrf_job_allocate(e, "j", 1, &err); break;
            case 1: c = hdrf_step(e, nullptr, nullptr, &err); break;
            case 2: {
              char* text = nullptr;
              c = hdrf_metrics(e, &text, nullptr, &err);
              hdrf_free(text);
              break;
            }
            default: {
              int64_t n;
              c = hdrf_job_allocated(e, "j", &n, &err);
            }
          }
          if (first) {
            first = false;
            ++started;
          }
          if (c == HDRF_INVALID_ARGUMENT) break;  // destroyed
          if (c != HDRF_OK && c != HDRF_OUT_OF_RANGE) bad = true;  // out of range: cluster full
        }
        hdrf_free(err);
      });
    }
    while (started.load() < kThreads) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    char* err = nullptr;
    EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK) << (err ? err : "");
    for (auto& th : threads) th.join();
    EXPECT_FALSE(bad.load());
    EXPECT_EQ(hdrf_engine_destroy(e, &err), HDRF_INVALID_ARGUMENT);
    hdrf_free(err);
  }
}

// Close while events are applied: afterwards events are refused with
// HDRF_FAILED_PRECONDITION and views still answer.
TEST(CApiConcurrency, CloseWhileInUse) {
  hdrf_engine_t* e = MakeEngine();
  ASSERT_NE(e, nullptr);
  std::atomic<bool> closed{false};
  std::atomic<bool> bad{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      char* err = nullptr;
      for (int i = 0;; ++i) {
        const bool was_closed = closed.load();
        const std::string name = JobName('c', t, i);
        hdrf_code c = hdrf_job_submit(e, name.c_str(), LeafOf(t), nullptr, 1, "cpu=1m", nullptr, &err);
        if (was_closed) {
          if (c != HDRF_FAILED_PRECONDITION) bad = true;
          uint64_t n;
          if (hdrf_job_count(e, &n, &err) != HDRF_OK) bad = true;
          break;
        }
        if (c != HDRF_OK && c != HDRF_FAILED_PRECONDITION) bad = true;
      }
      hdrf_free(err);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(hdrf_engine_close(e, nullptr), HDRF_OK);
  closed = true;
  for (auto& th : threads) th.join();
  EXPECT_FALSE(bad.load());
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

// Each thread drives its own jobs through refs (one call per event, or
// hdrf_apply batches) in a cluster too large to refuse for capacity, so
// every refusal depends on the job's own history only: the parallel run
// must end in the state of the same per-thread sequences run on one thread.
void RunRefOps(hdrf_engine_t* e, const std::vector<hdrf_job_ref_t>& mine, uint32_t seed,
               bool batched, std::atomic<bool>* bad) {
  uint32_t x = seed * 2654435761u + 1;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  std::vector<hdrf_op_t> ops;
  for (int i = 0; i < 3000; ++i) {
    hdrf_op_t op{};
    op.job = mine[next() % mine.size()];
    op.n = 1 + next() % 3;
    const uint32_t r = next() % 10;
    op.type = r < 6 ? HDRF_OP_ALLOCATE : r < 9 ? HDRF_OP_RELEASE : HDRF_OP_FINISH;
    ops.push_back(op);
  }
  if (batched) {
    for (size_t i = 0; i < ops.size(); i += 500) {
      hdrf_code c = hdrf_apply(e, ops.data() + i, 500, sizeof(hdrf_op_t), nullptr, nullptr, nullptr);
      if (c != HDRF_OK && c != HDRF_OUT_OF_RANGE) *bad = true;
    }
    return;
  }
  for (const hdrf_op_t& op : ops) {
    hdrf_code c;
    switch (op.type) {
      case HDRF_OP_ALLOCATE: c = hdrf_job_allocate_ref(e, op.job, op.n, nullptr); break;
      case HDRF_OP_RELEASE: c = hdrf_job_release_ref(e, op.job, op.n, nullptr); break;
      default: c = hdrf_job_finish_ref(e, op.job, op.n, nullptr);
    }
    if (c != HDRF_OK && c != HDRF_OUT_OF_RANGE) *bad = true;
  }
}

std::string RefRun(bool parallel) {
  hdrf_engine_t* e = nullptr;
  const char* paths[] = {"root/a", "root/b", "root/c/x", "root/c/y"};
  hdrf_queue_spec_t qs[4];
  for (int i = 0; i < 4; ++i) {
    hdrf_queue_spec_init(&qs[i]);
    qs[i].path = paths[i];
  }
  EXPECT_EQ(hdrf_engine_create("cpu=100000,memory=100Ti", qs, 4, nullptr, &e, nullptr), HDRF_OK);
  std::vector<std::vector<hdrf_job_ref_t>> refs(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < 5; ++i) {
      hdrf_job_ref_t r{};
      EXPECT_EQ(hdrf_job_submit(e, JobName('r', t, i).c_str(), LeafOf(t), nullptr, 50, "cpu=1",
                                &r, nullptr),
                HDRF_OK);
      refs[t].push_back(r);
    }
  std::atomic<bool> bad{false};
  if (parallel) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] { RunRefOps(e, refs[t], t + 1, t % 2 == 1, &bad); });
    for (auto& th : threads) th.join();
  } else {
    for (int t = 0; t < kThreads; ++t) RunRefOps(e, refs[t], t + 1, t % 2 == 1, &bad);
  }
  EXPECT_FALSE(bad.load());
  char digest[HDRF_DIGEST_SIZE] = "";
  EXPECT_EQ(hdrf_digest(e, digest, sizeof digest, nullptr), HDRF_OK);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
  return digest;
}

TEST(CApiConcurrency, RefsFromManyThreadsMatchOneThread) {
  EXPECT_EQ(RefRun(true), RefRun(false));
}

// Plans for one waiting job made on the same state by 8 threads, then
// applied at once: exactly one applies (one event); the others are stale.
TEST(CApiConcurrency, RacingPlansApplyOnce) {
  hdrf_engine_t* e = MakeEngine();
  ASSERT_NE(e, nullptr);
  hdrf_job_ref_t hog{}, want{};
  ASSERT_EQ(hdrf_job_submit(e, "hog", "root/a", nullptr, 64, "cpu=1", &hog, nullptr), HDRF_OK);
  ASSERT_EQ(hdrf_job_allocate_ref(e, hog, 64, nullptr), HDRF_OK);
  ASSERT_EQ(hdrf_job_submit(e, "want", "root/b", nullptr, 1, "cpu=1", &want, nullptr), HDRF_OK);
  uint64_t seq = 0;
  ASSERT_EQ(hdrf_last_seq(e, &seq, nullptr), HDRF_OK);
  std::atomic<int> made{0}, applied{0}, stale{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      hdrf_plan_t* plan = nullptr;
      EXPECT_EQ(hdrf_plan(e, want, HDRF_PLAN_RECLAIM, -1, &plan, nullptr), HDRF_OK);
      EXPECT_EQ(hdrf_plan_victim_count(plan), 1u);
      made.fetch_add(1);
      while (made.load() < kThreads) std::this_thread::yield();
      const hdrf_code c = hdrf_apply_plan(e, plan, nullptr);
      EXPECT_TRUE(c == HDRF_OK || c == HDRF_ABORTED) << hdrf_code_name(c);
      (c == HDRF_OK ? applied : stale).fetch_add(1);
      hdrf_plan_free(plan);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(applied.load(), 1);
  EXPECT_EQ(stale.load(), kThreads - 1);
  uint64_t after = 0;
  ASSERT_EQ(hdrf_last_seq(e, &after, nullptr), HDRF_OK);
  EXPECT_EQ(after, seq + 1);
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get_ref(e, hog, &info, nullptr), HDRF_OK);
  EXPECT_EQ(info.allocated, 63);
  ASSERT_EQ(hdrf_job_get_ref(e, want, &info, nullptr), HDRF_OK);
  EXPECT_EQ(info.allocated, 1);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

// Ref calls, batches and name lookups racing a destroy, and a new engine
// made in the freed slot at once: every call either runs on the old engine
// or is refused as destroyed; none reaches the new engine.
TEST(CApiConcurrency, RefCallsRacingDestroyNeverReachTheNextEngine) {
  for (int round = 0; round < 3; ++round) {
    hdrf_engine_t* e = MakeEngine();
    hdrf_job_ref_t j{};
    ASSERT_EQ(hdrf_job_submit(e, "j", "root/a", nullptr, 1000000, "cpu=1m", &j, nullptr), HDRF_OK);
    std::atomic<int> started{0};
    std::atomic<bool> bad{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        char* err = nullptr;
        for (bool first = true;; first = false) {
          hdrf_code c;
          if (t == 0) {
            c = hdrf_job_allocate_ref(e, j, 1, &err);
          } else if (t == 1) {
            hdrf_op_t ops[2] = {{j, 1, HDRF_OP_ALLOCATE}, {j, 1, HDRF_OP_RELEASE}};
            c = hdrf_apply(e, ops, 2, sizeof(hdrf_op_t), nullptr, nullptr, &err);
          } else if (t == 2) {
            hdrf_job_ref_t r;
            c = hdrf_job_find(e, "j", &r, &err);
          } else {
            c = hdrf_engine_close(e, &err);
            if (c == HDRF_FAILED_PRECONDITION) c = HDRF_OK;  // closed already
          }
          if (first) ++started;
          if (c == HDRF_INVALID_ARGUMENT) break;  // destroyed
          if (c != HDRF_OK && c != HDRF_OUT_OF_RANGE && c != HDRF_FAILED_PRECONDITION) bad = true;
        }
        hdrf_free(err);
      });
    }
    while (started.load() < 4) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
    hdrf_engine_t* next = MakeEngine();  // likely the same slot
    hdrf_job_ref_t k{};
    ASSERT_EQ(hdrf_job_submit(next, "j", "root/a", nullptr, 1000000, "cpu=1m", &k, nullptr), HDRF_OK);
    for (auto& th : threads) th.join();
    EXPECT_FALSE(bad.load());
    uint64_t seq = 0;
    ASSERT_EQ(hdrf_last_seq(next, &seq, nullptr), HDRF_OK);
    EXPECT_EQ(seq, 1u);  // only its own submission
    EXPECT_EQ(hdrf_job_allocate_ref(next, j, 1, nullptr), HDRF_INVALID_ARGUMENT);
    EXPECT_EQ(hdrf_engine_destroy(next, nullptr), HDRF_OK);
  }
}

// Engines made and destroyed on many threads: handles never collide.
TEST(CApiConcurrency, ManyEnginesManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<bool> bad{false};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        hdrf_engine_t* e = nullptr;
        if (hdrf_engine_create("cpu=4", nullptr, 0, nullptr, &e, nullptr) != HDRF_OK) bad = true;
        if (hdrf_job_submit(e, "j", nullptr, nullptr, 8, "cpu=1", nullptr, nullptr) != HDRF_OK) bad = true;
        int64_t steps = 0;
        if (hdrf_fill(e, &steps, nullptr) != HDRF_OK || steps != 4) bad = true;
        if (hdrf_engine_destroy(e, nullptr) != HDRF_OK) bad = true;
        if (hdrf_engine_destroy(e, nullptr) != HDRF_INVALID_ARGUMENT) bad = true;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(bad.load());
}

// A follower catching up every millisecond with a writer of this process,
// read and sent events by 4 threads while it is promoted: events are
// refused while it follows and applied once after, views and lag answer
// throughout.
TEST(CApiConcurrency, FollowerReadAndWrittenWhilePromoted) {
  char tmpl[] = "/tmp/hdrf_capi_conc_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string db = std::string(tmpl) + "/db";
  char* err = nullptr;
  hdrf_options_t* o = hdrf_options_create();
  ASSERT_EQ(hdrf_options_set_db_path(o, db.c_str(), &err), HDRF_OK);
  hdrf_engine_t* w = nullptr;
  hdrf_queue_spec_t q;
  hdrf_queue_spec_init(&q);
  q.path = "root/a";
  ASSERT_EQ(hdrf_engine_create("cpu=1000000", &q, 1, o, &w, &err), HDRF_OK) << err;
  hdrf_options_destroy(o);
  ASSERT_EQ(hdrf_job_submit(w, "j", "root/a", nullptr, 1000000, "cpu=1", nullptr, &err), HDRF_OK);
  hdrf_follower_options_t fo;
  hdrf_follower_options_init(&fo);
  fo.catch_up_interval_ms = 1;
  hdrf_engine_t* f = nullptr;
  ASSERT_EQ(hdrf_engine_open_follower(db.c_str(), &fo, &f, &err), HDRF_OK) << err;
  hdrf_job_ref_t j{0, 0};
  ASSERT_EQ(hdrf_job_find(f, "j", &j, &err), HDRF_OK) << err;

  std::atomic<bool> stop{false};
  std::atomic<int64_t> accepted{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      char* e = nullptr;
      while (!stop.load()) {
        hdrf_code c = HDRF_OK;
        switch (t) {
          case 0:
          case 1:
            c = hdrf_job_allocate_ref(f, j, 1, &e);
            if (c == HDRF_OK) accepted.fetch_add(1);
            else if (c != HDRF_FAILED_PRECONDITION) bad.fetch_add(1);
            continue;
          case 2: {
            hdrf_follower_lag_t lag = HDRF_FOLLOWER_LAG_INIT;
            c = hdrf_follower_lag(f, &lag, &e);
            break;
          }
          default: {
            char buf[HDRF_DIGEST_SIZE];
            c = hdrf_digest(f, buf, sizeof buf, &e);
          }
        }
        if (c != HDRF_OK) bad.fetch_add(1);
      }
      hdrf_free(e);
    });
  }
  for (int i = 0; i < 50; ++i) ASSERT_EQ(hdrf_job_allocate(w, "j", 1, &err), HDRF_OK) << err;
  ASSERT_EQ(hdrf_engine_close(w, &err), HDRF_OK) << err;
  ASSERT_EQ(hdrf_follower_promote(f, 10000, nullptr, &err), HDRF_OK) << err;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (accepted.load() < 10 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GE(accepted.load(), 10);
  int64_t allocated = -1;
  ASSERT_EQ(hdrf_job_allocated(f, "j", &allocated, &err), HDRF_OK);
  EXPECT_EQ(allocated, 50 + accepted.load());  // the writer's, then each accepted once
  EXPECT_EQ(hdrf_engine_destroy(f, &err), HDRF_OK) << err;
  EXPECT_EQ(hdrf_engine_destroy(w, &err), HDRF_OK) << err;
  hdrf_free(err);
  (void)std::system(("rm -rf '" + std::string(tmpl) + "'").c_str());
}

}  // namespace
