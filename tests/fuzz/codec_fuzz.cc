// libFuzzer target: the store's value and key decoders (storage/codec.h):
// meta record, checkpoint header, job chunk, event-log batch and keys. The
// first byte picks the decoder; the rest is the value. What decodes is
// re-encoded where an encoder exists and must decode again to the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/codec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace hdrf;
using namespace hdrf::storage;

// What the seeds were written with (tests/fuzz/make_corpus.cc).
const std::vector<std::string> kNames = {"cpu", "memory", "nvidia.com/gpu"};
const std::vector<std::string> kQueues = {"root", "root/a", "root/a/x", "root/b"};
constexpr uint64_t kSeq = 7;

void Meta(std::string_view v) {
  auto m = DecodeMeta(v);
  if (!m.ok()) return;
  auto again = DecodeMeta(EncodeMeta(*m));
  if (!again.ok() || again->resource_names != m->resource_names ||
      again->initial_capacity != m->initial_capacity)
    fuzz::Fail("meta round trip");
}

void Header(std::string_view v) {
  auto h = DecodeCheckpointHeader(v, kNames);
  if (!h.ok()) return;
  auto bytes = EncodeCheckpointHeader(*h, kNames);
  if (!bytes.ok()) fuzz::Fail("decoded header does not encode");
  auto again = DecodeCheckpointHeader(*bytes, kNames);
  if (!again.ok() || again->queues.size() != h->queues.size() || again->capacity != h->capacity)
    fuzz::Fail("header round trip");
}

void Chunk(std::string_view v) {
  size_t jobs = 0;
  Status s = DecodeJobChunk(v, kNames, kQueues, kSeq, 0, [&](const JobRecord& r) {
    if (r.spec.name.empty() && r.spec.queue.empty()) return Status::Ok();
    ++jobs;
    return Status::Ok();
  });
  (void)s;
  (void)jobs;
}

void Log(std::string_view v) {
  EventBatch batch;
  if (!DecodeLogBatch(v, kNames, kSeq, &batch).ok()) return;
  for (size_t i = 0; i < batch.size(); ++i) (void)batch.At(i);
  if (batch.empty()) return;
  LogEncoder enc(kNames);
  std::string bytes;
  if (!enc.Encode(batch, 0, batch.size(), &bytes).ok()) fuzz::Fail("decoded batch does not encode");
  EventBatch again;
  if (!DecodeLogBatch(bytes, kNames, kSeq, &again).ok() || again.size() != batch.size())
    fuzz::Fail("log round trip");
}

void Keys(std::string_view v) {
  uint64_t seq = 0;
  if (ParseHeaderKey(v, &seq) && HeaderKey(seq) != v) fuzz::Fail("header key round trip");
  if (ParseLogKey(v, &seq) && LogKey(seq) != v) fuzz::Fail("log key round trip");
  (void)KeyToString(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view v(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: Meta(v); break;
    case 1: Header(v); break;
    case 2: Chunk(v); break;
    case 3: Log(v); break;
    case 4: Keys(v); break;
  }
  return 0;
}
