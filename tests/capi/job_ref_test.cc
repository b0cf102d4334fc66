// The C interface's fast path (hdrf/c.h "job refs", hdrf_apply_op,
// hdrf_apply) and its handle table: refs give the same state as the
// name-based calls, stale, foreign and empty refs are refused,
// hdrf_apply_op matches the dedicated call of each type and refuses any
// other type, hdrf_apply's per-op results match the same ops made one
// call at a time, and engine slots are reused
// without a destroyed handle ever reaching the new engine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hdrf/c.h"
#include "tests/capi/c_err.h"

namespace {

using ::testing::HasSubstr;

using hdrf::testing::Digest;
using hdrf::testing::Err;
using hdrf::testing::LastSeq;

// Four top-level queues with one leaf each; `jobs` jobs per leaf.
hdrf_engine_t* Engine(int jobs, std::vector<hdrf_job_ref_t>* refs,
                      const hdrf_options_t* options = nullptr) {
  Err err;
  hdrf_engine_t* e = nullptr;
  std::vector<std::string> paths;
  std::vector<hdrf_queue_spec_t> qs(4);
  for (int q = 0; q < 4; ++q) paths.push_back("root/q" + std::to_string(q) + "/leaf");
  for (int q = 0; q < 4; ++q) {
    hdrf_queue_spec_init(&qs[q]);
    qs[q].path = paths[q].c_str();
  }
  EXPECT_EQ(hdrf_engine_create("cpu=1000,memory=1Ti", qs.data(), 4, options, &e, &err), HDRF_OK)
      << err.str();
  for (int q = 0; q < 4; ++q) {
    const std::string& path = paths[q];
    for (int j = 0; j < jobs; ++j) {
      const std::string name = "j" + std::to_string(q) + "-" + std::to_string(j);
      hdrf_job_ref_t r{};
      EXPECT_EQ(hdrf_job_submit(e, name.c_str(), path.c_str(), nullptr, 8, "cpu=1,memory=1Gi", &r,
                                &err),
                HDRF_OK)
          << err.str();
      if (refs) refs->push_back(r);
    }
  }
  return e;
}

std::string NameOf(int i) { return "j" + std::to_string(i / 3) + "-" + std::to_string(i % 3); }

// The same random ops through refs on one engine and through names on a
// twin: every call gets the same code, and the two end in the same state.
TEST(JobRef, SameResultsAsTheNameBasedCalls) {
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* a = Engine(3, &refs);
  hdrf_engine_t* b = Engine(3, nullptr);
  std::mt19937 rng(7);
  Err ea, eb;
  for (int i = 0; i < 2000; ++i) {
    const int j = static_cast<int>(rng() % refs.size());
    const int64_t n = 1 + static_cast<int64_t>(rng() % 3);
    const std::string name = NameOf(j);
    hdrf_code ca, cb;
    switch (rng() % 10) {
      case 0:
        ca = hdrf_job_finish_ref(a, refs[j], n, &ea);
        cb = hdrf_job_finish(b, name.c_str(), n, &eb);
        break;
      case 1:
      case 2:
      case 3:
        ca = hdrf_job_release_ref(a, refs[j], n, &ea);
        cb = hdrf_job_release(b, name.c_str(), n, &eb);
        break;
      default:
        ca = hdrf_job_allocate_ref(a, refs[j], n, &ea);
        cb = hdrf_job_allocate(b, name.c_str(), n, &eb);
    }
    ASSERT_EQ(ca, cb) << i << ": " << ea.str() << " / " << eb.str();
  }
  EXPECT_EQ(Digest(a), Digest(b));
  hdrf_job_info_t ia = HDRF_JOB_INFO_INIT, ib = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get_ref(a, refs[4], &ia, nullptr), HDRF_OK);
  ASSERT_EQ(hdrf_job_get(b, NameOf(4).c_str(), &ib, nullptr), HDRF_OK);
  EXPECT_EQ(ia.allocated, ib.allocated);
  EXPECT_EQ(ia.tasks, ib.tasks);
  EXPECT_EQ(ia.seq, ib.seq);
  EXPECT_EQ(hdrf_engine_destroy(a, nullptr), HDRF_OK);
  EXPECT_EQ(hdrf_engine_destroy(b, nullptr), HDRF_OK);
}

