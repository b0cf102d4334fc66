#include "tools/serve_source.h"

#include "tools/open_store.h"

namespace hdrf::tools {

StatusOr<std::unique_ptr<ServeSource>> ServeSource::Open(const std::string& db_dir) {
  // A follower (a RocksDB secondary) reads table files only when it needs
  // them and reports a damaged store as a confusing "key m (meta) is
  // missing": the store is first recovered as hdrf recover and hdrf queues
  // recover it, and refused with the same error, naming the damaged file.
  // A store a live writer holds was checked by that writer's own open.
  {
    EngineOptions check;
    check.db_path = db_dir;
    check.durability = Durability::kNone;  // nothing is written
    auto e = Engine::Open(check);
    if (!e.ok() && !HeldByWriter(e.status())) return e.status();
    if (e.ok()) HDRF_RETURN_IF_ERROR((*e)->Close());
  }
  FollowerOptions o;
  o.db_path = db_dir;
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<Engine> e, Engine::OpenFollower(o));
  return std::unique_ptr<ServeSource>(new ServeSource(std::shared_ptr<Engine>(std::move(e))));
}

Status ServeSource::Refresh() { return engine_->CatchUp(); }

std::shared_ptr<const Engine> ServeSource::engine() const { return engine_; }

const char* ServeSource::mode() const { return "follower"; }

}  // namespace hdrf::tools
