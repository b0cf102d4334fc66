#include "tools/serve_source.h"

namespace hdrf::tools {

StatusOr<std::unique_ptr<ServeSource>> ServeSource::Open(const std::string& db_dir) {
  FollowerOptions o;
  o.db_path = db_dir;
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<Engine> e, Engine::OpenFollower(o));
  return std::unique_ptr<ServeSource>(new ServeSource(std::shared_ptr<Engine>(std::move(e))));
}

Status ServeSource::Refresh() { return engine_->CatchUp(); }

std::shared_ptr<const Engine> ServeSource::engine() const { return engine_; }

const char* ServeSource::mode() const { return "follower"; }

}  // namespace hdrf::tools
