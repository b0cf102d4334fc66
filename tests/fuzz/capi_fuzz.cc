// libFuzzer target: the C interface (api/hdrf/c.h). The input is a program:
// a sequence of C API calls, each an opcode byte followed by its arguments
// (handles from a few slots, names and resource lists from a dictionary or
// raw bytes, integers of any size). The C interface promises that bad
// handles, NULL arguments, unknown names and wrong units give an error code
// and a message, never a crash; this target checks that, and that every
// failure comes with a message when an errptr is passed.
//
// Engines are memory-only (no db path): the target never writes files.
// Followers are opened only of paths under a directory that does not exist
// (kNoDir), with their own directory there too, so they must fail (and
// create nothing); the follower calls otherwise meet engines that are not
// followers, or bad handles.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "hdrf/c.h"
#include "tests/fuzz/capi_dict.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using hdrf::fuzz::Reader;

using hdrf::fuzz::kCapiDict;
using hdrf::fuzz::kCapiDictSize;

constexpr int kSlots = 3;

// Opcode bytes from kFollowerOps up select the follower calls (ops 32-35);
// below it, byte % 32 selects ops 0-31.
constexpr uint8_t kFollowerOps = 240;
constexpr const char* kNoDir = "/nonexistent-hdrf-capi-fuzz";

struct Program {
  Reader in;
  std::deque<std::string> strings;  // keeps raw strings alive for one call (stable addresses)
  hdrf_engine_t* slots[kSlots] = {};
  bool destroyed[kSlots] = {};
  char* err = nullptr;
  char fake[64] = {};  // a pointer that is no engine handle
  hdrf_job_ref_t refs[8] = {};  // job refs seen (of any engine, maybe stale)
  hdrf_plan_t* plan = nullptr;   // the last plan made (of any engine, maybe stale)

  explicit Program(const uint8_t* d, size_t n) : in(d, n) {}

  // A string argument: NULL, a dictionary entry or raw bytes (NUL-cut).
  const char* Str() {
    uint8_t b = in.Byte();
    if (b < 8) return nullptr;
    if (b < 200) return kCapiDict[b % kCapiDictSize];
    strings.push_back(in.Bytes(40));
    return strings.back().c_str();
  }
  int64_t Int() {
    uint8_t b = in.Byte();
    if (b < 200) return static_cast<int64_t>(b % 12) - 2;  // -2 .. 9
    return static_cast<int64_t>(in.U64());
  }
  double Double() {
    uint8_t b = in.Byte();
    switch (b % 8) {
      case 0: return NAN;
      case 1: return INFINITY;
      case 2: return -1;
      case 3: return 0;
      case 4: return 0.5;
      default: return static_cast<double>(b % 20);
    }
  }
  // An engine handle: a slot (live, destroyed or empty), NULL, a fake, or
  // an address next to a slot's handle (misaligned, or a generation not
  // handed out yet). Such addresses are never dereferenced by the interface.
  hdrf_engine_t* Engine() {
    uint8_t b = in.Byte() % (kSlots + 4);
    if (b < kSlots) return slots[b];
    if (b == kSlots) return nullptr;
    if (b == kSlots + 1) return reinterpret_cast<hdrf_engine_t*>(fake);
    const uintptr_t h = reinterpret_cast<uintptr_t>(slots[in.Byte() % kSlots]);
    return reinterpret_cast<hdrf_engine_t*>(h + (b == kSlots + 2 ? 1 : 8));
  }
  // A job ref: one seen, the empty one, or one bent out of shape.
  hdrf_job_ref_t Ref() {
    uint8_t b = in.Byte();
    hdrf_job_ref_t r = refs[b % 8];
    if (b & 0x80) r.id ^= in.U64();
    if (b & 0x40) r.seq += static_cast<uint64_t>(Int());
    return r;
  }
  void Keep(hdrf_code c, hdrf_job_ref_t r) {
    if (c == HDRF_OK) refs[in.Byte() % 8] = r;
  }
  char** Err() { return in.Byte() % 8 == 0 ? nullptr : &err; }

