// Replays a trace through the public API on one thread, in trace order, as
// hdrf replay --threads 1 does; fails the calling test on any refusal.
#ifndef HDRF_TESTS_TOOLS_TRACE_REPLAY_H_
#define HDRF_TESTS_TOOLS_TRACE_REPLAY_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"

namespace hdrf {

// The digest after every event of `t` (hex); "" after a refusal.
inline std::string ReplayDigest(const Trace& t) {
  auto eng = Engine::Create(t.cluster, t.queues);
  EXPECT_TRUE(eng.ok()) << eng.status().ToString();
  if (!eng.ok()) return "";
  std::vector<JobRef> refs(t.jobs.size());
  for (size_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    Status s;
    if (e.type == TraceEventType::kSubmit) {
      auto r = (*eng)->Submit(t.jobs[e.job]);
      s = r.status();
      if (r.ok()) refs[e.job] = *r;
    } else {
      s = (*eng)->Apply(TraceEventToEvent(e, refs[e.job].seq));
    }
    EXPECT_TRUE(s.ok()) << "event " << i + 1 << ": " << s.ToString();
    if (!s.ok()) return "";
  }
  return (*eng)->DigestHex();
}

}  // namespace hdrf

#endif  // HDRF_TESTS_TOOLS_TRACE_REPLAY_H_