TEST(JobRef, FindStepAndRemove) {
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* e = Engine(2, &refs);
  Err err;
  hdrf_job_ref_t r{};
  ASSERT_EQ(hdrf_job_find(e, "j1-1", &r, &err), HDRF_OK) << err.str();
  EXPECT_EQ(r.id, refs[3].id);
  EXPECT_EQ(r.seq, refs[3].seq);
  EXPECT_EQ(hdrf_job_find(e, "nope", &r, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(err.str(), "job nope: unknown job");

  int stepped = 0;
  hdrf_job_ref_t picked{};
  char* next = nullptr;
  ASSERT_EQ(hdrf_pick_next(e, &next, &err), HDRF_OK);
  ASSERT_EQ(hdrf_step_ref(e, &stepped, &picked, &err), HDRF_OK);
  EXPECT_EQ(stepped, 1);
  hdrf_job_ref_t byname{};
  ASSERT_EQ(hdrf_job_find(e, next, &byname, &err), HDRF_OK);
  EXPECT_EQ(picked.id, byname.id);
  hdrf_free(next);

  // A removed job: its ref and its name are refused; a new job of the same
  // name gets a new ref and the old one stays refused.
  ASSERT_EQ(hdrf_job_remove_ref(e, refs[0], &err), HDRF_OK) << err.str();
  const uint64_t seq = LastSeq(e);
  EXPECT_EQ(hdrf_job_allocate_ref(e, refs[0], 1, &err), HDRF_NOT_FOUND);
  EXPECT_THAT(err.str(), HasSubstr("no such job in this engine"));
  EXPECT_EQ(hdrf_job_remove_ref(e, refs[0], &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_find(e, "j0-0", &r, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_allocate(e, "j0-0", 1, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(LastSeq(e), seq);
  hdrf_job_ref_t again{};
  ASSERT_EQ(hdrf_job_submit(e, "j0-0", "root/q0/leaf", nullptr, 1, "cpu=1", &again, &err),
            HDRF_OK);
  EXPECT_NE(again.seq, refs[0].seq);
  EXPECT_EQ(hdrf_job_allocate_ref(e, refs[0], 1, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_job_allocate_ref(e, again, 1, &err), HDRF_OK) << err.str();
  ASSERT_EQ(hdrf_job_find(e, "j0-0", &r, &err), HDRF_OK);
  EXPECT_EQ(r.seq, again.seq);
  // Removal by name goes through the same index.
  ASSERT_EQ(hdrf_job_remove(e, "j0-0", &err), HDRF_OK);
  EXPECT_EQ(hdrf_job_find(e, "j0-0", &r, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

TEST(JobRef, ForeignEmptyAndDestroyedEnginesRefs) {
  std::vector<hdrf_job_ref_t> ra, rb;
  hdrf_engine_t* a = Engine(1, &ra);
  hdrf_engine_t* b = Engine(1, &rb);
  const std::string da = Digest(a);
  Err err;
  // b's refs name the same job ids and sequence numbers as a's, but not a.
  EXPECT_EQ(ra[0].id & 0xffffffffu, rb[0].id & 0xffffffffu);
  EXPECT_EQ(hdrf_job_allocate_ref(a, rb[0], 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("was not made by this engine"));
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  EXPECT_EQ(hdrf_job_get_ref(a, rb[0], &info, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_job_allocate_ref(a, hdrf_job_ref_t{0, 0}, 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("empty"));
  // Garbage with the right tag but an unknown job.
  hdrf_job_ref_t junk = ra[0];
  junk.id += 1000;
  EXPECT_EQ(hdrf_job_finish_ref(a, junk, 1, &err), HDRF_NOT_FOUND);
  junk = ra[0];
  junk.seq += 1000;
  EXPECT_EQ(hdrf_job_release_ref(a, junk, 1, &err), HDRF_NOT_FOUND);
  EXPECT_EQ(Digest(a), da);
  // Refs of a destroyed engine stay refused when its slot is reused.
  ASSERT_EQ(hdrf_engine_destroy(b, &err), HDRF_OK);
  std::vector<hdrf_job_ref_t> rc;
  hdrf_engine_t* c = Engine(1, &rc);
  EXPECT_EQ(hdrf_job_allocate_ref(c, rb[0], 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_job_allocate_ref(b, rb[0], 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("destroyed"));
  EXPECT_EQ(hdrf_job_allocate_ref(c, rc[0], 1, &err), HDRF_OK);
  EXPECT_EQ(hdrf_engine_destroy(a, nullptr), HDRF_OK);
  EXPECT_EQ(hdrf_engine_destroy(c, nullptr), HDRF_OK);
}

// Engines are made and destroyed far more often than the table has slots:
// slots are reused, no two live handles are equal, and each stale handle
// is refused as destroyed (never reaching the engine now in its slot).
TEST(EngineHandles, SlotsAreReusedAndStaleHandlesRefused) {
  std::set<hdrf_engine_t*> seen;
  std::vector<hdrf_engine_t*> stale;
  Err err;
  for (int i = 0; i < 5000; ++i) {
    hdrf_engine_t* e = nullptr;
    ASSERT_EQ(hdrf_engine_create("cpu=1", nullptr, 0, nullptr, &e, &err), HDRF_OK) << err.str();
    EXPECT_TRUE(seen.insert(e).second) << "handle value handed out twice";
    if (i % 1000 == 0) stale.push_back(e);
    ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
  }
  hdrf_engine_t* live = nullptr;
  ASSERT_EQ(hdrf_engine_create("cpu=1", nullptr, 0, nullptr, &live, &err), HDRF_OK);
  for (hdrf_engine_t* s : stale) {
    uint64_t n;
    EXPECT_EQ(hdrf_job_count(s, &n, &err), HDRF_INVALID_ARGUMENT);
    EXPECT_THAT(err.str(), HasSubstr("destroyed"));
    EXPECT_EQ(hdrf_engine_destroy(s, &err), HDRF_INVALID_ARGUMENT);
  }
  // Addresses near a live handle: misaligned, or a generation not yet
  // handed out.
  auto* bytes = reinterpret_cast<char*>(live);
  uint64_t n;
  EXPECT_EQ(hdrf_job_count(reinterpret_cast<hdrf_engine_t*>(bytes + 1), &n, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("was not made by"));
  EXPECT_EQ(hdrf_job_count(reinterpret_cast<hdrf_engine_t*>(bytes + 8), &n, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("was not made by"));
  EXPECT_EQ(hdrf_job_count(live, &n, &err), HDRF_OK);
  EXPECT_EQ(hdrf_engine_destroy(live, &err), HDRF_OK);
}

// hdrf_apply: each op's code is what the same op made alone would get, and
// the state is the same as with one call per op.
TEST(Apply, PerOpResultsMatchOneCallPerOp) {
  std::vector<hdrf_job_ref_t> ra, rb, rother;
  hdrf_engine_t* a = Engine(3, &ra);
  hdrf_engine_t* b = Engine(3, &rb);
  hdrf_engine_t* other = Engine(1, &rother);
  std::mt19937 rng(11);
  std::vector<hdrf_op_t> ops;
  for (int i = 0; i < 3000; ++i) {
    hdrf_op_t op{};
    const size_t j = rng() % ra.size();
    op.job = ra[j];
    op.n = 1 + static_cast<int64_t>(rng() % 4);
    const int r = static_cast<int>(rng() % 100);
    op.type = r < 60 ? HDRF_OP_ALLOCATE : r < 90 ? HDRF_OP_RELEASE : HDRF_OP_FINISH;
    if (r == 97 && i % 4 == 0) op.type = HDRF_OP_REMOVE;  // few removals: jobs stay
    if (r == 98) op.type = 3;              // no such op
    if (r == 99) op.job = rother[0];       // another engine's job
    ops.push_back(op);
  }
  std::vector<hdrf_code> results(ops.size(), -1);
  size_t applied = 0;
  Err err;
  const hdrf_code c =
      hdrf_apply(a, ops.data(), ops.size(), sizeof(hdrf_op_t), results.data(), &applied, &err);
  size_t expect_applied = 0;
  size_t first_bad = ops.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    hdrf_op_t op = ops[i];
    const bool foreign = op.job.id == rother[0].id;
    if (!foreign) op.job = rb[std::find_if(ra.begin(), ra.end(), [&](const hdrf_job_ref_t& r) {
                                return r.id == op.job.id && r.seq == op.job.seq;
                              }) - ra.begin()];
    hdrf_code one;
    if (foreign) {
      one = hdrf_job_allocate_ref(b, rother[0], 1, nullptr);  // foreign to b as well
    } else {
      switch (op.type) {
        case HDRF_OP_ALLOCATE: one = hdrf_job_allocate_ref(b, op.job, op.n, nullptr); break;
        case HDRF_OP_RELEASE: one = hdrf_job_release_ref(b, op.job, op.n, nullptr); break;
        case HDRF_OP_FINISH: one = hdrf_job_finish_ref(b, op.job, op.n, nullptr); break;
        case HDRF_OP_REMOVE: one = hdrf_job_remove_ref(b, op.job, nullptr); break;
        default: one = HDRF_INVALID_ARGUMENT;
      }
    }
    ASSERT_EQ(results[i], one) << "op " << i;
    if (one == HDRF_OK) ++expect_applied;
    if (one != HDRF_OK && first_bad == ops.size()) first_bad = i;
  }
  ASSERT_LT(first_bad, ops.size());
  EXPECT_EQ(c, results[first_bad]);
  EXPECT_THAT(err.str(), HasSubstr("op " + std::to_string(first_bad) + " of 3000"));
  EXPECT_EQ(applied, expect_applied);
  EXPECT_GT(applied, 300u);  // jobs of 8 tasks: many ops are refused, as they should be
  EXPECT_EQ(Digest(a), Digest(b));
  EXPECT_EQ(LastSeq(a), LastSeq(b));
  for (hdrf_engine_t* e : {a, b, other}) EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

// hdrf_apply_op: an op of each type gets the code, the message and the
// state of the dedicated call (hdrf_job_allocate_ref, ...) on a twin.
TEST(ApplyOp, EveryTypeMatchesTheDedicatedCall) {
  std::vector<hdrf_job_ref_t> ra, rb;
  hdrf_engine_t* a = Engine(3, &ra);
  hdrf_engine_t* b = Engine(3, &rb);
  std::mt19937 rng(5);
  Err ea, eb;
  const int types[] = {HDRF_OP_ALLOCATE, HDRF_OP_RELEASE, HDRF_OP_FINISH, HDRF_OP_REMOVE};
  int ok[5] = {};
  for (int i = 0; i < 3000; ++i) {
    const size_t j = rng() % ra.size();
    const int64_t n = 1 + static_cast<int64_t>(rng() % 3);
    const int type = i % 101 == 0 ? HDRF_OP_REMOVE : types[rng() % 3];
    const hdrf_code ca = hdrf_apply_op(a, type, ra[j], n, &ea);
    hdrf_code cb;
    switch (type) {
      case HDRF_OP_ALLOCATE: cb = hdrf_job_allocate_ref(b, rb[j], n, &eb); break;
      case HDRF_OP_RELEASE: cb = hdrf_job_release_ref(b, rb[j], n, &eb); break;
      case HDRF_OP_FINISH: cb = hdrf_job_finish_ref(b, rb[j], n, &eb); break;
      default: cb = hdrf_job_remove_ref(b, rb[j], &eb);
    }
    ASSERT_EQ(ca, cb) << "op " << i << " type " << type << ": " << ea.str() << " / " << eb.str();
    if (ca != HDRF_OK) {
      ASSERT_EQ(ea.str(), eb.str()) << "op " << i;
    }
    if (ca == HDRF_OK) ++ok[type];
  }
  for (int t : types) EXPECT_GT(ok[t], 0) << "type " << t;
  EXPECT_EQ(Digest(a), Digest(b));
  EXPECT_EQ(LastSeq(a), LastSeq(b));
  for (hdrf_engine_t* e : {a, b}) EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

// A type that is no HDRF_OP_* value, alone (hdrf_apply_op) or in a batch
// (hdrf_apply), is HDRF_INVALID_ARGUMENT naming the value, and changes
// nothing: 256 does not wrap to HDRF_OP_ALLOCATE.
TEST(ApplyOp, AnUnknownTypeIsRefusedNamingIt) {
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* e = Engine(1, &refs);
  ASSERT_EQ(hdrf_job_allocate_ref(e, refs[0], 2, nullptr), HDRF_OK);
  const std::string digest = Digest(e);
  const uint64_t seq = LastSeq(e);
  const struct {
    int type;
    std::string says;
  } bad[] = {{3, "op type 3 (submit) is not a job event"},
             {9, "op type 9 (set-capacity) is not a job event"},
             {11, "op type 11 is not a job event"},
             {-1, "op type -1 is not a job event"},
             {256, "op type 256 is not a job event"},
             {260, "op type 260 is not a job event"},
             {INT32_MAX, "op type 2147483647 is not a job event"}};
  const std::string expected = "expected allocate (0), release (1), finish (2) or remove (4)";
  Err err;
  for (const auto& b : bad) {
    SCOPED_TRACE(b.type);
    EXPECT_EQ(hdrf_apply_op(e, b.type, refs[0], 1, &err), HDRF_INVALID_ARGUMENT);
    EXPECT_THAT(err.str(), HasSubstr(b.says));
    EXPECT_THAT(err.str(), HasSubstr(expected));
    hdrf_op_t op{refs[0], 1, b.type};
    hdrf_code res = -1;
    size_t applied = 9;
    EXPECT_EQ(hdrf_apply(e, &op, 1, sizeof op, &res, &applied, &err), HDRF_INVALID_ARGUMENT);
    EXPECT_THAT(err.str(), HasSubstr("op 0 of 1 (1 refused): " + b.says));
    EXPECT_EQ(res, HDRF_INVALID_ARGUMENT);
    EXPECT_EQ(applied, 0u);
  }
  EXPECT_EQ(Digest(e), digest);
  EXPECT_EQ(LastSeq(e), seq);
  // The type is checked before the ref: an empty ref with a bad type says the type.
  EXPECT_EQ(hdrf_apply_op(e, 7, hdrf_job_ref_t{}, 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("op type 7 (set-queue-state)"));
  EXPECT_EQ(hdrf_apply_op(nullptr, HDRF_OP_ALLOCATE, refs[0], 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

TEST(Apply, StrideEmptyAndRefusedCalls) {
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* e = Engine(1, &refs);
  Err err;
  // A caller with a bigger op struct (a later version): the stride is its size.
  struct Wide {
    hdrf_op_t op;
    int64_t extra;
  } wide[2] = {{{refs[0], 2, HDRF_OP_ALLOCATE}, -1}, {{refs[1], 1, HDRF_OP_ALLOCATE}, -1}};
  hdrf_code res[2] = {-1, -1};
  size_t applied = 0;
  ASSERT_EQ(hdrf_apply(e, &wide[0].op, 2, sizeof(Wide), res, &applied, &err), HDRF_OK)
      << err.str();
  EXPECT_EQ(applied, 2u);
  EXPECT_EQ(res[0], HDRF_OK);
  hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
  ASSERT_EQ(hdrf_job_get_ref(e, refs[0], &info, nullptr), HDRF_OK);
  EXPECT_EQ(info.allocated, 2);
  EXPECT_EQ(hdrf_apply(e, &wide[0].op, 2, sizeof(hdrf_op_t) - 1, res, &applied, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(res[0], HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_apply(e, nullptr, 0, 0, nullptr, &applied, &err), HDRF_OK);
  EXPECT_EQ(applied, 0u);
  EXPECT_EQ(hdrf_apply(e, nullptr, 3, sizeof(hdrf_op_t), nullptr, nullptr, &err),
            HDRF_INVALID_ARGUMENT);
  const std::string digest = Digest(e);
  ASSERT_EQ(hdrf_engine_close(e, &err), HDRF_OK);
  EXPECT_EQ(hdrf_apply(e, &wide[0].op, 2, sizeof(Wide), res, &applied, &err),
            HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(res[0], HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(res[1], HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(applied, 0u);
  EXPECT_EQ(hdrf_job_allocate_ref(e, refs[0], 1, &err), HDRF_FAILED_PRECONDITION);
  EXPECT_EQ(Digest(e), digest);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
  EXPECT_EQ(hdrf_apply(e, &wide[0].op, 2, sizeof(Wide), res, &applied, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("destroyed"));
}

// Versioned structs: a struct_size of 0 (not initialised) or of another
// version is refused, never read past.
TEST(StructSize, UninitialisedOrOtherVersionsAreRefused) {
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* e = Engine(1, &refs);
  Err err;
  hdrf_job_info_t info{};
  EXPECT_EQ(hdrf_job_get_ref(e, refs[0], &info, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("hdrf_job_info.struct_size is 0"));
  info.struct_size = sizeof info + 8;
  EXPECT_EQ(hdrf_job_get(e, "j0-0", &info, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("knows " + std::to_string(sizeof info)));
  hdrf_job_info_init(&info);
  EXPECT_EQ(hdrf_job_get(e, "j0-0", &info, &err), HDRF_OK) << err.str();
  EXPECT_EQ(info.tasks, 8);
  hdrf_queue_info_t q{};
  EXPECT_EQ(hdrf_queue_get(e, "root", &q, &err), HDRF_INVALID_ARGUMENT);
  hdrf_queue_info_init(&q);
  EXPECT_EQ(hdrf_queue_get(e, "root", &q, &err), HDRF_OK);
  hdrf_job_spec_t js;
  hdrf_job_spec_init(&js);
  js.name = "new";
  js.struct_size = 0;
  EXPECT_EQ(hdrf_job_submit_spec(e, &js, nullptr, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_THAT(err.str(), HasSubstr("hdrf_job_spec_init"));
  hdrf_queue_spec_t qs;
  hdrf_queue_spec_init(&qs);
  qs.path = "root/new";
  qs.struct_size = sizeof qs - 1;
  EXPECT_EQ(hdrf_queue_create(e, &qs, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
}

// hdrf_reconcile: the engine ends in the state of a fresh engine fed the
// truth, and says what changed.
TEST(Reconcile, CInterface) {
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* e = Engine(2, &refs);  // j0-0 .. j3-1, 8 tasks each
  Err err;
  ASSERT_EQ(hdrf_job_allocate_ref(e, refs[0], 3, &err), HDRF_OK);
  std::vector<hdrf_truth_job_t> truth(2);
  for (auto& t : truth) hdrf_truth_job_init(&t);
  truth[0].name = "j0-0";  // 2 of its tasks finished, 1 runs
  truth[0].queue = "root/q0/leaf";
  truth[0].task = "cpu=1,memory=1Gi";
  truth[0].tasks = 6;
  truth[0].running = 1;
  truth[1].name = "fresh";
  truth[1].queue = "root/q1/leaf";
  truth[1].task = "cpu=2";
  truth[1].tasks = 4;
  truth[1].running = 4;
  uint64_t events = 0;
  char* changes = nullptr;
  ASSERT_EQ(hdrf_reconcile(e, truth.data(), truth.size(), nullptr, 0, 0, &events, &changes, &err),
            HDRF_OK)
      << err.str();
  const std::string json = changes;
  hdrf_free(changes);
  EXPECT_THAT(json, HasSubstr("\"jobs_removed\":[\"j0-1\",\"j1-0\""));
  EXPECT_THAT(json, HasSubstr("\"jobs_submitted\":[\"fresh\"]"));
  EXPECT_THAT(json, HasSubstr("\"jobs_adjusted\":[\"j0-0\"]"));
  EXPECT_EQ(events, 7u + 1u + 2u);  // 7 removals, Finish(2) (leaves 1 running), Submit + Allocate
  // A fresh engine fed the truth.
  hdrf_engine_t* f = Engine(0, nullptr);
  hdrf_job_ref_t r;
  ASSERT_EQ(hdrf_job_submit(f, "j0-0", "root/q0/leaf", nullptr, 6, "cpu=1,memory=1Gi", &r, &err), HDRF_OK);
  ASSERT_EQ(hdrf_job_allocate_ref(f, r, 1, &err), HDRF_OK);
  ASSERT_EQ(hdrf_job_submit(f, "fresh", "root/q1/leaf", nullptr, 4, "cpu=2", &r, &err), HDRF_OK);
  ASSERT_EQ(hdrf_job_allocate_ref(f, r, 4, &err), HDRF_OK);
  EXPECT_EQ(Digest(e), Digest(f));
  // Refused truths change nothing.
  const uint64_t seq = LastSeq(e);
  truth[1].running = 5;
  EXPECT_EQ(hdrf_reconcile(e, truth.data(), 2, nullptr, 0, 0, nullptr, nullptr, &err),
            HDRF_INVALID_ARGUMENT);
  truth[1].struct_size = 0;
  EXPECT_EQ(hdrf_reconcile(e, truth.data(), 2, nullptr, 0, 0, nullptr, nullptr, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_reconcile(e, nullptr, 2, nullptr, 0, 0, nullptr, nullptr, &err),
            HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(LastSeq(e), seq);
  EXPECT_EQ(hdrf_engine_destroy(e, nullptr), HDRF_OK);
  EXPECT_EQ(hdrf_engine_destroy(f, nullptr), HDRF_OK);
}

// The tree's name index is rebuilt on recovery: names and refs of a reopened
// store work, removed jobs stay gone.
TEST(JobRef, NameIndexAfterRecovery) {
  char tmpl[] = "/tmp/hdrf_job_ref_test_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string db = std::string(tmpl) + "/db";
  hdrf_options_t* o = hdrf_options_create();
  ASSERT_EQ(hdrf_options_set_db_path(o, db.c_str(), nullptr), HDRF_OK);
  ASSERT_EQ(hdrf_options_set_durability(o, HDRF_DURABILITY_SYNC, nullptr), HDRF_OK);
  std::vector<hdrf_job_ref_t> refs;
  hdrf_engine_t* e = Engine(2, &refs, o);
  hdrf_op_t ops[3] = {{refs[0], 1, HDRF_OP_ALLOCATE}, {refs[1], 0, HDRF_OP_REMOVE},
                      {refs[2], 3, HDRF_OP_ALLOCATE}};
  Err err;
  ASSERT_EQ(hdrf_apply(e, ops, 3, sizeof(hdrf_op_t), nullptr, nullptr, &err), HDRF_OK) << err.str();
  const std::string digest = Digest(e);
  ASSERT_EQ(hdrf_engine_destroy(e, &err), HDRF_OK);
  hdrf_engine_t* r = nullptr;
  ASSERT_EQ(hdrf_engine_open(db.c_str(), o, &r, &err), HDRF_OK) << err.str();
  EXPECT_EQ(Digest(r), digest);
  hdrf_job_ref_t ref{};
  EXPECT_EQ(hdrf_job_find(r, "j0-1", &ref, &err), HDRF_NOT_FOUND);
  ASSERT_EQ(hdrf_job_find(r, "j1-0", &ref, &err), HDRF_OK) << err.str();
  EXPECT_EQ(ref.seq, refs[2].seq);
  EXPECT_EQ(hdrf_job_allocate_ref(r, ref, 1, &err), HDRF_OK) << err.str();
  // The old engine's refs are refused by the reopened one.
  EXPECT_EQ(hdrf_job_allocate_ref(r, refs[2], 1, &err), HDRF_INVALID_ARGUMENT);
  EXPECT_EQ(hdrf_engine_destroy(r, &err), HDRF_OK);
  hdrf_options_destroy(o);
  std::string cmd = std::string("rm -rf ") + tmpl;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