  // Checks the error contract after a call.
  void Check(hdrf_code c, char** errptr) {
    if (c < HDRF_OK || c > HDRF_ABORTED) hdrf::fuzz::Fail("code out of range");
    if (hdrf_code_name(c) == nullptr) hdrf::fuzz::Fail("no code name");
    if (c != HDRF_OK && errptr != nullptr && (*errptr == nullptr || **errptr == '\0'))
      hdrf::fuzz::Fail("failure without a message");
    if (c == HDRF_INTERNAL) hdrf::fuzz::Fail(err ? err : "HDRF_INTERNAL");
  }

  hdrf_queue_spec_t QueueSpec() {
    hdrf_queue_spec_t q;
    hdrf_queue_spec_init(&q);
    q.path = Str();
    uint8_t f = in.Byte();
    if (f & 1) q.weight = Double();
    if (f & 2) q.capability = Str();
    if (f & 4) q.guarantee = Str();
    if (f & 8) q.reclaimable = static_cast<int>(Int());
    if (f & 16) q.state = static_cast<int>(Int());
    if (f & 32) q.min_user_limit_percent = static_cast<int>(static_cast<uint64_t>(Int()) * 13);
    if (f & 64) q.user_limit_factor = Double();
    if (f & 128) q.struct_size = in.Byte();  // rarely right: refused, never read past
    return q;
  }

  void Put(hdrf_engine_t* e) {
    int s = in.Byte() % kSlots;
    if (slots[s] && !destroyed[s]) hdrf_engine_destroy(slots[s], nullptr);
    slots[s] = e;
    destroyed[s] = false;
  }

  void Step();
  hdrf_code Follower(uint8_t op, char** e);
  hdrf_code Plan(hdrf_engine_t* eng, char** e);
  void Run() {
    int ops = 0;
    while (!in.empty() && ops++ < 200) {
      strings.clear();
      Step();
    }
    for (int s = 0; s < kSlots; ++s)
      if (slots[s] && !destroyed[s]) hdrf_engine_destroy(slots[s], nullptr);
    hdrf_free(err);
    hdrf_plan_free(plan);
  }
};

// Followers: open one of a path that holds no store, catch up, lag and
// promote (hdrf/c.h "followers and takeover").
hdrf_code Program::Follower(uint8_t op, char** e) {
  switch (op) {
    case 32: {
      const uint8_t f = in.Byte();
      std::string db;
      if (f & 1) db = std::string(kNoDir) + "/" + kCapiDict[in.Byte() % kCapiDictSize];
      const std::string secondary = std::string(kNoDir) + "/secondary";
      hdrf_follower_options_t fo;
      hdrf_follower_options_init(&fo);
      fo.secondary_path = secondary.c_str();  // never a temporary directory
      fo.catch_up_interval_ms = static_cast<uint32_t>(Int());
      if (f & 2) fo.struct_size = in.Byte();  // rarely right: refused
      hdrf_engine_t* eng = reinterpret_cast<hdrf_engine_t*>(fake);
      const hdrf_code c = hdrf_engine_open_follower(f & 1 ? db.c_str() : (f & 4 ? "" : nullptr),
                                                    &fo, f & 8 ? nullptr : &eng, e);
      if (c == HDRF_OK) hdrf::fuzz::Fail("a follower of a directory that does not exist");
      if (!(f & 8) && eng != nullptr) hdrf::fuzz::Fail("engine set on failure");
      return c;
    }
    case 33:
      return hdrf_follower_catch_up(Engine(), e);
    case 34: {
      hdrf_follower_lag_t lag = HDRF_FOLLOWER_LAG_INIT;
      const uint8_t f = in.Byte();
      if (f & 1) lag.struct_size = in.Byte();
      const hdrf_code c = hdrf_follower_lag(Engine(), f & 2 ? nullptr : &lag, e);
      if (c == HDRF_OK && (lag.is_follower || lag.applied_seq || lag.events))
        hdrf::fuzz::Fail("lag of an engine that is no follower");
      return c;
    }
    default: {  // no engine here is a follower: refused at once, whatever the wait
      hdrf_options_t* o = in.Byte() & 1 ? hdrf_options_create() : nullptr;
      hdrf_engine_t* eng = Engine();
      const hdrf_code c = hdrf_follower_promote(eng, Int(), o, e);
      hdrf_options_destroy(o);
      if (c == HDRF_OK) hdrf::fuzz::Fail("promoted an engine that is no follower");
      return c;
    }
  }
}

