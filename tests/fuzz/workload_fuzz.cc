// libFuzzer target: docs/spec.md §13 workload files (hdrf/simulate.h, ParseWorkload;
// docs/simulate.md). The first byte picks the syntax ('C': CSV, anything
// else: JSONL); the rest is the file. Properties: nothing throws; an error
// is InvalidArgument and names the file first ("w.csv:" or "w.csv:LINE:
// ..."); every job of a workload that parses has a name, user and queue
// that the engine's name check accepts (docs/config.md "Names"), and the
// workload written back as CSV, every cell through text::CsvField (as the
// Volcano importer writes), reads back to the same jobs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/formats/text_lines.h"
#include "hdrf/quantity.h"
#include "hdrf/simulate.h"
#include "hdrf/spec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

const std::vector<std::string> kResources = {"cpu", "memory", "nvidia.com/gpu"};

std::string Seconds(int64_t ms) {
  return std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
}

// The workload as CSV: every cell quoted as needed.
std::string WriteCsv(const hdrf::Workload& w) {
  using hdrf::text::CsvField;
  std::string out = "name,queue,arrival,duration,user,tasks,weight";
  for (const std::string& r : kResources) out += "," + r;
  out += "\n";
  for (const hdrf::WorkloadJob& j : w.jobs) {
    char weight[40];
    std::snprintf(weight, sizeof weight, "%.17g", j.spec.weight);
    out += CsvField(j.spec.name) + "," + CsvField(j.spec.queue) + "," + Seconds(j.arrival_ms) + "," +
           Seconds(j.duration_ms) + "," + CsvField(j.spec.user) + "," + std::to_string(j.spec.tasks) + "," +
           weight;
    for (const std::string& r : kResources) {
      auto it = j.spec.task.find(r);
      out += "," + (it == j.spec.task.end() ? std::string() : CsvField(hdrf::FormatQuantity(r, it->second)));
    }
    out += "\n";
  }
  return out;
}

bool SameJobs(const hdrf::Workload& a, const hdrf::Workload& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const hdrf::WorkloadJob &x = a.jobs[i], &y = b.jobs[i];
    if (x.spec.name != y.spec.name || x.spec.queue != y.spec.queue || x.spec.user != y.spec.user ||
        x.spec.tasks != y.spec.tasks || x.spec.task != y.spec.task || x.arrival_ms != y.arrival_ms ||
        x.duration_ms != y.duration_ms || !(x.spec.weight == y.spec.weight))
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool csv = data[0] == 'C';
  const std::string name = csv ? "w.csv" : "w.jsonl";
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto w = hdrf::ParseWorkload(text, csv ? hdrf::WorkloadFormat::kCsv : hdrf::WorkloadFormat::kJsonl, name,
                               kResources);
  if (!w.ok()) {
    if (w.status().code() != hdrf::StatusCode::kInvalidArgument) hdrf::fuzz::Fail("error is not InvalidArgument");
    if (w.status().message().rfind(name + ":", 0) != 0) hdrf::fuzz::Fail("error does not name the file first");
    return 0;
  }
  for (const hdrf::WorkloadJob& j : w->jobs) {
    if (!hdrf::CheckName(hdrf::NameKind::kJob, j.spec.name).ok()) hdrf::fuzz::Fail("a job name the engine refuses");
    if (!hdrf::CheckName(hdrf::NameKind::kUser, j.spec.user).ok()) hdrf::fuzz::Fail("a user name the engine refuses");
    if (!j.spec.queue.empty() && !hdrf::CheckQueuePath(j.spec.queue).ok())
      hdrf::fuzz::Fail("a queue path the engine refuses");
  }
  auto back = hdrf::ParseWorkload(WriteCsv(*w), hdrf::WorkloadFormat::kCsv, "back.csv", kResources);
  if (!back.ok()) hdrf::fuzz::Fail("the workload written back as CSV does not parse");
  if (!SameJobs(*w, *back)) hdrf::fuzz::Fail("the workload written back as CSV reads to other jobs");
  return 0;
}
