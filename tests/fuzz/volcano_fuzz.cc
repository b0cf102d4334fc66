// libFuzzer target: the Volcano importer (`hdrf workload import --from
// volcano`, hdrf/workload_import.h ImportVolcanoEvents). The first byte
// picks the options (bit 0: a target config's queue paths, with one name
// that two paths end in; bits 1-2: the open duration 0, 30 s, 1e9 s or
// 1 ms); the rest is the event file. Properties: nothing throws; an error
// is InvalidArgument, names the file first ("v.json:") and writes nothing;
// no error or warning shows a control byte of the input;
// what is written is a docs/spec.md §13 workload CSV that ParseWorkload
// reads back (with the resources of its header) to exactly the jobs and
// tasks the summary counts, every name one the engine accepts: no cell can
// forge a line or a column (issue 26 item 7).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hdrf/simulate.h"
#include "hdrf/spec.h"
#include "hdrf/workload_import.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// The header's resource columns: the fields after the seven fixed ones.
std::vector<std::string> HeaderResources(std::string_view csv) {
  const std::string_view header = csv.substr(0, csv.find('\n'));
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t comma = header.find(',', start);
    fields.emplace_back(header.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  static const char* kFixed[] = {"name", "queue", "arrival", "duration", "user", "tasks", "weight"};
  if (fields.size() < 7) hdrf::fuzz::Fail("the header lacks the fixed columns");
  for (size_t i = 0; i < 7; ++i)
    if (fields[i] != kFixed[i]) hdrf::fuzz::Fail("the header's fixed columns are not name,queue,...,weight");
  return std::vector<std::string>(fields.begin() + 7, fields.end());
}

// No control byte (an ANSI escape, a newline, a NUL) in a message that is
// printed on a terminal.
bool Printable(std::string_view m) {
  for (unsigned char c : m)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  hdrf::VolcanoImportOptions o;
  if (data[0] & 1) o.queue_paths = {"root/default", "root/eng/gpu", "root/sci/gpu", "root/team-ml"};
  static const double kOpen[] = {0, 30, 1e9, 0.001};
  o.open_duration = kOpen[(data[0] >> 1) & 3];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string csv;
  auto sum = hdrf::ImportVolcanoEvents(text, "v.json", o, [&](std::string_view chunk) {
    csv.append(chunk);
    return hdrf::Status::Ok();
  });
  if (!sum.ok()) {
    if (sum.status().code() != hdrf::StatusCode::kInvalidArgument) hdrf::fuzz::Fail("error is not InvalidArgument");
    if (!Printable(sum.status().message())) hdrf::fuzz::Fail("an error shows a control byte of the input");
    if (sum.status().message().rfind("v.json", 0) != 0) hdrf::fuzz::Fail("error does not name the file first");
    if (!csv.empty()) hdrf::fuzz::Fail("an error after something was written");
    return 0;
  }
  for (const std::string& m : sum->warnings)
    if (!Printable(m)) hdrf::fuzz::Fail("a warning shows a control byte of the input");
  const std::vector<std::string> resources = HeaderResources(csv);
  for (const std::string& r : resources)
    if (!hdrf::CheckName(hdrf::NameKind::kResource, r).ok()) hdrf::fuzz::Fail("a resource column the engine refuses");
  auto w = hdrf::ParseWorkload(csv, hdrf::WorkloadFormat::kCsv, "out.csv", resources);
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
    hdrf::fuzz::Fail("the imported CSV does not read back as a workload");
  }
  if (w->jobs.size() != sum->jobs) hdrf::fuzz::Fail("the CSV holds another number of jobs than the summary");
  uint64_t tasks = 0;
  for (const hdrf::WorkloadJob& j : w->jobs) {
    tasks += static_cast<uint64_t>(j.spec.tasks);
    if (!hdrf::CheckName(hdrf::NameKind::kJob, j.spec.name).ok()) hdrf::fuzz::Fail("a job name the engine refuses");
    if (!hdrf::CheckName(hdrf::NameKind::kUser, j.spec.user).ok()) hdrf::fuzz::Fail("a user name the engine refuses");
    if (!hdrf::CheckQueuePath(j.spec.queue).ok()) hdrf::fuzz::Fail("a queue path the engine refuses");
    if (j.duration_ms <= 0) hdrf::fuzz::Fail("a job that lives 0 s was written");
  }
  if (tasks != sum->tasks) hdrf::fuzz::Fail("the CSV holds another number of tasks than the summary");
  return 0;
}
