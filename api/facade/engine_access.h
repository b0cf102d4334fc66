// Internal: EngineAccess, the facade's way to name the private
// Engine::Impl (hdrf/engine.h) from its own files without including
// engine_impl.h (which follower.h cannot: engine_impl.h includes it).
#ifndef HDRF_API_FACADE_ENGINE_ACCESS_H_
#define HDRF_API_FACADE_ENGINE_ACCESS_H_

#include <memory>

#include "hdrf/engine.h"

namespace hdrf::engine {
class Tree;
}

namespace hdrf {

// Engine::Impl is private to Engine; the facade's own files and the tests'
// CheckEngineInvariants reach it through EngineAccess.
struct EngineAccess {
  using Impl = Engine::Impl;
  static const Impl& impl(const Engine& e) { return *e.impl_; }
  // A memory-only engine over `tree` after event `last_seq`, for what-ifs
  // on a copy of a state (api/facade/reconcile.cc).
  static std::unique_ptr<Engine> Scratch(std::unique_ptr<engine::Tree> tree, uint64_t last_seq);
};
using EngineImpl = EngineAccess::Impl;

}  // namespace hdrf

#endif  // HDRF_API_FACADE_ENGINE_ACCESS_H_