// Plans (hdrf/c.h "taking back: plans"): made for any ref, with any mode
// and limit, read through every accessor at any index, applied to any
// engine (maybe not its own, maybe after the state changed). Bytes: flags
// f; for a plan, the ref, then (f & 4) the mode, (f & 32) the limit, then
// the index read back.
hdrf_code Program::Plan(hdrf_engine_t* eng, char** e) {
  const uint8_t f = in.Byte();
  if (f & 1) return hdrf_apply_plan(eng, f & 2 ? nullptr : plan, e);
  hdrf_plan_t* p = reinterpret_cast<hdrf_plan_t*>(fake);
  const hdrf_job_ref_t r = Ref();
  const int mode = f & 4 ? static_cast<int>(Int()) : (f >> 3) % 3;
  const int64_t max_victims = f & 32 ? Int() : static_cast<int64_t>(f >> 6) - 1;
  const hdrf_code c = hdrf_plan(eng, r, mode, max_victims, f & 2 ? nullptr : &p, e);
  if (c != HDRF_OK) {
    if (!(f & 2) && p != nullptr) hdrf::fuzz::Fail("plan set on failure");
    return c;
  }
  const size_t i = in.Byte() % 4;
  const char* s = nullptr;
  int64_t n = 0;
  hdrf_job_ref_t v{};
  (void)hdrf_plan_fits(p);
  (void)hdrf_plan_tasks(p);
  (void)hdrf_plan_mode(p);
  if (hdrf_plan_job(p, &v, &s, nullptr) != HDRF_OK || !s) hdrf::fuzz::Fail("plan_job");
  const bool victim = hdrf_plan_victim(p, i, &v, &s, &n, nullptr) == HDRF_OK;
  if (victim != (i < hdrf_plan_victim_count(p))) hdrf::fuzz::Fail("victim index");
  if (victim) Keep(HDRF_OK, v);
  const bool short_ok = hdrf_plan_short(p, i, &s, &n, nullptr) == HDRF_OK;
  if (short_ok != (i < hdrf_plan_short_count(p))) hdrf::fuzz::Fail("short index");
  hdrf_plan_free(plan);
  plan = p;
  return c;
}

