// Helpers shared by the libFuzzer targets (tests/fuzz, docs/testing.md).
#ifndef HDRF_TESTS_FUZZ_FUZZ_UTIL_H_
#define HDRF_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace hdrf::fuzz {

// Fails the run loudly: libFuzzer treats the abort as a crash and saves the
// input. Used for properties (round trips) that are not memory errors.
[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

// Reads an input front to back; past the end it yields zeros.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  uint8_t Byte() { return p_ == end_ ? 0 : *p_++; }
  uint64_t U64(int bytes = 8) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | Byte();
    return v;
  }
  // Up to `max` raw bytes, length first.
  std::string Bytes(size_t max) {
    size_t n = Byte() % (max + 1);
    n = n < left() ? n : left();
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  // The rest of the input.
  std::string_view Rest() {
    std::string_view s(reinterpret_cast<const char*>(p_), left());
    p_ = end_;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace hdrf::fuzz

#endif  // HDRF_TESTS_FUZZ_FUZZ_UTIL_H_
