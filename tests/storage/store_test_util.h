// Helpers shared by the store tests (store_test.cc, damaged_store_test.cc).
#ifndef HDRF_TESTS_STORAGE_STORE_TEST_UTIL_H_
#define HDRF_TESTS_STORAGE_STORE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "tests/storage/storage_util.h"

namespace hdrf::storage_test {

// A store at `db` with durability `d`, a checkpoint every `every` events
// and none scaled by the jobs.
inline EngineOptions Opts(const std::string& db, Durability d = Durability::kSync, uint64_t every = 1000000) {
  EngineOptions o;
  o.db_path = db;
  o.durability = d;
  o.checkpoint_every = every;
  o.checkpoint_events_per_job = 0;  // `every` alone, however many jobs
  return o;
}

inline std::unique_ptr<Engine> MustCreate(const EngineOptions& o) {
  auto e = Engine::Create(TestCluster(), TestQueues(), o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

inline std::unique_ptr<Engine> MustOpen(const EngineOptions& o) {
  auto e = Engine::Open(o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

inline void ApplyAll(Engine& e, const std::vector<Event>& stream, size_t from = 0, size_t to = SIZE_MAX) {
  for (size_t i = from; i < stream.size() && i < to; ++i) {
    Status s = e.Apply(stream[i]);
    ASSERT_TRUE(s.ok()) << "event " << i << ": " << s.ToString();
  }
}

// The resource names of TestCluster(), in the store's order.
inline std::vector<std::string> Names() { return {"cpu", "memory", "nvidia.com/gpu"}; }

}  // namespace hdrf::storage_test

#endif  // HDRF_TESTS_STORAGE_STORE_TEST_UTIL_H_