void Program::Step() {
  const uint8_t b = in.Byte();
  const uint8_t op = b >= kFollowerOps ? 32 + (b - kFollowerOps) % 4 : b % 32;
  char** e = Err();
  hdrf_code c = HDRF_OK;
  switch (op) {
    case 0: {  // create
      const char* cluster = Str();
      hdrf_queue_spec_t qs[3];
      size_t n = in.Byte() % 4;
      for (size_t i = 0; i < n; ++i) qs[i] = QueueSpec();
      hdrf_options_t* o = nullptr;
      if (in.Byte() & 1) {
        o = hdrf_options_create();
        Check(hdrf_options_set_overcommit_factor(o, Double(), e), e);
      }
      hdrf_engine_t* eng = nullptr;
      c = hdrf_engine_create(cluster, n ? qs : (in.Byte() & 1 ? nullptr : qs), n, o, &eng, e);
      hdrf_options_destroy(o);
      if (c == HDRF_OK) Put(eng);
      else if (eng != nullptr) hdrf::fuzz::Fail("engine set on failure");
      break;
    }
    case 1: {  // create from a configuration given as raw text
      strings.push_back(in.Bytes(255));
      const char* yaml = strings.back().c_str();
      hdrf_engine_t* eng = nullptr;
      c = hdrf_engine_create_from_config(yaml, Str(), Str(), nullptr, &eng, e);
      if (c == HDRF_OK) Put(eng);
      break;
    }
    case 2: {  // create from a scenario (its steps are not run: see scenario_fuzz)
      strings.push_back(in.Bytes(255));
      const char* yaml = strings.back().c_str();
      hdrf_engine_t* eng = nullptr;
      c = hdrf_engine_create_from_scenario(yaml, Str(), 0, nullptr, &eng, e);
      if (c == HDRF_OK) Put(eng);
      break;
    }
    case 3: {  // destroy; the slot keeps the (now dead) handle
      int s = in.Byte() % kSlots;
      c = hdrf_engine_destroy(slots[s], e);
      if (slots[s] && destroyed[s] && c == HDRF_OK) hdrf::fuzz::Fail("destroyed twice");
      if (slots[s]) destroyed[s] = true;
      break;
    }
    case 4: {
      hdrf_queue_spec_t q = QueueSpec();
      c = hdrf_queue_create(Engine(), in.Byte() % 16 ? &q : nullptr, e);
      break;
    }
    case 5: {
      hdrf_queue_spec_t q = QueueSpec();
      c = hdrf_queue_update(Engine(), in.Byte() % 16 ? &q : nullptr, e);
      break;
    }
    case 6: {
      hdrf_engine_t* eng = Engine();
      const char* p = Str();
      c = hdrf_queue_set_state(eng, p, static_cast<int>(Int()), e);
      break;
    }
    case 7: {
      hdrf_engine_t* eng = Engine();
      c = hdrf_queue_delete(eng, Str(), e);
      break;
    }
    case 8: {
      hdrf_engine_t* eng = Engine();
      c = hdrf_set_capacity(eng, Str(), e);
      break;
    }
    case 9: {
      hdrf_engine_t* eng = Engine();
      const char* name = Str();
      const char* queue = Str();
      const char* user = Str();
      int64_t tasks = Int();
      hdrf_job_ref_t r{};
      const char* task = Str();
      c = hdrf_job_submit(eng, name, queue, user, tasks, task, in.Byte() & 1 ? &r : nullptr, e);
      Keep(c, r);
      break;
    }
    case 10: {
      hdrf_job_spec_t j;
      hdrf_job_spec_init(&j);
      hdrf_engine_t* eng = Engine();
      j.name = Str();
      j.queue = Str();
      j.user = Str();
      j.tasks = Int();
      j.task = Str();
      j.weight = Double();
      j.min_available = Int();
      hdrf_job_ref_t r{};
      c = hdrf_job_submit_spec(eng, in.Byte() % 16 ? &j : nullptr, &r, e);
      Keep(c, r);
      break;
    }
    case 11: {
      hdrf_engine_t* eng = Engine();
      c = hdrf_job_remove(eng, Str(), e);
      break;
    }
    case 12:
    case 13:
    case 14: {
      hdrf_engine_t* eng = Engine();
      const char* name = Str();
      int64_t n = Int();
      c = op == 12 ? hdrf_job_allocate(eng, name, n, e)
          : op == 13 ? hdrf_job_release(eng, name, n, e)
                     : hdrf_job_finish(eng, name, n, e);
      break;
    }
    case 15: {
      int stepped = 0;
      char* name = nullptr;
      uint8_t f = in.Byte();
      c = hdrf_step(Engine(), f & 1 ? &stepped : nullptr, f & 2 ? &name : nullptr, e);
      hdrf_free(name);
      break;
    }
    case 16: {
      // A fill allocates one task per step, and a job may ask for 2^62 tasks
      // on a cluster with room for them: step at most kFillSteps times, and
      // call hdrf_fill only once stepping has stopped, where it must find
      // nothing more to do.
      constexpr int kFillSteps = 256;
      hdrf_engine_t* eng = Engine();
      int stepped = 1;
      for (int i = 0; i < kFillSteps && stepped && c == HDRF_OK; ++i)
        c = hdrf_step(eng, &stepped, nullptr, e);
      if (c == HDRF_OK && !stepped) {
        int64_t steps = -1;
        c = hdrf_fill(eng, in.Byte() & 1 ? &steps : nullptr, e);
        if (c == HDRF_OK && steps > 0) hdrf::fuzz::Fail("fill stepped after a step found nothing");
      }
      break;
    }
    case 17: {
      char* name = nullptr;
      c = hdrf_pick_next(Engine(), in.Byte() & 1 ? &name : nullptr, e);
      hdrf_free(name);
      break;
    }
    case 18: {
      hdrf_engine_t* eng = Engine();
      const char* name = Str();
      uint8_t f = in.Byte();
      hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
      int64_t amount = 0;
      int state = 0;
      char* queue = nullptr;
      switch (f % 4) {
        case 0: c = hdrf_job_get(eng, name, f & 4 ? &info : nullptr, e); break;
        case 1: c = hdrf_job_allocated(eng, name, f & 4 ? &amount : nullptr, e); break;
        case 2: c = hdrf_job_state(eng, name, f & 4 ? &state : nullptr, e); break;
        case 3: c = hdrf_job_queue(eng, name, f & 4 ? &queue : nullptr, e); break;
      }
      hdrf_free(queue);
      break;
    }
    case 19: {
      hdrf_engine_t* eng = Engine();
      const char* path = Str();
      uint8_t f = in.Byte();
      hdrf_queue_info_t info = HDRF_QUEUE_INFO_INIT;
      int64_t amount = 0;
      if (f & 1) c = hdrf_queue_get(eng, path, f & 4 ? &info : nullptr, e);
      else c = hdrf_queue_allocated(eng, path, Str(), f & 4 ? &amount : nullptr, e);
      break;
    }
    case 20: {
      char buf[HDRF_DIGEST_SIZE + 4];
      hdrf_engine_t* eng = Engine();
      size_t len = in.Byte() % sizeof(buf);
      c = hdrf_digest(eng, in.Byte() & 1 ? buf : nullptr, len, e);
      break;
    }
    case 21: {
      hdrf_engine_t* eng = Engine();
      uint64_t v = 0;
      uint8_t f = in.Byte();
      uint64_t* out = f & 4 ? &v : nullptr;
      switch (f % 4) {
        case 0: c = hdrf_last_seq(eng, out, e); break;
        case 1: c = hdrf_durable_seq(eng, out, e); break;
        case 2: c = hdrf_job_count(eng, out, e); break;
        case 3: c = hdrf_queue_count(eng, out, e); break;
      }
      break;
    }
    case 22: {
      char* text = nullptr;
      size_t len = 0;
      uint8_t f = in.Byte();
      c = hdrf_metrics(Engine(), f & 1 ? &text : nullptr, f & 2 ? &len : nullptr, e);
      if (c == HDRF_OK && text != nullptr && (f & 2) && std::strlen(text) != len)
        hdrf::fuzz::Fail("metrics length");
      hdrf_free(text);
      break;
    }
    case 23: {
      hdrf_engine_t* eng = Engine();
      c = in.Byte() & 1 ? hdrf_flush(eng, e) : hdrf_checkpoint(eng, e);
      break;
    }
    case 24:
      c = hdrf_engine_close(Engine(), e);
      break;
    case 25: {
      int64_t amount = 0;
      const char* r = Str();
      const char* t = Str();
      c = hdrf_parse_quantity(r, t, in.Byte() & 1 ? &amount : nullptr, e);
      break;
    }
    case 26: {
      hdrf_options_t* o = hdrf_options_create();
      uint8_t f = in.Byte();
      if (f & 1) Check(hdrf_options_set_overcommit_factor(f & 8 ? nullptr : o, Double(), e), e);
      if (f & 2) Check(hdrf_options_set_durability(f & 8 ? nullptr : o, static_cast<int>(Int()), e), e);
      if (f & 4)
        Check(hdrf_options_set_checkpoint_every(f & 8 ? nullptr : o, static_cast<uint64_t>(Int()), e), e);
      if (f & 16)
        Check(hdrf_options_set_checkpoint_events_per_job(f & 8 ? nullptr : o, static_cast<uint32_t>(Int()), e),
              e);
      hdrf_options_destroy(o);
      break;
    }
    case 28: {  // a name to a ref
      hdrf_engine_t* eng = Engine();
      const char* name = Str();
      hdrf_job_ref_t r{};
      c = hdrf_job_find(eng, name, in.Byte() % 16 ? &r : nullptr, e);
      Keep(c, r);
      break;
    }
    case 29: {  // events on refs
      hdrf_engine_t* eng = Engine();
      const hdrf_job_ref_t r = Ref();
      const int64_t n = Int();
      switch (in.Byte() % 5) {
        case 0: c = hdrf_job_allocate_ref(eng, r, n, e); break;
        case 1: c = hdrf_job_release_ref(eng, r, n, e); break;
        case 2: c = hdrf_job_finish_ref(eng, r, n, e); break;
        case 3: c = hdrf_job_remove_ref(eng, r, e); break;
        default: c = hdrf_apply_op(eng, static_cast<int8_t>(in.Byte()), r, n, e);  // any type, -128..127
      }
      break;
    }
    case 30: {  // a batch
      hdrf_engine_t* eng = Engine();
      hdrf_op_t ops[8];
      hdrf_code results[8];
      const size_t n = in.Byte() % 9;
      for (size_t i = 0; i < n; ++i) {
        ops[i].job = Ref();
        ops[i].n = Int();
        ops[i].type = static_cast<int>(in.Byte() % 6);
      }
      const uint8_t f = in.Byte();
      size_t applied = 99;
      const size_t op_size = f & 8 ? sizeof(hdrf_op_t) - 8 : sizeof(hdrf_op_t);
      c = hdrf_apply(eng, f & 16 ? nullptr : ops, n, op_size, f & 1 ? results : nullptr,
                     f & 2 ? &applied : nullptr, e);
      if ((f & 2) && applied > n) hdrf::fuzz::Fail("applied more ops than given");
      if ((f & 1) && c == HDRF_OK)
        for (size_t i = 0; i < n; ++i)
          if (results[i] != HDRF_OK) hdrf::fuzz::Fail("OK with a refused op");
      break;
    }
    case 31: {  // views and steps by ref
      hdrf_engine_t* eng = Engine();
      hdrf_job_info_t info = HDRF_JOB_INFO_INIT;
      const uint8_t f = in.Byte();
      if (f % 3 == 2) {
        c = Plan(eng, e);
      } else if (f % 3 == 1) {
        c = hdrf_job_get_ref(eng, Ref(), in.Byte() % 16 ? &info : nullptr, e);
      } else {
        int stepped = 0;
        hdrf_job_ref_t r{};
        c = hdrf_step_ref(eng, &stepped, &r, e);
        if (stepped) Keep(c, r);
      }
      break;
    }
    case 32:
    case 33:
    case 34:
    case 35:
      c = Follower(op, e);
      break;
    case 27: {
      (void)hdrf_job_state_name(static_cast<int>(Int()));
      (void)hdrf_queue_state_name(static_cast<int>(Int()));
      (void)hdrf_code_name(static_cast<int>(Int()));
      break;
    }
  }
  Check(c, e);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program p(data, size);
  p.Run();
  return 0;
}
