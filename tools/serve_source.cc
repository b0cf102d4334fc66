#include "tools/serve_source.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "tools/open_store.h"

namespace hdrf::tools {

StatusOr<std::unique_ptr<ServeSource>> ServeSource::Open(const std::string& db_dir) {
  std::unique_ptr<ServeSource> s(new ServeSource(db_dir));
  const std::string before = s->Fingerprint();
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<Engine> e, OpenStoreForReading(db_dir));
  s->fingerprint_ = before;
  s->engine_ = std::move(e);
  return s;
}

Status ServeSource::Refresh() {
  // Fingerprint first: a change while recovering shows again next time.
  const std::string now = Fingerprint();
  if (now == fingerprint_) return Status::Ok();
  HDRF_ASSIGN_OR_RETURN(std::unique_ptr<Engine> e, OpenStoreForReading(db_));
  fingerprint_ = now;
  std::lock_guard<std::mutex> lock(mu_);
  engine_ = std::move(e);
  return Status::Ok();
}

std::shared_ptr<const Engine> ServeSource::engine() const {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_;
}

const char* ServeSource::mode() const { return "recovery"; }

std::string ServeSource::Fingerprint() const {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(db_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code e2;
    const std::string name = it->path().filename().string();
    // RocksDB's info logs and LOCK change when a reader opens the store.
    if (!it->is_regular_file(e2) || name.rfind("LOG", 0) == 0 || name == "LOCK") continue;
    const auto size = it->file_size(e2);
    const auto mtime = it->last_write_time(e2).time_since_epoch().count();
    lines.push_back(it->path().string() + '\t' + std::to_string(size) + '\t' + std::to_string(mtime));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

}  // namespace hdrf::tools
