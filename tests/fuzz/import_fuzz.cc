// libFuzzer target: CSV / JSONL event import (hdrf/trace_import.h,
// docs/trace.md "Importing events"). The first byte picks the syntax ('C':
// CSV, anything else: JSONL); the rest is the file. Properties: nothing
// throws; an error is InvalidArgument and names the file first ("f.jsonl:"
// or "f.jsonl:LINE: ..."); an imported trace validates, survives an encode /
// decode round trip, and replays on one engine to the digest the import's
// own check reported.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/engine.h"
#include "hdrf/trace.h"
#include "hdrf/trace_import.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

hdrf::TraceImportOptions Options() {
  hdrf::TraceImportOptions o;
  o.cluster = {{"cpu", 64000}, {"memory", int64_t{256} << 30}, {"nvidia.com/gpu", 8000}};
  hdrf::QueueSpec a, b;
  a.path = "root/a";
  a.weight = 2;
  b.path = "root/a/b";
  o.queues = {a, b};
  return o;
}

std::string Replay(const hdrf::Trace& t) {
  auto eng = hdrf::Engine::Create(t.cluster, t.queues);
  if (!eng.ok()) hdrf::fuzz::Fail("an imported trace's tree is refused");
  std::vector<hdrf::JobRef> refs(t.jobs.size());
  for (const hdrf::TraceEvent& e : t.events) {
    if (e.type == hdrf::TraceEventType::kSubmit) {
      auto r = (*eng)->Submit(t.jobs[e.job]);
      if (!r.ok()) hdrf::fuzz::Fail("a checked submission is refused on replay");
      refs[e.job] = *r;
    } else if (!(*eng)->Apply(hdrf::TraceEventToEvent(e, refs[e.job].seq)).ok()) {
      hdrf::fuzz::Fail("a checked event is refused on replay");
    }
  }
  return (*eng)->DigestHex();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool csv = data[0] == 'C';
  const std::string name = csv ? "f.csv" : "f.jsonl";
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const hdrf::TraceImportOptions options = Options();
  hdrf::TraceImportStats stats;
  auto trace = hdrf::ImportTrace(text, csv ? hdrf::TraceImportFormat::kCsv : hdrf::TraceImportFormat::kJsonl,
                                 name, options, &stats);
  if (!trace.ok()) {
    if (trace.status().code() != hdrf::StatusCode::kInvalidArgument) hdrf::fuzz::Fail("error is not InvalidArgument");
    if (trace.status().message().rfind(name + ":", 0) != 0) hdrf::fuzz::Fail("error does not name the file first");
    return 0;
  }
  if (!hdrf::ValidateTrace(*trace).ok()) hdrf::fuzz::Fail("imported trace does not validate");
  auto bytes = hdrf::EncodeTrace(*trace);
  if (!bytes.ok()) hdrf::fuzz::Fail("imported trace does not encode");
  auto back = hdrf::DecodeTrace(bytes->data(), bytes->size(), "re-read");
  if (!back.ok()) hdrf::fuzz::Fail("imported trace does not decode");
  if (Replay(*back) != stats.digest) hdrf::fuzz::Fail("replay digest differs from the import's check");
  return 0;
}
