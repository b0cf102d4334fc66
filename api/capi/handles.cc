// The engine handle table of the C interface (capi_internal.h, "engine
// handles"; docs/c_api.md "Handles").
//
// Layout of a handle: base + slot * kSpan + generation * 8, where `base` is
// the start of a reserved region of kMaxEngines * kSpan bytes of address
// space (PROT_NONE: nothing is ever read or written there). Generations
// start at 1 and grow by one each time the slot gets a new engine; a slot
// whose generation reaches kMaxGen is retired (never reused), so a handle
// value is never handed out twice. Slots are reused first in, first out.
//
// Locks: Slot::gate (BigReaderLock) shared for a call, exclusive to change
// the slot (create, close, destroy); Table::mu guards the free list only.
#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>  // std::call_once

#include "api/capi/capi_internal.h"
#include "base/mutex.h"
#include "base/shard_lock.h"

namespace hdrf::capi {
namespace {

static_assert(sizeof(uintptr_t) == 8, "the handle layout needs 64-bit addresses");

constexpr uintptr_t kSpan = uintptr_t{1} << 20;          // address space per slot
constexpr uint32_t kMaxGen = static_cast<uint32_t>(kSpan / 8) - 1;
constexpr uintptr_t kRegion = kSpan * kMaxEngines;       // 4 GiB, never committed

struct Slot {
  base::BigReaderLock gate;
  // Written under gate exclusive; read under gate shared (atomic so that
  // a reader's load is never a data race with a later writer).
  std::atomic<uint32_t> gen{0};
  std::unique_ptr<Engine> engine GUARDED_BY(gate);  // null: free or destroyed
  bool closed GUARDED_BY(gate) = false;
};

struct Table {
  uintptr_t base = 0;                             // 0: the reservation failed
  std::atomic<Slot*> slots[kMaxEngines] = {};     // set once, never freed
  base::Mutex mu;
  std::deque<uint32_t> free GUARDED_BY(mu);       // slots of destroyed engines
  uint32_t next_unused GUARDED_BY(mu) = 0;
};

// Made by the first create, never destroyed (handles stay checkable until
// the process exits, static destructors included).
std::atomic<Table*> g_table{nullptr};

Table* GetOrMakeTable() {
  if (Table* t = g_table.load(std::memory_order_acquire)) return t;
  static std::once_flag once;
  std::call_once(once, [] {
    auto* t = new Table;
    void* p = mmap(nullptr, kRegion, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) t->base = reinterpret_cast<uintptr_t>(p);
    g_table.store(t, std::memory_order_release);
  });
  return g_table.load(std::memory_order_acquire);
}

uint32_t TagOf(uint32_t index, uint32_t gen) { return (index << 17) | gen; }
static_assert(kMaxGen < (1u << 17) && kMaxEngines <= (1u << 15), "tags fit 32 bits");

Status NotAHandle(const void* h) {
  return Status::InvalidArgument("engine handle " + PtrText(h) +
                                 " was not made by hdrf_engine_create* or hdrf_engine_open*");
}
Status Destroyed(const void* h) {
  return Status::InvalidArgument("engine handle " + PtrText(h) + " was destroyed");
}

// The slot and generation a handle names, without reading through it.
Status Decode(const hdrf_engine_t* h, Slot** slot, uint32_t* index, uint32_t* gen) {
  if (!h) return Status::InvalidArgument("engine handle is NULL");
  Table* t = g_table.load(std::memory_order_acquire);
  if (!t || !t->base) return NotAHandle(h);
  const uintptr_t off = reinterpret_cast<uintptr_t>(h) - t->base;  // wraps when below
  if (off >= kRegion || off % 8 != 0) return NotAHandle(h);
  *index = static_cast<uint32_t>(off / kSpan);
  *gen = static_cast<uint32_t>((off % kSpan) / 8);
  *slot = t->slots[*index].load(std::memory_order_acquire);
  if (*gen == 0 || !*slot) return NotAHandle(h);
  return Status::Ok();
}

// Under the slot's gate (either mode): is `gen` its live engine?
Status CheckLive(const hdrf_engine_t* h, const Slot& s, uint32_t gen) REQUIRES_SHARED(s.gate) {
  const uint32_t cur = s.gen.load(std::memory_order_relaxed);
  if (gen > cur) return NotAHandle(h);
  if (gen < cur || !s.engine) return Destroyed(h);
  return Status::Ok();
}

}  // namespace

std::string PtrText(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

EngineUse::EngineUse(hdrf_engine_t* h, bool event) {
  Slot* s;
  uint32_t index, gen;
  status_ = Decode(h, &s, &index, &gen);
  if (!status_.ok()) return;
  s->gate.lock_shared();
  slot_ = s;
  status_ = CheckLive(h, *s, gen);
  if (!status_.ok()) return;
  if (event && s->closed) {
    status_ = Status::FailedPrecondition("engine is closed");
    return;
  }
  engine_ = s->engine.get();
  tag_ = TagOf(index, gen);
}

EngineUse::~EngineUse() {
  if (slot_) static_cast<Slot*>(slot_)->gate.unlock_shared();
}

Status MakeHandle(std::unique_ptr<Engine> engine, hdrf_engine_t** out) {
  Table* t = GetOrMakeTable();
  if (!t->base)
    return Status::Internal("cannot reserve address space for engine handles (mmap of " +
                            std::to_string(kRegion >> 30) + " GiB, PROT_NONE, refused)");
  uint32_t index;
  {
    base::MutexLock l(t->mu);
    if (!t->free.empty()) {
      index = t->free.front();
      t->free.pop_front();
    } else if (t->next_unused < kMaxEngines) {
      index = t->next_unused++;
    } else {
      return Status::FailedPrecondition("too many engines: " + std::to_string(kMaxEngines) +
                                        " are alive (destroy one first)");
    }
  }
  // The slot is ours alone until the handle is published.
  Slot* s = t->slots[index].load(std::memory_order_acquire);
  if (!s) {
    s = new Slot;
    t->slots[index].store(s, std::memory_order_release);
  }
  uint32_t gen;
  {
    base::LockGuard<base::BigReaderLock> l(s->gate);
    gen = s->gen.load(std::memory_order_relaxed) + 1;
    s->gen.store(gen, std::memory_order_relaxed);
    s->engine = std::move(engine);
    s->closed = false;
  }
  *out = reinterpret_cast<hdrf_engine_t*>(t->base + index * kSpan + uintptr_t{gen} * 8);
  return Status::Ok();
}

Status CloseHandle(hdrf_engine_t* h) {
  Slot* s;
  uint32_t index, gen;
  HDRF_RETURN_IF_ERROR(Decode(h, &s, &index, &gen));
  base::LockGuard<base::BigReaderLock> l(s->gate);
  HDRF_RETURN_IF_ERROR(CheckLive(h, *s, gen));
  if (s->closed) return Status::FailedPrecondition("engine is closed already");
  s->closed = true;
  return s->engine->Close();
}

Status DestroyHandle(hdrf_engine_t* h) {
  if (!h) return Status::Ok();
  Slot* s;
  uint32_t index, gen;
  HDRF_RETURN_IF_ERROR(Decode(h, &s, &index, &gen));
  std::unique_ptr<Engine> engine;
  bool was_closed;
  {
    base::LockGuard<base::BigReaderLock> l(s->gate);
    HDRF_RETURN_IF_ERROR(CheckLive(h, *s, gen));
    engine = std::move(s->engine);
    was_closed = s->closed;
  }
  // Outside the gate: calls that start now see a destroyed handle.
  Status st = was_closed ? Status::Ok() : engine->Close();
  engine.reset();
  if (gen < kMaxGen) {
    Table* t = g_table.load(std::memory_order_acquire);
    base::MutexLock l(t->mu);
    t->free.push_back(index);
  }
  return st;
}

}  // namespace hdrf::capi
