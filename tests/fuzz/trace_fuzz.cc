// libFuzzer target: binary trace decoding (api/hdrf/trace.h, docs/trace.md).
// A decoded trace must re-encode, and the re-encoded bytes must decode to a
// trace that encodes to the same bytes (a fixed point).
#include <cstddef>
#include <cstdint>

#include "hdrf/trace.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto trace = hdrf::DecodeTrace(data, size, "fuzz.trace");
  if (!trace.ok()) {
    if (trace.status().message().empty()) hdrf::fuzz::Fail("error without a message");
    return 0;
  }
  if (!hdrf::ValidateTrace(*trace).ok()) hdrf::fuzz::Fail("decoded trace does not validate");
  (void)hdrf::TraceSetupEvents(*trace);
  auto bytes = hdrf::EncodeTrace(*trace);
  if (!bytes.ok()) hdrf::fuzz::Fail("decoded trace does not encode");
  auto again = hdrf::DecodeTrace(bytes->data(), bytes->size(), "re-encoded");
  if (!again.ok()) hdrf::fuzz::Fail("re-encoded trace does not decode");
  auto bytes2 = hdrf::EncodeTrace(*again);
  if (!bytes2.ok() || *bytes2 != *bytes) hdrf::fuzz::Fail("encode/decode is not a fixed point");
  return 0;
}
