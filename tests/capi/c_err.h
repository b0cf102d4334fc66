// Tests of the C interface: an error message slot (char* errptr) that
// frees itself (each call's message replaces the previous one), and the
// engine's digest and last sequence number read with a check.
#ifndef HDRF_TESTS_CAPI_C_ERR_H_
#define HDRF_TESTS_CAPI_C_ERR_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hdrf/c.h"

namespace hdrf::testing {

struct Err {
  char* p = nullptr;
  Err() = default;
  Err(const Err&) = delete;
  Err& operator=(const Err&) = delete;
  ~Err() { hdrf_free(p); }
  char** operator&() { return &p; }
  std::string str() const { return p ? p : "(none)"; }
};

inline std::string Digest(hdrf_engine_t* e) {
  char buf[HDRF_DIGEST_SIZE] = "";
  Err err;
  EXPECT_EQ(hdrf_digest(e, buf, sizeof buf, &err), HDRF_OK) << err.str();
  return buf;
}

inline uint64_t LastSeq(hdrf_engine_t* e) {
  uint64_t s = 0;
  Err err;
  EXPECT_EQ(hdrf_last_seq(e, &s, &err), HDRF_OK) << err.str();
  return s;
}

}  // namespace hdrf::testing

#endif  // HDRF_TESTS_CAPI_C_ERR_H_
