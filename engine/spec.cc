#include "hdrf/spec.h"

#include <algorithm>
#include <cstdio>

namespace hdrf {

const char* QueueStateName(QueueState s) {
  switch (s) {
    case QueueState::kOpen: return "open";
    case QueueState::kClosing: return "closing";
    case QueueState::kClosed: return "closed";
  }
  return "?";
}

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kPending: return "Pending";
    case JobState::kInqueue: return "Inqueue";
    case JobState::kRunning: return "Running";
    case JobState::kUnknown: return "Unknown";
  }
  return "?";
}

}  // namespace hdrf

namespace hdrf {
namespace {

// The bytes beyond A-Z a-z 0-9 . _ - that a name of each kind may hold.
const char* Extra(NameKind kind) {
  switch (kind) {
    case NameKind::kQueue: return "";
    case NameKind::kJob: return "/#:@";
    case NameKind::kUser: return ":@";
    case NameKind::kResource: return "/";
    case NameKind::kNode: return "";
  }
  return "";
}

bool Allowed(unsigned char c, const char* extra) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
      c == '-')
    return true;
  for (const char* e = extra; *e; ++e)
    if (c == static_cast<unsigned char>(*e)) return true;
  return false;
}

std::string ByteText(unsigned char c) {
  if (c >= 0x21 && c <= 0x7e && c != '\\') return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  return c == ' ' ? "a blank" : buf;
}

}  // namespace

const char* NameKindName(NameKind kind) {
  switch (kind) {
    case NameKind::kQueue: return "queue";
    case NameKind::kJob: return "job";
    case NameKind::kUser: return "user";
    case NameKind::kResource: return "resource";
    case NameKind::kNode: return "node";
  }
  return "?";
}

std::string EscapeName(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c >= 0x20 && c <= 0x7e && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

Status CheckName(NameKind kind, std::string_view name) {
  const char* extra = Extra(kind);
  const std::string what = std::string(NameKindName(kind)) + " name";
  if (name.empty()) return Status::InvalidArgument("empty " + what);
  if (name.size() > kMaxNameBytes)
    return Status::InvalidArgument(what + " '" + EscapeName(name.substr(0, 40)) + "...' is " +
                                   std::to_string(name.size()) + " bytes long (at most " +
                                   std::to_string(kMaxNameBytes) + ")");
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (Allowed(c, extra)) continue;
    std::string set = "A-Z a-z 0-9 . _ -";
    for (const char* e = extra; *e; ++e) set += std::string(" ") + *e;
    return Status::InvalidArgument(what + " '" + EscapeName(name) + "': " + ByteText(c) + " at byte " +
                                   std::to_string(i + 1) + " is not allowed (" + what + "s use " + set + ")");
  }
  return Status::Ok();
}

Status CheckQueuePath(std::string_view path) {
  if (path != "root" && path.substr(0, 5) != "root/")
    return Status::InvalidArgument("queue path '" + EscapeName(path) + "' must be 'root' or start with 'root/'");
  for (size_t start = 5; path.size() > 4;) {
    const size_t slash = std::min(path.find('/', start), path.size());
    Status s = CheckName(NameKind::kQueue, path.substr(start, slash - start));
    if (!s.ok()) return s.WithContext("queue path '" + EscapeName(path) + "'");
    if (slash == path.size()) break;
    start = slash + 1;
  }
  return Status::Ok();
}

}  // namespace hdrf
