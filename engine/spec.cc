#include "hdrf/spec.h"

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
